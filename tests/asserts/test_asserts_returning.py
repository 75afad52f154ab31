"""`paths: returning`: `times`/`min`/`max` judge only the paths that return or fall off the end, not `raise`."""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import AssertSpec, evaluate

SOURCE = textwrap.dedent("""\
    def wake(self, ok):
        if not ok:
            raise RuntimeError("no handshake")
        self.backend.resume()
        return True

    def always_raises(self):
        self.backend.resume()
        raise RuntimeError()

    def in_finally(self, ok):
        try:
            if not ok:
                raise RuntimeError()
            return 1
        finally:
            self.backend.resume()
    """).encode()


def judge(scope: str, paths: str, **bounds: int) -> tuple[bool, str]:
    spec = AssertSpec(name="r", file="pkg/w.py", check="calls", target="backend.resume", scope=scope,
                      paths=paths, **bounds)  # type: ignore[arg-type]
    outcome = evaluate(spec, SOURCE)
    return outcome.ok, outcome.message


def test_raising_paths_count_by_default() -> None:
    assert judge("wake", "all", times=1) == (
        False, "wake: backend.resume is never called on the path that raises at pkg/w.py:3 (want exactly 1)")


def test_returning_judges_only_paths_that_return() -> None:
    assert judge("wake", "returning", times=1) == (
        True, "backend.resume is called exactly 1 time on every returning path (1 returning path) through wake")
    assert judge("wake", "returning", max=0) == (
        False, "wake: backend.resume is called 1 time on every returning path through wake (calls at pkg/w.py:4) "
               "(want at most 0)")


def test_returning_keeps_finally_on_the_returning_paths() -> None:
    assert judge("in_finally", "returning", times=1)[0] is True
    assert judge("in_finally", "all", times=1)[0] is True


def test_a_scope_that_always_raises_has_no_returning_path() -> None:
    assert judge("always_raises", "returning", min=1) == (
        False, "always_raises: no path through always_raises returns, so the calls of backend.resume cannot be "
               "counted (want at least 1)")


@pytest.mark.parametrize("spec, problem", [
    (AssertSpec(name="p", file="w.py", check="calls", target="g", paths="some", times=1),
     "`paths` needs one of all, returning, got 'some'"),
    (AssertSpec(name="p", file="w.py", check="calls", target="g", paths="returning"),
     "`paths` only applies to `calls` with `times`, `min` or `max`"),
    (AssertSpec(name="p", file="w.py", check="mentions", target="g", paths="returning"),
     "`paths` only applies to `calls` with `times`, `min` or `max`"),
])
def test_malformed_paths_fail_the_assert(spec: AssertSpec, problem: str) -> None:
    outcome = evaluate(spec, b"def g():\n    pass\n")
    assert (outcome.ok, outcome.message) == (False, problem)


def test_a_count_every_path_has_names_the_calls_and_points_past_the_bound() -> None:
    """helper-87: a `times` failure with no branch deciding it pointed at the `def` line alone; the calls
    are named and the annotation goes to the first call past the bound."""
    source = b"def f(self):\n    self.compile()\n    x = 1\n    self.compile()\n    self.compile()\n"
    spec = AssertSpec(name="c", file="m.py", check="calls", target="self.compile", scope="f", times=1)  # type: ignore[arg-type]
    outcome = evaluate(spec, source)
    assert (outcome.ok, outcome.line) == (False, 5)
    assert "is called 3 times on every path through f (calls at m.py:2, m.py:4, m.py:5) (want exactly 1)" \
        in outcome.message
    few = AssertSpec(name="c", file="m.py", check="calls", target="self.compile", scope="f", min=4)  # type: ignore[arg-type]
    assert evaluate(few, source).line == 2
    # helper-90: two calls on one line counted as one; the (bound+1)-th call in the file's order was the
    # else branch's, not the one every path makes: the annotation goes to the last call
    two = b"def f(c):\n    g(); g()\n    g()\n"
    spec = AssertSpec(name="c", file="m.py", check="calls", target="g", scope="f", times=1)  # type: ignore[arg-type]
    outcome = evaluate(spec, two)
    assert outcome.line == 3 and "(calls at m.py:2 (2), m.py:3)" in outcome.message, outcome.message
    branches = b"def f(c):\n    if c:\n        g()\n    else:\n        g()\n    g()\n"
    assert evaluate(spec, branches).line == 6
