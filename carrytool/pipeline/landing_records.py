"""The landing checks' records: what `account` returns (Accounting), an applied entry's hunks and their
fate (_Entry), who owns a composed line (Owner) and where a step's own change starts (own_base)."""

from __future__ import annotations

from dataclasses import dataclass, field

from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.plan import Step

Owner = tuple[int, int]          # (index of the applied step, index of its hunk)


@dataclass
class Accounting:
    failures: list[dict[str, object]] = field(default_factory=list)   # dropped / clobbered: exit 1
    warnings: list[dict[str, object]] = field(default_factory=list)   # identical-hunk, upstream-loss


@dataclass
class _Entry:
    step: Step
    own: list[Hunk]                  # the hunks it must land
    provided: list[Hunk]             # hunks in paths a union provides
    landed: dict[int, str] = field(default_factory=dict)          # hunk index -> how (applied|identical|...)
    dropped: list[dict[str, object]] = field(default_factory=list)
    clobbered: list[dict[str, object]] = field(default_factory=list)


def own_base(step: Step) -> str | None:
    """Where the change STEP applied starts: the head of the PR it is stacked on when it was applied as its
    own commits onto it, else its base."""
    return step.stacked_onto[1] if step.stacked_onto else step.base
