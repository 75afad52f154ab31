"""Which objects a SHA-1 object store lacks, read in process from its loose files and pack indexes.

Migrating asks which of the run's new objects the user's store already has (those are not packed
again). `git cat-file --batch-check` answers that exactly, but it looks through the pack directory again
after every object it does not find: some 30-40 µs for each of the thousand new objects of a run, the
very ones it is asked about. Reading the .idx files does the same lookup without that.

The answer may only err one way: an object reported missing that the store has is packed once more
(harmless: git keeps either copy); an object reported present that it lacks would be lost. So an object
counts as present only when its loose file exists or a version-2 .idx lists it whose .pack git would use:
a regular file, opened after the .idx was read (a pack a concurrent repack deleted meanwhile counts for
nothing), whose header and trailing checksum match the .idx, as git checks before it reads a pack. A
store this reader does not fully cover (alternates, an index of another version) is left to git (None).

A run asks about the same objects several times (after migrating, then before and after each ref it writes:
a concurrent repack or prune may have taken them): the caller's LOOKUPS keeps each .idx file's answers, by
that very file (its path, device, inode, size, modification and change times, and its two trailing
checksums: git writes an index once, under a new name, and never rewrites it in place). Each call still
lists the pack directory, opens and checks every index and its .pack, and looks for loose files: only the
binary searches in an unchanged index are not made again (300 PRs: 13,400 of them -> 2,400)."""

from __future__ import annotations

import mmap
import os
import stat
import struct
from collections.abc import Sequence

_IDX_V2 = b"\xfftOc\x00\x00\x00\x02"
_NAMES_AT = 8 + 256 * 4              # after the magic, the version and the fan-out table


def store_lacks(object_dir: str, oids: Sequence[str], lookups: dict | None = None) -> list[str] | None:
    """Those of OIDS (40-hex SHA-1 names) that OBJECT_DIR has neither loose nor in one of its packs, in
    the order given; None when git must be asked (see the module's text). LOOKUPS: what earlier calls
    found in each index file, kept by the caller (see the module's text)."""
    try:
        if os.path.getsize(f"{object_dir}/info/alternates"):
            return None
    except OSError:
        pass                                             # no alternates file: none
    try:
        names = os.listdir(f"{object_dir}/pack")
    except FileNotFoundError:
        names = []
    except OSError:
        return None
    packs = {name[:-5] for name in names if name.endswith(".pack")}
    wanted = {bytes.fromhex(oid): oid for oid in oids}
    for name in sorted(names):
        if name.endswith(".idx") and name[:-4] in packs and wanted:
            found = _listed(f"{object_dir}/pack/{name}", wanted, f"{object_dir}/pack/{name[:-4]}.pack", lookups)
            if found is None:
                return None
            for raw in found:
                del wanted[raw]
    missing = set(wanted.values())
    return [oid for oid in oids if oid in missing and not os.path.exists(f"{object_dir}/{oid[:2]}/{oid[2:]}")]


def _listed(path: str, wanted: dict[bytes, str], pack: str, lookups: dict | None = None) -> list[bytes] | None:
    """Which of WANTED's binary names the version-2 index at PATH lists: a binary search in the names
    its fan-out table brackets (or the answer LOOKUPS kept from this very file). [] for an index gone
    meanwhile (a concurrent repack: its objects are in another pack or were deleted) or one whose PACK git
    would not use (see _usable); None for anything else unusual (another version, cut short, empty)."""
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            table = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return []
    except (OSError, ValueError):                         # unreadable, or empty (mmap refuses)
        return None
    with table:
        if len(table) < _NAMES_AT or table[:8] != _IDX_V2:
            return None
        fanout = struct.unpack_from(">256I", table, 8)
        count = fanout[255]
        least = _NAMES_AT + count * (20 + 4 + 4) + 2 * 20      # names, CRCs, offsets, two checksums
        if not least <= len(table) <= least + max(count - 1, 0) * 8:    # as git checks (large offsets)
            return None
        if any(a > b for a, b in zip(fanout, fanout[1:])) or \
                not _usable(pack, count, table[len(table) - 40:len(table) - 20]):
            return []                         # git refuses the index, or its pack: none of it counts
        known: dict[bytes, bool] = {} if lookups is None else lookups.setdefault(
            (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
             table[len(table) - 40:]), {})
        found = []
        for raw in wanted:
            listed = known.get(raw)
            if listed is not None:
                if listed:
                    found.append(raw)
                continue
            known[raw] = False
            first = raw[0]
            lo, hi = (fanout[first - 1] if first else 0), fanout[first]
            while lo < hi:
                mid = (lo + hi) // 2
                at = _NAMES_AT + 20 * mid
                name = table[at:at + 20]
                if name < raw:
                    lo = mid + 1
                elif name > raw:
                    hi = mid
                else:
                    found.append(raw)
                    known[raw] = True
                    break
        return found


def _usable(pack: str, count: int, checksum: bytes) -> bool:
    """Whether git would read the pack at PACK for an index of COUNT objects whose pack checksum is
    CHECKSUM: a regular file (opened now, after its index) with a version 2 or 3 header of that count
    and that trailing checksum (packfile.c, open_packed_git_1)."""
    try:
        fd = os.open(pack, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        size = info.st_size
        if not stat.S_ISREG(info.st_mode) or size < 12 + 20:
            return False
        head = os.pread(fd, 12, 0)
        tail = os.pread(fd, 20, size - 20)
    except OSError:
        return False
    finally:
        os.close(fd)
    return head[:4] == b"PACK" and struct.unpack(">II", head[4:]) in ((2, count), (3, count)) and tail == checksum
