"""Whether the lock beside the manifest is older than a night sync recorded, for bisect's last good night.

A lock holds no date (the same inputs write the same lock), so `bisect --rev` of a recorded night read only
the nights recorded before it (h251: a newer green night's lock was read as an older red night's last good
night). A lock whose night no record holds (synced in another clone, such as CI's, or before the records, or
pushed out of them) was then never read (h256). git tells its age when:

- its upstream and the night's differ and one is in the other's history: upstream moves on, so the lock whose
  upstream is behind is older (and one ahead newer);
- the lock on disk is the one committed beside the manifest, and that commit is dated before the newest input
  the night composed (its upstream, a PR head, a carry commit) was made: the night ran after the commit.

Otherwise its age cannot be told and it is not read, which bisect says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git, is_sha, work_tree_top
from carrytool.gitlayer.jsonread import load_json
from carrytool.review.nights import commits_changing, path_in


@dataclass(frozen=True)
class Age:
    """OLDER: the lock is older than the night (True), newer (False), or cannot be told (None); WHY in words."""

    older: bool | None
    why: str


def _day(stamp: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))


def lock_age(git: Git, path: Path, lock: dict[str, Any], night: dict[str, Any]) -> Age:
    """The age of LOCK (read from PATH) next to NIGHT, a night sync recorded in GIT (see the module)."""
    mine, theirs = (str((doc.get("upstream") or {}).get("sha")) for doc in (lock, night))
    if mine != theirs and all(git.object_type(sha) == "commit" for sha in (mine, theirs)):
        if git.is_ancestor(mine, theirs):
            return Age(True, f"its upstream {mine[:12]} is behind the night's {theirs[:12]}")
        if git.is_ancestor(theirs, mine):
            return Age(False, f"its upstream {mine[:12]} is ahead of the night's {theirs[:12]}")
    if mine == theirs:
        upstream = "its upstream is the night's"
    elif git.object_type(mine) == "commit" and git.object_type(theirs) == "commit":
        upstream = f"its upstream {mine[:12]} and the night's {theirs[:12]} are not in one history"
    else:
        upstream = f"its upstream {mine[:12]} or the night's {theirs[:12]} is not in this repository"
    committed = _committed_at(path, lock)
    if isinstance(committed, str):
        return Age(None, f"{upstream}, and {committed}")
    when = f"it was committed in {committed[0][:12]} ({_day(committed[1])})"
    newest = _newest_input(git, night)
    if newest is None:
        return Age(None, f"{upstream}; {when}, and the night's inputs are not in this repository to date it")
    if committed[1] < newest[1]:
        return Age(True, f"{when}, before {newest[0]}, which the night composed, was made ({_day(newest[1])})")
    return Age(None, f"{upstream}; {when}, not before the newest input the night composed, {newest[0]} "
                     f"({_day(newest[1])})")


def _newest_input(git: Git, night: dict[str, Any]) -> tuple[str, int] | None:
    """(what, when) of the newest commit NIGHT composed: its upstream, a PR's head, a carry's commit."""
    upstream = (night.get("upstream") or {}).get("sha")
    inputs = [(f"upstream {str(upstream)[:12]}", upstream)]
    for item in night.get("entries", []):
        sha = item.get("head" if str(item.get("id")).startswith("pr/") else "commit") if isinstance(item, dict) else None
        inputs.append((f"{item.get('id')}'s {'head' if 'head' in item else 'commit'} {str(sha)[:12]}", sha))
    found = []
    for what, sha in inputs:
        if isinstance(sha, str) and is_sha(sha) and git.object_type(sha) == "commit":
            found.append((what, int(git.commit_info(sha).get("committer_time", 0))))     # type: ignore[call-overload]
    return max(found, key=lambda pair: pair[1]) if found else None


def _committed_at(path: Path, lock: dict[str, Any]) -> tuple[str, int] | str:
    """(commit, its date) of the newest commit of the manifest's work tree that changed the lock at PATH, when
    what it committed is LOCK; else why not (the words say it)."""
    top = work_tree_top(path.parent.resolve()) if path.parent.is_dir() else None
    inner = path_in(top, path) if top is not None else None
    if top is None or inner is None:
        return "the lock is not in a work tree whose history would date it"
    try:
        with Git(top) as tree:
            newest = commits_changing(tree, tree.rev_parse("HEAD"), inner, 1)
            data = tree.blob_at_rev(newest[0], inner) if newest else None
            try:
                same = data is not None and load_json(data) == lock
            except ValueError:
                same = False
            if not same:
                return "the lock on disk is not one committed beside the manifest (written since, or never committed)"
            return newest[0], int(tree.commit_info(newest[0]).get("committer_time", 0))    # type: ignore[call-overload]
    except CarryError:
        return "the history of the manifest's work tree cannot be read"
