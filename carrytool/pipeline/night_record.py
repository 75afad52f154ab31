"""What each sync composed from, kept in the repository: `refs/carrytool/<branch>/nights`.

A red night (an assert failed, a conflict under `on_conflict: fail`) publishes nothing and writes no lock,
so `bisect --rev` of its composed commit could not know the heads of the entries it left out (h193: a PR
pushed again since was composed in their place). Every sync but a dry run therefore records the lock it
would write (green or red) in carrytool's own namespace: one commit, without parents, whose tree holds
`<composed SHA>.lock` for the last NIGHTS composed commits and `order` (those SHAs, newest first). Never
the fork branch, never the user's lock file. Deterministic: the manifest's identity, the composed commit's
date, the same records give the same commit; bounded: the oldest record goes when a new one comes.
"""

from __future__ import annotations

from typing import Any

from carrytool.errors import CarryError, GitError
from carrytool.gitlayer.git import Git, Signature, is_sha
from carrytool.manifest.model import Manifest
from carrytool.pipeline.jsontext import indented
from carrytool.pipeline.lock import parse_lock
from carrytool.pipeline.resolve import namespace

NIGHTS = 30          # records kept (a month of nightly runs)
_ORDER = b"order"


def nights_ref(manifest: Manifest) -> str:
    return f"{namespace(manifest)}/nights"


def night_record(manifest: Manifest, git: Git, lock_doc: dict[str, Any]) -> tuple[str, str | None]:
    """Write the record with LOCK_DOC (what sync composed; its `result` is the composed commit) as the newest
    night, dropping the oldest beyond NIGHTS: objects only, the commit kept (the run's one migration carries
    it). Return (the record commit, the value of nights_ref it replaces)."""
    result = str(lock_doc["result"])
    old = git.ref_value(nights_ref(manifest))
    records, order = _records(git, old)
    order = [result, *(sha for sha in order if sha != result)][:NIGHTS]
    records[result] = git.write_blob((indented(lock_doc) + "\n").encode("utf-8"))
    entries = [("100644", "blob", records[sha], f"{sha}.lock".encode()) for sha in order]
    entries.append(("100644", "blob", git.write_blob(("\n".join(order) + "\n").encode()), _ORDER))
    identity = manifest.identity
    signature = Signature(identity.name, identity.email, int(git.commit_info(result).get("committer_time", 0)))
    commit = git.write_commit(git.mktree(entries), [], signature, signature,
                              f"carrytool: what sync composed, the last {len(order)} nights\n")
    git.keep(commit)
    return commit, old


def record_night(manifest: Manifest, git: Git, record: tuple[str, str | None]) -> None:
    """Move nights_ref to RECORD's commit from the value it replaces (night_record; the caller holds the
    repository lock); GitError when the ref cannot be written."""
    commit, old = record
    if commit != old:
        git.update_ref(nights_ref(manifest), commit, old, "carrytool sync: record the night's inputs")


def recorded_night(manifest: Manifest, git: Git, result: str) -> tuple[str, str] | None:
    """(where, lock text) of the night whose composed commit is RESULT, as sync recorded it; None when none is."""
    commit = git.ref_value(nights_ref(manifest))
    if commit is None or not is_sha(result):
        return None
    records, _ = _records(git, commit)
    blob = records.get(result)
    if blob is None:
        return None
    return f"{nights_ref(manifest)}:{result}.lock", git.read_blob(blob).decode("utf-8", "replace")


def recorded_locks(manifest: Manifest, git: Git) -> list[tuple[str, dict[str, Any]]]:
    """(where, lock document) of every night sync recorded, newest first; a record that is not a lock as sync
    writes it (parse_lock: every key and type) is left out. A hand edit: not JSON, nested too deep (h228), or
    of the wrong types (h246: `"result": 7` was read as a commit, a traceback in `status --offline`)."""
    records, order = _records(git, git.ref_value(nights_ref(manifest)))
    out = []
    for sha in order:
        where = f"{nights_ref(manifest)}:{sha}.lock"
        try:
            out.append((where, parse_lock(git.read_blob(records[sha]).decode("utf-8", "replace"), where)))
        except CarryError:          # (GitError: a missing object; LockMismatch: not a lock)
            continue
    return out


def _records(git: Git, commit: str | None) -> tuple[dict[str, str], list[str]]:
    """The record commit COMMIT's {composed SHA: lock blob} and order (newest first); empty when None."""
    if commit is None:
        return {}, []
    try:
        entries = {name: oid for _, kind, oid, name in git.read_tree(git.tree_of(commit)) if kind == "blob"}
        order_blob = entries.get(_ORDER)
        listed = git.read_blob(order_blob).decode("ascii", "replace").split() if order_blob else []
    except GitError:            # not a record (a hand edit, a missing object): none, and the next sync starts anew
        return {}, []
    records = {name[:-5].decode(): oid for name, oid in entries.items()
               if name.endswith(b".lock") and is_sha(name[:-5].decode("ascii", "replace"))}
    return records, [sha for sha in listed if sha in records]

