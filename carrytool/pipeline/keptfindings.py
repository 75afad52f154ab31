"""What parsing a composed module tells the landing checks, kept on disk by blob SHA: explain after the
nightly sync, or the next sync of a file that did not change, parses it for them no more.

The shadowed-definition and duplicate-key checks (pipeline.shadowed, pipeline.dictkeys) scan a file a
step landed lines of, and parse only a file the scan suspects. What the parse finds (each name one scope
defines twice, each key one dict display writes twice, with their lines) follows from nothing but the
blob, the Python that parses it (its minor version: its grammar) and the carrytool that reads the tree
(a digest of the checks' source, CODE); who landed which line is applied afterwards, each run, so a kept
finding serves any composition that holds the blob. The scan still runs every time: the warnings are the
same whether the parse was kept or not.

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/findings-git<X.Y.Z>.json`,
`{"findings": {KEY: [[where, what, [line, ...]], ...]}}`), written by sync (not `--dry-run`) and explain,
as the kept merges are; verify parses again, a check independent of what earlier runs found.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from carrytool.pipeline.kept import KeptAnswers

FINDINGS_MAX = 20_000   # blobs a file keeps (most hold no finding: `[]`)
RULE = f"findings-1-py{sys.version_info[0]}.{sys.version_info[1]}"   # bump when what a check finds changes
# the code that parses a module and finds in it: a kept finding is this code's only
CODE = ("pipeline/shadowed.py", "pipeline/dictkeys.py", "pipeline/keptfindings.py", "asserts/bydesign.py",
        "asserts/pyscope.py")

Finding = tuple[str, str, list[int]]     # (where: a scope or a dict display, what: a name or a key's repr, lines)


def _decode(raw: object) -> list[Finding] | None:
    if not isinstance(raw, list):
        return None
    out: list[Finding] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str)
                and isinstance(item[2], list) and len(item[2]) > 1 and all(type(n) is int for n in item[2])):
            return None
        out.append((item[0], item[1], list(item[2])))
    return out


def _encode(found: Sequence[Finding]) -> object:
    return [[where, what, list(lines)] for where, what, lines in found]


class KeptFindings(KeptAnswers[list[Finding]]):
    """Each check's findings in a blob, by key, in memory and (given FOLDER) on disk for git VERSION."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "findings", version, RULE, CODE, FINDINGS_MAX, _decode, _encode)

    def key(self, check: str, oid: str) -> str:
        """The key of CHECK's findings in blob OID."""
        return self.digest(check, oid)
