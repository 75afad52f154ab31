"""An insertion against a replacement next to it, a union leaves out (h213 found, h218).

pr/1 only inserts `audit(b)` after `b = 2`; pr/2 replaces `b = 2` by `b = clamp(2)`. git's merge meets them as
one conflict, but keeping both (`b = clamp(2)`, then `audit(b)`) was possible: a union keeping pr/2's line and
none of pr/1's dropped pr/1's change, and sync said nothing (explain: `reconciled`). So too the other way round
(the union keeps the insertion and the replaced line as it was). Still reconciled: an insertion inside the lines
another PR replaces, or next to a line another PR deletes."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_regions import NEWER, RUN, SNAP, _absent, _after, _statuses, _sync
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_continue_checks import _warnings
from tests.union.test_union_left_out import _take_theirs

V1 = "        self.v1 = 1\n"
TEN = NEWER.replace("self.v1 = 1", "self.v1 = 10")


def _message(report: dict) -> str:
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    return warning["message"]


def test_an_insertion_dropped_after_another_prs_replacement_is_warned(cli: Cli, small: Small) -> None:
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": TEN})}
    report = _sync(cli, small, prs, {"w.py": TEN}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [8, 8])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "absent")]
    assert "both could be kept: pr/2 changes the lines next to it in the same conflict" in _message(report)
    assert _absent(_sync(cli, small, prs, {"w.py": TEN})) == [("pr/1", "w.py", [8, 8])]     # sync says it too


def test_an_insertion_dropped_before_another_prs_replacement_is_warned(cli: Cli, small: Small) -> None:
    two = NEWER.replace("self.v2 = 2", "self.v2 = 20")
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [8, 8])], report["warnings"]


def test_an_insertion_out_of_the_map_dropped_after_another_prs_replacement_is_warned(cli: Cli, small: Small
                                                                                      ) -> None:
    # upstream changed v6, the line after pr/1's insertion, since pr/1 branched: its region spans v6 too, met
    # by pr/2's `v5 = 0` at its edge only
    newer = NEWER.replace("self.v6 = 6", "self.v6 = 60")
    two = newer.replace("v5 = 5", "v5 = 0")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v5 = 5\n", SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, newer=newer, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [12, 12])], report["warnings"]
    assert "both could be kept: pr/2 changes the lines next to it" in _message(report)


def test_an_insertion_kept_beside_the_replacement_is_no_warning(cli: Cli, small: Small) -> None:
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": TEN})}
    report = _sync(cli, small, prs, {"w.py": _after(TEN, "        self.v1 = 10\n", SNAP)}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "verbatim")]


def test_an_insertion_the_unions_merged_line_carries_is_re_expressed(cli: Cli, small: Small) -> None:
    # the union's line bears pr/1's new word `state`: pr/1's change in its words, with pr/2's
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": TEN})}
    union = NEWER.replace("self.v1 = 1", "self.v1 = keep(10, self.state)")
    report = _sync(cli, small, prs, {"w.py": union}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "re-expressed")]


def test_an_insertion_inside_another_prs_replacement_stays_reconciled(cli: Cli, small: Small) -> None:
    # pr/2 replaces v1 and v2, between which pr/1 inserts: its place is gone, the union had to choose
    two = TEN.replace("self.v2 = 2", "self.v2 = 20")
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "reconciled")]


def test_an_insertion_next_to_a_line_another_pr_deletes_stays_reconciled(cli: Cli, small: Small) -> None:
    # the line it follows is gone: whether it still means anything there was the union's to decide
    two = NEWER.replace(V1, "")
    prs = {1: ("old", {"w.py": _after(RUN, V1, SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "reconciled")]


def test_a_replacement_dropped_beside_another_prs_insertion_is_warned(cli: Cli, small: Small) -> None:
    # the other way round: the union keeps pr/2's insertion and v1 as it was, none of pr/1's `v1 = 10`
    two = _after(NEWER, V1, SNAP)
    prs = {1: ("old", {"w.py": RUN.replace("self.v1 = 1", "self.v1 = 10")}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [7, 7])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [7, 7], "absent")]
    assert "both could be kept: pr/2 inserts lines next to it in the same conflict" in _message(report)


def test_a_replacement_the_union_rewrites_beside_the_insertion_is_its_own(cli: Cli, small: Small) -> None:
    two = _after(NEWER, V1, SNAP)
    prs = {1: ("old", {"w.py": RUN.replace("self.v1 = 1", "self.v1 = 10")}), 2: ("new", {"w.py": two})}
    union = _after(NEWER, V1, SNAP).replace("self.v1 = 1", "self.v1 = limit(10)")
    report = _sync(cli, small, prs, {"w.py": union}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [7, 7], "re-expressed")]


F = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n"


def test_continue_says_the_insertion_a_stop_resolved_to_the_replacement_dropped(cli: Cli, tmp_path: Path) -> None:
    prs = TwoPrs(tmp_path, {"m.py": F}, {"m.py": F.replace("    b = 2\n", "    b = 2\n    audit(b)\n")},
                 {"m.py": F.replace("b = 2", "b = clamp(2)")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _take_theirs(prs.scratch / "m.py")
    assert "audit" not in (prs.scratch / "m.py").read_text()
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output
    [lost] = _warnings(result.stderr)
    assert "the union lacks pr/1's hunk m.py:4 (f), in no region it reconciled (another PR it folds changes the " \
        "lines next to it, and both could be kept" in lost and "sync will warn provided-absent" in lost, lost
    code, report = cli.json("sync", *prs.args())
    assert code == 0, report.get("error")
    assert _absent(report) == [("pr/1", "m.py", [4, 4])], report["warnings"]
