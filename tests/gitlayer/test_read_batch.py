"""Batches of objects (read_blobs, load_commits) are read through the long-lived `cat-file --batch`, in
chunks: the same answers as a process of their own (read_blobs_later's), and no process per batch."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git


def _repo(tmp_path: Path, files: int):  # noqa: ANN202 - tests.gitrepo's repository
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    tips = [repo.commit({f"f{n}.txt": f"{n}\n" for n in range(files)}, "base", ref="refs/heads/main")]
    for n in range(20):
        tips.append(repo.commit({"f0.txt": f"edit {n}\n"}, f"edit {n}", parent=tips[-1], ref="refs/heads/main"))
    return repo, tips


def test_a_batch_across_chunks_reads_what_a_process_of_its_own_reads(tmp_path: Path) -> None:
    """600 names (three chunks of the long-lived process): staged, stored, repeated, a tree, a missing name;
    read_object still answers after it (the process is left between two answers)."""
    repo, tips = _repo(tmp_path, 600)
    with Git(repo.path, quarantine=True) as git:
        staged = git.write_blob(b"staged, not written yet\n")
        tree = git.tree_of(tips[0])
        stored = [oid for _mode, kind, oid, _path in git.read_tree(tree) if kind == "blob"]
        assert len(stored) == 600
        names = [staged, *stored, stored[0], tree, "1" * 40]
        found = git.read_blobs(names)
        assert found == git.read_blobs_later(names)()
        assert len(found) == 601 and found[staged] == b"staged, not written yet\n"
        assert git.read_object(tree) is not None and git.read_object("1" * 40) is None
        assert git.read_blobs(stored[:3]) == {oid: found[oid] for oid in stored[:3]}


def test_commits_loaded_in_a_batch_are_what_one_by_one_reads_give(tmp_path: Path) -> None:
    repo, tips = _repo(tmp_path, 3)
    with Git(repo.path) as git:
        git.load_commits(tips)
        loaded = {sha: git.commit_info(sha) for sha in tips}
    with Git(repo.path) as git:
        assert loaded == {sha: git.commit_info(sha) for sha in tips}     # (fewer than 16 at a time: one by one)
        assert loaded[tips[1]]["parents"] == [tips[0]]


def test_batches_start_no_process_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every git process this Git starts is logged by a wrapper ahead of git on PATH: two batches and a
    single read share one `cat-file --batch`."""
    repo, tips = _repo(tmp_path, 40)
    real = shutil.which("git")
    assert real is not None
    log, shim = tmp_path / "started", tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    with Git(repo.path, quarantine=True) as git:
        git.load_commits(tips)
        blobs = git.read_blobs([oid for _m, kind, oid, _p in git.read_tree(git.tree_of(tips[0])) if kind == "blob"])
        assert len(blobs) == 40
    started = log.read_text().splitlines()
    assert sum("cat-file" in line for line in started) == 1, started
