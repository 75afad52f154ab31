"""Naming a conflict: the earlier entries an entry's chained merge conflicts with (blame's rule where it
conflicts with upstream alone), why the structured merge left it, and the resolution in the entry's favour
under `on_conflict: theirs` (a mixin of compose.Composer)."""

from __future__ import annotations

from collections.abc import Sequence

from carrytool.gitlayer.git import REGULAR_MODES, ConflictStage, MergeResult, Signature
from carrytool.pipeline.blame import (
    conflicted_at,
    meeting_merges,
    meets_conflict_many,
    regions_differ,
    takes_file_away,
)
from carrytool.pipeline.compose_records import Composition
from carrytool.pipeline.plan import CONFLICT, Step, held_in, structured_refusal
from carrytool.pipeline.reduce import reduced_head

# content merges asked at once for naming the conflicts of the entries merged aside (_ask_meetings): the
# run keeps 256 content merges' answers (Git.merge_contents_many), each of a file's size
MEETINGS_AT_ONCE = 128


class _Conflicts:
    # -- conflicts ----------------------------------------------------------------------------------
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
        elif held_in(step) is not None:
            detail += (f"; {held_in(step)}, before it, is built on it (its history holds this PR's head) and carries "
                       "its change already")
        step.skip("conflict", detail, status=CONFLICT)
        if mode == "fail":
            comp.failed_conflicts.append(step)
        return True

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
        ALONE, STEP's merge onto upstream, holds the regions of its conflict with upstream (pipeline.blame);
        RESULT, STEP's chained merge, those of its conflict with the result so far."""
        if not step.base or not touching:
            return []
        sides = self._meeting_sides(step, path, touching, alone)
        meets = meets_conflict_many(self.git, path, **sides)
        away = takes_file_away(self.git, path, upstream_tree=self.upstream_tree, other_trees=sides["other_trees"])
        # the merge onto the result so far is RESULT itself, where it merged exactly these blobs at PATH: its
        # regions are read from it (regions_in checks its stages), not merged again as a content merge
        chained = result if self.regions_from_chain else None
        base_tree, head_tree, merges = sides["base_tree"], sides["head_tree"], (sides["alone"], chained)
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
