"""Two merge-tree processes share large batches (gitlayer.git._merge_batch): the same reports whatever
the cores, nothing left running, and a full scratch directory is still the error that names it."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import threading
from pathlib import Path

import pytest

from tests.conftest import Cli, Small
from tests.gitlayer.test_quarantine import small_tmpfs
from tests.gitrepo import Repo, init_repo, many_prs, write_manifest


def children() -> list[str]:
    """Command lines of this process's live children."""
    me, out = os.getpid(), []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            continue
    return out


def _explained(cli: Cli, manifest: Path, repo: Repo) -> tuple[int, dict]:
    """explain's JSON in REPO, with REPO's path put aside: a union suggestion's `command` repeats the --repo."""
    code, report = cli.json("explain", "-m", manifest, "--repo", repo.path, "--offline")
    return code, json.loads(json.dumps(report).replace(str(repo.path), "REPO"))


def test_one_or_two_cores_give_the_same_reports(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 40, files=20)
    manifest = write_manifest(tmp_path / "m.yaml", {
        "version": 1, "upstream": {"url": str(up.path)}, "fork": {"branch": "x"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(1, 41)]})
    seen = []
    for n, cores in enumerate((1, 2)):
        repo = init_repo(tmp_path / f"work{n}", bare=True)
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda c=cores: c)
        seen.append((cli.json("sync", "-m", manifest, "--repo", repo.path, "--dry-run"), _explained(cli, manifest, repo)))
    assert seen[0] == seen[1]
    assert sum(e["status"] == "conflict" for e in seen[0][0][1]["entries"]) >= 3
    assert threading.active_count() == 1, threading.enumerate()
    assert children() == []


def test_a_full_scratch_with_two_merge_processes_names_itself(small: Small, cli: Cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with small_tmpfs(tmp_path / "tiny", "2m") as tiny:
        rng = random.Random(17)
        lines = [base64.b64encode(rng.randbytes(57)).decode() for _ in range(12000)]
        small.up.commit({"big.txt": "\n".join(lines) + "\n"}, "big", parent="main", ref="refs/heads/main")
        main = small.up.rev("refs/heads/main")
        for n in range(1, 13):
            changed = list(lines)
            changed[n * 900] = f"changed by {n}"
            small.pr(n, {"big.txt": "\n".join(changed) + "\n"}, parent=main)
        lines[0] = "upstream moved on"
        small.up.commit({"big.txt": "\n".join(lines) + "\n"}, "moved", parent="main", ref="refs/heads/main")
        small.manifest([{"pr": n} for n in range(1, 13)])
        from carrytool.gitlayer import env

        monkeypatch.delenv("TMPDIR", raising=False)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tiny))
        monkeypatch.setattr(env, "MIN_SCRATCH_FREE", 0)
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
        # The failing process dies at a different moment each time. A failed run keeps no answers (its merges
        # wrote only to the scratch), so the later runs reuse its repository: the first run fetches while it
        # merges, the others (nearly) only merge, all of it again.
        work = init_repo(tmp_path / "w", bare=True)
        for _ in range(8):
            code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", work.path)
            assert code == 4, report
            message = report["error"]["message"]
            assert "No space left on device" in message and "TMPDIR" in message, message
            assert list(tiny.iterdir()) == []
            assert threading.active_count() == 1, threading.enumerate()
            assert children() == []
            assert not (work.path / "carrytool").exists()      # no answers kept for the next run


@pytest.mark.parametrize("failing", ["side", "first", "ctrl-c"])
def test_a_failure_in_either_merge_process_is_raised_once_both_stopped(tmp_path: Path, failing: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The half that the second process merges raises its error in the caller as the first half's does;
    neither half's answers are taken for a whole batch then. A Ctrl-C in the first half wins over what
    the second one says then (its git died of the same Ctrl-C): the run ends as interrupted."""
    from carrytool.errors import GitError
    from carrytool.gitlayer.git import SPLIT_MERGES_AT, Git
    from carrytool.gitlayer.mergepipe import MergePipe

    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, SPLIT_MERGES_AT, files=SPLIT_MERGES_AT)
    monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
    real = MergePipe.merge_many
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        pairs = [(main, git.rev_parse(f"refs/pull/{n}/head")) for n in range(1, SPLIT_MERGES_AT + 1)]

        def merge_many(self: MergePipe, lines: list[str]) -> list:
            if failing == "ctrl-c":
                if self is git._side_pipe:
                    raise GitError("merge-tree stopped answering")
                raise KeyboardInterrupt
            if (self is git._side_pipe) == (failing == "side"):
                raise GitError(f"the {failing} process died")
            return real(self, lines)

        monkeypatch.setattr(MergePipe, "merge_many", merge_many)
        expected = pytest.raises(KeyboardInterrupt) if failing == "ctrl-c" else \
            pytest.raises(GitError, match=f"the {failing} process died")
        with expected:
            git.merge_trees(pairs)
        assert not [t for t in threading.enumerate() if t.name == "carrytool-other-half"]
    assert threading.active_count() == 1, threading.enumerate()


def test_a_second_ctrl_c_while_waiting_for_the_other_half_leaves_it_for_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the first half, then again while the batch waits for the second: close waits for the
    second half's thread before it closes that process's pipe and removes the scratch."""
    import time

    from carrytool.gitlayer.git import SPLIT_MERGES_AT, Git
    from carrytool.gitlayer.mergepipe import MergePipe

    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, SPLIT_MERGES_AT, files=SPLIT_MERGES_AT)
    monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
    real, real_join, real_release = MergePipe.merge_many, threading.Thread.join, Git._release_keeps
    log: list[str] = []
    git = Git(up.path)
    main = git.rev_parse("refs/heads/main")
    pairs = [(main, git.rev_parse(f"refs/pull/{n}/head")) for n in range(1, SPLIT_MERGES_AT + 1)]

    def merge_many(self: MergePipe, lines: list[str]) -> list:
        if self is not git._side_pipe:
            raise KeyboardInterrupt
        time.sleep(0.5)                            # the second process is still merging
        try:
            return real(self, lines)
        finally:
            log.append("other half done")

    def join(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name == "carrytool-other-half" and not log:
            log.append("interrupted")
            raise KeyboardInterrupt                # the second Ctrl-C
        real_join(self, timeout)

    def release(self: Git) -> None:             # close's last step before the scratch is removed
        alive = any(t.name == "carrytool-other-half" for t in threading.enumerate())
        log.append(f"scratch goes, other half alive: {alive}")
        real_release(self)

    monkeypatch.setattr(MergePipe, "merge_many", merge_many)
    monkeypatch.setattr(threading.Thread, "join", join)
    monkeypatch.setattr(Git, "_release_keeps", release)
    with pytest.raises(KeyboardInterrupt):
        git.merge_trees(pairs)
    git.close()
    assert log == ["interrupted", "other half done", "scratch goes, other half alive: False"]


def test_every_merge_process_of_a_run_shares_one_flush_merge(cli: Cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The flush merge's answer (see gitlayer.mergepipe) is asked once per run, in a process of its own:
    the second merge-tree of a large batch, explain's pair merges and their helper reuse it (the same git,
    the same answer). Same reports as with two processes asked."""
    from carrytool.gitlayer.git import Git

    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 40, files=20)
    manifest = write_manifest(tmp_path / "m.yaml", {
        "version": 1, "upstream": {"url": str(up.path)}, "fork": {"branch": "x"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(1, 41)]})
    monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
    flush_merges: list[bytes] = []       # `merge-tree --stdin` runs of one `OURS THEIRS` line: a flush merge
    real_run = Git.run

    def run(self: Git, *args: str, **kwargs: object):  # noqa: ANN202
        given = kwargs.get("input")
        if args[:1] == ("merge-tree",) and isinstance(given, bytes) and re.fullmatch(rb"[0-9a-f]{40} [0-9a-f]{40}\n",
                                                                                    given):
            flush_merges.append(given)
        return real_run(self, *args, **kwargs)  # type: ignore[arg-type]

    reports = []
    for n, share in enumerate((True, False)):
        if not share:       # each new merge-tree learns the flush answer itself, as before
            monkeypatch.setattr(Git, "_new_merge_pipe", lambda self: __import__(
                "carrytool.gitlayer.mergepipe", fromlist=["MergePipe"]).MergePipe(self, stored=self._use_quarantine))
        monkeypatch.setattr(Git, "run", run)
        flush_merges.clear()
        repo = init_repo(tmp_path / f"work{n}", bare=True)
        reports.append((cli.json("sync", "-m", manifest, "--repo", repo.path, "--dry-run"),
                        _explained(cli, manifest, repo)))
        assert (len(flush_merges) == 2) == share, (share, len(flush_merges))   # one a command when shared
    assert reports[0] == reports[1]
