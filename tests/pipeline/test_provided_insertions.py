"""Insertions against insertions, and mode changes, a union leaves out (helper-158).

Two PRs inserting lines at one place are a conflict to git, but keeping both was possible: a union keeping one
side only, none of the other's lines that say something there, and no line of its own there, dropped the other
(helper-147: on peft, pr/3251's one-line `PeftWarning,` import lost that way, called reconciled, said by nothing
but a later unbound-name check). A mode a PR sets (the executable bit) the union's tree does not have is left out
like a hunk (explain's coverage said `absent`; sync and `union continue` nothing)."""

from __future__ import annotations

from carrytool.pipeline.drops import drop_hint
from carrytool.pipeline.leftout import ABSENT, LeftOut
from tests.conftest import Cli, Small
from tests.pipeline.test_provided_regions import NEWER, RUN, SNAP, _absent, _after, _statuses, _sync

EXTRA = "        self.extra = 1\n"


def test_an_insertion_dropped_for_another_prs_at_the_same_place_is_warned(cli: Cli, small: Small) -> None:
    # pr/1 and pr/2 both insert a line after v1 (pr/1 on the old base); the union keeps pr/2's only
    two = _after(NEWER, "        self.v1 = 1\n", EXTRA)
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [8, 8])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "absent")]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "(another PR it folds inserts lines there too, and both could be kept" in warning["message"], warning


def test_an_insertion_partly_kept_beside_another_prs_is_reconciled(cli: Cli, small: Small) -> None:
    # pr/1 inserts two lines where pr/2 inserts one; the union keeps pr/2's and one of pr/1's: a merge of the two
    one = _after(NEWER, "        self.v1 = 1\n", SNAP + "        self.seen = 0\n")
    two = _after(NEWER, "        self.v1 = 1\n", EXTRA)
    union = _after(NEWER, "        self.v1 = 1\n", EXTRA + SNAP)
    report = _sync(cli, small, {1: ("new", {"w.py": one}), 2: ("new", {"w.py": two})}, {"w.py": union},
                   command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [10, 11], "reconciled")]


def test_an_insertion_where_the_union_writes_its_own_line_is_its_resolution(cli: Cli, small: Small) -> None:
    # the union keeps pr/2's line and writes one of its own there: its words for pr/1's change (re-expressed)
    two = _after(NEWER, "        self.v1 = 1\n", EXTRA)
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    union = _after(NEWER, "        self.v1 = 1\n", EXTRA + "        self.snapshot = dict(self.state)\n")
    report = _sync(cli, small, prs, {"w.py": union}, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "re-expressed")]


def test_an_insertion_where_another_pr_changes_the_line_before_is_warned(cli: Cli, small: Small) -> None:
    # pr/2 changes v1 itself, right before pr/1's insertion: keeping both was possible too, the union kept pr/2's
    # line alone (h213: this was called reconciled; tests/pipeline/test_provided_edges.py)
    two = NEWER.replace("self.v1 = 1", "self.v1 = 10")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [8, 8])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "absent")]


def _modes(cli: Cli, small: Small, union_mode: str, **extra: object) -> dict:
    """pr/1 makes w.py executable and changes v1, pr/2 changes v8; the union (W.PY at UNION_MODE) holds both
    changes: the `sync --dry-run` report (EXTRA: the union item's supersedes item for pr/1)."""
    base = small.up.commit({"w.py": RUN}, "base", parent="main", ref="refs/heads/main")
    small.base = base
    one, two = RUN.replace("self.v1 = 1", "self.v1 = 10"), RUN.replace("self.v8 = 8", "self.v8 = 80")
    small.up.commit({"w.py": one}, "pr 1", parent=base, ref="refs/pull/1/head", modes={"w.py": "100755"})
    small.pr(2, {"w.py": two}, parent=base)
    both = one.replace("self.v8 = 8", "self.v8 = 80")
    commit = small.up.commit({"w.py": both}, "union", parent=base, ref="refs/heads/union", modes={"w.py": union_mode})
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit,
                                          "supersedes": [{"pr": 1, **extra} if extra else 1, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    return report


def test_a_mode_change_the_union_leaves_out_is_warned(cli: Cli, small: Small) -> None:
    report = _modes(cli, small, "100644")
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert (warning["entry"], warning["file"], warning.get("lines"), warning.get("mode")) == \
        ("pr/1", "w.py", None, "100755"), warning
    assert "lacks its mode change of w.py (to 100755)" in warning["message"], warning["message"]
    assert "{file: w.py, why: \"...\"}" in warning["message"], warning["message"]


def test_a_mode_change_the_union_keeps_is_no_warning(cli: Cli, small: Small) -> None:
    report = _modes(cli, small, "100755")
    assert [w for w in report["warnings"] if w["kind"] == "provided-absent"] == []


def test_a_mode_change_dropped_on_purpose_is_accounted(cli: Cli, small: Small) -> None:
    report = _modes(cli, small, "100644", drops=[{"file": "w.py", "why": "no script"}])
    assert [w for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")] == []
    [union] = [e for e in report["entries"] if e["id"] == "carry/union"]
    assert [(d["pr"], d["file"], d["why"]) for d in union["dropped_on_purpose"]] == [(1, "w.py", "no script")]


def test_a_mode_drop_hint_names_the_file_without_in() -> None:
    lost = LeftOut("pr/1", "bin/run.py", None, (), True, "abc", ABSENT, whole="mode", mode="100755")
    assert lost.lacking("its") == "lacks its mode change of bin/run.py (to 100755)"
    assert drop_hint(lost, ()) == 'write its supersedes item as `{pr: 1, head: abc, drops: [{file: bin/run.py, ' \
        'why: "..."}]}`'


def test_explain_keeps_the_other_hunks_of_a_file_whose_mode_is_left_out(cli: Cli, small: Small) -> None:
    # the warning names no lines: it must not make pr/1's carried hunk in w.py absent too
    _modes(cli, small, "100644")
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    [cov] = [c for c in report["coverage"] if c["pr"] == "pr/1"]
    assert sorted((h.get("kind", "text"), h["status"]) for h in cov["hunks"]) == [("mode", "absent"),
                                                                                  ("text", "verbatim")]
