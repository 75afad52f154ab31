"""Where a union had to reconcile its PRs, line by line across their bases (helper-149: on peft, a maintainer
deleted at a union stop a line a PR adds, outside the conflict; `union continue` and sync said nothing and
explain called it re-expressed, because PRs on different bases were compared by def/class alone and the
union's own diff changes every def a PR landed in). Each hunk's base lines are mapped into the union's
base blob; a hunk the union lacks is reconciled where another folded PR's hunk meets it there (in each
def/class it lies in), or a union hunk adding lines of its own does; a file the union deletes that a PR
changes (or keeps, that a PR deletes) is left out unless another PR deletes (changes) it."""

from __future__ import annotations

import pytest

from carrytool.gitlayer.git import Git
from carrytool.pipeline.basemap import BaseMap, meets, span_of
from tests.conftest import Cli, Small

RUN = "import os\n\n\nclass A:\n    def run(self):\n" + "".join(f"        self.v{k} = {k}\n" for k in range(12)) + \
    "\n    def stop(self):\n        return 0\n"
NEWER = RUN.replace("import os\n", "import os\nimport re\nimport sys\n")     # upstream since: every line 2 lower
SNAP = "        self.snap = self.state\n"


def _after(text: str, line: str, added: str) -> str:
    return text.replace(line, line + added, 1)


def _sync(cli: Cli, small: Small, prs: dict[int, tuple[str, dict]], union: dict, *, newer: str = NEWER,
          command: str = "sync") -> dict:
    """Upstream OLD (w.py: RUN), then main NEWER; PRS: number -> (its base, "old" or "new", and its files); a union
    committed by hand on main (UNION: its files) superseding them all: the JSON report of `sync --dry-run` (or
    COMMAND `explain`, whose warnings are sync's)."""
    old = small.up.commit({"w.py": RUN}, "old", parent="main", ref="refs/heads/main")
    new = small.base = small.up.commit({"w.py": newer}, "new", parent=old, ref="refs/heads/main")
    for number, (base, files) in prs.items():
        small.pr(number, files, parent=old if base == "old" else new)
    commit = small.up.commit(union, "union", parent=new, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([*({"pr": n} for n in prs), {"carry": "union", "commit": commit, "supersedes": list(prs)}])
    args = ["-m", small.manifest_path, "--repo", small.work.path] + (["--dry-run"] if command == "sync" else [])
    code, report = cli.json(command, *args)
    assert code == 0, report
    return report


def _absent(report: dict) -> list[tuple[str, str, list[int] | None]]:
    return [(w["entry"], w["file"], w.get("lines")) for w in report["warnings"] if w["kind"] == "provided-absent"]


def _statuses(report: dict, pr: str) -> list[tuple[str, list[int] | None, str]]:
    [cov] = [c for c in report["coverage"] if c["pr"] == pr]
    return [(h["file"], h["lines"], h["status"]) for h in cov["hunks"]]


def test_a_line_deleted_outside_any_conflict_is_warned_though_the_union_changes_its_def(cli: Cli, small: Small
                                                                                         ) -> None:
    # pr/1 (on the old base) adds a line to A.run; pr/2 (on the new one) changes v8 there; the union holds
    # pr/2's change only: its hunk in A.run re-adds a PR's line, no resolution of its own
    two = NEWER.replace("self.v8 = 8", "self.v8 = 80")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [8, 8])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "absent")]


def test_a_line_next_to_another_prs_change_on_another_base_is_reconciled(cli: Cli, small: Small) -> None:
    # pr/1 changes v1 (line 7 of the old base); pr/2 changes v2 (line 10 of the new base): in the union's base
    # they touch, as the fold's merge met them; the union took pr/2's side (an insertion after v1, dropped so,
    # is warned: both could be kept, h213)
    two = NEWER.replace("self.v2 = 2", "self.v2 = 20")
    prs = {1: ("old", {"w.py": RUN.replace("self.v1 = 1", "self.v1 = 11")}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, command="explain")
    assert _absent(report) == []
    assert _statuses(report, "pr/1") == [("w.py", [7, 7], "reconciled")]
    [cov] = [c for c in report["coverage"] if c["pr"] == "pr/1"]
    assert (cov["reconciled"], cov["re_expressed"], cov["absent"]) == (1, 0, 0)
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "carry/union carries pr/1: 0 verbatim, 0 re-expressed, 1 reconciled, 0 absent" in text, text
    assert "reconciled: w.py:7-7 (A.run)" in text, text


def test_the_unions_own_line_where_the_pr_adds_one_reconciles_it(cli: Cli, small: Small) -> None:
    # the union writes its own v1 (a line no PR adds) where pr/1 adds its line: the maintainer's resolution,
    # the PR's change in the union's words (explain: re-expressed, the asserts guarding it listed)
    two = NEWER.replace("self.v8 = 8", "self.v8 = 80")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    union = two.replace("self.v1 = 1", "self.v1 = self.state  # the snapshot, taken once")
    report = _sync(cli, small, prs, {"w.py": union}, command="explain")
    assert _absent(report) == []
    assert _statuses(report, "pr/1") == [("w.py", [8, 8], "re-expressed")]


def test_a_union_hunk_that_only_moves_another_prs_line_there_reconciles_nothing(cli: Cli, small: Small) -> None:
    # pr/2 adds `self.extra = 1` after v3; the union puts it after v1, where pr/1's line goes, and drops pr/1's
    two = _after(NEWER, "        self.v3 = 3\n", "        self.extra = 1\n")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", SNAP)}), 2: ("new", {"w.py": two})}
    union = _after(NEWER, "        self.v1 = 1\n", "        self.extra = 1\n")
    assert _absent(_sync(cli, small, prs, {"w.py": union})) == [("pr/1", "w.py", [8, 8])]


def test_a_hunk_of_two_methods_one_of_which_another_pr_adds_is_not_reconciled_for_the_other(cli: Cli,
                                                                                            small: Small) -> None:
    # pr/1 and pr/2 both add `check` at the end of A, pr/1 with `verify` too; the union took pr/2's side
    check = "\n    def check(self):\n        return {}\n"
    one = NEWER + check.format("True") + "\n    def verify(self):\n        return self.check()\n"
    two = NEWER + check.format("False")
    report = _sync(cli, small, {1: ("new", {"w.py": one}), 2: ("new", {"w.py": two})}, {"w.py": two})
    assert _absent(report) == [("pr/1", "w.py", [23, 28])], report["warnings"]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "w.py:23-28 (A.check, A.verify)" in warning["message"], warning["message"]


def test_a_line_whose_neighbours_upstream_changed_is_judged_at_the_region_its_merge_met(cli: Cli, small: Small
                                                                                         ) -> None:
    # upstream changed v6 since pr/1's base, next to pr/1's line: its place does not map (the fold's merge met
    # upstream there); it stands for that region (its line and upstream's v6), which pr/2's v10 does not meet:
    # the union took no side of theirs, and the line it dropped is lost (h197: the same def "reconciled" it,
    # exit 0; h206: judged at the region, not in pr/1's base)
    newer = NEWER.replace("self.v6 = 6", "self.v6 = 60")
    two = newer.replace("v10 = 10", "v10 = 0")
    prs = {1: ("old", {"w.py": _after(RUN, "        self.v5 = 5\n", SNAP)}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, newer=newer, command="explain")
    assert _absent(report) == [("pr/1", "w.py", [12, 12])], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [12, 12], "absent")]


def test_a_line_whose_neighbours_upstream_changed_falls_back_to_its_def(cli: Cli, small: Small) -> None:
    # pr/1 and pr/2 change v5, and v6, the next line, is upstream's: pr/2's hunk maps into pr/1's base no more
    # than pr/1's into the union's; a PR's hunk in the same def reconciles it, as before (pr/1 inserting after
    # v5 instead, dropped so, is warned: both could be kept, h213; tests/pipeline/test_provided_edges.py)
    newer = NEWER.replace("self.v6 = 6", "self.v6 = 60")
    two = newer.replace("v5 = 5", "v5 = 0")
    prs = {1: ("old", {"w.py": RUN.replace("v5 = 5", "v5 = 55")}), 2: ("new", {"w.py": two})}
    report = _sync(cli, small, prs, {"w.py": two}, newer=newer, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [11, 11], "reconciled")]


# a union's tree and a PR disagreeing on whether a file is there at all (helper-147: pr/3111 moved to delete
# merge_utils.py, the union took the deletion, explain called the other PRs' hunks there re-expressed)
GONE = "def f():\n    return 1\n"


def _files(cli: Cli, small: Small, prs: dict[int, dict], union: dict, drops: list | None = None,
           command: str = "sync") -> dict:
    small.base = small.up.commit({"g.py": GONE, "w.py": RUN}, "g", parent="main", ref="refs/heads/main")
    for number, files in prs.items():
        small.pr(number, files)
    commit = small.up.commit(union, "union", parent=small.base, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    first = {"pr": 1, "drops": drops} if drops else 1
    small.manifest([*({"pr": n} for n in prs),
                    {"carry": "union", "commit": commit, "supersedes": [first, *(n for n in prs if n != 1)]}])
    args = ["-m", small.manifest_path, "--repo", small.work.path] + (["--dry-run"] if command == "sync" else [])
    code, report = cli.json(command, *args)
    assert code == 0, report
    return report


def test_a_file_the_union_deletes_that_a_pr_changes_is_warned_and_its_hint_declares_it(cli: Cli, small: Small
                                                                                        ) -> None:
    prs = {1: {"g.py": GONE + "\n\ndef g():\n    return 2\n"}, 2: {"w.py": RUN.replace("v8 = 8", "v8 = 80")}}
    union = {"g.py": None, "w.py": RUN.replace("v8 = 8", "v8 = 80")}
    report = _files(cli, small, prs, union)
    assert _absent(report) == [("pr/1", "g.py", None)], report["warnings"]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert warning["message"].startswith("carry/union supersedes pr/1 but the composed tree lacks g.py, which pr/1 "
                                         "changes, in no region carry/union reconciled (no other PR it folds deletes "
                                         "that file)"), warning["message"]
    head = small.up.rev("refs/pull/1/head")
    assert f'write its supersedes item as `{{pr: 1, head: {head}, drops: [{{file: g.py, why: "..."}}]}}`' in \
        warning["message"], warning["message"]
    explained = _files(cli, small, prs, union, command="explain")
    assert _statuses(explained, "pr/1") == [("g.py", [3, 6], "absent")]
    # the hint pasted: dropped on purpose, no warning
    report = _files(cli, small, prs, union, [{"file": "g.py", "why": "g moved to w"}])
    assert _absent(report) == [] and [w for w in report["warnings"] if w["kind"] == "stale-drop"] == []
    entry = next(e for e in report["entries"] if e["id"] == "carry/union")
    assert entry["dropped_on_purpose"] == [
        {"pr": 1, "file": "g.py", "lines": None, "scopes": [], "in": None, "why": "g moved to w"}]
    # a drop with `in` covers no whole file: its stale-drop says so, and the drop that covers it
    report = _files(cli, small, prs, union, [{"file": "g.py", "in": "g", "why": "g moved to w"}])
    [stale] = [w for w in report["warnings"] if w["kind"] == "stale-drop"]
    assert "but the union's tree lacks g.py, which pr/1 changes: pr/1's change there is left out whole " \
           "(provided-absent), and a drop with `in` never covers a whole file" in stale["message"], stale["message"]


def test_a_file_the_union_deletes_as_another_pr_does_is_reconciled(cli: Cli, small: Small) -> None:
    prs = {1: {"g.py": GONE + "\n\ndef g():\n    return 2\n"}, 2: {"g.py": None, "w.py": RUN + "\n# f is gone\n"}}
    union = {"g.py": None, "w.py": RUN + "\n# f is gone\n"}
    report = _files(cli, small, prs, union, command="explain")
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("g.py", [3, 6], "reconciled")]


@pytest.mark.parametrize("other", [False, True])
def test_a_file_a_pr_deletes_that_the_union_keeps_is_left_out(cli: Cli, small: Small, other: bool) -> None:
    # pr/1 deletes g.py; the union keeps it, and changes it (its way of pr/2's change, or its own): reconciled
    # where another PR changes that file (a modify/delete conflict), else warned
    prs = {1: {"g.py": None}} | ({2: {"g.py": GONE.replace("1", "2")}} if other else {})
    report = _files(cli, small, prs, {"g.py": GONE.replace("1", "3")})
    if other:
        assert _absent(report) == [], report["warnings"]
    else:
        assert _absent(report) == [("pr/1", "g.py", None)], report["warnings"]
        [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
        assert "the composed tree still has g.py, which pr/1 deletes, in no region carry/union reconciled (no " \
               "other PR it folds changes that file)" in warning["message"], warning["message"]


def test_a_new_module_the_union_holds_is_carried(cli: Cli, small: Small) -> None:
    """A block reaching module level (a module docstring, an import, a def) was looked for within its def only,
    and read lacking from a tip holding it (the demo's pr/45610 pp_utils.py, once a union hunk only putting back
    PR lines no longer reconciled it)."""
    new = '"""Helpers."""\n\nimport os\n\n\ndef helper():\n    return os.sep\n'
    assert _absent(_files(cli, small, {1: {"n.py": new}}, {"n.py": new})) == []


@pytest.mark.parametrize("mode", ["100755", "100644"])
def test_a_mode_change_is_named_a_mode_change(cli: Cli, small: Small, mode: str) -> None:
    """helper-146 on DeepSpeed: a PR's later version set config.py 100755 -> 100644; explain said
    `re-expressed config.py:0` and `lines: [0, 0]`. The union keeps the bit (absent) or clears it too."""
    small.base = small.up.commit({"run.sh": "echo 1\n"}, "script", parent="main", ref="refs/heads/main",
                                 modes={"run.sh": "100755"})
    small.pr(1, {"run.sh": "echo 2\n"})                             # and 100644
    union = small.up.commit({"run.sh": "echo 2\n"}, "union", parent=small.base, ref="refs/heads/union",
                            modes={"run.sh": mode})
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [1]}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    [cov] = report["coverage"]
    status = "absent" if mode == "100755" else "verbatim"
    assert [(h["lines"], h.get("kind"), h["status"]) for h in cov["hunks"]] == \
        [([1, 1], None, "verbatim"), (None, "mode", status)], cov
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "run.sh:0" not in text, text
    assert ("absent: run.sh (mode change)" in text) == (mode == "100755"), text


def test_lines_map_by_offset_and_not_where_the_blobs_differ_at_them_or_next_to_them(small: Small) -> None:
    old = small.up.git("hash-object", "-w", "--stdin", input=RUN.encode())
    new = small.up.git("hash-object", "-w", "--stdin", input=NEWER.replace("self.v6 = 6", "self.v6 = 60").encode())
    with Git(small.up.path) as git:
        mapping = BaseMap(git, [(old, new), (None, new)])
        assert mapping.map(old, new, span_of(7, 1)) == span_of(9, 1)         # v1: 2 lines lower
        assert mapping.map(old, new, span_of(7, 0)) == span_of(9, 0)         # after it
        assert mapping.map(old, new, span_of(11, 1)) is None                 # v5, next to v6
        assert mapping.map(old, new, span_of(12, 1)) is None                 # v6 itself
        assert mapping.map(old, new, span_of(15, 2)) == span_of(17, 2)
        assert mapping.map(old, old, span_of(3, 0)) == span_of(3, 0)
        assert mapping.map(None, new, span_of(0, 0)) is None                 # a file upstream added
    assert meets(span_of(7, 0), span_of(8, 1)) and meets(span_of(7, 0), span_of(7, 1))
    assert not meets(span_of(7, 0), span_of(9, 1)) and not meets(span_of(6, 0), span_of(7, 0))


def test_lines_next_to_upstreams_change_stand_for_the_region_the_folds_conflict_spans(small: Small) -> None:
    # h204's review: a hunk out of the map (upstream changed its lines or the next ones) is the region its merge
    # onto upstream meets as one conflict: its lines and upstream's hunks it meets, in the union's base blob
    old = small.up.git("hash-object", "-w", "--stdin", input=RUN.encode())
    new = small.up.git("hash-object", "-w", "--stdin", input=NEWER.replace("self.v6 = 6", "self.v6 = 60").encode())
    with Git(small.up.path) as git:
        mapping = BaseMap(git, [(old, new)])
        assert mapping.region(old, new, span_of(7, 1)) == span_of(9, 1)      # mapped: as map
        assert mapping.region(old, new, span_of(11, 1)) == span_of(13, 2)    # v5, and v6 next to it
        assert mapping.region(old, new, span_of(12, 1)) == span_of(14, 1)    # v6 itself
        assert mapping.region(old, new, span_of(12, 0)) == span_of(14, 1)    # after v6
        assert mapping.region(old, new, span_of(10, 4)) == span_of(12, 4)    # v4-v7 over v6
        assert mapping.region(old, new, span_of(1, 0)) == (3, 7)             # after line 1: upstream's two lines
    assert not meets(span_of(11, 1), span_of(14, 1)) and meets(span_of(13, 2), span_of(14, 1))


def test_a_hunks_own_lines_widen_over_upstreams_hunks_changing_them_not_those_next_to_them(small: Small) -> None:
    # h206: the lines a hunk out of the map stands at in the union's base blob, when the other PR's hunk it is
    # compared with maps (its base had upstream's edit): upstream's hunks next to it join nothing
    old = small.up.git("hash-object", "-w", "--stdin", input=RUN.encode())
    new = small.up.git("hash-object", "-w", "--stdin", input=NEWER.replace("self.v6 = 6", "self.v6 = 60").encode())
    with Git(small.up.path) as git:
        mapping = BaseMap(git, [(old, new)])
        assert mapping.lines(old, new, span_of(7, 1)) == span_of(9, 1)       # mapped: as map
        assert mapping.lines(old, new, span_of(11, 1)) == span_of(13, 1)     # v5 alone, not v6 next to it
        assert mapping.lines(old, new, span_of(13, 1)) == span_of(15, 1)     # v7 alone
        assert mapping.lines(old, new, span_of(12, 1)) == span_of(14, 1)     # v6 itself: upstream's v6
        assert mapping.lines(old, new, span_of(12, 0)) == span_of(14, 0)     # after v6: the place after it
        assert mapping.lines(old, new, span_of(10, 4)) == span_of(12, 4)     # v4-v7 over v6
        assert mapping.lines(old, new, span_of(1, 0)) == (3, 7)              # after line 1: upstream's two lines
        assert mapping.lines(old, new, span_of(3, 0)) == span_of(5, 0)       # after line 3: 2 lower
