"""Nested `try`/`finally` stays linear: `finally:` is walked once, however many exits are pending.

Before, each pending exit (fall-through, every `return`, `raise`, `break`, `continue`) walked the `finally:`
block again, so nested levels doubled the work: 22 levels took minutes and gigabytes. The table pins the
verdicts and messages on small cases to what the per-exit walk said (two order messages gained a witness).
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from carrytool.asserts import AssertSpec, evaluate, expressions
from carrytool.asserts.counts import CountDomain
from carrytool.asserts.expressions import Budget
from carrytool.asserts.names import parse_target
from carrytool.asserts.order import OrderDomain
from carrytool.asserts.paths import walk_scope
from carrytool.asserts.pyscope import resolve_scope
from carrytool.asserts.source import SourceFile


def nested(depth: int, where: str) -> str:
    """`depth` nested `try`/`finally`, each level able to return early; nested in `finally:` or in the body."""
    lines, pad = ["def f(c):"], "    "
    for _ in range(depth):
        if where == "finally":
            lines += [pad + "try:", pad + "    if c: return g()", pad + "    g()", pad + "finally:"]
        else:
            lines += [pad + "try:"]
        pad += "    "
    lines.append(pad + "g()")
    if where == "body":
        for _ in range(depth):
            pad = pad[:-4]
            lines += [pad + "finally:", pad + "    if c: return g()", pad + "    g()"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["finally", "body"])
@pytest.mark.parametrize("depth", [22, 40])
def test_nested_try_finally_costs_steps_linear_in_the_code(depth: int, where: str) -> None:
    src = SourceFile("m.py", nested(depth, where).encode())
    scope = resolve_scope(src, "f")
    assert not isinstance(scope, str)
    nodes = sum(1 for _ in ast.walk(src.tree))  # type: ignore[arg-type]
    for domain in (CountDomain(src, parse_target("g") or ()), OrderDomain(src, [parse_target("g") or ()] * 2)):
        budget = Budget()
        walk_scope(domain, src, scope, budget)  # type: ignore[arg-type]
        assert budget.spent <= 10 * nodes, (type(domain).__name__, budget.spent, nodes)


@pytest.mark.parametrize("where", ["finally", "body"])
@pytest.mark.parametrize("depth", [22, 40])
def test_nested_try_finally_verdicts(depth: int, where: str) -> None:
    data = nested(depth, where).encode()
    outcome = evaluate(AssertSpec(name="n", file="m.py", check="calls", target="g", scope="f", times=depth + 1), data)
    assert outcome.ok, outcome.message
    assert outcome.message.startswith(f"g is called exactly {depth + 1} times on every path")
    outcome = evaluate(AssertSpec(name="n", file="m.py", check="calls", target="g", scope="f", max=depth), data)
    assert not outcome.ok and f"g is called {depth + 1} times" in outcome.message


def test_a_scope_past_the_step_budget_fails_its_assert(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expressions, "STEP_LIMIT", 100)
    outcome = evaluate(AssertSpec(name="n", file="m.py", check="calls", target="g", scope="f", times=1),
                       nested(40, "finally").encode())
    assert not outcome.ok
    assert outcome.message == ("f: f is too complex to analyse (more than 100 analysis steps), "
                               "so the assert cannot be judged")
    assert outcome.line == 1


CASES = {
    'return in try, finally calls': 'try:\n    if c:\n        return g()\n    g()\nfinally:\n    g()',
    'raise in try': 'try:\n    if c:\n        raise E()\n    h()\nfinally:\n    g()',
    'return in finally': 'try:\n    g()\nfinally:\n    if c:\n        return\n    g()',
    'nested finally': 'try:\n    try:\n        if c:\n            return g()\n    finally:\n        g()\nfinally:\n    if d:\n        g()',
    'finally in loop break': 'for x in xs:\n    try:\n        if c:\n            break\n        if d:\n            continue\n        g()\n    finally:\n        h()\ng()',
    'handlers and finally': 'try:\n    g()\nexcept E:\n    if c:\n        raise\n    h()\nelse:\n    g()\nfinally:\n    if d:\n        g()',
    'finally loop': 'try:\n    if c:\n        return\nfinally:\n    for x in xs:\n        g()',
    'order in finally': 'try:\n    if c:\n        return h()\n    a()\nfinally:\n    b()',
    'order across': 'a()\ntry:\n    if c:\n        raise E()\nfinally:\n    if d:\n        b()\n    else:\n        a()\n        b()',
    'finally while true': 'try:\n    g()\nfinally:\n    while True:\n        if c:\n            break\n        g()',
    'finally after unbounded': 'try:\n    for x in xs:\n        g()\n    if c:\n        return\nfinally:\n    if d:\n        g()',
    'finally raises': 'try:\n    if c:\n        return g()\nfinally:\n    if d:\n        raise E()\n    g()',
}

TABLE = [
    ('return in try, finally calls', {"times": 1}, False, 'f: g is called 2 times on every path through f (calls at m.py:4, m.py:5, m.py:7) (want exactly 1)'),
    ('return in try, finally calls', {"min": 2}, True, 'g is called exactly 2 times on every path (2 paths) through f'),
    ('return in try, finally calls', {"max": 1}, False, 'f: g is called 2 times on every path through f (calls at m.py:4, m.py:5, m.py:7) (want at most 1)'),
    ('return in try, finally calls', {}, True, 'g is called on at least one path through f (first at m.py:4)'),
    ('return in try, finally calls', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('return in try, finally calls', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('return in try, finally calls', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('raise in try', {"times": 1}, True, 'g is called exactly 1 time on every path (2 paths) through f'),
    ('raise in try', {"min": 2}, False, 'f: g is called 1 time on every path through f (calls at m.py:7) (want at least 2)'),
    ('raise in try', {"max": 1}, True, 'g is called exactly 1 time on every path (2 paths) through f'),
    ('raise in try', {}, True, 'g is called on at least one path through f (first at m.py:7)'),
    ('raise in try', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('raise in try', ("h", "b"), False, 'f: b is never called on any path through f'),
    ('raise in try', ("g", "h"), False, 'f: h at m.py:5 is reachable without g'),
    ('return in finally', {"times": 1}, False, 'f: g is called 2 times on the path that reaches the end of f at m.py:7 (want exactly 1)'),
    ('return in finally', {"min": 2}, False, 'f: g is called 1 time on the path that returns at m.py:6 (want at least 2)'),
    ('return in finally', {"max": 1}, False, 'f: g is called 2 times on the path that reaches the end of f at m.py:7 (want at most 1)'),
    ('return in finally', {}, True, 'g is called on at least one path through f (first at m.py:3)'),
    ('return in finally', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('return in finally', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('return in finally', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('nested finally', {"times": 1}, False, 'f: g is called 3 times on the path through the `if d` branch at m.py:9 (want exactly 1)'),
    ('nested finally', {"min": 2}, False, 'f: g is called 1 time on the path that skips the `if d` at m.py:9 (want at least 2)'),
    ('nested finally', {"max": 1}, False, 'f: g is called 3 times on the path through the `if d` branch at m.py:9 (want at most 1)'),
    ('nested finally', {}, True, 'g is called on at least one path through f (first at m.py:5)'),
    ('nested finally', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('nested finally', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('nested finally', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('finally in loop break', {"times": 1}, False, 'f: g at m.py:8 is inside the loop at m.py:2, so it may be called any number of times (want exactly 1)'),
    ('finally in loop break', {"min": 2}, False, 'f: g is called 1 time on a path through f (want at least 2)'),
    ('finally in loop break', {"max": 1}, False, 'f: g at m.py:8 is inside the loop at m.py:2, so it may be called any number of times (want at most 1)'),
    ('finally in loop break', {}, True, 'g is called on at least one path through f (first at m.py:8)'),
    ('finally in loop break', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('finally in loop break', ("h", "b"), False, 'f: b is never called on any path through f'),
    ('finally in loop break', ("g", "h"), False, 'f: h at m.py:10 is reachable without g (on the path that breaks out of the loop at m.py:5)'),  # gained a witness
    ('handlers and finally', {"times": 1}, False, 'f: g is called 3 times on the path that raises no exception in the `try` at m.py:2 (want exactly 1)'),
    ('handlers and finally', {"min": 2}, False, 'f: g is called 1 time on the path through the `except E` handler at m.py:4 (want at least 2)'),
    ('handlers and finally', {"max": 1}, False, 'f: g is called 3 times on the path that raises no exception in the `try` at m.py:2 (want at most 1)'),
    ('handlers and finally', {}, True, 'g is called on at least one path through f (first at m.py:3)'),
    ('handlers and finally', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('handlers and finally', ("h", "b"), False, 'f: b is never called on any path through f'),
    ('handlers and finally', ("g", "h"), True, 'g is called before h on every path through f'),
    ('finally loop', {"times": 1}, False, 'f: g is never called on the path that skips the loop at m.py:6 (want exactly 1); g at m.py:7 is inside the loop at m.py:6, so it may be called any number of times (want exactly 1)'),
    ('finally loop', {"min": 2}, False, 'f: g is never called on the path that skips the loop at m.py:6 (want at least 2)'),
    ('finally loop', {"max": 1}, False, 'f: g at m.py:7 is inside the loop at m.py:6, so it may be called any number of times (want at most 1)'),
    ('finally loop', {}, True, 'g is called on at least one path through f (first at m.py:7)'),
    ('finally loop', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('finally loop', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('finally loop', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('order in finally', {"times": 1}, False, 'f: g is never called on any path through f'),
    ('order in finally', {"min": 2}, False, 'f: g is never called on any path through f'),
    ('order in finally', {"max": 1}, True, 'g is called exactly 0 times on every path (2 paths) through f'),
    ('order in finally', {}, False, 'f: g is never called on any path through f'),
    ('order in finally', ("a", "b"), False, 'f: b at m.py:7 is reachable without a (on the path that returns at m.py:4)'),  # gained a witness
    ('order in finally', ("h", "b"), False, 'f: b at m.py:7 is reachable without h'),
    ('order in finally', ("g", "h"), False, 'f: g is never called on any path through f'),
    ('order across', {"times": 1}, False, 'f: g is never called on any path through f'),
    ('order across', {"min": 2}, False, 'f: g is never called on any path through f'),
    ('order across', {"max": 1}, True, 'g is called exactly 0 times on every path (4 paths) through f'),
    ('order across', {}, False, 'f: g is never called on any path through f'),
    ('order across', ("a", "b"), True, 'a is called before b on every path through f'),
    ('order across', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('order across', ("g", "h"), False, 'f: g is never called on any path through f'),
    ('finally while true', {"times": 1}, False, 'f: g at m.py:8 is inside the loop at m.py:5, so it may be called any number of times (want exactly 1)'),
    ('finally while true', {"min": 2}, False, 'f: g is called 1 time on a path through f (want at least 2)'),
    ('finally while true', {"max": 1}, False, 'f: g at m.py:8 is inside the loop at m.py:5, so it may be called any number of times (want at most 1)'),
    ('finally while true', {}, True, 'g is called on at least one path through f (first at m.py:3)'),
    ('finally while true', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('finally while true', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('finally while true', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('finally after unbounded', {"times": 1}, False, 'f: g is never called on the path that skips the loop at m.py:3 (want exactly 1); g at m.py:4 is inside the loop at m.py:3, so it may be called any number of times (want exactly 1)'),
    ('finally after unbounded', {"min": 2}, False, 'f: g is never called on the path that skips the loop at m.py:3 (want at least 2)'),
    ('finally after unbounded', {"max": 1}, False, 'f: g at m.py:4 is inside the loop at m.py:3, so it may be called any number of times (want at most 1)'),
    ('finally after unbounded', {}, True, 'g is called on at least one path through f (first at m.py:4)'),
    ('finally after unbounded', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('finally after unbounded', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('finally after unbounded', ("g", "h"), False, 'f: h is never called on any path through f'),
    ('finally raises', {"times": 1}, False, 'f: g is never called on the path that raises at m.py:7 (want exactly 1); g is called 2 times on the path that returns at m.py:4 (want exactly 1)'),
    ('finally raises', {"min": 2}, False, 'f: g is never called on the path that raises at m.py:7 (want at least 2)'),
    ('finally raises', {"max": 1}, False, 'f: g is called 2 times on the path that returns at m.py:4 (want at most 1)'),
    ('finally raises', {}, True, 'g is called on at least one path through f (first at m.py:4)'),
    ('finally raises', ("a", "b"), False, 'f: a is never called on any path through f'),
    ('finally raises', ("h", "b"), False, 'f: h is never called on any path through f'),
    ('finally raises', ("g", "h"), False, 'f: h is never called on any path through f'),
]


@pytest.mark.parametrize("name, query, ok, message", TABLE, ids=[f"{row[0]}-{row[1]}" for row in TABLE])
def test_small_try_finally_verdicts_are_unchanged(name: str, query: dict[str, int] | tuple[str, ...],
                                                   ok: bool, message: str) -> None:
    data = ("def f(c, d, xs):\n" + textwrap.indent(CASES[name], "    ") + "\n").encode()
    if isinstance(query, tuple):
        spec = AssertSpec(name="t", file="m.py", check="order", target=query, scope="f")
    else:
        spec = AssertSpec(name="t", file="m.py", check="calls", target="g", scope="f", **query)  # type: ignore[arg-type]
    outcome = evaluate(spec, data)
    assert (outcome.ok, outcome.message) == (ok, message)
