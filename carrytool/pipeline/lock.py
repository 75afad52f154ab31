"""The lock: `<manifest>.lock`, every resolved input of the last good sync (and its result).

`sync --locked` composes exactly what the lock says, even after PRs moved; `verify --rebuild` uses it
to prove the published branch is what the manifest says.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.errors import LockMismatch
from carrytool.gitlayer.jsonread import load_json, read_json, read_utf8
from carrytool.gitlayer.urls import redact
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.atomic import publish, stage
from carrytool.pipeline.jsontext import indented
from carrytool.pipeline.resolve import Resolved

LOCK_VERSION = 1


def lock_path(manifest: Manifest) -> Path:
    return lock_path_of(manifest.path)


def lock_path_of(manifest: Path) -> Path:
    """`<manifest>.lock`, beside the manifest at MANIFEST."""
    return manifest.with_name(manifest.name + ".lock")


def _patch_digest(manifest: Manifest, patch: str) -> str | None:
    try:
        return hashlib.sha256((manifest.base_dir / patch).read_bytes()).hexdigest()
    except OSError:
        return None


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()[:16]


def manifest_settings(manifest: Manifest) -> str:
    """What of the manifest outside `entries` decides the composed commits besides the SHAs the lock pins:
    the identity, `policy.precompiled` (a PR that changes such a path is skipped) and `policy.stacked`, as a digest (the
    lock's `settings`). The policy's defaults count in each entry's settings, as they take effect there."""
    identity = manifest.identity
    settings: dict[str, object] = {"identity": [identity.name, identity.email],
                                   "precompiled": sorted(manifest.policy.precompiled)}
    if manifest.policy.stacked != "whole":     # (only then: the locks written before it stay valid; helper-120)
        settings["stacked"] = manifest.policy.stacked
    return _digest(settings)


def entry_settings(manifest: Manifest, entry: Entry, *, enabled: bool | None = None) -> str:
    """What of ENTRY decides the composed commits besides its SHAs (an entry's `settings` in the lock), as
    it takes effect (the policy's defaults applied; no title and an empty one alike; supersedes in any
    order): enabled, and for an enabled entry its title (the commit's subject), on_conflict, on_missing,
    structured_merge paths and the supersedes' PRs and paths, as a digest. Not `owns` or `excludes`: rules
    that fail a run, which `--locked` and `--rebuild` judge as sync does. ENABLED: as if it were so."""
    return _digest(entry_setting_values(manifest, entry, enabled=enabled))


def entry_setting_values(manifest: Manifest, entry: Entry, *, enabled: bool | None = None) -> dict[str, Any]:
    """The values `entry_settings` digests, by name (`carrytool diff` names the ones that changed)."""
    on = entry.enabled if enabled is None else enabled
    if not on:
        return {"enabled": False}
    policy = manifest.policy
    return {"enabled": True, "title": entry.title or "",
            "on_conflict": entry.on_conflict or policy.on_conflict,
            "on_missing": entry.on_missing or policy.on_missing,
            "structured_merge": sorted(policy.structured_merge if entry.structured_merge is None
                                       else entry.structured_merge),
            "supersedes": sorted([s.pr, sorted(s.paths)] for s in entry.supersedes)}


def build_lock(manifest: Manifest, resolved: Resolved, result: str | None) -> dict[str, Any]:
    """The lock document for RESOLVED (stable key order, nothing time- or machine-dependent).

    The git version is left out: the same inputs give the same SHAs on every supported git, so a runner
    with another git must not rewrite the lock (locks of earlier versions that hold it still read).
    """
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
        item["settings"] = entry_settings(manifest, entry)
        entries.append(item)
    entry_prs = {e.number for e in manifest.entries if e.kind == "pr"}
    folded = {str(n): sha for n, sha in sorted(resolved.heads.items()) if n not in entry_prs}
    doc: dict[str, Any] = {
        "lock": LOCK_VERSION,
        "carrytool": __version__,
        "upstream": {"url": redact(manifest.upstream.url), "branch": manifest.upstream.branch, "sha": resolved.upstream},
        "fork": {"branch": manifest.fork.branch},
        "settings": manifest_settings(manifest),
        "entries": entries,
    }
    if folded:
        doc["superseded_heads"] = folded
    doc["result"] = result
    return doc


@dataclass
class StagedLock:
    """A lock written and synced beside its place, waiting for the rename that publishes it.

    sync stages the lock before the branch moves: a full disk or a read-only directory stops the run
    while nothing has moved, and what is left once the branch moved is a rename.
    """

    path: Path
    tmp: Path | None          # None: the lock already says exactly this

    def commit(self) -> bool:
        """Publish the lock; return False when it was already up to date."""
        if self.tmp is None:
            return False
        tmp, self.tmp = self.tmp, None
        publish(tmp, self.path)
        return True

    def discard(self) -> None:
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None


def stage_lock(manifest: Manifest, doc: dict[str, Any]) -> StagedLock:
    """Write DOC to a synced temporary file beside the lock (EnvironmentProblem, exit 4, when it cannot)."""
    from carrytool.manifest.safefile import refuse_symlink

    path = lock_path(manifest)
    text = indented(doc) + "\n"
    data = text.encode("utf-8")
    try:
        # the size first: a lock of gigabytes is not read whole to be compared (h256: MemoryError, exit 70);
        # one checked out with CRLF line ends (read_text reads them as LF) is at most twice the text
        if path.stat().st_size <= 2 * len(data) and path.read_text(encoding="utf-8") == text:
            return StagedLock(path, None)
    except (OSError, UnicodeDecodeError):
        pass
    refuse_symlink(path)     # the rename would replace the link, and leave the file it points to stale
    return StagedLock(path, stage(path, data))


def write_lock(manifest: Manifest, doc: dict[str, Any]) -> bool:
    """Write the lock atomically; return False when the file already says exactly this."""
    return stage_lock(manifest, doc).commit()


@dataclass(frozen=True)
class Lock:
    doc: dict[str, Any]
    path: Path

    @property
    def result(self) -> str | None:
        return self.doc.get("result")


def resync_hint(ran: str | None, why: str) -> str:
    """The next step when the lock is to be written anew: a plain `carrytool sync`, WHY it is run; RAN, the
    command that read the lock (`sync --locked`, `verify --rebuild ...`; None: one that only reads a lock
    file), says how the hint names it (helper-136: `verify --rebuild` was told to drop a --locked it was
    not given)."""
    if ran is None:
        return f"run `carrytool sync` {why}"
    if ran.split()[0] == "sync":
        return f"run `carrytool sync` without --locked {why}"
    return f"run `carrytool sync` {why}, then `carrytool {ran}` again"


def read_lock(manifest: Manifest, *, ran: str = "sync --locked") -> Lock:
    """Read the lock beside the manifest; raise LockMismatch when it is absent, unreadable or stale. RAN:
    the command reading it, as the hints name it (resync_hint)."""
    path = lock_path(manifest)
    try:
        doc = read_json(path)
    except FileNotFoundError:
        raise LockMismatch(f"no lock at {path}", hint=resync_hint(ran, "once to write it")) from None
    except (OSError, ValueError) as exc:       # not JSON, not UTF-8, nested too deep (h228): gitlayer.jsonread
        raise LockMismatch(f"cannot read the lock {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("lock") != LOCK_VERSION:
        raise LockMismatch(f"{path} is not a carrytool lock (version {LOCK_VERSION})")
    _check_shape(doc, path, ran)
    _check_matches(manifest, doc, path, ran)
    return Lock(doc, path)


def parse_lock_file(path: Path) -> dict[str, Any]:
    """parse_lock of the file PATH; OSError when it cannot be read, LockMismatch when it is no lock (also when not
    UTF-8 or too large to hold: h256, a MemoryError traceback)."""
    try:
        text = read_utf8(path)
    except ValueError as exc:
        raise LockMismatch(f"cannot read the lock {path}: {exc}") from None
    return parse_lock(text, str(path))


def parse_lock(text: str | bytes, where: str) -> dict[str, Any]:
    """Parse and shape-check a lock's TEXT (read from WHERE; bytes as json.loads decodes them) without comparing
    it to a manifest."""
    try:
        doc = load_json(text)
    except ValueError as exc:
        raise LockMismatch(f"cannot read the lock {where}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("lock") != LOCK_VERSION:
        raise LockMismatch(f"{where} is not a carrytool lock (version {LOCK_VERSION})")
    _check_shape(doc, Path(where), None)
    return doc


_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_TOP_KEYS = ("lock", "carrytool", "git", "upstream", "fork", "settings", "entries", "superseded_heads", "result")
_ENTRY_KEYS = ("id", "head", "commit", "patch", "sha256", "settings")


def _check_shape(doc: dict[str, Any], path: Path, ran: str | None) -> None:
    """Every key and type of a lock as sync writes it; a hand edit is an input error naming the key."""
    def bad(key: str, what: str, value: Any = None, shown: bool = True) -> LockMismatch:
        got = f", got {_show(value)}" if shown else ""
        return LockMismatch(f"`{key}` {what}{got}", where=str(path), hint="the lock is written by sync: " +
                            resync_hint(ran, "to rewrite the lock rather than editing it by hand"))

    def keys(data: Any, allowed: tuple[str, ...], key: str) -> None:
        if not isinstance(data, dict):
            raise bad(key, "must be a mapping", data)
        for name in data:
            if name not in allowed:
                raise bad(f"{key}.{_clip(name)}" if key else _clip(name),
                          f"is not a lock key (known: {', '.join(allowed)})", shown=False)

    def sha(data: dict, name: str, key: str, *, required: bool) -> None:
        if name not in data:
            if required:
                raise bad(key, "is missing", shown=False)
            return
        value = data[name]
        if not (value is None and not required) and not (isinstance(value, str) and _OID.match(value)):
            raise bad(key, "must be a full commit SHA" + ("" if required else " or null"), value)

    def text(data: dict, name: str, key: str, *, required: bool = False, nullable: bool = False) -> None:
        if name not in data:
            if required:
                raise bad(key, "is missing", shown=False)
            return
        if not isinstance(data[name], str) and not (nullable and data[name] is None):
            raise bad(key, "must be a string", data[name])

    keys(doc, _TOP_KEYS, "")
    text(doc, "carrytool", "carrytool")
    text(doc, "settings", "settings")
    text(doc, "git", "git")
    if "upstream" not in doc:
        raise bad("upstream", "is missing", shown=False)
    keys(doc["upstream"], ("url", "branch", "sha"), "upstream")
    text(doc["upstream"], "url", "upstream.url", required=True)
    text(doc["upstream"], "branch", "upstream.branch", required=True)
    sha(doc["upstream"], "sha", "upstream.sha", required=True)
    if "fork" in doc:
        keys(doc["fork"], ("branch",), "fork")
        text(doc["fork"], "branch", "fork.branch")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise bad("entries", "must be a list", entries) if "entries" in doc else bad("entries", "is missing",
                                                                                   shown=False)
    for i, item in enumerate(entries):
        keys(item, _ENTRY_KEYS, f"entries[{i}]")
        text(item, "id", f"entries[{i}].id", required=True)
        sha(item, "head", f"entries[{i}].head", required=False)
        sha(item, "commit", f"entries[{i}].commit", required=False)
        text(item, "patch", f"entries[{i}].patch")
        text(item, "sha256", f"entries[{i}].sha256", nullable=True)
        text(item, "settings", f"entries[{i}].settings")
    folded = doc.get("superseded_heads", {})
    if not isinstance(folded, dict):
        raise bad("superseded_heads", "must be a mapping of PR number to SHA", folded)
    for number in folded:
        key = f"superseded_heads.{_clip(number)}"
        if not (number.isascii() and number.isdigit() and len(number) <= 18):
            raise bad(key, "must be a PR number", shown=False)
        sha(folded, number, key, required=True)
    sha(doc, "result", "result", required=False)


def _clip(text: str, size: int = 24) -> str:
    return text if len(text) <= size else text[:size] + "..."


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return _clip(text, 60)


def _check_matches(manifest: Manifest, doc: dict[str, Any], path: Path, ran: str) -> None:
    hint = resync_hint(ran, "to re-resolve, and commit the new lock")
    up = doc.get("upstream") or {}
    # both sides redacted: a lock written by an older carrytool that kept a short https user name matches
    if redact(up["url"]) != redact(manifest.upstream.url) or up.get("branch") != manifest.upstream.branch:
        raise LockMismatch(f"{path} was written for upstream {redact(str(up.get('url')))} {up.get('branch')}, the "
                           f"manifest says {redact(manifest.upstream.url)} {manifest.upstream.branch}", hint=hint)
    fork = (doc.get("fork") or {}).get("branch")
    if fork is not None and fork != manifest.fork.branch:      # (helper-103: taken as this branch's lock)
        raise LockMismatch(f"{path} was written for the fork branch {fork}, the manifest says "
                           f"{manifest.fork.branch}", hint=hint)
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
    _check_settings(manifest, doc, path, hint)


def _check_settings(manifest: Manifest, doc: dict[str, Any], path: Path, hint: str) -> None:
    """The settings that decide the composed commits besides the pinned SHAs are the lock's (helper-87: an
    entry disabled since the lock was written, `sync --locked` moved the branch to a commit the lock does
    not name and `verify --rebuild` passed it). A lock written before carrytool recorded them (no
    `settings`) is not checked: its `result` still is (the `lock-result` warning)."""
    said = f"{path} was written"
    if "settings" in doc and doc["settings"] != manifest_settings(manifest):
        raise LockMismatch(f"the manifest's identity or policy.precompiled changed since {said}", hint=hint)
    for entry, item in zip(manifest.entries, doc["entries"]):
        if "settings" not in item or item["settings"] == entry_settings(manifest, entry):
            continue
        if item["settings"] == entry_settings(manifest, entry, enabled=not entry.enabled):
            change = "disabled" if not entry.enabled else "enabled again"
            raise LockMismatch(f"{entry.id} was {change} since {said}", hint=hint)
        raise LockMismatch(f"{entry.id} changed since {said} (one of: its title, on_conflict, on_missing, "
                           "structured_merge or supersedes, as they take effect with the policy's defaults)", hint=hint)


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
