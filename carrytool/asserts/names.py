"""Dotted names: how a call's callee and an identifier are named, and how an assert's target matches them.

The dotted form of an expression is the chain of names read back from its end through attribute
accesses *and* call boundaries, stopping at the first node that is neither (a subscript, a literal, a
parenthesised operator expression, ...). A component reached through a call is marked as called:

    torch.cuda.synchronize()          -> torch . cuda . synchronize
    self.backend.resume(tags)         -> self . backend . resume
    get_pp_group().all_reduce(x)      -> get_pp_group() . all_reduce
    get_world_group().cpu_group       -> get_world_group() . cpu_group
    self.workers[0].execute()         -> execute          (the subscript ends the chain)

A target such as `backend.resume` matches when its components are a suffix, on whole components, of
the dotted form: it matches `self.backend.resume(...)` and `backend.resume(...)`, not
`xbackend.resume(...)`; `resume` matches all three. Continuing through calls (rather than stopping at
them) is what users expect from chains like `get_pp_group().all_reduce`: the target `all_reduce` still
matches by its trailing component, and a target may also name the factory, written either
`get_pp_group().all_reduce` (the `()` then requires a call there) or `get_pp_group.all_reduce`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

Part = tuple[str, bool]  # (identifier, reached through a call)
Dotted = tuple[Part, ...]


def parse_target(text: object) -> Dotted | None:
    """Parse an assert's dotted target (`a.b`, `f().g`); None when it is not one."""
    if not isinstance(text, str) or not text.strip():
        return None
    parts: list[Part] = []
    for piece in text.strip().split("."):
        name = piece.strip()
        is_call = name.endswith("()")
        name = name[:-2] if is_call else name
        if not name.isidentifier():
            return None
        parts.append((name, is_call))
    return tuple(parts)


def dotted_form(node: ast.AST) -> Dotted:
    """Return the dotted form of an expression (see the module docstring)."""
    parts: list[Part] = []
    through_call = False
    current: ast.AST = node
    while True:
        if isinstance(current, ast.Call):
            if through_call and not parts:
                break  # `f()()`: the outer callee is a call's result, which has no name
            through_call = True
            current = current.func
        elif isinstance(current, ast.Attribute):
            parts.append((current.attr, through_call))
            through_call = False
            current = current.value
        elif isinstance(current, ast.Name):
            parts.append((current.id, through_call))
            break
        else:
            break
    parts.reverse()
    return tuple(parts)


def is_suffix(target: Dotted, form: Dotted) -> bool:
    """Tell whether `target` names the trailing components of `form`, honouring `()` marks."""
    if not target or len(target) > len(form):
        return False
    for (want, want_call), (have, have_call) in zip(target, form[len(form) - len(target):]):
        if want != have or (want_call and not have_call):
            return False
    return True


def render(form: Dotted) -> str:
    """Return a dotted form as source-like text (`get_pp_group().all_reduce`), without a final `()`."""
    last = len(form) - 1
    return ".".join(name + ("()" if called and index < last else "")
                    for index, (name, called) in enumerate(form))


def identifier_nodes(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Yield the nodes that use an identifier: names, attributes, argument and keyword names."""
    for node in nodes:
        if isinstance(node, (ast.Name, ast.Attribute, ast.arg)) or (
                isinstance(node, ast.keyword) and node.arg is not None):
            yield node


def names_identifier(node: ast.AST, target: Dotted) -> bool:
    """Tell whether an identifier node is a use of `target` (a dotted target matches attribute chains)."""
    if len(target) > 1:
        return isinstance(node, ast.Attribute) and is_suffix(target, dotted_form(node))
    name = target[0][0]
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.Attribute):
        return node.attr == name
    if isinstance(node, ast.arg):
        return node.arg == name
    return isinstance(node, ast.keyword) and node.arg == name


def expression_mentions(expr: ast.AST, target: Dotted) -> bool:
    """Tell whether `target` is used as an identifier anywhere inside `expr`."""
    return any(names_identifier(node, target) for node in identifier_nodes(ast.walk(expr)))
