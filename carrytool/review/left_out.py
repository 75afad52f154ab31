"""The entries an assert guards (`entry:`) that a composed commit's chain does not hold, with the facts to
compose them again: `bisect --rev` reads the chain from the commits' trailers, which name only the entries
applied, so an entry skipped for a conflict is found in the manifest and resolved from what the repository
holds (nothing is fetched): a carry's commit or patch, a PR's pinned head or the head sync fetched (h179)."""

from __future__ import annotations

from collections.abc import Collection

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline import facts
from carrytool.pipeline.plan import PENDING, Step, plan_paths, plan_static
from carrytool.pipeline.resolve import Resolved, commit_patch, namespace
from carrytool.review.bisect_chain import Untried


def left_out_steps(manifest: Manifest, git: Git, upstream: str, present: Collection[str],
                   wanted: Collection[str]) -> tuple[tuple[Step, ...], tuple[Untried, ...]]:
    """The steps of the manifest's entries WANTED names that are not PRESENT (the chain's ids), enabled, not
    superseded, and whose head this repository has, with their head, base and changes onto UPSTREAM; and those
    of them that cannot be tried, each with why (h187: an `entry:` whose PR head was never fetched was left
    out without a word)."""
    steps = [step for step in plan_static(manifest, {})
             if step.id in wanted and step.id not in present and step.status == PENDING]
    resolved = Resolved(upstream=upstream)
    found, untried = [], []
    for step in steps:
        entry = step.entry
        try:
            if entry.patch:
                base, head, resolved.messages[entry.id] = commit_patch(manifest, git, entry, upstream)
                resolved.commits[entry.id], resolved.patch_bases[entry.id] = head, base
            else:       # (a commit: a ref naming a tag is peeled)
                head = git.rev_parse(entry.commit or "") if entry.kind == "carry" else \
                    git.rev_parse(entry.head or f"{namespace(manifest)}/pr/{entry.number}")
                if head is None:
                    untried.append(Untried(step.id, _not_here(manifest, entry), fetch=True))
                    continue
                if entry.kind == "carry":
                    resolved.commits[entry.id] = head
                else:
                    resolved.heads[entry.number] = head     # type: ignore[index]
        except CarryError as exc:   # a patch that no longer applies, ...: not composed, as sync would not either
            untried.append(Untried(step.id, f"it cannot be composed here: {exc.message}"))
            continue
        found.append(step)
    if not found:
        return (), tuple(untried)
    try:
        facts.gather(git, resolved, found)
    except CarryError as exc:   # a head sharing no history with upstream
        return (), (*untried, *(Untried(step.id, f"it cannot be composed here: {exc.message}") for step in found))
    plan_paths(manifest, found)     # a PR's paths a union provides are left to it
    return tuple(step for step in found if step.head and step.status == PENDING), tuple(untried)


def _not_here(manifest: Manifest, entry: Entry) -> str:
    """Why ENTRY's head or commit is not in the repository, in words."""
    if entry.kind == "carry":
        return f"its commit {entry.commit} is not in this repository"
    if entry.head:
        return f"its pinned head {entry.head} is not in this repository"
    return f"its head was never fetched here (no {namespace(manifest)}/pr/{entry.number})"
