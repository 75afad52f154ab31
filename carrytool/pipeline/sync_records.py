"""What sync is asked (SyncOptions) and what it planned (Planned): shared by pipeline.sync and its
parts, and by explain, bisect and verify, which plan and compose as sync does."""

from __future__ import annotations

import os
from dataclasses import dataclass

from carrytool.pipeline.compose_records import Composition
from carrytool.pipeline.plan import Step
from carrytool.pipeline.report import Report
from carrytool.pipeline.resolve import Resolved


@dataclass(frozen=True)
class SyncOptions:
    offline: bool = False
    locked: bool = False
    push: bool = False
    dry_run: bool = False
    strict: bool = False
    retry_delay: float = float(os.environ.get("CARRYTOOL_RETRY_DELAY", "1.0"))
    wait: float = 0.0
    locked_as: str = "sync --locked"      # with locked: the command reading the lock, as hints name it


@dataclass
class Planned:
    """Everything up to a composed result: what explain and verify --rebuild need too."""

    resolved: Resolved
    steps: list[Step]
    composition: Composition | None
    report: Report
    # sync (not a dry run): what it composed, recorded (objects written and kept; pipeline.night_record):
    # the record commit and the value of the ref it replaces
    night: tuple[str, str | None] | None = None
