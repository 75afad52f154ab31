"""Pure planning: manifest + resolved facts in, one Step per entry (status, reason, paths) out.

Nothing here talks to git. The composer later settles the steps that only a merge can decide
(redundant, conflict); everything decidable from the manifest and the diffs is decided here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from carrytool.gitlayer.git import Change, paths_of
from carrytool.manifest import paths
from carrytool.manifest.model import Entry, Manifest

APPLIED, SKIPPED, CONFLICT = "applied", "skipped", "conflict"
PENDING = "pending"   # still to be merged by the composer


@dataclass
class Step:
    """One entry's way through a sync: planned here, settled by the composer."""

    entry: Entry
    status: str = PENDING
    reason: str | None = None
    detail: str | None = None                 # a sentence for humans: why this status
    superseded_by: str | None = None
    provided_by: dict[str, str] = field(default_factory=dict)   # filtered path -> union id
    head: str | None = None
    base: str | None = None
    # a PR upstream merged (its head is in upstream's history) and reverted since: the commit that merged it
    # and the one that reverted it; its base is then the one its change was made on (facts.gather)
    merged_in: str | None = None
    reverted_in: str | None = None
    # a PR built on earlier PR entries' heads (its history holds them, beyond upstream): (id, head) of each,
    # the nearest first (facts.gather); composing may apply it onto one of them when its whole change conflicts
    built_order: tuple[tuple[str, str], ...] = ()
    stacked_onto: tuple[str, str] | None = None     # (id, head) of the PR it was applied onto as its own commits
    stacked_conflict: str | None = None       # its whole change conflicts with the PR it is stacked on
    # earlier PR entries built on this PR (their history holds its head, beyond upstream): they carry its change
    # already, and a conflict of its whole change with theirs is said so, not as a union to make (h265)
    held_by: tuple[str, ...] = ()
    # a PR skipped before its facts were read (superseded, disabled): the head fetched, as the lock records
    # it; the report's `head` (`carrytool diff` of a red night's report says whether it moved: helper-102)
    fetched_head: str | None = None
    changes: list[Change] = field(default_factory=list)        # base -> head, after filtering
    all_changes: list[Change] = field(default_factory=list)    # base -> head, the PR's whole diff
    filtered: list[str] = field(default_factory=list)
    # a union: the own diff of each PR it supersedes whole, by number (facts.gather; the landing checks say
    # which of their files it leaves out). Not in the report: the entries read as before
    superseded_diffs: dict[int, list[Change]] = field(default_factory=dict)
    superseded_heads: dict[int, tuple[str, str]] = field(default_factory=dict)   # ... their (base, head)
    # a union: the PRs its commit (or patch) says it was composed with, by its last `Carry-Supersedes:`
    # trailer (facts.gather); None when it says nothing (a hand-made commit)
    composed_with: frozenset[int] | None = None
    redundant_with: list[str] = field(default_factory=list)
    # superseded (whole, or for its filtered paths) by a union that was not applied: the union's id
    # (say_unapplied_unions); its change there is in no entry of the result
    lost_with: str | None = None
    # superseded whole by a union, and merged upstream since: the union can drop it (sync.merged_under_unions)
    upstream_merged: bool = False
    conflicts: list[dict[str, object]] = field(default_factory=list)
    commit: str | None = None                 # the composed commit that applies it
    parent: str | None = None                 # the composed commit it was applied onto
    resolution: str | None = None             # "theirs" when conflicting hunks were forced
    resolved_paths: list[str] = field(default_factory=list)
    structured: list[dict[str, object]] = field(default_factory=list)         # hunks resolved structurally
    # path -> why the structured merge left it conflicted: {"refused": KIND, "why": SENTENCE}
    structured_refused: dict[str, dict[str, str]] = field(default_factory=dict)
    landing: dict[str, object] | None = None
    # a union: its PRs' hunks it leaves out as its supersedes' `drops` declare ({pr, file, lines, scopes, in, why})
    dropped_on_purpose: list[dict[str, object]] = field(default_factory=list)
    # a union: its PRs' hunks it lacks in regions it reconciled (PR id, file, lines: None for the whole file),
    # no warning; explain's coverage says `reconciled`. Not in the report
    reconciled: list[tuple[str, str, tuple[int, int] | None]] = field(default_factory=list)
    # a union: how each of its PRs' text hunks sync looked for stands in the tree after its step ((PR id, file,
    # lines in the PR's head) -> verbatim, re-expressed, reconciled or absent: pipeline.provided.Provided);
    # explain's coverage takes it. Not in the report
    provided: dict[tuple[str, str, tuple[int, int]], str] = field(default_factory=dict)
    # a union: (PR id, file) of its PRs' files sync checked whole (the union does not change them, was not applied,
    # or was not composed with the PR) and found the composed tree has anyway (upstream took the change, or another
    # entry brought it): no warning; explain's coverage says `verbatim` (h214). Not in the report
    has_anyway: set[tuple[str, str]] = field(default_factory=set)
    # what applying it changed (parent -> commit), when composing knows it without asking git: the upstream
    # delta the fast path wrote into a tree no earlier entry touched at those paths (else None: diff-tree)
    applied_changes: list[Change] | None = None

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def files(self) -> list[str]:
        return paths_of(self.changes)

    @property
    def built_on(self) -> tuple[str, str] | None:
        """(id, head) of the nearest earlier PR entry it is built on, or None."""
        return self.built_order[0] if self.built_order else None

    @property
    def built_over(self) -> frozenset[str]:
        """Every earlier PR entry whose head its history holds."""
        return frozenset(name for name, _head in self.built_order)

    @property
    def stacked(self) -> bool:
        """Applied as its own commits onto the head of a PR it is built on (`stacked_onto`)."""
        return self.stacked_onto is not None

    @property
    def reverted(self) -> str | None:
        """`upstream merged it in M and reverted it in R`, for a PR upstream merged and reverted since."""
        if self.merged_in is None or self.reverted_in is None:
            return None
        return f"upstream merged it in {self.merged_in[:12]} and reverted it in {self.reverted_in[:12]}"

    def skip(self, reason: str, detail: str, status: str = SKIPPED) -> None:
        self.status, self.reason, self.detail = status, reason, detail


@dataclass(frozen=True)
class Violation:
    """A rule the manifest declares and an entry breaks. `code` is the exit code it maps to."""

    kind: str          # owned-path | excludes | precompiled-carry
    entry: str
    path: str
    message: str
    code: int
    other: str | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"kind": self.kind, "entry": self.entry, "path": self.path,
                                   "message": self.message}
        if self.other:
            data["other"] = self.other
        return data


def supersessions(manifest: Manifest) -> dict[int, list[tuple[Entry, tuple[str, ...]]]]:
    """PR number -> the enabled carries that provide it, each with its paths (empty: the whole PR)."""
    out: dict[int, list[tuple[Entry, tuple[str, ...]]]] = {}
    for entry in manifest.entries:
        if not entry.enabled:
            continue
        for sup in entry.supersedes:
            out.setdefault(sup.pr, []).append((entry, sup.paths))
    return out


def plan_static(manifest: Manifest, missing: dict[int, str]) -> list[Step]:
    """Decide what needs no diff: disabled, wholly superseded, missing (under on_missing: skip)."""
    provided = supersessions(manifest)
    steps = []
    for entry in manifest.entries:
        step = Step(entry)
        whole = next((carry for carry, sup_paths in provided.get(entry.number or -1, []) if not sup_paths), None)
        if not entry.enabled:
            step.skip("disabled", "enabled: false in the manifest")
        elif entry.kind == "pr" and whole is not None:
            step.superseded_by = whole.id
            step.skip("superseded", f"provided whole by {whole.id}")
        elif entry.kind == "pr" and entry.number in missing:
            step.skip("missing", missing[entry.number])  # type: ignore[index]
        steps.append(step)
    return steps


def plan_paths(manifest: Manifest, steps: list[Step]) -> list[Violation]:
    """Filter partially superseded PRs, skip precompiled PRs, and collect path violations.

    Needs each pending step's `all_changes`. Returns the violations (owned paths, excludes,
    precompiled carries); the steps they concern stay pending so the report still shows them.
    """
    provided = supersessions(manifest)
    for step in steps:
        if step.status != PENDING:
            continue
        step.changes = list(step.all_changes)
        if step.entry.kind == "pr":
            _filter_partial(step, provided.get(step.entry.number or -1, []))
    violations: list[Violation] = []
    for step in steps:
        if step.status == PENDING:
            violations += _check_precompiled(manifest, step)
    owners = [(pattern, step) for step in steps for pattern in step.entry.owns if step.entry.enabled]
    for step in steps:
        if step.status != PENDING:
            continue
        violations += _check_excludes(step)
        violations += _check_owned(step, owners)
    return violations


def _filter_partial(step: Step, carriers: list[tuple[Entry, tuple[str, ...]]]) -> None:
    kept: list[Change] = []
    for change in step.changes:
        union = next((carry for carry, patterns in carriers
                      if patterns and any(paths.matches_any(patterns, p) for p in change.paths)), None)
        if union is None:
            kept.append(change)
            continue
        for path in change.paths:
            step.filtered.append(path)
            step.provided_by[path] = union.id
    step.changes = kept
    if step.filtered and not kept:
        unions = sorted(set(step.provided_by.values()))
        step.superseded_by = unions[0]
        step.skip("superseded", f"every path it changes is provided by {', '.join(unions)}")


def provided_absent(warnings: Iterable[Mapping[str, Any]]
                    ) -> dict[tuple[str, str], list[tuple[str, tuple[int, ...] | None]]]:
    """(PR id, union id) -> the (file, lines: None for the whole file) of each `provided-absent` warning, in
    order: what the landing checks found a union leaves out (read by sync's rows, its outcome line and
    explain's coverage)."""
    out: dict[tuple[str, str], list[tuple[str, tuple[int, ...] | None]]] = {}
    for warning in warnings:
        if warning.get("kind") == "provided-absent":
            lines = warning.get("lines")
            out.setdefault((str(warning.get("entry")), str(warning.get("other"))), []).append(
                (str(warning.get("file")), tuple(lines) if lines else None))
    return out


def union_judged(union: Step) -> bool:
    """Whether what UNION leaves out of its PRs is its own doing: it was applied, or skipped because the image
    has its change (merged upstream, redundant). One not applied loses them all: its drops are not judged."""
    return union.status == APPLIED or union.reason in ("merged-upstream", "redundant")


def union_lost(union: Step) -> bool:
    """Whether UNION, a carry, leaves out the PRs it supersedes: enabled (a disabled one supersedes nothing:
    helper-144) and not applied, for a reason that does not say the result has its change anyway."""
    return bool(union.entry.supersedes) and union.entry.enabled and not union_judged(union)


def say_unapplied_unions(steps: list[Step], warnings: Iterable[dict[str, object]]) -> None:
    """Say, on each PR entry a union stands for that was not applied (a conflict under `on_conflict: skip`),
    that the PR's change is lost with it: it is skipped as `superseded` (or applied without the union's
    paths) like when the union applies, and `by carry/u` read as all being well (helper-133: the union
    conflicted with a later PR and sync printed ok). WARNINGS: the run's; its `provided-absent` ones name
    the files whose change the result lacks (the landing checks found the rest in it anyway)."""
    by_id = {step.id: step for step in steps}
    absent = provided_absent(warnings)
    for step in steps:
        ids = [step.superseded_by] if step.reason == "superseded" else sorted(set(step.provided_by.values()))
        lost = [by_id[i] for i in ids if i in by_id and union_lost(by_id[i])]
        if not lost:
            continue
        step.lost_with = lost[0].id
        sentences = []
        for union in lost:      # each with the paths it stands for (helper-144: another union's, applied, were named)
            files = list(dict.fromkeys(file for file, _lines in absent.get((step.id, union.id), [])))
            own = [p for p, by in step.provided_by.items() if by == union.id]
            whose = "its change" if step.reason == "superseded" else f"its change to {', '.join(own)}"
            missing = f"{whose} is not in the result ({', '.join(files)})" if files else \
                f"{whose} is in the result only where another entry or upstream brings it"
            sentences.append(f"superseded by {union.id}, which was not applied ({union.reason or union.status}): "
                             f"{missing}")
        said = "; ".join(sentences)
        step.detail = f"{step.detail}; {said}" if step.status == APPLIED and step.detail else said


def _check_precompiled(manifest: Manifest, step: Step) -> list[Violation]:
    patterns = manifest.policy.precompiled
    hits = [p for p in step.files if paths.matches_any(patterns, p)]
    if not hits:
        return []
    pattern = paths.first_match(patterns, hits[0])
    if step.entry.kind == "pr":
        step.skip("precompiled", f"changes {hits[0]} (policy.precompiled: {pattern}); a precompiled build "
                                 "cannot take it")
        return []
    return [Violation("precompiled-carry", step.id, hits[0], f"{step.id} changes {hits[0]}, which matches "
                      f"policy.precompiled '{pattern}': a carry must not need a rebuild", 2)]


def _check_excludes(step: Step) -> list[Violation]:
    return [Violation("excludes", step.id, path, f"{step.id} changes {path}, which it declares in its own "
                      f"excludes ({paths.first_match(step.entry.excludes, path)})", 1)
            for path in step.files if paths.matches_any(step.entry.excludes, path)]


def _check_owned(step: Step, owners: Iterable[tuple[str, Step]]) -> list[Violation]:
    out = []
    for path in step.files:
        for pattern, owner in owners:
            if owner is step or not paths.matches(pattern, path):
                continue
            out.append(Violation("owned-path", step.id, path,
                                 f"{step.id} changes {path}, which {owner.id} owns, and {owner.id} does not "
                                 f"supersede {step.id} for it", 2, other=owner.id))
    return out


def redundant_with(step: Step, applied: Iterable[Step]) -> list[str]:
    """The earlier applied entries that touched the files of STEP (what already provides it)."""
    files = set(step.files)
    return [s.id for s in applied if files & set(s.files)]


def structured_refusal(conflict: dict[str, object]) -> str | None:
    """`the structured merge refused: WHY` for a conflict record the structured merge was asked about and
    left (compose names it in the entry's detail, the text output in the run's `conflict:` line), else None."""
    refused = conflict.get("structured")
    why = refused.get("why") if isinstance(refused, dict) else None
    return f"the structured merge refused: {why}" if why else None


def held_in(step: Step) -> str | None:
    """The earlier PR entry built on STEP (its history holds STEP's head) that STEP's conflict is with (h265)."""
    met = {name for c in step.conflicts for name in c.get("with", ())}  # type: ignore[attr-defined]
    return next((name for name in step.held_by if name in met), None)
