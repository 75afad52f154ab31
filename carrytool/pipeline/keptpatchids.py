"""Patch ids of commits, kept on disk by commit: explain after the nightly sync, or the next sync, reads the
stale-stack check's patch ids (pipeline.sync_warnings.stale_stacks) without `git log -p | git patch-id` again.

A commit's patch id (`git patch-id --stable` of its zero-context diff from its parent, Diffs.patch_ids_later)
follows from nothing but the commit (its tree and its parent's: content addressed), the git that diffs and
hashes (its version; the configuration it reads is pinned: gitlayer.env.PINNED_CONFIG, the diff algorithm
and rename detection among it) and the carrytool that asks (a digest of the source that builds the command
line and reads its answer, CODE). Only an id git gave is kept: a commit git gave none (a merge, an empty
commit, a process that failed) is asked again each run.

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/patchids-git<X.Y.Z>.json`,
`{"patchids": {KEY: id}}`), written by sync (not `--dry-run`) and explain, as the kept merges are; verify asks
git again, a check independent of what earlier runs found.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from carrytool.gitlayer.git import is_sha
from carrytool.pipeline.kept import KeptAnswers

PATCH_IDS_MAX = 10_000  # commits a file keeps (~0.9 MB; the stale stacks of polars' 60 PRs hold 140)
RULE = "patch-id-1"     # bump when the patch a commit's id is taken of changes (the log or patch-id options)
# the code that asks a commit's patch id and reads the answer (the pinned configuration included)
CODE = ("gitlayer/diffs.py", "gitlayer/env.py", "pipeline/keptpatchids.py")


def _decode(raw: object) -> str | None:
    return raw if isinstance(raw, str) and is_sha(raw) else None


class KeptPatchIds(KeptAnswers[str]):
    """Commits' patch ids by key, in memory and (given FOLDER) on disk for git VERSION."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "patchids", version, RULE, CODE, PATCH_IDS_MAX, _decode, lambda found: found)

    def key(self, commit: str) -> str:
        """The key of COMMIT's patch id."""
        return self.digest(commit)
