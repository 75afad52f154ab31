"""The lock: `<manifest>.lock`, every resolved input of the last good sync (and its result).

`sync --locked` composes exactly what the lock says, even after PRs moved; `verify --rebuild` uses it
to prove the published branch is what the manifest says.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.errors import LockMismatch
from carrytool.gitlayer.urls import redact
from carrytool.manifest.model import Manifest
from carrytool.pipeline.resolve import Resolved

LOCK_VERSION = 1


def lock_path(manifest: Manifest) -> Path:
    return manifest.path.with_name(manifest.path.name + ".lock")


def _patch_digest(manifest: Manifest, patch: str) -> str | None:
    try:
        return hashlib.sha256((manifest.base_dir / patch).read_bytes()).hexdigest()
    except OSError:
        return None


def build_lock(manifest: Manifest, resolved: Resolved, result: str | None, git_version: str) -> dict[str, Any]:
    """The lock document for RESOLVED (stable key order, nothing time- or machine-dependent)."""
    entries = []
    for entry in manifest.entries:
        item: dict[str, Any] = {"id": entry.id}
        if entry.kind == "pr":
            item["head"] = resolved.heads.get(entry.number)  # type: ignore[arg-type]
        elif entry.patch:
            item["patch"] = entry.patch
            item["sha256"] = _patch_digest(manifest, entry.patch)
            item["commit"] = resolved.commits.get(entry.id)
        else:
            item["commit"] = resolved.commits.get(entry.id)
        entries.append(item)
    folded = {str(n): sha for n, sha in sorted(resolved.heads.items())
              if not any(e.kind == "pr" and e.number == n for e in manifest.entries)}
    doc: dict[str, Any] = {
        "lock": LOCK_VERSION,
        "carrytool": __version__,
        "git": git_version,
        "upstream": {"url": redact(manifest.upstream.url), "branch": manifest.upstream.branch, "sha": resolved.upstream},
        "fork": {"branch": manifest.fork.branch},
        "entries": entries,
    }
    if folded:
        doc["superseded_heads"] = folded
    doc["result"] = result
    return doc


def write_lock(manifest: Manifest, doc: dict[str, Any]) -> bool:
    """Write the lock atomically; return False when the file already says exactly this."""
    path = lock_path(manifest)
    text = json.dumps(doc, indent=2) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


@dataclass(frozen=True)
class Lock:
    doc: dict[str, Any]
    path: Path

    @property
    def result(self) -> str | None:
        return self.doc.get("result")


def read_lock(manifest: Manifest) -> Lock:
    """Read the lock beside the manifest; raise LockMismatch when it is absent, unreadable or stale."""
    path = lock_path(manifest)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LockMismatch(f"no lock at {path}", hint="run `carrytool sync` once (without --locked) to write it") \
            from None
    except (OSError, ValueError) as exc:
        raise LockMismatch(f"cannot read the lock {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("lock") != LOCK_VERSION:
        raise LockMismatch(f"{path} is not a carrytool lock (version {LOCK_VERSION})")
    _check_matches(manifest, doc, path)
    return Lock(doc, path)


def _check_matches(manifest: Manifest, doc: dict[str, Any], path: Path) -> None:
    hint = "run `carrytool sync` without --locked to re-resolve, and commit the new lock"
    up = doc.get("upstream") or {}
    if up.get("url") != redact(manifest.upstream.url) or up.get("branch") != manifest.upstream.branch:
        raise LockMismatch(f"{path} was written for upstream {up.get('url')} {up.get('branch')}, the manifest "
                           f"says {manifest.upstream.url} {manifest.upstream.branch}", hint=hint)
    locked = [e.get("id") for e in doc.get("entries") or []]
    declared = [e.id for e in manifest.entries]
    if locked != declared:
        added = [i for i in declared if i not in locked]
        removed = [i for i in locked if i not in declared]
        detail = "; ".join(filter(None, [f"added {', '.join(added)}" if added else "",
                                         f"removed {', '.join(map(str, removed))}" if removed else "",
                                         "reordered" if not added and not removed else ""]))
        raise LockMismatch(f"{path} does not match the manifest's entries ({detail})", hint=hint)
    for entry, item in zip(manifest.entries, doc["entries"]):
        if entry.kind == "pr" and entry.head and item.get("head") and not item["head"].startswith(entry.head):
            raise LockMismatch(f"{entry.id} is pinned to {entry.head} but the lock has {item['head'][:12]}",
                               hint=hint)
        if entry.kind == "carry" and entry.commit and item.get("commit") and \
                not item["commit"].startswith(entry.commit):
            raise LockMismatch(f"{entry.id} names commit {entry.commit} but the lock has {item['commit'][:12]}",
                               hint=hint)
        if entry.patch and item.get("sha256") != _patch_digest(manifest, entry.patch):
            raise LockMismatch(f"{entry.id}: {entry.patch} changed since the lock was written", hint=hint)


def locked_resolution(manifest: Manifest, lock: Lock) -> tuple[str, dict[int, str], dict[str, str]]:
    """(upstream, PR heads, carried commits) as the lock records them."""
    heads: dict[int, str] = {}
    commits: dict[str, str] = {}
    for entry, item in zip(manifest.entries, lock.doc["entries"]):
        if entry.kind == "pr" and item.get("head"):
            heads[entry.number] = item["head"]  # type: ignore[index]
        elif entry.kind == "carry" and item.get("commit"):
            commits[entry.id] = item["commit"]
    for number, sha in (lock.doc.get("superseded_heads") or {}).items():
        heads[int(number)] = sha
    return lock.doc["upstream"]["sha"], heads, commits
