"""A shared, versioned store of conflict resolutions (dim's drm-rerere idea, made deterministic).

A conflicted file (as `git merge-tree` writes it, `merge` conflict style) is cut into conflict hunks.
Each hunk is keyed by the SHA-256 of its two sides, sorted, without marker labels: the same conflict
gets the same key on any machine, whatever the order of the sides or the user's configuration. The
store is a directory of small JSON files next to the manifest (`carries/resolutions/<union>/`),
committed with it. A file is resolved from the store only when every one of its conflict hunks has a
record; otherwise it is left exactly as conflicted and the missing keys are reported.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from carrytool import __version__

_START = re.compile(rb"^<{7}(?: .*)?$")
_MID = re.compile(rb"^={7}$")
_END = re.compile(rb"^>{7}(?: .*)?$")
STORE_VERSION = 1


@dataclass(frozen=True)
class ConflictHunk:
    ours: bytes
    theirs: bytes

    @property
    def key(self) -> str:
        sides = sorted([self.ours, self.theirs])
        return hashlib.sha256(sides[0] + b"\0" + sides[1]).hexdigest()


def split_conflicts(data: bytes) -> list[bytes | ConflictHunk] | None:
    """Cut a conflicted file into common text and conflict hunks; None when the markers are malformed."""
    parts: list[bytes | ConflictHunk] = []
    common: list[bytes] = []
    lines = data.split(b"\n")
    i = 0
    while i < len(lines):
        if _START.match(lines[i]):
            ours, theirs, j = [], [], i + 1
            while j < len(lines) and not _MID.match(lines[j]):
                ours.append(lines[j])
                j += 1
            k = j + 1
            while k < len(lines) and not _END.match(lines[k]):
                theirs.append(lines[k])
                k += 1
            if j >= len(lines) or k >= len(lines):
                return None
            parts.append(b"\n".join(common))
            common = []
            parts.append(ConflictHunk(b"\n".join(ours), b"\n".join(theirs)))
            i = k + 1
            continue
        common.append(lines[i])
        i += 1
    parts.append(b"\n".join(common))
    return parts


def has_markers(data: bytes) -> bool:
    return any(_START.match(line) or _END.match(line) for line in data.split(b"\n"))


def extract_resolutions(conflicted: bytes, resolved: bytes) -> dict[str, bytes] | None:
    """The resolution of each conflict hunk, found between the common text around it; None if the user
    also changed text outside the conflicts (then only a whole-file record can hold the resolution)."""
    parts = split_conflicts(conflicted)
    if parts is None:
        return None
    out: dict[str, bytes] = {}
    pos = 0
    text = resolved
    first = parts[0]
    assert isinstance(first, bytes)
    if not text.startswith(first):
        return None
    pos = len(first)
    for index in range(1, len(parts), 2):
        hunk, after = parts[index], parts[index + 1]
        assert isinstance(hunk, ConflictHunk) and isinstance(after, bytes)
        last = index + 2 >= len(parts)
        if last:
            if not text.endswith(after) or len(text) - len(after) < pos:
                return None
            end = len(text) - len(after)
        else:
            end = text.find(after, pos) if after else pos
            if end < 0:
                return None
        out[hunk.key] = _strip_joins(text[pos:end])
        pos = end + len(after)
    return out


def _strip_joins(chunk: bytes) -> bytes:
    """A resolution is stored without the newlines that join it to the common text around it."""
    if chunk.startswith(b"\n"):
        chunk = chunk[1:]
    if chunk.endswith(b"\n"):
        chunk = chunk[:-1]
    return chunk


def apply_resolutions(conflicted: bytes, records: dict[str, bytes]) -> tuple[bytes | None, list[str]]:
    """Resolve every conflict hunk from RECORDS; (content, []) or (None, missing keys). All or nothing."""
    parts = split_conflicts(conflicted)
    if parts is None:
        return None, ["malformed conflict markers"]
    missing = [p.key for p in parts if isinstance(p, ConflictHunk) and p.key not in records]
    if missing:
        return None, missing
    pieces: list[bytes] = []
    for part in parts:
        pieces.append(records[part.key] if isinstance(part, ConflictHunk) else part)
    return b"\n".join(pieces), []


class Store:
    """`<manifest dir>/resolutions/<union>/`: one JSON record per conflict hunk, plus store.json."""

    def __init__(self, root: Path, git_version: str) -> None:
        self.root = root
        self.git_version = git_version

    def _dir(self, union: str) -> Path:
        return self.root / union

    def load(self, union: str) -> dict[str, bytes]:
        records: dict[str, bytes] = {}
        folder = self._dir(union)
        if not folder.is_dir():
            return records
        for path in sorted(folder.glob("*.json")):
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
                records[doc["key"]] = doc["resolution"].encode("utf-8", "surrogateescape")
            except (OSError, ValueError, KeyError, AttributeError):
                continue
        return records

    def record(self, union: str, path_in_tree: str, hunk_key: str, hunk: ConflictHunk | None,
               resolution: bytes, entries: list[str]) -> Path:
        folder = self._dir(union)
        folder.mkdir(parents=True, exist_ok=True)
        doc = {
            "key": hunk_key,
            "file": path_in_tree,
            "entries": entries,
            "ours": hunk.ours.decode("utf-8", "surrogateescape") if hunk else None,
            "theirs": hunk.theirs.decode("utf-8", "surrogateescape") if hunk else None,
            "resolution": resolution.decode("utf-8", "surrogateescape"),
            "git": self.git_version,
            "carrytool": __version__,
        }
        target = folder / f"{hunk_key[:16]}.json"
        target.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self._write_meta()
        return target

    def _write_meta(self) -> None:
        meta = self.root / "store.json"
        doc = {"store": STORE_VERSION, "git": self.git_version, "carrytool": __version__,
               "key": "sha256 of the two conflict sides, sorted, joined by NUL, without marker labels "
                      "(git merge-tree, conflict style 'merge')"}
        text = json.dumps(doc, indent=2) + "\n"
        if not meta.exists() or meta.read_text(encoding="utf-8") != text:
            meta.write_text(text, encoding="utf-8")
