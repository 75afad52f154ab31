"""A shared, versioned store of conflict resolutions (dim's drm-rerere idea, made deterministic).

A conflicted file (as `git merge-tree` writes it, `merge` conflict style) is cut into conflict hunks.
Each hunk is keyed by the SHA-256 of its two sides, sorted, without marker labels: the same conflict
gets the same key on any machine, whatever the order of the sides or the user's configuration. Each
recorded hunk resolves its own hunk: a file whose other hunks have no record keeps only those as
conflicts. Edits a maintainer made outside the hunks (or in files without conflicts) are *fixups*: the
file as the fold had it and as the maintainer left it, applied 3-way after the hunks (dim's drm-tip
fixups). The store that keeps them is union.store.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

_START = re.compile(rb"^<{7}(?: .*)?\r?$")
_MID = re.compile(rb"^={7}\r?$")      # git ends marker lines with CR too in a file of CRLF lines
_END = re.compile(rb"^>{7}(?: .*)?\r?$")


class _NoLines(bytes):
    """The resolution of a hunk resolved to no line at all (both sides taken out): NO_LINES."""


class _Legacy(bytes):
    """A resolution recorded by a store without `lines` (before 0.2): its lines joined by newlines, where
    b"" was put back as one empty line, and the hunk got an empty line of its own where no common text
    preceded (or, the last one, followed) it; put back as then, so that a refold of a union folded then
    gives its bytes (`apply_resolutions`)."""


NO_LINES: bytes = _NoLines()      # a recorded resolution of zero lines (b"" is one empty line)


def _resolution(lines: list[bytes]) -> bytes:
    """LINES as a record: joined by newlines; NO_LINES for none (joined, none and one empty line are alike)."""
    return b"\n".join(lines) if lines else NO_LINES


def resolution_lines(resolution: bytes) -> tuple[bytes, ...]:
    """A recorded RESOLUTION as its lines: none for NO_LINES (`_resolution` undone)."""
    return () if isinstance(resolution, _NoLines) else tuple(resolution.split(b"\n"))


@dataclass(frozen=True)
class ConflictHunk:
    ours: bytes
    theirs: bytes
    lines: tuple[bytes, ...] = field(default=(), compare=False)   # as written, markers and labels included

    @property
    def key(self) -> str:
        sides = sorted([self.ours, self.theirs])
        return hashlib.sha256(sides[0] + b"\0" + sides[1]).hexdigest()

    def text(self) -> bytes:
        return b"\n".join(self.lines)


def _spans(lines: list[bytes]) -> list[tuple[int, int, int]] | None:
    """(start, middle, end) line numbers of each conflict hunk; None when the markers are malformed."""
    spans, i = [], 0
    while i < len(lines):
        if _START.match(lines[i]):
            j = i + 1
            while j < len(lines) and not _MID.match(lines[j]):
                j += 1
            k = j + 1
            while k < len(lines) and not _END.match(lines[k]):
                k += 1
            if j >= len(lines) or k >= len(lines):
                return None
            spans.append((i, j, k))
            i = k + 1
            continue
        i += 1
    return spans


def split_conflicts(data: bytes) -> list[bytes | ConflictHunk] | None:
    """Cut a conflicted file into common text and conflict hunks; None when the markers are malformed."""
    lines = data.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None
    parts: list[bytes | ConflictHunk] = []
    last = 0
    for i, j, k in spans:
        parts.append(b"\n".join(lines[last:i]))
        parts.append(ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k]), tuple(lines[i:k + 1])))
        last = k + 1
    parts.append(b"\n".join(lines[last:]))
    return parts


def has_markers(data: bytes) -> bool:
    return any(_START.match(line) or _END.match(line) for line in data.split(b"\n"))


def extract_resolutions(conflicted: bytes, resolved: bytes) -> dict[str, bytes] | None:
    """`extract_at` by key (a key met at several hunks: the last one's)."""
    found = extract_at(conflicted, resolved)
    return dict(found) if found is not None else None


def extract_at(conflicted: bytes, resolved: bytes) -> list[tuple[str, bytes]] | None:
    """(key, resolution) of each conflict hunk, in order, found between the common text around it, line for line (a
    hunk resolved to nothing is NO_LINES, one resolved to an empty line b""); None if the user also
    changed text outside the conflicts (see `align_resolutions` for that case)."""
    lines = conflicted.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None
    common = _common(lines, spans)
    new = resolved.split(b"\n")
    if new[:len(common[0])] != common[0]:
        return None
    pos, out = len(common[0]), []
    for n, (i, j, k) in enumerate(spans):
        after = common[n + 1]
        if n == len(spans) - 1:
            end = len(new) - len(after)
            if end < pos or new[end:] != after:
                return None
        else:
            end = _find(new, after, pos)
            if end < 0:
                return None
        key = ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k])).key
        out.append((key, _resolution(new[pos:end])))
        pos = end + len(after)
    return out


def _common(lines: list[bytes], spans: list[tuple[int, int, int]]) -> list[list[bytes]]:
    """The lines around the conflict hunks SPANS: before the first, between each two, after the last."""
    out, last = [], 0
    for i, _j, k in spans:
        out.append(lines[last:i])
        last = k + 1
    out.append(lines[last:])
    return out


def _find(seq: list[bytes], sub: list[bytes], start: int) -> int:
    """Where the lines SUB first occur in SEQ from START on; START when SUB is empty; -1 when nowhere."""
    if not sub:
        return start
    for at in range(start, len(seq) - len(sub) + 1):
        if seq[at] == sub[0] and seq[at:at + len(sub)] == sub:
            return at
    return -1


def align_resolutions(conflicted: bytes, resolved: bytes) -> dict[str, bytes]:
    """`align_at` by key (a key met at several hunks: the last one's)."""
    return dict(align_at(conflicted, resolved))


def align_at(conflicted: bytes, resolved: bytes) -> list[tuple[str, bytes]]:
    """(key, resolution) of each hunk, in order, when text outside the hunks changed too: the resolved lines
    between the common lines that survived unchanged around the hunk (what lies outside goes to a fixup)."""
    exact = extract_at(conflicted, resolved)
    if exact is not None:
        return exact
    old, new = conflicted.split(b"\n"), resolved.split(b"\n")
    spans = _spans(old) or []
    common = [True] * len(old)
    for i, _j, k in spans:
        common[i:k + 1] = [False] * (k + 1 - i)
    hunks = [(ConflictHunk(b"\n".join(old[i + 1:j]), b"\n".join(old[j + 1:k])), i, k + 1) for i, j, k in spans]
    anchors: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            anchors.update({i: j1 + i - i1 for i in range(i1, i2) if common[i]})
    out: list[tuple[str, bytes]] = []
    for hunk, start, end in hunks:
        before = [anchors[i] for i in range(start) if i in anchors]
        after = [anchors[i] for i in range(end, len(old)) if i in anchors]
        lo = before[-1] + 1 if before else 0
        hi = after[0] if after else len(new)
        out.append((hunk.key, _resolution(new[lo:max(lo, hi)])))
    return out


def apply_resolutions(conflicted: bytes, records: dict[str, bytes], at: list[bytes | None] | None = None
                      ) -> tuple[bytes | None, list[str]]:
    """Resolve each conflict hunk that has a record, on its own: (content, keys still missing); AT: the
    resolution of the file's n-th hunk where its key's places were resolved differently (None: its key's).

    Hunks without a record stay in the content exactly as they were (markers and all). None as the
    content only when the markers are malformed. Rebuilt line for line: no common text around a hunk
    (the file starts with it, or another hunk follows it) adds no line (joining the pieces gave each an
    empty line of its own, shown in the scratch tree at the top of a file both PRs added), and a NO_LINES
    record none; a record of an older store (`_Legacy`) is put back as that version put it back.
    """
    lines = conflicted.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None, ["malformed conflict markers"]
    out: list[bytes] = []
    missing: list[str] = []
    last, record = 0, None
    for n, (i, j, k) in enumerate(spans):
        hunk = ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k]))
        record = records.get(hunk.key)
        if record is not None and at is not None and n < len(at) and at[n] is not None:
            record = at[n]
        out += lines[last:i] or ([b""] if isinstance(record, _Legacy) else [])
        if record is None:
            missing.append(hunk.key)
            out += lines[i:k + 1]
        elif not isinstance(record, _NoLines):
            out += record.split(b"\n")
        last = k + 1
    out += lines[last:] or ([b""] if isinstance(record, _Legacy) else [])
    return b"\n".join(out), missing


@dataclass(frozen=True)
class Fixup:
    """A maintainer's edit of FILE while folding ITEM: the file as the fold had it (BASE) and as left
    (RESULT); (mode, content) or None when absent."""

    item: str
    file: str
    base: tuple[str, bytes] | None
    result: tuple[str, bytes] | None
    # what the file was when the edit was recorded: "" merged, "content" (conflict hunks), "other" (a
    # conflict of another kind: deleted on one side, a link, ...), "fixup"; None in a record made before
    # it was kept (taken to be any). Only an edit recorded on an "other" conflict settles one
    conflict: str | None = None
    # the lines of BASE the edit removes (or replaces) that the fold had from upstream when it was recorded
    # (union.upstream_edit); None in a record made before they were kept (taken to be none)
    upstream: tuple[bytes, ...] | None = None

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.item}\0{self.file}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def lines_field(resolution: bytes) -> dict[str, Any]:
    """RESOLUTION as a record writes it: `resolution` and `lines` (0: NO_LINES, which equals b"")."""
    return {"resolution": resolution.decode("utf-8", "surrogateescape"),
            "lines": 0 if isinstance(resolution, _NoLines) else resolution.count(b"\n") + 1}


def read_resolution(doc: dict[str, Any]) -> bytes:
    """DOC's `resolution` with its `lines` (`lines_field` read back); ValueError when they disagree. A record
    without `lines` (before 0.2): `_Legacy`."""
    if not isinstance(doc.get("resolution"), str):
        raise ValueError("needs a 'resolution' string")
    text = doc["resolution"].encode("utf-8", "surrogateescape")
    count = doc.get("lines", -1)
    if count == -1:
        return _Legacy(text)
    if type(count) is not int or count != (text.count(b"\n") + 1 if text or count else 0):
        raise ValueError("'lines' must be the number of lines of 'resolution' (0: none)")
    return text if count else NO_LINES
