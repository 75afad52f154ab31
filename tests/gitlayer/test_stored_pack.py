"""`stored_pack`: the pack and .idx a quarantine flush is written as, in process; `pack_entry` reads one back."""

from __future__ import annotations

import hashlib
import random
import subprocess
from pathlib import Path

import pytest

from carrytool.errors import GitError
from carrytool.gitlayer.objects import (
    _pack_header,
    pack_entry,
    stored_pack,
    stored_zlib,
)


def _objects(seed: int, count: int) -> list[tuple[str, bytes, bytes]]:
    rng = random.Random(seed)
    out: dict[str, tuple[str, bytes, bytes]] = {}     # distinct objects, as a flush has them
    for n in range(count):
        kind = (b"blob", b"tree", b"commit")[n % 3]
        content = rng.randbytes(rng.choice([0, 1, 15, 16, 300, 0x10000 + 7])) if n > 2 else b""
        sha = hashlib.sha1(kind + b" %d\0" % len(content) + content).hexdigest()
        out.setdefault(sha, (sha, kind, content))
    return list(out.values())


@pytest.mark.parametrize("count", [1, 3, 40])
def test_git_indexes_the_pack_to_the_very_idx_written_here(tmp_path: Path, count: int) -> None:
    """index-pack, given the pack alone, checks every object and writes its own .idx: byte for byte the
    one stored_pack made (names sorted, CRCs, offsets, both checksums)."""
    objects = _objects(count, count)
    pack, idx, spans = stored_pack(objects)
    path = tmp_path / "pack-x.pack"
    path.write_bytes(pack)
    subprocess.run(["git", "index-pack", "--index-version=2", "-o", str(tmp_path / "pack-x.idx"), str(path)],
                   check=True, capture_output=True)
    assert (tmp_path / "pack-x.idx").read_bytes() == idx
    verify = subprocess.run(["git", "verify-pack", "-v", str(tmp_path / "pack-x.idx")], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    listed = {line.split()[0]: (line.split()[1], int(line.split()[4])) for line in verify[:len(objects)]}
    assert listed == {sha: (kind.decode(), at) for (sha, kind, _c), (at, _n) in zip(objects, spans)}


def test_each_span_reads_back_its_object() -> None:
    objects = _objects(7, 12)
    pack, _idx, spans = stored_pack(objects)
    assert [pack_entry(pack[at:at + length]) for at, length in spans] == [(k, c) for _s, k, c in objects]
    assert spans[0][0] == 12 and sum(length for _at, length in spans) == len(pack) - 12 - 20


def test_an_entry_whose_size_or_type_is_wrong_is_an_error() -> None:
    with pytest.raises(GitError, match="size does not match"):
        pack_entry(_pack_header(3, 5) + stored_zlib(b"four"))
    with pytest.raises(GitError, match="type 6"):
        pack_entry(_pack_header(6, 4) + stored_zlib(b"four"))
    assert pack_entry(_pack_header(3, 200) + stored_zlib(b"x" * 200)) == (b"blob", b"x" * 200)
