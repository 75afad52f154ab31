"""How expressions fork and call, for the path walks: evaluation order, short circuits, comprehensions.

Also the vocabulary every walk shares: a `Label` names a branch decision, a `Domain` is what a walk
computes (call counts, names called before). Expressions are evaluated in Python's order: a call
evaluates its callee, then its arguments, then calls; the right operands of `and`/`or`, later links of a
comparison chain and the arms of a conditional expression may or may not run; a comprehension's first
iterable runs once and the rest zero or more times; a lambda's body never runs (its defaults do).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from carrytool.asserts.messages import short_code
from carrytool.asserts.source import SourceFile

S = TypeVar("S")

# How many statements, expressions and joined alternatives one walk may visit. Walks are linear in the size of
# a scope (see `paths`), so only absurd code comes near; it fails its assert instead of hanging a CI job.
STEP_LIMIT = 2_000_000


class TooComplex(Exception):
    """A walk ran out of its step budget: the scope cannot be judged in reasonable time."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit:,} analysis steps")
        self.limit = limit


class Budget:
    """Counts the work of one walk and stops it past a limit (the default is `STEP_LIMIT`)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = STEP_LIMIT if limit is None else limit
        self.spent = 0

    def spend(self, steps: int = 1) -> None:
        """Count `steps` units of work; raise `TooComplex` once the limit is passed."""
        self.spent += steps
        if self.spent > self.limit:
            raise TooComplex(self.limit)


@dataclass(frozen=True, slots=True)
class Label:
    """A branch decision a path takes, e.g. "through the `if x` branch at f.py:3"; rendered lazily."""

    text: str          # with `{code}` and `{at}` placeholders
    line: int
    node: ast.AST | None = None
    guard: ast.AST | None = None  # a `case` guard, shown after the pattern

    def render(self, src: SourceFile) -> str:
        """Return the path this decision describes: "the path through the `if x` branch at f.py:3"."""
        return "the path " + self.fill(src)

    def fill(self, src: SourceFile) -> str:
        """Return the text with its code and place filled in: "through the `if x` branch at f.py:3"."""
        code = short_code(self.node)
        if self.guard is not None:
            code += f" if {short_code(self.guard)}"
        return self.text.replace("{at}", src.at(self.line)).replace("{code}", code)


Alt = tuple[S, "Label | None"]


class Domain(Protocol[S]):
    """What a walk computes: how states start, react to calls, join, and pass through loops."""

    def start(self) -> S:
        """Return the state at the entry of the scope."""

    def on_call(self, state: S, call: ast.Call) -> S:
        """Return the state after `call` was made (its callee and arguments already evaluated)."""

    def join(self, alts: Sequence[Alt[S]]) -> S:
        """Merge the states of two or more alternatives, each with the decision that leads to it."""

    def widen(self, entry: S, back: S | None, loop: ast.AST, skip: Label | None) -> S:
        """Return the state at a loop head from its entry and the state after one more iteration."""

    def rebase(self, state: S, head: S) -> S:
        """Return a state computed in the first iteration as it holds for any iteration."""

    def seed(self, joined: S) -> S:
        """Return the state a `finally:` block is walked from, given the join of every way into it."""

    def then(self, state: S, seed: S, final: S) -> S:
        """Return `state` followed by a `finally:` walk that went from `seed` to `final`."""


class ExpressionWalker(Generic[S]):
    """Carries a domain's state through expressions in evaluation order."""

    def __init__(self, domain: Domain[S], src: SourceFile, budget: Budget | None = None) -> None:
        self.domain = domain
        self.src = src
        self.budget = budget or Budget()
        # the code this walk found never runs, whatever the run: (its nodes, why: "after the `return` at {at}")
        self.skipped: list[tuple[list[ast.AST], Label]] = []

    def skip(self, nodes: Sequence[ast.AST], why: Label) -> None:
        """Note NODES as code no path runs (see `paths.unreachable`)."""
        if nodes:
            self.skipped.append((list(nodes), why))

    def join(self, alts: Sequence[tuple[S | None, Label | None]]) -> S | None:
        """Join the reachable alternatives; None when none is reachable."""
        live = [(state, label) for state, label in alts if state is not None]
        self.budget.spend(len(live))
        if not live:
            return None
        if len(live) == 1:
            return live[0][0]
        return self.domain.join(live)

    def merge(self, alts: Sequence[tuple[S, Label | None]]) -> S:
        """Join alternatives that are all reachable (as the arms of an expression always are)."""
        return alts[0][0] if len(alts) == 1 else self.domain.join(alts)

    def exprs(self, nodes: Sequence[ast.AST | None], state: S) -> S:
        """Evaluate expressions left to right (None entries are absent optional parts)."""
        for node in nodes:
            if node is not None:
                state = self.expr(node, state)
        return state

    def expr(self, node: ast.AST, state: S) -> S:
        """Evaluate one expression."""
        self.budget.spend()
        handler = _EXPRESSIONS.get(type(node))
        if handler is not None:
            result: S = handler(self, node, state)
            return result
        for part in _forks_and_calls(node):
            state = _EXPRESSIONS[type(part)](self, part, state)
        return state

    def _call(self, node: ast.Call, state: S) -> S:
        state = self.exprs([node.func, *node.args, *[k.value for k in node.keywords]], state)
        return self.domain.on_call(state, node)

    def _boolop(self, node: ast.BoolOp, state: S) -> S:
        op = "and" if isinstance(node.op, ast.And) else "or"
        stops = not isinstance(node.op, ast.And)   # the truth that short-circuits this operator
        alts: list[tuple[S, Label | None]] = []
        for index, value in enumerate(node.values):
            state = self.expr(value, state)
            if index == len(node.values) - 1:
                break
            truth = constant_truth(value)
            if truth is None or truth == stops:
                alts.append((state, Label(f"that short-circuits the `{op}` at {{at}} after `{{code}}`",
                                          value.lineno, value)))
            if truth == stops:   # `False and x()`: x() never runs, as Python folds it (helper-115)
                self.skip(node.values[index + 1:], Label(f"after the always-{str(stops).lower()} `{{code}}` "
                                                         f"short-circuits the `{op}` at {{at}}", value.lineno, value))
                return self.merge(alts)
        alts.append((state, Label(f"that evaluates every operand of the `{op}` at {{at}}", node.lineno)))
        return self.merge(alts)

    def _compare(self, node: ast.Compare, state: S) -> S:
        state = self.exprs([node.left, node.comparators[0]], state)
        alts: list[tuple[S, Label | None]] = []
        for comparator in node.comparators[1:]:  # a chain stops at its first false link
            alts.append((state, Label("that short-circuits the comparison at {at}", node.lineno)))
            state = self.expr(comparator, state)
        alts.append((state, None))
        return self.merge(alts)

    def _ifexp(self, node: ast.IfExp, state: S) -> S:
        state = self.expr(node.test, state)
        truth = constant_truth(node.test)
        if truth is not None:   # `a() if False else b()` only ever runs b() (helper-115)
            live, dead = (node.body, node.orelse) if truth else (node.orelse, node.body)
            self.skip([dead], Label(f"in the {'false' if truth else 'true'} arm of `{{code}}` at {{at}}, whose "
                                    f"test is always {str(truth).lower()}", node.lineno, node))
            return self.expr(live, state)
        return self.merge([
            (self.expr(node.body, state), Label("through the true arm of `{code}` at {at}", node.lineno, node)),
            (self.expr(node.orelse, state), Label("through the false arm of `{code}` at {at}", node.lineno, node)),
        ])

    def _lambda(self, node: ast.Lambda, state: S) -> S:
        return self._defaults(node.args, state)

    def _defaults(self, args: ast.arguments, state: S) -> S:
        return self.exprs([*args.defaults, *args.kw_defaults], state)

    def _dict(self, node: ast.Dict, state: S) -> S:
        for key, value in zip(node.keys, node.values):
            state = self.exprs([key, value], state)
        return state

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                       state: S) -> S:
        # Only the first iterable is evaluated in the enclosing scope; the rest runs per element.
        entry = self.expr(node.generators[0].iter, state)
        return self._generator_loop(node, 0, entry)

    def _generator_loop(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                        index: int, entry: S) -> S:
        back = self._generator_iteration(node, index, entry)
        skip = Label("that skips the comprehension at {at}", node.lineno) if index == 0 else None
        return self.domain.widen(entry, back, node, skip)

    def _generator_iteration(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                             index: int, state: S) -> S:
        generator = node.generators[index]
        state = self.expr(generator.target, state)
        filtered: list[tuple[S, Label | None]] = []
        for condition in generator.ifs:  # a false filter ends this element early
            state = self.expr(condition, state)
            filtered.append((state, None))
        if index + 1 < len(node.generators):
            inner = self.expr(node.generators[index + 1].iter, state)
            state = self._generator_loop(node, index + 1, inner)
        elif isinstance(node, ast.DictComp):
            state = self.exprs([node.key, node.value], state)
        else:
            state = self.expr(node.elt, state)
        return self.merge([*filtered, (state, None)])


def constant_truth(test: ast.expr) -> bool | None:
    """Return the truth TEST has on every run, as Python folds it, or None when it depends on the run.

    Literals (`False`, `0`, `None`, `""`, `True`, `1`), `not` of one, an `and` with an always-false operand
    and an `or` with an always-true one: code such a test excludes can never run (helper-115: `if False:`
    kept `calls`, `reads` and `defines` green). Names are never folded: `TYPE_CHECKING` and `DEBUG` are
    rebound, patched or flipped, and the code under them is meant to run somewhere.
    """
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        truth = constant_truth(test.operand)
        return None if truth is None else not truth
    if isinstance(test, ast.BoolOp):
        truths = [constant_truth(value) for value in test.values]
        decisive = not isinstance(test.op, ast.And)   # one always-false operand decides an `and`
        if decisive in truths:
            return decisive
        return (not decisive) if all(truth is not None for truth in truths) else None
    return None


def evaluated_children(node: ast.AST) -> list[ast.AST]:
    """Return the sub-expressions a simple statement or expression evaluates, in evaluation order."""
    if isinstance(node, ast.Assign):
        return [node.value, *node.targets]
    if isinstance(node, ast.AnnAssign):  # the annotation is not evaluated in a function
        return [node.value, node.target] if node.value is not None else []
    if isinstance(node, ast.Assert):  # the message only runs when the assert fails, which ends nothing
        return [node.test]
    children: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            children.append(child)
        elif isinstance(child, ast.keyword):
            children.append(child.value)
    return children


def _forks_and_calls(node: ast.AST) -> list[ast.AST]:
    """Return the calls and forking sub-expressions of `node` in evaluation order.

    Everything else (operators, attributes, subscripts, displays) just evaluates its parts in order, so
    it is flattened here without recursion: a 3,000-term `a + b + ...` must not exhaust the stack.
    """
    found: list[ast.AST] = []
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if type(current) in _EXPRESSIONS:
            found.append(current)
        elif type(current) is not ast.Name and type(current) is not ast.Constant:
            stack.extend(reversed(evaluated_children(current)))
    return found


_EXPRESSIONS: dict[type, Callable[..., Any]] = {
    ast.Call: ExpressionWalker._call,
    ast.BoolOp: ExpressionWalker._boolop,
    ast.Compare: ExpressionWalker._compare,
    ast.IfExp: ExpressionWalker._ifexp,
    ast.Lambda: ExpressionWalker._lambda,
    ast.Dict: ExpressionWalker._dict,
    ast.ListComp: ExpressionWalker._comprehension,
    ast.SetComp: ExpressionWalker._comprehension,
    ast.GeneratorExp: ExpressionWalker._comprehension,
    ast.DictComp: ExpressionWalker._comprehension,
}
