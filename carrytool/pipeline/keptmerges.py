"""Clean chained merges kept on disk by what decides them: explain after the nightly sync, or the next
sync of the same inputs, merges no entry again that composed cleanly before.

A chained merge (pipeline.compose) applies an entry's net change onto the result so far: merge-tree of a
stand-in commit (the result so far's tree, whose only parent is the entry's base, or upstream for an
entry without one) and the entry's head (with the paths a union provides reset to the base). Its result
follows from nothing but that tree, those parents, that head, the git that merges (its version; the
configuration it reads is pinned: gitlayer.env.PINNED_CONFIG) and the carrytool that composes (its
version, a digest of the source that asks the merge and reads its answer, CODE, and the composer's
switches, which tests flip to compare the ways of composing). All of them are
content addressed, so a result kept under them is valid for as long as its tree is in the store.

Kept: the tree of a merge that was clean (before any structured or `theirs` resolution; a conflict is
never kept, it is merged again and described from git's answer). Used: only when that tree is in the
repository (or this run's quarantine). What the composed branch reaches is packed into the store (see
Git.migrate_objects), so the trees of applied entries are there after the run, and a later `git gc` that
prunes one only costs its merge again. The store is trusted as git trusts it: an object it has is taken
with everything it names, which is also how the run's pack decides what to write.

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/merges-git<X.Y.Z>.json`,
`{"merges": {KEY: tree}}`), written by sync (not `--dry-run`, which writes nothing) and explain.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from carrytool.gitlayer.git import is_sha
from carrytool.pipeline.kept import KeptAnswers

MERGES_MAX = 5_000      # trees a file keeps (~0.4 MB): 80 nights of a 60-entry manifest
RULE = "chain-1"        # bump when what a chained merge is, or how a composer asks it, changes
# the code that asks a chained merge and reads its answer (the pinned configuration included): a kept tree
# is the answer of this code only
CODE = ("pipeline/compose.py", "pipeline/compose_records.py", "pipeline/compose_upstream.py",
        "pipeline/compose_chain.py", "pipeline/compose_conflicts.py", "pipeline/reduce.py",
        "pipeline/keptmerges.py", "gitlayer/env.py",
        "gitlayer/git.py", "gitlayer/mergepipe.py", "gitlayer/objects.py",
        "gitlayer/processes.py", "gitlayer/objectwrite.py", "gitlayer/quarantine.py", "gitlayer/objectread.py",
        "gitlayer/trees.py", "gitlayer/history.py", "gitlayer/contentmerge.py", "gitlayer/treemerge.py",
        "gitlayer/sidemerges.py", "gitlayer/diffs.py", "gitlayer/refs.py", "gitlayer/answers.py")


def _decode(raw: object) -> str | None:
    return raw if isinstance(raw, str) and is_sha(raw) else None


class KeptMerges(KeptAnswers[str]):
    """Clean chained merges' trees by key, in memory and (given FOLDER) on disk for git VERSION."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "merges", version, RULE, CODE, MERGES_MAX, _decode, lambda tree: tree)

    def key(self, tip_tree: str, parents: Sequence[str], theirs: str, switches: Sequence[object]) -> str:
        """The key of the chained merge onto TIP_TREE of THEIRS, from a stand-in whose parents are PARENTS,
        by a composer whose switches are SWITCHES."""
        return self.digest(tip_tree, list(parents), theirs, [str(s) for s in switches])
