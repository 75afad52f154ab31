"""Where a union took one side of a conflict it could have settled by keeping both (a mixin of regions.Regions).

Two PRs' hunks that meet in a conflict of git's merge are a region the union had to reconcile: the maintainer
may take one side. Not where both could be kept whole, each at its own place: two insertions at one place
(helper-158: on peft, a PR's one-line import lost so, and nothing said), or an insertion at the edge of another
PR's replacement, either side dropped (h213: pr/1 inserts `audit(b)` after `b = 2`, pr/2 replaces `b = 2` by
`b = clamp(2)`; the union kept `b = clamp(2)` alone, explain said `reconciled`, sync nothing). A union keeping
none of one side's lines there (compared without whitespace) dropped it. Still a choice: an insertion inside
the lines another PR replaces (its place is gone), next to a line another PR only deletes (what it follows or
precedes is gone), or whose own lines the other replaces (a PR stacked on it); a pure deletion; and wherever
a hunk of the union's own changes the lines themselves (its resolution, asked before: Regions.reconciled).
"""

from __future__ import annotations

from collections.abc import Sequence

from carrytool.pipeline.hunks import Hunk, says_nothing

Span = tuple[int, int]

BESIDE, NEXT_CHANGED, NEXT_INSERTED = "dropped", "changed-next", "inserted-next"


class _SideDrops:
    """Regions' judgement of a side dropped where both could be kept (its `_region`, `folded` and `written`)."""

    folded: Sequence[tuple[Sequence[object], Sequence[Hunk]]]
    written: list[Hunk]

    def _region(self, j: int, hunk: Hunk) -> Span | None:
        raise NotImplementedError

    def _side_dropped(self, k: int, hunk: Hunk, mine: Span | None) -> str:
        """How PR K's text HUNK (at MINE, mapped) is a side dropped where both could be kept, or "" where it is
        not: BESIDE, an insertion every hunk meeting it (other PRs' and the union's own, every one mapped) only
        inserts too; NEXT_CHANGED, an insertion that a replacement meets at its edge, and insertions only
        besides; NEXT_INSERTED, a replacement that only insertions at its edges meet. And none of its lines that
        say something stands among the lines the union's hunks meeting it write."""
        # out of the map, the region its merge met: two insertions joined by upstream's edit between or around
        # them, merged together, do not conflict (h209's review)
        mine = mine if mine is not None else self._region(k, hunk)
        if mine is None or hunk.kind != "text" or not hunk.added:
            return ""
        met = self._meeting(k, hunk, mine)
        if met is None or not all(self._beside(hunk, mine, other, theirs) for _j, other, theirs in met):
            return ""
        kept = {_bare(line) for j, other, _t in met if j < 0 for line in other.added}
        if any(_bare(line) in kept for line in hunk.added if not says_nothing(line)):
            return ""
        if hunk.old_count:
            return NEXT_INSERTED
        return NEXT_CHANGED if any(j >= 0 and other.old_count for j, other, _t in met) else BESIDE

    def _meeting(self, k: int, hunk: Hunk, mine: Span) -> list[tuple[int, Hunk, Span]] | None:
        """The text hunks meeting MINE, PR K's HUNK's (other PRs' by index, the union's own as -1), each with its
        region (_region); None where one's is not known (the def/class answer stands)."""
        others = [(j, h) for j, (_c, hunks) in enumerate(self.folded) if j != k for h in hunks if h.path == hunk.path]
        others += [(-1, h) for h in self.written if h.path == hunk.path]
        met = []
        for j, other in others:
            if other.kind != "text":
                continue            # a mode change: no lines
            theirs = self._region(j, other)
            if theirs is None:
                return None
            if _meet(mine, theirs):
                met.append((j, other, theirs))
        return met

    @staticmethod
    def _beside(hunk: Hunk, mine: Span, other: Hunk, theirs: Span) -> bool:
        """Whether OTHER (at THEIRS) leaves HUNK (at MINE) whole at its place, both kept one after the other: an
        insertion beside an insertion (at one place), or beside a replacement at the replacement's edge (neither's
        lines inside the other's, no line the insertion adds among those the replacement removes)."""
        if not hunk.old_count and not other.old_count:
            return True
        if hunk.old_count and other.old_count or not other.added or _inside(mine, theirs):
            return False
        insertion, replacement = (other, hunk) if hunk.old_count else (hunk, other)
        return not {_bare(line) for line in replacement.removed} & {_bare(line) for line in insertion.added}


def _meet(one: Span, two: Span) -> bool:
    return one[0] <= two[1] and two[0] <= one[1]


def _inside(one: Span, two: Span) -> bool:
    """Whether spans ONE and TWO (one of them a place: an insertion) share more than an end: the place strictly
    within the other's lines."""
    return one[0] < two[1] and two[0] < one[1]


def _bare(line: bytes) -> bytes:
    return line.translate(None, b" \t\r")
