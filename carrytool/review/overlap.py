"""The overlap map: which entries touch the same files, scopes and hunks, and which do not merge together.

Sparse: only pairs of entries that share a file are compared (an index file -> entries). Conflicts
are real 3-way merges in memory, in two batched `merge-tree --stdin` processes: first every entry
alone onto upstream in the run's (each clean result written as a commit whose only parent is
upstream; a PR whose paths upstream left alone since its base is written into upstream's tree, as
composing writes it, with no merge: PairMerger._directly), then, for every pair, the later entry merged onto the earlier one's commit, in a process of
their own that explain starts before composing and asks for the answers after (start_overlaps). A pair conflicts when that
second merge conflicts in a path where the later entry does not conflict with upstream on its own, or
where it does and the earlier entry's change meets the conflicting lines (sync's rule: pipeline.blame).
What needs no merge (the entries' hunks, shared files, identical hunks, scopes: the parsing) runs meanwhile in
a thread, started before the merges alone (`_HeadStart`, then StartedOverlaps.compare_later), which takes the
hunks from a `diff-tree` started before the merges, reads the blobs it parses through a `cat-file` of its own and
never speaks to the run's long-lived git processes.
Each pair's decision is kept on disk by what decides it (review.paircache): a pair decided before is not merged;
nor is a pair whose earlier entry upstream already has (PairMerger._changes_nothing): it cannot conflict;
nor one whose later entry upstream has: composing never merges it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change, Git, MergeResult
from carrytool.gitlayer.later import Later
from carrytool.manifest import paths
from carrytool.manifest.model import Manifest
from carrytool.pipeline.scopes import is_python
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.overlap_pairs import PairMerger

# strongest first: the order of `kinds`, and `kind` is the first of them
KINDS = ("conflict", "identical-hunk", "same-scope", "same-file")
# identical hunks the JSON lists per pair, the first in the earlier entry's diff order; beyond them it gives
# `identical_hunks_total`. Two PRs built on one branch share all its hunks: 60 polars PRs, a dozen of them
# on one 350-file branch, named 99,857 identical hunks, 7.8 MB of a 19 MB report that took a warm explain a
# second to write, and no reviewer reads the 1,549th of a pair
IDENTICAL_SHOWN = 50
# While explain parses in a thread of its own, the thread that composes waits at most this long for the
# interpreter after each of its many answers from git (cold explain of 60 mypy PRs, git 2.39: 3.02 s wall
# without the thread, 2.86 s with it and Python's default 5 ms, 2.50 s with 1 ms)
SWITCH_INTERVAL = 0.001


@dataclass
class Overlap:
    """Two entries that change at least one file in common."""

    entries: tuple[str, str]
    files: list[str]
    kinds: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    conflict_files: list[str] = field(default_factory=list)
    # {"file", "lines"} in the first's head: the first IDENTICAL_SHOWN in its diff order, of IDENTICAL_TOTAL
    identical: list[dict[str, Any]] = field(default_factory=list)
    identical_total: int = 0
    merged: bool = True        # False: both conflict with upstream alone, so no pair merge could decide
    order: tuple[str, str] = ("", "")            # which entry was applied first in the pair merge
    merge: tuple[str, str] | None = None         # the (ours, theirs) commits of the pair merge
    provided_by: str | None = None               # one of the pair is a union that provides the other here
    structurally: bool = False   # the conflict resolves by the structured rule (policy structured_merge)
    stacked: bool = False        # the later is built on the earlier's head (a stack: no union's to fold)
    held: bool = False           # the earlier is built on the later's head: it carries the later (h265: no union)
    shared_commits: int = 0      # commits beyond upstream both heads hold (built on one branch, or stacked)
    applied_stacked: bool = False   # ... and sync applied its own commits onto it (policy.stacked: own-commits)
    # entry -> the paths of its own diff that FILES stand for, where a file is one its change only lands on
    # (upstream moved its file): what a union's `supersedes` paths name. Not in the JSON
    own: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def own_paths(self, entry_id: str, files: Sequence[str]) -> list[str]:
        """FILES as ENTRY_ID's own diff names them (`own`)."""
        return self.own.get(entry_id) or list(files)

    @property
    def kind(self) -> str:
        return self.kinds[0]

    def involves(self, entry_id: str) -> bool:
        return entry_id in self.entries

    def other(self, entry_id: str) -> str:
        return self.entries[1] if self.entries[0] == entry_id else self.entries[0]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"entries": list(self.entries), "kind": self.kind, "kinds": list(self.kinds),
                                "files": list(self.files), "scopes": list(self.scopes)}
        if self.conflict_files:
            data["conflict_files"] = list(self.conflict_files)
        if self.identical:
            data["identical_hunks"] = list(self.identical[:IDENTICAL_SHOWN])
            total = max(self.identical_total, len(self.identical))
            if total > IDENTICAL_SHOWN:
                data["identical_hunks_total"] = total
        if not self.merged:
            data["merged"] = False
        if self.provided_by:
            data["provided_by"] = self.provided_by
        if self.structurally:
            data["resolved"] = "structurally"
        if self.stacked:
            data["stacked"] = True
        if self.held:
            data["held"] = True
        if self.shared_commits:
            data["shared_commits"] = self.shared_commits
        if self.applied_stacked:
            data["resolved"] = "stacked"
        return data


@dataclass
class OverlapMap:
    overlaps: list[Overlap]
    upstream_conflicts: dict[str, list[str]]      # entry -> paths where it alone conflicts with upstream
    pairs_merged: int = 0
    alone: dict[str, str] = field(default_factory=dict)   # entry -> its change alone on upstream (a commit)

    def of(self, entry_id: str) -> list[Overlap]:
        return [o for o in self.overlaps if o.involves(entry_id)]


def map_overlaps(git: Git, manifest: Manifest, upstream: str, evidence: Sequence[EntryFacts],
                 sources: Sources) -> OverlapMap:
    """Every pair of entries (in manifest order) that shares a file, with the kinds of overlap it has."""
    return start_overlaps(git, manifest, upstream, evidence).finish(sources)


def start_overlaps(git: Git, manifest: Manifest, upstream: str, evidence: Sequence[EntryFacts],
                   sources: Sources | None = None, hunks: Callable[[], None] | None = None) -> StartedOverlaps:
    """map_overlaps in two halves: this one merges every entry alone onto upstream and hands the pair
    merges to a merge-tree process of their own, which merges them while the caller goes on (explain
    composes meanwhile); `finish` collects them and classifies. Only the EVIDENCE's heads, bases and
    changes are read here (their planned steps may be linked later, before `finish`).

    With SOURCES (and HUNKS, evidence.hunks_later), the parsing starts first, in a thread (`_HeadStart`),
    while git merges the entries alone: the hunks, and the scopes of the files two entries' diffs share,
    which are all the pairs ask for (`compare_later` goes on from there)."""
    order = [f for f in evidence if f.step is not None and f.head]
    ahead = None
    try:
        if sources is not None and StartedOverlaps.concurrently and StartedOverlaps.parse_ahead:
            ahead = _HeadStart(git, order, sources, hunks)
        merger = PairMerger(git, manifest, upstream)
        alone = merger.alone(order)
        merger.read_changed(order)
        lands = [merger.lands(f) for f in order]
        pairs = _sharing_pairs(lands)
        collect = merger.start_pairs([(order[i], order[j]) for i, j in pairs])
    except BaseException:
        if ahead is not None:      # its thread stops (soon: it parses no further file) before the error goes on
            ahead.stop(soon=True)
        raise
    started = StartedOverlaps(manifest, merger, order, pairs, alone, collect, lands)
    started._ahead, started._hunks = ahead, hunks if ahead is None else None
    return started


class _HeadStart:
    """The parsing that needs no pair (`start_overlaps`), in a thread of its own started before the merges
    alone, whose answers the pairs need: the main thread waits for git then, and Python's other core is
    free. It sets the entries' hunks (HUNKS), reads the blobs it parses through a `cat-file` of its own
    (Sources.preload_later), and asks the scopes of each file two entries' diffs share, in the order `compare`
    asks them (`_scopes_ahead`): the same scopes, asked of the same memos, so `compare` finds them all (the
    files two entries' diffs change are the ones a pair shares: `StartedOverlaps._shared_paths`); never one
    that `compare` does not ask. Meanwhile the thread that merges waits at most SWITCH_INTERVAL for the
    interpreter after each answer from git."""

    def __init__(self, git: Git, order: list[EntryFacts], sources: Sources, hunks: Callable[[], None] | None) -> None:
        self.shared = shared = _files_shared(order)
        self.halt = threading.Event()          # set: the thread parses no further file (an error goes on)
        fill = sources.preload_later()
        self.interval = sys.getswitchinterval()
        self.job: Later[None] | None = None
        early: Later[None] | None = None

        def run() -> None:             # what it raises, compare_later's thread raises
            if hunks is not None:
                hunks()
            assert early is not None
            early.result()
            fill(sorted({oid for k, paths in shared.items() for path in paths for oid in order[k].blobs_in(path)}))
            _scopes_ahead(order, shared, sources, self.halt)

        sys.setswitchinterval(min(self.interval, SWITCH_INTERVAL))
        try:
            early = Later(lambda: fill(_changed_blobs(order, shared)), name="carrytool-blobs")
            git.join_at_close(early.thread)
            self.job = Later(run, name="carrytool-ahead")
            git.join_at_close(self.job.thread)     # its cat-file reads the scratch: close waits for it
        except BaseException:
            self.stop(soon=True)
            if early is not None:
                early.join()
            raise

    def stop(self, *, soon: bool = False) -> None:
        """Wait for the thread (what it raised is not raised: an error of the caller's goes on); SOON: it
        parses no further file first. The switch interval is back to what it was."""
        try:
            if soon:
                self.halt.set()
            if self.job is not None:
                self.job.join()
        finally:
            sys.setswitchinterval(self.interval)


def _files_shared(order: Sequence[EntryFacts]) -> dict[int, set[str]]:
    """Entry (its index in ORDER) -> the paths its diff changes that another entry's diff changes too: every
    such pair shares them whatever its merges say (the pairs are those whose changes land on a common path,
    and a change lands on its own paths)."""
    by_path: dict[str, list[int]] = {}
    for k, item in enumerate(order):
        for path in item.files:
            by_path.setdefault(path, []).append(k)
    shared: dict[int, set[str]] = {}
    for path, entries in by_path.items():
        if len(entries) > 1:
            for k in entries:
                shared.setdefault(k, set()).add(path)
    return shared


def _scopes_ahead(order: Sequence[EntryFacts], shared: dict[int, set[str]], sources: Sources,
                  halt: threading.Event | None = None) -> None:
    """The scopes `compare` asks of the files in SHARED, asked now: for a path, each entry's but the last
    (each is the first of a pair with the last, and `_compare` asks the first's), and the last entry's when
    an entry before it has scopes there (`_compare` asks the second's only then). HALT, once set: no further
    path (what is left, `compare` asks)."""
    by_path: dict[str, list[int]] = {}
    for k in sorted(shared):
        for path in sorted(shared[k]):
            by_path.setdefault(path, []).append(k)
    for path, entries in by_path.items():
        if halt is not None and halt.is_set():
            return
        found = False
        for k in entries[:-1]:
            found = bool(order[k].scopes_in(path, sources)) or found
        if found:
            order[entries[-1]].scopes_in(path, sources)


def _changed_blobs(order: Sequence[EntryFacts], shared: dict[int, set[str]]) -> list[str]:
    """Every blob `StartedOverlaps._shared_blobs` can name in SHARED (entry -> paths), from the changes alone
    (before the hunks are known): both sides of each change of a Python file at (or from) a shared path, and
    of the first change at its path (a hunk's scopes are read in that one's blobs: EntryFacts.change_of)."""
    out: set[str] = set()
    for k, files in shared.items():
        first: dict[str, Change] = {}
        for change in order[k].changes:
            first.setdefault(change.path, change)
        for change in order[k].changes:
            if (change.path in files or change.old_path in files) and is_python(change.path):
                for side in (change, first[change.path]):
                    out.update(oid for oid in (side.old_oid, side.new_oid) if oid and oid != ZERO)
    return sorted(out)


@dataclass
class StartedOverlaps:
    manifest: Manifest
    merger: PairMerger
    order: list[EntryFacts]
    pairs: list[tuple[int, int]]
    alone: list[MergeResult]
    collect: Callable[[], list[tuple[list[str] | None, Any]]]
    lands: list[frozenset[str]] = field(default_factory=list)     # per entry of ORDER: PairMerger.lands
    own: dict[tuple[int, int], dict[str, list[str]]] = field(default_factory=dict)   # pair -> Overlap.own
    compared: list[tuple[list[str], tuple[list[dict[str, Any]], int], list[str]]] | None = None
    _comparing: tuple[Later[None], float] | None = field(default=None, init=False, repr=False)
    _ahead: _HeadStart | None = field(default=None, init=False, repr=False)
    _hunks: Callable[[], None] | None = field(default=None, init=False, repr=False)   # start_overlaps' HUNKS, not run

    concurrently = True      # compare_later parses in a thread (tests compare both)
    parse_ahead = True       # the parsing starts before the merges alone (_HeadStart; tests compare both)

    def compare(self, sources: Sources) -> None:
        """What needs no merge (files, identical hunks, scopes: the parsing), while the pair merges run on
        another core; needs the evidence's hunks. `finish` does it when this was not called."""
        order, lands = self.order, self.lands
        ids: dict[tuple, int] = {}          # every hunk key, as a number: one hash per hunk, not one per pair
        keys = [_hunk_keys(f, ids) for f in order]
        self.compared = [_compare(order[i], order[j], keys[i], keys[j], sources, lands[i] & lands[j])
                         for i, j in self.pairs]

    def _own_paths(self) -> None:
        """Overlap.own of each pair that shares a path one of its diffs does not name (upstream moved the file
        since): asked in the main thread, as it reads upstream's tree through the run's git (`finish`)."""
        order = self.order
        own = [set(f.files) for f in order]          # (each `files` is a new list: asked once per entry)
        for (i, j), (files, _identical, _scopes) in zip(self.pairs, self.compared or ()):
            if any(p not in own[i] or p not in own[j] for p in files):
                self.own[(i, j)] = {f.id: self.merger.own_paths(f, files) for f in (order[i], order[j])}

    def compare_later(self, sources: Sources, hunks: Callable[[], None] | None = None) -> None:
        """`compare` in a thread of its own, while the caller composes: the composing thread mostly waits
        for git, the parsing is Python's. The head start's thread, when start_overlaps began one, is waited
        for first (it set the hunks and asked the scopes of the files diffs share); else HUNKS
        (evidence.hunks_later; or start_overlaps'), when given, first sets the entries' hunks from a patch process
        already running. Every blob it may parse is then read, in one `cat-file`
        process of the thread's own (Sources.preload_later, prepared here), so the thread never speaks to the
        run's long-lived git processes; `finish` waits for it. In the caller's thread when CONCURRENTLY is off."""
        ahead, hunks = self._ahead, hunks or self._hunks
        if not self.concurrently or not self.pairs:
            self._ahead = self._hunks = None
            if ahead is not None:
                ahead.stop()
                assert ahead.job is not None
                ahead.job.result()          # the hunks are set (and what it raised is raised)
            elif hunks is not None:
                hunks()
            self.compare(sources)
            return
        if ahead is not None:              # it set the hunks, read their blobs and asked the scopes of every file
            interval, job_ahead = ahead.interval, ahead.job         # a pair shares (`_HeadStart`)
            assert job_ahead is not None

            def run() -> None:             # what it raises, finish raises
                job_ahead.result()
                self.compare(sources)
        else:
            preload = sources.preload_later()
            interval = sys.getswitchinterval()

            def run() -> None:             # what it raises, finish raises
                if hunks is not None:
                    hunks()
                early.result()
                preload(self._shared_blobs())
                self.compare(sources)

            sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
            try:
                # the blobs the hunks will name, from the changes (a few more: a side without lines): read while git
                # writes the patches; any other the hunks name is read after them, by the same thread's own process
                early = Later(lambda: preload(self._changed_blobs()), name="carrytool-blobs")
                self.merger.git.join_at_close(early.thread)
            except BaseException:
                sys.setswitchinterval(interval)
                raise
        try:
            job = Later(run, name="carrytool-compare")
        except BaseException:
            if ahead is None:
                sys.setswitchinterval(interval)
            raise                          # (a head start's: `wait` stops it)
        self._comparing, self._ahead, self._hunks = (job, interval), None, None
        self.merger.git.join_at_close(job.thread)      # its cat-file reads the scratch: close waits for it

    def _shared_paths(self) -> dict[int, set[str]]:
        """Entry (its index in ORDER) -> the files it shares with another: `_files_shared`, which every pair
        shares (a pair's changes land on a common path, and a change lands on its own paths)."""
        return _files_shared(self.order)

    def _shared_blobs(self) -> list[str]:
        """The blobs `compare` may parse: each entry's blobs of the files it shares with another, asked once
        per entry and file however many pairs share it (needs the hunks)."""
        return sorted({oid for k, paths in self._shared_paths().items() for path in paths
                       for oid in self.order[k].blobs_in(path)})

    def _changed_blobs(self) -> list[str]:
        """`_changed_blobs` of the files each entry shares with another (asked once per pair)."""
        return _changed_blobs(self.order, self._shared_paths())

    def wait(self) -> None:
        """Wait for compare_later's thread (or the head start's, when compare_later was not asked), and raise
        what it raised (nothing when there is none)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.stop()
            assert ahead.job is not None
            ahead.job.result()
        if self._comparing is None:
            return
        job, interval = self._comparing
        try:
            job.join()                    # interrupted: still known here, and close waits for it
        finally:
            sys.setswitchinterval(interval)
        self._comparing = None
        job.result()

    def finish(self, sources: Sources) -> OverlapMap:
        order, merger = self.order, self.merger
        self.wait()
        if self.compared is None:
            self.compare(sources)
        compared = self.compared
        assert compared is not None
        self._own_paths()
        conflicts = self.collect()
        merger.decisions.save()
        overlaps = []
        for (i, j), (conflict, how), found in zip(self.pairs, conflicts, compared):
            overlap = _classify(order[i], order[j], conflict, found)
            overlap.own = self.own.get((i, j), {})
            if how is not None:
                overlap.order, overlap.merge = how
                overlap.structurally = bool(conflict) and tuple(how[0]) in merger.structurally
            overlaps.append(overlap)
        _mark_provided(self.manifest, overlaps)
        return OverlapMap(overlaps, self.upstream_conflicts(), len(self.pairs), dict(merger.commits))

    def upstream_conflicts(self) -> dict[str, list[str]]:
        """Entry -> the paths where it alone conflicts with upstream: known from the merges alone, before
        the pair merges are (explain reads what upstream has of those entries while git merges the pairs)."""
        return {f.id: list(r.conflicted_files) for f, r in zip(self.order, self.alone) if not r.clean}


def _mark_provided(manifest: Manifest, overlaps: Sequence[Overlap]) -> None:
    """A union overlapping a PR it supersedes (for every shared file) is expected, not news: say so."""
    for overlap in overlaps:
        for union_id, other in (overlap.entries, overlap.entries[::-1]):
            union = manifest.entry(union_id)
            if union is None or union.kind != "carry" or not other.startswith("pr/"):
                continue
            number = int(other[3:])
            for sup in union.supersedes:
                if sup.pr == number and (not sup.paths or all(paths.matches_any(sup.paths, f)
                                                               for f in overlap.own_paths(other, overlap.files))):
                    overlap.provided_by = union_id


def _sharing_pairs(lands: Sequence[Collection[str]]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of entries whose changes land on a common path (LANDS: per entry, the paths
    `PairMerger.lands`); an index file -> entries, never n^2."""
    by_file: dict[str, list[int]] = {}
    for index, landed in enumerate(lands):
        for path in landed:
            by_file.setdefault(path, []).append(index)
    pairs: set[tuple[int, int]] = set()
    for indexes in by_file.values():
        for a in range(len(indexes)):
            for b in range(a + 1, len(indexes)):
                pairs.add((indexes[a], indexes[b]))
    return sorted(pairs)


def _hunk_keys(item: EntryFacts, ids: dict[tuple, int]) -> dict[int, list[int]]:
    """Hunk key (as its number in IDS, which numbers each new key) -> its indexes; hunks of only blank
    lines are not evidence of anything."""
    out: dict[int, list[int]] = {}
    for index, hunk in enumerate(item.hunks):
        if hunk.kind == "text" and not any(line.strip() for line in hunk.removed + hunk.added):
            continue
        out.setdefault(ids.setdefault(hunk.key, len(ids)), []).append(index)
    return out


def _compare(a: EntryFacts, b: EntryFacts, keys_a: dict, keys_b: dict, sources: Sources,
             landed: Collection[str] = ()) -> tuple[list[str], tuple[list[dict[str, Any]], int], list[str]]:
    """What two entries share whatever their merge says: files (those both diffs change; else the paths
    where both changes land on upstream, LANDED), identical hunks (the first IDENTICAL_SHOWN, and how
    many), scopes."""
    theirs = set(b.files)
    shared = [p for p in a.files if p in theirs]
    shared += sorted(set(landed) - set(shared))
    # KEYS_A is in the order of each key's first hunk (_hunk_keys): the first IDENTICAL_SHOWN in A's diff
    # order are the first common keys met, and only they are described (two 350-file PRs on one branch
    # share 1,500 hunks; the report gives the rest as a count)
    common = keys_a.keys() & keys_b.keys()
    identical = []
    if common:
        for key, indexes in keys_a.items():
            if key in common:
                hunk = a.hunks[indexes[0]]
                identical.append({"file": hunk.path, "lines": list(hunk.span)})
                if len(identical) == IDENTICAL_SHOWN:
                    break
    scopes: set[str] = set()
    for path in shared:
        mine = a.scopes_in(path, sources)
        if mine:         # B's scopes only matter beside A's: B's versions of PATH are not parsed otherwise
            scopes |= mine & b.scopes_in(path, sources)
    return shared, (identical, len(common)), sorted(scopes)


def _classify(a: EntryFacts, b: EntryFacts, conflict: list[str] | None,
              compared: tuple[list[str], tuple[list[dict[str, Any]], int], list[str]]) -> Overlap:
    shared, (identical, total), scopes = compared
    overlap = Overlap((a.id, b.id), shared, merged=conflict is not None)
    if conflict:
        overlap.kinds.append("conflict")
        overlap.conflict_files = conflict
    overlap.identical, overlap.identical_total = identical, total
    if overlap.identical:
        overlap.kinds.append("identical-hunk")
    overlap.scopes = scopes
    if scopes:
        overlap.kinds.append("same-scope")
    overlap.kinds.append("same-file")
    return overlap
