"""tests/gitrepo.py's Repo.commit writes its objects in process: the same commits, byte for byte, as git's own
plumbing builds (its fallback, `_commit_plumbing`), and a repository git finds sound."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import Repo, init_repo

ODD = "sp ace/ünï\u00e9/\udcff-bytes.py"          # spaces, non-ASCII and a byte that is no UTF-8


def _history(repo: Repo, build) -> list[str]:   # noqa: ANN001 - Repo.commit or Repo._commit_plumbing
    """The same sequence of commits, each kind of call the suite makes, built with BUILD."""
    shas = []
    root = build({"a.py": "a\n", "d/b.py": b"\x00\xffbin", "d/e/c.sh": "#!/bin/sh\n", "link": "a.py",
                  "d.py": "beside the folder d\n", ODD: "odd\n"}, "root", ref="refs/heads/main", modes={"d/e/c.sh": "100755", "link": "120000"})
    shas.append(root)
    shas.append(build({"a.py": "a2\n", "d/b.py": None, "new/x.py": "x\n"}, "change\n\nbody", parent="main",
                      ref="refs/heads/main"))
    shas.append(build({"d": "a file where a folder was\n"}, "", parent=root, ref="refs/pull/1/head"))
    shas.append(build({"new/x.py/y": "a folder where a file was\n", "gone.py": None}, "m\n", parent=shas[1]))
    shas.append(build({"sub": root}, "a gitlink", parent="refs/pull/1/head", modes={"sub": "160000"}))
    shas.append(build({"merged.py": "m\n"}, "a merge", parent=shas[1], parents=[shas[1], shas[2]],
                      ref="refs/heads/merge"))
    shas.append(build({}, "nothing changed", parent="merge"))
    shas.append(build({}, "an empty root"))
    shas.append(build({"d/z.py": "a folder again\n"}, "d, a folder again", parent=shas[2]))
    blob = repo.git("hash-object", "-w", "--stdin", input=b"legacy\n")      # a tree of an old git's modes
    legacy = repo.git("mktree", input=f"100664 blob {blob}\tlegacy.txt\n100775 blob {blob}\trun\n".encode())
    old = repo.git("commit-tree", repo.git("mktree", input=f"040000 tree {legacy}\told\n".encode()), "-m", "old")
    shas.append(build({"new.py": "n\n", "x": "x\n"}, "on old modes", parent=old, modes={"x": "100664"}))
    shas.append(build({}, "nothing, on old modes", parent=old))
    shas.append(build({"old/new.py": "n\n"}, "into the old folder", parent=old))
    return shas


@pytest.mark.parametrize("bare", [True, False])
def test_commits_written_in_process_are_the_ones_git_writes(tmp_path: Path, bare: bool) -> None:
    fast, plumbing = init_repo(tmp_path / "fast", bare=bare), init_repo(tmp_path / "plumbing", bare=bare)
    built = _history(fast, fast.commit)
    assert built == _history(plumbing, plumbing._commit_plumbing)
    assert fast.rev("refs/heads/merge") == built[5] and fast.rev("main") == built[1]
    for sha in built:                       # a fresh Repo lists the parents' files with git
        assert fast.git("cat-file", "-p", sha) == plumbing.git("cat-file", "-p", sha)
    assert Repo(fast.path).commit({"z": "z\n"}, "on", parent=built[3]) == \
        Repo(plumbing.path).commit({"z": "z\n"}, "on", parent=built[3])
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=fast.path, check=True, capture_output=True)


@pytest.mark.parametrize("name", [".git/x", "a/../b", "a//b", "/a", "a/", "./a", "x/.GIT/y"])
def test_a_path_git_would_not_store_as_given_takes_git_plumbing(tmp_path: Path, name: str) -> None:
    fast, plumbing = init_repo(tmp_path / "fast", bare=True), init_repo(tmp_path / "plumbing", bare=True)
    assert fast.commit({name: "x\n", "ok.py": "y\n"}, "m") == plumbing._commit_plumbing({name: "x\n", "ok.py": "y\n"}, "m")
