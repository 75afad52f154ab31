"""Whether two insertions of whole statements at one place give the same result in either order.

Pure, over `ast` statements. The order matters when one insertion reads what the other binds (a name, or
the attribute or subscript an assignment sets: helper-128, `_URL_TYPES = UrlT` beside `UrlT = str`), or
when an inserted statement calls something as it runs (what the call runs may read, or change, what the
other binds; a decorator's call is not counted: it registers what it decorates). What a statement reads is
what runs when it runs: a def's decorators, defaults and annotations, a class's bases and body, never a
function's or a lambda's body (it runs when called, once both insertions ran). Names both insertions bind
are left to the `shadows` gate (pipeline.structured).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from carrytool.pipeline.pyparts import _bound, _walrus

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def order_conflict(first: Sequence[ast.stmt], second: Sequence[ast.stmt]) -> str | None:
    """Why FIRST and SECOND, two insertions at one place in one body, may not run in either order (a
    sentence naming the name or the call), or None when each runs the same whichever runs first."""
    for reader, binder in ((first, second), (second, first)):
        bound = {name for node in binder for name in (*_bound(node), *_walrus(node), *_changed(node))}
        for node in reader:
            read = next((text for text in _reads(node) if _depends(text, bound)), None)
            if read is not None:
                return (f"one insertion reads `{_short(read)}`, which the other binds at the same place: "
                        "their order decides what it reads")
    for node in (*first, *second):
        call = next(_calls(node), None)
        if call is not None:
            return (f"an insertion calls `{_short(_text(call.func))}` as it runs: what the call runs may depend on "
                    "the other insertion at the same place, so their order may matter")
    return None


def _runs(node: ast.AST, *, decorators: bool = True) -> Iterator[ast.AST]:
    """NODE and its parts that run when it runs (not a function's or a lambda's body; a def's decorators
    only with DECORATORS)."""
    todo = [node]
    while todo:
        part = todo.pop()
        yield part
        if isinstance(part, _FUNCTIONS):
            todo += [*(part.decorator_list if decorators else []), part.args, *([part.returns] if part.returns else [])]
        elif isinstance(part, ast.Lambda):
            todo.append(part.args)
        elif isinstance(part, ast.ClassDef) and not decorators:
            todo += [child for child in ast.iter_child_nodes(part) if child not in part.decorator_list]
        else:
            todo += ast.iter_child_nodes(part)


def _reads(node: ast.stmt) -> Iterator[str]:
    """What NODE reads as it runs: names, and attributes and subscripts (as `ast.unparse` writes them), each
    access whole (`self.b`, not `self` too: the base of an access is read through it)."""
    bases = {id(part.value) for part in _runs(node) if isinstance(part, (ast.Attribute, ast.Subscript))}
    for part in _runs(node):
        if id(part) in bases:
            continue
        if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
            yield part.id
        elif isinstance(part, (ast.Attribute, ast.Subscript)) and isinstance(part.ctx, ast.Load):
            yield _text(part)
        elif isinstance(part, ast.AugAssign):        # `x += 1` reads x first
            yield part.target.id if isinstance(part.target, ast.Name) else _text(part.target)


def _changed(node: ast.stmt) -> Iterator[str]:
    """What NODE changes as it runs beyond what it binds anew: `x += 1` and `del x` (helper-131: beside
    `y = x`, each order gives `y` another value, or a NameError)."""
    for part in _runs(node):
        targets = [part.target] if isinstance(part, ast.AugAssign) else part.targets if isinstance(part, ast.Delete) \
            else []
        for target in targets:
            yield target.id if isinstance(target, ast.Name) else _text(target)


def _depends(read: str, bound: set[str]) -> bool:
    """Whether reading READ reads one of BOUND: `a.b` reads what binding `a` or `a.b` sets, and `a` what
    binding `a.b` or `a[k]` changes in it (helper-131: `n = len(D)` beside `D['k'] = 1`)."""
    return any(read == name or read.startswith((name + ".", name + "[")) or name.startswith((read + ".", read + "["))
               for name in bound)


def _calls(node: ast.stmt) -> Iterator[ast.Call]:
    """The calls NODE makes as it runs (a builtin's too: `filter(is_enabled, ...)` runs what it is given, and
    `sorted(key=...)` or `str(conf)` what the object defines: helper-131)."""
    return (part for part in _runs(node, decorators=False) if isinstance(part, ast.Call))


def _text(node: ast.expr) -> str:
    try:
        text = ast.unparse(node)
    except RecursionError:      # too deep to write back (helper-84): a text no binding can equal
        return f"<expression at {node.lineno}:{node.col_offset}>"
    return text


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
