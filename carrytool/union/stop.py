"""A fold's stop: the conflicts it names (the PRs that collide), the resolutions recorded before that it
did not meet, the sides labelled, and the scratch tree written."""

from __future__ import annotations

import shlex
from pathlib import Path

from carrytool.errors import GitError
from carrytool.gitlayer.git import MergeResult
from carrytool.gitlayer.urls import resolve_local
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.blame import conflicted_at, meets_conflict, meets_conflict_many, takes_file_away
from carrytool.union.outcome import FoldItem, Outcome
from carrytool.union.resolutions import split_conflicts
from carrytool.union.reuse import Step, read_content
from carrytool.union.scratch import MissingBlob


class Stopping:
    """Union's stop on the conflicts a fold step left (mixed into fold.Union)."""

    def stop(self, state: dict, item: FoldItem, merged: MergeResult, step: Step, outcome: Outcome,
             dry: bool) -> Outcome:
        earlier = [FoldItem(**{**raw, "paths": tuple(raw["paths"])}) for raw in state["items"][:state["next"]]]
        conflicts = []
        for path, kind in sorted(step.unresolved.items()):
            shown = read_content(self.git, step.tree, path)
            parts = split_conflicts(shown[1]) if shown and kind == "content" else None
            # a file git moved aside (`X~<side>`, out of a directory's way) is X to the PRs that changed it
            entries, with_upstream = self.collisions(merged.moved_aside.get(path, path), item, earlier, state)
            conflicts.append({"file": path, "entries": entries, "kind": kind,
                              "hunks": sum(1 for p in parts or [] if not isinstance(p, bytes))})
            if with_upstream:
                conflicts[-1]["upstream"] = self.manifest.upstream.branch
            if path in step.removes_upstream:
                conflicts[-1]["removes_upstream"] = step.removes_upstream[path]
            if path in step.deletes:
                conflicts[-1]["deletes_file"] = True
            if step.withheld.get(path):
                conflicts[-1]["not_replayed"] = step.withheld[path]
            if step.unplaced.get(path):
                conflicts[-1]["not_placed"] = step.unplaced[path]
        outcome.conflicts = conflicts
        # what the store resolved in this step is the fold's, as a step that finishes adds it (fold.advance): kept
        # in the state, the continue that finishes the fold counts it too (h244: the stop said "reused from the
        # store: a.py", and the continue of that same fold said no file was resolved from the store)
        state["reused"] += [p for p in step.reused if p not in state["reused"]]
        resolved = state.setdefault("resolved", [])
        resolved += [p for p in step.reused if p in merged.conflicted_paths and p not in resolved]
        outcome.reused, outcome.resolved = sorted(state["reused"]), resolved
        # so too the recorded edits the store applied at this step (h248: the continue that finished the fold did
        # not warn of one that went in beside a resolution no longer needed, helper-88's warning)
        edited = state.setdefault("edited", [])
        edited += [[p, item.id] for p in step.fixed if [p, item.id] not in edited]
        if dry:
            return outcome
        self._earlier_resolutions(state, item, conflicts)
        # the union so far is upstream with the PRs folded before: a line of upstream's is not theirs
        ours = f"the union so far ({', '.join([f'upstream {self.manifest.upstream.branch}'] + [i.id for i in earlier])})"
        shown_tree = self.relabel(step.tree, conflicts, ours=ours, theirs=item.id)
        self.git.flush_objects()
        scratch = self._scratch(Path(state["scratch"]))
        try:
            scratch.write(self.git, shown_tree)
        except MissingBlob as missing:
            scratch.remove_files()
            raise self.missing_blob(missing, state["upstream"], [*earlier, item]) from None
        crash_point("stop:scratch")
        state["conflict"] = {"pr": item.pr, "tree": merged.tree, "pre": step.pre, "shown": shown_tree,
                             "files": conflicts, "waiting": step.waiting}
        self.save(state)
        outcome.scratch = scratch.root
        return outcome

    def missing_blob(self, missing: MissingBlob, upstream: str, items: list[FoldItem]) -> GitError:
        """MISSING (a blob of the tree to write to the scratch) named with where it comes from, upstream or the
        PRs folded (ITEMS), and the fetch that brings it (helper-123: a partial jax mirror, "object f866c53... is
        missing" and no path)."""
        branch = self.manifest.upstream.branch
        sources = [(f"upstream {branch} at {upstream[:12]}", upstream, f"refs/heads/{branch}"),
                   *((f"{i.id} at {i.head[:12]}", i.head, self.manifest.upstream.pr_ref_for(i.pr)) for i in items)]
        having = [(label, ref) for label, rev, ref in sources
                  if (self.git.blob_at(self.git.tree_of(rev), missing.path) or ("", ""))[1] == missing.oid]
        where = ", ".join(label for label, _ in having) or f"the merged tree {missing.tree[:12]}"
        url = resolve_local(self.manifest.upstream.url, self.manifest.base_dir)
        fetch = shlex.join(["git", "-C", str(self.git.git_dir), "fetch", "--refetch", url,
                            having[0][1] if having else f"refs/heads/{branch}"])
        return GitError(f"{missing.path} (blob {missing.oid}, as {where} has it) is missing from the repository: "
                        f"the fold of {self.entry.id} stopped on a conflict, and its scratch tree cannot be written",
                        hint=f"the repository is incomplete (a partial mirror or an interrupted fetch): fetch the "
                             f"object again (`{fetch}`; `git -C {shlex.quote(str(self.git.git_dir))} fsck "
                             "--connectivity-only` lists what else is missing), then run the command again")

    def _earlier_resolutions(self, state: dict, item: FoldItem, conflicts: list[dict]) -> None:
        """Print the resolutions recorded for ITEM in the files this stop asks about that this fold did not
        use: what the user decided there before the PR moved (helper-88: redone from memory; a recorded
        edit outside the hunks was shown, a hunk's resolution was not)."""
        files = {c["file"] for c in conflicts if c["kind"] == "content"}
        records = self.store.load(self.name)
        unused = set(records) - set(state["used_keys"])
        # of this PR and those folded before it (helper-92: a later PR's, which its step then reused, was shown)
        folded = {f"pr/{raw['pr']}" for raw in state["items"][:state["next"]]} | {item.id}
        for file, entries, text, count in self.store.described(self.name, unused):
            if file not in files or item.id not in entries or not set(entries) <= folded:
                continue
            lines = text.split("\n") if count else []
            shown = "\n".join(f"    {line[:200]}" + (" ..." if len(line) > 200 else "") for line in lines[:20])
            shown += "\n    ..." if len(lines) > 20 else ""
            if not lines:
                shown = "    (nothing: you resolved it to no lines)"
            elif lines == [""]:
                shown = "    (one empty line)"
            # not "changed": a PR that moved off the lines has no conflict there any more (helper-94)
            self.notify(f"{file}: you resolved a conflict there before ({', '.join(entries)}) that this fold does "
                        f"not meet as recorded (a PR moved); your resolution was:\n{shown}")

    def relabel(self, tree: str, conflicts: list[dict], *, ours: str, theirs: str) -> str:
        """Name the sides of each conflict hunk (git labels them with bare SHAs); return the shown tree."""
        edits: dict[str, tuple[str, str] | None] = {}
        for conflict in conflicts:
            found = read_content(self.git, tree, conflict["file"])
            if conflict["kind"] != "content" or found is None:
                continue
            lines = found[1].split(b"\n")
            for i, line in enumerate(lines):
                cr = b"\r" if line.endswith(b"\r") else b""     # a file of CRLF lines keeps them on its markers
                if line.startswith(b"<<<<<<< "):
                    lines[i] = b"<<<<<<< " + ours.encode() + cr
                elif line.startswith(b">>>>>>> "):
                    lines[i] = b">>>>>>> " + theirs.encode() + cr
            edits[conflict["file"]] = (found[0], self.git.write_blob(b"\n".join(lines)))
        return self.git.edit_tree(tree, edits) if edits else tree

    def collisions(self, path: str, item: FoldItem, earlier: list[FoldItem], state: dict) -> tuple[list[str], bool]:
        """The earlier PRs whose own change to PATH conflicts with ITEM's (pairwise, on upstream), as sync
        names them (pipeline.compose_conflicts `_describe_conflicts`): those that changed PATH or a file under it (the
        directory git moved a file out of the way of). Where ITEM conflicts in PATH with upstream
        alone, only those whose change meets the lines of that conflict (pipeline.blame): a PR that merely
        changed a file of upstream's directory in the way, or other lines of the file, is not named.
        With ITEM itself last; and whether ITEM conflicts there with upstream alone (sync's `upstream`)."""
        inside = path + "/"
        touched = {i for p, ids in state["touched"].items() if p == path or p.startswith(inside)
                   for i in ids}
        touching = [e for e in earlier if e.id in touched]
        if not touching:
            return [item.id], True          # the union so far is upstream there
        upstream = state["upstream"]
        head = self.only_paths(item)
        *onto, alone = self.git.merge_trees([(upstream, self.only_paths(e)) for e in touching] + [(upstream, head)])
        if path in alone.conflicted_files:
            # weighed: the PRs whose merge onto upstream is clean at PATH (and under it). One that conflicted
            # with upstream there holds conflict markers (its resolution is the fold's own); one that
            # conflicted only in other files merged PATH as any other PR did
            clear = [(e, r) for e, r in zip(touching, onto) if not conflicted_at(r, path)]
            return self._meeting(path, item, head, clear, alone, state) + [item.id], True
        sig = self.signature(0)
        applied = [self.git.write_commit(r.tree, [upstream], sig, sig, "carrytool: pair probe\n") for r in onto]
        pairs = self.git.merge_trees([(commit, head) for commit in applied])
        hits = [e.id for e, r in zip(touching, pairs) if path in r.conflicted_files]
        return (hits or [e.id for e in touching]) + [item.id], False

    def _meeting(self, path: str, item: FoldItem, head: str, clean: list[tuple[FoldItem, MergeResult]],
                 alone: MergeResult, state: dict) -> list[str]:
        """For ITEM's conflict with upstream alone in PATH (ALONE: its merge onto upstream), the earlier PRs
        of CLEAN (each merged onto upstream cleanly at PATH) whose change meets it, as sync's compose `_meeting`:
        each one whose change meets the conflict's lines (pipeline.blame), or, where upstream has a file
        there, that has none (deleted, a link, a directory: the conflict is then of its making too); when
        no single one does and the union so far (the fold's tip) does, all of them."""
        git = self.git
        trees = {"base_tree": git.tree_of(item.base), "head_tree": git.tree_of(head),
                 "upstream_tree": git.tree_of(state["upstream"])}
        others = [r.tree for _, r in clean]
        meets = meets_conflict_many(git, path, **trees, other_trees=others, alone=alone)
        away = takes_file_away(git, path, upstream_tree=trees["upstream_tree"], other_trees=others)
        hits = [e.id for (e, _), met, took in zip(clean, meets, away) if met or took]
        if hits or len(clean) < 2:
            return hits
        together = meets_conflict(git, path, **trees, other_tree=git.tree_of(state["tip"]), merges=(alone, None))
        return [e.id for e, _ in clean] if together else hits
