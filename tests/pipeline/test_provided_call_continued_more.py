"""Three union-check misses h264's review left (h267): a def's parameter default written over lines, a comprehension
the union writes on one line, and an argument a PR adds that the union passes with another value."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_regions import _statuses
from tests.pipeline.test_provided_repeats import _absent, _run

TAIL = "\n\ndef g(b):\n    return b\n"
DEF = "def f(\n    a,\n    b=1,\n):\n    return a + b\n" + TAIL


def _apart(text: str) -> str:
    """TEXT with pr/2's change, in g (apart from pr/1's)."""
    return text.replace("    return b\n", "    return b + 1\n")


@pytest.mark.parametrize(("kept", "carried"), [
    ("    b=1,\n) -> int:\n", False), ("    b=2,\n) -> int:\n", True), ("    b = 2,\n) -> int:\n", True),
    ("    b=(2),\n) -> int:\n", True), ("    b=1, c=0,\n) -> int:\n", False),
    ("def f(a, b=1) -> int:\n", False), ("def f(a, b=2) -> int:\n", True)])
def test_a_parameter_default_a_pr_changes_over_lines_kept_by_the_union_is_absent(cli: Cli, small: Small, kept: str,
                                                                              carried: bool) -> None:
    # pr/1 makes the default 2; upstream annotates the def's closing line; the union writes its own closing line
    one = DEF.replace("    b=1,\n", "    b=2,\n")
    up = DEF.replace("):\n", ") -> object:\n")
    union = _apart(DEF.replace("    b=1,\n):\n" if kept.startswith("    ") else "def f(\n    a,\n    b=1,\n):\n",
                               kept))
    report = _run(cli, small, one, _apart(DEF), union, base=DEF, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [3, 3])]), \
        report["warnings"]


COMP = "def f(a):\n    x = [\n        g(v)\n        for v in a\n    ]\n    return x\n" + TAIL


@pytest.mark.parametrize(("written", "carried"), [
    ("    x = [g(v) for v in a if v] or fb(a)\n", True),
    ("    x = [\n        g(v)\n        for v in a\n        if v\n    ] or fb(a)\n", True),
    ("    x = [g(v) for v in a] or fb(a)\n", False),
    ("    x = [g(v) for v in a if not v] or fb(a)\n", False),
])
def test_a_comprehension_condition_a_pr_adds_is_carried_where_the_union_writes_it(cli: Cli, small: Small, written: str,
                                                                                   carried: bool) -> None:
    # pr/1 adds `if v` to a comprehension over lines; upstream changes its closing line; the union its own way
    one = COMP.replace("        for v in a\n", "        for v in a\n        if v\n")
    up = COMP.replace("    ]\n", "    ] or 0\n")
    union = _apart(COMP.replace("    x = [\n        g(v)\n        for v in a\n    ]\n", written))
    report = _run(cli, small, one, _apart(COMP), union, base=COMP, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [5, 5])]), \
        report["warnings"]


CALL = "def f(a):\n    audit(a)\n    return a\n" + TAIL


@pytest.mark.parametrize(("written", "carried"), [("audit(a, True)", False), ("audit(a, 1)", True),
                                                  ("audit(a, (1))", True), ("audit(aa, 1)", True)])
def test_an_argument_a_pr_adds_passed_with_another_value_is_no_form_of_it(cli: Cli, small: Small, written: str,
                                                                         carried: bool) -> None:
    one = CALL.replace("    audit(a)\n", "    audit(a, 1)\n")
    up = CALL.replace("    audit(a)\n", "    audit(a)  # checked\n")
    union = _apart(CALL.replace("    audit(a)\n", f"    {written}  # checked too\n"))
    report = _run(cli, small, one, _apart(CALL), union, base=CALL, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [2, 2])]), \
        report["warnings"]


def test_upstream_passing_the_added_argument_lets_a_third_value_reconcile_both(cli: Cli, small: Small) -> None:
    # h259's rule: upstream passes it 5, the PR 1, the union True (its reconciliation)
    one = CALL.replace("    audit(a)\n", "    audit(a, 1)\n")
    up = CALL.replace("    audit(a)\n", "    audit(a, 5)\n")
    union = _apart(CALL.replace("    audit(a)\n", "    audit(a, True)\n"))
    report = _run(cli, small, one, _apart(CALL), union, base=CALL, up=up, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("m.py", [2, 2], "re-expressed")]


def test_the_warning_names_the_default_kept(cli: Cli, small: Small) -> None:
    one = DEF.replace("    b=1,\n", "    b=2,\n")
    union = _apart(DEF.replace("    b=1,\n):\n", "    b=1,\n) -> int:\n"))
    [(_e, _l, message)] = _absent(_run(cli, small, one, _apart(DEF), union, base=DEF,
                                       up=DEF.replace("):\n", ") -> object:\n")))
    assert "passes f's parameter b as it was (`1`), not as the PR makes it (`2`)" in message, message


def test_the_warning_names_the_value_passed_for_an_added_argument(cli: Cli, small: Small) -> None:
    one = CALL.replace("    audit(a)\n", "    audit(a, 1)\n")
    union = _apart(CALL.replace("    audit(a)\n", "    audit(a, True)  # checked too\n"))
    [(_e, _l, message)] = _absent(_run(cli, small, one, _apart(CALL), union, base=CALL,
                                       up=CALL.replace("    audit(a)\n", "    audit(a)  # checked\n")))
    assert "passes audit argument 2 as `True`, not as the PR makes it (`1`)" in message, message


def test_reading_back_for_a_bracket_stops_at_an_async_def() -> None:
    # as at a `def`: no bracket above an `async def` line holds it (h264's review: read on back for nothing)
    from carrytool.pipeline.callspan import _open_above, openers
    lines = [b"x = (", b"async def f(", b"    a,", b"):"]
    assert _open_above(lines, {}, 2) == [1]
    assert openers(lines, {}, 2, 2) == [1, 1]


@pytest.mark.parametrize(("written", "carried"), [
    ("    b=1,\n    c=None,\n", True), ("    b=1,\n    c: int | None = None,\n", True),
    ("    b: int = 1,\n    c: object = None,\n", True), ("    b=1,\n", False), ("    b=1,\n    c=0,\n", False)])
def test_a_parameter_a_pr_adds_is_read_by_its_name_and_default_not_its_annotation(cli: Cli, small: Small,
                                                                                 written: str, carried: bool) -> None:
    one = DEF.replace("    b=1,\n", "    b=1,\n    c=None,\n")
    up = DEF.replace("):\n", ") -> object:\n")
    union = _apart(DEF.replace("    b=1,\n):\n", f"{written}) -> int:\n"))
    report = _run(cli, small, one, _apart(DEF), union, base=DEF, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [4, 4])]), \
        report["warnings"]


def test_a_defs_parameters_are_read_by_name_with_their_defaults() -> None:
    from carrytool.pipeline.linecalls import parameters
    from carrytool.pipeline.lineroles import code_of
    line = b"async def k(self, /, b=(1, 2), *args, c: int | None = None, d=lambda x, y: 0, **kw) -> int:"
    assert parameters(code_of(line)[0]) == ("def k", "", (
        ("self", ""), ("/", ""), ("b", "(1,2)"), ("*args", ""), ("c", "None"), ("d", "lambdax,y:0"), ("**kw", "")))
    assert parameters(code_of(b"x = k(1)")[0]) is None
