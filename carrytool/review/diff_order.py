"""Which nights `carrytool diff` compares, said where the user may have meant others (h244, from h239's trial on
sqlalchemy): the nights given newest first (`diff NEW OLD` said "9 rewritten away" of an upstream that had only
moved on; said, with the command in order, never swapped behind the user's back: an upstream that really went
back looks much the same), and a red night after the lock on disk, which a bare `diff` does not reach."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git, work_tree_top
from carrytool.pipeline.lock import lock_path
from carrytool.pipeline.night_record import nights_ref, recorded_locks
from carrytool.review.nights import Night, _same_lock, path_in


def newest_first(git: Git, old: Night, new: Night, upstream: dict[str, Any],
                 options: Sequence[str] = ()) -> dict[str, Any] | None:
    """`{"sure", "why", "command"}` when OLD looks newer than NEW; None when it does not. Sure: both are REV:PATH
    of one repository and NEW's commit is an ancestor of OLD's. Likely: NEW's upstream is behind OLD's and none
    ahead (what a reversed pair shows, and an upstream gone back too) and NEW's composed commit (dated by its
    newest input) is no newer than OLD's, which it is when a night after a rewind composed a newer PR head.
    OPTIONS: the `-m`/`--repo` the command repeats."""
    command = shlex.join(["carrytool", "diff", new.label, old.label, *options])
    if _commit_before(new, old):
        why = (f"{new.label} is from commit {str(new.commit)[:12]}, an ancestor of {old.label}'s "
               f"{str(old.commit)[:12]}")
        return {"sure": True, "why": why, "command": command}
    behind = upstream.get("dropped", 0)
    if upstream["commits"] or not behind or not _dated_no_later(git, new, old):
        return None
    commits = f"{behind} commit{'s' * (behind != 1)}"
    why = (f"{new.label}'s upstream {upstream['to'][:12]} is {commits} behind {old.label}'s {upstream['from'][:12]}, "
           "none ahead, and its composed commit is no newer (else upstream went back since)")
    return {"sure": False, "why": why, "command": command}


def said(order: dict[str, Any], old: Night) -> str:
    """The line text, Markdown and stderr say: why, how this diff read the nights, the command in order."""
    head = "given newest first:" if order["sure"] else "given newest first?"
    return f"{head} {order['why']}; this diff reads {old.label} as the older night; in order: {order['command']}"


def _commit_before(first: Night, then: Night) -> bool:
    """Whether FIRST and THEN are REV:PATH of one repository and FIRST's commit is a strict ancestor of THEN's."""
    if first.commit is None or then.commit is None or first.commit == then.commit or first.top != then.top:
        return False
    try:
        with Git(first.top) as git:         # type: ignore[arg-type]
            return git.is_ancestor(first.commit, then.commit)
    except CarryError:
        return False


def _dated_no_later(git: Git, night: Night, other: Night) -> bool:
    """Whether NIGHT's composed commit is dated no later than OTHER's (True when either has none)."""
    mine, theirs = night.lock.get("result"), other.lock.get("result")
    if not mine or not theirs:
        return True
    try:
        dates = [int(git.commit_info(sha)["committer_time"]) for sha in (mine, theirs)]  # type: ignore[call-overload]
    except CarryError:
        return True
    return dates[0] <= dates[1]


def red_night(git: Git, new: Night, options: Sequence[str] = ()) -> dict[str, Any] | None:
    """`{"composed", "record", "command"}` when NEW is the lock on disk and the last sync in GIT's repository
    (its nights record, red nights too) composed another commit after it, writing no lock: a red night, whose
    report `diff` reads as the newer night. None otherwise, and when the lock's own night is not in the record
    (synced elsewhere: which is newer cannot be told). OPTIONS: the `-m`/`--repo` the command repeats."""
    manifest, result = new.manifest, new.lock.get("result")
    if manifest is None or new.run is not None or not result:
        return None
    try:
        records = recorded_locks(manifest, git)
    except CarryError:
        return None
    composed = [doc.get("result") for _where, doc in records]     # newest first, each once
    if result not in composed[1:]:         # the last sync's own (green), or synced elsewhere
        return None
    lock = lock_path(manifest)
    top = work_tree_top(lock.resolve().parent)
    inner = path_in(top, lock) if top is not None else None
    # HEAD's lock only where it is the lock on disk, the night this diff ends at (h253's review: a green night's
    # lock not committed yet, HEAD's was the night before, and the command compared two nights with the red one)
    said = f"HEAD:{inner}" if inner and _committed(top, inner, lock) else str(lock)
    return {"composed": composed[0], "record": f"{nights_ref(manifest)}:{composed[0]}.lock",
            "command": shlex.join(["carrytool", "diff", said, "REPORT.json", *options])}


def _committed(top: Path | None, inner: str, lock: Path) -> bool:
    """Whether HEAD of the work tree TOP holds the lock on disk LOCK (as INNER) as it is (nights._same_lock)."""
    try:
        with Git(top) as git:           # type: ignore[arg-type]
            committed = git.blob_at_rev("HEAD", inner)
        return committed is not None and _same_lock(committed, lock.read_bytes())
    except (CarryError, OSError):
        return False


def said_red(red: dict[str, Any]) -> str:
    """The line text and Markdown say of a red night `diff` did not reach."""
    return (f"the last sync in --repo composed {red['composed'][:12]} and wrote no lock (a red night): this diff ends "
            f"at the last night that wrote one; that night's report (`sync --report FILE`) shows it: {red['command']}")
