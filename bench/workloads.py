"""The shape of a synthetic upstream and its PRs, and the named workloads the harness knows."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Workload:
    """Parameters of one synthetic upstream; equal parameters give byte-identical repositories."""

    name: str
    files: int = 2_000              # files in upstream's tree
    prs: int = 60                   # PRs, in manifest order
    pr_files: int = 1               # mean files per PR (1 means exactly one)
    change_lines: int = 2           # lines each change rewrites
    overlap: float = 0.1            # fraction of PRs that touch a file an earlier PR touches
    conflict: float = 0.3           # fraction of those that rewrite the very same lines (a conflict)
    multi_commit: float = 0.2       # fraction of PRs made of 2 or 3 commits
    renames: float = 0.05           # fraction of PRs that also rename one of their files
    upstream_commits: int = 12      # upstream history after the import; PRs branch off its older half
    upstream_touch: int = 5         # files each later upstream commit edits
    slots: int = 8                  # independent regions per file (slot 0 is upstream's)
    files_per_dir: int = 50
    seed: int = 7

    def digest(self) -> str:
        """A short stable name for these parameters (the cache key of a generated workload)."""
        data = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()[:10]

    def describe(self) -> str:
        return (f"{self.name}: {self.files:,} files, {self.prs} PRs x {self.pr_files} file(s), "
                f"{self.overlap:.0%} overlapping")


WORKLOADS: dict[str, Workload] = {
    "small": Workload("small", files=2_000, prs=60, overlap=0.1),
    "issue7": Workload("issue7", files=20_000, prs=300, pr_files=1, overlap=0.1),
    "overlap": Workload("overlap", files=2_000, prs=200, pr_files=2, overlap=0.3),
}
DEFAULT_WORKLOAD = "issue7"

SCALE_FIXED_FILES = 20_000
SCALE_ENTRIES = (50, 100, 200, 400)
SCALE_FIXED_ENTRIES = 100
SCALE_FILES = (2_000, 20_000, 50_000)


def scale_workloads() -> list[tuple[str, Workload]]:
    """The --scale sweep: entries at fixed tree size, then tree size at fixed entries."""
    base = WORKLOADS["issue7"]
    sweep = [("entries", replace(base, name=f"entries-{n}", files=SCALE_FIXED_FILES, prs=n))
             for n in SCALE_ENTRIES]
    sweep += [("files", replace(base, name=f"files-{f // 1000}k", files=f, prs=SCALE_FIXED_ENTRIES))
              for f in SCALE_FILES]
    return sweep
