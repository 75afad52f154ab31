"""The upstream commit that made the hunks upstream already has of an entry (review.upstream_has).

The commit is looked up by a printable line of the largest hunk upstream has (`Git.pickaxe`, one path-limited
`git log -S`, the command the story prints): of the commits it lists that added (for a removal: removed) the
line, the first whose version of the file has the hunk at its place (review.has_places), else the first with
the line there (h213: not one that added the line to another function first).
"""

from __future__ import annotations

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.history import Pickaxed
from carrytool.pipeline.basemap import BaseMap, meets, span_of
from carrytool.pipeline.hunks import Hunk
from carrytool.review.evidence import Sources
from carrytool.review.has_places import _at_place, _Lines, _places, _span_at, _text, is_blob, tells

# the longest line (bytes) the commit is looked up by: `-S<line>` is one argument, and Linux refuses one over
# 128 kB (E2BIG; h219: a minified bundle). A longer line is no needle: a prefix of it would count other lines
NEEDLE_MAX = 1_000


def _needle(taken: list[tuple[Hunk, str | None]]) -> tuple[Hunk, str | None, str, bool] | None:
    """(hunk, its base blob, line, whether it was added) to look the commit up by: the longest line that tells,
    is printable UTF-8 (a command prints it; a CRLF file's lines without their `\\r`) and is no longer than
    NEEDLE_MAX bytes, of the largest hunk upstream has, added lines before removed ones."""
    best: tuple[tuple[bool, int], Hunk, str | None, bytes, bool] | None = None
    for hunk, base in taken:
        if hunk.kind != "text":
            continue
        for adds, block in ((True, hunk.added), (False, hunk.removed)):
            usable = [bare for line in block if tells(line) and len(bare := _unreturned(line)) <= NEEDLE_MAX
                      and _printable(bare)]
            if usable:
                key = (adds, sum(len(line) for line in block))
                if best is None or key > best[0]:
                    best = (key, hunk, base, max(usable, key=lambda item: len(item.strip())), adds)
                break
    return None if best is None else (best[1], best[2], best[3].decode(), best[4])


def _unreturned(line: bytes) -> bytes:
    """LINE without the `\\r` a CRLF file ends it with: `git log -S` finds the rest (it matches substrings),
    and a command can print it."""
    return line[:-1] if line.endswith(b"\r") else line


def _printable(line: bytes) -> bool:
    try:
        text = line.decode()
    except UnicodeDecodeError:
        return False
    return text.replace("\t", "").isprintable()      # every character a tab or printable, in one call


def _name_commit(git: Git, sources: Sources, needle: str, adds: bool, hunk: Hunk, base: str | None,
                 listed: list[Pickaxed], lines: dict[str | None, _Lines], spans: BaseMap | None = None
                 ) -> tuple[str | None, str | None, int]:
    """The first upstream commit since the entry's base, of those that changed how often the file holds the
    chosen line (`git log -S`, oldest first), whose version of the file has the line's hunk at its own place
    (`_first_with`): not one that added (removed) the line elsewhere, before or after (h204, h213). LISTED: what
    `git log -S` listed (HasFinder._start_commit chose HUNK, its BASE blob and the line NEEDLE, which the commit
    ADDS, else removes). The commit and its subject (None, None: none), and how many listed commits came before it
    (all of them when none). SPANS: a BaseMap holding `_looked_pairs`' (HasFinder.batched), else one is made."""
    blobs = _versions(sources, needle, adds, listed)
    at = _first_with(git, hunk, base, blobs, needle.encode(), adds, sources, lines, spans)
    if at is None:
        return None, None, len(listed)
    return listed[at][0], listed[at][1], at


def _versions(sources: Sources, needle: str, adds: bool, listed: list[Pickaxed]) -> list[str | None]:
    """Per commit LISTED, the version of the file it made when it added NEEDLE (ADDS; else removed it), else None:
    the other way is not it."""
    raw, sign = needle.encode(), 1 if adds else -1

    def made(old: str, new: str) -> bool:
        return sign * ((sources.read(new) or b"").count(raw) - (sources.read(old) or b"").count(raw)) > 0

    return [new if made(old, new) else None for _sha, _subject, old, new in listed]


def _looked(hunk: Hunk, blobs: list[str | None], sources: Sources) -> list[tuple[int, str]]:
    """The versions of BLOBS `_first_with` places HUNK in: not a version where the file was a submodule (h236);
    none for a hunk deleting the file."""
    if hunk.new_oid in (None, ZERO):
        return []
    return [(i, blob) for i, blob in enumerate(blobs) if blob is not None and blob != ZERO and is_blob(sources, blob)]


def _looked_pairs(sources: Sources, needle: str, adds: bool, hunk: Hunk, base: str | None, listed: list[Pickaxed]
                  ) -> list[tuple[str | None, str]]:
    """The pairs of blobs whose diffs `_name_commit` reads (its SPANS must hold them)."""
    return [(base, blob) for _i, blob in _looked(hunk, _versions(sources, needle, adds, listed), sources)]


def _first_with(git: Git, hunk: Hunk, base: str | None, blobs: list[str | None], line: bytes, adds: bool,
                sources: Sources, lines: dict[str | None, _Lines], given: BaseMap | None = None) -> int | None:
    """The index of the first of BLOBS (versions of HUNK's file; None: not one to look at) that has HUNK at its
    own place, made since its BASE blob; when none has all of it (upstream made it in steps), the first whose
    HUNK's place holds LINE (ADDS; else no longer holds it). One `diff-tree` places HUNK in every version.
    A hunk deleting the file: the first that deletes it."""
    if hunk.new_oid in (None, ZERO):
        return next((i for i, blob in enumerate(blobs) if blob == ZERO), None)
    looked = _looked(hunk, blobs, sources)
    spans = given if given is not None or not looked else BaseMap(git, [(base, blob) for _i, blob in looked])
    base_lines, head = _text(base, sources, lines), _text(hunk.new_oid, sources, lines)
    for i, blob in looked:
        if _at_place(hunk, _places(hunk, base_lines, head, _text(blob, sources, lines)), spans, base, blob):
            return i
    mine = span_of(hunk.old_start, hunk.old_count)
    for i, blob in looked:
        region = spans.region(base, blob, mine) if spans is not None else None
        if region is None or spans is None:
            continue
        text = _text(blob, sources, lines)
        held = any(meets(_span_at(at, 1), region) for at in text.find([line]) + text.find([line + b"\r"]))
        if held == adds:
            return i
    return None
