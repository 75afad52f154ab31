"""A later plain definition of a name in the same body replaces the earlier one: only the live one counts."""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import AssertOutcome, AssertSpec, evaluate

REDEFINED = """\
class Worker:
    def wake_up(self, tags=None):
        self.backend.resume(tags)
        self.handshake()

    def wake_up(self, tags=None):
        self.allocator.wake_up(tags)
"""


def run(check: str, target: str | tuple[str, ...], source: str, scope: str | None = None) -> AssertOutcome:
    spec = AssertSpec(name="t", file="m.py", check=check, target=target, scope=scope)
    return evaluate(spec, textwrap.dedent(source).encode())


@pytest.mark.parametrize("check, target", [
    ("calls", "backend.resume"),
    ("order", ("backend.resume", "handshake")),
    ("mentions", "handshake"),
])
def test_a_later_plain_redefinition_hides_the_earlier_body(check: str, target: str | tuple[str, ...]) -> None:
    # helper-115: both defs were alternatives of one scope, so the lost change still "held"
    outcome = run(check, target, REDEFINED, "Worker.wake_up")
    assert not outcome.ok, outcome.message
    assert "Worker.wake_up at m.py:2 is redefined at m.py:6" in outcome.message


def test_the_live_definition_is_the_scope() -> None:
    outcome = run("calls", "allocator.wake_up", REDEFINED, "Worker.wake_up")
    assert outcome.ok and "m.py:7" in outcome.message, outcome.message


def test_a_function_nested_in_a_dead_definition_is_dead_too() -> None:
    source = """\
    def outer():
        def helper():
            g()
    def outer():
        pass
    """
    outcome = run("calls", "g", source, "outer.helper")
    assert not outcome.ok and "outer at m.py:1 is redefined at m.py:4" in outcome.message, outcome.message


@pytest.mark.parametrize("source", [
    # if/else and try/except variants are alternatives
    """\
    if fast:
        def f():
            g()
    else:
        def f():
            h()
    """,
    """\
    try:
        def f():
            g()
    except ImportError:
        def f():
            h()
    """,
    # a property's accessors
    """\
    class C:
        @property
        def f(self):
            return g()
        @f.setter
        def f(self, value):
            h()
    """,
    # registered implementations
    """\
    @functools.singledispatch
    def f(x):
        h()
    @f.register
    def f(x: int):
        g()
    """,
    # a decorator that registers (takes arguments and wraps nothing)
    """\
    @app.get("/a")
    def f():
        g()
    @app.get("/b")
    def f():
        h()
    """,
    # a plain assignment that wraps the definition keeps its code
    """\
    def f():
        g()
    f = staticmethod(f)
    """,
])
def test_definitions_several_by_design_stay_alternatives(source: str) -> None:
    scope = "C.f" if "class C" in source else "f"
    outcome = run("calls", "g", source, scope)
    assert outcome.ok, outcome.message


def test_overload_stubs_under_an_alias_are_not_the_scope() -> None:
    source = """\
    from typing import overload as ov
    @ov
    def f(x: int) -> int: g()
    @ov
    def f(x: str) -> str: g()
    def f(x):
        return h()
    """
    outcome = run("calls", "g", source, "f")
    assert not outcome.ok, outcome.message
    assert run("calls", "h", source, "f").ok


def test_a_redefinition_inside_one_branch_hides_the_earlier_one_of_that_branch() -> None:
    source = """\
    if fast:
        def f():
            g()
        def f():
            h()
    """
    outcome = run("calls", "g", source, "f")
    assert not outcome.ok and "f at m.py:2 is redefined at m.py:4" in outcome.message, outcome.message


def test_a_redefinition_after_the_branch_hides_both_variants() -> None:
    source = """\
    if fast:
        def f():
            g()
    else:
        def f():
            g()
    def f():
        h()
    """
    assert not run("calls", "g", source, "f").ok
    assert run("calls", "h", source, "f").ok


@pytest.mark.parametrize("rebinding, how", [
    ("    _print_X = None\n", "rebound at m.py:4"),
    ("    del _print_X\n", "deleted at m.py:4"),
    ("    from other import _print_X\n", "rebound at m.py:4"),
])
def test_defines_fails_when_the_body_later_rebinds_the_name(rebinding: str, how: str) -> None:
    # helper-115: `_print_X = None` after `def _print_X` left `defines: Printer._print_X` holding
    source = "class Printer:\n    def _print_X(self):\n        pass\n" + rebinding
    outcome = run("defines", "Printer._print_X", source)
    assert not outcome.ok, outcome.message
    assert f"Printer._print_X at m.py:2 is {how}" in outcome.message, outcome.message
    scoped = run("calls", "pass_", source, "Printer._print_X")
    assert not scoped.ok and how in scoped.message, scoped.message


def test_a_conditional_rebinding_leaves_the_definition() -> None:
    source = """\
    def f():
        g()
    if slow:
        f = None
    """
    assert run("defines", "f", source).ok
    assert run("calls", "g", source, "f").ok
