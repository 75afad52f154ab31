"""Where upstream's file holds a hunk of an entry, as if upstream made the hunk's change itself (review.upstream_has
weighs an entry's hunks by it, and review.has_commit looks for the commit that made it).

Only on evidence of a hunk's own change at its own place (h204: a line standing anywhere in the file, or a
removed block upstream merely edited, made "likely merged" of PRs upstream never took): upstream's file holds
the hunk's added lines (consecutive, byte for byte) more often than the entry's base did, its removed lines
less often, and at one of their places the lines the entry has next to the hunk (up to the nearest line that
tells, `tells`) stand next to them, with the removed lines not beside them; a hunk that only removes lines
(or adds none that tell) needs the lines before and after it joined where the block was. That place must meet
the region the hunk's base lines map to in upstream's file through upstream's diff from the base (`BaseMap.region`,
as a union's base map places a hunk; h213: one anchoring line matched in another method, or a removal
upstream made in a twin function, was "likely merged"). A hunk whose lines all say nothing on their own
(blank, brackets, `pass`, `return None`, a bare import) is counted neither way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.gitlayer.env import ZERO
from carrytool.pipeline.basemap import BaseMap, Span, meets, span_of
from carrytool.pipeline.hunks import Hunk, find_block, says_nothing
from carrytool.review.evidence import Sources

# lines any change may add or remove on its own account: they say nothing of whose change it is
_SILENT = re.compile(rb"\s*(?:pass|return|return None|return True|return False|None|break|continue|raise|else:|"
                     rb"try:|finally:|\.\.\.|\"\"\"|'''|@\w+|(?:import|from\s+\S+\s+import|#\s*include|use)\s.*)"
                     rb"\s*;?\s*")
_REACH = 5          # lines looked at beside a hunk for one that tells where it stands


def tells(line: bytes) -> bool:
    """Whether LINE says something of the change that holds it: not blank or brackets (`says_nothing`), not
    `pass`, `return None`, `else:`, a docstring's quotes, a bare decorator or an import."""
    return not says_nothing(line) and _SILENT.fullmatch(line) is None



def is_blob(sources: Sources, oid: str | None) -> bool:
    """Whether OID is a blob (none counts: no lines), not a submodule's commit, whose lines `_text` reads as none and
    git's diff cannot read as a file's (h236: `git diff-tree -p` failed, "unable to read", explain exit 4)."""
    return not oid or oid == ZERO or sources.read(oid) is not None


def _text(oid: str | None, sources: Sources, lines: dict[str | None, _Lines]) -> _Lines:
    """Blob OID's lines, indexed once in LINES (none for no blob)."""
    if oid not in lines:
        lines[oid] = _Lines((sources.read(oid) or b"").split(b"\n") if oid and oid != ZERO else [])
    return lines[oid]


class _Lines:
    """A file's lines, indexed by line: where a block of lines stands, without a scan of the file per hunk
    (a 350-file PR's thousand hunks in 5,000-line files). A line the file holds once is indexed by its index
    alone, not a list of one (most lines: polars' indexes took 40% less memory)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self._at: dict[bytes, int | list[int]] | None = None

    def find(self, block: Sequence[bytes]) -> list[int]:
        """Every 0-based index where BLOCK stands as consecutive lines (`hunks.find_block`)."""
        if self._at is None:
            self._at = {}
            for i, line in enumerate(self.lines):
                was = self._at.setdefault(line, i)
                if was != i:
                    if type(was) is int:
                        self._at[line] = [was, i]
                    else:
                        was.append(i)
        want, n = list(block), len(block)
        if not want:
            return []
        # from the block's line the file holds least often: a blank first line stands at hundreds of places of
        # a 5,000-line file, and polars' 19,000 hunks were each compared there (3 s of explain, now 0.6 s); a line
        # it lacks, none; one it holds once, that place
        j, fewest = 0, None
        for k, line in enumerate(want):
            where = self._at.get(line)
            if where is None:
                return []
            if type(where) is int:
                i = where - k
                return [i] if i >= 0 and self.lines[i:i + n] == want else []
            if fewest is None or len(where) < len(fewest):
                j, fewest = k, where
        assert fewest is not None
        return [i - j for i in fewest if i >= j and self.lines[i - j:i - j + n] == want]


@dataclass(frozen=True)
class _Side:
    """The lines a file has beside a hunk, up to the nearest one that tells (at most _REACH): `edge` when they
    run to the file's start (before it) or end (after it), then a place must too; `anchors` when they tell
    where the hunk stands (a line that tells, or the file's edge)."""

    lines: tuple[bytes, ...]
    edge: bool
    anchors: bool

    def ends_at(self, lines: list[bytes], at: int) -> bool:
        """Whether LINES hold these lines just before index AT."""
        start = at - len(self.lines)
        return start >= 0 and tuple(lines[start:at]) == self.lines and (not self.edge or start == 0)

    def starts_at(self, lines: list[bytes], at: int) -> bool:
        """Whether LINES hold these lines from index AT."""
        end = at + len(self.lines)
        return tuple(lines[at:end]) == self.lines and (not self.edge or end == len(lines))


def _before(lines: list[bytes], at: int) -> _Side:
    start = at
    while start > 0 and at - start < _REACH:
        start -= 1
        if tells(lines[start]):
            return _Side(tuple(lines[start:at]), False, True)
    return _Side(tuple(lines[start:at]), start == 0, start == 0)


def _after(lines: list[bytes], at: int) -> _Side:
    end = at
    while end < len(lines) and end - at < _REACH:
        end += 1
        if tells(lines[end - 1]):
            return _Side(tuple(lines[at:end]), False, True)
    return _Side(tuple(lines[at:end]), end == len(lines), end == len(lines))


def _places(hunk: Hunk, base: _Lines, head: _Lines, upstream: _Lines) -> list[int]:
    """The indexes of UPSTREAM where HUNK's added lines stand (or, for a hunk that adds none, where the lines
    around its removed ones are joined) as if upstream made HUNK's change since BASE: beside the lines HEAD or
    BASE has beside it, with the removed lines not beside them; [] when upstream's file holds its added lines
    no more often than BASE, or its removed lines no less often. Where the hunk itself stands is `_at_place`'s."""
    added, removed = list(hunk.added), list(hunk.removed)
    kept = bool(removed) and bool(find_block(added, removed))     # what it removes lives on in what it adds
    if removed and not kept and any(tells(line) for line in removed) and \
            len(upstream.find(removed)) >= len(base.find(removed)):
        return []
    # each line it removes that tells (and does not add again) too: upstream still holding as many of one did not
    # make its removal (h253's review: `check(x)` removed with the line after it changed; upstream changed that
    # line alone, and the hunk was "had")
    again = set(added)
    if removed and not kept and any(tells(line) and line not in again and
                                    len(upstream.find([line])) >= len(base.find([line])) for line in removed):
        return []
    if added and len(upstream.find(added)) <= len(base.find(added)):
        return []
    at_base = hunk.old_start - 1 if hunk.old_count else hunk.old_start
    at_head = hunk.new_start - 1 if hunk.new_count else hunk.new_start
    sides = [(_before(head.lines, at_head), _after(head.lines, at_head + len(added))),
             (_before(base.lines, at_base), _after(base.lines, at_base + len(removed)))]
    joined = not any(tells(line) for line in added)     # its added lines say nothing: the lines around join
    if added:
        places = upstream.find(added)
    else:
        places = sorted({i + len(before.lines) if before.lines else 0 for before, _ in sides
                         for i in (upstream.find(before.lines) if before.lines else [0])})
    n, up = len(added), upstream.lines
    return [p for p in places if (kept or not _beside(up, p, n, removed)) and
            any(_placed(up, p, n, before, after, joined) for before, after in sides)]


def _at_place(hunk: Hunk, places: list[int], spans: BaseMap | None, base: str | None, upstream: str
              ) -> list[int] | None:
    """The lines of blob UPSTREAM that hold HUNK's added lines (or the line after which its removed ones were),
    of PLACES (`_places`), when one of them is HUNK's own place: it meets the region HUNK's lines of blob BASE
    map to in UPSTREAM (`BaseMap.region`, widened over the hunks of their diff it meets; a line standing
    elsewhere in the file is no evidence, with the same lines beside it or not: h213). Else None."""
    if spans is None or not places:
        return None
    mine = span_of(hunk.old_start, hunk.old_count)
    region = spans.region(base, upstream, mine)
    if region is None:          # a binary
        return None
    n = len(hunk.added)
    found = [p for p in places if meets(_span_at(p, n), region)]
    if not found:
        return None
    at_head = hunk.new_start - 1 if hunk.new_count else hunk.new_start
    first = min(found, key=lambda i: abs(i - at_head))
    return [first + 1, first + n] if n else [max(first, 1)] * 2


def _span_at(at: int, n: int) -> Span:
    """The doubled span (`basemap.span_of`) of the N lines from index AT; for none, the place before index AT."""
    return span_of(at + 1, n) if n else span_of(at, 0)


def _beside(lines: list[bytes], at: int, n: int, removed: list[bytes]) -> bool:
    """Whether REMOVED stands right before index AT or right after the N lines from it."""
    k = len(removed)
    return bool(k) and (lines[at + n:at + n + k] == removed or (at >= k and lines[at - k:at] == removed))


def _placed(lines: list[bytes], at: int, n: int, before: _Side, after: _Side, joined: bool) -> bool:
    """Whether the N lines of LINES from index AT stand where BEFORE and AFTER say: both beside them when
    JOINED is asked for (and one of them anchors), else one that anchors."""
    b, a = before.ends_at(lines, at), after.starts_at(lines, at + n)
    if joined:
        return b and a and (before.anchors or after.anchors)
    return (b and before.anchors) or (a and after.anchors)
