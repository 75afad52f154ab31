"""The entries an assert guards (`entry:`) that a composed commit's chain does not hold, with the facts to
compose them again: `bisect --rev` reads the chain from the commits' trailers, which name only the entries
applied, so an entry skipped for a conflict is found in the manifest and resolved from what the repository
holds (nothing is fetched): the head (or commit) the night's lock records, else a carry's commit or patch,
a PR's pinned head or the head sync fetched, which the night may not have had (h179, h193)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline import facts
from carrytool.pipeline.plan import PENDING, Step, plan_paths, plan_static
from carrytool.pipeline.resolve import Resolved, commit_patch, namespace
from carrytool.review.bisect_chain import ComposedWith, Untried
from carrytool.review.bisect_night import NightInputs


@dataclass(frozen=True)
class LeftOut:
    """The steps to try, those that cannot be tried (why), and what each step tried is composed with."""

    steps: tuple[Step, ...] = ()
    untried: tuple[Untried, ...] = ()
    composed_with: tuple[tuple[str, ComposedWith], ...] = ()


def left_out_steps(manifest: Manifest, git: Git, upstream: str, present: Collection[str],
                   wanted: Collection[str], night: NightInputs | None = None) -> LeftOut:
    """The steps of the manifest's entries WANTED names that are not PRESENT (the chain's ids), enabled, not
    superseded, and whose head this repository has, with their head, base and changes onto UPSTREAM; and those
    of them that cannot be tried, each with why (h187: an `entry:` whose PR head was never fetched was left
    out without a word). NIGHT: the inputs the night's lock records; its head of an entry is the one tried,
    and one it does not have is not tried (h193: the head fetched since was, as if the night had had it)."""
    steps = [step for step in plan_static(manifest, {})
             if step.id in wanted and step.id not in present and step.status == PENDING]
    resolved = Resolved(upstream=upstream)
    found, untried, composed = [], [], {}
    for step in steps:
        entry = step.entry
        try:
            with_what = _nights(git, entry, night) if night is not None else _now(manifest, git, entry, resolved)
        except CarryError as exc:   # a patch that no longer applies, ...: not composed, as sync would not either
            untried.append(Untried(step.id, f"it cannot be composed here: {exc.message}"))
            continue
        if isinstance(with_what, Untried):
            untried.append(with_what)
            continue
        if entry.kind == "pr":
            resolved.heads[entry.number] = with_what.sha     # type: ignore[index]
        else:       # (a patch's base: its commit's parent, or the one commit_patch made)
            resolved.commits[entry.id] = with_what.sha
        composed[step.id] = with_what
        found.append(step)
    if not found:
        return LeftOut((), tuple(untried))
    try:
        facts.gather(git, resolved, found)
    except CarryError as exc:   # a head sharing no history with upstream
        return LeftOut((), (*untried, *(Untried(step.id, f"it cannot be composed here: {exc.message}")
                                        for step in found)))
    plan_paths(manifest, found)     # a PR's paths a union provides are left to it
    tried = tuple(step for step in found if step.head and step.status == PENDING)
    return LeftOut(tried, tuple(untried), tuple((step.id, composed[step.id]) for step in tried))


def _nights(git: Git, entry: Entry, night: NightInputs) -> ComposedWith | Untried:
    """ENTRY's head (or commit) as the night's lock records it, when this repository has it."""
    what = "head" if entry.kind == "pr" else "commit"
    if entry.id not in night.shas:
        return Untried(entry.id, f"it was no entry of that night ({night.where} has no {entry.id})")
    sha = night.shas[entry.id]
    if sha is None:
        return Untried(entry.id, f"it had no {what} that night ({night.where} records none)")
    if git.object_type(sha) != "commit":
        return Untried(entry.id, f"the {what} it had that night, {sha} ({night.where}), is not in this repository: "
                                 "fetch it by its SHA (if the forge still has it), then bisect again")
    return ComposedWith(sha, True, f"the {what} it had that night ({night.where})")


def _now(manifest: Manifest, git: Git, entry: Entry, resolved: Resolved) -> ComposedWith | Untried:
    """ENTRY's head (or commit, or patch) as the manifest and the repository have it now (a patch's commits
    made into RESOLVED)."""
    if entry.patch:
        base, head, resolved.messages[entry.id] = commit_patch(manifest, git, entry, resolved.upstream)
        resolved.commits[entry.id], resolved.patch_bases[entry.id] = head, base
        return ComposedWith(head, False, f"its patch now ({entry.patch})")
    if entry.kind == "carry":       # (a commit: a ref naming a tag is peeled)
        head, what = git.rev_parse(entry.commit or ""), "its commit in the manifest"
    elif entry.head:
        head, what = git.rev_parse(entry.head), "its pinned head"
    else:
        head, what = git.rev_parse(f"{namespace(manifest)}/pr/{entry.number}"), "its head fetched now"
    if head is None:
        return Untried(entry.id, _not_here(manifest, entry), fetch=True)
    return ComposedWith(head, False, what)


def _not_here(manifest: Manifest, entry: Entry) -> str:
    """Why ENTRY's head or commit is not in the repository, in words."""
    if entry.kind == "carry":
        return f"its commit {entry.commit} is not in this repository"
    if entry.head:
        return f"its pinned head {entry.head} is not in this repository"
    return f"its head was never fetched here (no {namespace(manifest)}/pr/{entry.number})"
