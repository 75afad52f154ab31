"""One entry's chained merge onto the result so far: the stand-in commits that shape its merge base, a merge
of its shared files only, one kept by an earlier run, its own commits onto the PR it is stacked on, a
structured resolution (a mixin of compose.Composer)."""

from __future__ import annotations

from collections.abc import Callable

from carrytool.gitlayer.git import MergeResult, Signature
from carrytool.pipeline.compose_records import _KEEP, Composition, _Touched
from carrytool.pipeline.hunks import counted
from carrytool.pipeline.plan import Step


class _ChainedMerges:
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
            step.detail = (f"{counted(len(step.structured), 'conflicting hunk')} resolved structurally (policy "
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
