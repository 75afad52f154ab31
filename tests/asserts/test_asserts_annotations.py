"""Annotations Python never evaluates read nothing and call nothing (helper-115).

The annotation of a local variable (`x: y.scale_specs` in a function body) is never evaluated; those at
module or class level, and a definition's parameter and return annotations, are, unless the module has
`from __future__ import annotations`.
"""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import AssertOutcome, AssertSpec, evaluate

FUTURE = "from __future__ import annotations\n"


def run(check: str, target: str, source: str, scope: str | None = None) -> AssertOutcome:
    spec = AssertSpec(name="t", file="m.py", check=check, target=target, scope=scope)
    return evaluate(spec, textwrap.dedent(source).encode())


@pytest.mark.parametrize("source, scope", [
    ("def f(y):\n    x: y.scale_specs\n    return 1\n", "f"),
    ("def f(y):\n    x: y.scale_specs = 1\n    return x\n", "f"),
    ("class C:\n    def f(self, y):\n        x: y.scale_specs = 1\n", "C"),
    ("def f(y):\n    if y:\n        x: list[y.scale_specs] = []\n", None),
    (FUTURE + "x: y.scale_specs = 1\n", None),
    (FUTURE + "def f(a: y.scale_specs) -> y.scale_specs:\n    pass\n", None),
])
def test_an_annotation_never_evaluated_is_not_a_read(source: str, scope: str | None) -> None:
    outcome = run("reads", "scale_specs", source, scope)
    assert not outcome.ok, outcome.message
    assert "never read" in outcome.message


@pytest.mark.parametrize("source, scope", [
    ("x: y.scale_specs = 1\n", None),
    ("class C:\n    x: y.scale_specs\n", "C"),
    ("def f():\n    class C:\n        x: y.scale_specs\n", "f"),
    ("class C:\n    def f(self, a: y.scale_specs) -> None:\n        pass\n", "C"),
])
def test_an_annotation_python_evaluates_is_a_read(source: str, scope: str | None) -> None:
    outcome = run("reads", "scale_specs", source, scope)
    assert outcome.ok, outcome.message


def test_a_call_in_a_local_annotation_is_no_call() -> None:
    source = "def f():\n    x: make() = 1\n    return x\n"
    assert run("not_calls", "make", source, "f").ok
    assert not run("calls", "make", source, "f").ok
    assert run("mentions", "make", source, "f").ok  # still a name written there


def test_a_call_in_an_annotation_under_future_annotations_is_no_call() -> None:
    source = FUTURE + "def f(a: make()) -> make():\n    pass\n"
    assert run("not_calls", "make", source).ok
    assert not run("not_calls", "make", source.replace(FUTURE, "")).ok


def test_a_call_in_a_local_annotation_neither_sits_in_a_try_nor_escapes_a_guard() -> None:
    source = "def f(flag):\n    try:\n        x: make() = 1\n    except E:\n        pass\n    make()\n"
    spec = AssertSpec(name="t", file="m.py", check="calls", target="make", scope="f", in_try=True)
    assert not evaluate(spec, source.encode()).ok
    guarded = "def f(flag):\n    x: make() = 1\n    if flag:\n        make()\n"
    spec = AssertSpec(name="t", file="m.py", check="calls", target="make", scope="f", guarded_by="flag")
    outcome = evaluate(spec, guarded.encode())
    assert outcome.ok, outcome.message
