"""Pair decisions kept on disk by what decides them: a second explain of the same plan merges no pair.

The overlap map decides a pair of entries that share a file by a merge (overlap_pairs.PairMerger): the paths
where the pair conflicts, and whether the structured rule resolves them, follow from nothing but the
whole merge's two commits (the earlier entry alone on upstream, whose parent is upstream; the later one's
head, or its stand-in), both entries' bases and heads (the merge the pair is decided by, the later head
reduced to the paths that decide it, follows from these: a kept pair builds none), the later entry's own
merge alone onto upstream (two commits too: its conflicts are its own), the structured-merge patterns, the
rule's switches, and the git and carrytool that merge and decide (its version and a digest of the source
that decides, CODE).
Commits never change, so a decision kept under all of them is valid forever, as the scope cache's spans
are under a blob SHA.

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/pairs-git<X.Y.Z>.json`,
`{"pairs": {KEY: [[path, ...], structurally]}}`), read whole at the first pair, written whole (temp
beside, then renamed) by a run that decided new pairs: this run's decisions first, then the others up to
PAIRS_MAX. A file that cannot be read or written only costs merges.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from carrytool.pipeline.kept import KeptAnswers

PAIRS_MAX = 20_000      # decisions a file keeps (~2 MB): every run reads it whole
RULE = "pairs-2"        # bump when what a pair merge decides, or how, or what its key holds, changes
# the code that asks a pair merge and decides from its answer: a decision is this code's only
CODE = ("review/overlap.py", "review/overlap_pairs.py", "review/paircache.py", "pipeline/blame.py",
        "pipeline/structured.py", "pipeline/structured_segments.py", "pipeline/structured_hunks.py",
        "pipeline/structured_gates.py", "pipeline/structured_tree.py", "pipeline/pyparts.py", "pipeline/pystrings.py",
        "pipeline/pybindings.py", "pipeline/compose.py", "pipeline/compose_records.py", "pipeline/compose_upstream.py",
        "pipeline/compose_chain.py", "pipeline/compose_conflicts.py", "pipeline/reduce.py",
        "gitlayer/env.py", "gitlayer/git.py", "gitlayer/mergepipe.py", "gitlayer/objects.py",
        "gitlayer/processes.py", "gitlayer/objectwrite.py", "gitlayer/quarantine.py", "gitlayer/objectread.py",
        "gitlayer/trees.py", "gitlayer/history.py", "gitlayer/contentmerge.py", "gitlayer/treemerge.py",
        "gitlayer/sidemerges.py", "gitlayer/diffs.py", "gitlayer/refs.py", "gitlayer/answers.py")

Decision = tuple[list[str], bool]      # the pair's conflicting paths, resolved by the structured rule


def _decode(raw: object) -> Decision | None:
    if not (isinstance(raw, list) and len(raw) == 2 and isinstance(raw[0], list) and
            all(isinstance(p, str) for p in raw[0]) and isinstance(raw[1], bool)):
        return None
    return list(raw[0]), raw[1]


class PairDecisions(KeptAnswers[Decision]):
    """Pair decisions by key, in memory and (given FOLDER) on disk for the git VERSION that merged them."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "pairs", version, RULE, CODE, PAIRS_MAX, _decode,
                         lambda decision: [decision[0], decision[1]])

    def key(self, pair: Sequence[str], alone: tuple[str, str] | None, patterns: Sequence[str],
            switches: Sequence[object]) -> str:
        """The key of a pair whose inputs are PAIR (its whole merge's ours and theirs, and the entries' bases and
        heads) and whose later entry merged alone as ALONE."""
        return self.digest(list(pair), list(alone) if alone else None, list(patterns), [str(s) for s in switches])

    def put(self, key: str, decision: Decision) -> None:
        super().put(key, (list(decision[0]), bool(decision[1])))
