"""`carrytool union`: compose and refold a union commit from the PRs it supersedes, reusing resolutions.

A fold merges the current head of each superseded PR (only its superseded paths, in manifest order)
onto the upstream head, in memory. Each conflict hunk the resolution store has a record for is
resolved on its own, then the recorded fixups (edits outside the hunks) are applied 3-way. What is
left stops the fold: the result is written to a scratch tree (`scratch`; never the user's), and
`union continue` takes every change made there (recorded as hunk resolutions and fixups) and goes on.
The finished union is one commit on upstream, kept reachable under refs/carrytool/, and the manifest
is updated in place (the new `commit` or patch file, each PR's folded `head`).

Crash safety: the state is replaced atomically and advanced before the scratch is removed; records
are written before the state moves; the manifest and patch are replaced by rename.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from carrytool.errors import ConflictError, FoldUnderWay, InputError, UnknownRef
from carrytool.gitlayer.git import Git, MergeResult, Signature
from carrytool.gitlayer.urls import resolve_local
from carrytool.manifest import paths as pathmatch
from carrytool.manifest.model import Entry, Manifest
from carrytool.manifest.safefile import refuse_symlink
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.leftout import LeftOut
from carrytool.pipeline.resolve import _fetch, namespace
from carrytool.pipeline.shadowed import folded_twice
from carrytool.pipeline.structured_tree import resolve_merge, without_resolved
from carrytool.union.checks import FoldChecks
from carrytool.union.outcome import FoldItem, Outcome
from carrytool.union.publish import Publishing
from carrytool.union.record import Recording
from carrytool.union.resolutions import Fixup, has_markers
from carrytool.union.reuse import resolve_step
from carrytool.union.rewritten import FoldRewrites, rewritten_note
from carrytool.union.scratch import Scratch, _walk
from carrytool.union.state import load_state, manifest_edit, save_state
from carrytool.union.stop import Stopping
from carrytool.union.store import Store
from carrytool.union.syntax import FoldSyntax
from carrytool.union.taken import (
    continue_command,
    in_scratch,
    leftover_kind,
    refuse_deleted_conflicts,
    refuse_leftovers,
    refuse_unknown_takes,
    taken_files,
)

__all__ = ["FoldItem", "Outcome", "Union", "fold_order", "union_entry"]   # FoldItem, Outcome: from outcome.py

Notify = Callable[[str], None]


def union_entry(manifest: Manifest, name: str, invocation: str = "", *, aborting: bool = False) -> Entry:
    entry = manifest.find_entry(name if name.startswith("carry/") else f"carry/{name}")
    if entry is None or entry.kind != "carry":
        carries = ", ".join(e.name for e in manifest.entries if e.kind == "carry") or "none"
        bare = name.removeprefix("carry/")
        raise InputError(f"no carry entry '{name}' in {manifest.path} (carries: {carries})",
                         hint=f"start it with: carrytool union new {shlex.quote(bare)} PR PR ...{invocation}")
    if not entry.supersedes and not aborting:
        raise InputError(f"{entry.id} supersedes no PR: there is nothing to fold",
                         hint="list the PRs it provides under `supersedes:`")
    return entry


def fold_order(manifest: Manifest, entry: Entry) -> list[tuple[int, tuple[str, ...]]]:
    """The superseded PRs in manifest order (entries first, then the rest in supersedes order)."""
    position = {e.number: i for i, e in enumerate(manifest.entries) if e.kind == "pr"}
    order = {s.pr: i for i, s in enumerate(entry.supersedes)}
    items = [(s.pr, s.paths) for s in entry.supersedes]
    return sorted(items, key=lambda item: (position.get(item[0], len(position)), order[item[0]]))


class Union(Stopping, Recording, FoldChecks, FoldSyntax, FoldRewrites, Publishing):
    def __init__(self, manifest: Manifest, git: Git, name: str, *, notify: Notify | None = None,
                 scratch: Path | None = None, invocation: str = "", aborting: bool = False) -> None:
        self.manifest = manifest
        self.git = git
        self.invocation = invocation
        self.entry = union_entry(manifest, name, invocation, aborting=aborting)
        self.name = self.entry.name or name
        self.notify = notify or (lambda _msg: None)
        self.state_dir = git.git_dir / "carrytool" / "union" / self.name
        self.scratch_option = scratch
        self.scratch = scratch or self.state_dir / "tree"
        self.store = Store(manifest.base_dir / "resolutions", ".".join(map(str, git.version)))
        self.took_back = False      # abort put the manifest back as it was before `union new` (_take_back)

    def command(self, verb: str) -> str:
        """A next-step command the user can paste: their -m/--repo repeated, quoted."""
        return f"carrytool union {verb} {shlex.quote(self.name)}{self.invocation}"

    def _scratch(self, root: Path) -> Scratch:
        return Scratch(root, self.name, hint=f"{self.command('abort')}, then {self.command('compose')}")

    # -- inputs -------------------------------------------------------------------------------------
    def resolve(self, offline: bool, *, new: bool = False) -> tuple[str, list[FoldItem]]:
        """Upstream's head and the PRs to fold, fetched. NEW: for `union new`, which takes its entry out of
        the manifest again when this fails (so the hint names the command, not the entry)."""
        ns = namespace(self.manifest)
        order = fold_order(self.manifest, self.entry)
        if not offline:
            url = resolve_local(self.manifest.upstream.url, self.manifest.base_dir)
            specs = {f"+refs/heads/{self.manifest.upstream.branch}": f"{ns}/upstream"}
            specs.update({f"+{self.manifest.upstream.pr_ref_for(pr)}": f"{ns}/pr/{pr}" for pr, _ in order})
            absent = _fetch(self.git, url, specs, retry_delay=1.0)
            if absent:
                # (helper-102: after `union new` took the entry out again, the hint named its supersedes)
                hint = "check the PR numbers given to `carrytool union new` and run it again" if new else \
                    f"drop the PR from {self.entry.id}'s supersedes, or pin it"
                raise UnknownRef(f"upstream has no {', '.join(s.lstrip('+') for s in sorted(absent))}", hint=hint)
        commit = self.entry.commit
        if not offline and commit and len(commit) == 40 and self.git.object_type(commit) is None \
                and self.manifest.fork.url:
            fork = resolve_local(self.manifest.fork.url, self.manifest.base_dir)
            _fetch(self.git, fork, {commit: f"{ns}/carry/{self.name}"}, retry_delay=1.0)
        upstream = self.git.ref_value(f"{ns}/upstream")
        if upstream is None:
            raise UnknownRef("no fetched upstream", hint="run without --offline")
        titles = {e.number: e.title for e in self.manifest.entries if e.kind == "pr"}
        items = []
        for pr, sup_paths in order:
            head = self.git.ref_value(f"{ns}/pr/{pr}")
            if head is None:
                raise UnknownRef(f"pr/{pr}: no fetched head", hint="run without --offline")
            base = self.git.merge_base(upstream, head)
            if base is None:
                raise UnknownRef(f"pr/{pr} shares no history with upstream")
            items.append(FoldItem(pr, head, base, sup_paths, titles.get(pr)))
        return upstream, items

    def only_paths(self, item: FoldItem) -> str:
        """The PR's head, or for a partial supersession a commit on its base with only those paths changed."""
        if not item.paths:
            return item.head
        changes = self.git.diff_trees([(item.base, item.head)])[0]
        edits = {}
        for change in changes:
            for path in change.paths:
                if pathmatch.matches_any(item.paths, path):
                    edits[path] = self.git.blob_at(self.git.tree_of(item.head), path)
        tree = self.git.edit_tree(self.git.tree_of(item.base), edits)
        sig = self.signature(0)
        return self.git.write_commit(tree, [item.base], sig, sig, f"carrytool: {item.id} limited to its "
                                                                   f"superseded paths\n")

    def signature(self, when: int) -> Signature:
        return Signature(self.manifest.identity.name, self.manifest.identity.email, when)

    # -- the fold -----------------------------------------------------------------------------------
    def compose(self, *, offline: bool = False, added: tuple[bytes, bytes] | None = None) -> Outcome:
        """Fold from the start. ADDED: the manifest before and after `union new` added this entry, kept in
        the state while the fold is stopped, so that `abort` takes the entry out again (`_take_back`)."""
        if self.state_path.exists() or self.state_path.is_symlink():
            state = self.load()
            raise FoldUnderWay(f"a fold of {self.entry.id} is already under way in {state['scratch']}",
                               hint=f"{self.command('continue')}  (or: {self.command('abort')})",
                               manifest=state.get("manifest"))
        self._scratch(self.scratch).check_usable()
        edited = self.patch_edited()
        if edited:
            raise InputError(f"{edited}: this fold would replace it, and the edit with it",
                             hint=f"keep the edit as a carry of its own (a commit on top of the union), or redo it at "
                                  f"a stop of the fold; to let the fold replace it, restore the file (git checkout -- "
                                  f"{shlex.quote(self.entry.patch or '')}) or delete it")
        upstream, items = self.resolve(offline, new=added is not None)
        state = {"name": self.name, "upstream": upstream, "items": [item.__dict__ for item in items],
                 "next": 0, "tip": upstream, "touched": {}, "reused": [], "used_keys": [],
                 "scratch": str(self.scratch), "manifest": str(self.manifest.path.resolve()), "written": self.written()}
        if added is not None:
            state["added"] = manifest_edit(*added)
        return self.advance(state)

    def advance(self, state: dict[str, Any], *, dry: bool = False) -> Outcome:
        items = [FoldItem(**{**raw, "paths": tuple(raw["paths"])}) for raw in state["items"]]
        records = self.store.load(self.name)
        recorded = self.store.load_upstream(self.name)
        fixups = self.store.load_fixups(self.name)
        # of the files reused, those that conflicted (helper-159: a recorded edit of a file that merged was
        # counted as a conflict resolved); a state an earlier carrytool wrote counted them all so
        resolved = state.setdefault("resolved", list(state["reused"]))
        outcome = Outcome(self.name, done=False, reused=state["reused"], resolved=resolved,
                          invocation=self.invocation, structured=state.setdefault("structured", []))
        # [file, item]: a recorded edit of ITEM went into FILE (a state of c8b6311's parent held bare files:
        # helper-93, continue crashed on it; they are dropped)
        edited = state["edited"] = [e for e in state.get("edited", []) if isinstance(e, list) and len(e) == 2]
        while state["next"] < len(items):
            item = items[state["next"]]
            merged = self.git.merge_trees([(state["tip"], self.only_paths(item))])[0]
            merged = self.merge_structurally(merged, item, state)
            step = resolve_step(self.git, merged, records, [f for f in fixups if f.item == item.id], self.notify,
                                self.upstream_of(state), recorded, self.git.tree_of(item.base),
                                drop_command=lambda path: continue_command(self.name, self.invocation, [path], ())([]))
            state["used_keys"] += step.used
            if step.unresolved:
                return self.stop(state, item, merged, step, outcome, dry)
            state["reused"] += [p for p in step.reused if p not in state["reused"]]
            resolved += [p for p in step.reused if p in merged.conflicted_paths and p not in resolved]
            edited += [[p, item.id] for p in step.fixed if [p, item.id] not in edited]
            for change in self.git.diff_trees([(state["tip"], step.tree)])[0]:
                for path in change.paths:
                    state["touched"].setdefault(path, []).append(item.id)
            sig = self.signature(0)
            state["tip"] = self.git.write_commit(step.tree, [state["tip"]], sig, sig, f"carrytool fold: {item.id}\n")
            state["next"] += 1
        unused = set(records) - set(state["used_keys"])
        outcome.unused_records = len(unused)
        # named as what they are: conflicts this fold did not meet as recorded (a PR moved, or left the union).
        # The store keeps every resolution, so one resolved again is among them: no "did not happen" claim
        # (helper-92, -93, -94: each rule that guessed which were superseded was wrong one way or the other)
        outcome.unused = self.store.where(self.name, unused)
        # certain, and warned about: a resolution with a PR that left the union, beside which an edit recorded
        # by one of its PRs still in the fold went in (helper-88: the conflict went with the PR, the edit
        # stayed, and the union used a parameter no longer there)
        folding = {item.id for item in items}
        outcome.edited_alone = sorted({file for file, entries in outcome.unused for f, by in edited
                                       if f == file and by in entries and not set(entries) <= folding})
        return self.finish(state, items, outcome, dry)

    def merge_structurally(self, merged: MergeResult, item: FoldItem, state: dict[str, Any]) -> MergeResult:
        """MERGED with the files the structured rule resolves (policy structured_merge) no longer conflicted:
        they are re-derived on every fold, so the store records nothing for them."""
        patterns = self.manifest.structured_paths(self.entry)
        if merged.clean or not patterns:
            return merged
        resolution = resolve_merge(self.git, merged, patterns, partial=True)
        done = state.setdefault("structured", [])
        done += [{"entry": item.id, **h} for h in resolution.report() if {"entry": item.id, **h} not in done]
        return without_resolved(merged, resolution)

    def finish(self, state: dict, items: list[FoldItem], outcome: Outcome, dry: bool) -> Outcome:
        tree = self.git.tree_of(state["tip"])
        when = max(int(self.git.commit_info(sha)["committer_time"]) for sha in  # type: ignore[call-overload]
                   [state["upstream"], *(i.head for i in items)])
        message = self.message(state, items)
        commit = self.git.write_commit(tree, [state["upstream"]], self.signature(when), self.signature(when), message)
        outcome.done, outcome.commit = True, commit
        outcome.folded = {item.pr: item.head for item in items}
        # two PRs' definitions of one name, both folded in: the union is one entry to sync, which cannot see it
        for note in folded_twice(self.git, state["upstream"], commit, [(i.id, i.base, i.head) for i in items]):
            self.notify(f"warning: {note}")
        judged: list[LeftOut] = []
        for note in self.left_out(state["upstream"], commit, items, judged=judged):
            self.notify(note)
        for note in self.unbound(state, commit, items):
            self.notify(note)
        for note in self.unparsed(state, commit, items):       # (after unbound: it reads the symbol tables)
            self.notify(note)
        outcome.re_expressed = self.rewritten(state, commit, items, judged)
        said = rewritten_note(outcome.re_expressed)
        if said:
            self.notify(said)
        outcome.patch = self.entry.patch
        if dry:
            return outcome
        self.prune()
        if self.entry.patch:
            refuse_symlink(self.manifest.base_dir / self.entry.patch)
        refuse_symlink(self.manifest.path)
        ns = namespace(self.manifest)
        self.git.update_ref(f"{ns}/carry/{self.name}", commit, self.git.ref_value(f"{ns}/carry/{self.name}"),
                            "carrytool union")
        crash_point("finish:ref")
        outcome.manifest_updated = self.update_manifest(commit, outcome.folded)
        outcome.unchanged = state.get("written") == self.written()     # (a state of an older carrytool: said changed)
        crash_point("finish:manifest")
        self.cleanup(Path(state["scratch"]))
        return outcome

    def prune(self) -> None:
        """Remove from the store each recorded edit that changes nothing and settles no conflict (its file as
        the fold had it, recorded where the file merged or at a stop of another kind than `other`, where keeping
        the file as shown is the decision: an earlier carrytool kept such records), saying so (helper-147: one
        stayed, and a later stop printed "your recorded edit ... It was:" and nothing)."""
        for fixup in self.store.load_fixups(self.name):
            if fixup.base == fixup.result and fixup.conflict not in (None, "other"):
                self.store.record_fixup(self.name, Fixup(fixup.item, fixup.file, fixup.base, fixup.base))
                self.notify(f"{fixup.file}: removed the edit recorded there for {fixup.item} from the store: it "
                            "changes nothing (the file as the fold had it)")

    # -- continue / abort ---------------------------------------------------------------------------
    def resume(self, *, drop: Collection[str] = (), take: Collection[str] = ()) -> Outcome:
        """Take every change made in the scratch tree, record it, and go on with the fold. DROP: files whose
        recorded edit held back at this stop (`--drop-edit`) is removed from the store, not applied. TAKE: files
        an editor or merge tool leaves behind (`union.taken`) that are taken all the same (`--take`). The
        outcome names the files taken beyond the conflicted ones."""
        state = self.load()
        conflict = state.get("conflict")
        if self.scratch_option and Path(state["scratch"]) != self.scratch_option:
            raise InputError(f"this fold's scratch tree is {state['scratch']}, not {self.scratch_option}",
                             hint=f"{self.command('continue')} (without --scratch)")
        self._check_supersedes(state)
        if not conflict:        # interrupted after the last continue advanced the state (a drop taken): go on
            return self.advance(state)
        # the file's path as the held-back refusal prints it ("redo it in <scratch>/a.py"), or `./a.py`, names
        # it too, as for --take (h228: refused, "no recorded edit is held back there")
        drop = in_scratch(drop, Path(state["scratch"]))
        self.check_drops(conflict, drop, take)
        scratch = self._scratch(Path(state["scratch"]))
        snapshot = scratch.read()
        kinds = {c["file"]: c for c in conflict["files"]}
        still = [p for p, c in kinds.items() if c["kind"] != "other" and p in snapshot
                 and snapshot[p][0] != "120000" and has_markers(snapshot[p][1])]
        shown = {path.decode("utf-8", "surrogateescape"): (mode, oid)
                 for mode, oid, path in _walk(self.git, conflict["shown"], b"")}
        # a conflicted file moved or copied elsewhere in the scratch tree takes its markers along: this
        # stop's own marker lines (`relabel` names the sides) in any other file refuse as much, where that
        # file has more of them than the fold showed there (helper-81: a file of upstream's that holds such
        # a line, e.g. documentation, refused every continue)
        # (not in a leftover continue refuses, a backup of the conflicted file: that refusal names it; h226; but
        # while a conflicted file is gone it is no backup: `mv a.py a.py.orig`, then the refusal's `rm`, lost it: h229)
        labels, take = self._labels(conflict), in_scratch(take, scratch.root)
        backups = all(p in snapshot for p, c in kinds.items() if c["kind"] != "other")
        still += [p for p, (mode, data) in sorted(snapshot.items()) if p not in kinds and mode != "120000"
                  and labels and self._more_labels(data, shown.get(p), labels)
                  and not (backups and p not in shown and p not in take and leftover_kind(p)
                           and not self._tracked(state, p))]
        if still:
            raise ConflictError(f"conflict markers remain in {', '.join(still)} (in {scratch.root})",
                                hint=f"resolve them, then: {self.command('continue')}")
        gone = refuse_deleted_conflicts(conflict["files"], snapshot, take=take, root=scratch.root, shown=shown,
                                        git_dir=self.git.common_dir,
                                        command=continue_command(self.name, self.invocation, drop, take))
        edits: dict[str, tuple[str, str] | None] = {}
        for path, (mode, data) in snapshot.items():
            oid = self.git.write_blob(data)
            if shown.get(path) != (mode, oid):
                edits[path] = (mode, oid)
        edits.update({p: None for p, (mode, _oid) in shown.items() if mode != "160000" and p not in snapshot})
        taken = taken_files(edits, shown, kinds)
        refuse_unknown_takes(taken, tracked=lambda path: self._tracked(state, path), take=take,
                             present=snapshot, deleted=gone, root=scratch.root,
                             command=continue_command(self.name, self.invocation, drop, ()))
        refuse_leftovers(taken, tracked=lambda path: self._tracked(state, path), take=take, root=scratch.root,
                         command=continue_command(self.name, self.invocation, drop, take))
        self._refuse_held_back(conflict, snapshot, drop, scratch, take)
        self._ask_waiting(state, conflict, snapshot, scratch, drop)
        for path, content in self.record(state, conflict, snapshot, sorted(set(edits) | set(kinds)), drop).items():
            edits[path] = (content[0], self.git.write_blob(content[1]))      # a waiting edit applied after
        crash_point("continue:recorded")
        item = f"pr/{conflict['pr']}"
        tree = self.git.edit_tree(conflict["shown"], edits)
        for change in self.git.diff_trees([(state["tip"], tree)])[0]:
            for path in change.paths:
                state["touched"].setdefault(path, []).append(item)
        sig = self.signature(0)
        state["tip"] = self.git.write_commit(tree, [state["tip"]], sig, sig, f"carrytool fold: {item}\n")
        state["next"] += 1
        state.pop("conflict")
        self.git.flush_objects()
        listed = scratch.listed()
        scratch.write_marker([*listed.get("files", []), *snapshot], bool(listed.get("created_root")))
        self.save(state)
        crash_point("continue:advanced")
        scratch.remove_files()
        outcome = self.advance(state)
        outcome.taken = taken
        return outcome

    def _tracked(self, state: dict, path: str) -> bool:
        """Upstream or a PR of the fold has a file at PATH: it is one of the inputs' on purpose."""
        commits = [state["upstream"], *(item["head"] for item in state["items"])]
        return any(self.git.blob_at(self.git.tree_of(commit), path) is not None for commit in commits)

    def _check_supersedes(self, state: dict) -> None:
        """The PRs the stopped fold began with (and their paths, in fold order) are still the manifest's
        `supersedes` (helper-88: one removed while the fold was stopped, `continue` folded it all the same,
        wrote a patch with it and a trailer without it, and sync then skipped the union for a conflict)."""
        began = [(int(item["pr"]), sorted(item["paths"])) for item in state["items"]]
        now = [(pr, sorted(globs)) for pr, globs in fold_order(self.manifest, self.entry)]
        if began == now:
            return
        before, after = dict(began), dict(now)
        what = [f"pr/{pr} added" for pr in after if pr not in before]
        what += [f"pr/{pr} removed" for pr in before if pr not in after]
        what += [f"pr/{pr}'s paths changed" for pr in after if pr in before and after[pr] != before[pr]]
        listed = ", ".join(f"pr/{pr}" + (f" ({', '.join(globs)})" if globs else "") for pr, globs in began)
        raise InputError(f"{self.entry.id}'s supersedes changed since this fold began ({', '.join(what) or 'reordered'}):"
                         " continuing would fold what the manifest no longer says",
                         hint=f"to keep what you did in the scratch tree, put supersedes back as the fold began ({listed}),"
                              f" {self.command('continue')}, then change it and {self.command('compose')} (what continue "
                              f"records is reused); {self.command('abort')} drops this stop's work (the stops before it "
                              "are recorded)")

    def abort(self) -> tuple[Path | None, list[str]]:
        """Drop a stopped fold: its state and the files carrytool wrote in its scratch tree. Works on a
        corrupt state too. Return the scratch and what was left in it (not carrytool's)."""
        try:
            state: dict | None = self.load()
        except InputError as error:
            state = None
            if not (self.state_path.exists() or self.state_path.is_symlink()):
                raise self._nothing_to_abort(error) from None
        root = Path(state["scratch"]) if state else self.scratch
        # the manifest first: killed before the state goes, an abort run again still knows what to put back
        self.took_back = self._take_back(state.get("added") if state else None)
        left = self.cleanup(root)
        return root, left

    def _nothing_to_abort(self, error: InputError) -> InputError:
        """ERROR as `abort` says it, with how to undo a finished `union new` (h239: it hinted `union compose`)."""
        if not self.entry.supersedes:
            return error
        patch = f" and delete its patch {self.manifest.path.parent / self.entry.patch}" if self.entry.patch else ""
        return InputError(f"no fold of {self.entry.id} under way: nothing to abort (the union as last composed stands)",
                          hint=f"to undo a `union new` that finished, take `- carry: {self.name}` out of "
                               f"{self.manifest.path}{patch} (recorded resolutions stay in the store); to "
                               f"compose it again: {self.command('compose')}")

    # -- state --------------------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.state_dir / "state.json"

    def save(self, state: dict) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        save_state(self.state_path, state)

    def load(self) -> dict:
        hint = f"{self.command('abort')} drops the fold (recorded resolutions stay), then {self.command('compose')}"
        try:
            return load_state(self.state_path, hint=hint)
        except FileNotFoundError:
            if not self.entry.supersedes:       # (only `abort` gets here with one: helper-93, it hinted compose)
                raise InputError(f"{self.entry.id} supersedes no PR, and no fold of it is under way") from None
            raise InputError(f"no fold of {self.entry.id} under way",
                             hint=self.command("compose")) from None

    def cleanup(self, scratch_root: Path) -> list[str]:
        """Remove what carrytool wrote: the scratch files its marker lists, the state files."""
        scratch = self._scratch(scratch_root)
        left = scratch.remove_files() if scratch.is_marked() else []
        crash_point("cleanup:scratch")
        for path in [self.state_path, self.state_dir / "index", *self.state_dir.glob(".state.json.*.tmp")]:
            if path.is_symlink() or path.is_file():
                path.unlink()
        for folder in (self.state_dir / "tree", self.state_dir):
            try:
                folder.rmdir()
            except OSError:
                pass
        return left
