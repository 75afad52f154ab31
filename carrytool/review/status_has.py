"""What upstream already has of a PR that conflicts with it alone, for `carrytool status`: explain's answer
(review.upstream_has, its cache included), so status can say upstream made the change as another commit
(h248: h245's trl trial, pr/6432 squashed upstream as 65eb0dfb25; status said only "investigate", while
`explain pr/6432` named the commit).

The PR's own change is read as explain reads it (base: its merge base with upstream; its diff to its head, as
zero-context hunks), so the answer kept under `<git dir>/carrytool/cache/upstreamhas-git<VERSION>.json` is
the one explain keeps: a status after an explain on the same upstream weighs nothing and runs no `git log -S`;
else it runs at most one path-limited `git log -S` for the PR.

explain's key holds the PR's changes and hunks, which status had to read again on every run (a merge base, a
diff and a patch: three git processes, and the weighing's modules imported) to find the answer it keeps (h256:
`status --offline` 0.47 -> 0.76 s with one such PR). What status says of it follows from upstream's commit and
the PR's head alone (the base is their merge base; the changes, the hunks and the weighing follow from those),
given the git and the carrytool code that answer: kept by those in `statushas-git<VERSION>.json` beside it, a
status after the first reads its words and runs none of that. Only what explain's cache kept is kept (a `git
log -S` that failed named no commit: the next run asks again).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry
from carrytool.pipeline.kept import KeptAnswers
from carrytool.review.hascache import CODE, RULE

SAID_MAX = 2_000        # answers the file keeps


@dataclass(frozen=True)
class Had:
    """What status says of what upstream already has of a PR: explain's words (UpstreamHas.said), whether upstream
    has every hunk of it counted (`every`), whether it counts one hunk, and how many of the hunks that answer
    counts neither way (lines that say nothing on their own: an import, `return True`, a blank line) stand in a
    file upstream has otherwise than the PR's head (`unmade`): upstream may lack them (h253's review: a PR's
    one-line re-export, or its `return False` -> `return True`, was dropped with the hunks upstream made)."""

    said: str
    every: bool
    one: bool
    unmade: int


def _decode(raw: object) -> dict | None:
    if isinstance(raw, dict) and raw.get("none") is True:
        return raw
    ok = isinstance(raw, dict) and isinstance(raw.get("said"), str) and isinstance(raw.get("every"), bool) \
        and isinstance(raw.get("one"), bool) and type(raw.get("unmade")) is int
    return raw if ok else None


# this run's answers, by the repository asked: the file is written once a run, by `save_kept` (h259: each PR weighed
# wrote it whole again, up to SAID_MAX answers)
_RUNS: weakref.WeakKeyDictionary[Git, KeptAnswers[dict]] = weakref.WeakKeyDictionary()


def _kept(git: Git) -> KeptAnswers[dict]:
    kept = _RUNS.get(git)
    if kept is None:
        kept = _RUNS[git] = KeptAnswers(git.common_dir / "carrytool" / "cache", "statushas", git.version,
                                        f"{RULE}/said-2", (*CODE, "review/status_has.py"), SAID_MAX, _decode,
                                        lambda answer: answer)
    return kept


def save_kept(git: Git, *, write: bool = True) -> None:
    """Write what `has_of` weighed in this run on GIT to the kept file (nothing when it weighed nothing new; nor
    without WRITE: `sync --dry-run` writes nothing), and let the run's answers go."""
    kept = _RUNS.pop(git, None)
    if kept is not None and write:
        kept.save()


def has_of(git: Git, entry: Entry, upstream: str, head: str, *, write: bool = True) -> Had | None:
    """What UPSTREAM already has of ENTRY's change (its merge base with UPSTREAM to HEAD); None when nothing. What
    it weighs is kept in memory, and on disk by the run's `save_kept`; explain's answers it asks for are written
    at once, and not at all without WRITE (`sync --dry-run` writes nothing)."""
    kept = _kept(git)
    key = kept.digest(upstream, head)
    raw = kept.get(key)
    if raw is None:
        answer, keep = _weigh(git, entry, upstream, head, write)
        raw = {"none": True} if answer is None else {"said": answer.said, "every": answer.every, "one": answer.one,
                                                     "unmade": answer.unmade}
        if keep:
            kept.put(key, raw)
    return None if raw.get("none") else Had(raw["said"], raw["every"], raw["one"], raw["unmade"])


def _weigh(git: Git, entry: Entry, upstream: str, head: str, write: bool) -> tuple[Had | None, bool]:
    """(what UPSTREAM has of ENTRY's change to HEAD, weighed as explain weighs it; whether it is to be kept: explain's
    cache kept it, or there is nothing to weigh)."""
    from carrytool.review.evidence import EntryFacts, Sources, read_evidence_hunks
    from carrytool.review.upstream_has import HasFinder

    base = git.merge_base(upstream, head)
    if base is None or base == head:
        return None, True
    facts = EntryFacts(entry, None, head, base, git.diff_trees([(base, head)])[0])
    read_evidence_hunks(git, [facts])
    finder = HasFinder(git, upstream, Sources(git))
    found = finder.find({entry.id: facts}, [entry.id], save=write).get(entry.id)
    # explain's answers switched off (tests weigh both ways) keep none of status's either: kept, they would answer
    keep = finder.keep_answers and (not facts.hunks or finder.kept.get(finder.kept.key(upstream, facts)) is not None)
    if found is None:
        return None, keep
    told = found.hunks - found.trivial
    tree = git.tree_of(upstream)
    trivial = [facts.hunks[i] for i in found.trivial_at]
    made = {hunk.path: _oid(git.blob_at(tree, hunk.path)) == _oid(hunk.new_oid) for hunk in trivial}
    unmade = sum(not made[hunk.path] for hunk in trivial)
    return Had(found.said(), told > 0 and len(found.present) == told, told == 1, unmade), keep


def _oid(value: tuple[str, str] | str | None) -> str | None:
    """A blob's oid (of blob_at's (mode, oid), or an oid); None for none (no file)."""
    oid = value[1] if isinstance(value, tuple) else value
    return None if oid in (None, ZERO) else oid


def every_hunk(had: Had) -> bool:
    """Upstream has every hunk of it that tells (as explain's `next:` says "every hunk of it counted"), and each
    hunk that says nothing on its own stands in a file upstream has as the PR's head has it."""
    return had.every and not had.unmade


_COUNT = re.compile(r"upstream already has (?:its one hunk|all \d+ of its hunks|(\d+) of its (\d+) hunks) ")


def likely_merged(had: Had) -> bool:
    """Whether upstream likely merged it (UpstreamHas.likely_merged: at least half of its hunks that tell), read
    from the count HAD's words open with, which no name or subject comes before (h263: the words "likely merged
    upstream" were looked for anywhere in them, the subject of the commit that made a part of it too)."""
    found = _COUNT.match(had.said)
    return found is not None and (found.group(1) is None or 2 * int(found.group(1)) >= int(found.group(2)))


def unmade_said(had: Had) -> str:
    """Why a PR upstream has every counted hunk of is no `drop` ("" when it has them all, or lacks a counted one)."""
    if not had.unmade or not had.every:
        return ""
    which = "1 hunk that says nothing on its own stands" if had.unmade == 1 else \
        f"{had.unmade} hunks that say nothing on their own stand"
    return f"; not `drop`: {which} in a file upstream has otherwise than the PR's head, so upstream may lack it"


def drop_said(found: Had) -> str:
    """The end of a `drop`'s why: what to do (the commit is in `found.said`)."""
    counted = "its one hunk" if found.one else "every hunk of it counted"
    return f"upstream has {counted}, so `carrytool status --write` removes its entry"


def suggested(had: Had, why: str, drop_end: str, other_end: str) -> dict[str, str]:
    """The suggestion from HAD, with WHY so far: `drop` when upstream has every hunk (`every_hunk`; its words end
    in DROP_END), else `investigate`, saying why it is no drop (ending in OTHER_END)."""
    if every_hunk(had):
        return {"suggestion": "drop", "why": f"{why}; but {had.said}; {drop_said(had)}{drop_end}"}
    return {"suggestion": "investigate", "why": f"{why}; {had.said}{unmade_said(had)}{other_end}"}


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
    explain = f" (`carrytool explain {entry.id}` says more)"
    return suggested(found, why, explain, explain)
