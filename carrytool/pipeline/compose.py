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

from carrytool.gitlayer.git import (
    AsideMerges,
    Change,
    Git,
    MergeResult,
    Signature,
)
from carrytool.manifest.model import Manifest
from carrytool.pipeline.compose_chain import _ChainedMerges
from carrytool.pipeline.compose_conflicts import _Conflicts
from carrytool.pipeline.compose_records import Composition, _misguessed, _Touched
from carrytool.pipeline.compose_upstream import _OntoUpstream
from carrytool.pipeline.keptmerges import KeptMerges
from carrytool.pipeline.plan import APPLIED, PENDING, Step, redundant_with

Progress = Callable[[str, int, int], None]


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


class Composer(_OntoUpstream, _ChainedMerges, _Conflicts):
    fast_path = True      # tests turn it off to check the fast path gives the chained merge's trees
    # called once every entry was merged onto upstream, with those that may still apply (sync starts
    # reading their patches for the landing checks there)
    merged_onto_upstream: Callable[[list[Step]], None] | None = None
    structured_off: frozenset[str] = frozenset()   # entries whose structured resolution a check rejected
    explicit_bases: bool | None = None   # None: where git takes them; tests set False to compare SHAs
    regions_from_merges = True   # blame reads upstream's conflict regions from the merge onto it (tests compare)
    regions_from_chain = True    # and those of the result so far from the chained merge (tests compare)
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

    def _commit(self, step: Step, tree: str, tip: str, comp: Composition) -> tuple[str, str]:
        commit = self.git.write_commit(tree, [tip], *self._signatures(step), self._message(step))
        step.status, step.reason, step.commit, step.parent = APPLIED, None, commit, tip
        comp.trees[commit] = tree
        return commit, tree

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
