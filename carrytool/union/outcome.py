"""What a fold folds (each superseded PR, `FoldItem`) and what a compose/continue did (`Outcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class FoldItem:
    pr: int
    head: str
    base: str
    paths: tuple[str, ...]
    title: str | None

    @property
    def id(self) -> str:
        return f"pr/{self.pr}"


@dataclass
class Outcome:
    """What a compose/continue did: finished (commit) or stopped (scratch, conflicts)."""

    name: str
    done: bool
    commit: str | None = None
    scratch: Path | None = None
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)        # files resolved from the store (or a recorded edit)
    resolved: list[str] = field(default_factory=list)      # those of REUSED that conflicted (the rest: an edit)
    structured: list[dict[str, Any]] = field(default_factory=list)   # hunks resolved structurally (not recorded)
    unresolved_records: list[str] = field(default_factory=list)
    manifest_updated: bool = False
    folded: dict[int, str] = field(default_factory=dict)
    unused_records: int = 0
    unused: list[tuple[str, list[str]]] = field(default_factory=list)   # (file, entries) of each unused record
    edited_alone: list[str] = field(default_factory=list)   # files a recorded edit went into beside an unused record
    patch: str | None = None                               # the patch file a `patch:` union writes
    invocation: str = ""                                   # the -m/--repo to repeat in next steps
    # the PRs' lines the union has in its own words outside the conflicts the fold stopped at (union.rewritten)
    re_expressed: list[dict[str, Any]] = field(default_factory=list)
    # what a continue took from the scratch tree beyond the conflicted files: [{"file", "change"}] (union.taken)
    taken: list[dict[str, str]] = field(default_factory=list)
    # the manifest, the patch file and the union's resolutions as they were before the fold: nothing to commit
    unchanged: bool = False

