"""What composing shares: the Composition it returns, the paths applied entries touched (to tell whether two
changes can meet) and the Misguessed a failed guess raises; below pipeline.compose and its mixins."""

from __future__ import annotations

from dataclasses import dataclass, field

from carrytool.pipeline.plan import APPLIED, Step

_KEEP = ("keep", "upstream's version")     # a path whose merged upstream version is upstream's own


@dataclass
class Composition:
    upstream: str
    result: str                     # the composed tip (== upstream when nothing applied)
    steps: list[Step]
    failed_conflicts: list[Step] = field(default_factory=list)   # conflicts under on_conflict: fail
    trees: dict[str, str] = field(default_factory=dict)          # composed commit -> tree

    @property
    def applied(self) -> list[Step]:
        return [s for s in self.steps if s.status == APPLIED]


class _Touched:
    """Paths applied entries changed, with their directories: to tell whether two changes can meet."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.dirs: set[str] = set()

    def add(self, paths) -> None:  # noqa: ANN001 - any iterable of paths
        for path in paths:
            self.files.add(path)
            parts = path.split("/")
            self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))

    def overlaps(self, paths: set[str]) -> bool:
        for path in paths:
            if path in self.files or path in self.dirs:
                return True
            parts = path.split("/")
            if any("/".join(parts[:i]) in self.files for i in range(1, len(parts))):
                return True
        return False


class Misguessed(Exception):
    """An entry merged aside (Composer.aside) merged cleanly: what was composed after it is not the chain's."""


def _misguessed(step: Step) -> Misguessed:
    return Misguessed(f"{step.id} merged cleanly where its merge onto upstream conflicts")
