"""edit_tree writes the tree `mktree` writes, whether it splices the edited tree's bytes or encodes it anew."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from carrytool.errors import GitError
from carrytool.gitlayer.git import Git
from tests.gitrepo import init_repo


def _expected(git: Git, tree: str, edits: dict[str, tuple[str, str] | None]) -> str:
    """The edited tree written without splicing: every level through `mktree`."""
    saved, git.splice_tree = git.splice_tree, lambda *_a, **_k: None  # type: ignore[method-assign]
    try:
        return git.edit_tree(tree, edits)
    finally:
        git.splice_tree = saved  # type: ignore[method-assign]


def _git_says(repo: Path, tree: str) -> str:
    """The tree as git itself rebuilds it from its listing (`ls-tree | mktree`)."""
    listing = subprocess.run(["git", "ls-tree", "-z", tree], cwd=repo, capture_output=True, check=True).stdout
    return subprocess.run(["git", "mktree", "-z", "--missing"], cwd=repo, input=listing, capture_output=True,
                          check=True).stdout.decode().strip()


@pytest.mark.parametrize("seed", range(6))
def test_spliced_trees_are_the_trees_mktree_writes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    repo = init_repo(tmp_path / "r", bare=True)
    files = {f"d{d}/f{f}.py": f"{d} {f}\n" for d in range(4) for f in range(6)}
    files.update({"a.txt": "a\n", "a-b/x": "x\n", "a.b": "ab\n", "top.py": "t\n"})
    base = repo.commit(files, "base", ref="refs/heads/main", modes={"top.py": "100755"})
    with Git(repo.path, quarantine=True) as git:
        tree = git.tree_of(base)
        spliced, splice = [], git.splice_tree
        git.splice_tree = lambda *a: spliced.append(splice(*a)) or spliced[-1]  # type: ignore[method-assign]
        for _ in range(12):
            blob = git.write_blob(f"{rng.random()}\n".encode())
            path = rng.choice([*files, "d1/new.py", "new-top", "a-b/y"])
            kind = rng.choice(["same", "same", "exec", "delete", "link"])
            value = {"same": ("100644", blob), "exec": ("100755", blob), "link": ("120000", blob),
                     "delete": None}[kind]
            edits = {path: value, rng.choice(list(files)): ("100644", blob)}
            want = _expected(git, tree, edits)
            tree = git.edit_tree(tree, edits)
            assert tree == want
        assert sum(1 for sha in spliced if sha) >= 6          # most edits were splices
        git.flush_objects()
        git.keep_unreferenced = True
        final = tree
    assert _git_says(repo.path, final) == final


def test_a_tree_out_of_gits_order_is_written_anew_not_spliced(tmp_path: Path) -> None:
    """A tree git would not write (entries out of order, a short mode) is never spliced: its edit is the
    canonical tree, with each entry's mode as git reads it (`644` is not a file mode: git reads a gitlink)."""
    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a": "a\n"}, "base", ref="refs/heads/main")
    with Git(repo.path, quarantine=True) as git:
        a, b = git.write_blob(b"a\n"), git.write_blob(b"b\n")
        raw = b"100644 b\0" + bytes.fromhex(b) + b"100644 a\0" + bytes.fromhex(a) + b"644 c\0" + bytes.fromhex(a)
        odd = git.write_object("tree", raw)
        new = git.write_blob(b"new\n")
        edited = git.edit_tree(odd, {"a": ("100644", new)})
        assert edited == git.mktree([("100644", "blob", b, b"b"), ("100644", "blob", new, b"a"),
                                     ("160000", "commit", a, b"c")])
        assert git.read_object(edited)[1].index(b" a\0") < git.read_object(edited)[1].index(b" b\0")


def test_no_edit_leaves_a_tree_git_would_not_write_as_it_is(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", bare=True)
    with Git(repo.path, quarantine=True) as git:
        a = git.write_blob(b"a\n")
        odd = git.write_object("tree", b"100664 a\0" + bytes.fromhex(a))
        assert git.edit_tree(odd, {}) == odd
        assert git.read_tree(odd) == [("100644", "blob", a, b"a")]       # read as git reads it
        assert git.edit_tree(odd, {"b": ("100644", a)}) == git.mktree([("100644", "blob", a, b"a"),
                                                                       ("100644", "blob", a, b"b")])


@pytest.mark.parametrize("mode", [b"10064a", b"+644", b" 644", b"1_00644"])
def test_a_mode_git_cannot_read_is_a_corrupt_tree(tmp_path: Path, mode: bytes) -> None:
    repo = init_repo(tmp_path / "r", bare=True)
    with Git(repo.path, quarantine=True) as git:
        a = git.write_blob(b"a\n")
        bad = git.write_object("tree", mode + b" a\0" + bytes.fromhex(a))
        with pytest.raises(GitError, match="corrupt"):
            git.read_tree(bad)
