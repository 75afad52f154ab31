"""git's data as carrytool reads it: signatures, changes, merge results, and the parsers of git's output."""

from __future__ import annotations

import hashlib
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


def pack_of_loose(loose: Iterable[bytes], hash_name: str = "sha1") -> bytes:
    """A version-2 pack (no deltas, zlib level 1) of loose objects, given as their files' bytes (zlib of
    `TYPE SIZE\\0CONTENT`), with its trailing checksum: what `pack-objects --window=0 --stdout` would send
    for them, made in process. `index-pack` checks every object of it (content and name) when it indexes it."""
    body: list[bytes] = []
    count = 0
    for data in loose:
        raw = zlib.decompress(data)
        nul = raw.index(b"\0")
        kind, size = raw[:nul].split(b" ")
        n = int(size)
        if n != len(raw) - nul - 1:
            raise GitError("a loose object's size does not match its header")
        byte = (_PACK_TYPES[kind] << 4) | (n & 0x0F)
        n >>= 4
        header = bytearray()
        while n:
            header.append(byte | 0x80)
            byte, n = n & 0x7F, n >> 7
        header.append(byte)
        body += (bytes(header), zlib.compress(memoryview(raw)[nul + 1:], 1))
        count += 1
    pack = b"PACK" + struct.pack(">II", 2, count) + b"".join(body)
    return pack + hashlib.new(hash_name, pack).digest()
