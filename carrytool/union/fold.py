"""`carrytool union`: compose and refold a union commit from the PRs it supersedes, reusing resolutions.

A fold merges the current head of each superseded PR (only its superseded paths, in manifest order)
onto the upstream head, in memory. A conflict first looks in the resolution store; what the store
cannot resolve stops the fold: the merge result is written to a scratch work tree (never the user's:
its own index, no HEAD), and `union continue` records the user's resolution and goes on. The finished
union is one commit on upstream, kept reachable under refs/carrytool/, and the manifest is updated in
place (the new `commit`, each PR's folded `head`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from carrytool.errors import ConflictError, InputError, UnknownRef
from carrytool.gitlayer.git import Git, MergeResult, Signature
from carrytool.gitlayer.urls import resolve_local
from carrytool.manifest import paths as pathmatch
from carrytool.manifest.edit import update_union
from carrytool.manifest.load import load_manifest
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.resolve import _fetch, namespace
from carrytool.union.resolutions import (
    Store,
    apply_resolutions,
    extract_resolutions,
    has_markers,
    split_conflicts,
)

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
    unresolved_records: list[str] = field(default_factory=list)
    manifest_updated: bool = False
    folded: dict[int, str] = field(default_factory=dict)
    unused_records: int = 0


def union_entry(manifest: Manifest, name: str) -> Entry:
    entry = manifest.find_entry(name if name.startswith("carry/") else f"carry/{name}")
    if entry is None or entry.kind != "carry":
        carries = ", ".join(e.name for e in manifest.entries if e.kind == "carry") or "none"
        raise InputError(f"no carry entry '{name}' in {manifest.path} (carries: {carries})")
    if not entry.supersedes:
        raise InputError(f"{entry.id} supersedes no PR: there is nothing to fold",
                         hint="list the PRs it provides under `supersedes:`")
    return entry


def fold_order(manifest: Manifest, entry: Entry) -> list[tuple[int, tuple[str, ...]]]:
    """The superseded PRs in manifest order (entries first, then the rest in supersedes order)."""
    position = {e.number: i for i, e in enumerate(manifest.entries) if e.kind == "pr"}
    items = [(s.pr, s.paths) for s in entry.supersedes]
    return sorted(items, key=lambda item: (position.get(item[0], len(position)), entry.supersedes.index(
        next(s for s in entry.supersedes if s.pr == item[0]))))


class Union:
    def __init__(self, manifest: Manifest, git: Git, name: str, *, notify: Notify | None = None,
                 scratch: Path | None = None) -> None:
        self.manifest = manifest
        self.git = git
        self.entry = union_entry(manifest, name)
        self.name = self.entry.name or name
        self.notify = notify or (lambda _msg: None)
        self.state_dir = git.git_dir / "carrytool" / "union" / self.name
        self.scratch = scratch or self.state_dir / "tree"
        self.store = Store(manifest.base_dir / "resolutions", ".".join(map(str, git.version)))

    # -- inputs -------------------------------------------------------------------------------------
    def resolve(self, offline: bool) -> tuple[str, list[FoldItem]]:
        ns = namespace(self.manifest)
        order = fold_order(self.manifest, self.entry)
        if not offline:
            url = resolve_local(self.manifest.upstream.url, self.manifest.base_dir)
            specs = {f"+refs/heads/{self.manifest.upstream.branch}": f"{ns}/upstream"}
            specs.update({f"+{self.manifest.upstream.pr_ref_for(pr)}": f"{ns}/pr/{pr}" for pr, _ in order})
            absent = _fetch(self.git, url, specs, retry_delay=1.0)
            if absent:
                raise UnknownRef(f"upstream has no {', '.join(s.lstrip('+') for s in sorted(absent))}",
                                 hint=f"drop the PR from {self.entry.id}'s supersedes, or pin it")
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
    def compose(self, *, offline: bool = False) -> Outcome:
        if self.state_path.exists():
            raise ConflictError(f"a fold of {self.entry.id} is already under way in {self.scratch}",
                                hint=f"carrytool union continue {self.name}  (or: carrytool union abort {self.name})")
        upstream, items = self.resolve(offline)
        state = {"name": self.name, "upstream": upstream, "items": [item.__dict__ for item in items],
                 "next": 0, "tip": upstream, "touched": {}, "reused": [], "used_keys": []}
        return self.advance(state)

    def advance(self, state: dict[str, Any], *, dry: bool = False) -> Outcome:
        items = [FoldItem(**{**raw, "paths": tuple(raw["paths"])}) for raw in state["items"]]
        records = self.store.load(self.name)
        outcome = Outcome(self.name, done=False, reused=state["reused"])
        while state["next"] < len(items):
            item = items[state["next"]]
            merged = self.git.merge_trees([(state["tip"], self.only_paths(item))])[0]
            tree = merged.tree
            if not merged.clean:
                tree, unresolved, reused, used = self.from_store(merged, records)
                state["used_keys"] += used
                if unresolved:
                    return self.stop(state, item, merged, unresolved, outcome, dry)
                state["reused"] += reused
            for change in self.git.diff_trees([(state["tip"], tree)])[0]:
                for path in change.paths:
                    state["touched"].setdefault(path, []).append(item.id)
            sig = self.signature(0)
            state["tip"] = self.git.write_commit(tree, [state["tip"]], sig, sig, f"carrytool fold: {item.id}\n")
            state["next"] += 1
        outcome.unused_records = len(set(records) - set(state["used_keys"]))
        return self.finish(state, items, outcome, dry)

    def from_store(self, merged: MergeResult, records: dict[str, bytes]) -> tuple[str, list[str], list[str], list[str]]:
        """Resolve what the store can, file by file, all or nothing; return (tree, unresolved, reused, keys)."""
        edits: dict[str, tuple[str, str] | None] = {}
        unresolved, reused, used = [], [], []
        for path in merged.conflicted_paths:
            found = self.git.blob_at(merged.tree, path)
            data = self.git.read_blob(found[1]) if found else b""
            parts = split_conflicts(data) if found and has_markers(data) else None
            if parts is None:
                unresolved.append(path)
                continue
            resolved, missing = apply_resolutions(data, records)
            if resolved is None:
                unresolved.append(path)
                if records:
                    self.notify(f"{path}: {len(missing)} conflict hunk(s) are not in the resolution store "
                                "(new, or changed since recorded); nothing of this file was taken from it")
                continue
            used += [p.key for p in parts if not isinstance(p, bytes)]
            edits[path] = (found[0], self.git.write_blob(resolved))  # type: ignore[index]
            reused.append(path)
        tree = self.git.edit_tree(merged.tree, edits) if edits and not unresolved else merged.tree
        if unresolved:
            reused = []
        return tree, unresolved, reused, used

    def stop(self, state: dict, item: FoldItem, merged: MergeResult, unresolved: list[str], outcome: Outcome,
             dry: bool) -> Outcome:
        earlier = [FoldItem(**{**raw, "paths": tuple(raw["paths"])}) for raw in state["items"][:state["next"]]]
        conflicts = [{"file": path, "entries": self.collisions(path, item, earlier, state),
                      "kind": "content" if self._has_markers(merged.tree, path) else "other"}
                     for path in unresolved]
        outcome.conflicts = conflicts
        if dry:
            return outcome
        state["conflict"] = {"pr": item.pr, "tree": merged.tree, "files": conflicts}
        self.checkout(merged.tree)
        self.relabel(conflicts, ours=f"the union so far ({', '.join(i.id for i in earlier) or 'upstream'})",
                     theirs=item.id)
        outcome.scratch = self.scratch
        self.save(state)
        return outcome

    def collisions(self, path: str, item: FoldItem, earlier: list[FoldItem], state: dict) -> list[str]:
        """The earlier PRs whose own change to PATH conflicts with ITEM's (pairwise, on upstream)."""
        touching = [e for e in earlier if e.id in state["touched"].get(path, [])]
        if not touching:
            return [item.id]
        upstream = state["upstream"]
        onto = self.git.merge_trees([(upstream, self.only_paths(e)) for e in touching])
        sig = self.signature(0)
        applied = [self.git.write_commit(r.tree, [upstream], sig, sig, "carrytool: pair probe\n") for r in onto]
        head = self.only_paths(item)
        pairs = self.git.merge_trees([(commit, head) for commit in applied])
        hits = [e.id for e, r in zip(touching, pairs) if path in r.conflicted_paths]
        return (hits or [e.id for e in touching]) + [item.id]

    def _has_markers(self, tree: str, path: str) -> bool:
        found = self.git.blob_at(tree, path)
        return bool(found) and has_markers(self.git.read_blob(found[1]))  # type: ignore[index]

    def finish(self, state: dict, items: list[FoldItem], outcome: Outcome, dry: bool) -> Outcome:
        tree = self.git.tree_of(state["tip"])
        when = max(int(self.git.commit_info(sha)["committer_time"]) for sha in  # type: ignore[call-overload]
                   [state["upstream"], *(i.head for i in items)])
        message = self.message(state, items)
        commit = self.git.write_commit(tree, [state["upstream"]], self.signature(when), self.signature(when), message)
        outcome.done, outcome.commit = True, commit
        outcome.folded = {item.pr: item.head for item in items}
        if dry:
            return outcome
        ns = namespace(self.manifest)
        self.git.update_ref(f"{ns}/carry/{self.name}", commit, self.git.ref_value(f"{ns}/carry/{self.name}"),
                            "carrytool union")
        outcome.manifest_updated = self.update_manifest(commit, outcome.folded)
        self.cleanup()
        return outcome

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
            facts[item.id] = EntryFacts(entry, None, item.head, item.base, changes)
        facts[union.id] = EntryFacts(union, None, None, state["upstream"], diffs[-1])
        return draft_union_message(self.manifest, facts, union)

    def update_manifest(self, commit: str, folded: dict[int, str]) -> bool:
        text = self.manifest.path.read_text(encoding="utf-8")
        if self.entry.patch:
            patch = self.git.run("format-patch", "-1", "--stdout", "--zero-commit", "--no-signature",
                                 "--no-stat", commit).stdout
            target = self.manifest.base_dir / self.entry.patch
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(patch)
            new_text = update_union(text, self.entry.index, commit=None, folded=folded)
        else:
            new_text = update_union(text, self.entry.index, commit=commit, folded=folded)
        if new_text == text:
            return False
        load_check = self.manifest.path.with_name(self.manifest.path.name + ".new")
        load_check.write_text(new_text, encoding="utf-8")
        try:
            load_manifest(load_check)
        finally:
            load_check.unlink(missing_ok=True)
        self.manifest.path.write_text(new_text, encoding="utf-8")
        return True

    # -- continue / abort ---------------------------------------------------------------------------
    def resume(self) -> Outcome:
        state = self.load()
        conflict = state.get("conflict")
        if not conflict:
            raise InputError(f"no stopped fold of {self.entry.id}", hint=f"carrytool union compose {self.name}")
        scratch = Path(state.get("scratch", self.scratch))
        edits: dict[str, tuple[str, str] | None] = {}
        still = []
        for item in conflict["files"]:
            path = item["file"]
            target = scratch / path
            if not target.exists():
                edits[path] = None
                continue
            data = target.read_bytes()
            if has_markers(data):
                still.append(path)
                continue
            mode = "100755" if target.stat().st_mode & 0o111 else "100644"
            edits[path] = (mode, self.git.write_blob(data))
            state["used_keys"] += self.record(conflict["tree"], path, data, item["entries"])
        if still:
            raise ConflictError(f"conflict markers remain in {', '.join(still)} (in {scratch})",
                                hint=f"resolve them, then: carrytool union continue {self.name}")
        tree = self.git.edit_tree(conflict["tree"], edits)
        for path in edits:
            state["touched"].setdefault(path, []).append(f"pr/{conflict['pr']}")
        sig = self.signature(0)
        state["tip"] = self.git.write_commit(tree, [state["tip"]], sig, sig, f"carrytool fold: pr/{conflict['pr']}\n")
        state["next"] += 1
        state.pop("conflict")
        shutil.rmtree(scratch, ignore_errors=True)
        return self.advance(state)

    def record(self, tree: str, path: str, resolved: bytes, entries: list[str]) -> list[str]:
        """Store the resolution of each conflict hunk of PATH; return the keys recorded."""
        found = self.git.blob_at(tree, path)
        conflicted = self.git.read_blob(found[1]) if found else b""
        parts = split_conflicts(conflicted)
        hunks = {p.key: p for p in parts or [] if not isinstance(p, bytes)}
        extracted = extract_resolutions(conflicted, resolved) if parts else None
        if extracted is None:
            self.notify(f"{path}: edits outside the conflict hunks cannot be recorded hunk by hunk; "
                        "the resolution is used for this fold only")
            return []
        for key, text in extracted.items():
            self.store.record(self.name, path, key, hunks.get(key), text, entries)
        return list(extracted)

    def abort(self) -> Path:
        if not self.state_path.exists():
            raise InputError(f"no fold of {self.entry.id} to abort")
        state = self.load()
        scratch = Path(state.get("scratch", self.scratch))
        self.cleanup(scratch)
        return scratch

    # -- state --------------------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.state_dir / "state.json"

    def save(self, state: dict) -> None:
        state["scratch"] = str(self.scratch)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.state_path.write_text(json.dumps(state, indent=2) + "\n")

    def load(self) -> dict:
        try:
            return json.loads(self.state_path.read_text())
        except FileNotFoundError:
            raise InputError(f"no fold of {self.entry.id} under way",
                             hint=f"carrytool union compose {self.name}") from None

    def cleanup(self, scratch: Path | None = None) -> None:
        shutil.rmtree(scratch or self.scratch, ignore_errors=True)
        shutil.rmtree(self.state_dir, ignore_errors=True)

    def relabel(self, conflicts: list[dict], *, ours: str, theirs: str) -> None:
        """Name the sides of each conflict in the scratch files (git labels them with bare SHAs)."""
        for conflict in conflicts:
            target = self.scratch / conflict["file"]
            if conflict["kind"] != "content" or not target.is_file():
                continue
            lines = target.read_bytes().split(b"\n")
            for i, line in enumerate(lines):
                if line.startswith(b"<<<<<<< "):
                    lines[i] = b"<<<<<<< " + ours.encode()
                elif line.startswith(b">>>>>>> "):
                    lines[i] = b">>>>>>> " + theirs.encode()
            target.write_bytes(b"\n".join(lines))

    def checkout(self, tree: str) -> None:
        """Write TREE into the scratch directory with a private index (no HEAD, not the user's index)."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(parents=True)
        index = self.state_dir / "index"
        self.state_dir.mkdir(parents=True, exist_ok=True)
        env = {"GIT_INDEX_FILE": str(index), "GIT_WORK_TREE": str(self.scratch)}
        self.git.run("read-tree", tree, env=env)
        self.git.run("checkout-index", "-a", "-f", env=env, cwd=self.scratch)
        index.unlink(missing_ok=True)


def status(union: Union, *, offline: bool) -> dict[str, Any]:
    """Stale folds, upstream drift into owned files, PRs merged upstream since, and what a refold changes."""
    git, entry = union.git, union.entry
    upstream, items = union.resolve(offline)
    current = git.rev_parse(entry.commit) if entry.commit else None
    folded = {s.pr: s.head for s in entry.supersedes}
    report: dict[str, Any] = {"entry": entry.id, "commit": current, "upstream": upstream}
    report["stale"] = [{"pr": i.pr, "folded": folded[i.pr], "current": i.head} for i in items
                       if folded.get(i.pr) and not i.head.startswith(folded[i.pr])]  # type: ignore[arg-type]
    report["unfolded"] = [i.pr for i in items if not folded.get(i.pr)]
    report["drift"] = _drift(git, current, upstream, entry.owns)
    pairs = [(upstream, union.only_paths(i)) for i in items]
    upstream_tree = git.tree_of(upstream)
    report["merged_upstream"] = [i.pr for i, r in zip(items, git.merge_trees(pairs))
                                 if r.clean and r.tree == upstream_tree]
    state = {"name": union.name, "upstream": upstream, "items": [i.__dict__ for i in items], "next": 0,
             "tip": upstream, "touched": {}, "reused": [], "used_keys": []}
    refold = union.advance(state, dry=True)
    if refold.done and current:
        changes = git.diff_trees([(current, refold.commit)])[0]  # type: ignore[list-item]
        report["refold"] = {"needs_resolution": [], "changes": sorted({p for c in changes for p in c.paths}),
                            "reused": refold.reused}
    else:
        report["refold"] = {"needs_resolution": refold.conflicts, "changes": None, "reused": refold.reused}
    return report


def _drift(git: Git, union_commit: str | None, upstream: str, owns: tuple[str, ...]) -> list[dict[str, str]]:
    if not union_commit or not owns:
        return []
    parents = git.commit_info(union_commit)["parents"]
    if not parents or parents[0] == upstream or not git.is_ancestor(parents[0], upstream):  # type: ignore[index]
        return []
    out = git.run("log", "--format=%H %s", f"{parents[0]}..{upstream}", "--",  # type: ignore[index]
                  *(":(glob)" + p if pathmatch.is_glob(p) else ":(literal)" + p for p in owns)).stdout
    return [{"commit": line[:40], "subject": line[41:]} for line in out.decode("utf-8", "replace").splitlines()]
