"""A PR's change of an argument on a continuation line of a call written over lines (h257's review; session 50).

pr/1 changes `        1,` to `        2,` inside `x = send(\\n        a,\\n        1,\\n    )`; upstream edited the
call's closing line since (`    ) or 0`), so the union, made on upstream's, writes the lines in its own words. A union
keeping `1,` read as pr/1's line re-expressed, exit 0: the line `2,` does nothing alone (no call, no assignment,
no keyword: lineroles.roles_of), so nothing was asked of the union for it. Now such a line is the change of the
call it continues (callspan.openers): that call's first line, read whole with its arguments as the PR's base had
them and as it makes them, must be carried by a line of the union's, which is itself read whole where its lines
continue a call opened above them (carried._continued, _continuing). So is a PR's deletion of an argument's line."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import git  # noqa: F401 (a fixture: both gits)
from tests.pipeline.test_provided_regions import _statuses
from tests.pipeline.test_provided_repeats import _absent, _run

F = ("import os\n\n\ndef f(a, d, e):\n    b = 1\n    x = send(\n        a,\n        ARG\n    )\n    y = 2\n"
     "    return x\n\n\ndef g(b):\n    return b\n")

CASES = {
    # the base's argument line, pr/1's, the union's own (its `a,` line, then the argument's), whether it carries pr/1
    "a-value-kept": ("1,", "2,", ("a,", "1,"), False),
    "a-value-changed": ("1,", "2,", ("a,", "2,"), True),
    "a-value-kept-renamed": ("1,", "2,", ("aa,", "1,"), False),
    "a-value-changed-renamed": ("1,", "2,", ("aa,", "2,"), True),
    "a-third-value": ("1,", "2,", ("a,", "3,"), False),
    "a-name-kept": ("mode,", "other,", ("a,", "mode,"), False),
    "a-name-changed": ("mode,", "other,", ("a,", "other,"), True),
    "a-keyword-kept": ("mode='fast',", "mode='safe',", ("a,", "mode='fast',"), False),
    "a-keyword-changed": ("mode='fast',", "mode='safe',", ("a,", "mode='safe',"), True),
    "a-call-kept": ("fast(),", "slow(),", ("a,", "fast(),"), False),
    "a-call-changed": ("fast(),", "slow(),", ("a,", "slow(),"), True),
    "an-argument-deleted-kept": ("1,", "", ("a,", "1,"), False),
    "an-argument-deleted": ("1,", "", ("a,", ""), True),
}


def _texts(name: str, tail: str = "    ) or fb(a)\n") -> tuple[str, str, str, str, str]:
    """base, pr/1's, pr/2's (apart, in g), upstream's and the union's m.py for CASES[NAME]."""
    base_arg, pr_arg, (first, arg), _carried = CASES[name]
    base = F.replace("ARG", base_arg)
    one = F.replace("        ARG\n", f"        {pr_arg}\n" if pr_arg else "")
    up = base.replace("    )\n    y", "    ) or 0\n    y")
    own = f"        {first}\n" + (f"        {arg}\n" if arg else "") + tail
    union = F.replace("        a,\n        ARG\n    )\n", own)
    return base, one, base.replace("    return b\n", "    return b + 1\n"), up, \
        union.replace("    return b\n", "    return b + 1\n")


@pytest.mark.parametrize("name", list(CASES))
def test_a_unions_call_keeping_an_argument_a_pr_changes_on_its_own_line_is_no_form_of_it(cli: Cli, small: Small,
                                                                                        name: str) -> None:
    base, one, two, up, union = _texts(name)
    report = _run(cli, small, one, two, union, base=base, up=up, command="explain")
    line = [7, 7] if "deleted" in name else [8, 8]
    carried = CASES[name][3]
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", line)]), \
        report["warnings"]
    # carried: the union's tree has pr/1's line as it wrote it
    assert _statuses(report, "pr/1") == [("m.py", line, "verbatim" if carried else "absent")]


def test_sync_says_which_argument_the_union_kept_on_both_gits(cli: Cli, small: Small, git: str) -> None:  # noqa: F811
    base, one, two, up, union = _texts("a-value-kept")
    [(entry, lines, message)] = _absent(_run(cli, small, one, two, union, base=base, up=up))
    assert (entry, lines) == ("pr/1", [8, 8]), message
    assert "lacks line 8 of its hunk m.py:8 (f)" in message, message
    assert "its line m.py:6 `x = send(` is no form of it: it passes send argument 2 as it was (`1`), not as the PR " \
        "makes it (`2`)" in message, message


def test_upstreams_change_of_the_same_argument_lets_a_third_value_reconcile_both(cli: Cli, small: Small) -> None:
    # h259's rule on a continuation line: upstream makes the argument 5, the PR 2, the union 3 (its reconciliation)
    base, one, two, _up, union = _texts("a-third-value")
    up = base.replace("        1,\n    )\n", "        5,\n    ) or 0\n")
    report = _run(cli, small, one, two, union, base=base, up=up, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("m.py", [8, 8], "re-expressed")]


def test_another_prs_change_of_the_same_argument_lets_a_third_value_reconcile_both(cli: Cli, small: Small) -> None:
    # so where pr/2 makes it 5 (the union's own words for both: 3), read on pr/2's continuation line too
    base, one, _two, up, union = _texts("a-third-value")
    two = base.replace("        1,\n", "        5,\n")
    report = _run(cli, small, one, two, union.replace("    return b + 1\n", "    return b\n"), base=base, up=up,
                  command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("m.py", [8, 8], "re-expressed")]
    assert _statuses(report, "pr/2") == [("m.py", [8, 8], "re-expressed")]


def test_a_union_writing_the_whole_call_on_one_line_is_read_as_it_was(cli: Cli, small: Small) -> None:
    # the union's own `x = send(a, 1) or fb(a)` in place of the four lines: its line read alone, as before
    for value, carried in (("1", False), ("2", True)):
        base, one, two, up, _union = _texts("a-value-kept")
        whole = "    x = send(\n        a,\n        1,\n    ) or 0\n"
        union = up.replace(whole, f"    x = send(a, {value}) or fb(a)\n").replace("    return b\n", "    return b + 1\n")
        report = _run(cli, small, one, two, union, base=base, up=up, command="explain")
        assert bool(_absent(report)) is not carried, (value, report["warnings"])


@pytest.mark.parametrize(("own", "carried"), [
    ("        a, mode='fast',\n", False),
    ("        a,\n        mode='fast',  # the union's words\n", False),
    ("        mode='fast', a=a,\n", False),
    ("        a, mode='safe',\n", True),
    ("        a,\n        mode='safe',  # the union's words\n", True),
], ids=["kept-on-a-line-of-two", "kept-with-a-comment", "kept-by-keyword", "changed-on-a-line-of-two",
        "changed-with-a-comment"])
def test_a_keyword_argument_line_the_union_writes_its_own_way_is_that_calls_change(cli: Cli, small: Small,
                                                                                 own: str, carried: bool) -> None:
    # h264's review: `mode='safe',` does something alone (its keyword), so it was read alone: the union's own line
    # `a, mode='fast',` names that keyword and carried it, exit 0; now it is also the change of the call it continues
    base, one, two, up, _union = _texts("a-keyword-kept")
    union = up.replace("        a,\n        mode='fast',\n    ) or 0\n", own + "    ) or fb(a)\n").replace(
        "    return b\n", "    return b + 1\n")
    report = _run(cli, small, one, two, union, base=base, up=up, command="explain")
    absent = _absent(report)
    assert [(pr, lines) for pr, lines, _m in absent] == ([] if carried else [("pr/1", [8, 8])]), report["warnings"]
    if not carried:
        assert "passes send mode as it was (`'fast'`), not as the PR makes it (`'safe'`)" in absent[0][2], absent


def test_a_call_argument_line_kept_is_named_by_its_own_call_first(cli: Cli, small: Small) -> None:
    # pr/1 makes the argument `audit(a),` `audit(a, 1),`; the union keeps `audit(a),`: the warning names the union's
    # line and audit's arguments (the line read alone), as before the line was also read as send's change (h264)
    base, one, two, up, _union = _texts("a-call-kept")
    base, one, two, up = (text.replace("fast(),", "audit(a),") for text in (base, one.replace("slow(),", "audit(a, 1),"),
                                                                              two, up))
    union = up.replace("        audit(a),\n    ) or 0\n", "        audit(a),  # the union's words\n    ) or fb(a)\n").replace(
        "    return b\n", "    return b + 1\n")
    [(entry, lines, message)] = _absent(_run(cli, small, one, two, union, base=base, up=up, command="explain"))
    assert (entry, lines) == ("pr/1", [8, 8]), message
    assert "its line m.py:8 `audit(a),  # the union's words` is no form of it: it passes audit 1 argument, not 2" \
        in message, message
