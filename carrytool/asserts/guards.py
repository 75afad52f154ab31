"""`calls: D` + `guarded_by: NAME`: every call of D sits in the true branch of an `if` testing NAME.

"Every call" is lexical: calls in nested functions, lambdas and classes of the scope count too, and an
enclosing `if` anywhere between the scope and the call guards it (also across a nested `def`). The true
branch is an `if`'s body, an `elif`'s body, or the true arm of a conditional expression; the test must
mention NAME as an identifier (as `mentions` does). The test's polarity is not examined: `if not flag:`
mentions `flag` and guards its body too. An early `return` under `if not flag:` guards nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from carrytool.asserts.lexical import is_call_of, lexical_index
from carrytool.asserts.messages import Verdict, failed, passed, short_code
from carrytool.asserts.names import Dotted, expression_mentions
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile


@dataclass(frozen=True)
class Unguarded:
    """A call of the target outside every true branch that tests the guard."""

    call: ast.Call
    false_side_of: ast.If | ast.IfExp | None  # the innermost `if` testing the guard whose false side holds it


def find_calls(src: SourceFile, scope: Scope, target: Dotted,
               guard: Dotted) -> tuple[list[ast.Call], list[Unguarded]]:
    """Return the calls of `target` in the scope and, in source order, those no guarding `if` encloses."""
    calls: list[ast.Call] = []
    loose: list[Unguarded] = []
    index = lexical_index(src, scope)
    # annotations call nothing, nor does code no path runs (helper-115)
    unevaluated = index.unevaluated | index.dead.keys()
    for root in scope.nodes:
        stack: list[tuple[ast.AST, bool, ast.If | ast.IfExp | None]] = [(root, False, None)]
        while stack:
            node, guarded, false_side_of = stack.pop()
            if isinstance(node, ast.Call) and id(node) not in unevaluated and is_call_of(src, node, target):
                calls.append(node)
                if not guarded:
                    loose.append(Unguarded(node, false_side_of))
            if isinstance(node, (ast.If, ast.IfExp)):
                tests = expression_mentions(node.test, guard)
                stack.append((node.test, guarded, false_side_of))
                stack += [(child, guarded or tests, false_side_of) for child in _as_list(node.body)]
                stack += [(child, guarded, node if tests else false_side_of) for child in _as_list(node.orelse)]
            else:
                stack += [(child, guarded, false_side_of) for child in ast.iter_child_nodes(node)]
    loose.sort(key=lambda item: (item.call.lineno, item.call.col_offset))
    return calls, loose


def _as_list(value: ast.AST | list[ast.stmt]) -> list[ast.AST]:
    return list(value) if isinstance(value, list) else [value]


def check_guarded(src: SourceFile, scope: Scope, target: Dotted, shown: str,
                  guard: Dotted, guard_shown: str) -> Verdict:
    """Judge the guard part of `calls: D` + `guarded_by: NAME` (that D is called is judged apart)."""
    calls, loose = find_calls(src, scope, target, guard)
    if not loose:
        which = "its call sits" if len(calls) == 1 else f"all {len(calls)} of its calls sit"
        first = min((call.lineno for call in calls), default=scope.line)
        return passed(f"{shown} is guarded by {guard_shown} in {scope.where}: {which} in the true branch "
                      f"of an `if` that tests it", first)
    worst = loose[0]
    more = len(loose) - 1
    others = f" (and {more} more unguarded call{'s' if more > 1 else ''})" if more else ""
    return failed(f"{scope.prefix}{shown} at {src.at(worst.call.lineno)} is not guarded by {guard_shown}: "
                  f"{_reason(src, worst, guard_shown)}{others}", worst.call.lineno)


def _reason(src: SourceFile, item: Unguarded, guard_shown: str) -> str:
    branch = item.false_side_of
    if isinstance(branch, ast.If):
        return f"it is in the `else` part of the `if {short_code(branch.test)}` at {src.at(branch.lineno)}"
    if isinstance(branch, ast.IfExp):
        return f"it is in the false arm of `{short_code(branch)}` at {src.at(branch.lineno)}"
    return f"no enclosing `if` tests {guard_shown}"
