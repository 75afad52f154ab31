"""git's text merge of one file as the structured merge (pipeline.structured) reads it: segments, clean
lines and conflicts, from diff3-style markers (`parse_diff3`); ours' and theirs' versions of a file shown
with merge-style markers (`sides_of`); the file's lines once each conflict is resolved (`_assemble`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKER_SIZE = 23          # `git merge-file --marker-size`: long enough that source text never holds one
_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


@dataclass
class _Conflict:
    ours: list[bytes]
    base: list[bytes]
    theirs: list[bytes]
    prefix: list[bytes] = field(default_factory=list)   # lines all three share at the hunk's edges
    suffix: list[bytes] = field(default_factory=list)
    kind: str | None = None
    refused: str | None = None
    why: str | None = None              # a sentence saying why it is refused, when more is known than REFUSED
    merged_import: list[bytes] | None = None
    parts: list[list[bytes]] = field(default_factory=list)   # what the resolution holds, in order
    swappable: bool = False          # two insertions at one place: "the other order" swaps them
    shared: tuple[int, int] | None = None    # lines (0-based, end excluded) of the parts both inserted


Segment = "list[bytes] | _Conflict"


def split_lines(text: bytes) -> list[bytes]:
    return _LINE.findall(text)


def parse_diff3(merged: bytes, marker_size: int = MARKER_SIZE) -> list[list[bytes] | _Conflict] | None:
    """Segments of `git merge-file --diff3` output: clean line lists and conflicts; None if malformed."""
    start, mid, sep, end = (c * marker_size for c in (b"<", b"|", b"=", b">"))
    out: list[list[bytes] | _Conflict] = []
    clean: list[bytes] = []
    state, parts = None, {"ours": [], "base": [], "theirs": []}   # type: ignore[var-annotated]
    marks = (60, 124, 61, 62)      # < | = >
    for line in split_lines(merged):
        if not line or line[0] not in marks:
            (clean if state is None else parts[state]).append(line)
            continue
        bare = line.rstrip(b"\r\n")
        head = bare[:marker_size]
        tail = bare[marker_size:marker_size + 1]
        is_marker = head in (start, mid, sep, end) and tail in (b"", b" ") and bare[marker_size - 1:marker_size] == head[:1]
        if is_marker and head == start and state is None:
            out.append(clean)
            clean, state, parts = [], "ours", {"ours": [], "base": [], "theirs": []}
        elif is_marker and head == mid and state == "ours":
            state = "base"
        elif is_marker and head == sep and bare == sep and state == "base":
            state = "theirs"
        elif is_marker and head == end and state == "theirs":
            out.append(_Conflict(parts["ours"], parts["base"], parts["theirs"]))
            state = None
        elif state is None:
            clean.append(line)
        else:
            parts[state].append(line)
    if state is not None:
        return None
    out.append(clean)
    return [s for s in out if not (isinstance(s, list) and not s)]


def sides_of(shown: bytes) -> tuple[bytes, bytes, list[int]] | None:
    """Ours' and theirs' versions of SHOWN (git's `merge`-style conflict markers of 7), and for each line of
    ours' version (0-based) its line in SHOWN; None when the markers are malformed or ambiguous."""
    ours: list[bytes] = []
    theirs: list[bytes] = []
    where: list[int] = []
    state = None
    for n, line in enumerate(split_lines(shown)):
        bare = line.rstrip(b"\r\n")
        if bare.startswith(b"<<<<<<<") and bare[7:8] in (b"", b" ") and bare[:8] != b"<" * 8:
            if state is not None:
                return None
            state = "ours"
        elif bare == b"=======" and state is not None:
            if state != "ours":
                return None
            state = "theirs"
        elif bare.startswith(b">>>>>>>") and bare[7:8] in (b"", b" ") and bare[:8] != b">" * 8:
            if state != "theirs":
                return None
            state = None
        elif bare.startswith((b"<<<<<<<", b">>>>>>>", b"|||||||")) and bare[7:8] in (b"", b" "):
            return None
        else:
            if state != "theirs":
                ours.append(line)
                where.append(n)
            if state != "ours":
                theirs.append(line)
    if state is not None:
        return None
    return b"".join(ours), b"".join(theirs), where


def _assemble(segments, *, theirs_first: bool, refused_as: str = "ours"):  # noqa: ANN001, ANN202 - internal
    """The file's lines with each conflict resolved (refused ones take REFUSED_AS: ours, base or theirs, so the
    rest can be parsed), and per conflict the (first, last) line ranges of ours' and theirs' insertions
    (1-based; a refused conflict's first range is the side it took)."""
    lines: list[bytes] = []
    blocks: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for segment in segments:
        if isinstance(segment, list):
            lines += segment
            continue
        lines += segment.prefix
        if segment.refused or not segment.parts:
            start = len(lines) + 1
            lines += getattr(segment, refused_as) if segment.refused else segment.merged_import or []
            blocks.append(((start, len(lines)), (len(lines) + 1, len(lines))))
        else:
            first, second = segment.parts
            if theirs_first and segment.swappable:
                first, second = second, first
            start = len(lines) + 1
            lines += first
            middle = len(lines)
            lines += second
            blocks.append(((start, middle), (middle + 1, len(lines))))
        lines += segment.suffix
    return lines, blocks
