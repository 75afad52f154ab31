"""What upstream already has of an entry (review.upstream_has) kept on disk by what decides it: a second explain
on the same upstream weighs no hunk and runs no `git log -S`.

The answer follows from nothing but upstream's commit (its tree, whose files the hunks are looked for in, and
the history `git log -S` walks since the entry's base), the entry's base and head, its changes (each path's
blob before and after) and its hunks (their places and lines), the git that
diffs and walks (its version), and the carrytool that weighs (its version and a digest of the source that
decides, CODE). All of them are content addressed: an answer kept under them is valid forever, as the scope
cache's spans are under a blob SHA. Kept for every entry weighed, those upstream has nothing of too, but
not one whose `git log -S` failed (h219: killed, it named no commit; the next run asks again).

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/upstreamhas-git<X.Y.Z>.json`,
`{"upstreamhas": {KEY: {...}}}`), read whole at the first entry, written whole by a run that weighed one.
A file that cannot be read or written only costs the weighing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from carrytool.pipeline.kept import KeptAnswers

if TYPE_CHECKING:       # (status reads CODE without the weighing's modules: review.status_has)
    from carrytool.pipeline.hunks import Hunk
    from carrytool.review.evidence import EntryFacts

HAS_MAX = 5_000         # answers a file keeps: 80 nights of a manifest whose 60 entries conflict with upstream
RULE = "has-2"          # bump when what upstream_has decides, or how, or what its key holds, changes
# the code that weighs an entry's hunks against upstream's files and names the commit: an answer is this code's only
CODE = ("review/upstream_has.py", "review/has_places.py", "review/has_commit.py", "review/hascache.py",
        "review/evidence.py", "pipeline/hunks.py", "pipeline/basemap.py", "pipeline/structured_hunks.py",
        "gitlayer/history.py", "gitlayer/diffs.py", "gitlayer/objectread.py", "gitlayer/trees.py", "gitlayer/env.py")

Answer = dict[str, Any]     # UpstreamHas as kept (upstream_has.kept / from_kept read and write it)


def _decode(raw: object) -> Answer | None:
    return raw if isinstance(raw, dict) else None


class KeptHas(KeptAnswers[Answer]):
    """upstream_has's answers by key, in memory and (given FOLDER) on disk for the git VERSION."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "upstreamhas", version, RULE, CODE, HAS_MAX, _decode, lambda answer: answer)
        self._said: dict[int, tuple[Hunk, bytes]] = {}   # id(hunk) -> (the hunk, what the key reads of it)

    def key(self, upstream: str, facts: EntryFacts) -> str:
        """The key of what UPSTREAM (a commit) has of FACTS: its base, head, changes and hunks."""
        changes = hashlib.sha1()
        for change in facts.changes:
            changes.update(repr((change.status, change.path, change.old_path, change.old_mode, change.new_mode,
                                 change.old_oid, change.new_oid)).encode())
        hunks = hashlib.sha1(b"".join(self._hunk_said(hunk) for hunk in facts.hunks))
        return self.digest(upstream, facts.base, facts.head, changes.hexdigest(), hunks.hexdigest())

    def _hunk_said(self, hunk: Hunk) -> bytes:
        """What the key reads of HUNK (its place and lines), once per hunk: entries that change a file alike
        share its hunks (evidence.hunks_later; polars' stacked PRs: 20,804 hunks weighed, 3,010 distinct)."""
        found = self._said.get(id(hunk))
        if found is None or found[0] is not hunk:
            found = self._said[id(hunk)] = (hunk, _said(hunk))
        return found[1]


def _said(hunk: Hunk) -> bytes:
    return repr((hunk.path, hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count, hunk.kind, hunk.old_path,
                 hunk.new_oid, hunk.new_mode, len(hunk.removed), len(hunk.added))).encode() + \
        b"\0".join((*hunk.removed, b"", *hunk.added, b""))
