"""Execute a plan in memory: each entry's net change 3-way merged onto the result so far, one commit each.

No work tree, no index, no branch is touched: merges are `git merge-tree --write-tree`, commits are
written as objects with a fixed identity and dates derived from the inputs.

Merge bases: git 2.39's merge-tree takes no `--merge-base`, so history is shaped to make git find the
base we mean. The "ours" side of every merge is a stand-in commit whose tree is the result so far and
whose only parent is the entry's base (a PR's merge base with upstream, a carried commit's parent, a
patch's preimage): that base is then the merge base git finds, after a walk of only the entry's own
commits, not of upstream's history nor of the growing chain of composed commits. Where git takes an
explicit base on `merge-tree --stdin`, clean merges name it and need no stand-in.

Processes: every entry is first merged onto upstream in one batched merge-tree (or, when upstream left its
paths alone since its base, by writing its change into upstream's tree); entries that touch no
path an earlier entry touched compose by writing their upstream delta into the tree (no merge); the
rest are chained merges, all answered by one long-lived merge-tree process (gitlayer.mergepipe).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from carrytool.gitlayer.git import (
    PINNED_CONFIG,
    REGULAR_MODES,
    AsideMerges,
    Change,
    ConflictStage,
    Git,
    MergeResult,
    Signature,
)
from carrytool.manifest.model import Manifest
from carrytool.pipeline.blame import (
    conflicted_at,
    meeting_merges,
    meets_conflict_many,
    regions_differ,
    takes_file_away,
)
from carrytool.pipeline.keptmerges import KeptMerges
from carrytool.pipeline.plan import (
    APPLIED,
    CONFLICT,
    PENDING,
    Step,
    redundant_with,
    structured_refusal,
)
from carrytool.pipeline.reduce import reduced_head

Progress = Callable[[str, int, int], None]
_KEEP = ("keep", "upstream's version")     # a path whose merged upstream version is upstream's own


# whether merges detect directory renames (see Composer._onto_upstream_directly)
_DIRECTORY_RENAMES = "merge.directoryRenames=false" not in PINNED_CONFIG


@dataclass
class Composition:
    upstream: str
    result: str                     # the composed tip (== upstream when nothing applied)
    steps: list[Step]
    failed_conflicts: list[Step] = field(default_factory=list)   # conflicts under on_conflict: fail
    trees: dict[str, str] = field(default_factory=dict)          # composed commit -> tree

    @property
    def applied(self) -> list[Step]:
        return [s for s in self.steps if s.status == APPLIED]


class _Touched:
    """Paths applied entries changed, with their directories: to tell whether two changes can meet."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.dirs: set[str] = set()

    def add(self, paths) -> None:  # noqa: ANN001 - any iterable of paths
        for path in paths:
            self.files.add(path)
            parts = path.split("/")
            self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))

    def overlaps(self, paths: set[str]) -> bool:
        for path in paths:
            if path in self.files or path in self.dirs:
                return True
            parts = path.split("/")
            if any("/".join(parts[:i]) in self.files for i in range(1, len(parts))):
                return True
        return False


# content merges asked at once for naming the conflicts of the entries merged aside (_ask_meetings): the
# run keeps 256 content merges' answers (Git.merge_contents_many), each of a file's size
MEETINGS_AT_ONCE = 128
UPSTREAM_HAS_IT = "merging it onto upstream changes nothing: upstream already has it"


def _directories(changes: Iterable[Sequence[Change]]) -> list[str]:
    """Every directory above a path of CHANGES, parents first."""
    out: dict[str, None] = {}
    for group in changes:
        for change in group:
            for path in change.paths:
                parts = path.split("/")[:-1]
                for n in range(1, len(parts) + 1):
                    out["/".join(parts[:n])] = None
    return list(out)


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


class Misguessed(Exception):
    """An entry merged aside (Composer.aside) merged cleanly: what was composed after it is not the chain's."""


def _misguessed(step: Step) -> Misguessed:
    return Misguessed(f"{step.id} merged cleanly where its merge onto upstream conflicts")


class Composer:
    fast_path = True      # tests turn it off to check the fast path gives the chained merge's trees
    # called once every entry was merged onto upstream, with those that may still apply (sync starts
    # reading their patches for the landing checks there)
    merged_onto_upstream: Callable[[list[Step]], None] | None = None
    structured_off: frozenset[str] = frozenset()   # entries whose structured resolution a check rejected
    explicit_bases: bool | None = None   # None: where git takes them; tests set False to compare SHAs
    regions_from_merges = True   # blame reads upstream's conflict regions from the merge onto it (tests compare)
    kept: KeptMerges | None = None   # clean chained merges kept across runs (sync and explain set it)
    # merge the entries that conflict with upstream alone beside the chain (see compose); the caller
    # composes again without it when a guess fails (Misguessed): sync sets it
    aside: bool = False

    def __init__(self, git: Git, manifest: Manifest, upstream: str, progress: Progress | None = None) -> None:
        self.git = git
        self.manifest = manifest
        self.upstream = upstream
        self.progress = progress
        info = git.commit_info(upstream)
        self.upstream_tree: str = info["tree"]  # type: ignore[assignment]
        self.upstream_time: int = info["committer_time"]  # type: ignore[assignment]
        self._stand_ins: dict[tuple[str, tuple[str, ...]], str] = {}
        # an entry's conflicted merge onto upstream, resolved as the chain resolved it (_onto_tree):
        self._structured_onto: dict[tuple[int, tuple[str, ...]], str | None] = {}  # (id(step), paths) -> tree
        self._theirs_onto: dict[int, str] = {}                     # id(step) -> tree, in its favour (`theirs`)
        self._onto: dict[int, MergeResult] = {}
        self._upstream_has: set[int] = set()      # entries whose merge onto upstream changes nothing
        self._upstream_removed: dict[str, set[str]] = {}   # base -> the paths upstream deleted since
        self._reencodes: set[int] = set()         # entries whose head encodes a directory anew (`_reencoding`)

    # -- the whole run ------------------------------------------------------------------------------
    def compose(self, steps: list[Step]) -> Composition:
        """Settle every pending step (merged-upstream, redundant, conflict or applied) and build the chain.

        Every entry is first merged onto upstream in one batched merge-tree process. An entry whose
        paths no earlier applied entry touched (and that renames nothing) then composes by writing its
        upstream delta into the tree: the same tree a chained merge would give, without a process.
        Only entries that overlap earlier ones pay for a chained `merge-tree`, and those that change a
        path upstream deleted since their base once anything was applied (`_renames_may_differ`).

        With `aside`, an entry that conflicts with upstream alone and that no shortcut settles is guessed
        to conflict in the chain too (the tip then stays): its chained merge goes to a merge-tree of its
        own, on another core, while the entries after it compose on the same tip, and it is named once
        the loop is done (`_settle_aside`). A guess that fails (a clean answer: an earlier entry made the
        conflicting change its own) raises Misguessed before anything is kept.
        """
        pending = [s for s in steps if s.status == PENDING]
        if self.fast_path:     # the directories composing edits, read from upstream in one exchange
            reencoding = self._reencoding(pending)
            self.git.preread_trees(self.upstream_tree, _directories(s.changes for s in pending))
            self._reencodes = reencoding()
        onto = self._onto = self._mark_merged_upstream(pending)
        if self.merged_onto_upstream is not None:
            self.merged_onto_upstream([s for s in pending if s.status == PENDING and s.head and
                                       not self._conflicts_for_good(s, onto.get(id(s)))])
        comp = Composition(self.upstream, self.upstream, steps)
        todo = [s for s in steps if s.status == PENDING]
        deltas = self._deltas(todo, onto)
        touched = _Touched()
        removed: set[str] = set()   # paths applied entries deleted or renamed away (or may have moved)
        aside = self.git.merges_aside() if self.aside and self.fast_path else None
        guessed: list[tuple[Step, int, list[Step]]] = []   # merged aside: (step, ticket, applied before it)
        try:
            tip = self._compose_all(todo, onto, deltas, comp, touched, removed, aside, guessed)
            self._settle_aside(aside, guessed, comp, steps)
        finally:
            if aside is not None:
                aside.close()
        comp.result = tip
        return comp

    def _compose_all(self, todo: list[Step], onto: dict[int, MergeResult], deltas: dict[int, list[Change]],
                     comp: Composition, touched: _Touched, removed: set[str], aside: AsideMerges | None,
                     guessed: list[tuple[Step, int, list[Step]]]) -> str:
        """Settle TODO in order onto upstream (`compose`); the tip. Entries merged aside go to GUESSED."""
        tip, tip_tree = self.upstream, self.upstream_tree
        for n, step in enumerate(todo, 1):
            if self.progress:
                self.progress("compose", n, len(todo))
            if guessed and aside is not None and (wrong := aside.first_clean()) is not None:
                raise _misguessed(guessed[wrong][0])        # known now: the rest of this pass is not needed
            before = tip_tree
            fast = None
            # whether its merge onto upstream tells what the chained merge does with the paths it changes
            alone_tells = self.fast_path and id(step) not in self._reencodes and \
                not self._renames_may_differ(step, tip_tree)
            if alone_tells and id(step) not in self._upstream_has:
                fast = self._fast_tree(step, onto.get(id(step)), deltas.get(id(step)), touched, tip_tree)
            if id(step) in self._upstream_has:
                tip, tip_tree = self._settle_upstream_has(step, tip, tip_tree, comp, touched, merge=not alone_tells)
            elif fast is not None:
                tip, tip_tree = self._settle(step, fast, tip, tip_tree, comp)
                if step.status == APPLIED:   # its paths were upstream's in the tip: the diff is the delta
                    step.applied_changes = list(deltas[id(step)])
            else:
                known = self._known_conflict(step, onto.get(id(step)), touched) if alone_tells else None
                partial = self._partial(step, onto.get(id(step)), deltas.get(id(step)), touched) \
                    if alone_tells else None
                if aside is not None and known is None and partial is None and not self._may_stack(step) and \
                        self._conflicts_for_good(step, onto.get(id(step))) and self._kept_tree(step, tip_tree) is None:
                    # it conflicts with upstream alone under a policy that only names conflicts: it almost
                    # surely conflicts here too, and then the tip stays. Its chained merge goes to another
                    # merge-tree (another core) while the next entries compose on this tip; `_settle_aside`
                    # takes the answer (a clean one, a wrong guess, composes everything again without it)
                    ours, theirs, base = self._onto_sides(step, tip, tip_tree)
                    guessed.append((step, aside.send(ours, theirs, base=base), list(comp.applied)))
                else:
                    tip, tip_tree = self._apply(step, tip, tip_tree, comp, known, partial)
            if step.status == APPLIED:
                touched.add(p for c in step.changes for p in c.paths)
                touched.add(p for c in deltas.get(id(step), []) for p in c.paths)
                touched.add(step.resolved_paths)
                if fast is None and self._may_have_moved(step, removed):
                    # a chained merge wrote the tree, and the result so far may lack a path the entry
                    # changes: a rename on our side may have moved its change to a path beyond its own
                    moved = self.git.changed_paths(before, tip_tree)
                    touched.add(moved)
                    removed.update(moved)
                removed.update(c.old_path or c.path for c in (*step.changes, *deltas.get(id(step), []))
                               if c.status in ("D", "R"))
        return tip

    def _settle_aside(self, aside: AsideMerges | None, guessed: list[tuple[Step, int, list[Step]]],
                      comp: Composition, steps: list[Step]) -> None:
        """Settle the entries merged aside (GUESSED), in order, as `_apply` would have at their place: each
        conflict named against the entries applied before it. A clean answer means the guess failed (an
        earlier entry made the conflicting change its own): Misguessed, and the caller composes again."""
        if aside is None or not guessed:
            return
        self._ask_meetings(guessed)
        for step, ticket, applied in guessed:     # each named while git merges the next ones
            result = aside.take(ticket)
            if result.clean:
                raise _misguessed(step)
            self._name_conflict(step, result, applied, comp)
        order = {id(step): n for n, step in enumerate(steps)}
        comp.failed_conflicts.sort(key=lambda step: order[id(step)])

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
        touched: dict[str, tuple[_Touched, bool, bool]] = {}
        for base, changes in since.items():
            mark = _Touched()
            mark.add(p for c in changes for p in c.paths)
            gone = self._upstream_removed[base] = {c.path for c in changes if c.status == "D"}  # renames are off
            touched[base] = (mark, bool(gone), any(c.status == "A" for c in changes))
        out: dict[int, MergeResult] = {}
        for step in eligible:
            upstream, deleted, added = touched[step.base]  # type: ignore[index]
            own = step.all_changes
            if (_DIRECTORY_RENAMES and ((deleted and any(c.status in ("A", "R", "C") for c in own)) or
                                        (added and any(c.status in ("D", "R") for c in own)))) or \
                    upstream.overlaps({p for c in own for p in c.paths}):
                continue
            edits: dict[str, tuple[str, str] | None] = {}
            for c in own:
                if c.status == "R":
                    edits[c.old_path] = None  # type: ignore[index]
                edits[c.path] = None if c.status == "D" else (c.new_mode, c.new_oid)
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

    def _commit(self, step: Step, tree: str, tip: str, comp: Composition) -> tuple[str, str]:
        commit = self.git.write_commit(tree, [tip], *self._signatures(step), self._message(step))
        step.status, step.reason, step.commit, step.parent = APPLIED, None, commit, tip
        comp.trees[commit] = tree
        return commit, tree

    # -- one entry ----------------------------------------------------------------------------------
    def _known_conflict(self, step: Step, onto: MergeResult | None, touched: _Touched) -> MergeResult | None:
        """An entry that conflicts with upstream alone, on paths no earlier entry touched, conflicts the
        same way on the result so far: its merge onto upstream already says how (no second merge)."""
        if onto is None or onto.clean or self.manifest.on_conflict(step.entry) == "theirs":
            return None
        if any(c.status == "R" for c in step.changes):
            return None
        paths = {p for c in step.changes for p in c.paths} | set(onto.conflicted_paths)
        return None if touched.overlaps(paths) else onto

    def _apply(self, step: Step, tip: str, tip_tree: str, comp: Composition,
               known: MergeResult | None = None,
               partial: dict[str, tuple[str, str] | None] | None = None) -> tuple[str, str]:
        result = known
        if result is None:
            result = self._chained(step, tip_tree, lambda: self._merge_chained(step, tip, tip_tree, partial))
        if not result.clean:
            result = self._on_its_lower(step, result, tip, tip_tree, comp)
        if not result.clean:
            result = self._merge_structurally(step, result, tip, tip_tree, known is not None)
        tree = result.tree
        if not result.clean:
            if self._name_conflict(step, result, comp.applied, comp):
                return tip, tip_tree
            tree = self._resolve_theirs(result)
            step.resolution = "theirs"
            step.resolved_paths = list(result.conflicted_files)
        step.detail = ("conflicting hunks resolved in its favour (on_conflict: theirs)"
                       if step.resolution else None)
        if step.structured:
            step.detail = (f"{len(step.structured)} conflicting hunk(s) resolved structurally (policy "
                           "structured_merge): each side's change kept, verified")
        if step.stacked_onto:
            lower, head = step.stacked_onto
            step.detail = (f"stacked on {lower}: its own commits applied onto {lower}'s head {head[:12]} (its whole "
                           f"change conflicts with the lines {lower} added)")
        return self._settle(step, tree, tip, tip_tree, comp)

    def _may_stack(self, step: Step) -> bool:
        """Whether STEP's conflict may be merged again as its own commits (`_on_its_lower`): never guessed to
        conflict beside the chain, which names a conflict without trying that (helper-120)."""
        return step.built_on is not None and self.manifest.policy.stacked == "own-commits"

    def _on_its_lower(self, step: Step, result: MergeResult, tip: str, tip_tree: str, comp: Composition) -> MergeResult:
        """A PR stacked on an earlier PR (its history holds that PR's head) whose whole change conflicts on
        the result so far: its own commits alone (the lower's head to its head) merged onto it, when the
        lower was applied at that head, under `policy.stacked: own-commits`. Its whole change repeats the
        lower's, and conflicts wherever it edits or adds lines next to the lower's (helper-114: httpx pr/3726
        on pr/3725), where git merging the branch with its history would be clean. Only a conflict is merged
        again: a clean chained merge stays what the plain chain gives. Opt-in: by default an entry is its
        whole change, as the plain merge chain takes it (its conflict then says it is stacked)."""
        if not self._may_stack(step) or step.filtered or step.head is None:
            return result
        applied = {(s.id, s.head): s for s in comp.applied}
        # the nearest PR it is built on that was applied at that head (one that did not apply is carried
        # in its commits since the next one down)
        lower = next((applied[item] for item in step.built_order if item in applied), None)
        if lower is None or lower.base != step.base:
            # its commits since that head merge upstream in (another base): they hold upstream's changes
            # since, which a merge from that head alone would put back (helper-122: a file upstream deleted)
            return result
        sig = Signature(self.manifest.identity.name, self.manifest.identity.email, self.upstream_time)
        ours = self.git.write_commit(tip_tree, [str(lower.head)], sig, sig,
                                     "carrytool: stand-in for the result so far\n")
        stacked = self.git.merge_one(ours, step.head)
        if not stacked.clean:
            return result
        step.stacked_onto = (lower.id, lower.head)   # type: ignore[assignment]
        return stacked

    def _name_conflict(self, step: Step, result: MergeResult, applied: Sequence[Step], comp: Composition) -> bool:
        """Describe the conflicts of RESULT, STEP's chained merge, with the entries APPLIED before it; skip
        STEP (whether it did: not under `theirs`, which resolves them)."""
        mode = self.manifest.on_conflict(step.entry)
        step.conflicts = self._describe_conflicts(step, result, applied)
        for conflict in step.conflicts:      # why the structured merge left it a conflict (helper-128)
            refusal = step.structured_refused.get(conflict["file"])  # type: ignore[arg-type]
            if refusal:
                conflict["structured"] = dict(refusal)
        if mode == "theirs":
            return False
        detail = _conflict_detail(step.conflicts)
        if self.manifest.policy.stacked == "whole" and stacked_on(step) is not None:
            step.stacked_conflict = stacked_on(step)
            detail += (f"; it is stacked on {step.stacked_conflict} (its history holds that PR's head): "
                       "`policy.stacked: own-commits` merges its own commits onto it instead, where they merge")
        step.skip("conflict", detail, status=CONFLICT)
        if mode == "fail":
            comp.failed_conflicts.append(step)
        return True

    def _merge_chained(self, step: Step, tip: str, tip_tree: str,
                       partial: dict[str, tuple[str, str] | None] | None) -> MergeResult:
        """The chained merge of STEP onto TIP: of its shared files only, given PARTIAL (`_partial`), when
        that names what the whole merge gives; else the whole merge."""
        if partial:
            result = self._merge_partially(step, tip, tip_tree, partial)
            if result.clean or self._names_conflicts(step, result, partial):
                return result
            # its shared files conflict, so does the whole merge: ask it once, the way that names conflicts
            return self.git.merge_one(*self._pair(step, tip, tip_tree))
        return self._merge_onto(step, tip, tip_tree)

    def _chained(self, step: Step, tip_tree: str, merge: Callable[[], MergeResult]) -> MergeResult:
        """STEP's chained merge onto TIP_TREE, as MERGE makes it; or, when a run kept it clean before
        (pipeline.keptmerges) and its tree is in the store, that tree without a merge. A clean result is
        kept; a conflict never is."""
        if self.kept is None or step.head is None:
            return merge()
        tree = self._kept_tree(step, tip_tree)
        if tree is not None:
            return MergeResult(True, tree)
        result = merge()
        if result.clean:
            self.kept.put(self._kept_key(step, tip_tree), result.tree)
        return result

    def _kept_key(self, step: Step, tip_tree: str) -> str:
        assert self.kept is not None
        parents = [step.base] if step.base else [self.upstream]
        return self.kept.key(tip_tree, parents, self._filtered_head(step), (self.fast_path, self.explicit_bases))

    def _kept_tree(self, step: Step, tip_tree: str) -> str | None:
        """The tree of STEP's chained merge onto TIP_TREE that a run kept clean (and the store has), if any."""
        if self.kept is None or step.head is None:
            return None
        tree = self.kept.get(self._kept_key(step, tip_tree))
        return tree if tree is not None and self.git.object_type(tree) == "tree" else None

    def _merge_structurally(self, step: Step, result: MergeResult, tip: str, tip_tree: str,
                            shortcut: bool) -> MergeResult:
        """RESULT with every conflict resolved by the structured rule (pipeline.structured), when the
        entry's `structured_merge` selects all its conflicted files and each resolves; else RESULT."""
        patterns = self.manifest.structured_paths(step.entry)
        step.structured_refused = {}
        if not patterns or step.id in self.structured_off:
            return result
        if shortcut:        # a shortcut named the conflicts; the resolved tree needs the chained merge's
            result = self.git.merge_trees([self._pair(step, tip, tip_tree)])[0]
            if result.clean:
                return result
        # loaded here: only an entry with structured_merge patterns needs the structured rule
        from carrytool.pipeline.structured_tree import resolve_merge

        resolved = resolve_merge(self.git, result, patterns)
        step.structured_refused = resolved.refusals()
        if resolved.tree is None:
            return result
        step.structured = resolved.report()
        return MergeResult(True, resolved.tree)

    def _settle(self, step: Step, tree: str, tip: str, tip_tree: str, comp: Composition) -> tuple[str, str]:
        """Commit STEP's tree, or mark it redundant when it changes nothing on the result so far."""
        if step.reverted and not step.detail:     # (every way of applying it: helper-122)
            step.detail = f"{step.reverted}: applied again, from the base its change was made on"
        if tree == tip_tree:
            step.redundant_with = redundant_with(step, comp.applied)
            names = ", ".join(step.redundant_with) or "earlier entries"
            step.skip("redundant", f"nothing left to apply after {names}")
            return tip, tip_tree
        return self._commit(step, tree, tip, comp)

    def _merge_onto(self, step: Step, tip: str, tip_tree: str) -> MergeResult:
        """The chained merge of STEP's net change onto the result so far, in the long-lived merge process.

        Where git takes explicit bases on `--stdin` (see `Git.takes_merge_base`), the entry's base is
        given: no history walk. The sides are still the stand-in commit and the head, and the base is named
        by the commit git would find (the stand-in's only parent), so that a conflicted merge's labels,
        the names of paths moved aside and thus the report and `theirs` resolutions are exactly those of
        the plain chained merge, asked once (not first as trees, then again when it conflicts).
        """
        ours, theirs, base = self._onto_sides(step, tip, tip_tree)
        return self.git.merge_one(ours, theirs, base=base)

    def _onto_sides(self, step: Step, tip: str, tip_tree: str) -> tuple[str, str, str | None]:
        """`_merge_onto`'s merge: (ours, theirs, the base where git takes it), for the run's merge-tree or
        one of its own (AsideMerges)."""
        ours, theirs = self._pair(step, tip, tip_tree)
        explicit = self.explicit_bases is not False and step.base and self.git.takes_merge_base()
        return ours, theirs, step.base if explicit else None

    def _merge_partially(self, step: Step, tip: str, tip_tree: str,
                         rest: dict[str, tuple[str, str] | None]) -> MergeResult:
        """The chained merge of only the files STEP shares with earlier entries (its other files reset to
        their base versions), with REST's merged upstream versions written in: the tree the whole merge
        gives, without merging those files again. When it conflicts: that merge, as git answered it
        (`_names_conflicts` says whether it may stand for the whole merge)."""
        base_of = {c.path: None if c.status == "A" else (c.old_mode, c.old_oid) for c in step.changes}
        head_tree: str = self.git.commit_info(step.head)["tree"]  # type: ignore[arg-type,assignment]
        reduced = self.git.edit_tree(head_tree, {path: base_of[path] for path in rest})
        if self.explicit_bases is not False and step.base and self.git.takes_merge_base():
            result = self.git.merge_one(tip_tree, reduced, base=self.git.tree_of(step.base))
        else:
            sig = Signature(self.manifest.identity.name, self.manifest.identity.email, self.upstream_time)
            theirs = self.git.write_commit(reduced, [step.base] if step.base else [], sig, sig,
                                           f"carrytool: {step.id} on its shared files only\n")
            result = self.git.merge_one(self._pair(step, tip, tip_tree)[0], theirs)
        if not result.clean:
            return result
        edits = {path: value for path, value in rest.items() if value is not _KEEP}
        return MergeResult(True, self.git.edit_tree(result.tree, edits) if edits else result.tree)

    def _names_conflicts(self, step: Step, result: MergeResult, rest: dict[str, tuple[str, str] | None]) -> bool:
        """Whether RESULT, the conflicted merge of STEP's shared files only (`_merge_partially`, REST being
        its other files), names the conflicts of the whole chained merge, which need then not be asked.

        Yes when STEP's policy skips or fails a conflict without a structured merge (nothing reads the
        merged tree: only which files conflict, and their stages, which name the same blobs), and every
        conflict is one of contents in a shared file (no path moved aside under a side's name). The whole
        merge merges the shared files from the same three versions, and the others as STEP merged cleanly
        onto upstream (`_partial` holds only then, and only where no rename can pair a file of one group
        with one of the other): it conflicts in the same files, the same way."""
        if self.manifest.on_conflict(step.entry) == "theirs" or self.manifest.structured_paths(step.entry):
            return False
        shared = {c.path for c in step.changes} - set(rest)
        kinds = [kind for _paths, kind, _text in result.messages if kind.startswith("CONFLICT")]
        return bool(kinds) and all(kind == "CONFLICT (contents)" for kind in kinds) and \
            set(result.conflicted_paths) <= shared

    def _pair(self, step: Step, tip: str, tip_tree: str) -> tuple[str, str]:
        """The (ours, theirs) commits whose merge applies STEP's net change onto TIP.

        Ours is a stand-in commit with TIP's tree and the entry's base as its only parent: the merge base
        git finds is then that base, found without walking upstream's history or the chain of composed
        commits, and the merge is exactly base -> head applied onto the result so far.
        """
        head = self._filtered_head(step)
        parents = [step.base] if step.base else [self.upstream]
        key = (tip_tree, tuple(parents))
        shaped = self._stand_ins.get(key)
        if shaped is None:
            sig = Signature(self.manifest.identity.name, self.manifest.identity.email, self.upstream_time)
            shaped = self.git.write_commit(tip_tree, parents, sig, sig, "carrytool: stand-in for the result so far\n")
            self._stand_ins[key] = shaped
        return shaped, head

    def _filtered_head(self, step: Step) -> str:
        """The head with the paths a union provides reset to the base (a commit whose parent is the base)."""
        assert step.head is not None
        if not step.filtered:
            return step.head
        cache = getattr(step, "_filtered_commit", None)
        if cache:
            return cache
        head_tree: str = self.git.commit_info(step.head)["tree"]  # type: ignore[assignment]
        base_tree: str = self.git.commit_info(step.base)["tree"]  # type: ignore[arg-type,assignment]
        edits = {path: self.git.blob_at(base_tree, path) for path in step.filtered}
        tree = self.git.edit_tree(head_tree, edits)
        sig = Signature(self.manifest.identity.name, self.manifest.identity.email, self.upstream_time)
        commit = self.git.write_commit(tree, [step.base] if step.base else [], sig, sig,
                                       f"carrytool: {step.id} without the paths its unions provide\n")
        step._filtered_commit = commit  # type: ignore[attr-defined]
        return commit

    def _signatures(self, step: Step) -> tuple[Signature, Signature]:
        """Identity from the manifest; date = the later of upstream's and the entry head's commit dates."""
        when = self.upstream_time
        if step.head:
            when = max(when, self.git.commit_info(step.head)["committer_time"])  # type: ignore[type-var]
        sig = Signature(self.manifest.identity.name, self.manifest.identity.email, when)
        return sig, sig

    def _message(self, step: Step) -> str:
        title = step.entry.title or ""
        lines = [f"carry: {step.id}" + (f" {title}" if title else ""), ""]
        lines.append(f"Carry-Entry: {step.id}")
        if step.head:
            lines.append(f"Carry-Head: {step.head}")
        if step.base:
            lines.append(f"Carry-Base: {step.base}")
        if step.stacked_onto:
            lines.append(f"Carry-Stacked-On: {step.stacked_onto[0]} {step.stacked_onto[1]}")
        lines += [f"Carry-Filtered: {path} (from {step.provided_by.get(path, '?')})" for path in step.filtered]
        if step.resolution:
            lines.append(f"Carry-Resolution: {step.resolution} ({', '.join(step.resolved_paths)})")
        lines += [f"Carry-Structured: {h['file']} lines {h['lines'][0]}-{h['lines'][1]} ({h['kind']})"  # type: ignore[index]
                  for h in step.structured]
        return "\n".join(lines) + "\n"

    # -- conflicts ----------------------------------------------------------------------------------
    def _describe_conflicts(self, step: Step, result: MergeResult, applied: Sequence[Step]) -> list[dict[str, object]]:
        """Each conflicted file with the earlier entries whose own change collides with STEP's, and
        `upstream: true` when STEP conflicts there with upstream alone.

        Upstream alone: an earlier entry is named only when its change meets the conflicting lines (see
        pipeline.blame). Otherwise every earlier entry that touched the file is tried alone against STEP
        on upstream (one batched merge): those whose pairing conflicts there changed the lines in
        question. When no single one does (the conflict needs several of them), all of them are named.
        """
        alone = self._onto.get(id(step))
        with_upstream = set(alone.conflicted_files) if alone is not None and not alone.clean else set()
        out: list[dict[str, object]] = []
        moved = set(result.moved_aside.values())
        for path in result.conflicted_files:
            touching = self._touching(path, applied, under=path in moved)
            if path in with_upstream:
                out.append({"file": path, "with": self._meeting(step, path, touching, result, alone),
                            "upstream": True})
                continue
            culprits = [s.id for s in touching]
            if len(touching) > 1:
                trees = [self._onto_tree(s, path) for s in touching]
                pairs = [self._on_path(step, path, self._pair(step, self.upstream, tree), tree)  # type: ignore[arg-type]
                         for tree in trees]
                hits = [s.id for s, r in zip(touching, self.git.merge_trees(pairs)) if path in r.conflicted_files]
                culprits = hits or culprits
            elif not touching:
                culprits = [s.id for s in applied if path in s.files] or \
                    self._changed_in_result(path, applied) or _renamed_from(step, path, applied)
            out.append({"file": path, "with": culprits})
        return out

    def _changed_in_result(self, path: str, applied: Sequence[Step]) -> list[str]:
        """The applied entries whose composed commits changed PATH (one batched diff-tree), for a conflict
        in a path no applied entry's own diff lists: a chained merge moved an entry's change there,
        through a rename on the result's side (upstream copied a file that an earlier entry deleted)."""
        steps = [s for s in applied if s.commit and s.parent]
        diffs = self.git.diff_trees([(s.parent, s.commit) for s in steps], renames=False)  # type: ignore[misc]
        return [s.id for s, changes in zip(steps, diffs) if any(path in c.paths for c in changes)]

    def _on_path(self, step: Step, path: str, pair: tuple[str, str], ours_tree: str) -> tuple[str, str]:
        """PAIR with STEP's head reduced to PATH (pipeline.reduce): whether PATH conflicts is decided there."""
        if not self.fast_path or step.filtered or not step.base or not step.head:
            return pair
        sig = Signature(self.manifest.identity.name, self.manifest.identity.email, self.upstream_time)
        reduced = reduced_head(self.git, head=step.head, base=step.base, changes=step.changes, keep={path},
                               ours_tree=ours_tree, sig=sig, what=f"{step.id} in {path}")
        return pair if reduced is None else (pair[0], reduced)

    def _meeting(self, step: Step, path: str, touching: Sequence[Step], result: MergeResult,
                 alone: MergeResult | None) -> list[str]:
        """The earlier entries whose own change meets the lines where STEP conflicts with upstream in PATH, or
        took upstream's file there away (deleted it, made it a link or a directory: pipeline.blame), each
        one alone; when none does alone but the result so far (stage 2 of RESULT) does, all of them.
        ALONE, STEP's merge onto upstream, holds the regions of its conflict with upstream (pipeline.blame)."""
        if not step.base or not touching:
            return []
        sides = self._meeting_sides(step, path, touching, alone)
        meets = meets_conflict_many(self.git, path, **sides)
        away = takes_file_away(self.git, path, upstream_tree=self.upstream_tree, other_trees=sides["other_trees"])
        base_tree, head_tree, merges = sides["base_tree"], sides["head_tree"], (sides["alone"], None)
        hits = [s.id for s, met, took in zip(touching, meets, away) if met or took]
        ours = next((st for st in result.stages if st.path == path and st.stage == 2), None)
        if hits or len(touching) < 2 or ours is None or ours.mode not in REGULAR_MODES:
            return hits
        sides = [self.git.blob_at(tree, path) for tree in (base_tree, head_tree, self.upstream_tree)]
        if any(side is None or side[0] not in REGULAR_MODES for side in sides):
            return hits
        together = regions_differ(self.git, *(side[1] for side in sides), ours.oid,  # type: ignore[index]
                                  path=path, merges=merges)
        return [s.id for s in touching] if together else hits

    def _meeting_sides(self, step: Step, path: str, touching: Sequence[Step], alone: MergeResult | None) -> dict:
        """The trees (and merge) meets_conflict_many weighs STEP's conflict with upstream by, for `_meeting`."""
        return {"base_tree": self.git.tree_of(step.base), "head_tree": self.git.tree_of(self._filtered_head(step)),
                "upstream_tree": self.upstream_tree, "other_trees": [self._onto_tree(s, path) for s in touching],
                "alone": alone if self.regions_from_merges else None}

    def _touching(self, path: str, applied: Sequence[Step], under: bool = False) -> list[Step]:
        """The entries of APPLIED that change PATH (or, UNDER, a path in a directory PATH: a file moved
        aside out of a directory's way) whose merge onto upstream alone says what they left there
        (`_onto_tree`): a conflict's candidate culprits (_describe_conflicts)."""
        inside = path + "/"
        return [s for s in applied if (path in s.files or under and any(f.startswith(inside) for f in s.files))
                and id(s) in self._onto and self._weighed(s, path)]

    def _weighed(self, step: Step, path: str) -> str:
        """How `_onto_tree` weighs STEP at PATH: "merge" (its merge onto upstream is clean there), "structured",
        "theirs", or "" (left out: that merge holds conflict markers there that the chain did not resolve)."""
        onto = self._onto[id(step)]
        here = conflicted_at(onto, path)
        if not here:
            return "merge"
        if step.structured:         # the chain resolved STEP structurally, every conflict: so its own, here
            return "structured" if self._structured_at(step, onto, here) is not None else ""  # type: ignore[arg-type]
        return "theirs" if self.manifest.on_conflict(step.entry) == "theirs" else ""

    def _structured_at(self, step: Step, onto: MergeResult, here: tuple[str, ...]) -> str | None:
        """ONTO, STEP's merge onto upstream, with its conflicts at the paths HERE resolved structurally (those
        alone: a conflict of another kind in another file does not stand in the way), or None."""
        key = (id(step), here)
        if key not in self._structured_onto:
            from carrytool.pipeline.structured_tree import resolve_merge

            paths = set(here)
            only = MergeResult(False, onto.tree, tuple(s for s in onto.stages if s.path in paths),
                               tuple(m for m in onto.messages if paths & set(m[0])))
            self._structured_onto[key] = resolve_merge(self.git, only, self.manifest.structured_paths(step.entry)).tree
        return self._structured_onto[key]

    def _onto_tree(self, step: Step, path: str) -> str:
        """The tree of STEP merged onto upstream alone, as blame weighs what STEP left at PATH (an entry
        `_touching` keeps): that merge, where it is clean at PATH (a conflict in other files leaves PATH
        merged as any other entry's); where it conflicted at PATH, that merge resolved as the chain resolved
        STEP's conflicts: structurally (its conflicts at PATH), or in its favour under `theirs` (its own
        lines; a file it deleted is gone)."""
        how = self._weighed(step, path)
        onto = self._onto[id(step)]
        if how == "structured":
            return self._structured_at(step, onto, conflicted_at(onto, path))  # type: ignore[return-value]
        if how != "theirs":
            return onto.tree
        if id(step) not in self._theirs_onto:
            self._theirs_onto[id(step)] = self._resolve_theirs(onto)  # type: ignore[arg-type]
        return self._theirs_onto[id(step)]

    def _ask_meetings(self, guessed: Sequence[tuple[Step, int, list[Step]]]) -> None:
        """Ask git, as one batch (which two merge-tree processes share), the content merges that naming the
        conflicts of the GUESSED entries with upstream will ask (`_meeting`, in each file where the entry
        conflicts with upstream alone): the answers are kept (Git.merge_contents_many), so describing each
        entry after the other waits for none. At most MEETINGS_AT_ONCE of them."""
        triples: list[tuple[str, str, str]] = []
        for step, _ticket, applied in guessed:
            alone = self._onto.get(id(step))
            if not step.base or alone is None or alone.clean:
                continue
            for path in alone.conflicted_paths:
                touching = self._touching(path, applied)
                if touching:
                    triples += meeting_merges(self.git, path, **self._meeting_sides(step, path, touching, alone))
        if len(triples) > 1:
            self.git.merge_contents_many(triples[:MEETINGS_AT_ONCE])

    def _resolve_theirs(self, result: MergeResult) -> str:
        """Resolve each conflicted path in favour of the entry (`-X theirs` for content, theirs for the rest)."""
        moved = result.moved_aside          # a file git moved out of the way of the other side's entry
        by_path: dict[str, dict[int, ConflictStage]] = {}
        for stage in result.stages:
            by_path.setdefault(moved.get(stage.path, stage.path), {})[stage.stage] = stage
        edits: dict[str, tuple[str, str] | None] = {path: None for path in moved}   # each goes
        for path, stages in by_path.items():
            ours, theirs, base = stages.get(2), stages.get(3), stages.get(1)
            if theirs is None:
                if path not in moved.values():           # (moved aside: the entry has a directory there)
                    edits[path] = None                   # the entry deleted it
            elif ours is None or theirs.mode not in REGULAR_MODES or ours.mode not in REGULAR_MODES:
                # we deleted it (or have a directory), a link, a submodule, either side: take theirs (helper-124:
                # a submodule's commit read as a blob to merge, "missing from the repository", exit 4)
                edits[path] = (theirs.mode, theirs.oid)
            else:   # the mode as git merges it where it merges cleanly: ours when only ours changed it
                # (helper-124, helper-127: an executable bit upstream or an earlier entry set was dropped, every
                # line landed, nothing said); where git calls the modes a conflict (a file both added with
                # different modes) the entry's wins, as its lines do (helper-136: ours' was kept, nothing said)
                mode = ours.mode if base is not None and theirs.mode == base.mode else theirs.mode
                edits[path] = (mode, self._merge_theirs(base, ours, theirs))
        return self.git.edit_tree(result.tree, edits)

    def _merge_theirs(self, base: ConflictStage | None, ours: ConflictStage, theirs: ConflictStage) -> str:
        """Theirs wins each conflicting hunk, as git's `-X theirs` (Git.merge_theirs); a binary takes theirs
        as a whole."""
        merged = self.git.merge_theirs(ours.oid, base.oid if base and base.mode in REGULAR_MODES else None,
                                       theirs.oid)
        return theirs.oid if merged is None else self.git.write_blob(merged)


def _sources(step: Step) -> set[str]:
    """The paths STEP changes from its base (a rename's old path): those a rename on our side can take."""
    return {c.old_path or c.path for c in step.changes if c.status != "A"}


def _renamed_from(step: Step, path: str, applied: Sequence[Step]) -> list[str]:
    """For a conflict in PATH, where STEP renames a file to: the earlier entries whose own diffs changed that
    file (the other side of a rename/rename, which names no entry in PATH itself)."""
    sources = {c.old_path for c in step.changes if c.status == "R" and c.path == path}
    return [s.id for s in applied if sources & set(s.files)]


def stacked_on(step: Step) -> str | None:
    """An earlier PR a conflicting STEP is built on (its history holds that PR's head) and conflicts with, the
    nearest first (when its whole change conflicts; helper-121: pr/14858 conflicting with pr/14856, not with
    pr/14857 which did not apply, was not said to be stacked)."""
    if step.stacked:
        return None
    met = {name for c in step.conflicts for name in c.get("with", ())}  # type: ignore[attr-defined]
    return next((name for name, _head in step.built_order if name in met), None)


def _conflict_detail(conflicts: Sequence[dict[str, object]]) -> str:
    """`conflicts in a.py (with upstream alone), b.py (with pr/1)`: each file and who it conflicts with, and
    why the structured merge did not resolve it where it was asked to."""
    parts = []
    for conflict in conflicts:
        entries = ", ".join(conflict["with"])  # type: ignore[arg-type]
        who = ("upstream" + (f" and {entries}" if entries else " alone")) if conflict.get("upstream") else entries
        said = [text for text in (f"with {who}" if who else None, structured_refusal(conflict)) if text]
        parts.append(f"{conflict['file']}" + (f" ({'; '.join(said)})" if said else ""))
    return "conflicts in " + ", ".join(parts)
