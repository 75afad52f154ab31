"""`store_lacks`: which objects the user's store lacks, read from its loose files and .idx files in process,
checked against `git cat-file --batch-check` on stores of every shape it meets."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from carrytool.gitlayer.storeindex import store_lacks
from tests.gitrepo import Repo, init_repo


def _hashes(repo: Repo, texts: list[bytes], write: bool = True) -> list[str]:
    """The blobs of TEXTS, written into REPO's store (loose) with WRITE: one hash-object process."""
    folder = repo.path.parent / "texts"
    folder.mkdir(exist_ok=True)
    start = len(list(folder.iterdir()))
    paths = [folder / f"{start + n}" for n in range(len(texts))]
    for path, text in zip(paths, texts):
        path.write_bytes(text)
    return repo.git("hash-object", *(["-w"] if write else []), "--stdin-paths",
                    input="".join(f"{p}\n" for p in paths).encode()).split()


def _git_lacks(repo: Repo, oids: list[str]) -> list[str]:
    out = repo.git("cat-file", "--batch-check=%(objectname)", input="".join(f"{o}\n" for o in oids).encode())
    return [line.split()[0] for line in out.splitlines() if line.endswith(" missing")]


def _store(tmp_path: Path) -> tuple[Repo, list[str]]:
    """A store with three packs (the last one's objects also loose), loose objects, and the names of
    objects it lacks."""
    repo = init_repo(tmp_path / "r", bare=True)
    rng = random.Random(5)
    oids = []
    for round_ in range(3):
        batch = _hashes(repo, [b"%d %d %s\n" % (round_, n, rng.randbytes(8).hex().encode()) for n in range(300)])
        oids += batch
        listing = "".join(f"{o}\n" for o in batch[:200]).encode()
        repo.git("pack-objects", "-q", str(repo.path / "objects" / "pack" / "pack"), input=listing)
        if round_ == 1:
            repo.git("prune-packed")                   # the last round's 200 stay loose too
    absent = _hashes(repo, [b"absent %d\n" % n for n in range(300)], write=False)
    # names at both ends of the fan-out and at a bracket's edges
    absent += ["00" * 20, "ff" * 20, oids[0][:2] + "0" * 38, oids[0][:2] + "f" * 38]
    return repo, oids + absent


def _packed_only(repo: Repo) -> list[Path]:
    """The packs of _store whose objects are not loose too."""
    def packed_only(pack: Path) -> bool:
        first = repo.git("show-index", input=pack.with_suffix(".idx").read_bytes()).split()[1]
        return not (repo.path / "objects" / first[:2] / first[2:]).exists()

    return [p for p in sorted((repo.path / "objects" / "pack").glob("*.pack")) if packed_only(p)]


def test_it_answers_as_git_does_for_packed_loose_and_absent_objects(tmp_path: Path) -> None:
    repo, oids = _store(tmp_path)
    random.Random(1).shuffle(oids)
    expected = _git_lacks(repo, oids)
    assert len(expected) == 304 and len(oids) == 1204
    assert store_lacks(str(repo.path / "objects"), oids) == expected


def test_a_pack_without_its_pack_file_or_an_index_gone_counts_for_nothing(tmp_path: Path) -> None:
    """git uses a pack only by its .idx with its .pack beside it; an .idx alone (a repack deleting it, a
    copy half made) lists objects the store cannot read."""
    repo, oids = _store(tmp_path)
    [pack, _other] = _packed_only(repo)
    pack.unlink()
    expected = _git_lacks(repo, oids)
    assert len(expected) == 304 + 200
    assert store_lacks(str(repo.path / "objects"), oids) == expected


def test_a_store_it_does_not_fully_read_is_left_to_git(tmp_path: Path) -> None:
    repo, oids = _store(tmp_path)
    store = repo.path / "objects"
    other = init_repo(tmp_path / "other", bare=True)
    (store / "info").mkdir(exist_ok=True)
    (store / "info" / "alternates").write_text(f"{other.path / 'objects'}\n")
    assert store_lacks(str(store), oids) is None                     # an alternate's objects count as present
    (store / "info" / "alternates").write_text("")
    assert store_lacks(str(store), oids) == _git_lacks(repo, oids)   # an empty alternates file names none
    [idx, *_] = sorted((store / "pack").glob("*.idx"))
    data = idx.read_bytes()
    for text in (b"", data[:500], data[:-500], b"\0\0\0\1" + data[4:]):   # empty, cut short, another version
        idx.write_bytes(text)
        assert store_lacks(str(store), oids) is None


@pytest.mark.parametrize("shape", ["no pack directory", "empty"])
def test_a_store_without_packs_is_read_from_its_loose_files(tmp_path: Path, shape: str) -> None:
    repo = init_repo(tmp_path / "r", bare=True)
    present = _hashes(repo, [b"%d\n" % n for n in range(20)])
    absent = _hashes(repo, [b"x%d\n" % n for n in range(20)], write=False)
    if shape == "no pack directory":
        (repo.path / "objects" / "pack").rmdir()
    assert store_lacks(str(repo.path / "objects"), present + absent) == absent
    assert store_lacks(str(repo.path / "objects"), []) == []


def test_a_version_one_index_is_left_to_git(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", bare=True)
    oids = _hashes(repo, [b"%d\n" % n for n in range(10)])
    repo.git("pack-objects", "-q", "--index-version=1", str(repo.path / "objects" / "pack" / "pack"),
             input="".join(f"{o}\n" for o in oids).encode())
    repo.git("prune-packed")
    assert not list((repo.path / "objects").glob("??/*"))
    assert store_lacks(str(repo.path / "objects"), oids) is None


@pytest.mark.parametrize("damage", ["empty", "cut short", "another pack", "dangling link", "a directory",
                                    "fan-out going down"])
def test_a_pack_git_would_refuse_counts_for_nothing(tmp_path: Path, damage: str) -> None:
    """git checks a pack against its index before it reads it (a regular file, its header's object count,
    its trailing checksum, an index whose fan-out never goes down) and otherwise ignores the pack: its
    objects are missing (and git's own write path writes them again). An adversarial review found each
    of these counted as present before the pack itself was checked."""
    repo, oids = _store(tmp_path)
    [pack, other] = _packed_only(repo)
    idx = pack.with_suffix(".idx")
    data = pack.read_bytes()
    if damage == "empty":
        pack.write_bytes(b"")
    elif damage == "cut short":
        pack.write_bytes(data[:-100])
    elif damage == "another pack":
        pack.write_bytes(other.read_bytes())
    elif damage == "dangling link":
        pack.unlink()
        pack.symlink_to(tmp_path / "nowhere.pack")
    elif damage == "a directory":
        pack.unlink()
        pack.mkdir()
    else:
        table = bytearray(idx.read_bytes())
        table[8 + 254 * 4:8 + 255 * 4] = (10 ** 6).to_bytes(4, "big")
        idx.write_bytes(bytes(table))
    expected = _git_lacks(repo, oids)
    assert len(expected) == 304 + 200                  # the damaged pack's 200 objects are missing to git
    assert store_lacks(str(repo.path / "objects"), oids) == expected


@pytest.mark.parametrize("change", ["nothing", "pack deleted", "pack cut short",
                                    "pack and index rewritten", "fan-out going down", "repacked"])
def test_what_an_earlier_call_found_is_asked_again_of_a_store_changed_since(tmp_path: Path, change: str) -> None:
    """A run keeps what it found in each .idx file (LOOKUPS) for its next call (it asks again after every
    ref it writes): a store changed in between (a pack deleted or cut short beside its index, a pack and
    index rewritten in place, a concurrent repack) is answered as git answers it then, never from what the
    file held before."""
    repo, oids = _store(tmp_path)
    store = str(repo.path / "objects")
    lookups: dict = {}
    first = store_lacks(store, oids, lookups)
    assert first == _git_lacks(repo, oids) and len(lookups) == 3
    [pack, other] = _packed_only(repo)
    idx = pack.with_suffix(".idx")
    if change == "pack deleted":
        pack.unlink()
    elif change == "pack cut short":                # its index the same file as before
        pack.chmod(0o644)
        pack.write_bytes(pack.read_bytes()[:-100])
    elif change == "pack and index rewritten":      # the same files (inode, size) holding another pack
        for mine, theirs in ((idx, other.with_suffix(".idx")), (pack, other)):
            mine.chmod(0o644)
            mine.write_bytes(theirs.read_bytes())
    elif change == "fan-out going down":
        idx.chmod(0o644)
        table = bytearray(idx.read_bytes())
        table[8 + 254 * 4:8 + 255 * 4] = (10 ** 6).to_bytes(4, "big")
        idx.write_bytes(bytes(table))
    elif change == "repacked":
        repo.git("repack", "-a", "-d", "-k", "-q")         # every object, in one new pack
        repo.git("prune-packed")
    expected = _git_lacks(repo, oids)
    assert (expected == first) == (change in ("nothing", "repacked"))
    assert store_lacks(store, oids, lookups) == expected == store_lacks(store, oids)
