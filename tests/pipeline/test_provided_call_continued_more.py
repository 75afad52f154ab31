"""Three union-check misses h264's review left (h267): a def's parameter default written over lines, a comprehension
the union writes on one line, and an argument a PR adds that the union passes with another value."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_repeats import _absent, _run

TAIL = "\n\ndef g(b):\n    return b\n"


def _apart(text: str) -> str:
    """TEXT with pr/2's change, in g (apart from pr/1's)."""
    return text.replace("    return b\n", "    return b + 1\n")

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




def test_reading_back_for_a_bracket_stops_at_an_async_def() -> None:
    # as at a `def`: no bracket above an `async def` line holds it (h264's review: read on back for nothing)
    from carrytool.pipeline.callspan import _open_above, openers
    lines = [b"x = (", b"async def f(", b"    a,", b"):"]
    assert _open_above(lines, {}, 2) == [1]
    assert openers(lines, {}, 2, 2) == [1, 1]
