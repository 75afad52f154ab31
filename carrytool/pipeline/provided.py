"""What a union leaves out of the PRs it stands for, hunk by hunk (helper-128: lost work nothing named).

A union folds PRs and its maintainer resolves where they meet; the per-path check (landing.account_provided)
trusts a union for every file it changes. Here each hunk of a folded PR in such a file is looked for in the tree
that should hold it (the tree right after the union's step, on the upstream sync composes on: later entries'
lines and upstream's since the union was made are neither its nor the PR's; the union's own commit for `union
continue`): first at its place, as git's 3-way merge sees it (standing.held_at_place: the hunk alone merged onto
the tree's file from the PR's base changes nothing; helper-176: a copy of upstream's or another PR's elsewhere
in the def stood for the PR's line, by its neighbours' text or its count); else its added lines (blank or
bracket-only lines at either end aside) as one block, within the def/class they belong to when the tip still has
a def/class of each of those names (a line the same text in another method is not the PR's: helper-131),
anywhere in the file otherwise, more often than the PR's head has it there, shifted by the copies the union's
base (upstream) has there beyond the PR's base's (a copy the def had already is not the PR's: helper-166; nor
one upstream added since, and one upstream deleted is not wanted: helper-169; so too each line judged
loosely), and, where the merge would add the hunk, beyond the copies the other folded PRs add there. Where
the block is not there, most of its lines that say something (two thirds, at least two) standing there
compared loosely (pipeline.standing) mean the union carries the change in another form: renamed, moved,
reformatted, tweaked (helper-131: the vLLM union's own version of #45612's test), but only in a
region the union reconciled where some of those lines are missing (helper-159: a statement deleted at a stop,
outside the conflict, passed silently): else it is left out, naming the lines (`missing`); so is a hunk
not there at all of which some lines stand loosely (h197: one line of two kept was said as the whole hunk). A hunk not
there is left out unless it lies in a region the union had to reconcile (pipeline.regions): a hunk of the
union's own writing a line of its own there (one no PR's hunk there adds, and the union writes more often in the
file than its PRs add it: the maintainer's resolution, RE_EXPRESSED; helper-166: a PR's call adapted to another
PR's new API; but a line more akin to
another folded PR's hunk it meets is that PR's: h209's review) meets or touches its lines, as git's merge sees a conflict, for Python in each def/class it lies
in; or another folded PR's hunk does (RECONCILED, explain's coverage: `reconciled`: the union took that side).
Hunks of PRs on different bases are compared in the union's base blob of the file, each mapped there through the
diff between its base blob and that one; lines upstream changed between the two, or next to them, do not map
(but for a PR's change upstream made there itself: its lines in the union's base blob, through the PR's head; h179),
and such a hunk stands for the region of the fold's conflict with upstream there: its lines and upstream's
changed lines they meet, another PR's hunk meeting those joined with it in one conflict, apart meeting nothing
(h197, h204's review: pr/2's line elsewhere in the def "reconciled" pr/1's, dropped by a union made on upstream's
edit next to either); else a def/class the two hunks share decides (at module level: the file) (helper-149: a
line the maintainer deleted at a stop, outside the conflict, was reconciled because the union changes its def).
A hunk that only removes lines is left out when the tip still holds them where the PR removes them (still_there: in the
def/class they lay in, else between the same neighbours) more often than the PR's head does, shifted by upstream's
copies as the added lines are (helper-176), and not deleted at their place as git's merge sees it (helper-144: a
deletion the union dropped was called re-expressed, and its drop stale); the same line standing elsewhere is no
loss. A file a PR changes that the tree lacks (the union deleted it), or one it deletes that the tree keeps, is
left out whole (_whole_file) unless another folded PR deletes (changes) it: a modify/delete conflict the union
resolved (helper-147: the hunks of a file the union deleted read `re-expressed`). A mode a PR sets (the
executable bit) that the tree's file lacks is left out (_mode_left_out: `whole` "mode", no lines) unless another
folded PR sets the file another mode (helper-158: explain's coverage said `absent`, sync nothing); only a drop
without `in` covers it, as a whole file. Two insertions at one place are no region to reconcile where the union
keeps none of one's lines there and writes none of its own (pipeline.regions: keeping both was possible).
Lines another folded PR's hunk changes alike at its ends (the same line replaced alike, or added at one place) are
no side of a conflict: git's merge leaves them outside the markers, so a hunk reconciled by another PR's side still
needs them in the tree, and is left out naming them where they are not (h186's review: a change two stacked PRs
share, put back by the union beside the line that conflicted); so does one the union reconciled in its own words,
but where a hunk of the union's own changes those lines themselves (h194's review: `b = 6` written at the conflict
made the shared `a = 3`, put back to `a = 1` beside it, re-expressed), or a third PR's hunk the union holds meets
them, its side taken there (h249: two PRs of one head, and a third rewriting their lines).
A hunk left out says why it is in no region reconciled: the PRs inserting in the same conflict (`beside`: at the same
place, or joined by upstream's edit; h209's review), or
changing those lines in other def/classes (`apart`); and, where the union folded an older head of its PR
that lacks it too (`unfolded`), that the PR gained it after the fold (helper-159: a stop was guessed).

A hunk left out that the union's `supersedes` item declares dropped on purpose (`drops`: file, scope, why)
is not left out but accounted as dropped (pipeline.drops.account_drops); a declared drop that matches no hunk
left out is stale (helper-135: a maintainer's deliberate drop was warned every night, and nothing said why).

One batched `diff-tree -p` for every PR and union, and one for the base blobs to map (only where a hunk is
missing and the bases differ); blobs through the long-lived `cat-file --batch`;
the PRs' Python files parsed by the pieces around their hunks (pipeline.scopes), the tip's wholly where a
hunk lies in a def/class (each distinct piece once, and cached on disk).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change, Git, change_of
from carrytool.pipeline.hunks import Hunk, core_lines, find_block, read_hunks
from carrytool.pipeline.leftout import ABSENT, KINDS, RECONCILED, LeftOut, UnionCheck
from carrytool.pipeline.regions import Regions
from carrytool.pipeline.restacked import Restacked
from carrytool.pipeline.reworded import reworded_kept
from carrytool.pipeline.scopes import hunk_reach
from carrytool.pipeline.spancache import SpanCache
from carrytool.pipeline.standing import (
    RE_EXPRESSED,
    VERBATIM,
    Drift,
    Tip,
    kept_lines,
    places,
    standing,
    still_there,
)

# a PR's text hunk judged in the tree: its PR's index, the hunk, how it stands (None: not at all), the lines a
# pure deletion removes, the lines of it missing, whether upstream's file holds it at its place
_Judged = tuple[int, Hunk, str | None, tuple[int, int] | None, tuple[int, ...], bool]


def left_out(git: Git, unions: Sequence[UnionCheck]) -> list[list[LeftOut]]:
    """For each of UNIONS, the hunks of its folded PRs its tip lacks verbatim: ABSENT outside the regions it
    reconciled, else RECONCILED, or RE_EXPRESSED where it carries them in another form (the last two are no
    warning: a drop covering one is not stale)."""
    return [judged.lost for judged in judge_provided(git, unions)]


@dataclass(frozen=True)
class Provided:
    """What the tip makes of a union's folded PRs: the hunks it lacks verbatim (LOST, as left_out says), and each
    text hunk it looked for line by line (LOOKED: PR id, file, lines in the PR's head); one LOOKED that no LeftOut
    of LOST names stands there verbatim. Explain's coverage takes this verdict (h203: a hunk sync found left out
    read `verbatim` where the union's diff added its text, another PR's copy)."""

    lost: list[LeftOut]
    looked: frozenset[tuple[str, str, tuple[int, int]]] = frozenset()

    def verdicts(self) -> dict[tuple[str, str, tuple[int, int]], str]:
        """Each hunk LOOKED for -> how it stands: VERBATIM, RE_EXPRESSED, RECONCILED or ABSENT."""
        said = {(lost.pr, lost.file, lost.lines): lost.how for lost in self.lost if lost.lines is not None}
        return {key: said.get(key, VERBATIM) for key in sorted(self.looked)}


def judge_provided(git: Git, unions: Sequence[UnionCheck]) -> list[Provided]:
    """left_out, with the hunks looked for (Provided)."""
    wanted = [u for u in unions if any(f.paths for f in u.folded)]
    pairs = [pair for u in wanted for pair in [*((f.base, f.head) for f in u.folded), (u.base, u.head)]]
    changes = [list(c) for u in wanted for c in [*(f.changes for f in u.folded), u.changes]]
    hunks = iter(read_hunks(git, pairs, changes) if pairs else [])
    found: dict[int, Provided] = {}
    spans = SpanCache(git.common_dir / "carrytool" / "cache")     # explain's: PRs' heads are asked again
    for union in wanted:
        mine = [next(hunks) for _ in union.folded]
        lost, looked = _left_out(git, spans, union, mine, next(hunks))
        found[id(union)] = Provided(_unfolded(git, union, mine, lost), looked)
    spans.save()
    return [found.get(id(u), Provided([])) for u in unions]


def _left_out(git: Git, spans: SpanCache, union: UnionCheck, folded: list[list[Hunk]], own: list[Hunk]
              ) -> tuple[list[LeftOut], frozenset[tuple[str, str, tuple[int, int]]]]:
    tips: dict[str, Tip | None] = {}
    files: dict[str, Tip] = {}      # the tip's and the PRs' heads' (and bases', upstream's) files, by blob
    ours: dict[str, str] = {}       # the blob of each path the union is composed on (ZERO: none)

    def read(oid: str) -> Tip:
        if oid not in files:
            files[oid] = Tip(oid, git.read_blob(oid).split(b"\n"))
        return files[oid]

    found: list[LeftOut | _Judged | None] = []
    judged: list[tuple[int, Hunk, Change, Tip]] = []    # a PR's text hunk and the tip's file to look for it in
    tip_tree = git.tree_of(union.tip)
    for k, (pr, hunks) in enumerate(zip(union.folded, folded)):
        by_path: dict[str, list[Hunk]] = {}
        for hunk in hunks:
            if hunk.path in pr.paths:
                by_path.setdefault(hunk.path, []).append(hunk)
        for path, file_hunks in by_path.items():
            change = change_of(pr.changes, path)
            entry = git.blob_at(tip_tree, path)       # a submodule too (file_entry: none there)
            mode = entry[0] if entry is not None else None
            whole = _kind_left_out(union, k, change, file_hunks, mode) or \
                _whole_file(union, k, change, file_hunks, mode is not None and mode not in ("040000", "160000"))
            if whole is not None:
                found += [whole] if whole.how != VERBATIM else []
                continue
            for hunk in file_hunks:
                if hunk.kind == "mode":
                    lost = _mode_left_out(git, tip_tree, union, k, hunk)
                    found += [lost] if lost is not None else []
                    continue
                if path not in tips:
                    entry = git.file_entry(tip_tree, path)
                    tips[path] = read(entry[1]) if entry is not None else None
                if hunk.kind == "text" and core_lines(hunk.added or hunk.removed)[1] and tips[path] is not None and \
                        change is not None:
                    judged.append((k, hunk, change, tips[path]))   # type: ignore[arg-type]
                    found.append(None)      # judged below, all at once, in this order
    judgements = _judge(git, spans, union, judged, ours, read)
    results = [(k, hunk, *how) if how[0] != VERBATIM else None for (k, hunk, _c, _t), how in zip(judged, judgements)]
    slots = iter(results)
    looked = frozenset((union.folded[k].id, hunk.path, hunk.span) for k, hunk, _c, _t in judged)
    found = [item for item in (next(slots) if item is None else item for item in found) if item is not None]
    # a hunk not there, or there but for some lines: each asks where the union reconciled
    missing = [item for item in found if not isinstance(item, LeftOut) and (item[2] is None or item[4])]

    def reach(hunk: Hunk, changes: Sequence[Change]) -> tuple[list[str], bool]:
        return hunk_reach(hunk, change_of(changes, hunk.path), lambda oid, line: spans.scope(
            oid, line, lambda: git.read_blob(oid)))

    if all(isinstance(item, LeftOut) for item in found):
        return [item for item in found if isinstance(item, LeftOut)], looked
    regions = Regions(git, union.base, union.changes, [(pr.changes, hunks) for pr, hunks in zip(union.folded, folded)],
                      own, {item[1].path for item in missing})
    out = []
    regioned = []
    for item in found:
        if not isinstance(item, LeftOut):
            scopes, module = reach(item[1], union.folded[item[0]].changes)
            region = regions.reconciled(item[0], item[1], scopes, reach) if item[2] is None or item[4] else None
            regioned.append((item, scopes, module, region))
    # the PRs' hunks the tip holds, whole or in part: a side the union took where they conflict (h249)
    taken = {(k, hunk) for (k, hunk, _c, _t), (how, _r, lacks, _u) in zip(judged, judgements) if how or lacks}
    shared = _shared_lost(git, spans, union, regions,
                          [item for item, _s, _m, region in regioned if region in ("pr", "union")], tips, ours, read,
                          taken)
    by_id = {id(item): rest for item, *rest in regioned}
    restacked = Restacked(git, union)
    for item in found:
        if isinstance(item, LeftOut):
            out.append(item)
            continue
        k, hunk, how, removed, lacks, upstream = item
        pr = union.folded[k]
        scopes, module, region = by_id[id(item)]
        if region in ("pr", "union") and id(item) in shared:
            # another PR's side taken where they conflict (or the union's own words written there), but a line
            # both change alike, outside the conflict, lost: nobody's reconciliation (h186's, h194's reviews)
            how, region, lacks = ABSENT, None, shared[id(item)]
        elif region == "union" and (lost := tuple(n for n in regions.uncarried(k, hunk) if n in lacks or not lacks)):
            # the union's own words there, but for lines of it none of them does: lost (h236's review)
            how, region, lacks = ABSENT, "worded", lost
        elif how is None:
            # the union's own lines there: its words for the PR's change; another PR's: it took that side
            how = {"union": RE_EXPRESSED, "pr": RECONCILED}.get(region or "", ABSENT)
        elif lacks and region not in ("union", "pr"):
            # the rest of it stands, but a line of it is gone outside any region reconciled: no other form of
            # it, a loss (helper-159: a statement deleted at a stop, two thirds of the hunk there, was silent)
            how = ABSENT
        if how == ABSENT and (tip := tips.get(hunk.path)) is not None and restacked.reconciled_by(k, hunk, tip.lines):
            # its lines as the PR built on its head rewrote them: the union took that one's version (h268)
            how, region, lacks = RECONCILED, "pr", ()
        others = tuple(union.folded[j].id for j in regions.touching(k, hunk)) if how == ABSENT else ()
        out.append(LeftOut(pr.id, hunk.path, hunk.span, tuple(scopes), module, pr.head, how, removed,
                           beside=others if region in ("dropped", "beside") else (),
                           next_to=others if region in ("changed-next", "inserted-next") else (),
                           inserted=region == "inserted-next",
                           apart=others if region == "apart" else (), worded=region == "worded",
                           missing=lacks if how == ABSENT else (), upstream=upstream,
                           near=regions.near(k, hunk) if how == ABSENT else ""))
    return out, looked


def _judge(git: Git, spans: SpanCache, union: UnionCheck, judged: Sequence[tuple[int, Hunk, Change, Tip]],
           ours: dict[str, str], read: Callable[[str], Tip]
           ) -> list[tuple[str | None, tuple[int, int] | None, tuple[int, ...], bool]]:
    """How each of JUDGED (PR K's text HUNK, its CHANGE to the file, the tip's file) stands in the tip: VERBATIM,
    RE_EXPRESSED or None (pipeline.standing), the lines a pure deletion removes, the lines of its head missing, and
    whether upstream's file holds it at its place. One merge-tree batch for all."""
    drifts = [_drift(git, union.onto or union.base, change, ours, read) for _k, _hunk, change, _tip in judged]
    asked = [(tip, change, hunk, drift, [c for j, other in enumerate(union.folded) if j != k for c in other.changes
                                         if c.path == hunk.path and c.new_oid != ZERO
                                         and c.new_mode != "160000"])      # a submodule: no lines (h236)
             for (k, hunk, change, tip), drift in zip(judged, drifts)]
    out = []
    for (_k, hunk, change, tip), drift, place in zip(judged, drifts, places(git, asked, read) if asked else []):
        # a pure deletion is looked for by its removed lines
        deletion = not hunk.added
        offset, block = core_lines(hunk.removed if deletion else hunk.added)
        lacks: tuple[int, ...] = ()
        kept: tuple[int, ...] = ()
        if not block:
            how: str | None = VERBATIM          # a part of a hunk that says nothing on its own
        elif deletion:
            start = hunk.old_start + offset
            whole = still_there(git, spans, tip, change, start, block, drift, place) or \
                reworded_kept(git, tip, change, start, block, drift, place)
            # else line by line: one of them kept is no deletion carried (h255)
            kept = () if whole else kept_lines(git, spans, tip, change, start, block, drift, place)
            how = None if whole or kept else VERBATIM
        else:
            how, lacks = standing(git, spans, tip, read(change.new_oid), hunk, change, hunk.new_start + offset,
                                  block, drift, place)
        removed = ((kept[0], kept[-1]) if kept else (hunk.old_start + offset, hunk.old_start + offset + len(block) - 1)
                   ) if deletion else None
        out.append((how, removed, lacks, bool(place.ours)))
    return out


def _shared_lost(git: Git, spans: SpanCache, union: UnionCheck, regions: Regions,
                 reconciled: Sequence[_Judged], tips: dict[str, Tip | None], ours: dict[str, str],
                 read: Callable[[str], Tip], taken: Collection[tuple[int, Hunk]]) -> dict[int, tuple[int, ...]]:
    """Of RECONCILED (PRs' hunks the tip lacks, each in a region another PR's hunk met, its side taken, or the
    union's own did), those a part of which another PR changes alike at its ends (Regions.shared: outside the
    conflict git's merge shows, and no hunk of the union's own changes it, nor one of TAKEN, a third PR's side the
    tip holds: h249) the tip does not hold, by id, with the
    lines of the PR's head those parts add (h186's review: pr/2, stacked on pr/1, sets `a = 3` as pr/1 does and
    `b = 5` on the next line; the union took pr/2's `b` and put `a = 1` back, each PR's hunk "reconciled" by the
    other's; h194's: so too where the union wrote `b = 6`, its own words, there)."""
    parts = [(item, part, change, tip) for item in reconciled for part in regions.shared(item[0], item[1], taken)
             if (change := change_of(union.folded[item[0]].changes, part.path)) is not None
             and (tip := tips.get(part.path)) is not None]
    judged = [(item[0], part, change, tip) for item, part, change, tip in parts]
    lost: dict[int, tuple[int, ...]] = {}
    for (item, part, _c, _t), (how, _r, lacks, _u) in zip(parts, _judge(git, spans, union, judged, ours, read)):
        if how is None or lacks:
            lines = tuple(range(part.new_start, part.new_start + part.new_count)) if how is None else lacks
            lost[id(item)] = tuple(sorted({*lost.get(id(item), ()), *lines}))
    return lost


def _drift(git: Git, onto: str, change: Change, ours: dict[str, str], read: Callable[[str], Tip]) -> Drift | None:
    """What upstream did to CHANGE's file between the PR's base and ONTO, the commit the union is composed on
    (at the PR's path, else its old one), where the two blobs differ (OURS caches ONTO's blob by path); None
    where they agree."""
    if change.path not in ours:
        tree = git.tree_of(onto)
        found = next((e for e in (git.file_entry(tree, p) for p in reversed(change.paths)) if e is not None), None)
        ours[change.path] = found[1] if found is not None else ZERO
    oid = ours[change.path]
    if oid == change.old_oid:
        return None
    return Drift(read(oid) if oid != ZERO else None, read(change.old_oid) if change.old_oid != ZERO else None)


def _unfolded(git: Git, union: UnionCheck, folded: list[list[Hunk]], found: list[LeftOut]) -> list[LeftOut]:
    """FOUND, each ABSENT one of a PR the union folded at an older head (a stale fold) that that head lacks too
    marked `unfolded` (the folded head): the PR gained it after the fold, no stop dropped it (helper-159: the
    warning guessed a stop, the line above it said the fold was stale). A hunk's added lines (blank or
    bracket-only at either end aside) not there as one block, the lines a deletion removes still there, or a
    mode it sets not the file's there; a whole file is not judged."""
    out = []
    for lost in found:
        k = next((k for k, pr in enumerate(union.folded) if pr.id == lost.pr), None)
        if lost.how == ABSENT and k is not None and union.folded[k].folded and (lost.lines or lost.whole == "mode"):
            hunk = next((h for h in folded[k] if h.path == lost.file and
                         (h.span == lost.lines if lost.lines else h.kind == "mode")), None)
            if hunk is not None and not _in_head(git, union.folded[k].folded, hunk):
                lost = replace(lost, unfolded=union.folded[k].folded)
        out.append(lost)
    return out


def _in_head(git: Git, head: str, hunk: Hunk) -> bool:
    """Whether commit HEAD has HUNK's change: its mode, its added lines as one block, or (a pure deletion) not
    the lines it removes."""
    entry = git.file_entry(git.tree_of(head), hunk.path)
    if hunk.kind == "mode":
        return entry is not None and entry[0] == hunk.new_mode
    block = core_lines(hunk.added or hunk.removed)[1]
    lines = git.read_blob(entry[1]).split(b"\n") if entry is not None else []
    return bool(find_block(lines, block)) == bool(hunk.added)


def _mode_left_out(git: Git, tree: str, union: UnionCheck, k: int, hunk: Hunk) -> LeftOut | None:
    """PR K's mode change (HUNK: the mode it sets, the executable bit) where TREE has the file at another mode:
    RECONCILED where another PR the union folds sets that file another mode (git's merge conflicts), else
    ABSENT (helper-158: explain's coverage said `absent`, sync nothing). None: TREE has that mode."""
    found = git.blob_at(tree, hunk.path)
    if found is None or found[0] == hunk.new_mode:
        return None
    pr = union.folded[k]
    met = any(c.path == hunk.path and c.old_mode != c.new_mode and c.new_mode != hunk.new_mode
              for j, other in enumerate(union.folded) if j != k for c in other.changes)
    return LeftOut(pr.id, hunk.path, None, (), True, pr.head, RECONCILED if met else ABSENT, whole="mode",
                   mode=hunk.new_mode or "")


def _whole_file(union: UnionCheck, k: int, change: Change | None, hunks: Sequence[Hunk], there: bool
                ) -> LeftOut | None:
    """The union's tree and PR K's change (CHANGE, HUNKS) disagreeing on whether the file is there at all (THERE:
    the tree has it), by the union's own doing: the PR changes a file the union deletes, or deletes one the union
    keeps and changes. RECONCILED where another PR it folds deletes that file (the first case) or changes it (the
    second): a modify/delete conflict the union resolved; else ABSENT. VERBATIM (nothing to say here): a file
    the PR deletes that the tree lacks too, or one it only removes lines from; a file gone that the union does
    not delete (upstream moved it, or a later entry deleted it: the per-path and landing checks'), or kept that
    it does not change (the per-path check's). None: the file is there, as the PR leaves it (its hunks decide)."""
    deletes = change is not None and change.new_oid == ZERO
    if there and not deletes:
        return None
    pr = union.folded[k]
    path = hunks[0].path
    own = change_of(union.changes, path)
    adds = any(h.kind in ("binary", "file", "rename", "submodule") or (h.kind == "text" and core_lines(h.added)[1])
               for h in hunks)
    if (there and own is None) or (not there and (deletes or not adds or own is None or own.new_oid != ZERO)):
        return LeftOut(pr.id, path, None, (), True, pr.head, VERBATIM)
    names = set(change.paths) if change is not None else {path}
    others = [c for j, other in enumerate(union.folded) if j != k for c in other.changes if names & set(c.paths)]
    if deletes:     # the tree keeps it: reconciled where another PR changes it
        met = any(c.new_oid != ZERO for c in others)
    else:           # the tree lacks it: reconciled where another PR deletes it (or moves it away)
        met = any(c.new_oid == ZERO or (c.status == "R" and c.old_path in names) for c in others)
    return LeftOut(pr.id, path, None, (), True, pr.head, RECONCILED if met else ABSENT,
                   whole="keeps" if deletes else "lacks")


def _kind_left_out(union: UnionCheck, k: int, change: Change | None, hunks: Sequence[Hunk], mode: str | None
                   ) -> LeftOut | None:
    """PR K's changes to a file's lines (CHANGE, HUNKS, leaving it a file) where the union's tree has a link or a
    submodule (MODE) the union's own change put there: RECONCILED where another PR it folds makes the file that
    (a conflict the union settled for that side), else ABSENT. h236: a submodule there read as the union's words
    for the PR's lines ("re-expressed", no warning), a link as lines dropped in no region. VERBATIM (nothing to
    say here): a link or submodule the union did not put there (upstream's: the per-path and landing checks').
    None: the tree has a file there, or the PR makes it no file either."""
    if mode not in KINDS or change is None or change.new_mode in KINDS or change.new_oid == ZERO or \
            not any(h.kind in ("text", "binary") for h in hunks):     # (a binary file's change: h246, silent)
        return None
    pr = union.folded[k]
    path = hunks[0].path
    own = change_of(union.changes, path)
    if own is None or own.new_mode != mode:
        return LeftOut(pr.id, path, None, (), True, pr.head, VERBATIM)
    met = any(c.path == path and c.new_mode == mode for j, other in enumerate(union.folded) if j != k
              for c in other.changes)
    return LeftOut(pr.id, path, None, (), True, pr.head, RECONCILED if met else ABSENT, whole="kind", mode=mode,
                   binary=not any(h.kind == "text" for h in hunks))
