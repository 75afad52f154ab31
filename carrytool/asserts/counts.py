"""`calls: D` with or without `times`/`min`/`max`: how often D is called on the paths through a scope.

The walk keeps, per program point, the fewest and the most calls of D over all paths reaching it, each
with a witness: the branch decision that makes that path the extreme one (the innermost such decision
when they nest, the first when they follow each other). Counting is additive along a path, so minima
and maxima compose exactly; a call inside a loop makes the maximum unbounded.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from carrytool.asserts.expressions import Alt, Label
from carrytool.asserts.lexical import absence_hint, is_call_of
from carrytool.asserts.local import following
from carrytool.asserts.messages import (
    Verdict,
    called,
    count_paths,
    failed,
    passed,
    times,
    want_bounds,
)
from carrytool.asserts.names import Dotted
from carrytool.asserts.paths import walk_scope
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile

UNBOUNDED = math.inf


@dataclass(frozen=True, slots=True)
class Count:
    """The range of call counts over the paths reaching a point, with a witness for each end."""

    low: int
    high: float                   # an int, or UNBOUNDED
    low_why: Label | None
    high_why: Label | None
    paths: int
    loop: tuple[str, int, int] | None  # ("loop" or "comprehension", its line, a call's line) when unbounded


class CountDomain:
    """Counts the calls of one target; remembers the reachable calls it saw."""

    def __init__(self, src: SourceFile, target: Dotted) -> None:
        self.src = src
        self.target = target
        self.calls: list[ast.Call] = []

    def start(self) -> Count:
        return Count(0, 0, None, None, 1, None)

    def on_call(self, state: Count, call: ast.Call) -> Count:
        if not is_call_of(self.src, call, self.target):
            return state
        self.calls.append(call)
        return replace(state, low=state.low + 1, high=state.high + 1)

    def join(self, alts: Sequence[Alt[Count]]) -> Count:
        low_state, low_label = min(alts, key=lambda alt: alt[0].low)
        high_state, high_label = max(alts, key=lambda alt: alt[0].high)
        low_split = any(state.low != low_state.low for state, _ in alts)
        high_split = any(state.high != high_state.high for state, _ in alts)
        return Count(
            low=low_state.low, high=high_state.high,
            low_why=low_state.low_why or (low_label if low_split else None),
            high_why=high_state.high_why or (high_label if high_split else None),
            paths=sum(state.paths for state, _ in alts), loop=high_state.loop)

    def widen(self, entry: Count, back: Count | None, loop: ast.AST, skip: Label | None) -> Count:
        if back is None:
            return entry
        head = self.join([(entry, skip), (back, None)])
        if back.high > entry.high and entry.high != UNBOUNDED:
            kind = "loop" if isinstance(loop, ast.stmt) else "comprehension"
            line = getattr(loop, "lineno", 0)
            where = back.loop if back.high == UNBOUNDED and back.loop else (kind, line, self._call_in(loop))
            head = replace(head, high=UNBOUNDED, high_why=None, loop=where)
        return head

    def rebase(self, state: Count, head: Count) -> Count:
        if head.high == UNBOUNDED and state.high != UNBOUNDED:
            return replace(state, high=UNBOUNDED, high_why=None, loop=head.loop)
        return state

    def seed(self, joined: Count) -> Count:
        # Counts add up along a path, so `finally:` is walked from zero and added to each way out.
        return self.start()

    def then(self, state: Count, seed: Count, final: Count) -> Count:
        high = state.high + final.high
        loop = state.loop if state.high == UNBOUNDED else final.loop if final.high == UNBOUNDED else None
        return Count(low=state.low + final.low, high=high,
                     low_why=state.low_why or final.low_why,
                     high_why=None if high == UNBOUNDED else state.high_why or final.high_why,
                     paths=state.paths * final.paths, loop=loop)

    def _call_in(self, loop: ast.AST) -> int:
        first = getattr(loop, "lineno", 0)
        last = getattr(loop, "end_lineno", None) or first
        lines = [call.lineno for call in self.calls if first <= call.lineno <= last]
        return min(lines, default=first)


def check_calls(src: SourceFile, scope: Scope, target: Dotted, shown: str,
                low: int | None, high: int | None, *, returning: bool = False,
                through: str | None = None) -> Verdict:
    """Judge `calls: D` (with bounds when `low`/`high` are set) on the paths through `scope`.

    With `returning`, the bounds judge only the paths that end by `return` or by falling off the end.
    """
    domain = CountDomain(src, target)
    final = walk_scope(following(domain, src, through), src, scope, returning=returning)
    if not domain.calls and (low is None and high is None or low):
        # Without bounds `calls` means "on at least one path"; with a minimum, no call at all is the story.
        return failed(f"{scope.prefix}{shown} is never called on any path through {scope.where}"
                      f"{absence_hint(src, scope, target)}", scope.line)
    first = min((call.lineno for call in domain.calls), default=scope.line)
    if low is None and high is None:
        return passed(f"{shown} is called on at least one path through {scope.where} (first at {src.at(first)})",
                      first)
    if final is None:
        ends = "returns" if returning else "ends"
        return failed(f"{scope.prefix}no path through {scope.where} {ends}, so the calls of {shown} cannot be "
                      f"counted (want {want_bounds(low, high)})", scope.line)
    lines = sorted(call.lineno for call in {id(c): c for c in domain.calls}.values())   # a `finally` walks twice
    return _judge_bounds(src, scope, final, shown, low, high, first, "returning " if returning else "", lines)


def _calls_at(src: SourceFile, lines: list[int], most: int = 5) -> str:
    """' (calls at F:L1, F:L2)': where the calls are, when every path calls as often (helper-87: a `times`
    failure pointed at the `def` line alone)."""
    if not lines:
        return ""
    # in order; two calls on one line: "(2)"
    shown = [src.at(line) + (f" ({n})" if n > 1 else "") for line, n in Counter(lines).items()]
    return f" (calls at {', '.join(shown[:most])}{', ...' if len(shown) > most else ''})"


def _judge_bounds(src: SourceFile, scope: Scope, final: Count, shown: str,
                  low: int | None, high: int | None, first: int | None, kind: str,
                  lines: list[int] | None = None) -> Verdict:
    want = want_bounds(low, high)
    lines = lines or []
    problems: list[tuple[str, int | None]] = []
    if low is not None and final.low < low:
        where = _calls_at(src, lines) if final.low_why is None and final.low == final.high else ""
        problems.append((f"{shown} is {called(final.low)} on {_path(src, scope, final, final.low_why, kind)}{where} "
                         f"(want {want})", final.low_why.line if final.low_why else
                         (lines[0] if lines else scope.line)))
    if high is not None and final.high > high:
        if final.high == UNBOUNDED and final.loop:
            kind, loop_line, call_line = final.loop
            problems.append((f"{shown} at {src.at(call_line)} is inside the {kind} at {src.at(loop_line)}, so it "
                             f"may be called any number of times (want {want})", call_line))
        else:
            count = int(final.high)
            where = _calls_at(src, lines) if final.high_why is None and final.low == final.high else ""
            # no branch decides it: the annotation goes to the last call (past the bound wherever the calls are:
            # helper-90, the (bound+1)-th call in the file's order may be another branch's)
            extra = lines[-1] if lines else scope.line
            problems.append((f"{shown} is {called(count)} on {_path(src, scope, final, final.high_why, kind)}{where} "
                             f"(want {want})", final.high_why.line if final.high_why else extra))
    if problems:
        return failed(scope.prefix + "; ".join(text for text, _ in problems), problems[0][1])
    return passed(_holding(scope, final, shown, want, kind), first)


def _path(src: SourceFile, scope: Scope, final: Count, why: Label | None, kind: str) -> str:
    if why is not None:
        return why.render(src)
    if final.low == final.high:
        return f"every {kind}path through {scope.where}"
    return f"a {kind}path through {scope.where}"


def _holding(scope: Scope, final: Count, shown: str, want: str, kind: str) -> str:
    paths = count_paths(final.paths)
    if kind:
        paths = paths.replace("path", kind + "path")
    if final.low == final.high:
        return f"{shown} is called exactly {times(final.low)} on every {kind}path ({paths}) through {scope.where}"
    high = "any number of" if final.high == UNBOUNDED else str(int(final.high))
    return (f"{shown} is called {final.low} to {high} times on the {kind}paths ({paths}) through {scope.where} "
            f"(want {want})")
