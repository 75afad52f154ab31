"""git's data as carrytool reads it: signatures, changes, merge results, and the parsers of git's output."""

from __future__ import annotations

import hashlib
import itertools
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from carrytool.errors import GitError
from carrytool.gitlayer.env import decode_path


@dataclass(frozen=True)
class Signature:
    name: str
    email: str
    timestamp: int

    def line(self) -> str:
        return f"{self.name} <{self.email}> {self.timestamp} +0000"


# the modes of a regular file, the only entries whose content git merges line by line
REGULAR_MODES = ("100644", "100755")


@dataclass(frozen=True)
class Change:
    """One path changed between two trees (`diff-tree --raw -z`)."""

    status: str          # A, M, D, T, R (rename, with old_path)
    path: str
    old_path: str | None
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.old_path, self.path) if self.old_path else (self.path,)


def change_of(changes: Iterable[Change], path: str) -> Change | None:
    """The change of CHANGES at PATH (its path after the change), or None."""
    return next((c for c in changes if c.path == path), None)


def paths_of(changes: Iterable[Change]) -> list[str]:
    """Every path CHANGES touch (a rename counts both), in order, once."""
    seen: dict[str, None] = {}
    for change in changes:
        for path in change.paths:
            seen.setdefault(path, None)
    return list(seen)


@dataclass(frozen=True)
class ConflictStage:
    mode: str
    oid: str
    stage: int
    path: str


@dataclass(frozen=True)
class MergeResult:
    clean: bool
    tree: str
    stages: tuple[ConflictStage, ...] = ()
    messages: tuple[tuple[tuple[str, ...], str, str], ...] = ()   # (paths, type, text)

    @property
    def conflicted_paths(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for stage in self.stages:
            seen.setdefault(stage.path, None)
        for paths, kind, _text in self.messages:
            if kind.startswith("CONFLICT"):
                for path in paths:
                    seen.setdefault(path, None)
        return tuple(seen)

    @property
    def conflicted_files(self) -> tuple[str, ...]:
        """conflicted_paths with each path git moved a file to, out of a directory's way or beside an entry
        of another type, given as the path the file had: git names the new path after a side of the
        merge (`X~<side>`), which is one of carrytool's own commits here, another from merge to merge, and
        in none of the user's trees; X is."""
        moved = self.moved_aside
        seen: dict[str, None] = {}
        for path in self.conflicted_paths:
            seen.setdefault(moved.get(path, path), None)
        return tuple(seen)

    @property
    def moved_aside(self) -> dict[str, str]:
        """Path git moved a file to -> the path it had, from the conflict messages that name both (a
        file/directory or distinct-types conflict: `X~<side>`, or `X~<side>_<n>` when that is taken). A
        rename's messages are not read: a file renamed to `X~old` beside `X` is a file of its own."""
        out: dict[str, str] = {}
        for paths, kind, _text in self.messages:
            if kind in _MOVING_ASIDE:          # not a rename's message, whose new path may be `X~...` itself
                for moved in paths:
                    for original in paths:
                        if moved.startswith(original + "~") and "/" not in moved[len(original):]:
                            out[moved] = original
        return out


# the conflicts in which git moves a file aside, as merge-tree names them (distinct types: "distinct modes")
_MOVING_ASIDE = frozenset({"CONFLICT (file/directory)", "CONFLICT (distinct modes)", "CONFLICT (distinct types)"})


def _parse_merge_tree(data: bytes) -> Iterator[MergeResult]:
    tokens = data.split(b"\0")
    i = 0
    while i < len(tokens) and tokens[i] != b"":
        clean = tokens[i] == b"1"
        tree = tokens[i + 1].decode()
        i += 2
        stages: list[ConflictStage] = []
        messages: list[tuple[tuple[str, ...], str, str]] = []
        if not clean:
            while tokens[i] != b"":
                head, _, path = tokens[i].partition(b"\t")
                mode, oid, stage = head.decode().split()
                stages.append(ConflictStage(mode, oid, int(stage), decode_path(path)))
                i += 1
            i += 1  # the empty token before the messages
            while tokens[i] != b"":
                if not tokens[i].isdigit():
                    # older git (2.39) prints advice ("Recursive merging with submodules ...") on stdout after
                    # a submodule conflict's messages, in place of the empty token that ends them
                    break
                count = int(tokens[i])
                paths = tuple(decode_path(p) for p in tokens[i + 1:i + 1 + count])
                kind = tokens[i + 1 + count].decode("utf-8", "replace")
                text = tokens[i + 2 + count].decode("utf-8", "replace").strip()
                messages.append((paths, kind, text))
                i += count + 3
        i += 1  # the terminator of this merge
        yield MergeResult(clean, tree, tuple(stages), tuple(messages))


def _is_echo(line: bytes) -> bool:
    return len(line) == 81 and line[40:41] == b" "


def _parse_diff_stdin(data: bytes, expected: int) -> list[list[Change]]:
    """Split `diff-tree --stdin -z` output (for tree pairs) into one change list per input line.

    Each input line is echoed, newline-terminated, before its changes; the first change is glued to it.
    """
    tokens = data.split(b"\0")
    results: list[list[Change]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith(b":") and b"\n" in tok:
            *headers, tok = tok.split(b"\n")
            results.extend([] for _ in headers)   # an echoed input line each (empty diffs echo too)
        if not tok:
            i += 1
            continue
        meta = tok[1:].decode().split()
        old_mode, new_mode, old_oid, new_oid, status = meta[:5]
        if status[0] in "RC":
            old_path, path = decode_path(tokens[i + 1]), decode_path(tokens[i + 2])
            i += 3
        else:
            old_path, path = None, decode_path(tokens[i + 1])
            i += 2
        results[-1].append(Change(status[0], path, old_path, old_mode, new_mode, old_oid, new_oid))
    if len(results) != expected:
        raise GitError("`git diff-tree --stdin` gave an unexpected answer")
    return results


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_PACK_KINDS = {number: kind for kind, number in _PACK_TYPES.items()}
_OFS_DELTA = 6
_MAX_DEPTH = 50          # delta chains no longer than pack-objects' default
_FIRST_ENTRY = 16        # bytes of a tree that name its first entry (mode and the start of its name)
_MAX_INSERT = 1024       # a tree differing from the last one of its size by more is stored whole
_DELTA_MIN = 20          # a blob is a delta only when it is over twice this (pack-objects: its hash size)


def stored_zlib(data: bytes) -> bytes:
    """DATA as a zlib stream of stored (uncompressed) deflate blocks, as `zlib.compress(DATA, 0)` writes
    (for a small object the same bytes; a large one's blocks may be cut elsewhere), made without zlib's per-call set-up (a deflate state of some 256 KiB, allocated and freed for every
    object: most of the cost of writing a few hundred small loose objects)."""
    out = [b"\x78\x01"]
    for start in range(0, len(data), 0xFFFF):
        chunk = data[start:start + 0xFFFF]
        final = 1 if start + 0xFFFF >= len(data) else 0
        out.append(struct.pack("<BHH", final, len(chunk), len(chunk) ^ 0xFFFF) + chunk)
    if not data:
        out.append(b"\x01\x00\x00\xff\xff")
    out.append(struct.pack(">I", zlib.adler32(data)))
    return b"".join(out)


def loose_object(data: bytes) -> tuple[bytes, bytes]:
    """(type, content) of a loose object file's bytes (zlib of `TYPE SIZE\\0CONTENT`), its size checked."""
    raw = zlib.decompress(data)
    nul = raw.index(b"\0")
    kind, size = raw[:nul].split(b" ")
    content = raw[nul + 1:]
    if int(size) != len(content):
        raise GitError("a loose object's size does not match its header")
    return kind, content


def pack_of_objects(objects: Iterable[tuple[bytes, bytes]], hash_name: str = "sha1",
                    names: Iterable[bytes | None] | None = None) -> bytes:
    """A version-2 pack (zlib level 1) of OBJECTS, given as (type, content), with its trailing checksum,
    made in process. A tree that differs in one stretch (a composed tree with an entry replaced) from the
    last tree of the same size and first entry,
    else from the last tree of the same size, is stored as a delta against it (OFS_DELTA, chains of at
    most 50). NAMES, one per object (None for none), are the paths blobs were found at: a
    blob is stored as a delta against the last blob of its name when they differ in one stretch that is
    at most half of it (a file's next version in a composed chain, changed by one entry). `index-pack`
    checks every object of it (content and name) when it indexes it."""
    body: list[bytes] = []
    at = 12                                                # the pack header's length
    # the last tree of a size, and of a size and first entry: (offset, content, delta depth). The latter is
    # most often the same directory's previous version, where the former is any directory of that size.
    last_tree: dict[object, tuple[int, bytes, int]] = {}
    last_blob: dict[bytes, tuple[int, bytes, int]] = {}    # the same for the last blob of a name
    for (kind, content), name in zip(objects, names if names is not None else itertools.repeat(None)):
        entry, depth = None, 0
        keys = ((len(content), content[:_FIRST_ENTRY]), len(content)) if kind == b"tree" else ()
        for key in keys:
            base = last_tree.get(key)
            delta = _splice_delta(base[1], content) if base is not None and base[2] < _MAX_DEPTH else None
            if delta is not None:
                entry = _delta_entry(delta, at - base[0])  # type: ignore[index]
                depth = base[2] + 1  # type: ignore[index]
                break
        blob_base = last_blob.get(name) if kind == b"blob" and name is not None else None
        # as pack-objects: a delta only for a blob whose half is longer than an object name (git cannot
        # read a delta whose result is empty, and refuses one shorter than four bytes)
        if blob_base is not None and blob_base[2] < _MAX_DEPTH and len(content) // 2 > _DELTA_MIN:
            delta = _splice_delta(blob_base[1], content, len(content) // 2 - _DELTA_MIN)
            if delta is not None and len(delta) < len(content):
                entry = _delta_entry(delta, at - blob_base[0])
                depth = blob_base[2] + 1
        if entry is None:
            entry = _pack_header(_PACK_TYPES[kind], len(content)) + zlib.compress(content, 1)
        for key in keys:
            last_tree[key] = (at, content, depth)
        if kind == b"blob" and name is not None:
            last_blob[name] = (at, content, depth)
        body.append(entry)
        at += len(entry)
    pack = b"PACK" + struct.pack(">II", 2, len(body)) + b"".join(body)
    return pack + hashlib.new(hash_name, pack).digest()


def stored_pack(objects: Iterable[tuple[str, bytes, bytes]]) -> tuple[bytes, bytes, list[tuple[int, int]]]:
    """A version-2 pack of OBJECTS, given as (SHA-1 hex, type, content), stored (deflate without
    compression: the quarantine is private, the migrated pack compresses, and a push reads the store
    alone) with its trailing checksum; its version-2 .idx; and each object's (offset, length) in the
    pack, in the given order.
    Made in process, for packs under 2 GiB (no large-offset table). Whoever calls this knows the
    names are right: the idx is not checked against the content (index-pack checks what migrates)."""
    body: list[bytes] = []
    spans: list[tuple[int, int]] = []
    rows: list[tuple[bytes, int, int]] = []
    at = 12
    for sha, kind, content in objects:
        entry = _pack_header(_PACK_TYPES[kind], len(content)) + stored_zlib(content)
        rows.append((bytes.fromhex(sha), zlib.crc32(entry), at))
        spans.append((at, len(entry)))
        body.append(entry)
        at += len(entry)
    if at >= 1 << 31:
        raise ValueError("a stored pack of 2 GiB or more needs large offsets")
    pack = b"PACK" + struct.pack(">II", 2, len(body)) + b"".join(body)
    checksum = hashlib.sha1(pack).digest()
    rows.sort()
    fanout = [0] * 256
    for name, _crc, _at in rows:
        fanout[name[0]] += 1
    fanout = list(itertools.accumulate(fanout))
    idx = b"".join([b"\xfftOc", struct.pack(">I", 2), struct.pack(">256I", *fanout),
                    b"".join(name for name, _crc, _at in rows),
                    struct.pack(f">{len(rows)}I", *(crc for _name, crc, _at in rows)),
                    struct.pack(f">{len(rows)}I", *(at for _name, _crc, at in rows)), checksum])
    return pack + checksum, idx + hashlib.sha1(idx).digest(), spans


def pack_entry(entry: bytes) -> tuple[bytes, bytes]:
    """(type, content) of one whole, undeltified pack entry (as stored_pack writes them), size checked."""
    byte = entry[0]
    kind, size, shift, at = (byte >> 4) & 7, byte & 0x0F, 4, 1
    while byte & 0x80:
        byte = entry[at]
        size |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
    if kind not in _PACK_KINDS:
        raise GitError(f"a quarantined pack entry has type {kind}, not a whole object")
    content = zlib.decompress(entry[at:])
    if len(content) != size:
        raise GitError("a quarantined pack entry's size does not match its header")
    return _PACK_KINDS[kind], content


def _delta_entry(delta: bytes, distance: int) -> bytes:
    """A pack entry storing DELTA against the object DISTANCE bytes back (OFS_DELTA)."""
    return _pack_header(_OFS_DELTA, len(delta)) + _ofs(distance) + zlib.compress(delta, 1)


def _pack_header(kind: int, size: int) -> bytes:
    byte, size = (kind << 4) | (size & 0x0F), size >> 4
    header = bytearray()
    while size:
        header.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    header.append(byte)
    return bytes(header)


def _ofs(distance: int) -> bytes:
    """An OFS_DELTA's distance back to its base, in git's offset encoding."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    out.append(n)
    return bytes(out)


def _copy(offset: int, size: int) -> bytes:
    """Delta copy instructions for SIZE bytes of the base from OFFSET (at most 64 KiB each)."""
    out = bytearray()
    while size:
        n = min(size, 0x10000)
        op, args = 0x80, bytearray()
        for i in range(4):
            if (offset >> (8 * i)) & 0xFF:
                op |= 1 << i
                args.append((offset >> (8 * i)) & 0xFF)
        if n != 0x10000:
            for i in range(3):
                if (n >> (8 * i)) & 0xFF:
                    op |= 0x10 << i
                    args.append((n >> (8 * i)) & 0xFF)
        out.append(op)
        out += args
        offset, size = offset + n, size - n
    return bytes(out)


def _common_prefix(a: bytes, b: bytes, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:                       # the longest equal prefix, by halving (memcmp of slices)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_ends(a: bytes, b: bytes) -> tuple[int, int]:
    """The lengths of A's and B's longest common prefix and of the longest common suffix of what follows it:
    the two differ in one stretch between them."""
    shorter = min(len(a), len(b))
    prefix = _common_prefix(a, b, shorter)
    return prefix, _common_prefix(a[prefix:][::-1], b[prefix:][::-1], shorter - prefix)


def _splice_delta(base: bytes, target: bytes, most: int = _MAX_INSERT) -> bytes | None:
    """A delta making TARGET from BASE when they differ in one stretch of at most MOST bytes of TARGET:
    copy the common prefix, insert the stretch, copy the common suffix. Else None."""
    size = len(target)
    prefix, suffix = common_ends(base, target)
    middle_end = size - suffix
    if middle_end - prefix > most:
        return None
    delta = bytearray(_varint(len(base)) + _varint(size))
    if prefix:
        delta += _copy(0, prefix)
    middle = target[prefix:middle_end]
    for i in range(0, len(middle), 127):
        chunk = middle[i:i + 127]
        delta.append(len(chunk))
        delta += chunk
    if suffix:
        delta += _copy(len(base) - suffix, suffix)
    return bytes(delta)
