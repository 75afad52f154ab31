"""What upstream already has of a PR that conflicts with it alone, for `carrytool status`: explain's answer
(review.upstream_has, its cache included), so status can say upstream made the change as another commit
(h248: h245's trl trial, pr/6432 squashed upstream as 65eb0dfb25; status said only "investigate", while
`explain pr/6432` named the commit).

The PR's own change is read as explain reads it (base: its merge base with upstream; its diff to its head, as
zero-context hunks), so the answer kept under `<git dir>/carrytool/cache/upstreamhas-git<VERSION>.json` is
the one explain keeps: a status after an explain on the same upstream weighs nothing and runs no `git log -S`;
else it runs at most one path-limited `git log -S` for the PR.
"""

from __future__ import annotations

from dataclasses import dataclass

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry
from carrytool.review.evidence import EntryFacts, Sources, read_evidence_hunks
from carrytool.review.upstream_has import UpstreamHas, upstream_has


@dataclass(frozen=True)
class Had:
    """What upstream already has of a PR (`found`, explain's answer) and how many of the hunks that answer counts
    neither way (lines that say nothing on their own: an import, `return True`, a blank line) stand in a file
    upstream has otherwise than the PR's head (`unmade`): upstream may lack them (h253's review: a PR's one-line
    re-export, or its `return False` -> `return True`, was dropped with the hunks upstream made)."""

    found: UpstreamHas
    unmade: int


def has_of(git: Git, entry: Entry, upstream: str, head: str) -> Had | None:
    """What UPSTREAM already has of ENTRY's change (its merge base with UPSTREAM to HEAD); None when nothing."""
    base = git.merge_base(upstream, head)
    if base is None or base == head:
        return None
    facts = EntryFacts(entry, None, head, base, git.diff_trees([(base, head)])[0])
    read_evidence_hunks(git, [facts])
    sources = Sources(git)
    found = upstream_has(git, upstream, {entry.id: facts}, sources, [entry.id]).get(entry.id)
    if found is None:
        return None
    tree = git.tree_of(upstream)
    trivial = [facts.hunks[i] for i in found.trivial_at]
    made = {hunk.path: _oid(git.blob_at(tree, hunk.path)) == _oid(hunk.new_oid) for hunk in trivial}
    return Had(found, sum(not made[hunk.path] for hunk in trivial))


def _oid(value: tuple[str, str] | str | None) -> str | None:
    """A blob's oid (of blob_at's (mode, oid), or an oid); None for none (no file)."""
    oid = value[1] if isinstance(value, tuple) else value
    return None if oid in (None, ZERO) else oid


def every_hunk(had: Had) -> bool:
    """Upstream has every hunk of it that tells (as explain's `next:` says "every hunk of it counted"), and each
    hunk that says nothing on its own stands in a file upstream has as the PR's head has it."""
    found = had.found
    return found.hunks > found.trivial and len(found.present) == found.hunks - found.trivial and not had.unmade


def drop_said(found: UpstreamHas) -> str:
    """The end of a `drop`'s why: what to do (the commit is in `found.said()`)."""
    counted = "its one hunk" if found.hunks - found.trivial == 1 else "every hunk of it counted"
    return f"upstream has {counted}, so `carrytool status --write` removes its entry"


def unmade_said(had: Had) -> str:
    """Why a PR upstream has every counted hunk of is no `drop` ("" when it has them all, or lacks a counted one)."""
    found = had.found
    if not had.unmade or len(found.present) != found.hunks - found.trivial:
        return ""
    which = "1 hunk that says nothing on its own stands" if had.unmade == 1 else \
        f"{had.unmade} hunks that say nothing on their own stand"
    return f"; not `drop`: {which} in a file upstream has otherwise than the PR's head, so upstream may lack it"


def closed_made(git: Git, entry: Entry, upstream: str, head: str | None, why: str) -> dict[str, str] | None:
    """Of a PR closed without merging (online): when it conflicts with UPSTREAM alone and upstream already has
    some of it (made as another commit: a maintainer's rewrite, a squash the forge does not call a merge), the
    suggestion (`drop` when upstream has every hunk) and WHY with what upstream has; None otherwise. One merge
    of its HEAD onto upstream (as sync merges a PR alone), and the weighing only when it conflicts."""
    if not head or git.object_type(head) != "commit" or git.merge_trees([(upstream, head)])[0].clean:
        return None
    had = has_of(git, entry, upstream, head)
    if had is None:
        return None
    explain = f"`carrytool explain {entry.id}` says more"
    if every_hunk(had):
        return {"suggestion": "drop", "why": f"{why}; but {had.found.said()}; {drop_said(had.found)} ({explain})"}
    return {"suggestion": "investigate", "why": f"{why}; {had.found.said()}{unmade_said(had)} ({explain})"}
