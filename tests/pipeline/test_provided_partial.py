"""What a union lacks of a hunk it otherwise holds, why it says a hunk is left out, and what a stale fold lost
(helper-159's celery trial).

A hunk two thirds of whose lines stand was `re-expressed` whatever the rest: a statement the maintainer deleted
at a union stop, outside the conflict (`req.task.acks_late = True` of #10463's test), passed `union continue`
and sync with exit 0, and only explain named it. Its missing lines are judged as a missing hunk is
(pipeline.regions): left out unless another folded PR's hunk, or one of the union's own writing lines of its
own, meets it. An insertion dropped beside another PR's in other defs was said to meet no other PR's lines;
and a hunk a PR gained after the union's fold was guessed "dropped at a stop of the fold"."""

from __future__ import annotations

from pathlib import Path

from carrytool.pipeline.leftout import ABSENT, LeftOut
from tests.conftest import Cli, Small
from tests.gitrepo import init_repo, write_manifest
from tests.pipeline.test_provided_regions import NEWER, RUN, _absent, _after, _statuses, _sync
from tests.union.test_union_left_out import _take_theirs

# three statements pr/1 adds after v1 (lines 8-10 of its head); the union keeps the first and the last
THREE = "        self.snap = self.state\n        self.acks_late = True\n        self.log(self.snap)\n"
KEPT = "        self.snap = self.state\n        self.log(self.snap)\n"


def _three(small: Small, cli: Cli, union: str, *, two: str | None = None, **extra: object) -> dict:
    """pr/1 (on the old base) adds THREE after v1; pr/2 (on the new one) changes v8, or TWO; the union holds
    UNION (w.py): `explain`'s JSON report (EXTRA: pr/1's supersedes item)."""
    if not extra:
        prs = {1: ("old", {"w.py": _after(RUN, "        self.v1 = 1\n", THREE)}),
               2: ("new", {"w.py": two or NEWER.replace("self.v8 = 8", "self.v8 = 80")})}
        return _sync(cli, small, prs, {"w.py": union}, command="explain")
    old = small.up.commit({"w.py": RUN}, "old", parent="main", ref="refs/heads/main")
    new = small.base = small.up.commit({"w.py": NEWER}, "new", parent=old, ref="refs/heads/main")
    small.pr(1, {"w.py": _after(RUN, "        self.v1 = 1\n", THREE)}, parent=old)
    small.pr(2, {"w.py": NEWER.replace("self.v8 = 8", "self.v8 = 80")}, parent=new)
    commit = small.up.commit({"w.py": union}, "union", parent=new, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [{"pr": 1, **extra}, 2]}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    return report


def test_a_statement_deleted_from_a_hunk_otherwise_there_is_warned(cli: Cli, small: Small) -> None:
    union = _after(NEWER, "        self.v1 = 1\n", KEPT).replace("self.v8 = 8", "self.v8 = 80")
    report = _three(small, cli, union)
    assert _absent(report) == [("pr/1", "w.py", [8, 10])], report["warnings"]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "the composed tree lacks line 9 of its hunk w.py:8-10 (A.run), in no region carry/union reconciled " \
        "(no other PR it folds changes those lines" in warning["message"], warning["message"]
    # explain's coverage says what sync does (it read `re-expressed`, exit 0)
    assert _statuses(report, "pr/1") == [("w.py", [8, 10], "absent")]


def test_a_statement_the_union_rewrites_in_its_own_words_stays_re_expressed(cli: Cli, small: Small) -> None:
    union = _after(NEWER, "        self.v1 = 1\n", KEPT.replace("        self.log", "        self.acks = 'late'\n"
                                                                  "        self.log")).replace("= 8", "= 80")
    report = _three(small, cli, union)
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 10], "re-expressed")]


def test_a_statement_lost_where_another_pr_changes_the_lines_stays_re_expressed(cli: Cli, small: Small) -> None:
    # pr/2 changes v1, next to pr/1's insertion: the fold's conflict, the union's mix of the two sides
    two = NEWER.replace("self.v1 = 1", "self.v1 = 10")
    union = _after(two, "        self.v1 = 10\n", KEPT)
    report = _three(small, cli, union, two=two)
    assert _absent(report) == [], report["warnings"]
    assert _statuses(report, "pr/1") == [("w.py", [8, 10], "re-expressed")]


def test_a_statement_deleted_on_purpose_is_dropped(cli: Cli, small: Small) -> None:
    union = _after(NEWER, "        self.v1 = 1\n", KEPT).replace("self.v8 = 8", "self.v8 = 80")
    report = _three(small, cli, union, drops=[{"file": "w.py", "in": "A.run", "why": "acks stay early"}])
    assert [w for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")] == []
    [union_entry] = [e for e in report["entries"] if e["id"] == "carry/union"]
    assert [(d["pr"], d["lines"], d["why"]) for d in union_entry["dropped_on_purpose"]] == \
        [(1, [8, 10], "acks stay early")]


TEST = ("def test_on_failure(self):\n    req = self.get_request()\n    req.on_failure(None)\n\n\n"
        "def test_other():\n    x = 1\n    assert x\n")


def test_union_continue_says_a_statement_deleted_outside_the_conflict(cli: Cli, tmp_path: Path) -> None:
    """The trial's repro 01 in small: pr/1 and pr/2 conflict in m.py; pr/1 also adds three statements to a test in
    t.py, one of which the maintainer deleted at the stop. `union continue` and sync said nothing."""
    up = init_repo(tmp_path / "up")
    base = up.commit({"m.py": "def f():\n    return 1\n", "t.py": TEST}, "base", ref="refs/heads/main")
    test = TEST.replace("    req = self.get_request()\n", "    req = self.get_request()\n"
                        "    req.task.acks_late = True\n    req.task.retries = 0\n    req.task.seen = []\n")
    up.commit({"m.py": "def f():\n    return 2\n", "t.py": test}, "pr 1", parent=base, ref="refs/pull/1/head")
    up.commit({"m.py": "def f():\n    return 3\n"}, "pr 2", parent=base, ref="refs/pull/2/head")
    work = init_repo(tmp_path / "work", bare=True).path
    manifest = write_manifest(tmp_path / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": 1}, {"pr": 2}, {"carry": "u", "patch": "unions/u.patch", "supersedes": [1, 2]}]})
    args = ["-m", str(manifest), "--repo", str(work)]
    assert cli("union", "compose", "u", *args).exit_code == 3
    tree = work / "carrytool" / "union" / "u" / "tree"
    _take_theirs(tree / "m.py")
    (tree / "t.py").write_text((tree / "t.py").read_text().replace("    req.task.acks_late = True\n", ""))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks line 3 of pr/1's hunk t.py:3-5 (test_on_failure), in no region it " \
        "reconciled" in out, out
    assert "deleted at a stop?" in out, out
    code, report = cli.json("sync", *args, "--dry-run")
    assert code == 0, report
    assert _absent(report) == [("pr/1", "t.py", [3, 5])], report["warnings"]


MODULE = "import os\n\nLIMIT = 1\n\n\ndef main():\n    return LIMIT\n"
INT_ENV = ("\n\ndef _int_env(name, default):\n    try:\n        return int(os.environ[name])\n"
           "    except (KeyError, ValueError):\n        return default\n")
GET_INT = ("\n\ndef _get_int(name, default):\n    value = os.environ.get(name)\n    try:\n        return int(value)\n"
           "    except (TypeError, ValueError):\n        return default\n")


def test_an_insertion_dropped_beside_another_prs_in_other_defs_says_so(cli: Cli, small: Small) -> None:
    """The trial's repro 02 in small: pr/1 and pr/2 each insert a helper after LIMIT (two lines alike); the union
    keeps pr/2's. Sync said no other PR changes those lines, though pr/2 inserts at that very place."""
    base = small.base = small.up.commit({"m.py": MODULE}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": _after(MODULE, "LIMIT = 1\n", INT_ENV)}, parent=base)
    two = _after(MODULE, "LIMIT = 1\n", GET_INT)
    small.pr(2, {"m.py": two}, parent=base)
    commit = small.up.commit({"m.py": two}, "union", parent=base, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert (warning["entry"], warning["lines"]) == ("pr/1", [6, 12]), warning
    assert "no other PR it folds changes" not in warning["message"], warning["message"]
    assert "(another PR it folds inserts lines there too, and both could be kept: pr/2 inserts in the same " \
        "conflict, and the union does not keep this hunk there nor write lines of its own for it)" in \
        warning["message"], \
        warning["message"]


def test_a_hunk_a_pr_gained_after_a_stale_fold_points_at_the_refold(cli: Cli, small: Small) -> None:
    # the union folded pr/1 at FOLDED (v1 changed); pr/1 then changed v10 too: the union lacks that hunk
    base = small.base = small.up.commit({"w.py": RUN}, "base", parent="main", ref="refs/heads/main")
    one = RUN.replace("self.v1 = 1", "self.v1 = 10")
    folded = small.pr(1, {"w.py": one}, parent=base)
    small.pr(1, {"w.py": one.replace("self.v10 = 10", "self.v10 = 100")}, parent=folded)
    small.pr(2, {"w.py": RUN.replace("self.v5 = 5", "self.v5 = 50")}, parent=base)
    union = one.replace("self.v5 = 5", "self.v5 = 50")
    commit = small.up.commit({"w.py": union}, "union", parent=base, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit,
                                          "supersedes": [{"pr": 1, "head": folded}, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    assert [w["kind"] for w in report["warnings"]] == ["stale-fold", "provided-absent"], report["warnings"]
    message = report["warnings"][1]["message"]
    assert report["warnings"][1]["lines"] == [16, 16], report["warnings"]
    assert "dropped at a stop" not in message, message
    assert message.endswith(f": not in pr/1's head carry/union folded ({folded[:12]}): the PR moved since "
                            "(stale-fold); refold the union (`carrytool union compose union`)"), message


def test_a_hunk_the_stale_fold_had_is_still_guessed_dropped_at_a_stop(cli: Cli, small: Small) -> None:
    # pr/1 moved (a line elsewhere), but the hunk the union lacks, v1's, was in the head it folded
    base = small.base = small.up.commit({"w.py": RUN}, "base", parent="main", ref="refs/heads/main")
    one = RUN.replace("self.v1 = 1", "self.v1 = 10")
    folded = small.pr(1, {"w.py": one}, parent=base)
    small.pr(1, {"w.py": one.replace("self.v10 = 10", "self.v10 = 100")}, parent=folded)
    small.pr(2, {"w.py": RUN.replace("self.v5 = 5", "self.v5 = 50")}, parent=base)
    union = RUN.replace("self.v5 = 5", "self.v5 = 50").replace("self.v10 = 10", "self.v10 = 100")
    commit = small.up.commit({"w.py": union}, "union", parent=base, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit,
                                          "supersedes": [{"pr": 1, "head": folded}, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert warning["lines"] == [7, 7] and "dropped at a stop of the fold?" in warning["message"], warning


def test_the_clause_names_the_lines_a_hunk_lacks() -> None:
    lost = LeftOut("pr/1", "t.py", (3, 9), ("T.test",), False, "abc", ABSENT, missing=(3, 5, 6))
    assert lost.lacking() == "lacks lines 3, 5-6 of pr/1's hunk t.py:3-9 (T.test)"
    assert LeftOut("pr/1", "t.py", (3, 9), (), False, how=ABSENT, missing=(4,)).lacking("its") == \
        "lacks line 4 of its hunk t.py:3-9"
