"""Diffs as hunks: what an entry's own diff adds and removes, file by file (from git's -U0 patches).

Paths and statuses come from the raw diff (exact, `-z`); the patch text only supplies the hunks of each
file, matched to its raw change by blob ids (`--full-index`). Files without text hunks (binary files,
pure renames, mode changes, submodule pointers) count as one whole-file hunk each.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.gitlayer.git import REGULAR_MODES, Change, Git

_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_INDEX = re.compile(rb"^index ([0-9a-f]{40})\.\.([0-9a-f]{40})")



def counted(count: int, what: str = "hunk") -> str:
    """`1 hunk`, `3 hunks`, `2 commits`: COUNT of WHAT (`conflict hunk`), the plural made with an s (no more
    `hunk(s)`)."""
    return f"{count} {what}{'' if count == 1 else 's'}"


def line_span(first: int, last: int) -> str:
    """`line 7`, `lines 7-9`: the lines FIRST to LAST (1-based, LAST included)."""
    return f"line {first}" if first == last else f"lines {first}-{last}"

@dataclass(frozen=True)
class Hunk:
    """One change in one file. Line numbers are 1-based, as in `@@ -old_start,old_count +new_start,new_count @@`."""

    path: str
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    removed: tuple[bytes, ...] = ()
    added: tuple[bytes, ...] = ()
    kind: str = "text"              # text | binary | rename | mode | submodule | file
    old_path: str | None = None
    new_oid: str | None = None
    new_mode: str | None = None     # the file's mode after the change (a "mode" hunk: the one it sets)

    @property
    def key(self) -> tuple[str, tuple[bytes, ...], tuple[bytes, ...], str]:
        """Hunks with equal keys are byte-identical changes (the redundant patch-id case)."""
        return (self.path, self.removed, self.added, "" if self.kind == "text" else f"{self.kind}:{self.new_oid}")

    @property
    def span(self) -> tuple[int, int]:
        """The lines it occupies in the new file (or the line it deleted after)."""
        if self.new_count:
            return self.new_start, self.new_start + self.new_count - 1
        return self.new_start, self.new_start

    def describe(self) -> str:
        if self.kind != "text":
            return f"{self.path} ({self.kind} change)"
        first, last = self.span
        return f"{self.path}:{first}" + (f"-{last}" if last != first else "")


def parse_patch(patch: bytes, changes: Sequence[Change]) -> list[Hunk]:
    """The hunks of a `diff-tree -p -U0 --full-index` patch, with exact paths from CHANGES."""
    hunks: list[Hunk] = []
    parts = patch_parts(patch, changes)
    for change, chunk in parts.values():
        hunks += _part_hunks(change, chunk)
    hunks += [_whole_file(change, []) for change in changes if id(change) not in parts]
    return hunks


def patch_parts(patch: bytes, changes: Sequence[Change]) -> dict[int, tuple[Change, bytes]]:
    """id of a change of CHANGES -> (the change, its part of PATCH, `_chunks`), in PATCH's order: each part
    goes to the first change not matched yet whose blob ids its `index` line names."""
    by_oids: dict[tuple[str, str], list[Change]] = {}
    for change in changes:
        by_oids.setdefault((change.old_oid, change.new_oid), []).append(change)
    parts: dict[int, tuple[Change, bytes]] = {}
    for chunk in _chunks(patch):
        index = next((m for m in map(_INDEX.match, chunk.split(b"\n", 9)[1:9]) if m), None)
        if index is None:
            continue
        candidates = by_oids.get((index.group(1).decode(), index.group(2).decode()), [])
        change = next((c for c in candidates if id(c) not in parts), None)
        if change is not None:
            parts[id(change)] = (change, chunk)
    return parts


def parts_hunks(changes: Sequence[Change], parts: dict[int, bytes]) -> list[Hunk]:
    """parse_patch's hunks from each change's part (PARTS: id of a change of CHANGES -> its part, `patch_parts`)
    in CHANGES' order, then the changes without one: parse_patch's own order, as git writes a patch's files
    in the order of its raw diff (they are one diff queue)."""
    hunks: list[Hunk] = []
    for change in changes:
        chunk = parts.get(id(change))
        if chunk is not None:
            hunks += _part_hunks(change, chunk)
    hunks += [_whole_file(change, []) for change in changes if id(change) not in parts]
    return hunks


def _part_hunks(change: Change, chunk: bytes) -> list[Hunk]:
    """The hunks of CHANGE, whose part of a patch is CHUNK."""
    text_hunks = _section_hunks(chunk, change.path, change.old_path, change.new_oid, change.new_mode)
    if not text_hunks:
        return [_whole_file(change, chunk.split(b"\n")[1:])]
    if change.old_mode != change.new_mode and {change.old_mode, change.new_mode} <= set(REGULAR_MODES):
        # its content and its executable bit: the bit is a change of its own, accounted as one
        # (helper-124: a later entry resolved `theirs` dropped it, every line landed, nothing said)
        return [*text_hunks, Hunk(change.path, 0, 0, 0, 0, (), (), "mode", change.old_path, change.new_oid,
                                  change.new_mode)]
    return list(text_hunks)


def _chunks(patch: bytes) -> list[bytes]:
    """Each file's part of PATCH, from the text after its `diff --git ` to the end of its last line."""
    return (b"\n" + patch).split(b"\ndiff --git ")[1:]


@functools.lru_cache(maxsize=8192)
def _section_hunks(chunk: bytes, path: str, old_path: str | None, new_oid: str, new_mode: str
                   ) -> tuple[Hunk, ...]:
    """The text hunks of one file's part of a patch (CHUNK, `_chunks`), for the change of PATH they stand for:
    once per distinct part in a run (60 polars PRs, a dozen on one 350-file branch, repeat the same file
    diffs in their patches: 10 MB of patch text, most of it parts seen before)."""
    out: list[Hunk] = []
    current: list | None = None
    for line in chunk.split(b"\n")[1:]:
        first = line[:1]
        if first == b"@":
            header = _HEADER.match(line)
            if header:
                if current:
                    out.append(_make(path, old_path, new_oid, new_mode, current))
                a, b, c, d = header.groups()
                current = [int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d), [], []]
        elif current is not None and first == b"-":
            current[4].append(line[1:])
        elif current is not None and first == b"+":
            current[5].append(line[1:])
    if current:
        out.append(_make(path, old_path, new_oid, new_mode, current))
    return tuple(out)


def _make(path: str, old_path: str | None, new_oid: str, new_mode: str, parts: list) -> Hunk:
    old_start, old_count, new_start, new_count, removed, added = parts
    return Hunk(path, old_start, old_count, new_start, new_count, tuple(removed), tuple(added), "text", old_path,
                new_oid, new_mode)


def _whole_file(change: Change, section: list[bytes]) -> Hunk:
    if "160000" in (change.old_mode, change.new_mode):
        kind = "submodule"
    elif any(line.startswith(b"Binary files") or line.startswith(b"GIT binary patch") for line in section):
        kind = "binary"
    elif change.status == "R" and change.old_oid == change.new_oid:
        kind = "rename"
    elif change.old_oid == change.new_oid and change.old_mode != change.new_mode:
        kind = "mode"
    else:
        kind = "file"
    return Hunk(change.path, 0, 0, 0, 0, (), (), kind, change.old_path, change.new_oid, change.new_mode)


def hunk_headers(patch: bytes) -> list[tuple[int, int, int, int]]:
    """(old start, old count, new start, new count) of every `@@` header of a one-file -U0 PATCH, in order."""
    out = []
    for line in patch.split(b"\n"):
        header = _HEADER.match(line) if line.startswith(b"@@ ") else None
        if header:
            a, b, c, d = header.groups()
            out.append((int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return out


def read_hunks(git: Git, pairs: Sequence[tuple[str, str]], changes: Sequence[Sequence[Change]]) -> list[list[Hunk]]:
    """Hunks of every (old, new) pair, from one batched patch process; CHANGES are the raw diffs of the pairs."""
    return parse_patches(git.diff_patches(pairs), changes)


def parse_patches(patches: Sequence[bytes], changes: Sequence[Sequence[Change]]) -> list[list[Hunk]]:
    """The hunks of each of PATCHES (zero-context, as Git.diff_patches gives them), whose raw diffs are
    CHANGES: read_hunks' parse, for patches read otherwise (explain's thread: Git.patches_later)."""
    return [list(_parsed(patch, tuple(chg))) for patch, chg in zip(patches, changes)]


@functools.lru_cache(maxsize=512)
def _parsed(patch: bytes, changes: tuple[Change, ...]) -> tuple[Hunk, ...]:
    """parse_patch, once per distinct patch: explain's evidence and the landing checks read the same entries'
    diffs (git keeps the patches by tree pair, so the same bytes come back; hunks are immutable). 60 polars
    PRs, a dozen on one 350-file branch: the landing's 0.13 s of parsing in an explain."""
    return tuple(parse_patch(patch, changes))


def says_nothing(line: bytes) -> bool:
    """Whether LINE says nothing on its own: blank, or brackets and punctuation only."""
    return not line.strip(b" \t\r()[]{}:;,.#")


def core_lines(lines: Sequence[bytes]) -> tuple[int, tuple[bytes, ...]]:
    """LINES without the lines that say nothing on their own (blank, brackets only: `says_nothing`) at either end,
    and the index of the first line kept."""
    trivial = [says_nothing(line) for line in lines]
    if all(trivial):
        return 0, ()
    first = trivial.index(False)
    last = len(trivial) - trivial[::-1].index(False)
    return first, tuple(lines[first:last])


def find_block(lines: Sequence[bytes], block: Sequence[bytes], start: int = 0) -> list[int]:
    """Every 0-based index at or after START where BLOCK occurs in LINES as consecutive lines."""
    if not block:
        return []
    first, n, out = block[0], len(block), []
    for i in range(start, len(lines) - n + 1):
        if lines[i] == first and list(lines[i:i + n]) == list(block):
            out.append(i)
    return out


def is_subsequence_block(block: Sequence[bytes], within: Sequence[bytes]) -> int:
    """The 0-based offset where BLOCK occurs consecutively inside WITHIN, or -1."""
    if not block:
        return 0
    found = find_block(within, block)
    return found[0] if found else -1
