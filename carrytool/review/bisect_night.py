"""What a past night composed from, for `bisect --rev`: the lock that night wrote (its `result` is the composed
commit), beside the manifest or in the committed history of it. The trailers of the night's commits name
the entries it applied only; an entry it left out had a head (or commit) that only its lock records, which
may have moved since (a PR pushed again, a carry committed again). A red night writes no lock (h193), but
sync records what it composed in the repository (pipeline.night_record), which is read too (h201)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git, work_tree_top
from carrytool.gitlayer.jsonread import read_utf8
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import lock_path, parse_lock
from carrytool.pipeline.night_record import recorded_night
from carrytool.review.nights import commits_changing, path_in

# how far back the lock's committed history is read for the night's (the nightly commits it once a night)
HISTORY = 50


@dataclass(frozen=True)
class NightInputs:
    """The heads (PRs) and commits (carries, patches) of the entries a night's lock records: id -> SHA (None:
    the night had none), and where that lock was read (a path, or REV:PATH)."""

    where: str
    shas: dict[str, str | None]


def night_inputs(manifest: Manifest, git: Git, result: str) -> NightInputs | None:
    """The inputs of the night whose composed commit is RESULT (a full SHA), from the lock beside MANIFEST
    when it is that night's, else from what sync recorded of it in GIT (refs/carrytool/<branch>/nights: red
    nights too, in the repository sync ran in), else from the newest commit of the lock's history (the last
    HISTORY) that is; None when none says it composed RESULT."""
    path = lock_path(manifest)
    try:
        found = _inputs(str(path), read_utf8(path), result)
    except (OSError, ValueError):       # not UTF-8, too large to hold (h256)
        found = None
    recorded = None if found else recorded_night(manifest, git, result)
    if recorded is not None:
        found = _inputs(*recorded, result)
    return found or _committed(path, result)


def _committed(path: Path, result: str) -> NightInputs | None:
    """The inputs of the lock at PATH as a commit of its work tree's history held them, composing RESULT."""
    top = work_tree_top(path.parent.resolve()) if path.parent.is_dir() else None
    if top is None:
        return None
    inner = path_in(top, path)
    if inner is None:       # a manifest linked in from elsewhere: its lock is not in this work tree
        return None
    with Git(top) as git:
        for commit in commits_changing(git, git.rev_parse("HEAD"), inner, HISTORY):
            data = git.blob_at_rev(commit, inner)
            found = _inputs(f"{commit[:12]}:{inner}", data.decode("utf-8", "replace"), result) if data else None
            if found is not None:
                return found
    return None


def _inputs(where: str, text: str, result: str) -> NightInputs | None:
    """The inputs TEXT, a lock read from WHERE, records, when it composed RESULT."""
    try:
        doc = parse_lock(text, where)
    except CarryError:      # not a lock (a hand edit, another file): not the night's
        return None
    if doc.get("result") != result:
        return None
    return NightInputs(where, {str(item["id"]): item.get("head" if str(item["id"]).startswith("pr/") else "commit")
                               for item in doc["entries"]})
