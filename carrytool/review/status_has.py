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

from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry
from carrytool.review.evidence import EntryFacts, Sources, read_evidence_hunks
from carrytool.review.upstream_has import UpstreamHas, upstream_has


def has_of(git: Git, entry: Entry, upstream: str, head: str) -> UpstreamHas | None:
    """What UPSTREAM already has of ENTRY's change (its merge base with UPSTREAM to HEAD); None when nothing."""
    base = git.merge_base(upstream, head)
    if base is None or base == head:
        return None
    facts = EntryFacts(entry, None, head, base, git.diff_trees([(base, head)])[0])
    read_evidence_hunks(git, [facts])
    sources = Sources(git)
    return upstream_has(git, upstream, {entry.id: facts}, sources, [entry.id]).get(entry.id)


def every_hunk(found: UpstreamHas) -> bool:
    """Upstream has every hunk of it that tells (as explain's `next:` says "every hunk of it counted")."""
    return found.hunks > found.trivial and len(found.present) == found.hunks - found.trivial


def drop_said(found: UpstreamHas) -> str:
    """The end of a `drop`'s why: what to do (the commit is in `found.said()`)."""
    counted = "its one hunk" if found.hunks - found.trivial == 1 else "every hunk of it counted"
    return f"upstream has {counted}, so `carrytool status --write` removes its entry"


def closed_made(git: Git, entry: Entry, upstream: str, head: str | None, why: str) -> dict[str, str] | None:
    """Of a PR closed without merging (online): when it conflicts with UPSTREAM alone and upstream already has
    some of it (made as another commit: a maintainer's rewrite, a squash the forge does not call a merge), the
    suggestion (`drop` when upstream has every hunk) and WHY with what upstream has; None otherwise. One merge
    of its HEAD onto upstream (as sync merges a PR alone), and the weighing only when it conflicts."""
    if not head or git.object_type(head) != "commit" or git.merge_trees([(upstream, head)])[0].clean:
        return None
    found = has_of(git, entry, upstream, head)
    if found is None:
        return None
    explain = f"`carrytool explain {entry.id}` says more"
    if every_hunk(found):
        return {"suggestion": "drop", "why": f"{why}; but {found.said()}; {drop_said(found)} ({explain})"}
    return {"suggestion": "investigate", "why": f"{why}; {found.said()} ({explain})"}
