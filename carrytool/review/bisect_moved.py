"""The head an entry had at the last good night, for `bisect`: an assert that guards an entry (`entry:`) fails
on upstream by design, so when upstream + that entry fails it too, no prefix of the chain passes and bisect
blamed nobody, though the entry broke it itself by moving (h241, sqlalchemy: pr/13455 force-pushed without
the code its assert checks). sync's records of each night (`refs/carrytool/<branch>/nights`, red nights too)
and the lock beside the manifest (a green night's) say which head the entry had when the assert held; next to
a recorded night, the lock is read when git tells it is older (bisect_age, h256)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from carrytool.asserts import evaluate_all
from carrytool.asserts.spec import AssertSpec
from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import lock_path, parse_lock_file
from carrytool.pipeline.night_record import recorded_locks
from carrytool.pipeline.plan import Step
from carrytool.review.bisect_chain import fill_changes


@dataclass(frozen=True)
class Earlier:
    """An entry's head (a PR) or commit (a carry) at the last good night, and where that night's lock was read."""

    sha: str
    where: str


def last_good_head(manifest: Manifest, git: Git, result: str, entry_id: str,
                   specs: Sequence[AssertSpec], notes: list[str] | None = None) -> Earlier | None:
    """ENTRY_ID's head at the last good night before the one that composed RESULT: the newest of the nights
    sync recorded before it (all of them when RESULT is none of them), then the lock beside MANIFEST (next to
    a recorded night, only when git tells it is older: else NOTES gets why it was not read), whose composed
    tree passes SPECS (judged here: a record may be a red night's). None when no such night is found, it had
    no ENTRY_ID, or its head is not in this repository."""
    for where, doc in _nights(manifest, git, result, notes):
        tree = _tree(git, doc.get("result"))
        if tree is None or not all(o.ok for o in evaluate_all(specs, lambda path: git.file_at(tree, path))):
            continue
        row = next((e for e in doc.get("entries", []) if isinstance(e, dict) and e.get("id") == entry_id), None)
        sha = row.get("head" if entry_id.startswith("pr/") else "commit") if row else None
        return Earlier(sha, where) if isinstance(sha, str) and _tree(git, sha) is not None else None
    return None


def _nights(manifest: Manifest, git: Git, result: str,
            notes: list[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, lock document) of the nights before RESULT's, newest first, then the lock beside MANIFEST; when
    RESULT is a night sync recorded, the lock only when its night is none of the records and git tells it is
    older (h251: the lock, a newer green night's, was read as the last good night of an older red one; a lock
    holds no date; h256: a lock no record holds was then never read). NOTES gets why, when it cannot tell."""
    recorded = recorded_locks(manifest, git)
    position = next((n for n, (_, doc) in enumerate(recorded) if doc.get("result") == result), None)
    seen = {result}
    for where, doc in recorded[position + 1:] if position is not None else recorded:
        seen.add(str(doc.get("result")))
        yield where, doc
    path = lock_path(manifest)
    try:
        doc = parse_lock_file(path)
    except (OSError, CarryError):
        return
    if doc.get("result") in seen:
        return
    if position is not None:
        if any(doc.get("result") == other.get("result") for _, other in recorded):
            return          # its night is recorded, newer than RESULT's: the records' order says so
        from carrytool.review.bisect_age import lock_age

        age = lock_age(git, path, doc, recorded[position][1])
        if age.older is None and notes is not None:
            note = f"the lock beside the manifest ({path}) was not read as the last good night: sync's records " \
                   f"here do not hold its night, and git cannot tell whether it is older than the night bisected " \
                   f"({age.why})"
            if note not in notes:
                notes.append(note)
        if not age.older:
            return
    yield str(path), doc


def _tree(git: Git, sha: object) -> str | None:
    """The tree of commit SHA, when this repository has it."""
    if not isinstance(sha, str) or git.object_type(sha) != "commit":
        return None
    return git.tree_of(sha)


def step_at(git: Git, upstream: str, step: Step, sha: str) -> Step:
    """A pending copy of STEP with head (or commit) SHA: its base (a PR's merge base with UPSTREAM, a carry's
    first parent) and its changes, less the paths STEP has filtered (a union provides them)."""
    if step.entry.kind == "pr":
        base = git.merge_bases(upstream, [sha]).get(sha)
    else:
        parents = git.commit_info(sha)["parents"]
        base = parents[0] if parents else None      # type: ignore[index]
    moved = Step(step.entry, head=sha, base=base, filtered=list(step.filtered), provided_by=dict(step.provided_by))
    fill_changes(git, [moved])
    return moved
