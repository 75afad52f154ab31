"""The scope cache: def/class spans of Python blobs (pipeline.scopes) by blob SHA, in memory and on disk."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from carrytool.gitlayer.jsonread import read_json
from carrytool.pipeline.atomic import write_json_cache
from carrytool.pipeline.scopes import Spans, _spans, scope_in, scope_of_line

SCOPES_RULE = "v2"      # in the cache folder's name: bump when what a blob's spans or a line's scope is changes
PACKS_MAX = 8           # packs in the cache folder before a run's save merges them into one
PACK_SPANS_MAX = 200_000   # spans a merged pack keeps (~10 MB): this run's blobs, then the newest packs' others


class SpanCache:
    """def/class spans of Python blobs by blob SHA: each distinct blob is parsed once.

    In memory, and (given FOLDER, e.g. `<git dir>/carrytool/cache`) on disk: a blob never changes, so
    its spans are valid forever. On disk they are packs, one JSON file per run that parsed something
    (`{"spans": {SHA: [[first, last, name], ...]}, "lines": {SHA: [[line, name or null], ...]}}`: a blob's
    whole spans, or the lines `scope` answered from its pieces), under a folder named for Python's minor version
    (its grammar decides what parses). Every pack is read at once, at the first blob not in memory;
    `save` writes the run's new blobs as one more pack, whole or not at all, under a name no other run
    takes, and, once there are PACKS_MAX packs, merges those it read into one (the blobs this run used, then
    others up to PACK_SPANS_MAX spans: the cache is read whole, so it stays small). A pack that cannot be read, or a folder that cannot be written, only costs parses.
    """

    def __init__(self, folder: Path | None = None) -> None:
        tag = f"scopes-{SCOPES_RULE}-py{sys.version_info[0]}.{sys.version_info[1]}"
        self.folder = folder / tag if folder is not None else None
        self._memory: dict[str, Spans] = {}
        self._disk: dict[str, object] | None = None     # SHA -> spans as a pack holds them (unchecked)
        self._packs: list[Path] = []                     # the packs read, newest first
        self._new: dict[str, Spans] = {}                  # parsed by this run, not yet saved
        self._lines: dict[str, dict[int, str | None]] = {}       # `scope`'s answers: SHA -> line -> scope
        self._new_lines: dict[str, dict[int, str | None]] = {}   # ... found by this run, not yet saved
        self._disk_lines: dict[str, object] = {}                 # SHA -> the packs' lines (unchecked)
        self._sources: dict[str, bytes | None] = {}              # the blobs `scope` read
        self.parsed = 0                       # blobs parsed by this cache (for tests and benchmarks)

    def spans(self, oid: str, read: Callable[[], bytes | None]) -> Spans:
        """The spans of blob OID, whose content READ returns (called only when the spans are not cached)."""
        found = self._memory.get(oid)
        if found is None:
            found = self._load(oid)
        if found is None:
            source = read()
            found = _spans(source) if source is not None else ()
            self.parsed += source is not None
            self._new[oid] = found
        self._memory[oid] = found
        return found

    def scope(self, oid: str, line: int, read: Callable[[], bytes | None]) -> str | None:
        """scope_in(spans(OID), LINE), parsing only the pieces around LINE (scope_of_line) when OID's spans
        are not known: each line's answer is kept too, in memory and on disk, so a blob is parsed at most
        once per line asked, ever. READ returns the blob's content (called only when needed)."""
        found = self._memory.get(oid)
        if found is None and oid not in self._lines:
            found = self._load(oid)
            if found is not None:
                self._memory[oid] = found
        if found is not None:
            return scope_in(found, line)
        known = self._lines.get(oid)
        if known is None:
            known = self._lines[oid] = self._load_lines(oid)
        if line in known:
            return known[line]
        source = self._sources.get(oid, False)
        if source is False:
            source = self._sources[oid] = read()
            self.parsed += source is not None
        answer = scope_of_line(source, line) if source is not None else None
        known[line] = answer
        self._new_lines.setdefault(oid, {})[line] = answer
        return answer

    def _load_lines(self, oid: str) -> dict[int, str | None]:
        """OID's lines answered by earlier runs (a pack's `lines`), checked: anything odd is asked again."""
        if self._disk is None:
            self._disk = self._read_packs()
        raw = self._disk_lines.get(oid)
        out: dict[int, str | None] = {}
        if isinstance(raw, list):
            for item in raw:
                if isinstance(item, list) and len(item) == 2 and type(item[0]) is int and \
                        (item[1] is None or isinstance(item[1], str)):
                    out[item[0]] = item[1]
        return out

    def _load(self, oid: str) -> Spans | None:
        if self._disk is None:
            self._disk = self._read_packs()
        raw = self._disk.get(oid)
        if raw is None:
            return None
        try:
            return tuple((int(a), int(b), str(c)) for a, b, c in raw)  # type: ignore[attr-defined]
        except (ValueError, TypeError):
            return None

    def _read_packs(self) -> dict[str, object]:
        """Every readable pack's blobs (a newer pack's answer first: they agree anyway)."""
        out: dict[str, object] = {}
        if self.folder is None:
            return out
        try:
            packs = sorted(self.folder.glob("pack-*.json"), key=_mtime, reverse=True)
        except OSError:
            return out
        for path in packs:
            try:
                pack = read_json(path)
                found = pack["spans"]
            except (OSError, ValueError, TypeError, KeyError):      # damaged, nested too deep (h219): a shortcut lost
                continue
            if isinstance(found, dict):
                self._packs.append(path)
                for oid, raw in found.items():
                    out.setdefault(oid, raw)
                lines = pack.get("lines") if isinstance(pack, dict) else None
                if isinstance(lines, dict):
                    for oid, raw in lines.items():
                        self._disk_lines.setdefault(oid, raw)
        return out

    def save(self) -> None:
        """Write the blobs this cache parsed as one pack (and merge the packs read, once there are many);
        nothing when it parsed none. Never raises for a folder it cannot write."""
        if self.folder is None or not (self._new or self._new_lines):
            return
        merge = len(self._packs) + 1 >= PACKS_MAX
        spans: dict[str, object] = {oid: [list(s) for s in found] for oid, found in self._memory.items()} \
            if merge else {oid: [list(s) for s in found] for oid, found in self._new.items()}
        lines: dict[str, object] = {oid: [[n, scope] for n, scope in sorted(known.items())]
                                    for oid, known in (self._lines if merge else self._new_lines).items() if known}
        if merge:
            size = sum(map(len, spans.values())) + sum(map(len, lines.values()))  # type: ignore[arg-type]
            for found, kept in ((self._disk or {}, spans), (self._disk_lines, lines)):
                for oid, raw in found.items():
                    if oid in kept or not isinstance(raw, list):
                        continue
                    size += len(raw)
                    if size > PACK_SPANS_MAX:
                        break
                    kept[oid] = raw
        if not _write_pack(self.folder, spans, lines):
            return
        self._new.clear()
        self._new_lines.clear()
        if merge:
            for path in self._packs:        # only those read: a pack another run wrote meanwhile stays
                try:
                    path.unlink()
                except OSError:
                    pass
            self._packs = []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _write_pack(folder: Path, spans: dict[str, object], lines: dict[str, object] | None = None) -> bool:
    """SPANS (and LINES: `scope`'s answers) as a new pack in FOLDER: written beside, then renamed to a name
    of its own (whole or not at all)."""
    return write_json_cache(folder, ".", {"spans": spans, "lines": lines or {}},
                            lambda tmp: folder / f"pack-{os.getpid()}-{tmp.name[1:-4]}.json")
