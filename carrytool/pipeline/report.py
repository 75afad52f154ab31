"""The report: what a run decided and why, as the contract's JSON (schemas/report.schema.json)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import (
    EXIT_CONFLICT,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_VERIFY,
    EnvironmentProblem,
    InputError,
)
from carrytool.gitlayer.urls import redact
from carrytool.pipeline.atomic import write_atomic
from carrytool.pipeline.jsontext import indented
from carrytool.pipeline.plan import Step, Violation


def entry_json(step: Step) -> dict[str, Any]:
    """One entry as the contract's report shows it (keys in a stable order, SHAs in full)."""
    entry = step.entry
    data: dict[str, Any] = {"id": step.id, "kind": entry.kind, "status": step.status}
    if step.reason:
        data["reason"] = step.reason
    if entry.title:
        data["title"] = entry.title
    if step.detail:
        data["detail"] = step.detail
    if step.superseded_by:
        data["superseded_by"] = step.superseded_by
    if step.redundant_with or step.reason == "redundant":
        data["redundant_with"] = list(step.redundant_with)
    for key in ("head", "base", "commit"):
        value = getattr(step, key) or (step.fetched_head if key == "head" else None)
        if value:
            data[key] = value
    if step.head or step.changes:
        data["files"] = step.files
    data["filtered"] = list(step.filtered)
    if step.provided_by:
        data["provided_by"] = dict(step.provided_by)
    if step.conflicts:
        data["conflicts"] = step.conflicts
    if step.resolution:
        data["resolution"] = {"mode": step.resolution, "files": list(step.resolved_paths)}
    if step.structured:
        data["structured"] = list(step.structured)
    if step.stacked_onto:
        data["stacked_on"] = {"entry": step.stacked_onto[0], "head": step.stacked_onto[1]}
    if step.landing is not None:
        data["landing"] = step.landing
    if step.dropped_on_purpose:
        data["dropped_on_purpose"] = list(step.dropped_on_purpose)
    return data


@dataclass
class Report:
    """A run's outcome; `exit_code` follows the contract's table."""

    command: str
    upstream: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    steps: list[Step] = field(default_factory=list)
    asserts: list[AssertOutcome] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)       # landing failures (exit 1)
    failed_conflicts: list[Step] = field(default_factory=list)
    strict_only: set[str] = field(default_factory=set)                 # of those, failed by --strict alone
    strict: bool = False                                               # --strict: every conflict fails the run
    error: dict[str, Any] | None = None                                # a CarryError after planning began
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.error:
            return int(self.error["exit_code"])
        if any(v.code == EXIT_INPUT for v in self.violations):
            return EXIT_INPUT
        if self.failed_conflicts:
            return EXIT_CONFLICT
        if self.violations or self.dropped or any(not a.ok for a in self.asserts):
            return EXIT_VERIFY
        return EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"carrytool": __version__, "command": self.command, "ok": self.ok,
                                "exit_code": self.exit_code}
        if self.upstream is not None:
            data["upstream"] = {**self.upstream, "url": redact(self.upstream["url"])}
        if self.result is not None:
            data["result"] = self.result
        if self.steps:
            data["entries"] = [entry_json(s) for s in self.steps]
        data["asserts"] = [a.to_json() for a in self.asserts]
        data["warnings"] = self.warnings
        if self.violations:
            data["violations"] = [v.to_json() for v in self.violations]
        if self.error:
            data["error"] = {**self.error, "message": redact(str(self.error.get("message", "")))}
        data.update(self.extra)
        return data

    def dumps(self) -> str:
        return indented(self.to_json()) + "\n"

    def names(self) -> str:
        """The report as compact JSON (json's C encoder): what `Git.keep_named` scans for SHAs."""
        return json.dumps(self.to_json(), ensure_ascii=True)


def check_report_path(path: str | Path | None, manifest: Path | None = None) -> None:
    """Refuse a `--report` path that could never be written, before anything runs (so nothing moves
    for a report that then fails): an existing directory, or a path under a file. Missing directories
    are fine: they are created when the report is written. Nor is a file of the user's overwritten: the
    MANIFEST or its lock, or any file that is not a report carrytool wrote (a report goes to the same
    path night after night; a typo must not replace a patch or a source file)."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise InputError(f"--report {path} is a directory", hint=f"name a file, e.g. --report {path / 'report.json'}")
    if manifest is not None:       # the lock too before the first sync writes it (the report would replace it)
        from carrytool.pipeline.lock import lock_path_of

        target = path.resolve()
        for what, mine in (("the manifest", manifest), ("the manifest's lock", lock_path_of(manifest))):
            if target == mine.resolve():
                raise InputError(f"--report {path} is {what}: it is not overwritten", hint="name another file, "
                                 "e.g. --report sync-report.json")
    if path.is_file() and not _a_report(path):
        raise InputError(f"--report {path} exists and is not a report carrytool wrote: it is not overwritten",
                         hint="name a new file, or remove that one first")
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"--report {path}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise EnvironmentProblem(f"--report {path}: cannot write into {ancestor}")


def _a_report(path: Path) -> bool:
    """Whether PATH holds a report of carrytool's (a JSON object naming carrytool first) or nothing."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(256).lstrip()
    except OSError:
        return True          # not readable: writing it says why
    return not head or (head.startswith(b"{") and b'"carrytool"' in head)


def write_report(report: Report, path: str | Path, dumped: str | None = None) -> None:
    """Write the JSON report to PATH atomically (missing directories are created); DUMPED: `report.dumps()`,
    when the caller has it."""
    write_atomic(path, report.dumps() if dumped is None else dumped)
