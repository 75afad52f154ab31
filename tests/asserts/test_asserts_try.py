"""A `raise` inside a `try` whose handler catches it does not leave the function: the path goes on after it."""

from __future__ import annotations

import pytest

from carrytool.asserts import AssertSpec, evaluate

CAUGHT = """\
def f(x):
    try:
        if x:
            raise ValueError(x)
        h()
    except ValueError:
        pass
    g()
"""
UNCAUGHT = """\
def f(x):
    try:
        if x:
            raise ValueError(x)
    finally:
        h()
    g()
"""


@pytest.mark.parametrize("source, ok, message", [
    (CAUGHT, True, "g is called exactly 1 time on every path (3 paths) through f"),
    (UNCAUGHT, False, "f: g is never called on the path that raises at m.py:4 (want exactly 1)"),
])
def test_a_caught_raise_goes_on_after_the_try(source: str, ok: bool, message: str) -> None:
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g", scope="f", times=1),
                       source.encode())
    assert (outcome.ok, outcome.message) == (ok, message)


def test_order_after_a_caught_raise() -> None:
    spec = AssertSpec(name="o", file="m.py", check="order", target=("h", "g"), scope="f")
    source = CAUGHT.replace("    g()\n", "    h()\n    g()\n")
    outcome = evaluate(spec, source.encode())
    assert outcome.ok, outcome.message
