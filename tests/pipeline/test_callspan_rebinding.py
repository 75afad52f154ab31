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
