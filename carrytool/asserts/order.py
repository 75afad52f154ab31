"""`order: [A, B, ...]`: every call of a later name is preceded, on every path, by calls of all earlier names.

This is dominance, not source order: the walk carries the set of names called on *every* path to each
point (intersected where paths join) and checks it at each call. A call of A in only one branch does not
precede a B after the `if`; in `b(a())` the argument is evaluated first, so `a` precedes `b`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.asserts.expressions import Alt, Label
from carrytool.asserts.lexical import absence_hint, is_call_of
from carrytool.asserts.local import following
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import Dotted
from carrytool.asserts.paths import walk_scope
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile


@dataclass(frozen=True, slots=True)
class Called:
    """The names (by index) called on every path to a point; for the others, a path that lacks them."""

    names: frozenset[int]
    why: tuple[Label | None, ...]


@dataclass(frozen=True)
class Violation:
    """A call of a later name reachable before some earlier name was called."""

    call: ast.Call
    index: int
    missing: tuple[int, ...]
    why: Label | None  # a decision on a path where the first missing name was not called


class OrderDomain:
    """Must-have-been-called analysis over the names of one `order` assert."""

    def __init__(self, src: SourceFile, targets: Sequence[Dotted]) -> None:
        self.src = src
        self.targets = targets
        self.first: dict[int, ast.Call] = {}
        self.violations: dict[tuple[int, int], Violation] = {}

    def start(self) -> Called:
        return Called(frozenset(), (None,) * len(self.targets))

    def on_call(self, state: Called, call: ast.Call) -> Called:
        hits = [i for i, target in enumerate(self.targets) if is_call_of(self.src, call, target)]
        if not hits:
            return state
        for index in hits:
            self.first.setdefault(index, call)
            missing = tuple(j for j in range(index) if j not in state.names)
            if missing and (id(call), index) not in self.violations:
                self.violations[(id(call), index)] = Violation(call, index, missing, state.why[missing[0]])
        names = state.names.union(hits)
        return Called(names, tuple(None if i in names else why for i, why in enumerate(state.why)))

    def join(self, alts: Sequence[Alt[Called]]) -> Called:
        names = frozenset.intersection(*(state.names for state, _ in alts))
        why: list[Label | None] = []
        for index in range(len(self.targets)):
            lacking = [(state, label) for state, label in alts if index not in state.names]
            if not lacking:
                why.append(None)
                continue
            state, label = lacking[0]
            why.append(state.why[index] or (label if len(lacking) < len(alts) else None))
        return Called(names, tuple(why))

    def widen(self, entry: Called, back: Called | None, loop: ast.AST, skip: Label | None) -> Called:
        # Calls only add names, so the head is the entry: one walk of the body is the fixpoint.
        return entry if back is None else self.join([(entry, skip), (back, None)])

    def rebase(self, state: Called, head: Called) -> Called:
        return state

    def seed(self, joined: Called) -> Called:
        # A call in `finally:` is out of order when some way into it lacks an earlier name: the join (an
        # intersection) lacks exactly those names.
        return joined

    def then(self, state: Called, seed: Called, final: Called) -> Called:
        names = state.names | final.names
        return Called(names, tuple(None if i in names else state.why[i] or final.why[i]
                                   for i in range(len(self.targets))))


def check_order(src: SourceFile, scope: Scope, targets: Sequence[Dotted], shown: Sequence[str], *,
                through: str | None = None) -> Verdict:
    """Judge `order: [A, B, ...]` on the paths through `scope`."""
    domain = OrderDomain(src, targets)
    walk_scope(following(domain, src, through), src, scope)
    for index, name in enumerate(shown):
        if index not in domain.first:
            return failed(f"{scope.prefix}{name} is never called on any path through {scope.where}"
                          f"{absence_hint(src, scope, targets[index])}", scope.line)
    if domain.violations:
        first = min(domain.violations.values(), key=lambda v: (v.call.lineno, v.call.col_offset, v.index))
        missing = _and([shown[j] for j in first.missing])
        path = f" (on {first.why.render(src)})" if first.why else ""
        return failed(f"{scope.prefix}{shown[first.index]} at {src.at(first.call.lineno)} is reachable without "
                      f"{missing}{path}", first.call.lineno)
    last = domain.first[len(shown) - 1].lineno
    if len(shown) == 1:
        return passed(f"{shown[0]} is called on at least one path through {scope.where}", last)
    if len(shown) == 2:
        return passed(f"{shown[0]} is called before {shown[1]} on every path through {scope.where}", last)
    return passed(f"{_and(list(shown))} are called in this order on every path through {scope.where}", last)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
