"""Run several runners on the same inputs, interleaved and repeated, and keep every measurement."""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .runners import RUNNERS, Inputs, Measurement


@dataclass
class Summary:
    """Every measurement of one workload, by runner."""

    inputs: Inputs
    runs: dict[str, list[Measurement]] = field(default_factory=dict)
    group: str = ""                 # the --scale sweep it belongs to, if any

    def median(self, runner: str) -> float | None:
        runs = self.runs.get(runner)
        return statistics.median(m.seconds for m in runs) if runs else None

    def median_cpu(self, runner: str) -> float | None:
        values = [m.cpu_seconds for m in self.runs.get(runner, ()) if m.cpu_seconds is not None]
        return statistics.median(values) if values else None

    def median_extra(self, runner: str, key: str) -> float | None:
        values = [m.extra[key] for m in self.runs.get(runner, ()) if key in m.extra]
        return statistics.median(values) if values else None

    def applied(self, runner: str) -> int | None:
        """The count of the last run (a runner is deterministic: every run counts the same)."""
        runs = self.runs.get(runner)
        return runs[-1].applied if runs else None

    def same_tree(self) -> bool | None:
        """Whether every carrytool run composed the chain's tree (None without both runners)."""
        chain = {m.tree for m in self.runs.get("chain", ())}
        tool = {m.tree for m in self.runs.get("carrytool", ())}
        if not chain or not tool:
            return None
        return len(chain | tool) == 1 and None not in chain

    def peak_rss(self, runner: str) -> float | None:
        values = [m.rss_mb for m in self.runs.get(runner, ()) if m.rss_mb is not None]
        return max(values) if values else None


def rotated(names: Sequence[str], by: int) -> list[str]:
    """NAMES starting at index BY: each repeat starts with another runner, spreading the noise."""
    k = by % len(names) if names else 0
    return list(names[k:]) + list(names[:k])


def measure(inputs: Inputs, runners: Sequence[str], repeat: int, scratch_root: Path, *,
            group: str = "", verbose: bool = True) -> Summary:
    """Run every runner REPEAT times on INPUTS, interleaved; each run in its own scratch directory."""
    summary = Summary(inputs, {name: [] for name in runners}, group)
    scratch_root.mkdir(parents=True, exist_ok=True)
    for r in range(repeat):
        for name in rotated(runners, r):
            scratch = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch_root))
            try:
                result = RUNNERS[name](inputs, scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            summary.runs[name].append(result)
            if verbose:
                print(f"  [{inputs.name}] {r + 1}/{repeat} {name:<9} {result.seconds:8.3f} s  "
                      f"{result.applied} applied", file=sys.stderr, flush=True)
    return summary
