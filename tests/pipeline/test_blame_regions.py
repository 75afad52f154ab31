"""blame's conflict regions read from a tree merge that already merged the same blobs equal the regions
of merging them again; the regions parser reads only the lines between the first and the last marker."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.pipeline import blame
from tests.gitrepo import init_repo


def _line_by_line(merged: bytes) -> list[bytes]:
    """The regions as the whole file read line by line gives them (what _regions must equal)."""
    return blame.regions_of_lines(merged.splitlines(keepends=True))


def test_regions_equal_a_line_by_line_read_whatever_the_line_ends() -> None:
    rnd = random.Random(17)
    pieces = [b"<<<<<<< a", b">>>>>>> b", b"=======", b"||||||| c", b"x", b"<<<<<<<", b">>>>>>>", b"",
              b"y <<<<<<< z", b">>>>>>>x"]
    for _ in range(20000):
        merged = b"".join(rnd.choice(pieces) + rnd.choice((b"\n", b"\r\n", b"\r")) for _ in range(rnd.randint(0, 8)))
        if rnd.random() < 0.3:
            merged = merged.rstrip(b"\r\n")
        assert blame._regions(merged) == _line_by_line(merged), merged


def test_regions_read_from_a_tree_merge_equal_a_merge_of_the_blobs(tmp_path: Path) -> None:
    up = init_repo(tmp_path / "up", bare=True)
    body = [f"line {i}\n" for i in range(60)]

    def text(edits: dict[int, str]) -> str:
        return "".join(edits.get(i, line) for i, line in enumerate(body))

    base = up.commit({"f.py": text({}), "g.py": "g\n"}, "base", ref="refs/heads/main")
    ours = up.commit({"f.py": text({3: "ours 3\n", 40: "ours 40\n"}), "g.py": "ours\n"}, "ours", parent=base)
    theirs = up.commit({"f.py": text({3: "theirs 3\n", 41: "theirs 41\n"}), "g.py": "theirs\n"}, "theirs", parent=base)
    with Git(up.path) as git:
        merge = git.merge_trees([(ours, theirs)])[0]
        assert not merge.clean and set(merge.conflicted_paths) == {"f.py", "g.py"}
        blobs = {c: {p: git.blob_at(git.tree_of(c), p)[1] for p in ("f.py", "g.py")}  # type: ignore[index]
                 for c in (base, ours, theirs)}
        for path in ("f.py", "g.py"):
            args = (blobs[ours][path], blobs[base][path], blobs[theirs][path])
            read = blame.regions_in(git, merge, path, *args)
            assert read is not None and read == blame.conflict_regions(git, *args)
        f = (blobs[ours]["f.py"], blobs[base]["f.py"], blobs[theirs]["f.py"])
        assert len(blame.regions_in(git, merge, "f.py", *f) or []) == 2         # lines 3 and 40-41
        # other blobs than the merge's at that path (a merge that cannot tell): None, never a guess
        assert blame.regions_in(git, merge, "f.py", f[2], f[1], f[0]) is None
        assert blame.regions_in(git, merge, "f.py", blobs[ours]["g.py"], f[1], f[2]) is None
        assert blame.regions_in(git, git.merge_trees([(ours, ours)])[0], "f.py", *f) is None
        assert blame.regions_in(git, None, "f.py", *f) is None


def test_a_merged_blob_is_read_for_its_regions_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """explain asks the regions of one entry's merge alone onto upstream once per pair it is in: the blob
    is read once (a blob never changes) where regions_in is told to remember it, and every time where not
    (a pair's merge, asked once: nothing kept); another merged blob gives its own regions."""
    monkeypatch.setattr(blame, "_REGIONS_OF", {})          # what another test (or a repeat of this) kept
    up = init_repo(tmp_path / "up", bare=True)
    body = [f"line {i}\n" for i in range(40)]
    base = up.commit({"f.py": "".join(body)}, "base", ref="refs/heads/main")
    ours = up.commit({"f.py": "".join(body).replace("line 3\n", "ours 3\n")}, "ours", parent=base)
    theirs = up.commit({"f.py": "".join(body).replace("line 3\n", "theirs 3\n")}, "theirs", parent=base)
    other = up.commit({"f.py": "".join(body).replace("line 3\n", "other 3\n")}, "other", parent=base)
    with Git(up.path) as git:
        blob = {c: git.blob_at(git.tree_of(c), "f.py")[1] for c in (base, ours, theirs, other)}  # type: ignore[index]
        merge, merge_other = git.merge_trees([(ours, theirs), (other, theirs)])
        reads: list[str] = []
        read_blob = git.read_blob
        git.read_blob = lambda oid: reads.append(oid) or read_blob(oid)  # type: ignore[method-assign]
        args = (blob[ours], blob[base], blob[theirs])
        first = blame.regions_in(git, merge, "f.py", *args, remember=True)
        again = blame.regions_in(git, merge, "f.py", *args, remember=True)
        assert first == again == blame.conflict_regions(git, *args)
        merged = git.blob_at(merge.tree, "f.py")[1]  # type: ignore[index]
        assert reads.count(merged) == 1
        other_args = (blob[other], blob[base], blob[theirs])
        with_other = [blame.regions_in(git, merge_other, "f.py", *other_args) for _ in range(2)]
        merged_other = git.blob_at(merge_other.tree, "f.py")[1]  # type: ignore[index]
        assert reads.count(merged_other) == 2 and merged_other not in blame._REGIONS_OF
        assert with_other[0] == with_other[1] and with_other[0] is not None and with_other[0] != first
        assert b"other 3\n" in with_other[0][0]
