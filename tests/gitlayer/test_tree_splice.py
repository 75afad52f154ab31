"""edit_tree writes the tree `mktree` writes, whether it splices the edited tree's bytes or encodes it anew."""

from __future__ import annotations

import random
import subprocess
import threading
from dataclasses import replace
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
        then_good = git.write_object("tree", mode + b" a\0" + bytes.fromhex(a) + b"100644 b\0" + bytes.fromhex(a))
        with pytest.raises(GitError, match="corrupt"):       # not read as the good entry alone
            git.read_tree(then_good)


def _oid(repo: Path, name: str) -> str:
    return subprocess.run(["git", "rev-parse", name], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_trees_read_ahead_are_the_trees_read_one_by_one(tmp_path: Path) -> None:
    """preread_trees caches, in one exchange, exactly what read_tree reads (entries and splice layout);
    a directory the tree lacks, a file, a path with a space or non-ASCII name is passed over or read
    right; afterwards editing those directories asks cat-file for none of them."""
    repo = init_repo(tmp_path / "r", bare=True)
    files = {f"d{d}/s{s}/f{f}.py": f"{d} {s} {f}\n" for d in range(3) for s in range(300 // 9) for f in range(3)}
    files.update({"with space/é/x.txt": "x\n", "top.py": "t\n"})
    base = repo.commit(files, "base", ref="refs/heads/main")
    dirs = ["d0", "d1", "d1/s3", "missing/dir", "top.py", "with space", "with space/é"] + \
        [f"d{d}/s{s}" for d in range(3) for s in range(300 // 9)]
    with Git(repo.path) as plain:
        root = plain.tree_of(base)
        expected = {d: plain.read_tree(_oid(repo.path, f"{root}:{d}")) for d in dirs
                    if d not in ("missing/dir", "top.py")}
        layouts = {oid: plain._layouts.get(oid) for oid in plain._trees}
    with Git(repo.path) as git:
        git.preread_trees(root, dirs)
        git.read_tree(root)
        asked: list[str] = []
        real = git.read_object
        git.read_object = lambda name: asked.append(name) or real(name)  # type: ignore[method-assign]
        for d, entries in expected.items():
            oid = _oid(repo.path, f"{root}:{d}")
            assert git.read_tree(oid) == entries and git._layouts.get(oid) == layouts[oid]
        assert asked == []
        edited = git.edit_tree(root, {"d1/s3/f0.py": None, "with space/é/y.txt": ("100644", git.write_blob(b"y\n"))})
        assert asked == []
        git.flush_objects()
        assert _git_says(repo.path, edited) == edited


def test_trees_read_ahead_under_long_names_do_not_block(tmp_path: Path) -> None:
    """More names than a pipe's buffer holds (100 paths of ~1 KiB) whose answers fill the other pipe (100
    trees of ~1.6 KiB): read in chunks that fit, all of them, without the two processes waiting on each other."""
    repo = init_repo(tmp_path / "r", bare=True)
    with Git(repo.path) as git:
        blob = git.write_blob(b"x\n")
        wide = git.mktree([("100644", "blob", blob, f"file-{n:03}.py".encode()) for n in range(60)])
        tree = git.mktree([("040000", "tree", wide, f"n{i}".encode()) for i in range(100)])
        for _ in range(5):
            tree = git.mktree([("040000", "tree", tree, b"d" * 200)])
        git.flush_objects()
        deep = "/".join(["d" * 200] * 5)
        done = threading.Event()
        worker = threading.Thread(target=lambda: (git.preread_trees(tree, [f"{deep}/n{i}" for i in range(100)]),
                                                  done.set()), daemon=True)
        worker.start()
        worker.join(timeout=60)
        assert done.is_set(), "reading ahead blocked"
        assert wide in git._trees


@pytest.mark.parametrize("seed", range(4))
def test_changes_exactly_agrees_with_diff_tree(tmp_path: Path, seed: int) -> None:
    """changes_exactly(OLD, NEW, CHANGES) holds for diff-tree's own changes of two trees (edits, deletions,
    new directories, a mode change) and for nothing else: one change left out, one too many, a wrong old
    or new side, or another tree."""
    rng = random.Random(seed)
    repo = init_repo(tmp_path / "r", bare=True)
    files = {f"d{d}/s{s}/f{f}.py": f"{d} {s} {f}\n" for d in range(3) for s in range(3) for f in range(3)}
    files.update({"top.py": "t\n", "x/y": "y\n"})
    base = repo.commit(files, "base", ref="refs/heads/main")
    with Git(repo.path) as git:
        old = git.tree_of(base)
        paths = sorted(files)
        edits: dict = {p: ("100644", git.write_blob(f"{seed} {p}\n".encode())) for p in rng.sample(paths, 4)}
        edits.update({p: None for p in rng.sample([p for p in paths if p not in edits], 2)})
        edits.update({f"new{seed}/deep/z.txt": ("100644", git.write_blob(b"z\n")), "top.py": ("100755", git.blob_at(old, "top.py")[1])})  # type: ignore[index]
        if seed % 2:
            edits.update({"x/y": None, "x/y/inner": ("100644", git.write_blob(b"inner\n"))})
        new = git.edit_tree(old, edits)
        git.flush_objects()
        changes = git.diff_trees([(old, new)], renames=False)[0]
        # a file that becomes a directory (odd seeds) is left undecided: diff-tree answers for it
        assert len(changes) >= 7 and git.changes_exactly(old, new, changes) is (seed % 2 == 0)
        other = git.edit_tree(new, {"d0/s0/f0.py": ("100644", git.write_blob(b"other\n"))})
        wrong_old = [replace(changes[0], old_oid=changes[-1].new_oid)] + changes[1:]
        wrong_new = changes[:-1] + [replace(changes[-1], new_oid=changes[0].old_oid)]
        for case in (changes[1:], changes[:-1], wrong_old, wrong_new):
            assert not git.changes_exactly(old, new, case)
        assert not git.changes_exactly(old, other, changes) and not git.changes_exactly(new, new, changes)
        assert git.changes_exactly(new, other, git.diff_trees([(new, other)])[0])


@pytest.mark.parametrize("odd_at", [None, 0, 1, 3])
def test_a_tree_is_read_the_same_entry_by_entry(tmp_path: Path, odd_at: int | None) -> None:
    """read_tree's one-pass reading (a regex match per entry) gives what reading entry by entry gives:
    object names holding NUL, space and newline bytes, names with spaces, newlines and bytes that are not
    UTF-8, and a mode git does not write (100664) first, second or later, where the reading starts over
    entry by entry; the splice layout is kept only for a tree git would write."""
    repo = init_repo(tmp_path / "r", bare=True)
    names = [b"a b", b"c\nd", b"e\xff", b"f", b"g.py"]
    oids = [bytes([0, 32, 10] + [n] * 17).hex() for n in range(len(names))]
    raw = b"".join((b"100664" if n == odd_at else b"100644") + b" " + name + b"\0" + bytes.fromhex(oid)
                   for n, (name, oid) in enumerate(zip(names, oids)))
    with Git(repo.path, quarantine=True) as git:
        tree = git.write_object("tree", raw)
        fast = git._parse_tree(tree, raw)
        kept = git._layouts.pop(tree, None)
        assert fast == git._parse_tree_entries(tree, raw)
        assert git._layouts.pop(tree, None) == kept
        assert [entry[2] for entry in fast] == oids and [entry[3] for entry in fast] == names
        assert (kept is not None) == (odd_at is None)
        assert git._parse_tree(tree, b"") == []


def test_a_tree_out_of_gits_order_with_gits_modes_is_not_spliced(tmp_path: Path) -> None:
    """Entries out of git's order (a file sorted after a directory of the same name plus `/`) are read,
    but the tree's bytes are not kept for splicing: an edit writes the canonical tree."""
    repo = init_repo(tmp_path / "r", bare=True)
    with Git(repo.path, quarantine=True) as git:
        a, sub = git.write_blob(b"a\n"), git.mktree([("100644", "blob", git.write_blob(b"s\n"), b"s")])
        raw = b"40000 x\0" + bytes.fromhex(sub) + b"100644 x.py\0" + bytes.fromhex(a)   # x.py sorts before x/
        odd = git.write_object("tree", raw)
        assert [entry[3] for entry in git.read_tree(odd)] == [b"x", b"x.py"] and odd not in git._layouts
        new = git.write_blob(b"new\n")
        assert git.edit_tree(odd, {"x.py": ("100644", new)}) == git.mktree(
            [("040000", "tree", sub, b"x"), ("100644", "blob", new, b"x.py")])


def test_changed_paths_are_where_two_trees_differ(tmp_path: Path) -> None:
    """Files that differ at any depth; a directory that is on one side only, or a file on the other, is
    named by its own path (everything beneath it changed); equal subtrees are not read."""
    repo = init_repo(tmp_path / "r", bare=True)
    with Git(repo.path, quarantine=True) as git:
        a, b = git.write_blob(b"a\n"), git.write_blob(b"b\n")

        def tree(files: dict[str, str]) -> str:
            return git.edit_tree(git.mktree([]), {path: ("100644", oid) for path, oid in files.items()})

        old = tree({"same/x": a, "deep/er/f": a, "gone/y": a, "swap": a, "keep": a, "mode": a})
        new = tree({"same/x": a, "deep/er/f": b, "added/z": a, "swap/inner": a, "keep": a})
        new = git.edit_tree(new, {"mode": ("100755", a)})
        assert git.changed_paths(old, new) == ["added", "deep/er/f", "gone", "mode", "swap"]
        assert git.changed_paths(old, old) == []


def _differs_only_by_name(git: Git, old: str | None, new: str | None, edits: dict) -> bool:
    """The entry-by-entry reading changes_exactly had before comparing lists (a reference)."""
    before = {e[3]: e for e in git.read_tree(old)} if old else {}
    after = {e[3]: e for e in git.read_tree(new)} if new else {}
    for name in before.keys() | after.keys() | edits.keys():
        edit, a, b = edits.get(name), before.get(name), after.get(name)
        if edit is None:
            if a != b:
                return False
        elif isinstance(edit, dict):
            if (a is not None and a[1] != "tree") or (b is not None and b[1] != "tree") or (a is b is None):
                return False
            if not _differs_only_by_name(git, a[2] if a else None, b[2] if b else None, edit):
                return False
        elif any(entry is not None and (entry[1] == "tree" or (entry[0], entry[2]) != side)
                 or (entry is None) != (side is None) for entry, side in ((a, edit[0]), (b, edit[1]))):
            return False
    return True


def test_changes_exactly_decides_as_reading_entry_by_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Comparing the entries no change names as two lists decides what looking each one up decided, on
    200 random tree pairs and change lists (diff-tree's own, one left out, one added, a side swapped)."""
    from carrytool.gitlayer import git as gitmodule

    rng = random.Random(17)
    repo = init_repo(tmp_path / "r", bare=True)
    files = {f"d{d}/s{s}/f{f}.py": f"{d} {s} {f}\n" for d in range(4) for s in range(4) for f in range(6)}
    files.update({f"top{n}.py": f"{n}\n" for n in range(30)})
    base = repo.commit(files, "base", ref="refs/heads/main")
    paths = sorted(files)
    decided: list[tuple[bool, bool]] = []
    with Git(repo.path) as git:
        old = git.tree_of(base)
        for case in range(50):
            edits: dict = {p: ("100644", git.write_blob(f"{case} {p}\n".encode())) for p in rng.sample(paths, 5)}
            edits.update({p: None for p in rng.sample([p for p in paths if p not in edits], 2)})
            edits[f"new{case % 3}/x{case}.py"] = ("100644", git.write_blob(b"n\n"))
            new = git.edit_tree(old, edits)
            git.flush_objects()
            changes = git.diff_trees([(old, new)], renames=False)[0]
            added = replace(changes[0], path=f"d0/s0/zz{case}.py", status="A", old_mode="000000",
                            old_oid="0" * 40)
            swapped = [replace(changes[-1], old_oid=changes[-1].new_oid, new_oid=changes[-1].old_oid)] + changes[:-1]
            for variant in (changes, changes[1:], changes + [added], swapped):
                nested: dict = {}
                calls: list[bool] = []
                real = gitmodule.Git._differs_only

                def spy(self: Git, a: str | None, b: str | None, e: dict) -> bool:  # noqa: ANN001
                    if not calls:
                        nested.update(e)
                    calls.append(True)
                    return real(self, a, b, e)

                monkeypatch.setattr(gitmodule.Git, "_differs_only", spy)
                got = git.changes_exactly(old, new, variant)
                monkeypatch.setattr(gitmodule.Git, "_differs_only", real)
                want = _differs_only_by_name(git, old, new, nested) if nested else False
                decided.append((got, want))
    assert all(got == want for got, want in decided), decided
    assert sum(got for got, _ in decided) == 50 and len(decided) == 200     # diff-tree's own lists hold
