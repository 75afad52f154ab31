"""Where a union had to reconcile its PRs: their hunks, of different bases, in one coordinate system (helper-149).

A hunk says which lines of its base blob it changes; PRs branched from upstream at different times number
the same line differently, so their hunks cannot be compared as they are. Each hunk's base lines are mapped
into one blob (pipeline.provided: the union's base blob of the file) through the line correspondence of
the two blobs (pipeline.basemap), read from git: one `diff-tree -p -U0` of one-file trees for every pair of blobs, batched
(xdiff: a few milliseconds for a 5,000-line file). A line the diff leaves alone maps by the offset of the
diff's hunks before it; a range whose lines or immediate neighbours the diff changes (upstream changed
them between the two bases: the fold's merge met them as a conflict) does not map, unless upstream made the
PR's change there itself: then the hunk's lines in the PR's head map (h179); a hunk that does not map stands
for the region that conflict spans there, its lines with upstream's hunks they meet (BaseMap.region), which joins
it to another PR's hunk meeting it in one conflict of the fold (h197, h204's review); where that is not known (a
binary), a def/class the two share decides.

Spans are in doubled coordinates, as git's merge sees a conflict: line k is 2k, the place after it 2k+1.
Regions says of a hunk a union lacks whether another folded PR's hunk, or a resolution of the union's own,
meets it there (pipeline.provided). Insertions against insertions are no reconciliation (helper-158): where a
PR's hunk only adds lines and every hunk meeting it only adds lines too, git's conflict could be settled by
keeping both, so a union keeping none of its lines there dropped it; nor is an insertion at the edge of a
replacement, either way round (h213; pipeline.sides). Nor are lines two PRs' hunks change alike at
their ends (the same base line replaced by the same line, the same line added at one place), which git's merge
leaves outside the conflict markers: only what is left of each is a side (h186's review: pr/2, stacked on pr/1,
sets `a = 3` as pr/1 does and `b = 5` on the next line; the union put `a = 1` back and each PR's hunk was
"reconciled" by the other's); Regions.shared names those parts, which must stand on their own, beside a side or
a resolution of the union's own alike, unless a hunk of the union's own changes them itself (h194's review), or a
third PR's hunk the union holds meets them: they went with the side not taken there, and PRs making one change are
judged as one (h249: two PRs of one head, their hunk said lost beside the third PR's side taken).
What the union's own lines there carry of a PR's hunk, line by line, is pipeline.carried's. Two insertions out
of the map, joined by upstream's edit only, are insertions against insertions too: upstream's edit joins two hunks
only where neither PR's base had it; one made on it meets the other at that one's own lines (h206).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from carrytool.gitlayer.git import Change, Git, change_of
from carrytool.pipeline.basemap import BaseMap, Span, blob_key, meets, overlaps, span_of
from carrytool.pipeline.carried import _Carried
from carrytool.pipeline.hunks import Hunk, says_nothing
from carrytool.pipeline.linecalls import Alias, Call, Form, renames_in
from carrytool.pipeline.sides import _SideDrops


class Regions(_Carried, _SideDrops):
    """Where a union had to reconcile its PRs in the files of the hunks it lacks: every folded PR's hunks and the
    union's own (those adding lines of its own there: a resolution, _resolves), their base lines mapped into the
    union's base blob of the file so that hunks of PRs on different bases compare line by line. FOLDED: each PR's
    changes and hunks; the union's BASE (a commit), its CHANGES and OWN hunks; PATHS: the files asked about."""

    def __init__(self, git: Git, base: str, changes: Sequence[Change],
                 folded: Sequence[tuple[Sequence[Change], Sequence[Hunk]]], own: Sequence[Hunk], paths: set[str]
                 ) -> None:
        self.git, self.changes, self.folded = git, changes, folded
        self.quotes: dict[str, dict[int, str]] = {}         # quotes_open of each Python blob asked (_opened)
        self.texts: dict[str, list[bytes]] = {}             # the lines of each (carried._calls)
        self.bound: dict[tuple[str, int], dict[str, Alias]] = {}     # names bound above a hunk (_bound)
        self.modules: dict[str, dict[str, Alias]] = {}      # names bound at a blob's top level (_bound)
        self.opening: dict[tuple[str, int, tuple[bytes, ...]], list[int | None]] = {}   # _openers, a hunk's
        self.wholes: dict[tuple[str, int, str], tuple[frozenset[Form], frozenset[Call]]] = {}  # _whole, a line's
        self.continued: dict[tuple[Hunk, int], tuple[Hunk, tuple[frozenset[Call], frozenset[Call]]]] = {}
        self.target: dict[str, str | None] = {}
        for path in paths:
            change = change_of(changes, path)
            found = git.file_entry(base, path) if change is None else (change.old_mode, change.old_oid)
            self.target[path] = found[1] if found is not None and found[0] != "160000" else None
        # a submodule's commit is no blob of lines: git's diff cannot read it (h236: a PR making a file another PR
        # edits a submodule, `git diff-tree -p` failed, sync exit 4); its spans map nowhere
        links = {oid for cs in (changes, *(c for c, _h in folded)) for c in cs
                 for mode, oid in ((c.old_mode, c.old_oid), (c.new_mode, c.new_oid)) if mode == "160000"}
        self.map = BaseMap(git, [(blob, self.target[h.path]) for j, (_c, hunks) in enumerate(folded)
                                 for h in hunks if h.path in paths
                                 for blob in (self._base_of(j, h), self._head_of(j, h)) if blob not in links])
        self.written = [h for h in own if h.path in paths and h.kind == "text"]     # all the union's hunks there
        # the names the PRs' hunks and the union's rename in each file: a PR's call adapted to one is its call (h240)
        self.renames = {path: renames_in((h.removed, h.added) for h in (*self.written, *(
            h for _c, hunks in folded for h in hunks)) if h.path == path and h.kind == "text") for path in paths}
        # how often the PRs add each line, and the union, file by file
        added: dict[str, Counter[bytes]] = {path: Counter() for path in paths}
        for _c, hunks in folded:
            for h in hunks:
                if h.path in added:
                    added[h.path].update(_bare(line) for line in h.added)
        writes: dict[str, Counter[bytes]] = {path: Counter() for path in paths}
        for h in self.written:
            writes[h.path].update(_bare(line) for line in h.added)
        self.own = [h for h in self.written if self._resolves(h, added[h.path], writes[h.path])]

    def _resolves(self, hunk: Hunk, added: Counter[bytes], writes: Counter[bytes]) -> bool:
        """Whether the union's HUNK writes a line of its own there: one that says something, that no folded PR's
        hunk meeting it (or not mapped) adds, and that the union writes more often in the file (WRITES) than its
        PRs add it (ADDED), all compared without whitespace. A hunk only re-adding PRs' lines, where they add
        them or moved, reconciles nothing; a PR's call the union adapts to another PR's API, word for word that
        PR's line in another def, is its own there (helper-166: said dropped at a stop)."""
        mine = self._span(-1, hunk)
        here = {_bare(line) for j, (_c, hunks) in enumerate(self.folded) for h in hunks
                if h.path == hunk.path and h.kind == "text" and self._at(mine, self._span(j, h)) for line in h.added}
        return any(not says_nothing(line) and (bare := _bare(line)) not in here and writes[bare] > added[bare]
                   for line in hunk.added)

    @staticmethod
    def _at(mine: Span | None, theirs: Span | None) -> bool:
        return mine is None or theirs is None or meets(mine, theirs)

    def _base_of(self, j: int, hunk: Hunk) -> str | None:
        change = change_of(self.folded[j][0], hunk.path)
        return change.old_oid if change is not None else None

    def _head_of(self, j: int, hunk: Hunk) -> str | None:
        change = change_of(self.folded[j][0], hunk.path)
        return change.new_oid if change is not None else None

    def _span(self, j: int, hunk: Hunk) -> Span | None:
        """HUNK's base lines (folded PR J's; J -1: the union's own) in the union's base blob, None if they do not
        map. Where upstream made the PR's change there itself (the base lines do not map, the head's new lines
        do: the fold's merge met no conflict there), the lines it holds them at (h179: on DeepSpeed, #6662's
        decorator, which upstream had taken, deleted at a stop, was reconciled by another PR's line in the def)."""
        here = span_of(hunk.old_start, hunk.old_count)
        if j < 0:
            return here
        target = self.target.get(hunk.path)
        found = self.map.map(self._base_of(j, hunk), target, here)
        return found if found is not None else self.map.map(self._head_of(j, hunk), target,
                                                            span_of(hunk.new_start, hunk.new_count))

    def reconciled(self, k: int, hunk: Hunk, scopes: list[str],
                   reach: Callable[[Hunk, Sequence[Change]], tuple[list[str], bool]]) -> str | None:
        """Whether PR K's HUNK (in SCOPES) lies in a region the union reconciled, and how: "union" where a hunk of
        the union's own writing lines of its own there meets or touches it (the maintainer's resolution, the
        PR's change in the union's words); else "pr" where another folded PR's hunk does (with the union's own,
        a conflict the union settled for another side), but not reconciled where both sides could be kept whole
        and the union keeps none of its lines there (pipeline.sides: "dropped", two insertions at one place,
        helper-158; "changed-next", an insertion at the edge of a replacement, "inserted-next", the reverse, h213); not
        reconciled either, where another PR's hunk meets its lines (touching: the fold's conflict) but in other
        def/classes only: "beside" where both only insert lines, else "apart"; None: none. Meeting in the union's base
        blob, and for Python in each def/class the hunk lies in (a hunk of two methods, one of which another PR
        also adds, is not reconciled for the other: helper-149); where the lines of either do not map, at the
        region the fold's merge met there with upstream's hunks next to them (_region), the union's own hunks too;
        where that is not known, a def/class they share (at module level: the file). The answer beside "union"
        and "pr" is only the reason given (helper-159: an insertion beside another PR's in other defs was said to
        meet no other PR's)."""
        mine, met = self._span(k, hunk), self._region(k, hunk)
        theirs = [(j, h, changes, *pair) for j, (changes, hunks) in enumerate(self.folded) if j != k
                  for h in hunks if h.path == hunk.path and (pair := self._sides(k, hunk, j, h)) is not None]
        # the union's own hunks there, but one that only puts the PR's base lines back where upstream made the
        # PR's change itself: that is no other form of the PR's change, it undoes it (h183's review: upstream's
        # `limit = 20`, the PR's, reverted by the union, was "re-expressed")
        own = [(-1, h, self.changes, met, self._span(-1, h)) for h in self.own if h.path == hunk.path
               and not (h.kind == hunk.kind == "text" and h.added == hunk.removed and h.removed == hunk.added)
               and self._carries(k, hunk, h)]
        # the outermost of its def/classes: a def nested in one of them is in that one's region
        need = {s for s in scopes if not any(s.startswith(t + ".") for t in scopes)}
        if self._met(set(need), own, reach):
            return "union"
        if self._met(need, theirs + own, reach):
            return self._side_dropped(k, hunk, mine) or "pr"
        touching = self._touching(k, hunk)
        if not touching:
            return None
        return self._side_dropped(k, hunk, mine) or (
            "beside" if not hunk.old_count and not any(h.old_count for _j, h in touching) else "apart")

    def _region(self, j: int, hunk: Hunk) -> Span | None:
        """HUNK's base lines (folded PR J's; J -1: the union's own) in the union's base blob (_span); where they do
        not map (upstream changed them or the next ones since the PR branched), widened over upstream's hunks they
        meet: the region the fold's merge of the PR onto upstream met as one conflict, and git's merge of another PR
        meeting that region joins both into one (h204's review of h197: upstream's `c = 30` between pr/1's `b` and
        pr/2's `d` put both in one conflict, settled for pr/2's side; pr/1's line, dropped far from pr/2's next to
        upstream's edit, was "reconciled" by their shared def). None where that is not known (a binary, no file)."""
        found = self._span(j, hunk)
        target = self.target.get(hunk.path)
        if found is not None or j < 0 or hunk.kind != "text" or not blob_key(target):
            return found
        return self.map.region(self._base_of(j, hunk), target, span_of(hunk.old_start, hunk.old_count))

    def touching(self, k: int, hunk: Hunk) -> list[int]:
        """The other folded PRs (their indexes) with a hunk meeting or touching PR K's HUNK in the union's base
        blob (_region: joined by upstream's hunks next to either): the fold's merge met them as a conflict."""
        return sorted({j for j, _h in self._touching(k, hunk)})

    def _touching(self, k: int, hunk: Hunk) -> list[tuple[int, Hunk]]:
        return [(j, h) for j, (_c, hunks) in enumerate(self.folded) if j != k for h in hunks
                if h.path == hunk.path and h.kind == "text" and (pair := self._sides(k, hunk, j, h)) is not None
                and pair[0] is not None and pair[1] is not None and meets(*pair)]

    def _sides(self, k: int, hunk: Hunk, j: int, other: Hunk) -> tuple[Span | None, Span | None] | None:
        """PR K's HUNK and folded PR J's hunk OTHER as sides of a conflict git's merge would show (_apart), a hunk
        whose lines do not map into the union's base blob at the region the fold's merge met there (_region),
        where the other's do not map either; where the other's do, at its own lines (_own): the other PR's base
        had upstream's edit, so in one fold order it merges cleanly beside the conflict upstream's edit made, and
        the edit joins nothing (h206: pr/2, made on upstream's `c = 30`, sets `d` next to it; pr/1's `b`, next to it
        too, dropped, was "reconciled" by pr/2's side, as the fold of pr/2 first would meet both, not pr/1 first)."""
        pair = self._apart(k, hunk, self._span(k, hunk), j, other)
        if pair is None or None not in pair:
            return pair
        out = self._region if pair == (None, None) else self._own
        return (pair[0] if pair[0] is not None else out(k, hunk), pair[1] if pair[1] is not None else out(j, other))

    def _own(self, j: int, hunk: Hunk) -> Span | None:
        """Folded PR J's text HUNK out of the map at its own lines in the union's base blob (BaseMap.lines): over
        upstream's hunks that change those lines, not those only next to them. None where that is not known."""
        target = self.target.get(hunk.path)
        if hunk.kind != "text" or not blob_key(target):
            return None
        return self.map.lines(self._base_of(j, hunk), target, span_of(hunk.old_start, hunk.old_count))

    def _apart(self, k: int, hunk: Hunk, mine: Span | None, j: int, other: Hunk
               ) -> tuple[Span | None, Span | None] | None:
        """PR K's HUNK (at MINE) and folded PR J's hunk OTHER as sides of a conflict git's merge would show: their
        spans less the lines at either end both change alike at the same lines (_alike_ends), which git's merge
        leaves outside the conflict markers; None where nothing of one is left (the same change, or one holding
        the other's whole: neither is a side the other was reconciled with). h183's review: two PRs changing
        `a = 1` to `a = 3` alike, the union keeping neither, each was "reconciled" by the other's; h186's: so was
        a PR stacked on another with a change of its own on the next line, one hunk of the two lines."""
        theirs = self._span(j, other)
        ends = self._ends(k, hunk, j, other)
        if ends is None:
            return mine, theirs
        (lead, trail), first = ends
        one, two = _rest(hunk, first[0], lead, trail), _rest(other, first[1], lead, trail)
        return None if one is None or two is None else (one, two)

    def _ends(self, k: int, hunk: Hunk, j: int, other: Hunk) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """How many lines at the start and at the end of K's HUNK and J's OTHER both change alike at the same lines
        of the union's base blob, and the first line of that blob each changes (its place, for an insertion);
        None where either's base lines do not map there (compared through its head: h179), or neither end is
        alike."""
        if hunk.kind != "text" or other.kind != "text":
            return None
        target = self.target.get(hunk.path)
        spans = [self.map.map(self._base_of(n, h), target, span_of(h.old_start, h.old_count))
                 for n, h in ((k, hunk), (j, other))]
        if spans[0] is None or spans[1] is None:
            return None
        first = ((spans[0][0] + 1) // 2, (spans[1][0] + 1) // 2)
        ends = _alike_ends(hunk, other, first)
        return (ends, first) if any(ends) else None

    def shared(self, k: int, hunk: Hunk, taken: Collection[tuple[int, Hunk]] = ()) -> list[Hunk]:
        """The parts of PR K's HUNK another folded PR's hunk changes alike at its ends (_apart), each as a hunk of
        its own: outside the conflict git's merge shows, no side reconciles them (h186's review), nor a hunk of the
        union's own beside them (h194's review: the union wrote `b = 6` at the conflict and put `a = 1`, which both
        PRs make `a = 3`, back: the shared line read as re-expressed); but for those a hunk of the union's own
        changes itself (_rewrites: its words for them), and those a third PR's side the union took meets (_met_by:
        TAKEN, the folded PRs' hunks, by index, that stand in the union's tree, whole or in part)."""
        found: list[Hunk] = []
        for j, (_c, hunks) in enumerate(self.folded):
            for other in (h for h in hunks if j != k and h.path == hunk.path):
                ends = self._ends(k, hunk, j, other)
                if ends is not None:
                    found += [h for h in _parts(hunk, *ends[0]) if h not in found and not self._rewrites(k, h)
                              and not self._met_by(k, h, taken)]
        return found

    def _met_by(self, k: int, part: Hunk, taken: Collection[tuple[int, Hunk]]) -> bool:
        """Whether a hunk of TAKEN (another folded PR's, standing in the union's tree) meets PART of PR K's hunk as
        a side of a conflict (_sides: a hunk changing PART alike is none): PART is no line two PRs share outside
        their conflict then, but one of the side the union did not take where a third PR's met it (h249: on trl,
        #6283 and #6284, one head, and #6286 changing the same lines; the union took #6286's side and each
        duplicate's hunk was said lost, "no other PR it folds changes those lines"). Out of the map, not known: no."""
        return any((pair := self._sides(k, part, j, other)) is not None and pair[0] is not None
                   and pair[1] is not None and meets(*pair) for j, other in taken if j != k and other.path == part.path)

    def _rewrites(self, k: int, part: Hunk) -> bool:
        """Whether a hunk of the union's own (writing lines of its own) changes PART of PR K's hunk itself: its
        lines overlap PART's in the union's base blob, more than touching them (a hunk next to them changes other
        lines; git's merge left them outside the conflict). One only putting PART's base lines back is no other
        form of it (h183's review)."""
        mine = self._span(k, part)
        return mine is not None and any(
            overlaps(mine, theirs) for h in self.own if h.path == part.path
            and not (h.added == part.removed and h.removed == part.added)
            and (theirs := self._span(-1, h)) is not None)

    def _met(self, need: set[str],
             others: list[tuple[int, Hunk, Sequence[Change], Span | None, Span | None]],
             reach: Callable[[Hunk, Sequence[Change]], tuple[list[str], bool]]) -> bool:
        """Whether OTHERS (each with a hunk's base lines and its own, as sides of a conflict: None, not mapped)
        meet in each def/class of NEED."""
        for _j, other, changes, mine, theirs in others:
            comparable = mine is not None and theirs is not None
            if mine is not None and theirs is not None and not meets(mine, theirs):
                continue
            if not need:
                return True
            their_scopes = reach(other, changes)[0]
            if comparable and not their_scopes:
                return True
            need -= set(their_scopes)
            if not need:
                return True
        return False


def _alike_ends(one: Hunk, two: Hunk, first: tuple[int, int]) -> tuple[int, int]:
    """How many lines at the start of text hunks ONE and TWO (FIRST: the first base line each changes, in one
    blob), and how many at the end, the two change alike: a base line each removes the same, replaced by the
    same line, or (past the lines one removes, as the other's) a line each adds the same, or removes the same.
    Line by line, in step: git's merge leaves these outside the conflict markers."""
    def alike(at: Callable[[Hunk, int], tuple[bytes | None, bytes | None]], limit: int) -> int:
        n = 0
        while n < limit and (pair := at(one, n)) == at(two, n) and pair != (None, None):
            n += 1
        return n

    def front(h: Hunk, n: int) -> tuple[bytes | None, bytes | None]:
        return (h.removed[n] if n < len(h.removed) else None, h.added[n] if n < len(h.added) else None)
    lead = alike(front, max(len(one.removed), len(one.added))) if first[0] == first[1] else 0
    if first[0] + len(one.removed) != first[1] + len(two.removed):
        return lead, 0

    def back(h: Hunk, n: int) -> tuple[bytes | None, bytes | None]:
        return (h.removed[-1 - n] if n < len(h.removed) - min(lead, len(h.removed)) else None,
                h.added[-1 - n] if n < len(h.added) - min(lead, len(h.added)) else None)
    return lead, alike(back, max(len(one.removed), len(one.added)))


def _counts(hunk: Hunk, lead: int, trail: int) -> tuple[int, int, int, int]:
    """How many of HUNK's removed lines and added lines LEAD steps at its start and TRAIL at its end take."""
    removed, added = min(lead, len(hunk.removed)), min(lead, len(hunk.added))
    return (removed, min(trail, len(hunk.removed) - removed), added, min(trail, len(hunk.added) - added))


def _rest(hunk: Hunk, first: int, lead: int, trail: int) -> Span | None:
    """The span of what is left of HUNK (its first base line FIRST, in the union's base blob) past LEAD steps at
    its start and TRAIL at its end (_alike_ends); None: nothing."""
    lead_removed, trail_removed, lead_added, trail_added = _counts(hunk, lead, trail)
    removed = len(hunk.removed) - lead_removed - trail_removed
    if not removed and len(hunk.added) == lead_added + trail_added:
        return None
    start = first + lead_removed
    return span_of(start, removed) if removed else span_of(start - 1, 0)


def _parts(hunk: Hunk, lead: int, trail: int) -> list[Hunk]:
    """HUNK's LEAD steps at its start and TRAIL at its end (_alike_ends), each as a hunk of its own."""
    lead_removed, trail_removed, lead_added, trail_added = _counts(hunk, lead, trail)
    parts = []
    if lead:
        parts.append(replace(hunk, old_count=lead_removed, new_count=lead_added,
                             removed=hunk.removed[:lead_removed], added=hunk.added[:lead_added]))
    if trail:
        old = hunk.old_start + hunk.old_count - trail_removed
        new = hunk.new_start + hunk.new_count - trail_added
        parts.append(replace(hunk, old_start=old if trail_removed else old - 1 + (not hunk.old_count),
                             old_count=trail_removed, new_start=new if trail_added else new - 1,
                             new_count=trail_added, removed=hunk.removed[len(hunk.removed) - trail_removed:],
                             added=hunk.added[len(hunk.added) - trail_added:]))
    return parts


def _bare(line: bytes) -> bytes:
    return line.translate(None, b" \t\r")
