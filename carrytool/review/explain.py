"""`carrytool explain`: the plan and why, for reviewers. Nothing is written but objects.

The plan is sync's own (`plan_and_compose` with `dry_run`): no branch moves, no lock file is written.
On top of it come the overlap map of every entry (superseded ones included), the coverage of each
union, suggestions (unions to create, stale folds, drift), and, for the entries asked about, stories.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Union

from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import InputError
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.plan import APPLIED, Step
from carrytool.pipeline.resolve import Resolved
from carrytool.pipeline.sync import branch_ref, evaluate_asserts, plan_and_compose
from carrytool.pipeline.sync_records import Planned, SyncOptions
from carrytool.review.coverage import describe_assert, union_coverage, with_sync_verdicts
from carrytool.review.evidence import (
    EntryFacts,
    Sources,
    gather_evidence,
    hunks_later,
)
from carrytool.review.explanation import Explanation
from carrytool.review.overlap import OverlapMap, StartedOverlaps, start_overlaps
from carrytool.review.story import tell
from carrytool.review.suggest import drift, stale_folds, union_groups
from carrytool.review.upstream_has import upstream_has

Progress = Callable[[str, int, int], None]


def explain(manifest: Manifest, git: Git, *, offline: bool = False, entries: Sequence[Entry] = (),
            progress: Progress | None = None) -> Explanation:
    """Plan like sync (writing nothing but objects), then map overlaps, coverage and suggestions."""
    early: dict[str, object] = {}
    sources = Sources(git)

    def start(resolved: Resolved) -> None:
        # what needs only the inputs: every entry's facts, its merge alone onto upstream, and the pair
        # merges, which a merge-tree process of their own answers while sync's plan is composed
        found = gather_evidence(git, manifest, resolved, [Step(e) for e in manifest.entries], hunks=False)
        early["evidence"] = found
        hunks = hunks_later(git, list(found.values()))      # the merges need none: git reads them meanwhile
        # the hunks and the scopes of the files diffs share (parsing) start in a thread while git merges the
        # entries alone, and go on (the pairs' scopes) while sync's plan is composed
        started = early["overlaps"] = start_overlaps(git, manifest, resolved.upstream, list(found.values()),
                                                     sources, hunks)
        started.compare_later(sources)

    try:
        planned = plan_and_compose(manifest, git, SyncOptions(dry_run=True, offline=offline), progress,
                                   command="explain", resolved_hook=start)
    except BaseException:
        if "overlaps" in early:          # the parsing thread stops before the error goes on
            with contextlib.suppress(Exception):
                early["overlaps"].wait()  # type: ignore[attr-defined]
        raise
    resolved = planned.resolved
    evidence: dict[str, EntryFacts] = early["evidence"]  # type: ignore[assignment]
    by_id = {step.id: step for step in planned.steps}
    for item in evidence.values():          # the facts' steps are the planned ones, as sync settled them
        if item.step is not None:
            item.step = by_id[item.id]
    started: StartedOverlaps = early["overlaps"]  # type: ignore[assignment]
    started.wait()       # the scopes, parsed in a thread (its Sources are the ones upstream_has reads)
    # what upstream already has of an entry that conflicts with it alone (h185: merged as another commit),
    # from the merges alone: read while git still merges the pairs (60 xarray PRs: 0.3 s of 0.8 s waited
    # for them, every pair merging doc/whats-new.rst, 480 KB)
    has = upstream_has(git, resolved.upstream, evidence, sources, list(started.upstream_conflicts()))
    overlap_map = started.finish(sources)
    left_out = _leave_out_merged(overlap_map, planned.steps)
    for overlap in overlap_map.overlaps:    # a pair whose later is built on the earlier's head: no union's
        earlier, later = by_id.get(overlap.entries[0]), by_id.get(overlap.entries[1])
        overlap.stacked = later is not None and overlap.entries[0] in later.built_over
        overlap.held = later is not None and overlap.entries[0] in later.held_by     # the reverse (h265)
        if earlier is not None and later is not None and earlier.head and later.head:   # one branch's commits
            overlap.shared_commits = len(git.outside(resolved.upstream, earlier.head)
                                         & git.outside(resolved.upstream, later.head))
        overlap.applied_stacked = overlap.stacked and later is not None and later.stacked and \
            later.stacked_onto is not None and later.stacked_onto[0] == overlap.entries[0]
    full_heads = _full_heads(git, manifest)
    coverage = union_coverage(manifest, evidence, sources, full_heads)
    with_sync_verdicts(coverage, planned.report.warnings,
                       {step.id: step.dropped_on_purpose for step in planned.steps if step.dropped_on_purpose},
                       {step.id: step.reconciled for step in planned.steps if step.reconciled},
                       {step.id: step.provided for step in planned.steps if step.provided},
                       {step.id: step.has_anyway for step in planned.steps if step.has_anyway})
    suggestions = union_groups(manifest, overlap_map.overlaps, evidence, overlap_map.upstream_conflicts)
    suggestions += stale_folds(git, resolved.upstream, planned.report.warnings)
    suggestions += drift(git, manifest, resolved.upstream, evidence, resolved.patch_bases)
    ex = Explanation(manifest, planned, evidence, sources, overlap_map, coverage, suggestions,
                     _onto(planned), full_heads, git.ref_value(branch_ref(manifest)), overlaps_left_out=left_out)
    ex.upstream_has = has
    ex.asserts = _evaluate(manifest, git, planned)
    if ex.asserts:
        planned.report.asserts = ex.asserts
    ex.stories = [tell(git, ex, next(s for s in planned.steps if s.id == e.id)) for e in entries]
    sources.spans.save()        # the blobs parsed, for the next run: one file
    return ex


def _leave_out_merged(overlap_map: OverlapMap, steps: Sequence[Step]) -> list[str]:
    """Drop from OVERLAP_MAP the pairs of the entries sync skips as merged upstream, and return those of them that
    had a pair: their change is upstream's, no pair of theirs is composed (h244: a squashed PR was listed beside
    every PR that touched its files)."""
    merged = [step.id for step in steps if step.reason == "merged-upstream"]
    dropped = [o for o in overlap_map.overlaps if set(o.entries) & set(merged)]
    gone = {id(o) for o in dropped}     # by identity: `in` compared whole overlaps field by field (0.13 s on black)
    overlap_map.overlaps = [o for o in overlap_map.overlaps if id(o) not in gone]
    return [entry for entry in merged if any(o.involves(entry) for o in dropped)]


def _onto(planned: Planned) -> dict[str, str]:
    """Entry -> the composed commit it is (or would be) applied onto, in manifest order."""
    tip, out = planned.resolved.upstream, {}
    for step in planned.steps:
        out[step.id] = tip
        if step.status == APPLIED and step.commit:
            tip = step.commit
    return out


def _full_heads(git: Git, manifest: Manifest) -> dict[str, str]:
    out = {}
    for entry in manifest.entries:
        for sup in entry.supersedes:
            if sup.head and (sha := git.commit_by_abbreviation(sup.head)):
                out[sup.head] = sha
    return out


def _evaluate(manifest: Manifest, git: Git, planned: Planned) -> list[AssertOutcome] | None:
    """The asserts on the composed tree, when the assertion engine is installed (None when it is not)."""
    if planned.composition is None:
        return None
    try:
        return evaluate_asserts(manifest, git, planned.composition.result)
    except ImportError:
        return None


def find_entries(manifest: Manifest, names: Sequence[str]) -> list[Entry]:
    """The entries named on the command line (`pr/45612`, `45612`, `#45612`, `carry/NAME`, `NAME`)."""
    out = []
    for name in names:
        entry = manifest.find_entry(name.lstrip("#"))
        if entry is None:
            raise _unknown(manifest, name)
        if entry not in out:
            out.append(entry)
    return out


def _unknown(manifest: Manifest, name: str) -> InputError:
    ids = [e.id for e in manifest.entries]
    words = ids + [e.id.split("/", 1)[1] for e in manifest.entries]
    close = difflib.get_close_matches(name.lstrip("#"), words, n=3, cutoff=0.5)
    close_ids = list(dict.fromkeys(manifest.find_entry(c).id for c in close))  # type: ignore[union-attr]
    hint = (f"did you mean {', '.join(close_ids)}?" if close_ids else
            f"the manifest's entries are: {', '.join(ids[:12])}" + (" ..." if len(ids) > 12 else ""))
    return InputError(f"no entry '{name}' in the manifest", where=str(manifest.path), hint=hint)


# -- the drafted union commit message ------------------------------------------------------------------

Source = Union[Explanation, Planned, Mapping[str, EntryFacts]]


def draft_union_message(manifest: Manifest, planned_or_facts: Source, entry: Entry | str) -> str:
    """The structured commit message of a union: subject, composed PRs at their heads, files, exclusions, asserts.

    PLANNED_OR_FACTS is an Explanation (everything known), a Planned (heads only: files of wholly
    superseded PRs are not known to it) or the evidence mapping (id -> EntryFacts). Deterministic.
    """
    union = manifest.find_entry(entry) if isinstance(entry, str) else entry
    if union is None or union.kind != "carry":
        raise InputError(f"{entry if isinstance(entry, str) else entry.id} is not a carry of the manifest")
    facts, heads = _facts_and_heads(planned_or_facts)
    mine = facts.get(union.id)
    lines = [f"carry: {union.name}: {union.title or 'union of ' + ', '.join(f'#{s.pr}' for s in union.supersedes)}", ""]
    base = _union_onto(planned_or_facts, union, mine)
    onto = f" onto {base}" if base else ""
    lines.append(f"One fork carry composing {len(union.supersedes)} upstream PR(s){onto}:")
    contributions: dict[str, list[str]] = {}
    for sup in union.supersedes:
        pr = facts.get(f"pr/{sup.pr}")
        pr_entry = manifest.entry(f"pr/{sup.pr}")
        title = (pr_entry.title if pr_entry and pr_entry.title else None) or (pr.entry.title if pr else None) \
            or _subject(planned_or_facts, pr)
        head = _full(planned_or_facts, sup.head) or heads.get(sup.pr) or (pr.head if pr else None)
        now = heads.get(sup.pr)
        state = " (folded; the PR is now at " + now[:12] + ")" if sup.head and now and head and now != head else ""
        lines.append(f"  #{sup.pr} {title or ''}".rstrip())
        lines.append(f"      head {head or 'unknown'}{state}")
        files = [f for f in (pr.files if pr else []) if not sup.paths or any(_match(p, f) for p in sup.paths)]
        if sup.paths:
            lines.append(f"      only {', '.join(sup.paths)}")
        for path in files:
            contributions.setdefault(path, []).append(f"#{sup.pr}")
    lines += ["", "Files:"]
    for path in (mine.files if mine else sorted(contributions)):
        lines.append(f"  {path}: " + (" ".join(contributions.get(path, [])) or "fork-only"))
    lines += _excluded(manifest, union, facts)
    lines += _guards(manifest, union, mine)
    trailer = " ".join(str(s.pr) + (":" + ",".join(s.paths) if s.paths else "") for s in union.supersedes)
    lines += ["", f"Carry-Union: {union.name}", f"Carry-Supersedes: {trailer}"]
    return "\n".join(lines) + "\n"


def _facts_and_heads(source: Source) -> tuple[Mapping[str, EntryFacts], dict[int, str]]:
    if isinstance(source, Explanation):
        return source.evidence, dict(source.planned.resolved.heads)
    if isinstance(source, Planned):
        found = {s.id: EntryFacts(s.entry, s, s.head, s.base, list(s.all_changes)) for s in source.steps if s.head}
        return found, dict(source.resolved.heads)
    heads = {f.entry.number: f.head for f in source.values() if f.entry.kind == "pr" and f.head}
    return source, heads  # type: ignore[return-value]


def _union_onto(source: Source, union: Entry, mine: EntryFacts | None) -> str | None:
    """The upstream the union is folded onto: a patch union's base is synthetic (the patch's preimage),
    so for it the upstream being planned on is the answer, as `union compose` writes it."""
    if union.patch and isinstance(source, (Explanation, Planned)):
        return source.planned.resolved.upstream if isinstance(source, Explanation) else source.resolved.upstream
    return mine.base if mine else None


def _full(source: Source, short: str | None) -> str | None:
    if short and isinstance(source, Explanation):
        return source.full_heads.get(short, short)
    return short


def _subject(source: Source, pr: EntryFacts | None) -> str | None:
    if pr is None or pr.head is None or not isinstance(source, Explanation):
        return None
    return str(source.sources.git.commit_info(pr.head)["message"]).split("\n", 1)[0] or None


def _match(pattern: str, path: str) -> bool:
    from carrytool.manifest.paths import matches

    return matches(pattern, path)


def _excluded(manifest: Manifest, union: Entry, facts: Mapping[str, EntryFacts]) -> list[str]:
    lines = [f"  {pattern}: excluded by the manifest (this carry must not touch it)" for pattern in union.excludes]
    for sup in union.supersedes:
        pr = facts.get(f"pr/{sup.pr}")
        if not sup.paths or pr is None:
            continue
        outside = [f for f in pr.files if not any(_match(p, f) for p in sup.paths)]
        own = manifest.entry(f"pr/{sup.pr}")
        carried = f"pr/{sup.pr}'s own entry carries it" if own and own.enabled else "not carried"
        lines += [f"  {path} of #{sup.pr}: stays outside the union ({carried})" for path in outside]
    return (["", "Excluded:"] + lines) if lines else []


def _guards(manifest: Manifest, union: Entry, mine: EntryFacts | None) -> list[str]:
    related = {union.id, *(f"pr/{s.pr}" for s in union.supersedes)}
    files = set(mine.files) if mine else set()
    lines = []
    for spec in manifest.asserts:
        if spec.entry in related or spec.file in files:
            lines.append(f"  {describe_assert(spec)}")
            if spec.why:
                lines.append(f"      why: {spec.why}")
    return (["", "Guarded by:"] + lines) if lines else []
