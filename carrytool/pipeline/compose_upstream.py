"""Every entry merged onto upstream first, and what those merges tell the chain without a chained merge:
the entries upstream has, merges written directly into upstream's tree, each entry's delta on upstream,
trees composed by writing it, merges of shared files only (a mixin of compose.Composer)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from carrytool.gitlayer.git import PINNED_CONFIG, Change, Git, MergeResult
from carrytool.pipeline.compose_records import _KEEP, Composition, _Touched
from carrytool.pipeline.plan import PENDING, Step

# whether merges detect directory renames (see Composer._onto_upstream_directly)
_DIRECTORY_RENAMES = "merge.directoryRenames=false" not in PINNED_CONFIG

UPSTREAM_HAS_IT = "merging it onto upstream changes nothing: upstream already has it"


class _Direct:
    """A clean merge onto upstream made without merge-tree (see `Composer._onto_upstream_directly`): its
    tree is written only when something asks for it (most entries need only its delta)."""

    clean = True
    stages: tuple = ()
    messages: tuple = ()
    conflicted_paths: tuple[str, ...] = ()
    conflicted_files: tuple[str, ...] = ()

    def __init__(self, git: Git, upstream_tree: str, edits: dict[str, tuple[str, str] | None],
                 own: Sequence[Change]) -> None:
        self._git, self._upstream_tree, self._edits = git, upstream_tree, edits
        self._tree: str | None = None
        self.delta = None if any(c.status in ("R", "C") for c in own) else tuple(own)

    @property
    def tree(self) -> str:
        if self._tree is None:
            self._tree = self._git.edit_tree(self._upstream_tree, self._edits)
        return self._tree


def merge_weights(git: Git, upstream_tree: str, items: Sequence[tuple[str | None, Sequence[Change]]]) -> list[int]:
    """What merging each (base, own changes) onto upstream costs, roughly: one plus the files it and
    upstream both changed since its base, each a content merge (one batched raw diff of each base to
    upstream, which Git keeps). It only decides how two merge processes share a batch (Git.merge_trees)."""
    bases = list(dict.fromkeys(base for base, _ in items if base))
    since = {base: {p for c in changes for p in c.paths} for base, changes in
             zip(bases, git.diff_trees([(base, upstream_tree) for base in bases], renames=False))}
    return [1 + len({p for c in changes for p in c.paths} & since.get(base or "", set())) for base, changes in items]


class UpstreamSince:
    """What upstream changed since a base (its diff from the base, no renames): the paths, with their
    directories (TOUCHED), the paths it deleted and whether it added any (`direct_edits`)."""

    def __init__(self, touched: _Touched, deleted: set[str], added: bool) -> None:
        self.touched, self.deleted, self.added = touched, deleted, added


def upstream_since(changes: Sequence[Change]) -> UpstreamSince:
    """UpstreamSince from upstream's CHANGES since a base (a diff without renames)."""
    mark = _Touched()
    mark.add(p for c in changes for p in c.paths)
    return UpstreamSince(mark, {c.path for c in changes if c.status == "D"}, any(c.status == "A" for c in changes))


def direct_edits(own: Sequence[Change], since: UpstreamSince) -> dict[str, tuple[str, str] | None] | None:
    """The edits that write OWN, an entry's changes from its base, into upstream's tree as the merge of the
    entry onto upstream from that base gives it, when upstream left OWN's paths alone since the base (SINCE):
    path -> (mode, oid), None: deleted. None when the merge may give another tree (see
    `_OntoUpstream._onto_upstream_directly`, which says why this is exact)."""
    if (_DIRECTORY_RENAMES and ((since.deleted and any(c.status in ("A", "R", "C") for c in own)) or
                                (since.added and any(c.status in ("D", "R") for c in own)))) or \
            since.touched.overlaps({p for c in own for p in c.paths}):
        return None
    edits: dict[str, tuple[str, str] | None] = {}
    for c in own:
        if c.status == "R":
            edits[c.old_path] = None  # type: ignore[index]
        edits[c.path] = None if c.status == "D" else (c.new_mode, c.new_oid)
    return edits


class _OntoUpstream:
    def _mark_merged_upstream(self, pending: Sequence[Step]) -> dict[int, MergeResult]:
        """One merge-tree process merges every entry onto upstream: those that add nothing are upstream."""
        for step in pending:
            if step.head and step.head == step.base:
                step.skip("merged-upstream", "its head is already in upstream's history")
            elif step.head and not step.all_changes:
                step.redundant_with = []
                step.skip("redundant", "its diff is empty: there is nothing to apply")
        candidates = [s for s in pending if s.head and s.status == PENDING]
        results = self._onto_upstream_directly(candidates) if self.fast_path else {}
        merged = [s for s in candidates if id(s) not in results]
        pairs = [self._pair(s, self.upstream, self.upstream_tree) for s in merged]
        weights = merge_weights(self.git, self.upstream_tree, [(s.base, s.all_changes) for s in merged])
        results.update((id(step), result)
                       for step, result in zip(merged, self.git.merge_trees(pairs, weights=weights)))
        for step in candidates:
            result = results[id(step)]
            # an entry merged directly changes paths upstream has at their base version: never a no-op
            if not isinstance(result, _Direct) and result.clean and result.tree == self.upstream_tree:
                self._upstream_has.add(id(step))     # settled in order: an earlier entry may have undone it
        return results

    def _settle_upstream_has(self, step: Step, tip: str, tip_tree: str, comp: Composition,
                             touched: _Touched, merge: bool = False) -> tuple[str, str]:
        """An entry whose merge onto upstream changes nothing is merged upstream, unless an earlier entry
        touched its files (or it renames, or MERGE: see `_renames_may_differ`): then the chained merge
        decides, as in the plain chain. An earlier entry built on an older base may have undone upstream's
        change, which this entry puts back."""
        paths = {p for c in step.changes for p in c.paths}
        if merge or touched.overlaps(paths) or any(c.status == "R" for c in step.changes):
            result = self._chained(step, tip_tree, lambda: self._merge_onto(step, tip, tip_tree))
            if result.clean and result.tree != tip_tree:
                return self._commit(step, result.tree, tip, comp)
        step.skip("merged-upstream", UPSTREAM_HAS_IT if not step.reverted else
                  f"{step.reverted}, but has its change: merging it onto upstream changes nothing")
        return tip, tip_tree

    def _onto_upstream_directly(self, steps: Sequence[Step]) -> dict[int, MergeResult]:
        """The merges onto upstream that need no merge: an entry whose paths upstream left alone since the
        entry's base merges onto upstream as its own change written into upstream's tree (one batched
        diff-tree of each base to upstream, no merge).

        Exact: with no path changed on both sides (nor a file on one side where the other has a directory),
        merge-tree takes each path from the side that changed it; a rename pairs a path a side deleted with
        one the same side added, so it meets the other side only on a shared path. Directory renames would
        move paths the other side added into a directory one side renamed away: they are off
        (PINNED_CONFIG), and were they ever on, an entry that adds (or renames) while upstream deleted
        something, or that deletes (or renames) while upstream added something, would be merged anyway.
        tests/pipeline/test_compose_paths.py compares with merge-tree."""
        eligible = [s for s in steps if s.base and not s.filtered and s.all_changes and id(s) not in self._reencodes]
        # every base's diff (not only the eligible ones'): merge_weights reads the others' from Git's memory
        bases = list(dict.fromkeys(s.base for s in steps if s.base))
        since = dict(zip(bases, self.git.diff_trees([(base, self.upstream_tree) for base in bases],  # type: ignore[misc]
                                                     renames=False)))
        touched: dict[str, UpstreamSince] = {}
        for base, changes in since.items():
            touched[base] = upstream_since(changes)
            self._upstream_removed[base] = touched[base].deleted
        out: dict[int, MergeResult] = {}
        for step in eligible:
            own = step.all_changes
            edits = direct_edits(own, touched[step.base])  # type: ignore[index]
            if edits is not None:
                out[id(step)] = _Direct(self.git, self.upstream_tree, edits, own)  # type: ignore[assignment]
        return out

    def _reencoding(self, pending: Sequence[Step]) -> Callable[[], set[int]]:
        """The entries whose head holds a directory encoded otherwise than their base, with the same files
        (Git.reencoded_dirs: a tree written before git wrote canonical modes, rewritten by the PR's git).
        Their diff does not show it, but a merge takes the head's tree object of such a directory where
        the other side left it as the base has it: no shortcut that edits the entry's diff into a tree
        gives that tree, so their merges are made (an adversarial review's case). Asked now, answered by
        the function returned (git reads the trees while the caller goes on)."""
        checked = [s for s in pending if s.head and s.base and s.head != s.base and s.all_changes]
        found = self.git.reencoded_dirs([(s.base, self._filtered_head(s)) for s in checked])  # type: ignore[misc]
        return lambda: {id(step) for step, dirs in zip(checked, found()) if dirs}

    def _may_have_moved(self, step: Step, removed: set[str]) -> bool:
        """Whether the chained merge of STEP may have changed paths beyond its own and its upstream delta:
        when the result so far may lack a path STEP changes from its base (upstream deleted it since that
        base, or an applied entry took it away: REMOVED). git may then see that path renamed on our side
        and move STEP's change to where the rename went. A path the result so far has is no rename's
        source on our side (renames pair deleted paths with added ones; directory renames are off), and a
        rename on STEP's side, or a path it adds, changes only STEP's own paths. Resolved `theirs`: yes
        (a file moved aside for a directory, then dropped, goes with no deletion in STEP's diff). Unknown
        base: yes."""
        gone = self._upstream_removed.get(step.base or "")
        if gone is None or step.resolution:
            return True
        sources = _sources(step)
        return not (sources.isdisjoint(gone) and sources.isdisjoint(removed))

    def _renames_may_differ(self, step: Step, tip_tree: str) -> bool:
        """Whether the chained merge of STEP onto TIP_TREE may pair a path STEP changes with another through
        a rename on our side otherwise than its merge onto upstream does: the path is gone from upstream
        since STEP's base (a rename's source on our side in both merges), and applied entries changed the
        result so far. git pairs sources with targets by content, base -> ours: an entry that adds a
        file, changes one upstream added, or deletes another source can change the pair (adversarial
        reviews found each). Then the shortcuts that take the merge onto upstream at its word (its delta,
        its conflict, its no-op) do not hold, and the chained merge decides. A path STEP changes that upstream
        still has is no source there; one an entry took away is that entry's, so touched: no shortcut takes
        it. Unknown base: yes."""
        gone = self._upstream_removed.get(step.base or "")
        if gone is None:
            return True
        return tip_tree != self.upstream_tree and not _sources(step).isdisjoint(gone)

    def _conflicts_for_good(self, step: Step, onto: MergeResult | None) -> bool:
        """Whether STEP conflicts with upstream alone and its policy skips or fails a conflict (no
        `theirs`, no structured merge): then it almost surely conflicts in the chain too."""
        return onto is not None and not onto.clean and self.manifest.on_conflict(step.entry) != "theirs" \
            and not self.manifest.structured_paths(step.entry)

    def _deltas(self, todo: Sequence[Step], onto: dict[int, MergeResult]) -> dict[int, list[Change]]:
        """What each cleanly merging entry changes on upstream (one batched diff-tree). An entry merged
        directly (`_Direct`) that renames nothing changes on upstream exactly what its own diff changes:
        the same paths, from the same (base) versions, with no rename to find."""
        out = {}
        clean = []
        for s in todo:
            result = onto.get(id(s))
            if isinstance(result, _Direct) and result.delta is not None:
                out[id(s)] = list(result.delta)
            elif result is not None and result.clean:
                clean.append(s)
        diffs = self.git.diff_trees([(self.upstream_tree, onto[id(s)].tree) for s in clean])
        out.update((id(s), d) for s, d in zip(clean, diffs))
        return out

    def _fast_tree(self, step: Step, onto: MergeResult | None, delta: list[Change] | None, touched: _Touched,
                   tip_tree: str) -> str | None:
        """The composed tree without a merge, when nothing the entry touches was touched before."""
        if onto is None or not onto.clean or delta is None:
            return None
        if any(c.status == "R" for c in step.changes) or any(c.status == "R" for c in delta):
            return None
        paths = {p for c in step.changes for p in c.paths} | {p for c in delta for p in c.paths}
        if touched.overlaps(paths):
            return None
        edits = {c.path: None if c.status == "D" else (c.new_mode, c.new_oid) for c in delta}
        return self.git.edit_tree(tip_tree, edits)

    def _partial(self, step: Step, onto: MergeResult | None, delta: list[Change] | None,
                 touched: _Touched) -> dict[str, tuple[str, str] | None] | None:
        """For an entry that merges cleanly onto upstream and shares only some of its files with earlier
        entries: the merged upstream versions of the files no earlier entry touched (path -> (mode, oid),
        None: deleted). The chained merge then needs only the shared files (see `_merge_onto`).

        Exact when no rename can pair a file of one group with one of the other: the entry deletes and
        renames nothing, and what merging it onto upstream changes are its own paths (upstream renamed
        none of them). Otherwise None: the whole chained merge."""
        if onto is None or not onto.clean or delta is None or step.filtered or not step.base:
            return None
        if any(c.status in ("R", "D") for c in step.changes) or any(c.status == "R" for c in delta):
            return None
        own = {c.path for c in step.changes}
        if not {c.path for c in delta} <= own:
            return None
        rest = {path for path in own if not touched.overlaps({path})}
        if not rest or rest == own:
            return None
        merged = {c.path: None if c.status == "D" else (c.new_mode, c.new_oid) for c in delta}
        return {path: merged.get(path, _KEEP) for path in rest}


def _sources(step: Step) -> set[str]:
    """The paths STEP changes from its base (a rename's old path): those a rename on our side can take."""
    return {c.old_path or c.path for c in step.changes if c.status != "A"}
