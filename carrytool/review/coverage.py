"""Union coverage: for each PR a union supersedes, which of its hunks the union carries verbatim.

A PR hunk is `verbatim` when the union's own diff (its base -> its commit) has a hunk in the same
file whose added lines contain the PR hunk's added lines as one consecutive block (for a pure
deletion: whose removed lines contain its removed block; for a binary/rename/mode change: the union's
head has the same blob there). Otherwise it is `re-expressed` when the union changes the same scope
(or, outside Python, the same file) differently, and `absent` when the union does not touch it at all.
Re-expressed hunks are where a reviewer has to read code: the asserts that guard them are listed
(see `guarding_asserts`). What sync's own check of the composed tree found (`with_sync_verdicts`) has the
last word over this reading of the union's diff: a hunk it found left out (`provided-absent` with its
lines) is `absent`, one the union's `drops` declare is `dropped` (with the why) (helper-141: a hunk the
maintainer dropped at a union stop read `re-expressed`, the union changing its def elsewhere), and one it
found left out in a region the union reconciled is `reconciled` (helper-149: not carried in another form,
but left out where the union chose); and every text hunk sync looked for in the tree is as it stands there
(`verbatim`, `re-expressed`), whatever the union's diff says (h203: a line the union's diff adds as another
PR's copy read `verbatim` where sync warned it left out). A change of a whole file has no lines (`kind`: mode,
binary, ...); a mode change is verbatim when the union sets the same mode, else absent.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from carrytool.asserts.spec import AssertSpec
from carrytool.gitlayer.git import change_of
from carrytool.manifest import paths
from carrytool.manifest.model import Entry, Manifest, Supersede
from carrytool.pipeline.hunks import Hunk, find_block
from carrytool.pipeline.plan import provided_absent
from carrytool.review.evidence import EntryFacts, Sources

VERBATIM, RE_EXPRESSED, RECONCILED, ABSENT, DROPPED = "verbatim", "re-expressed", "reconciled", "absent", "dropped"


@dataclass
class HunkCoverage:
    file: str
    lines: tuple[int, int]
    scopes: list[str]
    status: str
    asserts: list[str] = field(default_factory=list)
    why: str | None = None            # DROPPED: the union's `drops` item's why
    kind: str = "text"                # else the whole file's change: binary, rename, mode, submodule, file

    def to_json(self) -> dict[str, Any]:
        data = {"file": self.file, "lines": list(self.lines) if self.kind == "text" else None,
                "scopes": self.scopes, "status": self.status, "asserts": self.asserts}
        if self.kind != "text":
            data["kind"] = self.kind
        if self.why is not None:
            data["why"] = self.why
        return data

    def where(self, *, last: bool = True) -> str:
        """`file:first-last` (LAST: with the last line), or `file (mode change)` for a change of the whole file."""
        if self.kind != "text":
            return f"{self.file} ({self.kind} change)"
        first, end = self.lines
        return f"{self.file}:{first}" + (f"-{end}" if last else "")


@dataclass
class Coverage:
    """How one union provides one superseded PR."""

    union: str
    pr: str
    paths: list[str]                  # [] when the union provides the whole PR
    head: str | None                  # the PR's head now
    folded: str | None                # the head the manifest says the union folded
    hunks: list[HunkCoverage] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for h in self.hunks if h.status == status)

    def to_json(self) -> dict[str, Any]:
        return {"union": self.union, "pr": self.pr, "paths": self.paths, "head": self.head,
                "folded": self.folded, "verbatim": self.count(VERBATIM),
                "re_expressed": self.count(RE_EXPRESSED), "reconciled": self.count(RECONCILED),
                "absent": self.count(ABSENT), "dropped": self.count(DROPPED),
                "hunks": [h.to_json() for h in self.hunks]}

    def counts_said(self) -> str:
        """`3 verbatim, 1 re-expressed, 0 absent` (`, 1 reconciled` before the absent, and `, 1 dropped on
        purpose` after, when one is)."""
        dropped, reconciled = self.count(DROPPED), self.count(RECONCILED)
        return f"{self.count(VERBATIM)} verbatim, {self.count(RE_EXPRESSED)} re-expressed, " + \
            (f"{reconciled} reconciled, " if reconciled else "") + f"{self.count(ABSENT)} absent" + \
            (f", {dropped} dropped on purpose" if dropped else "")


def union_coverage(manifest: Manifest, evidence: Mapping[str, EntryFacts], sources: Sources,
                   heads: Mapping[str, str] | None = None) -> list[Coverage]:
    """Coverage of every superseded PR (with a known head) by every enabled union, in manifest order."""
    out = []
    for union in manifest.entries:
        facts = evidence.get(union.id)
        if not union.enabled or not union.supersedes or facts is None:
            continue
        for sup in union.supersedes:
            pr = evidence.get(f"pr/{sup.pr}")
            if pr is not None:
                out.append(_cover(manifest, union, sup, pr, facts, sources, heads or {}))
    return out


def with_sync_verdicts(coverage: Sequence[Coverage], warnings: Sequence[Mapping[str, Any]],
                       dropped: Mapping[str, Sequence[Mapping[str, Any]]],
                       reconciled: Mapping[str, Sequence[tuple[str, str, tuple[int, int] | None]]] | None = None,
                       provided: Mapping[str, Mapping[tuple[str, str, tuple[int, int]], str]] | None = None,
                       anyway: Mapping[str, Collection[tuple[str, str]]] | None = None) -> None:
    """Give COVERAGE what sync's check of the composed tree found (pipeline.provided), over the reading of the
    union's diff: a PR's hunk it found left out (a `provided-absent` warning naming its lines, the whole file, or
    the file's mode for a mode change) is ABSENT; one the union's `drops` cover (DROPPED: union id -> its
    `dropped_on_purpose`) is DROPPED, with its why; one the tree lacks in a region the union reconciled
    (RECONCILED: union id -> (PR, file, lines: None for the whole file)) is RECONCILED: not carried in another
    form, but left out where the union had to choose (helper-149: lines a maintainer deleted read `re-expressed`);
    each other text hunk sync looked for in the tree (PROVIDED: union id -> (PR, file, lines) -> how it stands,
    Step.provided) is as it stands there: VERBATIM, RE_EXPRESSED. So even a hunk the union's diff holds word for
    word is ABSENT where sync warns it (h203: another PR's copy of the line, the one the union kept), and one the
    union's diff does not touch is VERBATIM where the tree holds it (upstream took it); so is each hunk of a file
    sync checked whole and found the tree has anyway (ANYWAY: union id -> (PR, file), Step.has_anyway: the union
    does not change it, and upstream took the change; h214: a squash-merged PR's test read ABSENT, sync silent).
    Only a hunk sync did not judge keeps the reading of the union's diff."""
    absent = provided_absent(w for w in warnings if not w.get("mode"))
    modes = {(str(w.get("entry")), str(w.get("other")), str(w.get("file"))) for w in warnings
             if w.get("kind") == "provided-absent" and w.get("mode")}
    settled: dict[tuple[str, str], set[tuple[str, tuple[int, ...] | None]]] = {}
    for union, items in (reconciled or {}).items():
        for pr, file, lines in items:
            settled.setdefault((union, pr), set()).add((file, tuple(lines) if lines else None))
    declared: dict[tuple[str, str], dict[tuple[str, tuple[int, ...] | None], str]] = {}
    for union, items in dropped.items():
        for item in items:
            lines = item.get("lines")
            declared.setdefault((union, f"pr/{item.get('pr')}"), {})[
                (str(item.get("file")), tuple(lines) if lines else None)] = str(item.get("why") or "")
    for cov in coverage:
        gone, why = set(absent.get((cov.pr, cov.union), [])), declared.get((cov.union, cov.pr), {})
        chosen = settled.get((cov.union, cov.pr), set())
        stands = (provided or {}).get(cov.union, {})
        for hunk in cov.hunks:
            key = (hunk.file, tuple(hunk.lines))
            said = why.get(key, why.get((hunk.file, None)))
            if said is not None:
                hunk.status, hunk.why = DROPPED, said
            elif key in gone or (hunk.file, None) in gone or \
                    (hunk.kind == "mode" and (cov.pr, cov.union, hunk.file) in modes):
                hunk.status = ABSENT
            elif key in chosen or (hunk.file, None) in chosen:
                hunk.status = RECONCILED
            elif hunk.kind == "text" and (cov.pr, hunk.file, hunk.lines) in stands:
                hunk.status = stands[(cov.pr, hunk.file, hunk.lines)]
            elif (cov.pr, hunk.file) in (anyway or {}).get(cov.union, ()):
                hunk.status = VERBATIM


def _cover(manifest: Manifest, union: Entry, sup: Supersede, pr: EntryFacts, facts: EntryFacts,
           sources: Sources, heads: Mapping[str, str]) -> Coverage:
    folded = heads.get(sup.head, sup.head) if sup.head else None
    cov = Coverage(union.id, pr.id, list(sup.paths), pr.head, folded)
    for hunk in pr.hunks:
        if sup.paths and not any(paths.matches_any(sup.paths, p) for p in (hunk.path, hunk.old_path) if p):
            continue
        scopes = pr.scopes_of(hunk, sources)
        status = _status(hunk, scopes, facts, sources)
        guards = guarding_asserts(manifest.asserts, hunk.path, scopes, pr.id)
        cov.hunks.append(HunkCoverage(hunk.path, hunk.span, scopes, status, [a.name for a in guards],
                                      kind=hunk.kind))
    return cov


def _status(hunk: Hunk, scopes: list[str], union: EntryFacts, sources: Sources) -> str:
    theirs = union.hunks_in(hunk.path)
    if hunk.kind == "mode":         # the executable bit alone: the union sets it, or leaves it out
        change = change_of(union.changes, hunk.path)
        return VERBATIM if change is not None and change.new_mode == hunk.new_mode else ABSENT
    if hunk.kind != "text":
        change = change_of(union.changes, hunk.path)
        if change is not None and change.new_oid == hunk.new_oid:
            return VERBATIM
    elif any(_contains(cand, hunk) for cand in theirs if cand.kind == "text"):
        return VERBATIM
    if not theirs:
        return ABSENT
    if not scopes:
        return RE_EXPRESSED
    touched = union.scopes_in(hunk.path, sources)
    return RE_EXPRESSED if touched & set(scopes) else ABSENT


def _contains(cand: Hunk, hunk: Hunk) -> bool:
    if hunk.added:
        return bool(find_block(cand.added, hunk.added))
    return bool(find_block(cand.removed, hunk.removed))


def guarding_asserts(asserts: Sequence[AssertSpec], file: str, scopes: Sequence[str], entry: str
                     ) -> list[AssertSpec]:
    """Asserts that guard ENTRY's change to FILE in SCOPES: they read FILE and either hold one of SCOPES
    (`in:` is the scope or an outer one; an assert without `in:` holds the whole module) or are declared
    for ENTRY (`entry:`). An assert declared for a union guards what lies in its scope, like any other.
    `defines: Q` holds only the definition it names (Q, under `in:`): it checks that Q is defined, not
    what any other def of the file does (helper-146: a module-level `defines:` "guarded" a hunk in an
    unrelated method).
    """
    return [spec for spec in asserts
            if spec.file == file and (spec.entry == entry or _scope_holds(_held(spec), scopes))]


def _held(spec: AssertSpec) -> str | None:
    """The scope SPEC reads: its `in:`, or for `defines:` the qualified name it defines."""
    if spec.check == "defines":
        return f"{spec.scope}.{spec.target}" if spec.scope else str(spec.target)
    return spec.scope


def _scope_holds(scope: str | None, scopes: Sequence[str]) -> bool:
    if scope is None:
        return True
    return any(s == scope or s.startswith(scope + ".") for s in scopes)


def describe_assert(spec: AssertSpec) -> str:
    """One line saying what an assert checks.

    `resume-once: vllm/v1/worker/gpu_worker.py Worker.wake_up calls backend.resume times 1`
    """
    target = " -> ".join(spec.target) if isinstance(spec.target, tuple) else spec.target
    bounds = "".join(f" {key} {value}" for key, value in (("times", spec.times), ("min", spec.min),
                                                            ("max", spec.max), ("guarded_by", spec.guarded_by))
                     if value is not None)
    where = spec.file + (f" {spec.scope}" if spec.scope else "")
    return f"{spec.name}: {where} {spec.check.replace('_', ' ')} {target}{bounds}"

