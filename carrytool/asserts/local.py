"""`through: local`: follow calls into functions and methods defined in the same file.

A call is followed when its callee names a definition of the file statically:
- `helper(...)`: a function `helper` defined in an enclosing function of the call, or at module level;
- `self.m(...)` / `cls.m(...)`: the method `m` of the class the calling method is defined in (the class's
  own body only: bases are not searched, there is no MRO);
- `Class.m(...)`: the method `m` of a class `Class` defined in the file.
Nothing else is followed: a method called on any other receiver (`self.backend.resume()`,
`get_group().all_reduce()`) is dynamic dispatch, and a function imported from another file is not read.
Calling a class (`Class()`) does not follow its `__init__`. Recursion is cut, and calls are followed at
most `MAX_DEPTH` levels deep.

For `not_calls` the followed functions are searched lexically, as the scope is. For `calls` (with its
bounds) and `order`, a followed call is walked in place: the callee's body runs, path-sensitively, where
the call is made (its `return`s join back at the call; a path that can only raise in the callee is
treated as returning, as calls are assumed not to raise). A generator function is not walked there: its
body runs when it is iterated, not when it is called.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Generic

from carrytool.asserts.expressions import Alt, Domain, Label, S
from carrytool.asserts.lexical import callee, is_call_of, lexical_calls
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import Dotted
from carrytool.asserts.pyscope import DefNode, Scope, definitions, run_body
from carrytool.asserts.source import SourceFile

MAX_DEPTH = 3
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def enclosing(src: SourceFile) -> dict[int, str]:
    """Return, for every node inside a definition, the qualified name of its innermost definition."""
    def build() -> dict[int, str]:
        owner: dict[int, str] = {}
        for qualname, nodes in definitions(src).items():
            for node in nodes:
                for child in ast.walk(node):
                    owner[id(child)] = qualname  # inner definitions come later and overwrite
        return owner
    # definitions() is in source order with outer names before inner ones, so the innermost wins.
    return src.memo("enclosing", build)


def resolve(src: SourceFile, call: ast.Call) -> tuple[str, list[DefNode]] | None:
    """Return the same-file function(s) `call` statically calls, with their qualified name, or None."""
    form = callee(src, call)
    defs = definitions(src)
    context = enclosing(src).get(id(call), "")
    # the callee's last component is always marked as called (it is this call)
    if len(form) == 1 and isinstance(call.func, ast.Name):
        name = form[0][0]
        parts = context.split(".") if context else []
        for cut in range(len(parts), -1, -1):
            found = _functions(defs.get(".".join([*parts[:cut], name])))
            if found and _is_function_scope(defs, ".".join(parts[:cut])):
                return ".".join([*parts[:cut], name]), found
        return None
    if len(form) != 2 or form[0][1] or not isinstance(call.func, ast.Attribute):
        return None
    receiver, method = form[0][0], form[1][0]
    if receiver in ("self", "cls"):
        owner = _class_of(defs, context)
        return _method(defs, owner, method) if owner else None
    if _is_class(defs, receiver):
        return _method(defs, receiver, method)
    return None


def _functions(nodes: list[DefNode] | None) -> list[DefNode]:
    return [node for node in nodes or [] if isinstance(node, _FUNCS)]


def _is_function_scope(defs: dict[str, list[DefNode]], qualname: str) -> bool:
    """Module level, or a function: names there are visible to a bare call (class bodies are not)."""
    return not qualname or bool(_functions(defs.get(qualname)))


def _is_class(defs: dict[str, list[DefNode]], qualname: str) -> bool:
    return any(isinstance(node, ast.ClassDef) for node in defs.get(qualname, []))


def _class_of(defs: dict[str, list[DefNode]], context: str) -> str | None:
    """Return the class a method (`context`) is defined in: the qualname's prefix that is a class."""
    parts = context.split(".") if context else []
    for cut in range(len(parts) - 1, 0, -1):
        if _is_class(defs, ".".join(parts[:cut])):
            return ".".join(parts[:cut])
    return None


def _method(defs: dict[str, list[DefNode]], owner: str, name: str) -> tuple[str, list[DefNode]] | None:
    found = _functions(defs.get(f"{owner}.{name}"))
    return (f"{owner}.{name}", found) if found else None


def calls_through(src: SourceFile, scope: Scope) -> list[tuple[ast.Call, tuple[ast.Call, ...]]]:
    """Return every call lexically inside the scope or inside the same-file functions it reaches.

    Each call comes with the chain of followed calls that leads to it (empty for the scope's own calls).
    """
    out: list[tuple[ast.Call, tuple[ast.Call, ...]]] = []
    seen: set[int] = {id(node) for node in scope.nodes}
    frontier: list[tuple[Scope, tuple[ast.Call, ...]]] = [(scope, ())]
    for depth in range(MAX_DEPTH + 1):
        following: list[tuple[Scope, tuple[ast.Call, ...]]] = []
        for current, via in frontier:
            for call, _runs in lexical_calls(src, current):
                out.append((call, via))
                found = resolve(src, call) if depth < MAX_DEPTH else None
                if found is None:
                    continue
                fresh = tuple(node for node in found[1] if id(node) not in seen)
                seen.update(id(node) for node in fresh)
                if fresh:
                    following.append((Scope(found[0], fresh, found[0]), (*via, call)))
        frontier = following
    return out


class Following(Generic[S]):
    """A domain that walks same-file callees in place of their calls (see the module docstring)."""

    def __init__(self, inner: Domain[S], src: SourceFile, stack: tuple[int, ...] = ()) -> None:
        self.inner = inner
        self.src = src
        self.stack = stack

    def start(self) -> S:
        return self.inner.start()

    def join(self, alts: Sequence[Alt[S]]) -> S:
        return self.inner.join(alts)

    def widen(self, entry: S, back: S | None, loop: ast.AST, skip: Label | None) -> S:
        return self.inner.widen(entry, back, loop, skip)

    def rebase(self, state: S, head: S) -> S:
        return self.inner.rebase(state, head)

    def on_call(self, state: S, call: ast.Call) -> S:
        from carrytool.asserts.paths import (
            Walker,  # paths imports nothing of this module; keep it lazy
        )

        state = self.inner.on_call(state, call)
        found = resolve(self.src, call) if len(self.stack) < MAX_DEPTH else None
        if found is None:
            return state
        results: list[tuple[S | None, Label | None]] = []
        for node in found[1]:
            if id(node) in self.stack or _is_generator(node):
                continue  # recursion (the call itself was counted), or a body that runs when iterated
            walker = Walker(Following(self.inner, self.src, (*self.stack, id(node))), self.src)
            exits = walker.block(run_body(node), state)
            results += [(exits.normal, None), *exits.returns]
        if not results:
            return state
        joined = Walker(self.inner, self.src).join(results)
        return state if joined is None else joined


def _is_generator(node: DefNode) -> bool:
    """Tell whether a function's own body (not its nested definitions) yields."""
    stack: list[ast.AST] = list(getattr(node, "body", []))
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(current))
    return False


def following(domain: Domain[S], src: SourceFile, through: str | None) -> Domain[S]:
    """Return the domain to walk with: `domain` itself, or one that follows same-file calls."""
    return Following(domain, src) if through == "local" else domain


def check_not_calls_through(src: SourceFile, scope: Scope, target: Dotted, shown: str) -> Verdict:
    """Judge `not_calls: D` + `through: local`: no call of D in the scope or the same-file code it calls."""
    found = [(call, via) for call, via in calls_through(src, scope) if is_call_of(src, call, target)]
    if not found:
        return passed(f"{shown} is not called anywhere in {scope.where} nor in the same-file functions it calls",
                      scope.line)
    call, via = found[0]
    chain = " -> ".join(f"{_name(src, link)} at {src.at(link.lineno)}" for link in via)
    reached = f", reached from {scope.where} through {chain}" if via else ""
    more = len(found) - 1
    others = f" and {more} more place{'s' if more > 1 else ''}" if more else ""
    line = via[0].lineno if via else call.lineno
    return failed(f"{scope.prefix}{shown} is called at {src.at(call.lineno)}{reached}{others} (want no calls)",
                  line)


def _name(src: SourceFile, call: ast.Call) -> str:
    found = resolve(src, call)
    return found[0] if found else "a call"
