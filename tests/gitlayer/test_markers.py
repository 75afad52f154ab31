"""`on_conflict: theirs` content merges: read back from merge-tree's conflict markers (gitlayer.markers),
in the long-lived merge-tree, exactly as git's own `-X theirs` resolves them.

The oracle is git itself: `merge-tree -X theirs` (git >= 2.43: the current git CI builds, or this
machine's when it is one) on the same three versions, byte for byte, including versions with lines that
look like conflict markers, files that end without a line end, CR LF lines."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from carrytool.errors import GitError
from carrytool.gitlayer import markers
from carrytool.gitlayer.git import Git
from tests.conftest import SECOND_GIT
from tests.gitrepo import init_repo

CONFLICT = b"<<<<<<< ours-label\n- B\n=======\n- b2\n>>>>>>> theirs-label\n"


def test_each_conflict_becomes_its_second_part() -> None:
    merged = b"head\n" + CONFLICT + b"middle\n" + CONFLICT.replace(b"- b2\n", b"x\ny\n") + b"tail\n"
    assert markers.favour_theirs(merged, b"unused\n") == b"head\n- b2\nmiddle\nx\ny\ntail\n"


def test_a_conflict_whose_second_part_is_empty_leaves_nothing() -> None:
    merged = b"head\n<<<<<<< a\n- B\n=======\n>>>>>>> b\ntail"
    assert markers.favour_theirs(merged, b"head\ntail") == b"head\ntail"


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_the_line_end_markers_add_after_a_last_line_without_one_is_dropped(end: bytes) -> None:
    # theirs ends with "last" and no line end; the conflict's part needed one before `>>>>>>>`
    merged = b"head" + end + b"<<<<<<< a" + end + b"mine" + end + b"=======" + end + b"last" + end + b">>>>>>> b" + end
    assert markers.favour_theirs(merged, b"head" + end + b"last") == b"head" + end + b"last"
    # a theirs that ends with its line end keeps it
    assert markers.favour_theirs(merged, b"head" + end + b"last" + end) == b"head" + end + b"last" + end


@pytest.mark.parametrize("merged", [
    b"a\n=======\nb\n",                                        # a separator outside a conflict
    b"a\n>>>>>>> b\n",                                          # an end outside a conflict
    b"<<<<<<< a\nx\n<<<<<<< a\n=======\ny\n>>>>>>> b\n",        # a conflict inside a conflict
    b"<<<<<<< a\nx\n=======\ny\n=======\nz\n>>>>>>> b\n",      # two separators
    b"<<<<<<< a\nx\n=======\ny\n",                              # no end
    b"a conflict without markers (git merged a binary)\n",
])
def test_markers_not_made_as_assumed_are_refused(merged: bytes) -> None:
    assert markers.favour_theirs(merged, b"y\n") is None


def test_escape_prefixes_marker_like_lines_only_and_unescape_takes_it_off() -> None:
    blobs = [b"a\n=======\n<<<<<<< x\n", b">>>>>>> y\r\n=======\r\nb\n========\n", b"=======", b"plain\n"]
    escaped, prefix = markers.escape(blobs)
    assert prefix == b"\x7f"
    assert escaped[:3] == [b"a\n\x7f=======\n\x7f<<<<<<< x\n", b"\x7f>>>>>>> y\r\n\x7f=======\r\nb\n========\n",
                           b"\x7f======="]
    assert escaped[3] == b"plain\n"
    assert [markers.unescape(blob, prefix) for blob in escaped] == blobs


def test_the_prefix_is_one_no_line_starts_with() -> None:
    blobs = [b"=======\n\x7fone\n", b"\x7f\x7ftwo\n"]
    escaped, prefix = markers.escape(blobs)
    assert prefix == b"\x7f\x7f\x7f"
    assert escaped[0] == b"\x7f\x7f\x7f=======\n\x7fone\n"
    assert [markers.unescape(blob, prefix) for blob in escaped] == blobs


def test_nothing_to_escape_leaves_the_blobs_as_they_are() -> None:
    blobs = [b"a\n========\n", b"<<<<<< six\n"]
    assert markers.escape(blobs) == (blobs, b"")


# -- against git ------------------------------------------------------------------------------------

def _blob(repo: Path, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


def test_follows_gits_own_x_theirs_where_merge_file_would_not(tmp_path: Path) -> None:
    # merge-tree's content merges diff with histogram (merge-ort), `git merge-file` with myers: here they
    # split the conflict differently, and `-X theirs` (cherry-pick, merge-tree) gives the first
    repo = init_repo(tmp_path / "r", bare=True).path
    base, ours, theirs = b"d\ny\n\nc\n", b"\ny\nd\n\n", b"d\nx\ny\n\nc\n"
    with Git(repo) as git:
        got = git.merge_theirs(_blob(repo, ours), _blob(repo, base), _blob(repo, theirs))
    assert got == b"d\nx\ny\n\ny\nd\n\n"
    for name, data in (("o", ours), ("b", base), ("t", theirs)):
        (tmp_path / name).write_bytes(data)
    old = subprocess.run(["git", "merge-file", "-p", "--quiet", "--theirs", "o", "b", "t"], cwd=tmp_path,
                         capture_output=True).stdout
    assert old == b"d\nx\ny\nd\n\n" != got


def test_lines_that_look_like_markers_are_merged_and_kept(tmp_path: Path) -> None:
    # upstream's side of the conflict holds a `=======` line, the entry's a `<<<<<<<` one: read as markers,
    # the conflict would split at the wrong line (or not be readable at all)
    repo = init_repo(tmp_path / "r", bare=True).path
    base = b"Changes\n=======\n\n- a\n- b\n- c\n"
    ours = b"Changes\n=======\n\n- a\n- B\n=======\n- c\n"
    theirs = b"Changes\n=======\n\n- a\n- b2\n<<<<<<< kept\n- c\n"
    with Git(repo) as git:
        merged = git.merge_contents(_blob(repo, ours), _blob(repo, base), _blob(repo, theirs))
        assert merged is not None and not merged[0] and merged[1].split(b"\n").count(b"=======") == 3
        got = git.merge_theirs(_blob(repo, ours), _blob(repo, base), _blob(repo, theirs))
    assert got == theirs


def test_a_binary_side_is_left_to_the_caller(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", bare=True).path
    with Git(repo) as git:
        assert git.merge_theirs(_blob(repo, b"a\0b\n"), _blob(repo, b"a\n"), _blob(repo, b"c\n")) is None


def test_a_side_too_large_for_a_text_merge_is_taken_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # git merges a side over MAX_XDIFF_SIZE (1023 MiB) as a binary: -X theirs takes the entry's side whole;
    # one the escape would push over it cannot be merged as git merges it, and says so
    repo = init_repo(tmp_path / "r", bare=True).path
    monkeypatch.setattr(markers, "MAX_XDIFF_SIZE", 10)
    with Git(repo) as git:
        assert git.merge_theirs(_blob(repo, b"a\nb\nc\nd\ne\nf\nours\n"), _blob(repo, b"a\n"),
                                _blob(repo, b"b\n")) is None
        with pytest.raises(GitError, match="largest file git merges as text"):
            git.merge_theirs(_blob(repo, b"=======\n"), _blob(repo, b"a\n"), _blob(repo, b"b\n=======\n"))


def _x_theirs_git() -> str | None:
    """A git whose merge-tree takes `-X theirs` (>= 2.43): this machine's, or the second one CI builds."""
    for folder in ("", SECOND_GIT):
        git = shutil.which("git") if not folder else str(Path(folder) / "git")
        usage = subprocess.run([git, "merge-tree", "-h"], capture_output=True) if git else None
        if usage is not None and b"strategy-option" in usage.stdout + usage.stderr:
            return git
    return None


POOL = [b"a\n", b"b\n", b"c\n", b"def f():\n", b"    return 1\n", b"\n", b"=======\n", b"<<<<<<< HEAD\n",
        b">>>>>>> x\n", b"x = 1\r\n", b"=======\r\n", b"========\n", b"}\n", b"\x7fodd\n", b"y\n", b"d\n"]


def _version(rng: random.Random, lines: list[bytes]) -> bytes:
    """LINES edited at random (inserted, deleted, replaced), its last line end dropped now and then."""
    lines = list(lines)
    for _ in range(rng.randint(1, 4)):
        at, what = rng.randint(0, len(lines)), rng.random()
        if what < 0.4 or not lines:
            lines.insert(at, rng.choice(POOL))
        elif what < 0.7:
            del lines[min(at, len(lines) - 1)]
        else:
            lines[min(at, len(lines) - 1)] = rng.choice(POOL)
    data = b"".join(lines)
    return data[:-1] if data and rng.random() < 0.3 else data


@pytest.mark.skipif(_x_theirs_git() is None, reason="needs a git whose merge-tree takes -X (>= 2.43)")
def test_the_same_bytes_as_merge_tree_x_theirs(tmp_path: Path) -> None:
    oracle = _x_theirs_git()
    assert oracle is not None
    repo = init_repo(tmp_path / "r", bare=True).path
    rng = random.Random(17)
    conflicted = 0

    def tree(oid: str) -> str:
        return subprocess.run(["git", "mktree"], cwd=repo, input=f"100644 blob {oid}\tf\n".encode(),
                              capture_output=True, check=True).stdout.decode().strip()

    with Git(repo) as git:
        for _ in range(150):
            base_lines = [rng.choice(POOL) for _ in range(rng.randint(0, 10))]
            base, ours, theirs = b"".join(base_lines), _version(rng, base_lines), _version(rng, base_lines)
            oids = [_blob(repo, data) for data in (ours, base, theirs)]
            got = git.merge_theirs(*oids)
            trees = [tree(oid) for oid in oids]
            plain = subprocess.run([oracle, "merge-tree", "--write-tree", "--merge-base", trees[1], trees[0],
                                    trees[2]], cwd=repo, capture_output=True)
            conflicted += plain.returncode == 1
            out = subprocess.run([oracle, "merge-tree", "--write-tree", "-X", "theirs", "--merge-base", trees[1],
                                  trees[0], trees[2]], cwd=repo, capture_output=True, check=True).stdout
            want = subprocess.run(["git", "cat-file", "blob", f"{out.split()[0].decode()}:f"], cwd=repo,
                                  capture_output=True, check=True).stdout
            assert got == want, (base, ours, theirs)
    assert conflicted > 75         # most of them conflict: the markers were read back


def test_the_fast_search_for_marker_like_lines_finds_what_the_pattern_does() -> None:
    rng = random.Random(5)
    pieces = [b"=======", b"<<<<<<<", b">>>>>>>", b"\n", b"\r", b"\r\n", b"=", b"x", b" ", b"========"]
    blobs = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    blobs += [b"=======", b"=======\r", b"a\n=======", b"a\n=======\r", b"=======\n", b"x=======\n", b"a\n =======\n"]
    for blob in blobs:
        assert markers._has_marker_like(blob) == bool(markers._MARKER_LIKE.search(blob)), blob


def test_relabel_writes_markers_of_a_size_with_labels_keeping_line_ends() -> None:
    merged = (b"a\r\n<<<<<<< 1234:f\r\nx\r\n||||||| 5678:f\r\nb\r\n=======\r\ny\r\n>>>>>>> 9abc:f\r\n"
              b"c\n<<<<<<< 1234:f\nx2\n=======\ny2\n>>>>>>> 9abc:f\n")
    assert markers.relabel(merged, 10, ("ours", "base", "theirs")) == (
        b"a\r\n<<<<<<<<<< ours\r\nx\r\n|||||||||| base\r\nb\r\n==========\r\ny\r\n>>>>>>>>>> theirs\r\n"
        b"c\n<<<<<<<<<< ours\nx2\n==========\ny2\n>>>>>>>>>> theirs\n")
    # an empty label is a label: merge-file -L "" writes the space before it
    assert markers.relabel(merged, 7, ("", "", "")).startswith(b"a\r\n<<<<<<< \r\nx\r\n||||||| \r\n")
    assert markers.relabel(b"no conflict here\n", 7, ("a", "b", "c")) is None


def _merge_file_git() -> str | None:
    """A git whose merge-file takes --diff-algorithm (>= 2.43): merge-tree's histogram diff, in merge-file."""
    for folder in ("", SECOND_GIT):
        git = shutil.which("git") if not folder else str(Path(folder) / "git")
        usage = subprocess.run([git, "merge-file", "-h"], capture_output=True) if git else None
        if usage is not None and b"diff-algorithm" in usage.stdout + usage.stderr:
            return git
    return None


@pytest.mark.skipif(_merge_file_git() is None, reason="needs a git whose merge-file takes --diff-algorithm (>= 2.43)")
def test_merge_diff3_is_merge_files_diff3_with_merge_trees_diff(tmp_path: Path) -> None:
    # diff3 style merges at level EAGER in both (xdiff/xmerge.c), so with the same diff algorithm (merge-ort's
    # histogram) `git merge-file --diff3` is the oracle, byte for byte, labels and marker size included
    oracle = _merge_file_git()
    assert oracle is not None
    repo = init_repo(tmp_path / "r", bare=True).path
    rng = random.Random(23)
    pool = POOL + [b"||||||| base\n", b"#\n"]
    conflicted = 0
    with Git(repo) as git:
        for _ in range(150):
            base_lines = [rng.choice(pool) for _ in range(rng.randint(0, 10))]
            base, ours, theirs = b"".join(base_lines), _version(rng, base_lines), _version(rng, base_lines)
            for name, data in (("o", ours), ("b", base), ("t", theirs)):
                (tmp_path / name).write_bytes(data)
            want = subprocess.run([oracle, "merge-file", "-p", "--quiet", "--diff3", "--marker-size=23",
                                   "--diff-algorithm=histogram", "-L", "ours", "-L", "base", "-L", "theirs",
                                   "o", "b", "t"], cwd=tmp_path, capture_output=True)
            conflicted += want.returncode > 0
            assert git.merge_diff3(ours, base, theirs, 23) == (want.returncode == 0, want.stdout), (base, ours, theirs)
    assert conflicted > 75


def test_merge_texts_labels_merge_trees_own_conflicts(tmp_path: Path) -> None:
    # the text merge shown to a user (a structured file resolved in part, a union fixup) is merge-tree's, the
    # merge whose conflicts were reported, with the labels asked for
    repo = init_repo(tmp_path / "r", bare=True).path
    base, ours, theirs = b"a\nb\n=======\nc\n", b"a\nB\n=======\nc\n", b"a\nb2\n=======\nc\n"
    with Git(repo) as git:
        got = git.merge_texts(ours, base, theirs, ("the fold now", "then", "your edit"))
        plain = git.merge_contents(*(_blob(repo, data) for data in (ours, base, theirs)))
    assert got == (False, b"a\n<<<<<<< the fold now\nB\n=======\nb2\n>>>>>>> your edit\n=======\nc\n")
    # merge-tree's own text of the same merge (markers labelled with its objects): the same lines
    assert plain is not None and [line[:7] for line in plain[1].split(b"\n")] == [line[:7] for line in got[1].split(b"\n")]
