"""Pair decisions kept on disk by what decides them: a second explain of the same plan merges no pair.

The overlap map decides a pair of entries that share a file by a merge (overlap._PairMerger): the paths
where the pair conflicts, and whether the structured rule resolves them, follow from nothing but the
merge's two commits (the earlier entry alone on upstream, whose parent is upstream; the later one's head,
reduced or whole, whose parent is its base), the later entry's own merge alone onto upstream (two
commits too: its conflicts are its own), the structured-merge patterns, the rule's switches, and the
git and carrytool that merge and decide. Commits never change, so a decision kept under all of them is
valid forever, as the scope cache's spans are under a blob SHA.

One JSON file per git version beside the scope cache (`<git dir>/carrytool/cache/pairs-git<X.Y.Z>.json`,
`{"pairs": {KEY: [[path, ...], structurally]}}`), read whole at the first pair, written whole (temp
beside, then renamed) by a run that decided new pairs: this run's decisions first, then the others up to
PAIRS_MAX. A file that cannot be read or written only costs merges.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from carrytool import __version__
from carrytool.pipeline.atomic import write_json_cache

PAIRS_MAX = 20_000      # decisions a file keeps (~2 MB): every run reads it whole
RULE = "pairs-1"        # bump when what a pair merge decides, or how, changes

Decision = tuple[list[str], bool]      # the pair's conflicting paths, resolved by the structured rule


class PairDecisions:
    """Pair decisions by key, in memory and (given FOLDER) on disk for the git VERSION that merged them."""

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        self.version = ".".join(map(str, version))
        self.path = folder / f"pairs-git{self.version}.json" if folder is not None else None
        self._disk: dict[str, object] | None = None
        self._used: dict[str, Decision] = {}       # asked or decided by this run
        self._new = 0                              # decided by this run, not yet saved

    def key(self, pair: tuple[str, str], alone: tuple[str, str] | None, patterns: Sequence[str],
            switches: Sequence[object]) -> str:
        """The key of a pair merge PAIR (ours, theirs) whose later entry merged alone as ALONE."""
        what = [RULE, __version__, self.version, list(pair), list(alone) if alone else None,
                list(patterns), [str(s) for s in switches]]
        return hashlib.sha1(json.dumps(what).encode()).hexdigest()

    def get(self, key: str) -> Decision | None:
        if key in self._used:
            return self._used[key]
        if self._disk is None:
            self._disk = self._read()
        raw = self._disk.get(key)
        if not (isinstance(raw, list) and len(raw) == 2 and isinstance(raw[0], list) and
                all(isinstance(p, str) for p in raw[0]) and isinstance(raw[1], bool)):
            return None
        found = (list(raw[0]), raw[1])
        self._used[key] = found
        return found

    def put(self, key: str, decision: Decision) -> None:
        self._used[key] = (list(decision[0]), bool(decision[1]))
        self._new += 1

    def _read(self) -> dict[str, object]:
        if self.path is None:
            return {}
        try:
            found = json.loads(self.path.read_bytes())["pairs"]
        except (OSError, ValueError, TypeError, KeyError):
            return {}
        return found if isinstance(found, dict) else {}

    def save(self) -> None:
        """Write this run's decisions and the file's others (up to PAIRS_MAX); nothing when it decided none.
        Never raises for a folder it cannot write."""
        if self.path is None or not self._new:
            return
        out: dict[str, object] = {k: [paths, flag] for k, (paths, flag) in self._used.items()}
        for key, raw in (self._disk if self._disk is not None else self._read()).items():
            if len(out) >= PAIRS_MAX:
                break
            out.setdefault(key, raw)
        path = self.path
        if write_json_cache(path.parent, ".pairs", {"pairs": out}, lambda _tmp: path):
            self._new = 0
