"""`calls: D` + `in_try: true`: a call of D sits in the body of a `try` that has an `except` handler;
`in_try: false`: none does (a raise in D leaves the scope).

"The local wake wrapped in try/except": a raise in D is caught in the scope, so what follows the `try`
(a handshake that tells the peers) still runs. The check is lexical and asks for at least one such call,
not all of them: a single-rank `else:` branch may call D bare. Only `try` statements inside the scope
count (a `try` in the caller is not seen), and a `try` with only `finally:` does not catch.
"""

from __future__ import annotations

import ast

from carrytool.asserts.lexical import is_call_of, lexical_index
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import Dotted
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile

_TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


def calls_in_try(src: SourceFile, scope: Scope, target: Dotted) -> tuple[list[ast.Call], list[ast.Call]]:
    """Return (the calls of `target` inside a handled `try` body, the others), in source order."""
    inside: list[ast.Call] = []
    outside: list[ast.Call] = []
    index = lexical_index(src, scope)
    # annotations call nothing, nor does code no path runs (helper-115)
    unevaluated = index.unevaluated | index.dead.keys()
    for root in scope.nodes:
        stack: list[tuple[ast.AST, bool]] = [(root, False)]
        while stack:
            node, caught = stack.pop()
            if isinstance(node, ast.Call) and id(node) not in unevaluated and is_call_of(src, node, target):
                (inside if caught else outside).append(node)
            if isinstance(node, _TRY):
                handled = bool(node.handlers)
                stack += [(child, caught or handled) for child in node.body]
                stack += [(child, caught) for child in [*node.handlers, *node.orelse, *node.finalbody]]
            else:
                stack += [(child, caught) for child in ast.iter_child_nodes(node)]
    order = lambda call: (call.lineno, call.col_offset)  # noqa: E731
    return sorted(inside, key=order), sorted(outside, key=order)


def check_in_try(src: SourceFile, scope: Scope, target: Dotted, shown: str, *, want: bool = True) -> Verdict:
    """Judge the `in_try` part of `calls: D` + `in_try: true` (WANT), or `in_try: false`: then no call of D
    sits in such a `try` (helper-115: `false` was accepted and judged nothing)."""
    inside, outside = calls_in_try(src, scope, target)
    if not want:
        if not inside:
            return passed(f"no call of {shown} sits in the body of a `try` with an `except` handler", scope.line)
        return failed(f"{scope.prefix}{shown} at {src.at(inside[0].lineno)} sits in the body of a `try` with an "
                      f"`except` handler (want none)", inside[0].lineno)
    if inside:
        return passed(f"{shown} at {src.at(inside[0].lineno)} is inside a `try` with an `except` handler",
                      inside[0].lineno)
    where = f" (called at {', '.join(src.at(call.lineno) for call in outside[:3])})" if outside else ""
    return failed(f"{scope.prefix}no call of {shown} sits in the body of a `try` with an `except` handler{where}",
                  outside[0].lineno if outside else scope.line)
