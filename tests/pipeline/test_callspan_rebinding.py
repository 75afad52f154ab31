"""A name bound to the PR's function above the union's hunk (`sr = send_report`, h243's bindings_before) and bound
again by a `def` or `class` of that name before the hunk: the union's `sr(dd, 'weekly')` then calls the nested
def, not the PR's function, and the PR's call is dropped. It was read as the PR's call, `re-expressed`, no warning
(h253's review: a false pass is a silent loss)."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_call_context import TWO, _bound, _union, _verdicts
from tests.pipeline.test_provided_rewrite import _coverage

REBOUND = {
    "rebound-by-a-nested-def": "    sr = send_report\n    def sr(x, y):\n        return x\n",
    "rebound-by-a-nested-async-def": "    sr = send_report\n    async def sr(x, y):\n        return x\n",
    "rebound-by-a-nested-class": "    sr = send_report\n    class sr(Base):\n        pass\n",
    "rebound-by-a-decorated-def": "    sr = send_report\n    @wraps(log)\n    def sr(x, y):\n        return x\n",
}


@pytest.mark.parametrize("name", list(REBOUND))
def test_a_name_rebound_by_a_def_or_class_is_no_alias(cli: Cli, small: Small, name: str) -> None:
    up = _bound(REBOUND[name])
    lines, r = _verdicts(cli, small, TWO, _union("    sr(dd, 'weekly')\n", up), up=up)
    assert lines == [("pr/2", [9, 9])], r["warnings"]
    assert _coverage(r)[1][2] == "absent"


def test_a_nested_def_of_another_name_keeps_the_alias(cli: Cli, small: Small) -> None:
    """The guard: a nested def named otherwise rebinds nothing: `sr(dd, 'weekly')` is still pr/2's call."""
    up = _bound("    sr = send_report\n    def helper(x):\n        return x\n")
    lines, r = _verdicts(cli, small, TWO, _union("    sr(dd, 'weekly')\n", up), up=up)
    assert lines == [], r["warnings"]
    assert _coverage(r)[1][2] == "re-expressed"


IN_HUNK = {
    # bound above in the def, bound again in the union's own hunk before its call
    "above-then-assigned-in-the-hunk": ("    sr = send_report\n", "    sr = make()\n    sr(dd, 'weekly')\n"),
    # bound in the hunk, then bound again there
    "hunk-alias-then-a-lambda": ("", "    sr = send_report\n    sr = lambda *a: None\n    sr(dd, 'weekly')\n"),
    "hunk-alias-then-a-def": ("", "    sr = send_report\n    def sr(a, b):\n        return a\n    sr(dd, 'weekly')\n"),
}


@pytest.mark.parametrize("name", list(IN_HUNK))
def test_a_name_bound_again_in_the_unions_hunk_is_no_alias(cli: Cli, small: Small, name: str) -> None:
    binding, written = IN_HUNK[name]
    up = _bound(binding)
    lines, r = _verdicts(cli, small, TWO, _union(written, up), up=up)
    assert [pr for pr, _lines in lines] == ["pr/2"], r["warnings"]
    assert _coverage(r)[1][2] == "absent"


def test_an_alias_in_the_hunk_alone_still_carries_the_call(cli: Cli, small: Small) -> None:
    """The guard: `sr = send_report` then `sr(dd, 'weekly')`, both in the union's hunk (h235)."""
    lines, r = _verdicts(cli, small, TWO, _union("    sr = send_report\n    sr(dd, 'weekly')\n"))
    assert lines == [], r["warnings"]
