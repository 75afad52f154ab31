"""The chain `carrytool bisect` searches: one commit per applied entry, composed as sync would (in memory,
on_conflict forced to skip so a red night can still be searched), or read back from a composed commit's
`Carry-*` trailers; with the entries the night left out for a conflict (their steps)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from carrytool.errors import InputError
from carrytool.gitlayer.git import EMPTY_TREE, Git
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.plan import APPLIED, CONFLICT, Step
from carrytool.pipeline.sync import plan_and_compose
from carrytool.pipeline.sync_records import SyncOptions

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Link:
    """One applied entry of the chain: its composed commit and the facts to compose it again."""

    id: str
    commit: str
    step: Step


@dataclass(frozen=True)
class Untried:
    """An entry an assert guards that the chain left out and `bisect --rev` could not try: why, and whether a
    sync, fetching it, would let it be tried (FETCH)."""

    id: str
    why: str
    fetch: bool = False


@dataclass(frozen=True)
class ComposedWith:
    """The head (a PR) or commit (a carry, a patch) `bisect --rev` composed a left-out entry with: NIGHT, the
    one the night had (its lock records it), else WHAT it is, in words (its head fetched now, ...), which the
    night may not have had (h193: a PR pushed again since was bisected as if the night had composed it)."""

    sha: str
    night: bool
    what: str


@dataclass(frozen=True)
class Chain:
    upstream: str
    links: tuple[Link, ...]
    # the entries a night composing the manifest did not apply for a conflict (their steps, with the facts to
    # compose them again): an assert's `entry:` among them is searched with all the same (h179)
    left_out: tuple[Step, ...] = ()
    # those of them `bisect --rev` could not try (a head never fetched here, a patch that does not apply)
    untried: tuple[Untried, ...] = ()
    # with --rev: what each of the left-out entries was composed with
    composed_with: tuple[tuple[str, ComposedWith], ...] = ()
    # with --rev: the composed commit the chain was read from (explain, the next command, reads today's plan)
    rev: str | None = None


def searchable(manifest: Manifest) -> Manifest:
    """MANIFEST with every `on_conflict: fail` turned into skip: a red night's chain can be searched."""
    entries = tuple(dataclasses.replace(e, on_conflict="skip") if e.on_conflict == "fail" else e
                    for e in manifest.entries)
    policy = manifest.policy
    if policy.on_conflict == "fail":
        policy = dataclasses.replace(policy, on_conflict="skip")
    return dataclasses.replace(manifest, entries=entries, policy=policy)


def composed_chain(manifest: Manifest, git: Git, *, offline: bool = False, locked: bool = False,
                   progress: Progress | None = None) -> Chain:
    """Compose MANIFEST as sync would, in memory (only objects are written), conflicts skipped."""
    options = SyncOptions(offline=offline, locked=locked, dry_run=True, locked_as="bisect --locked")
    planned = plan_and_compose(searchable(manifest), git, options, progress, command="bisect")
    links = tuple(Link(s.id, s.commit, s) for s in planned.steps if s.status == APPLIED and s.commit)
    return Chain(planned.resolved.upstream, links, tuple(s for s in planned.steps if s.status == CONFLICT))


def chain_at(manifest: Manifest, git: Git, rev: str) -> Chain:
    """Read the chain of composed commit REV from its `Carry-Entry/Head/Base/Filtered` trailers."""
    sha = git.rev_parse(rev)
    if sha is None:
        raise InputError(f"--rev {rev}: no such commit in this repository")
    found: list[tuple[str, Step]] = []
    current = sha
    while True:
        info = git.commit_info(current)
        trailers = _trailers(str(info["message"]))
        parents = info["parents"]
        if "Carry-Entry" not in trailers or not parents:
            break
        found.append((current, _step_of(manifest, trailers)))
        current = parents[0]  # type: ignore[index]
    if not found:
        raise InputError(f"--rev {rev}: {sha[:12]} is not a commit carrytool composed (no Carry-Entry trailer)",
                         hint="pass the result.sha of a sync report, or the fork branch")
    found.reverse()
    fill_changes(git, [step for _, step in found])
    return Chain(current, tuple(Link(step.id, commit, step) for commit, step in found), rev=sha)


def _trailers(message: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Carry-"):
            out.setdefault(key, []).append(value.strip())
    return out


def _step_of(manifest: Manifest, trailers: dict[str, list[str]]) -> Step:
    entry_id = trailers["Carry-Entry"][0]
    entry = manifest.entry(entry_id)
    if entry is None:       # an entry since removed from the manifest: still part of that night's chain
        kind, _, rest = entry_id.partition("/")
        entry = Entry("pr", number=int(rest)) if kind == "pr" and rest.isdigit() else Entry("carry", name=rest)
    step = Step(entry, head=_one(trailers, "Carry-Head"), base=_one(trailers, "Carry-Base"))
    for value in trailers.get("Carry-Filtered", []):
        path, _, source = value.rpartition(" (from ")
        step.filtered.append(path)
        step.provided_by[path] = source.rstrip(")")
    return step


def _one(trailers: dict[str, list[str]], key: str) -> str | None:
    values = trailers.get(key)
    return values[0] if values else None


def fill_changes(git: Git, steps: Sequence[Step]) -> None:
    """Each of STEPS' changes (its base, or the empty tree, to its head; one diff-tree batch), less the paths it has
    filtered (a union provides them)."""
    todo = [s for s in steps if s.head]
    for step, changes in zip(todo, git.diff_trees([(s.base or EMPTY_TREE, s.head) for s in todo])):  # type: ignore[misc]
        step.all_changes = changes
        filtered = set(step.filtered)
        step.changes = [c for c in changes if not set(c.paths) <= filtered] if filtered else list(changes)
