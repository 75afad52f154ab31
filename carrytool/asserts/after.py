"""`calls: D` + `after: [A, ...]`: D comes after the work it must follow: no call of A can run once D ran.

This is the reverse of `order`: `order` asks that D is preceded by A on every path (dominance), which a
loop that may run zero times can never give; `after` asks that nothing of A is reachable from a call of
D, so "the synchronize comes after the re-map loop, ordered last" holds whether the loop runs or not.
It is a may-analysis: the walk carries whether D may have been called on some path to each point; a
call of A there is a violation. In a loop, a call of D in one iteration reaches every call of A in the
next, so an A anywhere in a loop body after which D may be called is a violation too.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.asserts.expressions import Alt, Label
from carrytool.asserts.lexical import is_call_of, lexical_calls
from carrytool.asserts.local import following
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import Dotted
from carrytool.asserts.paths import walk_scope
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile


@dataclass(frozen=True, slots=True)
class Ran:
    """Whether the target may have been called on a path reaching a point, and the call that did."""

    call: ast.Call | None = None


class AfterDomain:
    """May-have-called analysis of one target, recording the calls of earlier work reachable after it."""

    def __init__(self, src: SourceFile, target: Dotted, work: Sequence[Dotted]) -> None:
        self.src = src
        self.target = target
        self.work = work
        self.late: list[tuple[ast.Call, int, ast.Call]] = []  # (work call, which, the target call before it)

    def start(self) -> Ran:
        return Ran()

    def on_call(self, state: Ran, call: ast.Call) -> Ran:
        if state.call is not None:
            self._check(call, state.call)
        return Ran(call) if is_call_of(self.src, call, self.target) else state

    def _check(self, call: ast.Call, before: ast.Call) -> None:
        for index, work in enumerate(self.work):
            if is_call_of(self.src, call, work):
                self.late.append((call, index, before))

    def join(self, alts: Sequence[Alt[Ran]]) -> Ran:
        return next((state for state, _ in alts if state.call is not None), alts[0][0])

    def widen(self, entry: Ran, back: Ran | None, loop: ast.AST, skip: Label | None) -> Ran:
        if back is None or back.call is None:
            return entry
        if entry.call is None:  # the target may run in one iteration and the work in the next
            for call, runs in lexical_calls(self.src, Scope("loop", (loop,), "loop")):
                if runs:
                    self._check(call, back.call)
        return back if entry.call is None else entry

    def rebase(self, state: Ran, head: Ran) -> Ran:
        return state if state.call is not None else head


def check_after(src: SourceFile, scope: Scope, target: Dotted, shown: str, work: Sequence[Dotted],
                work_shown: Sequence[str], *, through: str | None = None) -> Verdict:
    """Judge the `after` part of `calls: D` + `after: [A, ...]` (that D is called is judged apart)."""
    domain = AfterDomain(src, target, work)
    walk_scope(following(domain, src, through), src, scope)
    if domain.late:
        call, index, before = min(domain.late, key=lambda item: (item[0].lineno, item[0].col_offset))
        return failed(f"{scope.prefix}{work_shown[index]} at {src.at(call.lineno)} can run after {shown} at "
                      f"{src.at(before.lineno)} (want {shown} after all of {', '.join(work_shown)})", call.lineno)
    return passed(f"no call of {', '.join(work_shown)} can run after {shown} in {scope.where}")
