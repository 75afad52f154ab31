"""Issue 13, as it will be judged: whole union workflows on real repositories, and `union new`."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from carrytool.union.resolutions import split_conflicts
from tests.conftest import Cli, isolate_env
from tests.gitrepo import Repo, init_repo
from tests.union.fold_scenario import A_BASE, Fold, edited, fresh_fold, resolve_both


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


class Handed(NamedTuple):
    fold: Fold
    commit: str            # by_hand's union commit
    resolved: bytes        # and the a.py it committed


@pytest.fixture(scope="module")
def _by_hand_once(tmp_path_factory: pytest.TempPathFactory) -> Handed:
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        fold = Fold(tmp_path_factory.mktemp("by-hand"))
        return Handed(fold, *by_hand(Cli(), fold))


@pytest.fixture
def fold_by_hand(_by_hand_once: Handed, tmp_path: Path) -> Handed:
    """A private copy of the fold after `by_hand` (stop, resolve by hand, continue), which the first
    steps of many tests here are: done once for this file, asserted there as in by_hand."""
    return _by_hand_once._replace(fold=_by_hand_once.fold.copy_to(tmp_path))


def union(cli: Cli, fold: Fold, verb: str, *args: str):
    return cli("union", verb, "u", *args, *fold.args())


def by_hand(cli: Cli, fold: Fold) -> tuple[str, bytes]:
    """Stop, resolve a.py (with an edit outside its hunks), edit non-conflicted b.py, continue."""
    assert union(cli, fold, "compose").exit_code == 3
    resolved = resolve_both(fold.scratch / "a.py", outside=b"line 10 edited by hand\n")
    (fold.scratch / "b.py").write_text("b1\nb3\nb4\nb5\nb6 by one\n")
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.stdout + result.stderr
    return fold.ref(), resolved  # type: ignore[return-value]


def test_resolved_by_hand_finishes_and_syncs_green(cli: Cli, fold_by_hand: Handed) -> None:
    fold, commit, resolved = fold_by_hand
    assert not fold.scratch.exists()
    code, report = cli.json("sync", *fold.args())
    assert code == 0 and report["ok"], report
    assert next(e for e in report["entries"] if e["id"] == "carry/u")["status"] == "applied"
    assert fold.show("refs/heads/dev", "a.py") == resolved
    assert fold.show("refs/heads/dev", "b.py") == b"b1\nb3\nb4\nb5\nb6 by one\n"
    assert fold.show("refs/heads/dev", "a.py") == fold.show(commit, "a.py")


def test_a_pr_moves_and_the_refold_asks_nothing(cli: Cli, fold_by_hand: Handed) -> None:
    fold, first, resolved = fold_by_hand
    moved = fold.up.commit({"c.txt": "c by one\n"}, "one: also c", parent=fold.pr1, ref="refs/pull/1/head")
    status = union(cli, fold, "status")
    assert f"stale: pr/1 folded at {fold.pr1[:12]}, now {moved[:12]}" in status.stdout
    assert "a refold would reuse recorded resolutions for: a.py, b.py" in status.stdout
    assert "a refold would ask nothing" in status.stdout
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.stdout + result.stderr
    second = fold.ref()
    assert second != first
    assert fold.show(second, "a.py") == resolved and fold.show(second, "c.txt") == b"c by one\n"
    assert fold.show(second, "b.py") == b"b1\nb3\nb4\nb5\nb6 by one\n"
    assert f"{{pr: 1, head: {moved}}}" in fold.manifest.read_text()
    assert "up to date" in union(cli, fold, "status").stdout
    assert cli("sync", *fold.args()).exit_code == 0


def test_a_second_clone_with_only_the_manifest_folder_folds_the_same_commit(cli: Cli, fold_by_hand: Handed,
                                                                            tmp_path: Path) -> None:
    fold, commit, _ = fold_by_hand
    assert commit == "cd62b25d89a6420080d3418cad1f9e6207a3bf0b"     # the same with git 2.39 and 2.47
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copytree(fold.manifest.parent, other / "carries")
    os.symlink(fold.root / "up", other / "up")              # the same upstream, seen from another machine
    work = init_repo(other / "work", bare=True).path
    result = cli("union", "compose", "u", "-m", other / "carries" / "manifest.yaml", "--repo", work)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert commit in result.stdout
    assert (other / "carries" / "unions" / "u.patch").read_bytes() == \
        (fold.manifest.parent / "unions" / "u.patch").read_bytes()


def test_a_fixup_that_no_longer_applies_stops_on_that_file_with_both_versions(cli: Cli, fold_by_hand: Handed) -> None:
    fold = fold_by_hand.fold                                    # recorded: b2 deleted from b.py
    fold.up.commit({"b.py": "b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\n"}, "one: b2",
                   parent=fold.pr1, ref="refs/pull/1/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "b.py  pr/1, pr/2  (your recorded edit outside the hunks no longer applies" in result.stdout
    assert "a.py" not in result.stdout.split("\n")[1]
    text = (fold.scratch / "b.py").read_text()
    assert "<<<<<<< the fold now" in text and "b2 changed by one" in text
    assert ">>>>>>> your recorded edit (pr/2)" in text
    assert (fold.scratch / "a.py").read_bytes().count(b"<<<<<<<") == 0
    (fold.scratch / "b.py").write_text("b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\nb7\n")
    assert union(cli, fold, "continue").exit_code == 0
    commit = fold.ref()
    assert union(cli, fold, "compose").exit_code == 0 and fold.ref() == commit


def test_two_folds_at_once_leave_one_writer(fold: Fold) -> None:
    args = ["union", "compose", "u", *fold.args()]
    env = {**os.environ}
    procs = [subprocess.Popen([sys.executable, "-m", "carrytool", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = sorted(code for code, _out, _err in outs)
    assert codes == [3, 4], outs          # the other: the lock held, or the fold under way (helper-128)
    stopped = [out for code, out, _err in outs if "the fold stopped on a conflict" in out]
    assert len(stopped) == 1, outs
    losers = [err for code, out, err in outs if "the fold stopped" not in out]
    assert "already under way" in losers[0] or "carrytool.lock" in losers[0]
    state = json.loads((fold.work / "carrytool" / "union" / "u" / "state.json").read_text())
    assert state["conflict"]["pr"] == 2 and (fold.scratch / "a.py").exists()


@pytest.mark.parametrize("point", ["stop:scratch", "cleanup:scratch"])
def test_kill_9_during_compose_or_abort_is_recoverable(cli: Cli, fold: Fold, point: str) -> None:
    # the killed command in its own process; the ones around it in this one (what they find is on disk)
    verb_env = {"CARRYTOOL_CRASH_AT": point}
    if point == "stop:scratch":
        proc = fold.run("union", "compose", "u", *fold.args(), env=verb_env)
        assert proc.returncode == -signal.SIGKILL
        result = union(cli, fold, "compose")                        # no state yet: the fold starts again
        assert result.exit_code == 3, result.stdout + result.stderr
    else:
        assert union(cli, fold, "compose").exit_code == 3
        proc = fold.run("union", "abort", "u", *fold.args(), env=verb_env)
        assert proc.returncode == -signal.SIGKILL
        result = union(cli, fold, "abort")
        assert result.exit_code == 0, result.stderr
        assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0


def test_a_failed_write_keeps_the_fold_and_a_retry_finishes(cli: Cli, fold: Fold) -> None:
    (fold.manifest.parent / "unions").write_text("a file where the patch folder should be\n")
    assert union(cli, fold, "compose").exit_code == 3
    resolved = resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue")
    assert result.exit_code == 4 and "cannot write" in result.stderr, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "patch: unions/u.patch" in fold.manifest.read_text() and "head:" not in fold.manifest.read_text()
    (fold.manifest.parent / "unions").unlink()
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert fold.show(fold.ref(), "a.py") == resolved


def test_next_steps_repeat_the_users_options_quoted(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fold = Fold(tmp_path / "my folder")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3
    quoted_m, quoted_repo = f"'{fold.manifest}'", f"'{fold.work}'"
    assert f"then:  carrytool union continue u -m {quoted_m} --repo {quoted_repo}\n" in result.stdout
    assert f"or:    carrytool union abort u -m {quoted_m} --repo {quoted_repo}\n" in result.stdout
    assert union(cli, fold, "abort").exit_code == 0
    monkeypatch.chdir(fold.work)                                  # the defaults: nothing to repeat
    monkeypatch.setenv("CARRYTOOL_MANIFEST", str(fold.manifest))
    result = cli("union", "compose", "u")
    assert result.exit_code == 3 and "then:  carrytool union continue u\n" in result.stdout
    result = cli("union", "compose", "nope")
    assert result.exit_code == 2 and "carrytool union new nope PR PR ..." in result.stderr


def test_union_status_text_shows_what_json_shows(cli: Cli, fold_by_hand: Handed) -> None:
    fold = fold_by_hand.fold
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two, v2\n"})}, "two: v2",
                   parent=fold.pr2, ref="refs/pull/2/head")
    [report] = json.loads(cli("union", "status", "u", *fold.args(), "--format", "json").stdout)
    assert report["refold"]["reused"] == ["b.py"]
    assert [(c["file"], c["hunks"]) for c in report["refold"]["needs_resolution"]] == [("a.py", 1)]
    text = union(cli, fold, "status").stdout
    assert "a refold would reuse recorded resolutions for: b.py" in text
    assert "a refold would stop and ask about:\n    a.py  pr/1, pr/2  (1 hunk without a recorded resolution)" \
        in text
    assert f"refold: carrytool union compose u -m {fold.manifest} --repo {fold.work}" in text


def test_the_commit_message_is_the_one_explain_drafts(cli: Cli, fold_by_hand: Handed) -> None:
    fold, commit, _ = fold_by_hand
    raw = subprocess.run(["git", "cat-file", "commit", commit], cwd=fold.work, capture_output=True,
                         text=True).stdout
    message = raw.split("\n\n", 1)[1]
    drafted = cli("explain", "carry/u", "--format", "commit-message", "--offline", *fold.args()).stdout
    assert message == drafted
    assert "  #1 one: fix f\n" in message and f"onto {fold.base}:" in message


# -- union new ----------------------------------------------------------------------------------------
def test_union_new_adds_the_entry_keeping_comments_and_folds(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_text()
    result = cli("union", "new", "u", "1", "2", *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    after = fold.manifest.read_text()
    assert after == before + "  - carry: u\n    patch: unions/u.patch\n    supersedes: [1, 2]\n"
    assert f"then:  carrytool union continue u -m {fold.manifest} --repo {fold.work}" in result.stdout
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    text = fold.manifest.read_text()
    assert text.startswith("# the fork's manifest (a comment to keep)\n") and "- pr: 1   # first fix\n" in text
    assert f"{{pr: 2, head: {fold.pr2}}}" in text
    assert cli("sync", *fold.args()).exit_code == 0
    again = cli("union", "new", "u", "1", "2", *fold.args())
    assert again.exit_code == 2 and "already in" in again.stderr
    status = union(cli, fold, "status")           # a patch union has no commit: its patch is named
    assert status.stdout.startswith(f"carry/u from unions/u.patch on upstream {fold.base[:12]}: up to date\n"), \
        status.stdout


def test_union_new_beside_a_fold_under_way_from_another_manifest_leaves_it_as_it_was(cli: Cli,
                                                                                  tmp_path: Path) -> None:
    """helper-130: a fold of the union stopped from one manifest; `union new` of the same union from a copy
    of it said "added carry/u", stopped (exit 4: the fold under way) and left the entry in the copy, since
    the state it found made it take that fold for its own."""
    fold = Fold(tmp_path, union="")
    copy = fold.manifest.with_name("copy.yaml")
    copy.write_bytes(fold.manifest.read_bytes())
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    result = cli("union", "new", "u", "1", "2", "-m", str(copy), "--repo", str(fold.work))
    assert result.exit_code == 4 and "already under way" in result.stderr, result.stdout + result.stderr
    assert copy.read_bytes() == fold.manifest.read_bytes().split(b"  - carry: u")[0]
    assert "took carry/u out of" in result.stdout + result.stderr


def test_union_new_beside_its_own_fold_under_way_keeps_the_entry_that_fold_needs(cli: Cli, tmp_path: Path) -> None:
    """helper-131: the entry taken out by hand while the fold is stopped, `union new` puts it back and stops
    on the fold under way (exit 4): the entry stays, since that fold, from this manifest, needs it, and
    `continue` goes on (it was taken out again, and each command's hint named the other)."""
    fold = Fold(tmp_path, union="")
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    text = fold.manifest.read_text()
    fold.manifest.write_text(text[:text.index("  - carry: u")])
    again = cli("union", "new", "u", "1", "2", *fold.args())
    assert again.exit_code == 4 and "carry: u" in fold.manifest.read_text(), again.stdout + again.stderr
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0


def test_union_new_and_compose_keep_a_crlf_manifest_crlf(cli: Cli, tmp_path: Path) -> None:
    """A manifest with CRLF line ends (a Windows checkout) was written back by `union new` with LF on every
    line (an older note): every line of the user's file changed. Its lines keep their ends, the added
    ones end as the file's do, through new, continue and a refold that sets a PR's head."""
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_bytes().replace(b"\n", b"\r\n")
    fold.manifest.write_bytes(before)
    result = cli("union", "new", "u", "1", "2", *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    after = fold.manifest.read_bytes()
    assert after == before + b"  - carry: u\r\n    patch: unions/u.patch\r\n    supersedes: [1, 2]\r\n"
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    text = fold.manifest.read_bytes()
    assert text.count(b"\n") == text.count(b"\r\n") and f"{{pr: 2, head: {fold.pr2}}}".encode() in text
    assert text.startswith(before.split(b"  - carry: u")[0].splitlines(keepends=True)[0])
    assert cli("sync", *fold.args()).exit_code == 0


def test_union_new_with_a_commit_and_partial_paths(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, union="")
    result = cli("union", "new", "u", "1", "2", "--commit", "--paths", "1=b.py", *fold.args())
    assert result.exit_code == 0, result.stdout + result.stderr   # only b.py of pr/1: no conflict
    text = fold.manifest.read_text()
    commit = fold.ref()
    assert f"  - carry: u\n    commit: {commit}   # carrytool union compose sets it\n" in text
    assert "      - {pr: 1, paths: [b.py], head: " in text
    assert "git push <fork.url>" in result.stdout
    bad = cli("union", "new", "v", "1", "--paths", "3=x", *fold.args())
    assert bad.exit_code == 2 and "pr/3 is not one of the union's PRs" in bad.stderr


def test_a_sync_conflict_hint_says_union_new(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, union="")
    text = fold.manifest.read_text().replace("  - pr: 2\n", "  - pr: 2\n    on_conflict: fail\n")
    fold.manifest.write_text(text)
    result = cli("sync", *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    assert f"`carrytool union new NAME 1 2 -m {fold.manifest} --repo {fold.work}` starts it" in result.stdout


def test_a_slow_fold_holder_is_waited_for(fold: Fold) -> None:
    from carrytool.gitlayer.repolock import RepoLock

    lock = RepoLock(fold.work)
    lock.__enter__()
    proc = subprocess.Popen([sys.executable, "-m", "carrytool", "union", "compose", "u", "--wait", "30",
                             *fold.args()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert proc.poll() is None
    lock.__exit__()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out + err


@pytest.mark.parametrize("delay", [0.2, 0.45, 0.7, 1.0])
def test_kill_9_at_a_moment_of_continue_loses_nothing(cli: Cli, fold: Fold, delay: float) -> None:
    # the killed `continue` in its own process; the commands around it in this one (they read what is on disk)
    assert union(cli, fold, "compose").exit_code == 3
    resolved = resolve_both(fold.scratch / "a.py", outside=b"line 10 by hand\n")
    (fold.scratch / "new.txt").write_text("new\n")
    proc = subprocess.Popen([sys.executable, "-m", "carrytool", "union", "continue", "u", *fold.args()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    if proc.returncode != 0:                  # killed: the next run resumes, or says the fold had finished
        again = union(cli, fold, "continue")
        assert again.exit_code == 0 or (again.exit_code == 2 and "no fold of carry/u under way" in again.stderr), \
            again.stdout + again.stderr
    commit = fold.ref()
    assert fold.show(commit, "a.py") == resolved and fold.show(commit, "new.txt") == b"new\n"
    assert fold.show(commit, "b.py").endswith(b"b6 by one\n")
    refold = union(cli, fold, "compose")
    assert refold.exit_code == 0 and fold.ref() == commit, refold.stdout + refold.stderr


def test_union_new_refuses_a_scratch_with_files_before_touching_the_manifest(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_text()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep").write_text("keep\n")
    result = cli("union", "new", "u", "1", "2", "--scratch", mine, *fold.args())
    assert result.exit_code == 2 and fold.manifest.read_text() == before
    assert (mine / "keep").read_text() == "keep\n"


def test_union_new_of_a_pr_upstream_does_not_have_leaves_the_manifest_as_it_was(cli: Cli, tmp_path: Path) -> None:
    """A fold that fails before it starts (upstream has no such PR) takes the entry out again: a manifest
    naming a patch nothing wrote would fail every sync, and `union new` of the same PRs would be refused
    as superseded twice (a new user's trial on fastapi)."""
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_text()
    result = cli("union", "new", "u", "99999", "2", *fold.args())
    assert result.exit_code == 2 and "upstream has no refs/pull/99999/head" in result.stderr
    assert "took carry/u out of" in result.stderr
    # helper-102: the hint named the supersedes of an entry no longer in the manifest
    stderr = " ".join(result.stderr.split())
    assert "check the PR numbers given to `carrytool union new`" in stderr and "supersedes" not in stderr, stderr
    assert fold.manifest.read_text() == before and not (fold.manifest.parent / "unions").exists()
    again = cli("union", "new", "u", "1", "2", *fold.args())
    assert again.exit_code == 3, again.stdout + again.stderr    # the fold stops on its conflict, as before
    assert fold.manifest.read_text() == before + "  - carry: u\n    patch: unions/u.patch\n    supersedes: [1, 2]\n"


def test_union_new_on_an_upstream_missing_a_blob_names_its_path_and_the_fetch(cli: Cli, tmp_path: Path) -> None:
    """Upstream's tree names a blob the repository lacks (helper-123: a partial jax mirror): the stop could
    not write its scratch tree, and the error named the object alone. It names the path, that upstream has
    it, and the fetch that brings it; exit 4 as before, no scratch left, the manifest as it was."""
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_text()
    work = Repo(fold.work)
    work.git("fetch", "-q", str(fold.up.path), "main:refs/carrytool/dev/upstream",
             "refs/pull/1/head:refs/carrytool/dev/pr/1", "refs/pull/2/head:refs/carrytool/dev/pr/2")
    gone = "f866c53" + "0" * 33
    vendor = work.git("mktree", "--missing", input=f"100644 blob {gone}\tblob.bin\n".encode())
    tree = work.git("mktree", input=f"{work.git('ls-tree', fold.base)}\n040000 tree {vendor}\tvendor\n".encode())
    upstream = work.git("commit-tree", tree, "-p", fold.base, "-m", "vendor a blob")
    work.git("update-ref", "refs/carrytool/dev/upstream", upstream)
    result = cli("union", "new", "u", "1", "2", "--offline", *fold.args())
    stderr = " ".join(result.stderr.split())
    assert result.exit_code == 4, result.stdout + result.stderr
    assert f"vendor/blob.bin (blob {gone}, as upstream main at {upstream[:12]} has it) is missing" in stderr, stderr
    assert f"`git -C {fold.work} fetch --refetch {fold.up.path} refs/heads/main`" in stderr, stderr
    assert fold.manifest.read_text() == before and not fold.scratch.exists()


def test_a_file_git_moves_out_of_a_directory_s_way_names_the_pr_whose_directory_it_is(cli: Cli, tmp_path: Path) -> None:
    """PR 3 adds plans/x.txt, PR 4 a file `plans`: git moves PR 4's file aside (`plans~<side>`, a name
    no PR has). Both lines of the stop name PR 3, whose directory is in the way, and PR 4."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    fold.up.commit({"plans/x.txt": "x\n"}, "three: a plans folder", parent=fold.base, ref="refs/pull/3/head")
    fold.up.commit({"plans": "one plan\n"}, "four: a plans file", parent=fold.base, ref="refs/pull/4/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3, result.stdout + result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  plans")}
    moved = [path for path in lines if path.startswith("plans~")]
    assert len(moved) == 1 and (fold.scratch / moved[0]).read_text() == "one plan\n"
    for path in ("plans", moved[0]):
        assert lines[path].split()[1:3] == ["pr/3,", "pr/4"], result.stdout


def _stopped_lines(cli: Cli, fold: Fold) -> dict[str, str]:
    result = union(cli, fold, "compose")
    assert result.exit_code == 3, result.stdout + result.stderr
    return {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  ")
            and not line.startswith("   ")}


def test_a_conflict_with_upstream_alone_names_no_pr_that_only_changed_upstream_s_directory(cli: Cli,
                                                                                          tmp_path: Path) -> None:
    """Upstream adds plans/x.txt and plans/y.txt; PR 3, on that upstream, edits plans/y.txt; PR 4, on the
    old base, adds a file `plans`. PR 4 meets upstream's directory with or without PR 3: PR 3 is not
    named (an adversarial review's case: it was, from the pair merge, which conflicts by upstream's doing)."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    new = fold.up.commit({"plans/x.txt": "x\n", "plans/y.txt": "y\n"}, "upstream plans", parent=fold.base,
                         ref="refs/heads/main")
    fold.up.commit({"plans/y.txt": "y by three\n"}, "three: edit y", parent=new, ref="refs/pull/3/head")
    fold.up.commit({"plans": "one plan\n"}, "four: a plans file", parent=fold.base, ref="refs/pull/4/head")
    lines = _stopped_lines(cli, fold)
    named = {path: line.split()[1] for path, line in lines.items() if path.startswith("plans")}
    assert len(named) == 2 and set(named.values()) == {"pr/4"}, lines


def test_a_content_conflict_with_upstream_names_no_pr_that_changed_other_lines(cli: Cli, tmp_path: Path) -> None:
    """Upstream changes line 20 of a.py; PR 4, on the old base, changes it too; PR 3, on upstream, changed
    line 5 only. The conflict is PR 4's with upstream: PR 3 is not named (the pair merge of PR 3 on
    upstream with PR 4 conflicts too, by upstream's doing, and named it)."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    new = fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream 20", parent=fold.base,
                         ref="refs/heads/main")
    fold.up.commit({"a.py": edited({5: "line 5 by three\n", 20: "line 20 upstream\n"})}, "three: 5", parent=new,
                   ref="refs/pull/3/head")
    fold.up.commit({"a.py": edited({20: "line 20 by four\n"})}, "four: 20", parent=fold.base, ref="refs/pull/4/head")
    line = _stopped_lines(cli, fold)["a.py"]
    assert line.split()[1] == "pr/4" and "pr/3" not in line, line
    assert "pr/4 with upstream main alone" in line, line          # said, as sync says it (a new user's trial)
    shown = (fold.scratch / "a.py").read_text()
    assert "<<<<<<< the union so far (upstream main, pr/3)" in shown     # upstream's line is not pr/3's


def test_a_content_conflict_with_upstream_names_the_pr_that_changed_those_lines(cli: Cli, tmp_path: Path) -> None:
    """As above, but PR 3 rewrote line 20 itself (on upstream's version): its change meets PR 4's conflict
    with upstream, so it is named."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    new = fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream 20", parent=fold.base,
                         ref="refs/heads/main")
    fold.up.commit({"a.py": edited({20: "line 20 by three\n"})}, "three: 20", parent=new, ref="refs/pull/3/head")
    fold.up.commit({"a.py": edited({20: "line 20 by four\n"})}, "four: 20", parent=fold.base, ref="refs/pull/4/head")
    line = _stopped_lines(cli, fold)["a.py"]
    assert line.split()[1:3] == ["pr/3,", "pr/4"], line


def test_a_conflict_with_upstream_names_the_pr_that_deleted_the_file(cli: Cli, tmp_path: Path) -> None:
    """Upstream changes line 20 of a.py; PR 3, on upstream, deletes a.py; PR 4, on the old base, changes
    line 20: the modify/delete is PR 3's doing too, though no line of its meets the conflict."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    new = fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream 20", parent=fold.base,
                         ref="refs/heads/main")
    fold.up.commit({"a.py": None}, "three: no a.py", parent=new, ref="refs/pull/3/head")
    fold.up.commit({"a.py": edited({20: "line 20 by four\n"})}, "four: 20", parent=fold.base, ref="refs/pull/4/head")
    line = _stopped_lines(cli, fold)["a.py"]
    assert line.split()[1:3] == ["pr/3,", "pr/4"], line


def test_a_conflict_with_upstream_names_the_prs_whose_union_so_far_meets_it_together(cli: Cli,
                                                                                       tmp_path: Path) -> None:
    """PRs 3 and 4 (on upstream) change line 17, each its own way; their hunk is resolved and line 19 edited
    by hand. PR 5, on the old base, changes line 20, which upstream changed: neither PR alone meets that
    conflict, but the union so far does (line 19): both are named, as sync names them."""
    entries = "  - pr: 3\n  - pr: 4\n  - pr: 5\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4, 5]\n"
    fold = Fold(tmp_path, union=entries)
    new = fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream 20", parent=fold.base,
                         ref="refs/heads/main")
    for pr in (3, 4):
        fold.up.commit({"a.py": edited({17: f"line 17 by {pr}\n", 20: "line 20 upstream\n"})}, f"{pr}: 17", parent=new,
                       ref=f"refs/pull/{pr}/head")
    fold.up.commit({"a.py": edited({20: "line 20 by five\n"})}, "five: 20", parent=fold.base, ref="refs/pull/5/head")
    assert union(cli, fold, "compose").exit_code == 3
    path = fold.scratch / "a.py"
    parts = split_conflicts(path.read_bytes())
    assert parts is not None
    path.write_bytes(b"\n".join(p if isinstance(p, bytes) else b"line 17 by 3 and 4" for p in parts)
                     .replace(b"line 19\n", b"line 19 by hand\n"))
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("  a.py "))
    assert line.split()[1:4] == ["pr/3,", "pr/4,", "pr/5"], result.stdout


def _next_stop_keeping_ours(cli: Cli, fold: Fold, path: str):  # noqa: ANN202
    """Compose (it stops on a.py), resolve each hunk of a.py as upstream had it, continue (it stops
    again): the line naming PATH of that second stop, and the result."""
    assert union(cli, fold, "compose").exit_code == 3
    file = fold.scratch / "a.py"
    parts = split_conflicts(file.read_bytes())
    assert parts is not None
    file.write_bytes(b"\n".join(p if isinstance(p, bytes) else p.ours for p in parts))
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.stdout + result.stderr
    return next(x for x in result.stdout.splitlines() if x.startswith(f"  {path} ")), result


def test_a_conflict_with_upstream_names_no_pr_whose_own_conflict_with_upstream_was_resolved_away(
        cli: Cli, tmp_path: Path) -> None:
    """PR 3, on the old base, changes lines 5 and 20 and conflicts with upstream at 20, resolved by keeping
    upstream's line; PR 4 changes line 20 too. PR 3's own merge onto upstream is no clean change to weigh:
    as sync leaves such an entry out, PR 4's conflict with upstream names PR 4 alone."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries)
    fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream 20", parent=fold.base,
                   ref="refs/heads/main")
    fold.up.commit({"a.py": edited({5: "line 5 by three\n", 20: "line 20 by three\n"})}, "three", parent=fold.base,
                   ref="refs/pull/3/head")
    fold.up.commit({"a.py": edited({20: "line 20 by four\n"})}, "four: 20", parent=fold.base, ref="refs/pull/4/head")
    line, result = _next_stop_keeping_ours(cli, fold, "a.py")
    assert line.split()[1] == "pr/4" and "pr/3" not in line, result.stdout


def test_a_conflict_with_upstream_names_a_pr_whose_own_conflict_with_upstream_was_in_another_file(
        cli: Cli, tmp_path: Path) -> None:
    """Upstream changes c.py line 10, then a.py line 20. PR 3, on the first of those, changes a.py line 20
    (a conflict with upstream, resolved by hand) and c.py line 11; PR 4, on the old base, changes c.py line
    10, which upstream changed: PR 3's line 11 is in that conflict. PR 3 merged onto upstream cleanly in
    c.py: its conflict in a.py does not make its change to c.py any less a part of the union, so it is named."""
    entries = "  - pr: 3\n  - pr: 4\n  - carry: u\n    patch: unions/u.patch\n    supersedes: [3, 4]\n"
    fold = Fold(tmp_path, union=entries, extra={"c.py": A_BASE})
    first = fold.up.commit({"c.py": edited({10: "line 10 upstream\n"})}, "upstream c10", parent=fold.base)
    fold.up.commit({"a.py": edited({20: "line 20 upstream\n"})}, "upstream a20", parent=first,
                   ref="refs/heads/main")
    fold.up.commit({"a.py": edited({20: "line 20 by three\n"}),
                    "c.py": edited({10: "line 10 upstream\n", 11: "line 11 by three\n"})}, "three", parent=first,
                   ref="refs/pull/3/head")
    fold.up.commit({"c.py": edited({10: "line 10 by four\n"})}, "four: c10", parent=fold.base,
                   ref="refs/pull/4/head")
    line, result = _next_stop_keeping_ours(cli, fold, "c.py")
    assert line.split()[1:3] == ["pr/3,", "pr/4"], result.stdout


def test_a_file_both_prs_add_is_shown_in_the_scratch_as_git_merges_it(cli: Cli, tmp_path: Path) -> None:
    """Two PRs add notes.txt with other first lines: the scratch tree's notes.txt is git's add/add merge,
    line for line (its conflict starts the file: no empty line above it), and resolved as shown, the union
    holds no line neither PR has (a new user's trial on pylint found one at the top)."""
    fold = Fold(tmp_path, union="")
    fold.up.commit({"notes.txt": "one a\none b\n\nClosing\n"}, "one adds notes", parent=fold.pr1,
                   ref="refs/pull/1/head")
    fold.up.commit({"notes.txt": "two\n\nClosing\n"}, "two adds notes", parent=fold.pr2, ref="refs/pull/2/head")
    result = cli("union", "new", "u", "1", "2", *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    shown = (fold.scratch / "notes.txt").read_bytes()
    assert shown.startswith(b"<<<<<<< ") and shown.endswith(b"\n\nClosing\n") and b"\n\n\n" not in shown
    assert shown.split(b"\n")[1:5] == [b"one a", b"one b", b"=======", b"two"]
    (fold.scratch / "notes.txt").write_bytes(b"one a\none b\ntwo\n\nClosing\n")
    resolve_both(fold.scratch / "a.py")
    done = union(cli, fold, "continue")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert fold.up.git("--git-dir", str(fold.work), "show", f"{fold.ref()}:notes.txt") == "one a\none b\ntwo\n\nClosing"


def test_abort_of_a_fold_union_new_started_takes_its_entry_out_again(cli: Cli, tmp_path: Path) -> None:
    """`union new` stops on a conflict; the user aborts: the manifest is as it was before (the entry it
    added named a patch nothing wrote, and every sync failed on it: a new user's trial on pylint). A
    manifest the user edited since stays as it is."""
    fold = Fold(tmp_path, union="")
    before = fold.manifest.read_text()
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    aborted = union(cli, fold, "abort")
    assert aborted.exit_code == 0 and "took carry/u out of" in aborted.stdout
    assert fold.manifest.read_text() == before
    code, _report = cli.json("sync", *fold.args(), "--dry-run")
    assert code == 3                              # pr/1 and pr/2 conflict, as before: no exit 2 on a patch
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    fold.manifest.write_text(fold.manifest.read_text() + "# mine\n")
    kept = union(cli, fold, "abort")
    assert kept.exit_code == 0 and "took" not in kept.stdout and fold.manifest.read_text().endswith("# mine\n")
    assert "carry: u" in fold.manifest.read_text()
    assert union(cli, fold, "compose").exit_code == 3 and union(cli, fold, "abort").exit_code == 0
    assert "carry: u" in fold.manifest.read_text()      # a fold `union compose` started takes nothing out


def _strings(value: object) -> list[str]:
    """Every string in VALUE (a JSON document), keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for k, v in value.items() for text in _strings(k) + _strings(v)]
    return [text for item in value for text in _strings(item)] if isinstance(value, list) else []


def _base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        return False
    return bool(text)


def test_a_stopped_fold_keeps_no_copy_of_the_manifest_and_abort_still_puts_it_back(cli: Cli, tmp_path: Path) -> None:
    """What `union new` changed is all a stopped fold's state keeps of the manifest: a credential written
    anywhere in it (a URL with a token) is not copied into the git dir, and abort puts the manifest back byte
    for byte from the one on disk. A state an earlier carrytool wrote (the whole manifest) still does."""
    fold = Fold(tmp_path, union="")
    secret = "https://fork-bot:ghp_s3cr3tT0k3n@example.com/fork.git"
    fold.manifest.write_text(f"# mirror: {secret}\n" + fold.manifest.read_text() + "# end of the entries\n")
    before = fold.manifest.read_bytes()
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    state_path = fold.work / "carrytool" / "union" / "u" / "state.json"
    held = _strings(json.loads(state_path.read_text()))
    held += [base64.b64decode(text, validate=True).decode("latin-1") for text in held if _base64(text)]
    assert not [text for text in held if "ghp_s3cr3tT0k3n" in text or "end of the entries" in text]
    aborted = union(cli, fold, "abort")
    assert aborted.exit_code == 0 and "took carry/u out of" in aborted.stdout
    assert fold.manifest.read_bytes() == before
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3      # as an earlier carrytool kept it
    doc = json.loads(state_path.read_text())
    doc["added"] = {"before": base64.b64encode(before).decode(), "written": doc["added"]["written"]}
    state_path.write_text(json.dumps(doc))
    assert union(cli, fold, "abort").exit_code == 0 and fold.manifest.read_bytes() == before


@pytest.mark.parametrize("kind", ["patch", "commit"])
def test_a_sync_while_a_fold_is_stopped_says_so(cli: Cli, tmp_path: Path, kind: str) -> None:
    """Between `union new` stopping and `union continue`, a sync finds no patch (or no commit): it says the
    fold is stopped and how to go on, not only that a file or commit is missing (a new user's trial)."""
    fold = Fold(tmp_path, union="")
    assert cli("union", "new", "u", "1", "2", *fold.args(), *(["--commit"] if kind == "commit" else [])).exit_code == 3
    result = cli("sync", *fold.args(), "--dry-run")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert ("cannot read patch unions/u.patch" if kind == "patch" else "carry/u: commit") in result.stderr
    assert "its fold is stopped on a conflict" in result.stderr and "carrytool union continue u" in result.stderr
    assert union(cli, fold, "abort").exit_code == 0


FILL = "".join(f"fill {i}\n" for i in range(1, 9))


def _with_f(tmp_path: Path, base: str, one: str, two: str) -> Fold:
    """The fold scenario with f.txt, which both PRs change too (BASE, ONE, TWO)."""
    fold = Fold(tmp_path, union="", extra={"f.txt": base})
    fold.pr1 = fold.up.commit({"f.txt": one}, "one f", parent=fold.pr1, ref="refs/pull/1/head")
    fold.pr2 = fold.up.commit({"f.txt": two}, "two f", parent=fold.pr2, ref="refs/pull/2/head")
    return fold


def test_a_hunk_resolved_to_one_empty_line_stays_one_when_another_hunk_is_asked_again(cli: Cli, tmp_path: Path) -> None:
    """f.txt's first hunk resolved to one empty line, the second to both sides; pr/2 then changes its side
    of the second: the refold asks about that one only and puts the first back as recorded, one empty line
    (taken out and one empty line are told apart: an adversarial review found the line lost)."""
    fold = _with_f(tmp_path, "h\nx\n" + FILL + "y\nt\n", "h\none\n" + FILL + "ONE\nt\n", "h\ntwo\n" + FILL + "TWO\nt\n")
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    (fold.scratch / "f.txt").write_text("h\n\n" + FILL + "ONE\nTWO\nt\n")
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    assert fold.show(fold.ref(), "f.txt") == ("h\n\n" + FILL + "ONE\nTWO\nt\n").encode()
    fold.up.commit({"f.txt": "h\ntwo\n" + FILL + "TWO v2\nt\n"}, "two v2", parent=fold.pr2, ref="refs/pull/2/head")
    assert union(cli, fold, "compose").exit_code == 3
    shown = (fold.scratch / "f.txt").read_text()
    assert shown.startswith("h\n\nfill 1\n") and shown.count("<<<<<<<") == 1, shown
    start, end = shown.index("<<<<<<<"), shown.index("\n", shown.index(">>>>>>>")) + 1
    (fold.scratch / "f.txt").write_text(shown[:start] + "ONE\nTWO v2\n" + shown[end:])
    assert union(cli, fold, "continue").exit_code == 0
    assert fold.show(fold.ref(), "f.txt") == ("h\n\n" + FILL + "ONE\nTWO v2\nt\n").encode()


def test_records_of_an_older_store_are_put_back_as_that_version_put_them_back(cli: Cli, tmp_path: Path) -> None:
    """A store recorded before `lines` (a resolution of "" was one empty line then): a refold after an
    upgrade gives the union's bytes as before (an adversarial review found a line lost silently)."""
    fold = _with_f(tmp_path, FILL + "a\nx\nb\n" + FILL, FILL + "a\none\nb\n" + FILL, FILL + "a\ntwo\nb\n" + FILL)
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    user = (FILL + "a\n\nb\n" + FILL).encode()
    (fold.scratch / "f.txt").write_bytes(user)
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    store = fold.manifest.parent / "resolutions" / "u"
    records = [p for p in store.glob("*.json") if json.loads(p.read_text())["file"] == "f.txt"]
    [record] = records
    doc = json.loads(record.read_text())
    assert (doc["resolution"], doc["lines"]) == ("", 1)
    del doc["lines"]                                   # as the older version wrote it
    record.write_text(json.dumps(doc, indent=2) + "\n")
    fold.up.commit({"c.txt": "c by one\n"}, "one: also c", parent=fold.pr1, ref="refs/pull/1/head")
    refold = union(cli, fold, "compose")
    assert refold.exit_code == 0, refold.stdout + refold.stderr
    assert fold.show(fold.ref(), "f.txt") == user


def test_abort_with_a_linked_manifest_aborts_and_says_the_entry_stays(cli: Cli, tmp_path: Path) -> None:
    """The manifest became a link since `union new` (carrytool writes through no link): the fold is aborted
    all the same and the output says the entry stays (an adversarial review: it exited 2 with the fold
    already gone, and a second abort found nothing to do)."""
    fold = Fold(tmp_path, union="")
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    real = fold.manifest.with_name("real.yaml")
    fold.manifest.rename(real)
    fold.manifest.symlink_to(real.name)
    aborted = union(cli, fold, "abort")
    assert aborted.exit_code == 0, aborted.stdout + aborted.stderr
    assert "aborted the fold of carry/u" in aborted.stdout and "left carry/u in" in aborted.stderr
    assert "carry: u" in real.read_text() and fold.manifest.is_symlink()
    assert union(cli, fold, "abort").exit_code == 2          # nothing under way any more


def test_a_file_of_crlf_lines_is_resolved_hunk_by_hunk_and_refolded_without_a_question(cli: Cli,
                                                                                      tmp_path: Path) -> None:
    """git ends the marker lines of a file of CRLF lines with CR too: its hunks are named, labelled (the CR
    kept) and recorded one by one, and a refold after a PR moved elsewhere asks nothing and gives the same
    bytes (an adversarial review: such a file was one whole-file edit, and every refold stopped on it)."""
    crlf = FILL.replace("\n", "\r\n")
    fold = _with_f(tmp_path, crlf + "a\r\nx\r\nb\r\n", crlf + "a\r\none\r\nb\r\n", crlf + "a\r\ntwo\r\nb\r\n")
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    shown = (fold.scratch / "f.txt").read_bytes()
    assert b"<<<<<<< the union so far (upstream main, pr/1)\r\n" in shown and b">>>>>>> pr/2\r\n" in shown
    user = (crlf + "a\r\none\r\ntwo\r\nb\r\n").encode()
    (fold.scratch / "f.txt").write_bytes(user)
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    store = fold.manifest.parent / "resolutions" / "u"
    assert any(json.loads(p.read_text())["file"] == "f.txt" for p in store.glob("*.json"))   # a hunk record
    fold.up.commit({"c.txt": "c by one\n"}, "one: also c", parent=fold.pr1, ref="refs/pull/1/head")
    refold = union(cli, fold, "compose")
    assert refold.exit_code == 0, refold.stdout + refold.stderr
    assert fold.show(fold.ref(), "f.txt") == user


def test_a_pr_added_to_supersedes_by_hand_is_not_up_to_date(cli: Cli, tmp_path: Path) -> None:
    """helper-73: a PR added to a folded union's `supersedes` by hand (to refold later) was skipped as
    superseded while the union never had its change: sync said ok without a word, and `union status` said
    "up to date". The union's patch names the PRs it was composed with (`Carry-Supersedes:`): both say it."""
    fold = Fold(tmp_path, union="  - carry: u\n    patch: unions/u.patch\n    supersedes: [1]\n")
    assert union(cli, fold, "compose").exit_code == 0
    text = fold.manifest.read_text()
    assert "supersedes: [{pr: 1, head: " in text
    fold.manifest.write_text(text.replace("supersedes: [", "supersedes: [2, "))
    status = union(cli, fold, "status").stdout
    assert "up to date" not in status
    assert "pr/2 is in supersedes, but the union was not composed with it (its Carry-Supersedes does not name it): " \
           f"refold: carrytool union compose u -m {fold.manifest} --repo {fold.work}" in status
    [report] = json.loads(cli("union", "status", "u", *fold.args(), "--format", "json").stdout)
    assert report["not_composed"] == [2]
    code, synced = cli.json("sync", *fold.args())
    assert code == 0 and [(w["entry"], w["file"]) for w in synced["warnings"] if w["kind"] == "provided-absent"] \
        == [("pr/2", "a.py")]
    assert union(cli, fold, "compose").exit_code == 3      # the refold it names: pr/1 and pr/2 conflict in a.py


def test_an_edit_outside_the_hunks_survives_a_refold_that_asks_again(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-76: a recorded edit outside the conflict hunks (a fixup) "waited" while a moved PR brought a
    new hunk in the same file: the scratch tree did not have it, and `union continue` recorded the file as
    the user left it, dropping the fixup from the store: the union lost the edit without a word. It is
    applied beside the new hunks (3-way), so the user keeps it, and it is recorded again."""
    fold = fold_by_hand.fold
    assert b"line 10 edited by hand\n" in fold.show(fold.ref(), "a.py")
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two, v2\n"})}, "two: v2",
                   parent=fold.pr2, ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3, result.output
    assert "your recorded edit outside the conflict hunks (pr/2) is applied in the scratch tree" in result.output
    shown = (fold.scratch / "a.py").read_bytes()
    assert b"line 10 edited by hand\n" in shown and b"<<<<<<< " in shown
    (fold.scratch / "a.py").write_bytes(re.sub(rb"<<<<<<< [^\n]*\n.*?=======\n(.*?)>>>>>>> [^\n]*\n", rb"\1",
                                               shown, flags=re.S))     # the new hunk: take pr/2's side
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.output
    first = fold.show(fold.ref(), "a.py")
    assert b"line 10 edited by hand\n" in first and b"line 15 by two, v2\n" in first
    assert union(cli, fold, "compose").exit_code == 0         # again: asks nothing, and keeps the edit
    assert fold.show(fold.ref(), "a.py") == first


def test_a_refold_says_conflicts_resolved_and_edits_applied_apart(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-159: "2 conflicted files resolved from the store" where one of the two was a recorded edit of a
    file that had no conflict (celery/apps/beat.py): a.py conflicts, b.py only got the edit made at the stop."""
    fold = fold_by_hand.fold
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.output
    assert "; 1 conflicted file resolved from the store; your recorded edit applied in 1 file with no " \
           "conflict (b.py)\n" in result.stdout, result.stdout


def _records(fold: Fold) -> list[dict]:
    folder = fold.manifest.parent / "resolutions" / "u"
    return sorted((json.loads(p.read_text()) for p in folder.glob("*.json")), key=lambda d: d["key"])


def _fixups(fold: Fold) -> list[dict]:
    folder = fold.manifest.parent / "resolutions" / "u" / "fixups"
    return sorted((json.loads(p.read_text()) for p in folder.glob("*.json")), key=lambda d: (d["item"], d["file"]))


def test_an_edit_that_no_longer_applies_beside_a_new_hunk_waits_and_is_kept(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-77: merged 3-way into a file holding conflict markers, an edit that met a new hunk nested its
    markers in the hunk's, and `continue` recorded a made-up hunk (the real one was asked again at every
    refold). It waits instead: the scratch shows the new hunks alone, the message shows the edit to redo,
    and the store keeps it when it is not redone: `continue` refuses (h198, h202: it exited 0 on a union
    without the edit, and the next refold with the same inputs stopped on it; test_union_held_back)."""
    fold = fold_by_hand.fold
    before = [d for d in _fixups(fold) if d["file"] == "a.py"]
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 10: "line 10 by two v2\n", 15: "line 15 by two, v2\n"})},
                   "two: v2", parent=fold.pr2, ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3
    assert "your recorded edit outside the conflict hunks (pr/2) does not apply beside the new hunks" in result.output
    assert "-line 10\n+line 10 edited by hand\n" in result.output
    shown = (fold.scratch / "a.py").read_bytes()
    assert shown.count(b"<<<<<<< ") == shown.count(b">>>>>>> ") == 1 and b"edited by hand" not in shown
    (fold.scratch / "a.py").write_bytes(re.sub(rb"<<<<<<< [^\n]*\n.*?=======\n(.*?)>>>>>>> [^\n]*\n", rb"\1",
                                               shown, flags=re.S))
    result = union(cli, fold, "continue")
    assert result.exit_code == 3 and "a.py: your recorded edit outside the conflict hunks (pr/2) is not in the " \
        "file as you left it" in result.output and "-line 10\n+line 10 edited by hand\n" in result.output
    assert [d for d in _fixups(fold) if d["file"] == "a.py"] == before       # kept: redo it, or drop it by name


@pytest.mark.parametrize("how", ["redo", "redo-in-hunk", "other-line"])
def test_a_waiting_edit_at_continue(cli: Cli, fold_by_hand: Handed, how: str) -> None:
    """helper-78: a waiting edit the user redid as told was kept twice; one the user did not redo but who
    edited another line of the file was replaced without a word. Redone, it is recorded once and the
    refold asks nothing; not redone, `continue` refuses (h207: nothing goes unless the user says so), and
    dropped by name (`--drop-edit`) the note shows what goes. redo-in-hunk (helper-89: `redo` alone passed
    without the fix, the store keeping one fixup per PR and file): pr/1 moves onto line 10 too, so the edit
    waits on a new hunk there and its redo is that hunk's resolution; the fixup that waited goes, the edit
    is not kept a second time as a fixup."""
    fold = fold_by_hand.fold
    if how == "redo-in-hunk":
        fold.up.commit({"a.py": edited({3: "line 3 by one\n", 10: "line 10 by one\n", 15: "line 15 by one\n"})},
                       "one: v2", parent=fold.pr1, ref="refs/pull/1/head")
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 10: "line 10 by two v2\n", 15: "line 15 by two, v2\n"})},
                   "two: v2", parent=fold.pr2, ref="refs/pull/2/head")
    stop = union(cli, fold, "compose")
    assert stop.exit_code == 3 and "does not apply beside the new hunks" in stop.output, stop.output
    shown = (fold.scratch / "a.py").read_bytes()
    resolved = re.sub(rb"<<<<<<< [^\n]*\n.*?=======\n(.*?)>>>>>>> [^\n]*\n", rb"\1", shown, flags=re.S)
    if how == "redo":           # as the note printed it: line 10 (pr/2's now) edited by hand again
        resolved = resolved.replace(b"line 10 by two v2\n", b"line 10 edited by hand\n")
    elif how == "redo-in-hunk":     # the same, line 10 being a conflict hunk now
        assert shown.count(b"<<<<<<< ") == 2 and b"line 10 by one\n=======\nline 10 by two v2\n" in shown
        resolved = resolved.replace(b"line 10 by two v2\n", b"line 10 edited by hand\n")
    else:
        resolved = resolved.replace(b"line 20\n", b"line 20 by hand\n")
    (fold.scratch / "a.py").write_bytes(resolved)
    if how == "other-line":
        refused = union(cli, fold, "continue")
        assert refused.exit_code == 3 and "is not in the file as you left it" in refused.output, refused.output
    result = union(cli, fold, "continue", *(["--drop-edit", "a.py"] if how == "other-line" else []))
    assert result.exit_code == 0, result.output
    if how.startswith("redo"):
        assert "does not apply to the file as you left it" not in result.output
        if how == "redo-in-hunk":   # in the hunk's recorded resolution only, not in a fixup as well
            assert [d for d in _fixups(fold) if d["file"] == "a.py"] == []
        again = union(cli, fold, "compose")
        assert again.exit_code == 0, again.output
        assert fold.show(fold.ref(), "a.py") == resolved
    else:
        assert "is dropped from the store, as you asked (--drop-edit): this union does not have it, and no refold " \
            "applies it. It was:" in result.output
        assert "+line 10 edited by hand" in result.output
        again = union(cli, fold, "compose")
        assert again.exit_code == 0, again.output
        assert fold.show(fold.ref(), "a.py") == resolved       # line 20 by hand, recorded


def test_an_edit_that_does_not_settle_a_deletion_is_shown(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-78: the stop on a modify/delete conflict did not mention the edit recorded there earlier, which
    the user's decision then replaced in the store."""
    fold = fold_by_hand.fold
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"}), "b.py": None}, "two: drop b.py",
                   parent=fold.pr2, ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3
    assert "b.py: your recorded edit (pr/2) was made where the file merged; it does not settle this conflict" \
        in result.output and "+b6 by one" not in result.output and "b.py" in result.output


def test_a_conflicted_file_deleted_by_hand_is_not_asked_again(cli: Cli, fold: Fold) -> None:
    """helper-77: deleting a conflicted file at a stop recorded the fold's shown (relabelled) file as the
    edit's base, which no later fold makes: every refold asked again, with nothing moved. (Taken by name: h237.)"""
    assert union(cli, fold, "compose").exit_code == 3
    (fold.scratch / "a.py").unlink()
    assert union(cli, fold, "continue", "--take", "a.py").exit_code == 0
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.output
    assert fold.ls(fold.ref(), "a.py") == ""


def test_an_edit_recorded_where_a_file_merged_does_not_settle_its_deletion(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-77: b.py had an edit recorded (it merged then); pr/2 moved to delete b.py, which pr/1 changes:
    the old edit settled that conflict, the fold asked nothing and pr/2's deletion was dropped. It stops."""
    fold = fold_by_hand.fold
    assert any(d["file"] == "b.py" and d.get("conflict") == "" for d in _fixups(fold))
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"}), "b.py": None}, "two: drop b.py",
                   parent=fold.pr2, ref="refs/pull/2/head")
    assert "b.py  pr/1, pr/2  (not a content conflict" in union(cli, fold, "status").stdout
    result = union(cli, fold, "compose")
    assert result.exit_code == 3 and "b.py" in result.output, result.output


@pytest.mark.parametrize("value", [None, 5, "a.py"])
def test_a_corrupt_waiting_list_in_the_state_is_bad_input(cli: Cli, fold: Fold, value: object) -> None:
    """helper-78: `conflict.waiting` set to null or 5 ended `union continue` in a traceback (a string matched
    substrings). The state check names it."""
    assert union(cli, fold, "compose").exit_code == 3
    state = next((fold.work / "carrytool" / "union").rglob("state.json"))
    doc = json.loads(state.read_text())
    doc["conflict"]["waiting"] = value
    state.write_text(json.dumps(doc))
    resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue")
    assert result.exit_code == 2 and "'conflict.waiting' is not a list of paths" in result.output, result.output


# -- helper-88 -------------------------------------------------------------------------------------------
def _supersedes_without(fold: Fold, pr: int) -> None:
    text = fold.manifest.read_text()
    changed = re.sub(rf"\{{pr: {pr}(, head: [0-9a-f]+)?\}}, ?|, ?\{{pr: {pr}(, head: [0-9a-f]+)?\}}", "", text)
    changed = changed if changed != text else re.sub(rf"supersedes: \[{pr}, ?|, ?{pr}\]", lambda m: "supersedes: [" if
                                                     m.group(0).startswith("supersedes") else "]", text)
    assert changed != text, text
    fold.manifest.write_text(changed)


def test_supersedes_changed_while_the_fold_is_stopped_is_refused(cli: Cli, fold: Fold) -> None:
    """helper-88: a PR taken out of `supersedes` while the fold was stopped was folded all the same by
    `continue` (a patch with it, a trailer without it; sync then skipped the union). Refused, exit 2,
    naming the change; abort and compose fold what the manifest says."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    _supersedes_without(fold, 1)
    result = union(cli, fold, "continue")
    assert result.exit_code == 2 and "supersedes changed since this fold began (pr/1 removed)" in result.stderr, \
        result.output
    assert "union abort u" in result.stderr and (fold.scratch / "a.py").exists()
    assert union(cli, fold, "abort").exit_code == 0
    again = union(cli, fold, "compose")
    assert again.exit_code == 0 and "from 1 PRs" in again.stdout, again.output


def test_a_recorded_edit_beside_a_resolution_no_longer_needed_is_warned(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-88: pr/1 taken out of the union, the a.py conflict went and its recorded resolutions with it,
    while the edit recorded beside them (pr/2's, line 10) still went in: exit 0 with "2 recorded
    resolution(s) were not needed". They are named, and the edit that went in beside them is warned about."""
    fold = fold_by_hand.fold
    _supersedes_without(fold, 1)
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.output
    assert "note: 2 recorded resolutions were not needed by this fold (conflicts it did not meet as recorded: a " \
        "PR moved, or left the union; the store keeps every resolution): a.py (pr/1, pr/2): 2\n" in result.stdout, \
        result.stdout
    assert "warning: a.py: your recorded edit outside the conflict hunks went into the union, but a resolution " \
        "you recorded in a.py with a PR that left the union was not needed" in result.stdout
    assert b"line 10 edited by hand\n" in fold.show(fold.ref(), "a.py")


def test_a_patch_edited_by_hand_is_not_replaced_by_a_refold(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-88: an edit made by hand in unions/u.patch was replaced by `union compose` without a word, and
    `union status` said "up to date". Refused (exit 2) and said by status; restored, the refold goes on."""
    fold = fold_by_hand.fold
    patch = fold.manifest.parent / "unions" / "u.patch"
    written = patch.read_bytes()
    assert b"+line 10 edited by hand\n" in written
    patch.write_bytes(written.replace(b"+line 10 edited by hand\n", b"+line 10 edited by hand, and again\n"))
    status = union(cli, fold, "status")
    assert "u.patch is not what the last fold of carry/u wrote" in status.stdout and "up to date" not in status.stdout
    result = union(cli, fold, "compose")
    assert result.exit_code == 2 and "this fold would replace it, and the edit with it" in result.stderr, result.output
    assert b"and again" in patch.read_bytes()
    patch.write_bytes(written)
    assert union(cli, fold, "compose").exit_code == 0 and patch.read_bytes() == written


def test_an_abort_that_leaves_the_entry_says_so(cli: Cli, tmp_path: Path) -> None:
    """helper-88: `union abort` after `union new`, the manifest edited meanwhile, kept the entry (it is the
    user's file now) without a word, and the next sync stopped on a patch no fold wrote. It says so."""
    fold = Fold(tmp_path, union="")
    assert cli("union", "new", "u", "1", "2", *fold.args()).exit_code == 3
    fold.manifest.write_text(fold.manifest.read_text().replace("a comment to keep", "edited meanwhile"))
    result = union(cli, fold, "abort")
    assert result.exit_code == 0 and "carry: u" in fold.manifest.read_text()
    assert "left carry/u in" in result.output and "the manifest was edited since `union new` added the entry; " \
        "it names unions/u.patch, which no fold wrote, so sync stops on it (exit 2)" in " ".join(result.output.split())


def test_an_interrupted_union_command_does_not_claim_nothing_was_written(cli: Cli, fold: Fold,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-88: Ctrl-C during `union continue` said "nothing was written" after records, the patch or the
    manifest were written. It says what stays and what to run."""
    assert union(cli, fold, "compose").exit_code == 3
    from carrytool.union.fold import Union

    def interrupted(self, **_options):  # noqa: ANN001, ANN202, ANN003
        raise KeyboardInterrupt

    monkeypatch.setattr(Union, "resume", interrupted)
    result = union(cli, fold, "continue")
    assert result.exit_code == 130 and "nothing was written" not in result.stderr
    assert f"`carrytool union status u -m {fold.manifest} --repo {fold.work}` says where it stands" \
        in " ".join(result.stderr.split()), result.stderr


def test_a_stop_shows_the_resolution_recorded_before_the_pr_moved(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-88: a PR that moved changed a hunk the user had resolved: the stop showed the new hunk alone
    (a recorded edit outside the hunks was shown, the hunk's old resolution was not) and it was redone from
    memory. The stop prints it."""
    fold = fold_by_hand.fold
    old = [d for d in _records(fold) if "line 3 by one" in d["resolution"]]
    fold.up.commit({"a.py": edited({3: "line 3 by two, v2\n", 15: "line 15 by two\n"})}, "two: v2", parent=fold.pr2,
                   ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3, result.output
    assert "a.py: you resolved a conflict there before (pr/1, pr/2) that this fold does not meet as recorded (a " \
        "PR moved); your resolution was:\n" in result.output, result.output
    assert len(old) == 1 and "\n".join(f"    {line}" for line in old[0]["resolution"].split("\n")) in result.output
    assert "line 15" not in result.output.split("your resolution was:")[1].split("\n")[1]


# -- helper-92: a review of the above ----------------------------------------------------------------------
def test_a_patch_nobody_edited_is_not_judged_edited_by_its_index_lines_or_line_ends(cli: Cli,
                                                                                   fold_by_hand: Handed) -> None:
    """helper-92: git shortens the `index` lines' SHAs to a length that grows with the repository: once the
    repository had more objects, a patch nobody edited was refused as "edited by hand?". And a CRLF
    checkout of an edited patch (core.autocrlf) was not judged at all: replaced without a word."""
    fold = fold_by_hand.fold
    patch = fold.manifest.parent / "unions" / "u.patch"
    written = patch.read_bytes()
    longer = re.sub(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)", lambda m: b"index " + m[1] + b"0" + b".." + m[2] + b"0",
                    written, flags=re.M)
    assert longer != written
    patch.write_bytes(longer)
    assert "not what the last fold" not in union(cli, fold, "status").stdout
    assert union(cli, fold, "compose").exit_code == 0
    edited_crlf = patch.read_bytes().replace(b"+line 10 edited by hand\n", b"+line 10 edited by hand, again\n")
    patch.write_bytes(edited_crlf.replace(b"\n", b"\r\n"))
    result = union(cli, fold, "compose")
    assert result.exit_code == 2 and "this fold would replace it" in result.stderr, result.output


def test_the_supersedes_refusal_does_not_promise_what_is_not_recorded(cli: Cli, fold: Fold) -> None:
    """helper-92: the hint said the stop's resolutions were in the store and abort + compose would reuse them;
    nothing of the stop is recorded before continue: it says how to keep it. Reordered globs are no change."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    _supersedes_without(fold, 1)
    result = union(cli, fold, "continue")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "put supersedes back as the fold began (pr/1, pr/2)" in said, said
    assert "drops this stop's work" in said and "reuses it)" not in said


def test_a_resolution_resolved_again_is_not_warned_about_forever(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-92: the store keeps every resolution; after pr/2 moved and its hunk was resolved again, the old
    record was named as a conflict that "did not happen" and every later refold warned that the union was
    broken in a.py (the edit recorded there by pr/2)."""
    fold = fold_by_hand.fold
    fold.up.commit({"a.py": edited({3: "line 3 by two, v2\n", 15: "line 15 by two\n"})}, "two: v2", parent=fold.pr2,
                   ref="refs/pull/2/head")
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    result = union(cli, fold, "compose")
    assert result.exit_code == 0 and "warning:" not in result.stdout, result.stdout
    assert "note: 1 recorded resolution was not needed by this fold (conflicts it did not meet as recorded" \
        in result.stdout
    # helper-94: pr/2 moves back; its first resolution is used again, the second is not: no warning either
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"})}, "two: back", parent=fold.pr2,
                   ref="refs/pull/2/head")
    for _ in range(2):
        again = union(cli, fold, "compose")
        assert again.exit_code == 0 and "warning:" not in again.stdout, again.stdout


def test_an_abort_of_a_finished_fold_says_nothing_and_one_with_an_empty_supersedes_works(cli: Cli, fold: Fold) -> None:
    """helper-92: interrupted right after the fold of `union new` wrote the manifest, take_back said the user
    had edited it and to remove the entry by hand (a finished union). And a fold whose supersedes was
    emptied while it was stopped could not be aborted ("supersedes no PR")."""
    from carrytool.gitlayer.git import Git
    from carrytool.manifest.load import load_manifest
    from carrytool.union.fold import Union

    by_hand(cli, fold)
    said: list[str] = []
    with Git(fold.work) as git:
        union_ = Union(load_manifest(fold.manifest), git, "u", notify=said.append)
        assert union_.take_back(b"before", "0" * 64) is False and said == []     # the fold finished: its patch is there
        (fold.manifest.parent / "unions" / "u.patch").unlink()
        assert union_.take_back(b"before", "0" * 64) is False and "left carry/u in" in said[0]
    fold.up.commit({"a.py": edited({3: "line 3 by two, v3\n", 15: "line 15 by two\n"})}, "two: v3", parent=fold.pr2,
                   ref="refs/pull/2/head")
    assert union(cli, fold, "compose").exit_code == 3
    fold.manifest.write_text(re.sub(r"supersedes: \[.*\]", "supersedes: []", fold.manifest.read_text()))
    result = union(cli, fold, "abort")
    assert result.exit_code == 0 and "aborted the fold of carry/u" in result.stdout, result.output


def test_a_stop_does_not_show_a_later_prs_resolution_as_stale(cli: Cli, tmp_path: Path) -> None:
    """helper-92: at pr/2's stop, the resolution recorded with pr/3 (folded after it, and reused there) was
    printed as "changed since ... does not apply"."""
    fold = Fold(tmp_path, union="  - carry: u\n    patch: unions/u.patch\n    supersedes: [2, 3]\n")
    fold.up.commit({"a.py": edited({3: "line 3 upstream\n"})}, "upstream", parent="main", ref="refs/heads/main")
    fold.up.commit({"a.py": edited({15: "line 15 by three\n"})}, "three", parent=fold.base, ref="refs/pull/3/head")
    assert union(cli, fold, "compose").exit_code == 3          # pr/2 meets upstream at line 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 3         # pr/3 meets pr/2 at line 15
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    fold.up.commit({"a.py": edited({3: "line 3 by two, v2\n", 15: "line 15 by two\n"})}, "two: v2", parent=fold.pr2,
                   ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 3 and "you resolved a conflict there before (pr/2)" in result.stderr, result.output
    assert "three" not in result.stderr, result.stderr


# -- helper-93: a review of the above ----------------------------------------------------------------------
def test_a_hunk_that_no_longer_conflicts_beside_one_reused_is_named(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-93: records were matched by file and PRs: with a.py's line-3 hunk reused, the line-15 hunk
    that no longer conflicted (pr/2 moved off it) was said "resolved again". It is named, as a conflict not
    met as recorded; no warning: its PRs are all in the union (the edit is pr/2's, applied 3-way)."""
    fold = fold_by_hand.fold
    fold.up.commit({"a.py": edited({3: "line 3 by two\n"})}, "two: line 3 only", parent=fold.pr2,
                   ref="refs/pull/2/head")
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.output
    assert "a PR moved, or left the union; the store keeps every resolution): a.py (pr/1, pr/2)\n" in result.stdout, \
        result.stdout
    assert "warning:" not in result.stdout


def test_a_fold_state_of_the_previous_format_continues(cli: Cli, fold: Fold) -> None:
    """helper-93: a state whose "edited" held bare file names (the commit before) crashed every continue
    (ValueError, exit 70)."""
    assert union(cli, fold, "compose").exit_code == 3
    state_path = fold.work / "carrytool" / "union" / "u" / "state.json"
    state = json.loads(state_path.read_text())
    state["edited"] = ["b.py"]
    state_path.write_text(json.dumps(state))
    resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.output


def test_a_crlf_line_in_a_patch_is_an_edit(cli: Cli, fold_by_hand: Handed) -> None:
    """helper-93: line ends were ignored line by line: one line given a CR (which the composed file keeps)
    was not judged an edit, and compose replaced it."""
    fold = fold_by_hand.fold
    patch = fold.manifest.parent / "unions" / "u.patch"
    patch.write_bytes(patch.read_bytes().replace(b"+line 10 edited by hand\n", b"+line 10 edited by hand\r\n"))
    result = union(cli, fold, "compose")
    assert result.exit_code == 2 and "this fold would replace it" in result.stderr, result.output


def test_abort_of_a_carry_that_is_no_union_says_so(cli: Cli, fold: Fold) -> None:
    """helper-93: `union abort` of a plain carry said "no fold under way" and hinted `union compose`, which
    refuses it."""
    text = fold.manifest.read_text()
    fold.manifest.write_text(text + "  - carry: plain\n    commit: " + fold.pr1 + "\n")
    result = cli("union", "abort", "plain", *fold.args())
    assert result.exit_code == 2 and "carry/plain supersedes no PR, and no fold of it is under way" in result.stderr
    assert "union compose" not in result.stderr



def test_a_crlf_checkout_of_a_patch_with_crlf_lines_is_no_edit(cli: Cli, fold: Fold) -> None:
    """helper-94: a PR editing a CRLF file makes git's patch mixed (CRLF content lines, LF headers); a
    core.autocrlf checkout writes it all CRLF: compared line end by line end, it was "edited by hand?"."""
    fold.up.commit({"w.txt": "w by one\r\n"}, "one: a CRLF file", parent=fold.pr1, ref="refs/pull/1/head")
    by_hand(cli, fold)
    patch = fold.manifest.parent / "unions" / "u.patch"
    written = patch.read_bytes()
    assert b"+w by one\r\n" in written
    patch.write_bytes(written.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    result = union(cli, fold, "compose")
    assert result.exit_code == 0, result.output


def test_a_fold_of_two_prs_defining_one_name_says_so(cli: Cli, tmp_path: Path) -> None:
    """Two PRs each adding `def twin()` to one module, at different places, fold cleanly; sync then sees the
    union as one entry and cannot tell whose each definition is (helper-105's and dask's real pair of fixes
    for one issue, each adding the same test): the fold says so, even with -q."""
    module = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(12))
    fold = Fold(tmp_path, extra={"m.py": module})
    at = module.index("def f2():")
    fold.up.commit({"m.py": module[:at] + "def twin():\n    return 1\n\n\n" + module[at:]}, "one: twin",
                   parent=fold.base, ref="refs/pull/1/head")
    at = module.index("def f9():")
    fold.up.commit({"m.py": module[:at] + "def twin():\n    return 2\n\n\n" + module[at:]}, "two: twin",
                   parent=fold.base, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", "-q", *fold.args())
    assert result.exit_code == 0, result.output
    assert "warning: m.py: the union defines twin 2 times in one scope (pr/1, pr/2 each define it): when the " \
           "module runs the last replaces the others, whose code is dead" in " ".join(result.output.split())
    # one PR's own pair, or a name the PRs define once each in different files, is not said
    fold.up.commit({"m.py": module[:at] + "def twin():\n    return 2\n\n\n" + module[at:], "n.py": "def twin():\n"
                    "    pass\n"}, "two: twin elsewhere", parent=fold.base, ref="refs/pull/2/head")
    fold.up.commit({"m.py": module + "def solo():\n    pass\n\n\ndef solo():\n    pass\n"}, "one: solo twice",
                   parent=fold.base, ref="refs/pull/1/head")
    again = cli("union", "compose", "u", *fold.args())
    assert again.exit_code == 0 and "the union defines" not in again.output, again.output


def test_abort_after_a_union_new_that_finished_says_how_to_undo_it(cli: Cli, tmp_path: Path) -> None:
    """h239's trial on sqlalchemy: `union abort` after a `union new` that did not stop exited 2 with the hint
    `carrytool union compose NAME`, which undoes nothing; the docs did not say how to undo it either."""
    fold = Fold(tmp_path, union="")
    assert cli("union", "new", "u", "1", *fold.args()).exit_code == 0
    result = union(cli, fold, "abort")
    assert result.exit_code == 2, result.output
    assert "no fold of carry/u under way: nothing to abort (the union as last composed stands)" in result.stderr
    patch = fold.manifest.parent / "unions" / "u.patch"
    assert patch.is_file(), result.output
    assert (f"hint: to undo a `union new` that finished, take `- carry: u` out of {fold.manifest} and delete its "
            f"patch {patch}") in result.stderr, result.stderr
