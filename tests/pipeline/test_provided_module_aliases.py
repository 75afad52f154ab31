"""A PR's call at module level through a name bound at module level (h259): `sr = send_report` at the top, then
`sr(a, b)` at the top too, not inside a def. h255 read module-level names for calls inside a def only
(callspan.bindings_before returned none at module level), so the union's `send_report(a, b)` for a PR's
`sr(a, b)` there was another call (warned dropped), and its `sr(a, b)` for the PR's
`send_report(a, b)` too. At module level only the names bound above the call count: a binding below it
runs after it."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_repeats import _absent, _run

M = "import os\n\nsr = send_report\na = 1\nb = 2\n\n\ndef g(x):\n    return x\n"
TWO = M.replace("    return x\n", "    return x + 1\n")        # pr/2, apart

CASES = {
    # pr/1's line after `b = 2`, the union's there, whether it carries pr/1's
    "theirs-through-the-alias": ("sr(a, b)\n", "send_report(a, b)\n", True),
    "mine-through-the-alias": ("send_report(a, b)\n", "sr(a, b)\n", True),
    "mine-through-the-alias-dropping-an-argument": ("send_report(a, b)\n", "sr(a)\n", False),
    "mine-through-another-name": ("send_report(a, b)\n", "log(a, b)\n", False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_module_level_call_through_a_module_level_alias_is_the_prs_call(cli: Cli, small: Small, name: str) -> None:
    theirs, mine, carried = CASES[name]
    one = M.replace("b = 2\n", "b = 2\n" + theirs)
    union = M.replace("b = 2\n", "b = 2\n" + mine).replace("    return x\n", "    return x + 1\n")
    report = _run(cli, small, one, TWO, union, base=M, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [6, 6])]), \
        report["warnings"]


def test_a_name_bound_below_a_module_level_call_is_no_alias_of_it(cli: Cli, small: Small) -> None:
    """At module level a binding runs in order: `sr = send_report` at the end of the file binds it after the union's
    `sr(a, b)` at the top, which then calls something else (a def's body, run later, sees it: test_provided_aliases).
    (A guard: before h259 no name was read at module level at all.)"""
    base = M.replace("sr = send_report\n", "") + "\n\nsr = send_report\n"
    one = base.replace("b = 2\n", "b = 2\nsend_report(a, b)\n")
    union = base.replace("b = 2\n", "b = 2\nsr(a, b)\n").replace("    return x\n", "    return x + 1\n")
    two = base.replace("    return x\n", "    return x + 1\n")
    report = _run(cli, small, one, two, union, base=base, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == [("pr/1", [5, 5])], report["warnings"]
