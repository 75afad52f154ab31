"""`carrytool sync` on real repositories: every status, reason and exit code of the contract."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo

A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}
A_THREE = {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n"}
B_TEN = {"b.py": "x = 10\ny = 2\nz = 3\n"}


def sync(cli: Cli, small: Small, *args: str, env: dict | None = None) -> tuple[int, dict]:
    return cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, *args, env=env)


def by_id(report: dict) -> dict[str, dict]:
    return {e["id"]: e for e in report["entries"]}


def test_applies_each_entry_as_one_commit(cli: Cli, small: Small, report_schema: dict) -> None:
    small.pr(1, A_TWO)
    small.pr(3, B_TEN)
    small.manifest([{"pr": 1, "title": "f returns 2"}, {"pr": 3}])
    code, report = sync(cli, small)
    assert code == 0 and report["ok"] is True
    jsonschema.validate(report, report_schema)
    entries = by_id(report)
    assert entries["pr/1"]["status"] == "applied" and entries["pr/1"]["files"] == ["a.py"]
    assert entries["pr/1"]["base"] == small.base and entries["pr/1"]["head"] == small.up.rev("refs/pull/1/head")
    tip = report["result"]["sha"]
    assert report["result"] == {"branch": "dev", "sha": tip, "previous": None, "updated": True}
    assert small.branch() == tip
    log = small.work.git("log", "--format=%s", "dev").splitlines()
    assert log == ["carry: pr/3", "carry: pr/1 f returns 2", "base"]
    message = small.work.git("log", "-1", "--format=%B", entries["pr/1"]["commit"])
    assert f"Carry-Entry: pr/1\nCarry-Head: {entries['pr/1']['head']}\nCarry-Base: {small.base}" in message
    assert small.work.git("show", "dev:a.py").startswith("def f():\n    return 2")
    assert small.work.git("show", "dev:b.py").startswith("x = 10")
    # the exact SHA: fixed identity and dates derived from the inputs
    assert small.work.git("log", "-1", "--format=%an <%ae> %at %cn %ct", "dev") == \
        f"carrytool <carrytool@localhost> {small.up.clock} carrytool {small.up.clock}"


def test_second_run_is_a_noop_with_the_same_sha(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    _, first = sync(cli, small)
    code, second = sync(cli, small)
    assert code == 0 and second["result"]["sha"] == first["result"]["sha"]
    assert second["result"]["updated"] is False and second["result"]["previous"] == first["result"]["sha"]


def test_same_result_in_other_repos_time_zones_and_hostile_git_env(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2}], identity={"name": "bot", "email": "bot@example.com"})
    _, first = sync(cli, small)
    other = init_repo(tmp_path / "other", bare=False)
    hostile = {"TZ": "Pacific/Chatham", "GIT_AUTHOR_NAME": "evil", "GIT_COMMITTER_EMAIL": "evil@x",
               "GIT_AUTHOR_DATE": "2001-01-01T00:00:00", "GIT_COMMITTER_DATE": "2002-02-02T00:00:00",
               "GIT_DIR": str(tmp_path / "nowhere"), "GIT_WORK_TREE": "/", "GIT_INDEX_FILE": "/tmp/idx",
               "GIT_CONFIG_PARAMETERS": "'merge.conflictstyle'='diff3' 'diff.algorithm'='patience'",
               "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "commit.gpgsign", "GIT_CONFIG_VALUE_0": "true",
               "GIT_OBJECT_DIRECTORY": str(tmp_path / "objs")}
    code, second = cli.json("sync", "-m", small.manifest_path, "--repo", other.path, env=hostile)
    assert code == 0
    assert second["result"]["sha"] == first["result"]["sha"]
    assert not (tmp_path / "objs").exists()


def test_disabled_superseded_partial_precompiled_and_merged_upstream(cli: Cli, small: Small,
                                                                    report_schema: dict) -> None:
    small.pr(1, A_TWO)                                         # superseded by the union
    small.pr(2, {"csrc/k.cu": "// faster kernel\n"})            # precompiled
    small.pr(4, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"})   # partial: b.py from the union
    small.pr(5, {"docs/c.txt": "c\n"})                          # an empty PR
    squash = small.pr(6, {"docs/new.txt": "new\n"})
    small.pr(7, B_TEN)                                          # disabled
    merged_tip = small.up.commit({"docs/new.txt": "new\n"}, "upstream squash-merged #6", parent="main",
                                 ref="refs/heads/main")
    union = small.up.commit({**A_TWO, **B_TEN}, "union", parent=merged_tip, ref="refs/heads/union")
    small.manifest([
        {"pr": 1}, {"pr": 2}, {"pr": 4}, {"pr": 5}, {"pr": 6}, {"pr": 7, "enabled": False},
        {"carry": "union", "commit": union, "supersedes": [1, {"pr": 4, "paths": ["b.py"]}]},
    ], policy={"precompiled": {"paths": ["csrc/**"]}})
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    code, report = sync(cli, small)
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    e = by_id(report)
    assert (e["pr/1"]["status"], e["pr/1"]["reason"], e["pr/1"]["superseded_by"]) == \
        ("skipped", "superseded", "carry/union")
    assert (e["pr/2"]["status"], e["pr/2"]["reason"]) == ("skipped", "precompiled")
    assert "csrc/k.cu" in e["pr/2"]["detail"]
    assert e["pr/4"]["status"] == "applied" and e["pr/4"]["filtered"] == ["b.py"]
    assert e["pr/4"]["files"] == ["docs/c.txt"] and e["pr/4"]["provided_by"] == {"b.py": "carry/union"}
    assert (e["pr/5"]["status"], e["pr/5"]["reason"], e["pr/5"]["redundant_with"]) == ("skipped", "redundant", [])
    assert (e["pr/6"]["status"], e["pr/6"]["reason"]) == ("skipped", "merged-upstream")
    assert (e["pr/7"]["status"], e["pr/7"]["reason"]) == ("skipped", "disabled")
    assert e["carry/union"]["status"] == "applied" and e["carry/union"]["head"] == union
    assert squash != merged_tip
    tip = report["result"]["sha"]
    assert small.work.git("show", f"{tip}:docs/c.txt") == "c2"
    assert small.work.git("show", f"{tip}:b.py").startswith("x = 10")
    assert "Carry-Filtered: b.py (from carry/union)" in small.work.git("log", "-1", "--format=%B",
                                                                       e["pr/4"]["commit"])


def test_merged_upstream_by_ancestry(cli: Cli, small: Small) -> None:
    head = small.pr(1, A_TWO)
    small.up.git("update-ref", "refs/heads/main", head)
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["reason"] == "merged-upstream"
    assert report["result"]["sha"] == head


A_ONE = {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"}
A_TWENTY = {"a.py": "def f():\n    return 20\n\n\ndef g():\n    return 2\n"}


def _merged_by_a_merge_commit(small: Small, *then: tuple[dict, str]) -> tuple[str, list[str]]:
    """Upstream merges PR 1 (A_TWO, made on the base) with a merge commit, then commits each (files, message)
    of THEN on top ("{merge}" and "{0}", "{1}"... in a message name the merge and those commits): (the merge,
    THEN's commits)."""
    head = small.pr(1, A_TWO)
    before = small.up.commit({"b.py": "x = 1\ny = 2\nz = 4\n"}, "upstream moves on", parent="main")
    merge = small.up.commit(A_TWO, "Merge pull request #1", parent=before, parents=[before, head],
                            ref="refs/heads/main")
    made: list[str] = []
    for files, message in then:
        made.append(small.up.commit(files, message.format(*made, merge=merge), parent="main", ref="refs/heads/main"))
    return merge, made


def _revert(of: str = "{merge}") -> str:
    return f'Revert "Merge pull request #1"\n\nThis reverts commit {of}, reversing\nchanges made to abc.\n'


def test_a_merged_pr_that_upstream_reverted_is_applied_again_and_said(cli: Cli, small: Small,
                                                                     report_schema: dict) -> None:
    """helper-114: upstream merged the PR with a merge commit, then reverted it; its head is in upstream's
    history, so it was skipped as merged-upstream ("its head is already in upstream's history") and its
    lines were gone from the image, exit 0, nothing said. Its change is read from the base it was made on."""
    merge, [revert] = _merged_by_a_merge_commit(small, (A_ONE, _revert()))
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    entry = by_id(report)["pr/1"]
    assert (entry["status"], entry["base"]) == ("applied", small.base)
    assert small.work.git("show", "dev:a.py") == A_TWO["a.py"].strip()
    assert small.work.git("show", "dev:b.py") == "x = 1\ny = 2\nz = 4"
    [warning] = [w for w in report["warnings"] if w["kind"] == "merged-upstream-reverted"]
    assert warning == {"kind": "merged-upstream-reverted", "entry": "pr/1", "merged_in": merge, "reverted_in": revert,
                       "base": small.base, "applied": True, "message": warning["message"]}
    assert f"upstream merged it in {merge[:12]} and reverted it in {revert[:12]}: it is applied again" \
        in warning["message"]
    assert f"warning: {warning['message']}" in cli("sync", "-q", "-m", small.manifest_path, "--repo",
                                                   small.work.path).stdout


@pytest.mark.parametrize("then", ["nothing", "rewritten", "revert reverted"])
def test_a_merged_pr_not_reverted_is_merged_upstream_and_nothing_more(cli: Cli, small: Small, then: str) -> None:
    """helper-117: a merged PR's change merged again from its base differs from upstream wherever upstream
    rewrote or deleted its lines since (pytest's release deletes every changelog fragment): only a revert
    makes it carried again; else it is merged-upstream, quietly, as before."""
    after = {"nothing": [], "rewritten": [(A_TWENTY, "upstream rewrites f")],
             "revert reverted": [(A_ONE, _revert()), (A_TWO, 'Revert "Revert"\n\nThis reverts commit {0}.\n')]}[then]
    _merged, made = _merged_by_a_merge_commit(small, *after)
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    entry = by_id(report)["pr/1"]
    assert code == 0 and (entry["status"], entry["reason"]) == ("skipped", "merged-upstream"), report
    assert entry["detail"] == "its head is already in upstream's history" and not report["warnings"]
    assert report["result"]["sha"] == small.up.rev("main")


def test_a_revert_of_a_revert_of_a_revert_reverts_the_pr_again(cli: Cli, small: Small) -> None:
    """helper-127: the third revert undoes the second, which undid the first: upstream has the PR's change no
    more. The second was forgotten once it cancelled the first, so the third read as a revert of nothing."""
    merge, [first, _second, _third] = _merged_by_a_merge_commit(
        small, (A_ONE, _revert()), (A_TWO, 'Revert "Revert"\n\nThis reverts commit {0}.\n'),
        (A_ONE, 'Revert "Revert "Revert""\n\nThis reverts commit {1}.\n'))
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["status"] == "applied", report
    # (the revert of the merge stands again: the one named)
    assert [(w["merged_in"], w["reverted_in"]) for w in report["warnings"]] == [(merge, first)]
    assert small.work.git("show", "dev:a.py") == A_TWO["a.py"].strip()


def test_revert_suspects_in_a_shallow_clone_cut_at_a_named_merge(small: Small, tmp_path: Path) -> None:
    """helper-127: a revert names a merge whose first parent a shallow clone does not have: the walk beyond
    it failed ("bad object"), exit 4 every night. Every head it cannot rule out is a suspect (merged_in and
    reverted_in decide, as before the filter)."""
    from carrytool.gitlayer.git import Git
    head = small.pr(1, A_TWO)
    side = small.up.commit({"s.py": "s\n"}, "side", parent="main")
    cut = small.up.commit({"s.py": "s\n"}, "Merge side", parent="main", parents=[small.base, side],
                          ref="refs/heads/main")
    small.up.commit(A_TWO, "Merge pull request #1", parent="main", parents=[cut, head], ref="refs/heads/main")
    small.up.commit({"s.py": None}, _revert(cut), parent="main", ref="refs/heads/main")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "3", "--no-single-branch", f"file://{small.up.path}",
                    str(clone)], check=True, capture_output=True)
    assert cut in (clone / ".git" / "shallow").read_text().split()
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "origin", f"{head}:refs/heads/pr"], check=True)
    with Git(clone) as git:
        assert git.revert_suspects(small.up.rev("main"), [head]) == {head}


def test_a_reverted_pr_that_no_longer_merges_is_a_conflict(cli: Cli, small: Small) -> None:
    """Reverted, then its lines rewritten: carried again, it conflicts with upstream, as any PR that needs a
    rebase does (the image no longer has it), and the warning says why it was carried again."""
    _merge, [revert, _rewrite] = _merged_by_a_merge_commit(small, (A_ONE, _revert()), (A_TWENTY, "upstream rewrites f"))
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    entry = by_id(report)["pr/1"]
    assert code == 3 and entry["status"] == "conflict", report
    [warning] = [w for w in report["warnings"] if w["kind"] == "merged-upstream-reverted"]
    assert warning["applied"] is False and f"reverted it in {revert[:12]}: applied again as it was made, it " \
        "conflicts" in warning["message"]


def test_explain_reproduces_a_reverted_prs_base_and_merge(cli: Cli, small: Small) -> None:
    """explain's commands for a PR upstream merged and reverted: `git merge-base upstream head` prints the head
    and `git merge-tree upstream head` changes nothing; they start from the base its change was made on, and
    print what they say."""
    _merged_by_a_merge_commit(small, (A_ONE, _revert()))
    small.manifest([{"pr": 1}])
    sync(cli, small)
    code, report = cli.json("explain", "pr/1", "--offline", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    [story] = report["stories"]
    checked = 0
    for item in story["commands"]:
        proc = subprocess.run(shlex.split(item["command"]), cwd=small.work.path, capture_output=True, text=True)
        printed = re.search(r"prints (?:upstream's tree )?([0-9a-f]{40})", item["purpose"])
        if printed:
            assert proc.returncode == 0 and proc.stdout.split()[0] == printed.group(1), item
            checked += 1
    assert checked == 2 and story["base"] == small.base


def test_explain_says_a_resolved_merge_exits_1_and_names_the_tree_applied(cli: Cli, small: Small) -> None:
    """helper-128: for an entry whose merge a resolution settled (structured, or `theirs`), the story said
    "the merge that applies it: prints TREE", and the command exits 1 with conflicts and another tree."""
    small.pr(1, A_THREE)
    small.up.commit(A_TWENTY, "upstream rewrites f", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 0, report
    code, explained = cli.json("explain", "pr/1", "--offline", "-m", small.manifest_path, "--repo", small.work.path)
    [item] = [c for c in explained["stories"][0]["commands"] if c["purpose"].startswith("the merge that applies")]
    tree = small.work.git("rev-parse", f"{report['result']['sha']}^{{tree}}")
    assert item["purpose"] == ("the merge that applies it: exits 1 with conflicts in a.py, which carrytool resolved "
                               f"`on_conflict: theirs`: the tree it applied is {tree}"), item
    proc = subprocess.run(shlex.split(item["command"]), cwd=small.work.path, capture_output=True, text=True)
    assert proc.returncode == 1 and "CONFLICT" in proc.stdout


def test_redundant_names_what_provides_it(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, A_TWO, message="same change again")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    e = by_id(report)
    assert code == 0 and (e["pr/2"]["reason"], e["pr/2"]["redundant_with"]) == ("redundant", ["pr/1"])


def test_conflict_under_fail_is_exit_3_and_writes_nothing(cli: Cli, small: Small, report_schema: dict) -> None:
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 3
    assert "conflict: pr/2 in a.py with pr/1" in result.stdout
    assert "next: fold pr/1, pr/2 into a union" in result.stdout
    assert small.branch() is None and not small.manifest_path.with_name("manifest.yaml.lock").exists()
    code, report = sync(cli, small)
    jsonschema.validate(report, report_schema)
    assert code == 3 and report["ok"] is False and report["result"]["updated"] is False
    assert by_id(report)["pr/2"]["conflicts"] == [{"file": "a.py", "with": ["pr/1"]}]


def test_conflict_with_upstream_itself_names_no_entry(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.up.commit(A_THREE, "upstream moved", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["conflicts"] == [{"file": "a.py", "with": [], "upstream": True}]
    assert "conflicts in a.py (with upstream alone)" in by_id(report)["pr/1"]["detail"], by_id(report)["pr/1"]


def test_skip_goes_on_and_strict_fails(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.pr(3, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}, {"pr": 3}])
    code, report = sync(cli, small, "--strict", "--dry-run")
    assert code == 3 and small.branch() is None
    code, report = sync(cli, small)
    e = by_id(report)
    assert code == 0 and e["pr/2"]["status"] == "conflict" and e["pr/3"]["status"] == "applied"
    assert small.branch() == report["result"]["sha"]


def test_policy_skip_applies_to_every_entry(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/2"]["status"] == "conflict"


def test_theirs_over_upstream_applies_and_warns_of_upstream_loss(cli: Cli, small: Small) -> None:
    small.up.commit({"a.py": "def f():\n    return 30\n\n\ndef g():\n    return 2\n"}, "upstream moved",
                    parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 20\n"})
    small.manifest([{"pr": 1, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    e = by_id(report)
    assert code == 0 and e["pr/1"]["status"] == "applied"
    assert e["pr/1"]["resolution"] == {"mode": "theirs", "files": ["a.py"]}
    assert small.work.git("show", "dev:a.py") == "def f():\n    return 2\n\n\ndef g():\n    return 20"
    [loss] = [w for w in report["warnings"] if w["kind"] == "upstream-loss"]
    assert loss["entry"] == "pr/1" and loss["file"] == "a.py" and loss["lines"] == [2, 2]
    assert loss["message"].startswith("pr/1 (on_conflict: theirs) overrode 1 upstream line of a.py at line 2 that its "
                                      "own diff never changed")


NOTES = "Changes\n=======\n\n- a\n- b\n- c\n"
NOTES_UPSTREAM = "Changes\n=======\n\n- a\n- B\n=======\n- c\n"      # a reST-like line inside the conflict
NOTES_PR = "Changes\n=======\n\n- a\n- b2\n<<<<<<< kept\n- c"           # and a marker-like one, no last line end


def test_theirs_resolves_in_merge_tree_as_git_x_theirs_without_merge_file(cli: Cli, small: Small, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The content merge `theirs` resolves is merge-tree's own, read back from its markers (gitlayer.markers):
    the file is the entry's where it conflicts, byte for byte as `-X theirs` gives it (no line end added
    at the end, lines that look like markers kept), and no `git merge-file` process runs."""
    start = small.up.commit({"notes.rst": NOTES}, "notes", parent="main", ref="refs/heads/main")
    small.up.commit({"notes.rst": NOTES_UPSTREAM}, "upstream moved", parent="main", ref="refs/heads/main")
    small.pr(1, {"notes.rst": NOTES_PR}, parent=start)
    small.manifest([{"pr": 1, "on_conflict": "theirs"}])
    log, folder = tmp_path / "git.log", tmp_path / "wrapped"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    code, report = sync(cli, small)
    e = by_id(report)
    assert code == 0 and e["pr/1"]["status"] == "applied"
    assert e["pr/1"]["resolution"] == {"mode": "theirs", "files": ["notes.rst"]}
    calls = log.read_text()
    assert subprocess.run(["git", "cat-file", "blob", "dev:notes.rst"], cwd=small.work.path, capture_output=True,
                          check=True).stdout == NOTES_PR.encode()
    assert " merge-tree " in calls and " merge-file " not in calls


def test_theirs_over_another_carry_is_a_clobber_exit_1(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 20\n"})
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None
    [lost] = report["entries"][0]["landing"]["clobbered"]
    assert lost["file"] == "a.py" and lost["by"] == "pr/2" and lost["lines"] == [2, 2] and lost["scope"] == "f"
    assert "pr/1's change to a.py (f) was clobbered: pr/2 removed line 2 (on_conflict: theirs)" in lost["message"]
    landing = report["entries"][0]["landing"]
    assert (landing["hunks"], landing["landed"], landing["survived"]) == (2, 2, 1)


def test_owned_path_edited_by_another_entry_is_exit_2(cli: Cli, small: Small) -> None:
    union = small.up.commit(A_TWO, "union", parent="main", ref="refs/heads/union")
    small.pr(3, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 7\n"})
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"carry": "union", "commit": union, "owns": ["a.py"]}, {"pr": 3}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2
    assert "pr/3 changes a.py, which carry/union owns" in result.stdout
    assert "next: let carry/union supersede pr/3 for a.py" in result.stdout
    assert small.branch() is None


def test_carry_touching_its_excludes_is_exit_1(cli: Cli, small: Small) -> None:
    union = small.up.commit({**A_TWO, **B_TEN}, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"carry": "union", "commit": union, "excludes": ["b.py"]}])
    code, report = sync(cli, small)
    assert code == 1 and report["violations"][0]["kind"] == "excludes"
    assert "carry/union changes b.py" in report["violations"][0]["message"]
    assert small.branch() is None


def test_carry_touching_precompiled_paths_is_exit_2(cli: Cli, small: Small) -> None:
    union = small.up.commit({"csrc/k.cu": "// mine\n"}, "kernel", parent="main", ref="refs/heads/k")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/k:refs/heads/k")
    small.manifest([{"carry": "k", "commit": union}], policy={"precompiled": {"paths": ["**/*.cu"]}})
    code, report = sync(cli, small)
    assert code == 2 and report["violations"][0]["kind"] == "precompiled-carry"


def test_stale_fold_warning_names_both_heads(cli: Cli, small: Small) -> None:
    old = small.pr(1, A_TWO)
    new = small.up.commit({"docs/c.txt": "c3\n"}, "pr 1 moved", parent=old, ref="refs/pull/1/head")
    union = small.up.commit(A_TWO, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [{"pr": 1, "head": old[:9]}]}])
    code, report = sync(cli, small)
    assert code == 0
    warning, absent = report["warnings"]
    assert warning["kind"] == "stale-fold" and warning["entry"] == "carry/union" and warning["pr"] == 1
    assert warning["folded"] == old[:9] and warning["current"] == new and "same_change" not in warning
    # what the PR gained since the fold is in neither: said file by file
    assert (absent["kind"], absent["entry"], absent["other"], absent["file"]) == \
        ("provided-absent", "pr/1", "carry/union", "docs/c.txt")


def test_stale_fold_of_a_reworded_head_says_the_union_has_its_change(cli: Cli, small: Small) -> None:
    """A PR head that changed only as a commit (reworded: the same tree on the same parent) is still named
    (the union records the old head) but said to be the same change: "refold the union" read as if the
    union lacked something (helper-80's trial). A head with another tree is stale as before (above)."""
    old = small.pr(1, A_TWO)
    tree = small.up.git("rev-parse", f"{old}^{{tree}}")
    reworded = small.up.git("commit-tree", tree, "-p", small.base, "-m", "pr 1, reworded")
    small.up.git("update-ref", "refs/pull/1/head", reworded)
    union = small.up.commit(A_TWO, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union", f"{old}:refs/old")
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [{"pr": 1, "head": old[:9]}]}])
    code, report = sync(cli, small)
    assert code == 0, report
    [warning] = report["warnings"]
    assert (warning["kind"], warning["folded"], warning["current"]) == ("stale-fold", old[:9], reworded)
    assert warning["same_change"] is True and "the same tree on the same parents (a reworded commit): the union " \
        "has its change, a refold records the new head (`carrytool union compose union`)" in warning["message"]


def test_warnings_and_next_steps_name_union_commands_with_the_runs_options(cli: Cli, small: Small) -> None:
    """helper-114: a union that conflicts with upstream by itself was told to "rebase carry/union onto upstream"
    (a union is refolded: `union compose`), and the stale-fold warning's `union compose` had no -m/--repo
    (run as printed from elsewhere, it used another repository)."""
    old = small.pr(1, A_TWO)
    union = small.up.commit(A_TWO, "union", parent="main", ref="refs/heads/union")
    small.pr(1, A_THREE)                                           # the PR moved past the folded head
    small.up.commit({"a.py": "def f():\n    return 7\n\n\ndef g():\n    return 2\n"}, "upstream rewrites f",
                    parent="main", ref="refs/heads/main")        # and upstream rewrote what the union changes
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union", f"{old}:refs/old")
    small.manifest([{"carry": "union", "commit": union, "supersedes": [{"pr": 1, "head": old}]}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 3, result.stdout
    options = f"-m {small.manifest_path.resolve()} --repo {small.work.path.resolve()}"
    assert f"refold the union (`carrytool union compose union {options}`)" in result.stdout
    assert "next: refold carry/union onto upstream (a conflict with upstream by itself): " \
        f"`carrytool union compose union {options}`" in result.stdout
    assert "rebase carry/union" not in result.stdout


def _rewritten(small: Small, old: str, files: dict, parent: str) -> str:
    """OLD as a rebase or an amend leaves it: the same author, author date and message, FILES on PARENT;
    refs/pull/1/head points at it."""
    tree = small.up.git("rev-parse", f"{small.up.commit(files, 'scratch', parent=parent)}^{{tree}}")
    when = small.up.git("log", "-1", "--format=%ad", "--date=raw", old)
    new = small.up.git("commit-tree", tree, "-p", parent, "-m", "pr 1", env={"GIT_AUTHOR_DATE": when})
    small.up.git("update-ref", "refs/pull/1/head", new)
    return new


def test_a_pr_stacked_on_an_old_version_of_another_is_said(cli: Cli, small: Small) -> None:
    """helper-114: pr/2 is built on pr/1; pr/1 is amended (it no longer adds `w = 4`) while pr/2 still sits
    on the old pr/1: pr/2's diff from upstream puts `w = 4` back, every hunk lands, exit 0, nothing said.
    pr/2 holds pr/1's commit as it was (same author, date and subject, another change): said every night
    until pr/2 is rebased; pr/1 only rebased (the same change on a new parent) is no warning."""
    old = small.pr(1, {"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"})
    small.up.commit({"docs/c.txt": "c2\n"}, "pr 2, on pr 1", parent=old, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}])
    stale = lambda report: [w for w in report["warnings"] if w["kind"] == "stale-stack"]  # noqa: E731
    code, first = sync(cli, small)
    assert code == 0 and not stale(first), first
    # pr/2 holds pr/1's head: a stack, whose hunks repeat pr/1's by construction (no identical-hunk warning)
    assert not [w for w in first["warnings"] if w["kind"] == "identical-hunk"], first["warnings"]
    moved = small.up.commit({"docs/new.txt": "new\n"}, "upstream moves on", parent="main", ref="refs/heads/main")
    _rewritten(small, old, {"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"}, moved)       # rebased only
    code, rebased = sync(cli, small)
    assert code == 0 and not stale(rebased), rebased
    new = _rewritten(small, old, A_TWO, small.base)                                 # amended: a.py, no `w = 4`
    code, report = sync(cli, small)
    assert code == 0, report
    assert small.work.git("show", "dev:b.py").endswith("w = 4")          # what pr/2 still carries
    [warning] = stale(report)
    assert warning == {"kind": "stale-stack", "entry": "pr/2", "on": ["pr/1"], "built_on": True,
                       "commits": [{"here": old, "there": new}], "was": {"pr/1": old}, "message": warning["message"]}
    assert f"pr/2 holds 1 commit of pr/1 in another version than pr/1 has now ('pr 1': {old[:12]} in pr/2, " \
        f"{new[:12]} in pr/1): it was built on pr/1 before that was rewritten" in warning["message"]
    # said again the next night (nothing moved), under -q too
    assert "warning: pr/2 holds 1 commit of pr/1" in cli("sync", "-q", "-m", small.manifest_path, "--repo",
                                                           small.work.path).stdout
    small.up.commit({"docs/c.txt": "c2\n"}, "pr 2, on pr 1", parent=new, ref="refs/pull/2/head")
    code, fixed = sync(cli, small)
    assert code == 0 and not stale(fixed), fixed


def test_a_stale_stack_rebased_later_is_still_the_stale_one(cli: Cli, small: Small) -> None:
    """helper-117: pr/2, built on pr/1's old commit, rebased onto upstream after pr/1 was amended: its copy of
    pr/1's commit is dated later than pr/1's own, and the warning named pr/1 ("rebase pr/1 ..."), whose
    advice would put the old version into pr/1. The PR whose head is the commit is its owner."""
    old = small.pr(1, {"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"})
    new = _rewritten(small, old, A_TWO, small.base)                                   # pr/1 amended
    moved = small.up.commit({"docs/new.txt": "new\n"}, "upstream moves on", parent="main", ref="refs/heads/main")
    scratch = small.up.commit({"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"}, "scratch", parent=moved)
    tree = small.up.git("rev-parse", f"{scratch}^{{tree}}")
    when = small.up.git("log", "-1", "--format=%ad", "--date=raw", old)
    small.up.tick()
    copy = small.up.git("commit-tree", tree, "-p", moved, "-m", "pr 1", env={"GIT_AUTHOR_DATE": when})
    small.up.commit({"docs/c.txt": "c2\n"}, "pr 2", parent=copy, ref="refs/pull/2/head")   # pr/2 rebased later
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    [warning] = [w for w in report["warnings"] if w["kind"] == "stale-stack"]
    assert (warning["entry"], warning["on"], warning["built_on"]) == ("pr/2", ["pr/1"], True), warning
    assert warning["commits"] == [{"here": copy, "there": new}] and "rebase pr/2 onto pr/1's head" in warning["message"]


def test_two_prs_on_two_versions_of_a_third_branch_are_said_neutrally(cli: Cli, small: Small) -> None:
    """Neither PR is built on the other's head (polars: PRs on two versions of the next-release branch): the one
    composed later brings its version over the other's; neither is called the stale one."""
    old = small.up.commit({"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"}, "pr 1", parent=small.base)
    new = _rewritten(small, old, A_TWO, small.base)
    small.up.commit({"docs/c.txt": "c2\n"}, "pr 1's own", parent=old, ref="refs/pull/1/head")
    small.up.commit({"docs/new.txt": "n\n"}, "pr 2's own", parent=new, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    [warning] = [w for w in report["warnings"] if w["kind"] == "stale-stack"]
    assert (warning["entry"], warning["on"], warning["built_on"]) == ("pr/2", ["pr/1"], False), warning
    assert warning["commits"] == [{"here": new, "there": old}]
    assert "pr/2 and pr/1 hold 1 commit in different versions" in warning["message"]


def test_multi_commit_pr_and_pr_with_a_merge_commit(cli: Cli, small: Small) -> None:
    c1 = small.up.commit(A_TWO, "one", parent=small.base)
    c2 = small.up.commit({"docs/c.txt": "c2\n"}, "two", parent=c1, ref="refs/pull/1/head")
    upstream = small.up.commit({"b.py": "x = 1\ny = 20\nz = 3\n"}, "upstream", parent="main", ref="refs/heads/main")
    merged = small.up.commit({}, "merge main into the PR", parents=[c2, upstream], parent=c2)
    small.up.git("update-ref", "refs/pull/2/head",
                 small.up.commit({"b.py": "x = 10\ny = 20\nz = 3\n"}, "three", parent=merged))
    small.manifest([{"pr": 2}])
    code, report = sync(cli, small)
    e = by_id(report)
    assert code == 0 and e["pr/2"]["base"] == upstream
    assert sorted(e["pr/2"]["files"]) == ["a.py", "b.py", "docs/c.txt"]
    assert small.work.git("show", "dev:b.py") == "x = 10\ny = 20\nz = 3"


def test_locked_reproduces_after_a_pr_moved(cli: Cli, small: Small) -> None:
    head = small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    _, first = sync(cli, small)
    lock = json.loads(small.manifest_path.with_name("manifest.yaml.lock").read_text())
    assert lock["upstream"]["sha"] == small.base and [{k: v for k, v in e.items() if k != "settings"} for e in lock["entries"]] == \
        [{"id": "pr/1", "head": head}]
    assert lock["result"] == first["result"]["sha"] and "git" not in lock   # no machine fact
    small.up.commit(A_THREE, "pr moved", parent=head, ref="refs/pull/1/head")
    small.up.commit({"docs/c.txt": "upstream moved\n"}, "up", parent="main", ref="refs/heads/main")
    small.work.git("update-ref", "-d", "refs/heads/dev")
    code, locked = sync(cli, small, "--locked")
    assert code == 0 and locked["result"]["sha"] == first["result"]["sha"]
    code, moved = sync(cli, small)
    assert code == 0 and moved["result"]["sha"] != first["result"]["sha"]


def test_a_lock_is_not_rewritten_by_another_git(cli: Cli, small: Small, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Same inputs on a runner with another git: the same SHAs, so the lock is left as it is (no machine fact);
    a lock of an earlier carrytool that recorded the git version still reads."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    sync(cli, small)
    path = small.manifest_path.with_name("manifest.yaml.lock")
    doc = json.loads(path.read_text())
    other = tmp_path / "other-git"
    other.mkdir()
    real = shutil.which("git")
    (other / "git").write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "git version 2.99.1"; exit 0; }}\n'
                               f'exec {real} "$@"\n')
    (other / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}:{os.environ['PATH']}")
    code, again = sync(cli, small)
    assert code == 0 and again["result"]["sha"] == doc["result"] and again["lock_written"] is False
    assert json.loads(path.read_text()) == doc
    path.write_text(json.dumps({**doc, "git": "2.39.5"}, indent=2) + "\n")
    code, locked = sync(cli, small, "--locked")
    assert code == 0 and locked["result"]["sha"] == doc["result"]


def test_lock_that_does_not_match_is_exit_2(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}])
    sync(cli, small)
    small.manifest([{"pr": 1}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked")
    assert result.exit_code == 2 and "added pr/2" in result.stderr


def test_dry_run_writes_nothing(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small, "--dry-run")
    assert code == 0 and report["result"]["updated"] is False and report["result"]["sha"]
    assert small.branch() is None and not small.manifest_path.with_name("manifest.yaml.lock").exists()


def test_refuses_a_checked_out_branch(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    clone = init_repo(tmp_path / "clone")
    clone.commit({"x": "y"}, "init", ref="refs/heads/dev")
    clone.git("symbolic-ref", "HEAD", "refs/heads/dev")
    result = cli("sync", "-m", small.manifest_path, "--repo", clone.path)
    assert result.exit_code == 4 and "checked out" in result.stderr


def test_refuses_a_branch_checked_out_in_a_bare_repository_s_linked_work_tree(cli: Cli, small: Small,
                                                                             tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare repository lists no work tree of its own, and `worktree list` is not asked while it has no
    linked work tree; once it has one with the fork branch checked out, sync refuses to move it."""
    from carrytool.gitlayer.git import Git

    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    bare.git("fetch", "-q", str(small.up.path), "main:refs/heads/dev", "main:refs/heads/other")
    asked: list[tuple[str, ...]] = []
    real_run = Git.run

    def run(self: Git, *args: str, **kwargs: object):  # noqa: ANN202
        asked.append(args)
        return real_run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", run)
    result = cli("sync", "-m", small.manifest_path, "--repo", bare.path)
    assert result.exit_code == 0, result.stderr
    assert not [a for a in asked if a[:1] == ("worktree",)]
    bare.git("worktree", "add", "-q", str(tmp_path / "wt"), "dev")
    result = cli("sync", "-m", small.manifest_path, "--repo", bare.path)
    assert result.exit_code == 4 and "checked out in the work tree" in result.stderr, result.stderr
    assert [a for a in asked if a[:1] == ("worktree",)]


@pytest.mark.parametrize("state", ["rebase", "bisect"])
def test_a_branch_being_rebased_or_bisected_is_checked_out(cli: Cli, small: Small, tmp_path: Path, state: str) -> None:
    """helper-74: a work tree in the middle of a rebase (or a bisect) is detached, and `worktree list` shows
    no branch for it, but the branch is still its own: git refuses `branch -f` there, and `rebase --abort`
    would put the branch back where it was, undoing the sync without a word. Refused (exit 4)."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    assert cli("sync", "-m", small.manifest_path, "--repo", bare.path).exit_code == 0
    wt = init_repo(tmp_path / "wt")      # (for its git(): the work tree itself is made by worktree add)
    shutil.rmtree(wt.path)
    bare.git("worktree", "add", "-q", str(wt.path), "dev")
    if state == "rebase":
        wt.git("rebase", "-q", "--exec", "false", "HEAD~1", check=False)
        assert (bare.path / "worktrees" / "wt" / "rebase-merge" / "head-name").exists()
    else:
        wt.git("bisect", "start")
        wt.git("checkout", "-q", "--detach")
    assert "branch refs/heads/dev" not in bare.git("worktree", "list", "--porcelain")
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    before = bare.rev("dev")
    result = cli("sync", "-m", small.manifest_path, "--repo", bare.path)
    assert result.exit_code == 4 and f"checked out in the work tree {wt.path} (a {state} is under way on it)" \
        in result.stderr, result.stderr
    done = "rebase --continue` or `rebase --abort" if state == "rebase" else "bisect reset"
    assert f"finish the {state} there first (`git -C {wt.path} {done}`)" in result.stderr   # not switch --detach
    assert bare.rev("dev") == before


def test_a_branch_checked_out_while_composing_is_not_moved(cli: Cli, small: Small, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-74: the check ran once, before composing (minutes on a real fork); a maintainer who switched a
    work tree to the branch meanwhile had it moved under them, and the next commit from its stale index
    would revert what the sync brought. Asked again just before anything moves."""
    import carrytool.pipeline.sync as sync_module

    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    bare.git("fetch", "-q", str(small.up.path), "main:refs/heads/dev")
    real = sync_module.crash_point

    def meanwhile(name: str) -> None:
        if name == "sync:composed":
            bare.git("worktree", "add", "-q", str(tmp_path / "wt"), "dev")
        real(name)

    monkeypatch.setattr(sync_module, "crash_point", meanwhile)
    before = bare.rev("dev")
    result = cli("sync", "-m", small.manifest_path, "--repo", bare.path)
    assert result.exit_code == 4 and "checked out in the work tree" in result.stderr, result.stderr
    assert bare.rev("dev") == before and not (small.manifest_path.parent / "manifest.yaml.lock").exists()


def test_never_touches_head_index_or_work_tree(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    clone = init_repo(tmp_path / "clone")
    clone.git("fetch", "-q", str(small.up.path), "main:refs/heads/work")
    clone.git("checkout", "-q", "work")
    (clone.path / "a.py").write_text("uncommitted\n")
    (clone.path / "b.py").write_text("staged\n")
    clone.git("add", "b.py")
    before = (clone.git("rev-parse", "HEAD"), clone.git("status", "--porcelain"), clone.git("ls-files", "-s"))
    result = cli("sync", "-m", small.manifest_path, "--repo", clone.path)
    assert result.exit_code == 0
    after = (clone.git("rev-parse", "HEAD"), clone.git("status", "--porcelain"), clone.git("ls-files", "-s"))
    assert before == after and (clone.path / "a.py").read_text() == "uncommitted\n"
    assert clone.git("for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/dev\nrefs/heads/work"


def test_unknown_pr_is_exit_2_and_on_missing_skip(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}, {"pr": 999}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "pr/999" in result.stderr and "refs/pull/999/head" in result.stderr
    small.manifest([{"pr": 998}, {"pr": 1}, {"pr": 999}])    # every missing PR named at once (helper-82)
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "2 PRs cannot be found (closed, or wrong numbers?):" in result.stderr
    assert [line.split(": ")[1] for line in result.stderr.splitlines() if line.startswith("  ") and "pr/99" in line] \
        == ["pr/998", "pr/999"], result.stderr
    assert "hint: remove the entries, pin a `head:` that still exists, or set `on_missing: skip`" in result.stderr
    small.manifest([{"pr": 1}, {"pr": 999, "on_missing": "skip"}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/999"]["reason"] == "missing"


def test_unreachable_upstream_is_exit_4(cli: Cli, small: Small) -> None:
    small.manifest([], upstream={"url": "../does-not-exist"})
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 4 and "cannot fetch" in result.stderr


def test_offline_uses_what_was_fetched(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert result.exit_code == 2 and "without --offline" in result.stderr
    _, first = sync(cli, small, "--dry-run")
    code, offline = sync(cli, small, "--offline")
    assert code == 0 and offline["result"]["sha"] == first["result"]["sha"]


def test_pinned_head_wins_over_the_pr_ref(cli: Cli, small: Small) -> None:
    old = small.pr(1, A_TWO)
    small.up.commit(A_THREE, "moved", parent=old, ref="refs/pull/1/head")
    small.manifest([{"pr": 1, "head": old[:10]}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["head"] == old


def test_carried_commit_fetched_from_the_fork_and_pushed_with_a_lease(cli: Cli, small: Small, tmp_path: Path) -> None:
    fork = init_repo(tmp_path / "fork", bare=True)
    fork.git("fetch", "-q", str(small.up.path), "main:main")
    carry = fork.commit(B_TEN, "fork-only fix", parent="main", ref="refs/heads/fixes")
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}, {"carry": "fix", "commit": carry}],
                   fork={"branch": "dev", "url": "../fork"})
    code, report = sync(cli, small, "--push")
    assert code == 0, report
    assert report["result"]["pushed"] is True and fork.ref("refs/heads/dev") == report["result"]["sha"]
    assert by_id(report)["carry/fix"]["base"] == small.base
    # someone else pushes to the fork after our last fetch: the lease refuses to overwrite it
    other = fork.commit({"x": "y"}, "someone else", parent="dev", ref="refs/heads/dev")
    small.manifest([{"pr": 1}, {"carry": "fix", "commit": carry}], identity={"name": "changed", "email": "c@x"},
                   fork={"branch": "dev", "url": "../fork"})
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push", "--offline")
    assert result.exit_code == 4 and "moved since it was fetched" in result.stderr
    assert fork.ref("refs/heads/dev") == other


def test_a_rewritten_carry_commit_is_fetched_over_the_old_one(cli: Cli, small: Small, tmp_path: Path) -> None:
    """A carry amended (or rebased) and named by its new SHA: the fetch into refs/carrytool/.../carry/NAME
    was not forced, git refused the update (not a fast-forward; silent under --quiet) and the night failed
    with exit 4 "cannot fetch" once, and passed when run again (helper-80's trial, git 2.39 and 2.47). The
    same for a pinned head moved to a commit that does not build on the old pin."""
    fork = init_repo(tmp_path / "fork", bare=True)
    fork.git("fetch", "-q", str(small.up.path), "main:main")
    first = fork.commit(B_TEN, "fork-only fix", parent="main", ref="refs/heads/fixes")
    amended = fork.commit(B_TEN, "fork-only fix, amended", parent="main", ref="refs/heads/fixes")
    small.manifest([{"carry": "fix", "commit": first}], fork={"branch": "dev", "url": "../fork"})
    code, report = sync(cli, small)
    assert code == 0, report
    small.manifest([{"carry": "fix", "commit": amended}], fork={"branch": "dev", "url": "../fork"})
    code, report = sync(cli, small)
    assert code == 0, report
    lock = json.loads(small.manifest_path.with_name("manifest.yaml.lock").read_text())
    assert [item["commit"] for item in lock["entries"]] == [amended]
    small.pr(1, A_TWO)
    for message in ("pr 1 as reviewed", "pr 1 redone"):      # upstream has each by its SHA only
        pin = small.up.commit(A_THREE, message, parent=small.base)
        small.manifest([{"pr": 1, "head": pin}])
        code, report = sync(cli, small)
        assert code == 0 and by_id(report)["pr/1"]["head"] == pin, report


def test_patch_carry_applies_3way(cli: Cli, small: Small) -> None:
    small.up.commit(B_TEN, "patch source", parent="main", ref="refs/heads/p")
    patch = small.up.git("format-patch", "--stdout", "-1", "refs/heads/p")
    (small.manifest_path.parent).mkdir(parents=True, exist_ok=True)
    (small.manifest_path.parent / "fix.patch").write_text(patch + "\n")
    small.up.commit({"b.py": "x = 1\ny = 2\nz = 30\n"}, "upstream moved", parent="main", ref="refs/heads/main")
    small.manifest([{"carry": "fix", "patch": "fix.patch"}])
    code, report = sync(cli, small)
    assert code == 0, report
    assert small.work.git("show", "dev:b.py") == "x = 10\ny = 2\nz = 30"
    _, again = sync(cli, small, "--locked")
    assert again["result"]["sha"] == report["result"]["sha"]


def test_report_file_is_written_even_on_failure(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2}])
    out = tmp_path / "report.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", out)
    assert result.exit_code == 3
    assert json.loads(out.read_text())["ok"] is False


def test_report_file_and_json_stdout_are_the_same_text(cli: Cli, small: Small, tmp_path: Path) -> None:
    """--report with --format json: the file holds exactly what stdout shows (the report is encoded once)."""
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    out = tmp_path / "report.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", out, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == result.stdout and json.loads(result.stdout)["entries"][1]["status"] == "conflict"


def test_gitlab_merge_request_refs(cli: Cli, small: Small) -> None:
    small.up.commit(A_TWO, "mr", parent=small.base, ref="refs/merge-requests/12/head")
    small.manifest([{"pr": 12}], upstream={"url": "../up", "pr_ref": "refs/merge-requests/{number}/head"})
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/12"]["status"] == "applied"
    assert small.work.ref("refs/carrytool/dev/pr/12")


def test_manifest_from_environment_variable(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    elsewhere = small.manifest_path.with_name("nightly.yaml")       # not the default carries/manifest.yaml
    small.manifest_path.rename(elsewhere)
    monkeypatch.chdir(small.root)
    without = cli("sync", "--repo", small.work.path)
    assert without.exit_code == 2 and "carries/manifest.yaml" in without.stderr and small.branch() is None
    result = cli("sync", "--repo", small.work.path, env={"CARRYTOOL_MANIFEST": str(elsewhere)})
    assert result.exit_code == 0, result.stderr
    assert small.work.git("show", "dev:a.py") == A_TWO["a.py"].rstrip("\n")
    assert elsewhere.with_name("nightly.yaml.lock").exists()
    # -m wins over the variable
    bad = cli("sync", "--repo", small.work.path, "-m", small.root / "nope.yaml", env={"CARRYTOOL_MANIFEST": str(elsewhere)})
    assert bad.exit_code == 2 and "nope.yaml" in bad.stderr


def test_conflict_names_only_the_entries_whose_lines_collide(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})      # edits g
    small.pr(2, A_TWO)                                                                  # edits f
    small.pr(3, A_THREE)                                                                # edits f too
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3, "on_conflict": "skip"}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/3"]["conflicts"] == [{"file": "a.py", "with": ["pr/2"]}]
    assert "conflicts in a.py (with pr/2)" in by_id(report)["pr/3"]["detail"], by_id(report)["pr/3"]


def test_plain_output_names_the_first_of_long_paths_with_a_count(cli: Cli, small: Small) -> None:
    """An entry whose first two paths are too long for the files column together still shows the first
    and how many more: the column vanished for such a row (a new user's trial on fastapi's docs)."""
    deep = "docs/" + "/".join(["translations"] * 3) + "/tutorial"
    long_names = [f"{deep}/first-long-page-name.md", f"{deep}/second-long-page-name.md", "z.md"]
    small.pr(1, {name: "text\n" for name in long_names})
    small.pr(2, {"x.py": "x = 1\n", "y.py": "y = 1\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.lstrip().startswith("pr/1 "))
    assert row.endswith(f"[{deep}/first-long-page-name.md (+2)]"), row
    row = next(line for line in result.stdout.splitlines() if line.lstrip().startswith("pr/2 "))
    assert row.endswith("[x.py, y.py]"), row


def test_a_failed_assert_s_hint_says_whether_the_branch_has_the_result(cli: Cli, small: Small) -> None:
    """The hint to reproduce a failed assert calls the result unpublished only when the branch does not
    already point at it (an assert added after a green night fails on the very commit the branch holds)."""
    small.pr(1, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    green = small.branch()
    small.manifest([{"pr": 1}], asserts=[{"name": "h", "file": "a.py", "defines": "h"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1 and small.branch() == green
    assert f"verify --rev {green} " in result.stdout
    assert "reproduces the failed asserts on the composed result (the fork branch already had it)" in result.stdout
    small.pr(2, {"c.py": "c = 1\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[{"name": "h", "file": "a.py", "defines": "h"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1 and small.branch() == green
    assert "reproduces the failed asserts on the composed result (not published)" in result.stdout, result.stdout


def test_conflicts_that_do_not_meet_get_a_union_each(cli: Cli, small: Small) -> None:
    """pr/1 and pr/2 conflict in a.py, pr/3 and pr/4 in b.py: two unions are suggested, each naming the
    entry to skip instead, not one union of all four (a new user's trial on Flask)."""
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.pr(3, B_TEN)
    small.pr(4, {"b.py": "x = 11\ny = 2\nz = 3\n"})
    small.manifest([{"pr": n} for n in (1, 2, 3, 4)])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 3
    hints = [line for line in result.stdout.splitlines() if line.startswith("next: fold")]
    assert [h.split(" into")[0] for h in hints] == ["next: fold pr/1, pr/2", "next: fold pr/3, pr/4"], hints
    assert hints[0].endswith("or set `on_conflict: skip` on pr/2") and "union new NAME 1 2 " in hints[0]
    assert hints[1].endswith("or set `on_conflict: skip` on pr/4") and "union new NAME 3 4 " in hints[1]


def test_strict_and_union_conflicts_get_the_way_out_that_applies(cli: Cli, small: Small) -> None:
    """helper-73: under --strict the hint said "set `on_conflict: skip`", which the manifest had (--strict
    fails the run on it), and for a union's conflict with pr/3 it proposed `union new NAME 3`, a union of one
    PR that fixes nothing: pr/3 joins the union that stands for the others."""
    small.pr(1, A_TWO)
    small.pr(3, A_THREE)
    union = small.up.commit({"a.py": A_TWO["a.py"]}, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 3}, {"pr": 1}, {"carry": "u", "commit": union, "supersedes": [1]}],
                   policy={"on_conflict": "skip"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    result = cli("sync", "--strict", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: ")]
    assert result.exit_code == 3 and hint == (
        "next: add 3 to carry/u's `supersedes` and refold it (`carrytool union compose u -m "
        f"{small.manifest_path} --repo {small.work.path}`), or run without --strict (`on_conflict: skip` skips "
        "carry/u)")


def test_strict_does_not_suggest_the_skip_the_manifest_has(cli: Cli, small: Small) -> None:
    """helper-123 (jax): `sync --strict` said "rebase pr/1, pr/2 ... or set `on_conflict: skip` on them" of PRs
    that conflict with upstream alone and have it: --strict fails the run on a skipped conflict all the same.
    It says what works under --strict; a PR without the skip is still told to set it."""
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.up.commit({**A_THREE, "b.py": "x = 11\ny = 2\nz = 3\n"}, "upstream moved", parent="main",
                    ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    result = cli("sync", "--strict", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: rebase")]
    assert result.exit_code == 3 and "`on_conflict: skip` on" not in hint, hint
    assert hint == ("next: rebase pr/1, pr/2 onto upstream main (a conflict with upstream by itself: no union can "
                    "solve it), or set `enabled: false` on pr/1, pr/2 (or drop them), or run without --strict "
                    "(`on_conflict: skip` skips pr/1, pr/2)")
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "fail"}], policy={"on_conflict": "skip"})
    result = cli("sync", "--strict", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: rebase")]
    assert hint.endswith("no union can solve it), or set `enabled: false` on pr/1, pr/2 (or drop them), or run "
                         "without --strict with `on_conflict: skip` on pr/2"), hint
    # without --strict nothing changes: the PR that fails the run is told to skip
    result = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: rebase")]
    assert hint.startswith("next: rebase pr/2 ") and hint.endswith("or set `on_conflict: skip` on it"), hint
    # one without the skip alone: --strict fails on it whatever it says (helper-127: told to set the skip, then
    # exit 3 again)
    small.manifest([{"pr": 1, "on_conflict": "fail"}])
    result = cli("sync", "--strict", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: rebase")]
    assert hint.endswith("or set `enabled: false` on pr/1 (or drop it), or run without --strict with "
                         "`on_conflict: skip` on pr/1"), hint


def test_a_fork_carry_that_conflicts_with_a_union_is_not_told_to_join_it(cli: Cli, small: Small) -> None:
    """helper-75: the hint for a fork carry's conflict with a union said to add "the others" to the union's
    `supersedes`, which takes only PRs."""
    small.pr(1, A_TWO)
    union = small.up.commit({"a.py": A_TWO["a.py"]}, "union", parent="main", ref="refs/heads/union")
    fix = small.up.commit(A_THREE, "fork fix", parent="main", ref="refs/heads/fix")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union", "refs/heads/fix:refs/heads/fix")
    small.manifest([{"pr": 1}, {"carry": "u", "commit": union, "supersedes": [1]}, {"carry": "fix", "commit": fix}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: ")]
    assert result.exit_code == 3 and hint == ("next: rebase carry/fix onto carry/u (a fork carry cannot join "
                                              "`supersedes`), or set `on_conflict: skip` on carry/fix")


def test_union_groups_name_entries_in_manifest_order() -> None:
    """`pr/2` before `pr/10` (as the manifest has them), not as strings sort; groups by their first entry."""
    from types import SimpleNamespace

    from carrytool.render.next_steps import _conflict_groups

    order = {name: n for n, name in enumerate(["pr/2", "pr/9", "pr/10", "pr/11", "pr/30"])}
    steps = [SimpleNamespace(id="pr/10", conflicts=[{"with": ["pr/2"]}]),
             SimpleNamespace(id="pr/30", conflicts=[{"with": ["pr/9"]}, {"with": ["pr/11"]}])]
    assert _conflict_groups(steps, order) == [(["pr/2", "pr/10"], ["pr/10"]), (["pr/9", "pr/11", "pr/30"], ["pr/30"])]


def test_report_never_overwrites_a_file_of_the_users(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-74: `--report carries/manifest.yaml` (a slip of the shell's completion) replaced the manifest
    with the report, even on a dry run. The manifest, its lock and any file that is not a report carrytool
    wrote are refused (exit 2) before anything runs; last night's report is replaced as always."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for path in (small.manifest_path, lock, notes):
        before = path.read_bytes()
        for command in ("sync", "verify", "explain"):
            extra = ["--dry-run"] if command == "sync" else ["--offline"] if command == "explain" else []
            result = cli(command, "-m", small.manifest_path, "--repo", small.work.path, "--report", path, *extra)
            assert result.exit_code == 2 and "it is not overwritten" in result.stderr, (command, path, result.output)
            assert path.read_bytes() == before
    report = tmp_path / "report.json"
    for _ in range(2):          # a report (the same path night after night) is replaced
        result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", report, "--dry-run")
        assert result.exit_code == 0 and json.loads(report.read_text())["command"] == "sync"
    assert cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--report", report,
               "--offline").exit_code == 0


def test_commits_made_on_the_generated_branch_by_hand_are_named_and_kept(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-74: a hotfix pushed onto the fork branch by hand was replaced by the next sync without a word
    (exit 0, no warning), and in a bare clone (no reflog) left unreachable for gc. The branch is generated
    and is replaced all the same, but the commits sync did not make are named (a `replaced-commits`
    warning, shown by --quiet too) and stay reachable under refs/carrytool/<branch>/replaced/<old tip>."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    assert cli("sync", "-m", small.manifest_path, "--repo", bare.path).exit_code == 0
    night = bare.rev("dev")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", bare.path)     # nothing by hand: silent
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    tree = bare.git("rev-parse", "dev^{tree}")
    hotfix = bare.git("commit-tree", tree, "-p", night, "-m", "HOTFIX by hand", env={"GIT_AUTHOR_DATE": "1700000000 +0000"})
    bare.git("update-ref", "refs/heads/dev", hotfix)
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", bare.path, "--dry-run")
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and warning["commits"] == [hotfix] and warning["remote"] is False
    assert bare.git("for-each-ref", "refs/carrytool/dev/replaced") == ""       # a dry run writes no ref
    result = cli("sync", "-q", "-m", small.manifest_path, "--repo", bare.path)
    assert result.exit_code == 0 and f"dev has 1 commit that sync did not make (committed onto it by hand?), " \
        f"which the composed result does not have: {hotfix[:12]} HOTFIX by hand. The branch is generated: carry " \
        f"such a change as an entry of the manifest. Replacing dev, carrytool keeps its old tip {hotfix[:12]} as " \
        f"refs/carrytool/dev/replaced/{hotfix}" in result.stdout
    assert bare.rev("dev") != hotfix and bare.rev(f"refs/carrytool/dev/replaced/{hotfix}") == hotfix


def test_replaced_commits_by_content_amended_and_cherry_picked(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-75: a composed commit amended by hand kept its Carry-Entry trailer and went without a word; the
    old cherry-pick loop's branch with the same tree was named commit by commit. A commit sync made has the
    trailer and the manifest's identity as committer; a branch whose tree is the result's loses nothing; a
    cherry-pick whose patch an entry carries is counted apart (helper-76: the migration's one hotfix was
    lost among the loop's twenty cherry-picks)."""
    small.pr(1, A_TWO)
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    assert cli("sync", "-m", small.manifest_path, "--repo", bare.path).exit_code == 0
    night = bare.rev("dev")
    message = bare.git("log", "-1", "--format=%B", "dev")
    amended = bare.git("commit-tree", bare.git("rev-parse", "dev^{tree}"), "-p", "dev~1", "-m", message + "\n(amended)")
    bare.git("update-ref", "refs/heads/dev", amended)
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    assert [w["commits"] for w in report["warnings"] if w["kind"] == "replaced-commits"] == [[amended]]
    # the loop's branch: pr/1 cherry-picked onto upstream, and a hotfix; then the same tree as the result
    pick = small.up.commit(A_TWO, "pr 1, cherry-picked", parent="main", ref="refs/heads/loop")
    hot = small.up.commit({"hot.txt": "fix\n"}, "HOTFIX", parent=pick, ref="refs/heads/loop")
    bare.git("fetch", "-q", str(small.up.path), "+loop:refs/heads/dev")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert (warning["commits"], warning["carried"]) == ([hot, pick], [pick])
    assert ": " + hot[:12] + " HOTFIX; and 1 whose patch a PR or carry of the manifest carries too." in warning["message"]
    result = bare.git("rev-parse", report["result"]["sha"] + "^{tree}")
    same = bare.git("commit-tree", result, "-p", "refs/heads/dev", "-m", "same content")
    bare.git("update-ref", "refs/heads/dev", same)
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    # the result's files, and every commit changes some: nothing of it goes (helper-90: a migration's merges
    # and squashed picks were named when empty commits were: test_an_empty_commit_on_the_branch_is_kept...)
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "replaced-commits"] and night
    merged = bare.git("commit-tree", result, "-p", pick, "-p", "refs/heads/dev", "-m", "Merge the loop")
    bare.git("update-ref", "refs/heads/dev", merged)
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "replaced-commits"]


def test_an_empty_commit_on_the_branch_is_kept_not_dropped(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-87: a commit by hand that changes no file (a release marker) went without a word and no ref
    kept it (the branch's tree was the result's, which was taken for "nothing goes")."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    assert cli("sync", "-m", small.manifest_path, "--repo", bare.path).exit_code == 0
    marker = bare.git("commit-tree", bare.git("rev-parse", "dev^{tree}"), "-p", "dev", "-m", "release marker")
    bare.git("update-ref", "refs/heads/dev", marker)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and warning["commits"] == [marker] and "release marker" in warning["message"]
    assert "They change no file (the branch's files are the result's)" in warning["message"]
    assert bare.rev(f"refs/carrytool/dev/replaced/{marker}") == marker and bare.rev("dev") != marker


def test_a_report_that_cannot_be_written_after_the_branch_moved_says_so(cli: Cli, small: Small, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-74: the report is written after the branch moved; a full disk there gave exit 4 with only
    "cannot write ...", which the docs read as "nothing was written", and no summary. The output is
    printed, and the error says what the run did."""
    import carrytool.pipeline.report as report_module
    from carrytool.errors import EnvironmentProblem

    def full(*_args: object, **_kwargs: object) -> None:
        raise EnvironmentProblem("cannot write out/sync.json: No space left on device")

    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    monkeypatch.setattr(report_module, "write_report", full)
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", tmp_path / "sync.json")
    sha = small.branch()
    assert result.exit_code == 4 and sha is not None and f"ok: dev (new) -> {sha[:12]}" in result.stdout
    assert f"cannot write out/sync.json: No space left on device; the run itself finished: dev moved to {sha[:12]} " \
           "and the lock was written" in result.stderr
    result = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path, "--report",
                 tmp_path / "sync.json")
    assert result.exit_code == 4 and "the run itself finished (exit 0) and moved no branch" in result.stderr


def test_the_lock_is_not_written_through_a_link_and_keeps_its_mode(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-74: a symlinked lock was replaced by a regular file (the file it pointed to kept the old
    result), and a rewritten lock lost its permissions. A link is refused before anything moves (exit 2,
    as for the manifest); a regular lock keeps its mode."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    lock.chmod(0o640)
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    assert lock.stat().st_mode & 0o777 == 0o640 and not lock.is_symlink()
    night = small.branch()
    shared = tmp_path / "shared.lock"
    lock.rename(shared)
    lock.symlink_to(shared)
    small.up.commit({"c.txt": "more and more\n"}, "upstream moves again", parent="main", ref="refs/heads/main")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "manifest.yaml.lock is a symlink" in result.stderr, result.output
    assert lock.is_symlink() and small.branch() == night


def test_locked_says_when_it_cannot_compose_the_locks_result(cli: Cli, small: Small) -> None:
    """helper-74: `sync --locked` after the manifest's identity changed published another SHA than the
    lock's `result` (which `carrytool diff` reads) without a word. The lock keeps the identity's digest now
    (helper-87): exit 2, nothing moved; the lock stays. (A lock without it: the `lock-result` warning,
    test_lock_mismatch.)"""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked")
    assert code == 2                                      # no lock yet
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked")
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "lock-result"]
    night = report["result"]["sha"]
    lock = small.manifest_path.with_name("manifest.yaml.lock").read_text()
    small.manifest_path.write_text(small.manifest_path.read_text() + "identity: {name: Other, email: o@x}\n")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked")
    assert result.exit_code == 2 and "the manifest's identity or policy.precompiled changed since" in result.stderr
    assert small.manifest_path.with_name("manifest.yaml.lock").read_text() == lock and small.branch() == night


@pytest.mark.parametrize("failing", [False, True], ids=["ok", "assert-fails"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_reader_that_leaves_early_does_not_change_the_exit_code(small: Small, failing: bool, fmt: str) -> None:
    """helper-73: `carrytool sync | head -1` exited 0 or 1 at random (1 reads as "a check failed" in CI):
    when the reader left before a write, the error ended the run with click's 1, or the interpreter's 120.
    The exit code is the run's, whenever the reader leaves."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}], asserts=[{"name": "a", "file": "a.py", "contains": "nope" if failing else "def"}])
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "carrytool", "sync", "--dry-run", "--format", fmt, "-m",
                                 str(small.manifest_path), "--repo", str(small.work.path)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.close()                         # the reader is gone before anything is written
        assert proc.wait(timeout=120) == (1 if failing else 0)


def test_a_reader_that_leaves_during_the_run_does_not_stop_it(small: Small) -> None:
    """helper-75: the reader of stderr gone (`carrytool sync 2>&1 | head -1`) and a diagnostic written
    before composing (a stale ref lock removed): the write raised, the run stopped there with nothing
    composed, and exited 0. The run goes on and ends as it would have (the branch is made)."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    (small.work.path / "refs" / "carrytool" / "dev").mkdir(parents=True, exist_ok=True)
    (small.work.path / "refs" / "carrytool" / "dev" / "upstream.lock").write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "carrytool", "sync", "-m", str(small.manifest_path), "--repo",
                             str(small.work.path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0 and small.branch() is not None


def test_explain_does_not_advise_running_explain(cli: Cli, small: Small) -> None:
    """helper-76: explain's next step said "`carrytool explain` shows the overlap" while it was explain."""
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2}])
    sync_hint = [line for line in cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout.splitlines()
                 if line.startswith("next: fold")]
    explain = cli("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path).stdout
    hints = [line.strip() for line in explain.splitlines() if line.strip().startswith("next: fold")]
    assert "`carrytool explain " in sync_hint[0] and hints, explain
    assert all("`carrytool explain" not in h and "the overlap map shows where" in h for h in hints)


def test_a_cherry_pick_of_a_skipped_pr_is_not_counted_carried(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-77: the old branch's cherry-pick of pr/2 was counted "carried" (its patch is pr/2's) while pr/2
    was skipped for a conflict: the result does not have it, and the message hid it among the carried."""
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    pick = small.up.commit(A_THREE, "pr 2, cherry-picked", parent="main", ref="refs/heads/loop")
    bare.git("fetch", "-q", str(small.up.path), "+loop:refs/heads/dev")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and (warning["commits"], warning["carried"]) == ([pick], [])
    assert f": {pick[:12]} pr 2, cherry-picked. " in warning["message"] and "would keep its old tip" in warning["message"]


def test_the_old_loops_picks_of_a_pr_are_named_as_such(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-107: on the migration's first night every cherry-pick the loop resolved otherwise (`-X theirs`)
    was named "committed onto it by hand?", and one looked for a hotfix that did not exist: a commit whose
    subject is one of an entry's own commits says so (JSON `copies`)."""
    small.pr(1, A_TWO)
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    pick = small.up.commit({"docs/c.txt": "c2, as the loop resolved it\n"}, "pr 2", parent="main",
                           ref="refs/heads/loop")
    bare.git("fetch", "-q", str(small.up.path), "+loop:refs/heads/dev")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and (warning["commits"], warning["carried"], warning["copies"]) == ([pick], [], {pick: "pr/2"})
    assert warning["message"].startswith("dev has 1 commit that sync did not make (picks of entries of the "
                                         "manifest, each resolved otherwise: the old loop's?), which the composed "
                                         f"result does not have: {pick[:12]} pr 2 (pr/2 has a commit of that "
                                         "subject; this one's patch differs)."), warning["message"]
    hot = small.up.commit({"hot.txt": "fix\n"}, "HOTFIX", parent=pick, ref="refs/heads/loop")
    bare.git("fetch", "-q", str(small.up.path), "+loop:refs/heads/dev")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert (warning["commits"], warning["copies"]) == ([hot, pick], {pick: "pr/2"})
    assert "(committed onto it by hand?)" in warning["message"] and f"{hot[:12]} HOTFIX; {pick[:12]} pr 2 (pr/2" \
        in warning["message"]


def test_explain_next_step_names_the_union_it_suggests(cli: Cli, small: Small) -> None:
    """helper-107: pr/2 conflicts with pr/1 in the chain; pr/3 merges there (pr/2 stopped) but conflicts with
    pr/2. explain suggested a union of all three, its next step `union new NAME 1 2`, and the union then
    conflicted with pr/3. The next step names the union explain suggests; sync's says explain shows more."""
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 20\n\n\ndef g():\n    return 20\n"})
    small.pr(3, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 30\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    result = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    [hint] = [line for line in result.stdout.splitlines() if line.startswith("next: fold")]
    assert hint.startswith("next: fold pr/1, pr/2 into a union (`carrytool explain ") and \
        "shows the overlap, and the PRs that also conflict with them; `carrytool union new NAME 1 2 " in hint, hint
    explain = cli("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path).stdout
    [hint] = [line.strip() for line in explain.splitlines() if line.strip().startswith("next: fold")]
    assert hint.startswith("next: fold pr/1, pr/2, pr/3 into a union (the overlap map shows where; `carrytool "
                           "union new NAME 1 2 3 "), hint
    assert "consider a union of pr/1, pr/2, pr/3" in explain


def test_each_conflict_group_is_named_as_the_union_explain_suggests() -> None:
    """helper-109: the first group's hint took explain's union; a local variable then hid the suggestions
    from every later group."""
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.plan import Step
    from carrytool.pipeline.report import Report
    from carrytool.render.next_steps import next_steps

    steps = [Step(Entry("pr", number=n)) for n in (1, 2, 3, 4)]
    for step, other in ((steps[1], "pr/1"), (steps[3], "pr/3")):
        step.status = "conflict"
        step.conflicts = [{"file": "a.py", "with": [other]}]
    report = Report("explain", steps=steps, failed_conflicts=[steps[1], steps[3]])
    hints = next_steps(report, unions=[["pr/1", "pr/2", "pr/9"], ["pr/3", "pr/4", "pr/8"]])
    assert [h.split("`")[1] for h in hints] == ["carrytool union new NAME 1 2 9", "carrytool union new NAME 3 4 8"]


def test_a_pick_of_a_skipped_pr_is_no_copy_of_it(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-109: a pick of a PR the run skipped was called that PR's copy ("the old loop's?"), which reads as
    harmless: the result has no such change."""
    small.pr(1, A_TWO)
    small.pr(2, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    bare = init_repo(tmp_path / "bare.git", bare=True)
    pick = small.up.commit({"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"}, "pr 2", parent="main", ref="refs/heads/loop")
    bare.git("fetch", "-q", str(small.up.path), "+loop:refs/heads/dev")
    code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", bare.path)
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and (warning["commits"], warning["copies"]) == ([pick], {})
    assert "(committed onto it by hand?)" in warning["message"]


def test_a_shallow_clone_is_named_with_how_to_deepen_it(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-113: in a shallow clone (actions/checkout's default depth) a PR's head "shares no history with
    upstream", with a hint about upstream.pr_ref: the clone is shallow, and the hint says how to deepen it."""
    small.pr(1, A_TWO)
    for n in range(3):
        small.up.commit({"docs/c.txt": f"c{n}\n"}, f"upstream {n}", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}])
    shallow = tmp_path / "shallow.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--depth", "1", f"file://{small.up.path}", str(shallow)],
                   check=True, capture_output=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", shallow)
    assert code == 2, report
    assert "shares no history with upstream in this shallow clone" in report["error"]["message"]
    assert "git fetch --unshallow" in cli("sync", "-m", small.manifest_path, "--repo", shallow).stderr


def test_a_pr_stacked_on_another_applies_its_own_commits_when_its_whole_change_conflicts(cli: Cli, small: Small) -> None:
    """helper-114: pr/2 is built on pr/1's head and edits the line pr/1 changed: its whole change from upstream
    conflicts with pr/1's ("fold them into a union"), where git merging the branch with its history is clean.
    Under `policy.stacked: own-commits` its own commits (pr/1's head to its head) are merged onto the result
    instead; by default it stays the conflict the plain chain has, and says it is stacked."""
    lower = small.pr(1, A_TWO)
    stacked = {"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}
    upper = small.up.commit(stacked, "pr 2, on pr 1", parent=lower, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)            # by default its whole change, as the plain chain takes it
    entry = by_id(report)["pr/2"]
    assert code == 3 and entry["status"] == "conflict" and "stacked_on" not in entry, report
    assert "; it is stacked on pr/1 (its history holds that PR's head): `policy.stacked: own-commits`" in entry["detail"]
    assert "next: pr/2 is stacked on pr/1: `policy: {stacked: own-commits}`" in \
        cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout
    code, ex = cli.json("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path)
    [pair] = [o for o in ex["overlaps"] if o["entries"] == ["pr/1", "pr/2"]]
    assert pair["stacked"] is True and "resolved" not in pair       # a stack: no union to suggest
    assert not [s for s in ex["suggestions"] if s["kind"] == "union"], ex["suggestions"]
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)
    assert code == 0, report
    entry = by_id(report)["pr/2"]
    assert entry["status"] == "applied" and entry["stacked_on"] == {"entry": "pr/1", "head": lower}
    assert entry["detail"].startswith("stacked on pr/1: its own commits applied onto pr/1's head")
    assert small.work.git("show", "dev:a.py") == stacked["a.py"].strip()
    assert f"Carry-Stacked-On: pr/1 {lower}" in small.work.git("log", "-1", "--format=%B", "dev")
    code, ex = cli.json("explain", "--offline", "pr/2", "-m", small.manifest_path, "--repo", small.work.path)
    [pair] = [o for o in ex["overlaps"] if o["entries"] == ["pr/1", "pr/2"]]
    assert pair["kind"] == "conflict" and pair["resolved"] == "stacked" and pair["stacked"] is True
    assert not [s for s in ex["suggestions"] if s["kind"] == "union"]
    [story] = ex["stories"]
    [merge] = [c for c in story["commands"] if c["purpose"].startswith("the merge that applies it")]
    proc = subprocess.run(shlex.split(merge["command"]), cwd=small.work.path, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.split()[0] == small.work.git("rev-parse", "dev^{tree}")
    assert upper


def test_a_stacked_pr_whose_lower_moved_is_the_conflict_it_is(cli: Cli, small: Small) -> None:
    """pr/1 pushed over since pr/2 was built on it: pr/2's history no longer holds pr/1's head, its own commits
    are not told apart, and its whole change conflicts (with the stale-stack warning when the commits match)."""
    lower = small.pr(1, A_TWO)
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}, "pr 2, on pr 1",
                    parent=lower, ref="refs/pull/2/head")
    small.pr(1, A_THREE)
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)
    entry = by_id(report)["pr/2"]
    assert code == 3 and entry["status"] == "conflict" and "stacked_on" not in entry, report


def test_a_stacked_pr_reverting_part_of_its_lower_is_said_and_not_survived(cli: Cli, small: Small) -> None:
    """helper-120: pr/2, built on pr/1, puts pr/1's b.py change back in its own commits: with the landing
    check skipping clobbers by a stacked PR, pr/1 reported every hunk "survived" while its b.py change was gone
    from the image. It is a `stacked-edit` warning (what the stacked PR's author did), and not survived."""
    lower = small.pr(1, {**A_TWO, **B_TEN})
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n",
                     "b.py": "x = 1\ny = 2\nz = 3\n"}, "pr 2, on pr 1", parent=lower, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)
    assert code == 0, report
    assert small.work.git("show", "dev:b.py").startswith("x = 1\n")
    landing = by_id(report)["pr/1"]["landing"]
    assert landing["survived"] < landing["landed"], landing
    # the contract's `clobbered` fails a run: a stacked edit, which does not, is apart (helper-133: a CI reading
    # `clobbered != []` failed this ok run)
    assert landing["clobbered"] == [] and landing["stacked_edits"] and \
        all(c["stacked"] and c["by"] == "pr/2" for c in landing["stacked_edits"]), landing
    edits = [w for w in report["warnings"] if w["kind"] == "stacked-edit"]
    assert {w["file"] for w in edits} == {"a.py", "b.py"} and all(w["by"] == "pr/2" for w in edits)
    assert "pr/1's change to b.py was changed by pr/2, built on it: pr/2 removed line 1 in its own commits" \
        in [w["message"] for w in edits]


def test_a_stacked_pr_is_never_guessed_to_conflict_beside_the_chain(cli: Cli, small: Small) -> None:
    """helper-120: under `policy.stacked: own-commits` a stacked PR that conflicts with upstream alone was merged
    beside the chain (the guess that it conflicts there too), which names the conflict without trying its own
    commits: the result depended on whether another entry's guess failed."""
    lower = small.pr(1, A_TWO)
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}, "pr 2, on pr 1",
                    parent=lower, ref="refs/pull/2/head")
    small.up.commit({"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"}, "upstream rewrites f",
                    parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}, {"pr": 2}], policy={"stacked": "own-commits",
                                                                           "on_conflict": "skip"})
    code, report = sync(cli, small)
    entry = by_id(report)["pr/2"]
    assert entry["status"] == "applied" and entry["stacked_on"]["entry"] == "pr/1", report


def test_the_stacked_policy_is_part_of_the_lock(cli: Cli, small: Small) -> None:
    """helper-120: switching `policy.stacked` changes the composed commits; `--locked` took the old lock (exit 0
    with another result) where the other settings make it a lock mismatch (exit 2)."""
    lower = small.pr(1, A_TWO)
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}, "pr 2, on pr 1",
                    parent=lower, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    code, _report = sync(cli, small)
    assert code == 0
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip", "stacked": "own-commits"})
    code, report = sync(cli, small, "--locked", "--dry-run")
    assert code == 2 and "lock" in report["error"]["message"], report


def test_a_pr_applied_on_its_lower_is_accounted_for_its_own_commits(cli: Cli, small: Small) -> None:
    """helper-121: applied as its own commits, a stacked PR was checked for its whole change's hunks, which hold
    the lower's lines beside its own: where other entries had changed lines around them, such a hunk was
    nowhere as a block ("did not land", exit 1; pytest's pr/14858 after pr/14899 and pr/14917, ok in another
    order). Its own commits' hunks are what it applied: here one (a.py), not the lower's b.py again."""
    lower = small.pr(1, {**A_TWO, **B_TEN})
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}, "pr 2, on pr 1",
                    parent=lower, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)
    landing = by_id(report)["pr/2"]["landing"]
    assert code == 0 and (landing["hunks"], landing["landed"]) == (1, 1), report


def test_a_stale_stack_that_conflicts_is_told_to_rebase_or_pin_not_to_fold(cli: Cli, small: Small) -> None:
    """helper-121: pr/2, built on pr/1 before pr/1 was amended, conflicts with it; the next step said to fold
    both into a union, which would keep the old version. It says to rebase, and how to carry the version pr/2
    was built on meanwhile (a `head:` pin of pr/1, which works as printed)."""
    old = small.pr(1, A_TWO)
    small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}, "pr 2, on pr 1",
                    parent=old, ref="refs/pull/2/head")
    _rewritten(small, old, A_THREE, small.base)                                      # pr/1 amended
    small.manifest([{"pr": 1}, {"pr": 2}])
    out = cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert f"next: pr/2 is built on an older version of pr/1 (stale-stack): rebase pr/2 onto the current head; " \
        f"until then `head: {old[:12]}` on pr/1 carries the version it was built on (with `policy.stacked: " \
        "own-commits` where its whole change conflicts with it)" in out, out
    assert "into a union" not in out
    small.manifest([{"pr": 1, "head": old[:12]}, {"pr": 2}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)           # (its whole change conflicts with pr/1's: a stack, applied as one)
    assert code == 0 and by_id(report)["pr/2"]["status"] == "applied", report


def test_every_pr_of_a_stack_that_conflicts_is_said_to_be_stacked(cli: Cli, small: Small) -> None:
    """helper-121: in a stack of three, the third conflicted with the first (the second did not apply), and
    neither its detail nor the next step said it was stacked: a union of all three was suggested."""
    lower = small.pr(1, A_TWO)
    second = small.up.commit({"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"},
                             "pr 2, on pr 1", parent=lower, ref="refs/pull/2/head")
    small.up.commit({"a.py": "def f():\n    return 2  # and said so twice\n\n\ndef g():\n    return 2\n"},
                    "pr 3, on pr 2", parent=second, ref="refs/pull/3/head")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert "next: pr/2 is stacked on pr/1, pr/3 is stacked on pr/1: `policy: {stacked: own-commits}`" \
        in result.stdout, result.stdout
    assert "into a union" not in result.stdout
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"stacked": "own-commits"})
    code, report = sync(cli, small)
    assert code == 0 and [by_id(report)[f"pr/{n}"]["status"] for n in (1, 2, 3)] == ["applied"] * 3, report


SAID = {"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}


def test_a_stacked_pr_that_merged_upstream_in_is_not_applied_from_its_lower_alone(cli: Cli, small: Small) -> None:
    """helper-122: pr/2 merged upstream's main (which added d.py) into itself after pr/1; upstream deleted d.py
    since. Merged from pr/1's head alone, its own commits put d.py back (exit 0, every hunk landed): its base
    is not pr/1's, so it stays the conflict its whole change is."""
    lower = small.pr(1, A_TWO)
    added = small.up.commit({"d.py": "new = 1\n"}, "upstream adds d", parent=small.base, ref="refs/heads/main")
    merged = small.up.commit({"d.py": "new = 1\n"}, "merge main into pr 2", parent=lower, parents=[lower, added])
    small.up.commit(SAID, "pr 2 own", parent=merged, ref="refs/pull/2/head")
    small.up.commit({"d.py": None}, "upstream deletes d", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"stacked": "own-commits", "on_conflict": "skip"})
    code, report = sync(cli, small)
    assert small.work.git("ls-tree", "dev", "d.py") == "" and by_id(report)["pr/2"]["status"] == "conflict", report


def test_a_stale_pr_in_conflict_with_another_pr_still_gets_its_union(cli: Cli, small: Small) -> None:
    """helper-122: pr/2 is stale on pr/1 (amended elsewhere) but conflicts only with pr/3: the stale hint (no help)
    replaced the union suggestion for that conflict."""
    old = small.pr(1, B_TEN)
    small.up.commit(SAID, "pr 2, on pr 1", parent=old, ref="refs/pull/2/head")
    _rewritten(small, old, {**B_TEN, "docs/c.txt": "c2\n"}, small.base)
    small.pr(3, {"a.py": "def f():\n    return 7\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}, {"pr": 3}, {"pr": 2}])
    out = cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "into a union" in out and "(stale-stack): rebase" not in out, out


def test_a_stale_stack_over_two_prs_pins_both(cli: Cli, small: Small) -> None:
    """helper-122: pr/3 on pr/2 on pr/1; pr/1 amended and pr/2 rebased onto it, pr/3 left on both old heads: the
    next step pinned pr/1 alone, which left pr/2 in conflict. Both heads pr/3 holds are named."""
    a1 = small.pr(1, B_TEN)
    b1 = small.up.commit({"docs/c.txt": "c b\n"}, "pr 2", parent=a1, ref="refs/pull/2/head")
    small.up.commit(SAID, "pr 3", parent=b1, ref="refs/pull/3/head")
    a2 = _rewritten(small, a1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, small.base)
    scratch = small.up.commit({"docs/c.txt": "c b\n"}, "scratch", parent=a2)
    when = small.up.git("log", "-1", "--format=%ad", "--date=raw", b1)
    b2 = small.up.git("commit-tree", f"{scratch}^{{tree}}", "-p", a2, "-m", "pr 2", env={"GIT_AUTHOR_DATE": when})
    small.up.git("update-ref", "refs/pull/2/head", b2)
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    out = cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert f"`head: {a1[:12]}` on pr/1 and `head: {b1[:12]}` on pr/2" in out, out


def test_a_reverted_pr_is_found_when_a_later_merged_pr_holds_the_revert(cli: Cli, small: Small) -> None:
    """The revert search reads once what upstream has beyond the merged heads' common history, not beyond
    each of them: PR 2 was made after upstream reverted PR 1 and merged too, so the revert is in PR 2's
    history (what upstream has beyond both heads leaves it out)."""
    merge, [revert] = _merged_by_a_merge_commit(small, (A_ONE, _revert()))
    later = small.pr(2, {"c.py": "c = 1\n"}, parent=revert)
    small.up.commit({"c.py": "c = 1\n"}, "Merge pull request #2", parent="main", parents=[revert, later],
                    ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    entries = by_id(report)
    assert code == 0 and entries["pr/1"]["status"] == "applied", report
    assert (entries["pr/2"]["status"], entries["pr/2"]["reason"]) == ("skipped", "merged-upstream")
    assert [(w["entry"], w["merged_in"], w["reverted_in"]) for w in report["warnings"]
            if w["kind"] == "merged-upstream-reverted"] == [("pr/1", merge, revert)]
    assert small.work.git("show", "dev:a.py") == A_TWO["a.py"].strip()


def test_a_pinned_head_below_the_merged_one_is_found_reverted(cli: Cli, small: Small) -> None:
    """The PR's branch moved on after the head the manifest pins, and upstream merged the later head, then
    reverted that merge: the revert names a merge whose second parent is not the pinned head but holds it."""
    head = small.pr(1, A_TWO)
    moved = small.pr(1, {"d.py": "d = 1\n"}, parent=head)
    before = small.up.commit({"b.py": "x = 1\ny = 2\nz = 4\n"}, "upstream moves on", parent="main")
    merge = small.up.commit({**A_TWO, "d.py": "d = 1\n"}, "Merge pull request #1", parent=before,
                            parents=[before, moved], ref="refs/heads/main")
    revert = small.up.commit({**A_ONE, "d.py": None}, _revert(merge), parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "head": head}])
    code, report = sync(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["status"] == "applied", by_id(report)["pr/1"]
    assert [(w["entry"], w["merged_in"], w["reverted_in"]) for w in report["warnings"]
            if w["kind"] == "merged-upstream-reverted"] == [("pr/1", merge, revert)]
    assert small.work.git("show", "dev:a.py") == A_TWO["a.py"].strip()


def test_revert_suspects_are_the_heads_a_revert_may_name(small: Small) -> None:
    """Git.revert_suspects, the filter before merged_in/reverted_in: a head named by a revert (a short
    name too), a head a named merge brought in (beyond its first parent); not a head whose revert names
    another commit, nor one merged before the named merge's first parent."""
    from carrytool.gitlayer.git import Git
    early = small.pr(3, {"e.py": "e = 1\n"})
    small.up.commit({"e.py": "e = 1\n"}, "Merge pull request #3", parent="main", parents=[small.base, early],
                    ref="refs/heads/main")
    merge, [other] = _merged_by_a_merge_commit(small, ({"f.py": "f\n"}, "unrelated"))
    head = small.up.rev("refs/pull/1/head")
    with Git(small.up.path) as git:
        assert git.revert_suspects(small.up.rev("main"), [head, early]) == set()
        unrelated = small.up.commit({"f.py": None}, _revert(other), parent="main")
        assert git.revert_suspects(unrelated, [head, early]) == set()
        short = small.up.commit(A_ONE, _revert(head[:7]), parent="main")
        assert git.revert_suspects(short, [head, early]) == {head}
        of_merge = small.up.commit(A_ONE, _revert(merge), parent="main")
        assert git.revert_suspects(of_merge, [head, early]) == {head}
        assert git.revert_suspects(of_merge, []) == set()


def test_revert_suspects_read_a_revert_name_as_a_commit_not_a_branch_of_that_name(small: Small) -> None:
    """helper-136: "This reverts commit <short>" was looked up as git looks up any name, a branch or tag of
    that name first: a branch named like the abbreviation, at a merge that brought the head in, made the head
    a suspect (a walk of upstream's history for it every night), and a branch named like the abbreviation of
    such a merge, at another commit, hid a revert of the PR. The name is read as the commit it abbreviates."""
    from carrytool.gitlayer.git import Git
    merge, [other] = _merged_by_a_merge_commit(small, ({"f.py": "f\n"}, "unrelated"))
    head = small.up.rev("refs/pull/1/head")
    small.up.git("branch", other[:7], merge)              # a branch named like other's abbreviation, at the merge
    small.up.git("tag", "d00d00d", merge)                  # a tag named like an abbreviation of nothing
    with Git(small.up.path) as git:
        assert git.rev_parse(other[:7]) == merge          # (git itself takes the branch)
        reverts = small.up.commit({"f.py": None}, _revert(other[:7]), parent="main")
        assert git.revert_suspects(reverts, [head]) == set()
        nothing = small.up.commit({"f.py": None}, _revert("d00d00d"), parent="main")
        assert git.revert_suspects(nothing, [head]) == set()
        small.up.git("branch", merge[:8], other)          # and the merge's abbreviation, a branch at `other`:
        of_merge = small.up.commit(A_ONE, _revert(merge[:8]), parent="main")   # the revert of the merge is one
        assert git.revert_suspects(of_merge, [head]) == {head}


def test_a_reverted_pr_applied_again_says_so_in_its_entry(cli: Cli, small: Small) -> None:
    """helper-122: the detail was only set on the chained merge's way; composed by the fast path it had none."""
    merge, [revert] = _merged_by_a_merge_commit(small, (A_ONE, _revert()))
    small.manifest([{"pr": 1}])
    _code, report = sync(cli, small)
    assert by_id(report)["pr/1"]["detail"] == f"upstream merged it in {merge[:12]} and reverted it in " \
        f"{revert[:12]}: applied again, from the base its change was made on"
