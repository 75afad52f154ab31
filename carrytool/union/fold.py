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

import base64
import difflib
import hashlib
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from carrytool.errors import CarryError, ConflictError, FoldUnderWay, GitError, InputError, UnknownRef
from carrytool.gitlayer.git import REGULAR_MODES, Git, MergeResult, Signature, paths_of
from carrytool.gitlayer.urls import resolve_local
from carrytool.manifest import paths as pathmatch
from carrytool.manifest.edit import in_its_line_ends, update_union
from carrytool.manifest.load import parse_manifest
from carrytool.manifest.model import Entry, Manifest
from carrytool.manifest.safefile import refuse_symlink, write_atomic
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.blame import (
    conflicted_at,
    meets_conflict,
    meets_conflict_many,
    takes_file_away,
)
from carrytool.pipeline.landing import has_change
from carrytool.pipeline.provided import (
    Folded,
    LeftOut,
    UnionCheck,
    account_drops,
    drop_hint,
    left_out,
    out_of_reach,
    unreached,
)
from carrytool.pipeline.resolve import _fetch, namespace, patch_message
from carrytool.pipeline.scopes import is_python
from carrytool.pipeline.shadowed import folded_twice
from carrytool.pipeline.structured_tree import resolve_merge, without_resolved
from carrytool.pipeline.unbound import binding_of, bound_names, introduced, loose_names
from carrytool.union.resolutions import (
    Fixup,
    Store,
    align_resolutions,
    apply_resolutions,
    has_markers,
    split_conflicts,
)
from carrytool.union.reuse import (
    Content,
    Step,
    Upstream,
    apply_fixup,
    describe_edit,
    read_content,
    removed_upstream,
    resolve_step,
    why_asked,
)
from carrytool.union.scratch import MissingBlob, Scratch, _walk
from carrytool.union.state import load_state, save_state
from carrytool.union.upstream_edit import quote, show_both, upstream_removed

Notify = Callable[[str], None]


@dataclass
class FoldItem:
    pr: int
    head: str
    base: str
    paths: tuple[str, ...]
    title: str | None

    @property
    def id(self) -> str:
        return f"pr/{self.pr}"


@dataclass
class Outcome:
    """What a compose/continue did: finished (commit) or stopped (scratch, conflicts)."""

    name: str
    done: bool
    commit: str | None = None
    scratch: Path | None = None
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)        # files resolved from the store
    structured: list[dict[str, Any]] = field(default_factory=list)   # hunks resolved structurally (not recorded)
    unresolved_records: list[str] = field(default_factory=list)
    manifest_updated: bool = False
    folded: dict[int, str] = field(default_factory=dict)
    unused_records: int = 0
    unused: list[tuple[str, list[str]]] = field(default_factory=list)   # (file, entries) of each unused record
    edited_alone: list[str] = field(default_factory=list)   # files a recorded edit went into beside an unused record
    patch: str | None = None                               # the patch file a `patch:` union writes
    invocation: str = ""                                   # the -m/--repo to repeat in next steps


_INDEX_LINE = re.compile(rb"^index [0-9a-f]+\.\.[0-9a-f]+(?: [0-7]+)?\r?\n", re.MULTILINE)


def _comparable_patch(data: bytes) -> bytes:
    """A format-patch file without its `index` lines (git shortens their SHAs to a length that grows with the
    repository: helper-92, a patch nobody edited was refused once the repository had fetched more objects)."""
    return _INDEX_LINE.sub(b"", data)


def _same_patch(disk: bytes, wrote: bytes) -> bool:
    """DISK is WROTE but for `index` lines and, when every line of DISK ends in CRLF (a core.autocrlf
    checkout, which writes git's mixed line ends all CRLF: helper-94), line ends; otherwise a line given a
    CR is an edit (helper-93)."""
    disk, wrote = _comparable_patch(disk), _comparable_patch(wrote)
    if disk.count(b"\r\n") == disk.count(b"\n"):
        disk, wrote = disk.replace(b"\r\n", b"\n"), wrote.replace(b"\r\n", b"\n")
    return disk == wrote


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


class Union:
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

    def patch_edited(self) -> str | None:
        """Why a `patch:` union's file looks edited by hand since the last fold here wrote it (its message is
        that fold's, its changes are not), else None (helper-88: `union compose` replaced such an edit without
        a word, and `union status` said "up to date"). A patch another fold wrote (a colleague's refold:
        another message) or one this repository has no fold of is not judged."""
        if not self.entry.patch:
            return None
        path = self.manifest.base_dir / self.entry.patch
        last = self.git.ref_value(f"{namespace(self.manifest)}/carry/{self.name}")
        if last is None or path.is_symlink() or not path.is_file():
            return None
        data = path.read_bytes()
        wrote = self._patch_of(last)
        if _same_patch(data, wrote) or patch_message(data.replace(b"\r\n", b"\n")) != \
                patch_message(wrote.replace(b"\r\n", b"\n")):
            return None
        return (f"{self.entry.patch} is not what the last fold of {self.entry.id} wrote ({last[:12]}): the same "
                "message with other changes (edited by hand?)")

    def _patch_of(self, commit: str) -> bytes:
        """The patch file a `patch:` union's fold writes for COMMIT (and patch_edited compares with)."""
        return self.git.run("format-patch", "-1", "--stdout", "--zero-commit", "--no-signature", "--no-stat",
                            commit).stdout

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
                 "scratch": str(self.scratch), "manifest": str(self.manifest.path.resolve())}
        if added is not None:
            state["added"] = {"before": base64.b64encode(added[0]).decode(),
                              "written": hashlib.sha256(added[1]).hexdigest()}
        return self.advance(state)

    def advance(self, state: dict[str, Any], *, dry: bool = False) -> Outcome:
        items = [FoldItem(**{**raw, "paths": tuple(raw["paths"])}) for raw in state["items"]]
        records = self.store.load(self.name)
        fixups = self.store.load_fixups(self.name)
        outcome = Outcome(self.name, done=False, reused=state["reused"], invocation=self.invocation,
                          structured=state.setdefault("structured", []))
        # [file, item]: a recorded edit of ITEM went into FILE (a state of c8b6311's parent held bare files:
        # helper-93, continue crashed on it; they are dropped)
        edited = state["edited"] = [e for e in state.get("edited", []) if isinstance(e, list) and len(e) == 2]
        while state["next"] < len(items):
            item = items[state["next"]]
            merged = self.git.merge_trees([(state["tip"], self.only_paths(item))])[0]
            merged = self.merge_structurally(merged, item, state)
            step = resolve_step(self.git, merged, records, [f for f in fixups if f.item == item.id], self.notify,
                                self.upstream_of(state))
            state["used_keys"] += step.used
            if step.unresolved:
                return self.stop(state, item, merged, step, outcome, dry)
            state["reused"] += [p for p in step.reused if p not in state["reused"]]
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
        outcome.conflicts = conflicts
        outcome.reused = sorted(set(outcome.reused) | set(step.reused))
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
        names them (pipeline.compose `_describe_conflicts`): those that changed PATH or a file under it (the
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
        for note in self.left_out(state["upstream"], commit, items):
            self.notify(note)
        for note in self.unbound(state, commit, items):
            self.notify(note)
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

    def unbound(self, state: dict, commit: str, items: list[FoldItem]) -> list[str]:
        """A name the union's result (COMMIT) loads in a Python file it changes that nothing binds there, while
        upstream's version of the file and each folded PR head's that changes it bind it or do not load it: the
        fold introduced it, by a resolution (at a stop, or replayed from the store), a recorded edit, or where
        the PRs' changes merged (one drops an import another's new line uses). Sync sees the union as one entry
        and cannot tell (helper-147: `pruned_tensor / densty`, a typo in a resolution, passed continue and sync).
        Every such file is read, not only those that stopped: a resolution replayed on a refold, and two PRs that
        merge cleanly, leave names unbound as surely; a file some PR's head has as the result is skipped (that
        head loads the same names). pipeline.unbound's reading: builtins, star imports (nothing said of the file),
        `global`/`nonlocal`, class bodies, comprehensions, `except ... as`, walrus, `match` captures, `del` and
        conditional imports as Python binds them. Each a `warning: ` line with the likely fix; never a refusal."""
        upstream = state["upstream"]
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(upstream, commit)])
        notes = []
        for change in diffs[-1]:
            if change.status == "D" or change.new_mode not in ("100644", "100755") or not is_python(change.path):
                continue
            path = change.path
            result = self.git.read_blob(change.new_oid)
            if not loose_names(result):         # the usual answer, from symtable alone: no file is parsed
                continue
            heads = [(item, self.git.file_at(item.head, path)) for item, changes in zip(items, diffs)
                     if any(path in c.paths for c in changes)
                     and (not item.paths or pathmatch.matches_any(item.paths, path))]
            if any(data == result for _item, data in heads):
                continue
            before = self.git.file_at(upstream, change.old_path or path)
            found = introduced(result, [before, *(data for _item, data in heads)])
            if not found:
                continue
            lines = result.split(b"\n")
            having = ["upstream's"] if before is not None else []
            having += [f"{i.id}'s" for i, data in heads if data is not None]
            whose = "a file only the union has" if not having else (
                f"{', '.join(having[:-1])} and {having[-1]} versions each bind it or do not load it"
                if len(having) > 1 else f"{having[0]} version binds it or does not load it") + \
                ": the fold made it unbound"
            for name, line in sorted(found.items(), key=lambda item: (item[1], item[0])):
                text = lines[line - 1] if line <= len(lines) else b""
                notes.append(f"warning: {path}:{line}: the union loads `{name}`, which nothing binds in the file "
                             f"({whose}); NameError when line {line} runs. Likely fix: "
                             f"{self._rebind(name, result, before, heads)}{self._made_where(state, path, name, text)}")
        return notes

    def _rebind(self, name: str, result: bytes, before: bytes | None,
                heads: list[tuple[FoldItem, bytes | None]]) -> str:
        """What would bind NAME again: the binding upstream's version (BEFORE) or a PR head's has, else a name the
        file (RESULT) binds that NAME looks like a typo of."""
        for who, data in [("upstream's version", before), *((f"{i.id}'s head", d) for i, d in heads)]:
            found = binding_of(data, name) if data is not None else None
            if found:
                return f"bring back its binding, `{found[1][:160]}` (line {found[0]} of {who})"
        close = difflib.get_close_matches(name, sorted(bound_names(result)), n=1, cutoff=0.75)
        if close:
            return f"`{close[0]}`, which the file binds (a typo?)"
        return f"bind `{name}`, or correct the name"

    def _made_where(self, state: dict, path: str, name: str, text: bytes) -> str:
        """Where to correct NAME, loaded at the line TEXT of PATH, as a clause: a hunk resolution the fold used
        that has the line, or whose conflict had the name where its resolution has not (the binding dropped
        there: an import a side held); else an edit recorded for a PR that added the line; else the merge of the
        PRs' changes."""
        compose = self.command("compose")
        word = re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"\b")
        records = self.store.records_of(self.name, set(state.get("used_keys", [])), path)
        resolution = {p: str(doc.get("resolution", "")).encode("utf-8", "surrogateescape") for p, doc in records}
        for record, doc in records:
            if text.strip() and text.strip() in {line.strip() for line in resolution[record].split(b"\n")}:
                return f"; the line is your recorded resolution {record.absolute()}: correct it there (its " \
                    f"`resolution`), then {compose}"
        for record, doc in records:
            sides = b"\n".join(str(doc.get(k) or "").encode("utf-8", "surrogateescape") for k in ("ours", "theirs"))
            if word.search(sides) and not word.search(resolution[record]):
                return f"; a conflict you resolved there had `{name}` and your resolution has not (the binding " \
                    f"dropped?): correct it in {record.absolute()} (its `resolution`), then {compose}"

        def stripped(side: Content | None) -> set[bytes]:
            return {line.strip() for line in side[1].split(b"\n")} if side else set()

        for fixup in self.store.load_fixups(self.name) if text.strip() else ():
            if fixup.file == path and text.strip() in stripped(fixup.result) - stripped(fixup.base):
                where = self.store.fixup_path(self.name, fixup).absolute()
                return f"; the line is your edit recorded for {fixup.item} in {where}: correct it there (its " \
                    f"`result`), then {compose}"
        return ("; no recorded resolution or edit has the line or dropped the name (the PRs' changes merged there): "
                "correct it at a stop of the fold, or carry the fix as an entry of its own after the union")

    def left_out(self, upstream: str, commit: str, items: list[FoldItem]) -> list[str]:
        """The hunks of the folded ITEMS the union COMMIT lacks, outside the regions it reconciled (another
        PR's, or its own, change meets them: pipeline.provided), as sync will warn of them (helper-128: the
        side a stop was resolved to dropped a third PR's method, and nothing said so), each with the YAML that
        declares it dropped on purpose; those its `drops` declare, with their why; and the stale drops
        (helper-135). One line each, a warning prefixed `warning: `."""
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(upstream, commit)])
        own = set(paths_of(diffs[-1]))
        # as sync's account_provided: a PR's file the union does not change is left out whole (one item, which
        # only a drop without `in` covers) unless the union's tree has the PR's change there anyway; the hunks
        # are looked for only in the other files (helper-147: continue hinted a drop per hunk of a file the union
        # left alone, which sync then called stale, and the file still provided-absent)
        files, folded = [], []
        for item, changes in zip(items, diffs):
            paths = {p for c in changes for p in c.paths if not item.paths or pathmatch.matches_any(item.paths, p)}
            whole = {p for p in paths - own if not has_change(self.git, commit, upstream, changes, p)}
            files += [LeftOut(item.id, path, None, (), True, item.head) for path in sorted(whole)]
            folded.append(Folded(item.id, item.base, item.head, changes, frozenset(paths - whole)))
        [found] = left_out(self.git, [UnionCheck(upstream, commit, diffs[-1], commit, tuple(folded))])
        supersedes = self.entry.supersedes
        drops = account_drops(files + found, supersedes)
        notes = [f"warning: the union does not change {lost.file}, which {lost.pr} changes: the PR's change there is "
                 f"left out (the file taken back as it was at a stop?): sync will warn provided-absent; if on purpose, "
                 f"{drop_hint(lost, supersedes)}"
                 if lost.lines is None and not lost.whole else
                 f"warning: the union {lost.lacking()}, in no region it reconciled "
                 f"({lost.region()}): dropped by a side taken at a stop? sync will warn provided-absent; if on "
                 f"purpose, {drop_hint(lost, supersedes)}" for lost in drops.absent]
        notes += [f"dropped on purpose: {lost.pr}'s {'change to ' if lost.lines is None else 'hunk '}"
                  f"{lost.describe()}: {drop.why}" for lost, drop in drops.dropped]
        for number, drop in drops.stale:
            lost = out_of_reach(number, drop, drops.absent)
            said = f"warning: pr/{number}'s drop of {drop.describe()} (manifest line {drop.line})"
            notes.append(f"{said} covers nothing: {unreached(lost, drop)} (sync will warn stale-drop)" if lost else
                         f"{said} covers no hunk the union lacks verbatim: sync will warn stale-drop; remove or fix it")
        return notes

    def message(self, state: dict, items: list[FoldItem]) -> str:
        """The drafted union message (explain's), describing this fold: the heads it just folded."""
        from carrytool.review.evidence import EntryFacts
        from carrytool.review.explain import draft_union_message

        heads = {item.pr: item.head for item in items}
        union = replace(self.entry, supersedes=tuple(replace(s, head=heads.get(s.pr, s.head))
                                                     for s in self.entry.supersedes))
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(state["upstream"], state["tip"])])
        facts = {}
        for item, changes in zip(items, diffs):
            entry = self.manifest.entry(item.id) or Entry(kind="pr", number=item.pr)
            if not entry.title:
                subject = str(self.git.commit_info(item.head)["message"]).split("\n", 1)[0]
                entry = replace(entry, title=subject or None)
            facts[item.id] = EntryFacts(entry, None, item.head, item.base, changes)
        facts[union.id] = EntryFacts(union, None, None, state["upstream"], diffs[-1])
        return draft_union_message(self.manifest, facts, union)

    def update_manifest(self, commit: str, folded: dict[int, str]) -> bool:
        """Write the patch file (a `patch:` union) and the manifest, each by rename; True if it changed."""
        text = self.manifest.path.read_bytes().decode("utf-8")
        if self.entry.patch:
            write_atomic(self.manifest.base_dir / self.entry.patch, self._patch_of(commit))
            crash_point("finish:patch")
            new_text = in_its_line_ends(text, lambda lf: update_union(lf, self.entry.index, commit=None,
                                                                      folded=folded))
        else:
            new_text = in_its_line_ends(text, lambda lf: update_union(lf, self.entry.index, commit=commit,
                                                                      folded=folded))
        if new_text == text:
            return False
        parse_manifest(new_text, self.manifest.path)      # never write a manifest that does not load
        write_atomic(self.manifest.path, new_text.encode("utf-8"))
        return True

    # -- continue / abort ---------------------------------------------------------------------------
    def resume(self) -> Outcome:
        """Take every change made in the scratch tree, record it, and go on with the fold."""
        state = self.load()
        conflict = state.get("conflict")
        if self.scratch_option and Path(state["scratch"]) != self.scratch_option:
            raise InputError(f"this fold's scratch tree is {state['scratch']}, not {self.scratch_option}",
                             hint=f"{self.command('continue')} (without --scratch)")
        self._check_supersedes(state)
        if not conflict:        # interrupted after the last continue advanced the state: go on
            return self.advance(state)
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
        labels = self._labels(conflict)
        still += [p for p, (mode, data) in sorted(snapshot.items()) if p not in kinds and mode != "120000"
                  and labels and self._more_labels(data, shown.get(p), labels)]
        if still:
            raise ConflictError(f"conflict markers remain in {', '.join(still)} (in {scratch.root})",
                                hint=f"resolve them, then: {self.command('continue')}")
        edits: dict[str, tuple[str, str] | None] = {}
        for path, (mode, data) in snapshot.items():
            oid = self.git.write_blob(data)
            if shown.get(path) != (mode, oid):
                edits[path] = (mode, oid)
        edits.update({p: None for p, (mode, _oid) in shown.items() if mode != "160000" and p not in snapshot})
        self._ask_waiting(state, conflict, snapshot, scratch)
        for path, content in self.record(state, conflict, snapshot, sorted(set(edits) | set(kinds))).items():
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
        return self.advance(state)

    def _more_labels(self, data: bytes, shown: tuple[str, str] | None, labels: set[bytes]) -> bool:
        """Whether DATA holds more of LABELS (marker lines) than SHOWN, (mode, oid) of the file the fold
        showed at its path (nothing, a link, a submodule: none)."""
        count = _count_lines(data, labels)
        if not count:
            return False
        before = self.git.read_blob(shown[1]) if shown and shown[0] in REGULAR_MODES else b""
        return count > _count_lines(before, labels)

    def _labels(self, conflict: dict) -> set[bytes]:
        """The marker lines (`<<<<<<< ...`, `>>>>>>> ...`, without CR) of CONFLICT's shown files."""
        labels: set[bytes] = set()
        for item in conflict["files"]:
            found = read_content(self.git, conflict["shown"], item["file"]) if item["kind"] == "content" else None
            if found is not None and found[0] != "120000":
                labels.update(line.rstrip(b"\r") for line in found[1].split(b"\n")
                              if line.startswith((b"<<<<<<< ", b">>>>>>> ")))
        return labels

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

    def _ask_waiting(self, state: dict, conflict: dict, snapshot: dict[str, Content], scratch: Scratch) -> None:
        """Refuse to take a recorded edit that waited (`conflict["waiting"]`) and, applied to the file as the
        user left it, removes lines upstream has now that it did not remove as upstream's when recorded
        (helper-153: `continue` applied it and recorded the loss as deliberate). Each such file is written
        to the scratch tree with both versions there, it no longer waits (what the user leaves is recorded),
        and the user decides, then continues again. Nothing is recorded before."""
        item = f"pr/{conflict['pr']}"
        upstream = self.upstream_of(state)
        asked: dict[str, str] = {}
        for fixup in self.store.load_fixups(self.name):
            result = snapshot.get(fixup.file)
            if fixup.item != item or fixup.file not in conflict.get("waiting", []) or result is None \
                    or result[0] == "120000":
                continue
            merged, clean = apply_fixup(self.git, fixup, result)
            removed = removed_upstream(self.git, upstream, fixup, result, merged) if clean and merged else []
            if not removed or merged is None:
                continue
            shown, where = show_both(result[1], merged[1], {n for n, _ in removed}, ours=f"{upstream.label} now",
                                     theirs=f"your recorded edit ({item})")
            scratch.rewrite(fixup.file, shown)
            asked[fixup.file] = (f"{fixup.file}: your recorded edit outside the conflict hunks ({item}), applied after "
                                 f"your resolution, would remove line(s) {upstream.label} has now, {why_asked(fixup)}: "
                                 "the scratch file now has the edit, with both versions shown where upstream's lines "
                                 f"are these:\n{quote(where)}It was:\n{describe_edit(fixup)}")
        if not asked:
            return
        conflict["waiting"] = [p for p in conflict["waiting"] if p not in asked]
        self.save(state)
        raise ConflictError("".join(asked.values()) + "nothing was recorded",
                            hint=f"keep upstream's lines or your edit (between the markers), then: "
                                 f"{self.command('continue')}")

    def record(self, state: dict, conflict: dict, snapshot: dict[str, Content], paths: list[str]
               ) -> dict[str, Content]:
        """Record the resolution of each conflict hunk, and each other edit as a fixup of the folded PR.
        A recorded edit that waited (it did not apply beside the new hunks: `conflict["waiting"]`) is
        applied 3-way to the file as the user left it, now that its hunks are resolved: returned, path ->
        the file with it, for the fold's tree. One that does not apply there either is said, not dropped."""
        self.store.preflight()
        records = self.store.load(self.name)
        kinds = {c["file"]: c for c in conflict["files"]}
        item = f"pr/{conflict['pr']}"
        waiting = {f.file: f for f in self.store.load_fixups(self.name)
                   if f.item == item and f.file in conflict.get("waiting", [])}
        applied: dict[str, Content] = {}
        for path in paths:
            result = snapshot.get(path)
            old, unapplied = waiting.get(path), False
            if old is not None and result is not None and result[0] != "120000":
                merged, clean = apply_fixup(self.git, old, result)
                if clean and merged is not None:
                    if merged != result:
                        self.notify(f"{path}: your recorded edit outside the conflict hunks ({item}) is applied "
                                    "after your resolution")
                        applied[path] = result = merged
                else:
                    unapplied = True
            info = kinds.get(path)
            shown = read_content(self.git, conflict["shown"], path)
            if info and info["kind"] == "content" and shown and result and result[0] != "120000":
                found = align_resolutions(shown[1], result[1])
                hunks = {p.key: p for p in split_conflicts(shown[1]) or [] if not isinstance(p, bytes)}
                for key, text in found.items():
                    self.store.record(self.name, path, key, hunks.get(key), text, info["entries"])
                    state["used_keys"].append(key)
                records.update(found)
                # the file as the fold made it, every hunk resolved as recorded, without a recorded edit
                # outside the hunks that the scratch tree showed applied (that edit is the fixup again)
                made = read_content(self.git, conflict["pre"], path) or shown
                base: Content | None = (made[0], apply_resolutions(made[1], records)[0] or b"")
            elif info and info["kind"] == "content" and shown:
                # deleted: the file as the fold made it (git's own labels, as the next fold makes it again)
                base = read_content(self.git, conflict["pre"], path) or shown
            else:
                base = read_content(self.git, conflict["pre"], path)
            kind = info["kind"] if info else ""
            if unapplied and old is not None:
                self.notify(f"{path}: your recorded edit outside the conflict hunks ({item}) does not apply to the "
                            "file as you left it; " + ("it is kept in the store and the next refold stops on it (this "
                                                       "union does not have it)" if base == result else
                                                       "your edits to the file replace it in the store")
                            + ". It was:\n" + describe_edit(old))
                if base == result:
                    continue
            if base == result and kind == "fixup":
                # the stop showed your recorded edit beside the fold's file, and you kept the fold's: the edit
                # changes nothing now, and a record of it would only stand in the way of a later stop (helper-147)
                self.store.record_fixup(self.name, Fixup(item, path, base, base))   # removes it
                self.notify(f"{path}: you left the file as the fold had it, without your recorded edit ({item}): "
                            "the edit is removed from the store (the next refold does not apply it)")
            elif base == result and not (info and info["kind"] != "content"):
                self.store.record_fixup(self.name, Fixup(item, path, base, base))   # drops an old one
            else:
                self.store.record_fixup(self.name, Fixup(item, path, base, result, kind,
                                                         self._upstream_removed(state, path, base, result)),
                                        keep_same=True)
        return applied

    def upstream_of(self, state: dict) -> Upstream:
        """Where the fold of STATE starts: upstream's tree, named as its branch."""
        return Upstream(self.git.tree_of(state["upstream"]), f"upstream {self.manifest.upstream.branch}")

    def _upstream_removed(self, state: dict, path: str, base: Content | None, result: Content | None
                          ) -> tuple[bytes, ...]:
        """The lines of upstream's the edit of PATH (BASE -> RESULT; None: deleted) removes, kept with it: a
        refold that finds it removing others stops (reuse.resolve_step; helper-147). A deletion removes every
        line of upstream's the file had (helper-153: none were kept, and a refold never asked)."""
        if base is None:
            return ()
        theirs = read_content(self.git, self.upstream_of(state).tree, path)
        return tuple(text for _line, text in upstream_removed(theirs[1] if theirs else None, base[1],
                                                              result[1] if result else b""))

    def abort(self) -> tuple[Path | None, list[str]]:
        """Drop a stopped fold: its state and the files carrytool wrote in its scratch tree. Works on a
        corrupt state too. Return the scratch and what was left in it (not carrytool's)."""
        try:
            state: dict | None = self.load()
        except InputError:
            state = None
            if not (self.state_path.exists() or self.state_path.is_symlink()):
                raise
        root = Path(state["scratch"]) if state else self.scratch
        # the manifest first: killed before the state goes, an abort run again still knows what to put back
        self.took_back = self._take_back(state.get("added") if state else None)
        left = self.cleanup(root)
        return root, left

    def take_back(self, before: bytes, written: str) -> bool:
        """Put the manifest back as BEFORE, what it was before `union new` added this entry, when it is still
        what that command wrote (WRITTEN: its SHA-256): a manifest naming a patch nothing wrote fails every
        sync. Whether it did; what stops it (the manifest made a link since) is said."""
        try:
            if hashlib.sha256(self.manifest.path.read_bytes()).hexdigest() != written:
                # edited since: the entry stays, said (helper-88: abort said nothing, and the next sync stopped
                # on a patch no fold wrote)
                # ... unless the fold finished and wrote it itself (helper-92: interrupted right after, the
                # user was told to remove a finished union): then the entry names what the fold made
                patch = self.manifest.base_dir / self.entry.patch if self.entry.patch else None
                unfinished = not patch.exists() if patch is not None else \
                    self.git.ref_value(f"{namespace(self.manifest)}/carry/{self.name}") is None
                if unfinished:
                    missing = f"; it names {self.entry.patch}, which no fold wrote, so sync stops on it (exit 2) " \
                        "until the entry goes or a fold of it finishes" if patch is not None else ""
                    then = f", or {self.command('compose')}" if self.entry.supersedes else ""
                    self.notify(f"left {self.entry.id} in {self.manifest.path}: the manifest was edited since `union "
                                f"new` added the entry{missing}; remove it by hand{then}")
                return False
            write_atomic(self.manifest.path, before)
        except OSError:
            return False
        except CarryError as exc:
            self.notify(f"left {self.entry.id} in {self.manifest.path}: {exc.message}")
            return False
        return True

    def _take_back(self, added: Any) -> bool:
        """`take_back` for the fold being aborted when `union new` started it (ADDED, from the state); the
        fold is aborted all the same."""
        if not isinstance(added, dict):
            return False
        try:
            before, written = base64.b64decode(str(added["before"]), validate=True), str(added["written"])
        except (ValueError, KeyError):
            return False
        return self.take_back(before, written)

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


def _count_lines(data: bytes, lines: set[bytes]) -> int:
    """How many lines of DATA (without a CR at the end) are among LINES."""
    return sum(1 for line in data.split(b"\n") if line.rstrip(b"\r") in lines)
