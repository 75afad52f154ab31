"""What explain found, as one value: the plan, the evidence, the overlaps, coverage, suggestions, stories."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.asserts.spec import AssertOutcome
from carrytool.gitlayer.urls import redact
from carrytool.manifest.model import Manifest
from carrytool.pipeline.jsontext import indented
from carrytool.pipeline.report import entry_json, write_atomic
from carrytool.pipeline.sync_records import Planned
from carrytool.review.coverage import Coverage
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.overlap import OverlapMap
from carrytool.review.upstream_has import UpstreamHas


@dataclass
class Explanation:
    """Everything explain found; `to_json` is its report (the contract's fields and explain's own)."""

    manifest: Manifest
    planned: Planned
    evidence: dict[str, EntryFacts]
    sources: Sources
    overlap_map: OverlapMap
    coverage: list[Coverage]
    suggestions: list[dict[str, Any]]
    onto: dict[str, str]                       # entry -> the commit it would be applied onto
    full_heads: dict[str, str]                 # a folded head as the manifest spells it -> its full SHA
    previous: str | None = None                # the fork branch as it is now
    asserts: list[AssertOutcome] | None = None  # None: the assertion engine is not installed
    stories: list[dict[str, Any]] = field(default_factory=list)
    # entry -> what upstream already has of it, for the entries that conflict with upstream alone
    upstream_has: dict[str, UpstreamHas] = field(default_factory=dict)
    # the entries sync skips as merged upstream, whose pairs the overlap map leaves out (explain._leave_out_merged)
    overlaps_left_out: list[str] = field(default_factory=list)

    @property
    def steps(self):  # noqa: ANN201 - list[Step]
        return self.planned.steps

    @property
    def union_suggestions(self) -> list[list[str]]:
        """The entries of each union the suggestions propose (manifest order)."""
        return [list(item["entries"]) for item in self.suggestions if item.get("kind") == "union"]

    @property
    def asserts_known(self) -> bool:
        """Whether the asserts were evaluated (the assertion engine is installed)."""
        return self.asserts is not None

    def to_json(self) -> dict[str, Any]:
        report = self.planned.report
        comp = self.planned.composition
        data: dict[str, Any] = {"carrytool": __version__, "command": "explain"}
        if report.upstream:
            data["upstream"] = {**report.upstream, "url": redact(report.upstream["url"])}
        data["result"] = {"branch": self.manifest.fork.branch, "sha": comp.result if comp else None,
                          "previous": self.previous, "updated": False}
        data["entries"] = [entry_json(s) for s in self.steps]
        data["asserts"] = [a.to_json() for a in self.asserts or []]
        data["asserts_evaluated"] = self.asserts_known
        data["warnings"] = report.warnings
        if report.violations:
            data["violations"] = [v.to_json() for v in report.violations]
        data["overlaps"] = [o.to_json() for o in self.overlap_map.overlaps]
        data["suggestions"] = self.suggestions
        data["coverage"] = [c.to_json() for c in self.coverage]
        data["plan"] = {"onto": self.onto, "sync_exit_code": report.exit_code,
                        "upstream_conflicts": self.overlap_map.upstream_conflicts,
                        "pairs_merged": self.overlap_map.pairs_merged,
                        "overlaps_left_out": self.overlaps_left_out}
        if self.upstream_has:
            data["plan"]["upstream_has"] = {entry: found.to_json() for entry, found in self.upstream_has.items()}
        if self.stories:
            data["stories"] = self.stories
        return data

    def dumps(self, data: dict[str, Any] | None = None) -> str:
        """The JSON text of DATA (default: `to_json()`)."""
        return indented(self.to_json() if data is None else data) + "\n"


def write_explanation(ex: Explanation, path: str | Path, dumped: str | None = None) -> None:
    """Write explain's JSON report to PATH atomically (DUMPED: `ex.dumps()`, when the caller has it)."""
    write_atomic(path, ex.dumps() if dumped is None else dumped)
