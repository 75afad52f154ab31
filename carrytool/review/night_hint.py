"""The night before the lock on disk as sync recorded it in --repo (`refs/carrytool/<branch>/nights`): what
`carrytool diff` names when the manifest lies outside any git work tree, where no committed night can be read
(h245: the hint said only "name both locks", though sync keeps the last nights there)."""

from __future__ import annotations

import shlex
from pathlib import Path

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import load_json, read_utf8
from carrytool.manifest.load import parse_manifest
from carrytool.pipeline.night_record import recorded_locks


def recorded_night_command(manifest: Path, lock_file: Path, repo: Path) -> str | None:
    """`carrytool diff REV:PATH LOCK -m MANIFEST --repo REPO` comparing the lock on disk with the newest night
    sync recorded in REPO before it (outside a work tree REV:PATH is read in --repo); None when REPO records
    none, or the manifest, the lock or REPO cannot be read."""
    try:
        parsed = parse_manifest(manifest.read_text(encoding="utf-8"), manifest)
        lock = load_json(read_utf8(lock_file))        # too large to hold: ValueError (h257: a MemoryError traceback)
        with Git(repo) as git:
            nights = recorded_locks(parsed, git)
    except (CarryError, OSError, UnicodeDecodeError, ValueError):
        return None
    current = lock.get("result") if isinstance(lock, dict) else None
    results = [doc.get("result") for _, doc in nights]
    start = results.index(current) + 1 if current in results else 0
    if start >= len(nights):
        return None
    before = nights[start][0]           # the records are newest first, one per composed commit
    return f"carrytool diff {before} {shlex.quote(str(lock_file))} -m {shlex.quote(str(manifest))} " \
           f"--repo {shlex.quote(str(repo))}"
