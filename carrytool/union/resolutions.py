"""A shared, versioned store of conflict resolutions (dim's drm-rerere idea, made deterministic).

A conflicted file (as `git merge-tree` writes it, `merge` conflict style) is cut into conflict hunks.
Each hunk is keyed by the SHA-256 of its two sides, sorted, without marker labels: the same conflict
gets the same key on any machine, whatever the order of the sides or the user's configuration. Each
recorded hunk resolves its own hunk: a file whose other hunks have no record keeps only those as
conflicts. Edits a maintainer made outside the hunks (or in files without conflicts) are *fixups*: the
file as the fold had it and as the maintainer left it, applied 3-way after the hunks (dim's drm-tip
fixups). The store is a directory of small JSON files next to the manifest
(`carries/resolutions/<union>/`, fixups under `fixups/`), committed with it.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.errors import InputError
from carrytool.manifest.safefile import refuse_symlink, write_atomic
from carrytool.union.recorded_upstream import (
    HunkUpstream,
    RecordedUpstream,
    merged_upstream,
    place_fields,
    places_of,
    read_lines,
    scopes_of,
    upstream_fields,
    upstream_of_doc,
    written_lines,
)

_START = re.compile(rb"^<{7}(?: .*)?\r?$")
_MID = re.compile(rb"^={7}\r?$")      # git ends marker lines with CR too in a file of CRLF lines
_END = re.compile(rb"^>{7}(?: .*)?\r?$")
_KEY = re.compile(r"^[0-9a-f]{64}$")
STORE_VERSION = 1
FILE_MODES = ("100644", "100755", "120000")


class _NoLines(bytes):
    """The resolution of a hunk resolved to no line at all (both sides taken out): NO_LINES."""


class _Legacy(bytes):
    """A resolution recorded by a store without `lines` (before 0.2): its lines joined by newlines, where
    b"" was put back as one empty line, and the hunk got an empty line of its own where no common text
    preceded (or, the last one, followed) it; put back as then, so that a refold of a union folded then
    gives its bytes (`apply_resolutions`)."""


NO_LINES: bytes = _NoLines()      # a recorded resolution of zero lines (b"" is one empty line)


def _resolution(lines: list[bytes]) -> bytes:
    """LINES as a record: joined by newlines; NO_LINES for none (joined, none and one empty line are alike)."""
    return b"\n".join(lines) if lines else NO_LINES


def resolution_lines(resolution: bytes) -> tuple[bytes, ...]:
    """A recorded RESOLUTION as its lines: none for NO_LINES (`_resolution` undone)."""
    return () if isinstance(resolution, _NoLines) else tuple(resolution.split(b"\n"))


@dataclass(frozen=True)
class ConflictHunk:
    ours: bytes
    theirs: bytes
    lines: tuple[bytes, ...] = field(default=(), compare=False)   # as written, markers and labels included

    @property
    def key(self) -> str:
        sides = sorted([self.ours, self.theirs])
        return hashlib.sha256(sides[0] + b"\0" + sides[1]).hexdigest()

    def text(self) -> bytes:
        return b"\n".join(self.lines)


def _spans(lines: list[bytes]) -> list[tuple[int, int, int]] | None:
    """(start, middle, end) line numbers of each conflict hunk; None when the markers are malformed."""
    spans, i = [], 0
    while i < len(lines):
        if _START.match(lines[i]):
            j = i + 1
            while j < len(lines) and not _MID.match(lines[j]):
                j += 1
            k = j + 1
            while k < len(lines) and not _END.match(lines[k]):
                k += 1
            if j >= len(lines) or k >= len(lines):
                return None
            spans.append((i, j, k))
            i = k + 1
            continue
        i += 1
    return spans


def split_conflicts(data: bytes) -> list[bytes | ConflictHunk] | None:
    """Cut a conflicted file into common text and conflict hunks; None when the markers are malformed."""
    lines = data.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None
    parts: list[bytes | ConflictHunk] = []
    last = 0
    for i, j, k in spans:
        parts.append(b"\n".join(lines[last:i]))
        parts.append(ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k]), tuple(lines[i:k + 1])))
        last = k + 1
    parts.append(b"\n".join(lines[last:]))
    return parts


def has_markers(data: bytes) -> bool:
    return any(_START.match(line) or _END.match(line) for line in data.split(b"\n"))


def extract_resolutions(conflicted: bytes, resolved: bytes) -> dict[str, bytes] | None:
    """`extract_at` by key (a key met at several hunks: the last one's)."""
    found = extract_at(conflicted, resolved)
    return dict(found) if found is not None else None


def extract_at(conflicted: bytes, resolved: bytes) -> list[tuple[str, bytes]] | None:
    """(key, resolution) of each conflict hunk, in order, found between the common text around it, line for line (a
    hunk resolved to nothing is NO_LINES, one resolved to an empty line b""); None if the user also
    changed text outside the conflicts (see `align_resolutions` for that case)."""
    lines = conflicted.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None
    common = _common(lines, spans)
    new = resolved.split(b"\n")
    if new[:len(common[0])] != common[0]:
        return None
    pos, out = len(common[0]), []
    for n, (i, j, k) in enumerate(spans):
        after = common[n + 1]
        if n == len(spans) - 1:
            end = len(new) - len(after)
            if end < pos or new[end:] != after:
                return None
        else:
            end = _find(new, after, pos)
            if end < 0:
                return None
        key = ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k])).key
        out.append((key, _resolution(new[pos:end])))
        pos = end + len(after)
    return out


def _common(lines: list[bytes], spans: list[tuple[int, int, int]]) -> list[list[bytes]]:
    """The lines around the conflict hunks SPANS: before the first, between each two, after the last."""
    out, last = [], 0
    for i, _j, k in spans:
        out.append(lines[last:i])
        last = k + 1
    out.append(lines[last:])
    return out


def _find(seq: list[bytes], sub: list[bytes], start: int) -> int:
    """Where the lines SUB first occur in SEQ from START on; START when SUB is empty; -1 when nowhere."""
    if not sub:
        return start
    for at in range(start, len(seq) - len(sub) + 1):
        if seq[at] == sub[0] and seq[at:at + len(sub)] == sub:
            return at
    return -1


def align_resolutions(conflicted: bytes, resolved: bytes) -> dict[str, bytes]:
    """`align_at` by key (a key met at several hunks: the last one's)."""
    return dict(align_at(conflicted, resolved))


def align_at(conflicted: bytes, resolved: bytes) -> list[tuple[str, bytes]]:
    """(key, resolution) of each hunk, in order, when text outside the hunks changed too: the resolved lines
    between the common lines that survived unchanged around the hunk (what lies outside goes to a fixup)."""
    exact = extract_at(conflicted, resolved)
    if exact is not None:
        return exact
    old, new = conflicted.split(b"\n"), resolved.split(b"\n")
    spans = _spans(old) or []
    common = [True] * len(old)
    for i, _j, k in spans:
        common[i:k + 1] = [False] * (k + 1 - i)
    hunks = [(ConflictHunk(b"\n".join(old[i + 1:j]), b"\n".join(old[j + 1:k])), i, k + 1) for i, j, k in spans]
    anchors: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            anchors.update({i: j1 + i - i1 for i in range(i1, i2) if common[i]})
    out: list[tuple[str, bytes]] = []
    for hunk, start, end in hunks:
        before = [anchors[i] for i in range(start) if i in anchors]
        after = [anchors[i] for i in range(end, len(old)) if i in anchors]
        lo = before[-1] + 1 if before else 0
        hi = after[0] if after else len(new)
        out.append((hunk.key, _resolution(new[lo:max(lo, hi)])))
    return out


def apply_resolutions(conflicted: bytes, records: dict[str, bytes], at: list[bytes | None] | None = None
                      ) -> tuple[bytes | None, list[str]]:
    """Resolve each conflict hunk that has a record, on its own: (content, keys still missing); AT: the
    resolution of the file's n-th hunk where its key's places were resolved differently (None: its key's).

    Hunks without a record stay in the content exactly as they were (markers and all). None as the
    content only when the markers are malformed. Rebuilt line for line: no common text around a hunk
    (the file starts with it, or another hunk follows it) adds no line (joining the pieces gave each an
    empty line of its own, shown in the scratch tree at the top of a file both PRs added), and a NO_LINES
    record none; a record of an older store (`_Legacy`) is put back as that version put it back.
    """
    lines = conflicted.split(b"\n")
    spans = _spans(lines)
    if spans is None:
        return None, ["malformed conflict markers"]
    out: list[bytes] = []
    missing: list[str] = []
    last, record = 0, None
    for n, (i, j, k) in enumerate(spans):
        hunk = ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k]))
        record = records.get(hunk.key)
        if record is not None and at is not None and n < len(at) and at[n] is not None:
            record = at[n]
        out += lines[last:i] or ([b""] if isinstance(record, _Legacy) else [])
        if record is None:
            missing.append(hunk.key)
            out += lines[i:k + 1]
        elif not isinstance(record, _NoLines):
            out += record.split(b"\n")
        last = k + 1
    out += lines[last:] or ([b""] if isinstance(record, _Legacy) else [])
    return b"\n".join(out), missing


@dataclass(frozen=True)
class Fixup:
    """A maintainer's edit of FILE while folding ITEM: the file as the fold had it (BASE) and as left
    (RESULT); (mode, content) or None when absent."""

    item: str
    file: str
    base: tuple[str, bytes] | None
    result: tuple[str, bytes] | None
    # what the file was when the edit was recorded: "" merged, "content" (conflict hunks), "other" (a
    # conflict of another kind: deleted on one side, a link, ...), "fixup"; None in a record made before
    # it was kept (taken to be any). Only an edit recorded on an "other" conflict settles one
    conflict: str | None = None
    # the lines of BASE the edit removes (or replaces) that the fold had from upstream when it was recorded
    # (union.upstream_edit); None in a record made before they were kept (taken to be none)
    upstream: tuple[bytes, ...] | None = None

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.item}\0{self.file}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _encode(value: tuple[str, bytes] | None) -> dict[str, str] | None:
    if value is None:
        return None
    mode, data = value
    try:
        return {"mode": mode, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"mode": mode, "base64": base64.b64encode(data).decode()}


def _decode(value: Any) -> tuple[str, bytes] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("mode") not in FILE_MODES:
        raise ValueError("a side must be null or {mode, text|base64}")
    if isinstance(value.get("text"), str):
        return value["mode"], value["text"].encode("utf-8")
    if isinstance(value.get("base64"), str):
        return value["mode"], base64.b64decode(value["base64"], validate=True)
    raise ValueError("a side needs 'text' or 'base64'")


def _corrupt(path: Path, why: str) -> InputError:
    return InputError(f"{path}: not a valid resolution record ({why})",
                      hint=f"restore it from version control (git checkout -- {path}) or delete it; "
                           "the fold will then ask for that resolution again")


def _lines_field(resolution: bytes) -> dict[str, Any]:
    """RESOLUTION as a record writes it: `resolution` and `lines` (0: NO_LINES, which equals b"")."""
    return {"resolution": resolution.decode("utf-8", "surrogateescape"),
            "lines": 0 if isinstance(resolution, _NoLines) else resolution.count(b"\n") + 1}


def _read_resolution(doc: dict[str, Any]) -> bytes:
    """DOC's `resolution` with its `lines` (`_lines_field` read back); ValueError when they disagree. A record
    without `lines` (before 0.2): `_Legacy`."""
    if not isinstance(doc.get("resolution"), str):
        raise ValueError("needs a 'resolution' string")
    text = doc["resolution"].encode("utf-8", "surrogateescape")
    count = doc.get("lines", -1)
    if count == -1:
        return _Legacy(text)
    if type(count) is not int or count != (text.count(b"\n") + 1 if text or count else 0):
        raise ValueError("'lines' must be the number of lines of 'resolution' (0: none)")
    return text if count else NO_LINES


def _resolutions_at(doc: dict[str, Any]) -> dict[tuple[str, int], bytes]:
    """(file, n) -> the resolution of each place of DOC's `upstream_at` that has its own (the key's places were
    resolved differently: helper-174); ValueError when malformed."""
    out = {}
    for place in doc.get("upstream_at") or []:
        if isinstance(place, dict) and "resolution" in place:
            if "lines" not in place:
                raise ValueError("an 'upstream_at' place's 'resolution' needs its 'lines'")
            out[place["file"], place["hunk"]] = _read_resolution(place)
    return out


class Store:
    """`<manifest dir>/resolutions/<union>/`: one JSON record per conflict hunk, fixups/, and store.json."""

    def __init__(self, root: Path, git_version: str) -> None:
        self.root = root
        self.git_version = git_version

    def _dir(self, union: str) -> Path:
        return self.root / union

    def _read(self, path: Path) -> Any:
        if path.is_symlink():
            raise _corrupt(path, "a symlink")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _corrupt(path, f"unreadable JSON: {exc}") from None

    def load(self, union: str) -> dict[str, bytes]:
        """Every recorded hunk resolution of UNION; a malformed record is an InputError naming it."""
        records: dict[str, bytes] = {}
        folder = self._dir(union)
        if not folder.is_dir():
            return records
        for path in sorted(folder.glob("*.json")):
            doc = self._read(path)
            if not isinstance(doc, dict) or not isinstance(doc.get("key"), str) or not _KEY.match(doc["key"]) \
                    or not isinstance(doc.get("resolution"), str):
                raise _corrupt(path, "needs a 64-hex 'key' and a 'resolution' string")
            try:                      # recorded before `lines`: put back as that version did (_Legacy)
                records[doc["key"]] = _read_resolution(doc)
            except ValueError as exc:
                raise _corrupt(path, str(exc)) from None
        return records

    def load_upstream(self, union: str) -> dict[str, RecordedUpstream]:
        """What each hunk record of UNION says of upstream's lines (`upstream_removed`, `upstream_kept`, at each
        place: `upstream_at`, named by its def/class where recorded), by key; a malformed one is an InputError
        naming it."""
        out: dict[str, RecordedUpstream] = {}
        folder = self._dir(union)
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            doc = self._read(path)
            if not isinstance(doc, dict) or not isinstance(doc.get("key"), str):
                continue            # `load` names it
            try:
                out[doc["key"]] = RecordedUpstream(upstream_of_doc(doc), places_of(doc), scopes_of(doc),
                                                   _resolutions_at(doc))
            except ValueError as exc:
                raise _corrupt(path, str(exc)) from None
        return out

    def where(self, union: str, keys: set[str]) -> list[tuple[str, list[str]]]:
        """(file, entries) of each record of UNION whose key is one of KEYS, sorted: what a resolution
        resolved, to name it (helper-88: "3 recorded resolution(s) were not needed", no more)."""
        return sorted((file, entries) for file, entries, _text, _lines in self.described(union, keys))

    def described(self, union: str, keys: set[str]) -> list[tuple[str, list[str], str, int]]:
        """(file, entries, resolution, its number of lines) of each record of UNION whose key is one of KEYS,
        in key order."""
        out = []
        folder = self._dir(union)
        for path in sorted(folder.glob("*.json")) if keys and folder.is_dir() else []:
            doc = self._read(path)
            if isinstance(doc, dict) and doc.get("key") in keys:
                entries = doc.get("entries") if isinstance(doc.get("entries"), list) else []
                text = str(doc.get("resolution", ""))
                lines = doc.get("lines") if type(doc.get("lines")) is int else text.count("\n") + 1
                out.append((str(doc.get("file") or "?"), [str(e) for e in entries], text, lines))
        return out

    def records_of(self, union: str, keys: set[str], file: str) -> list[tuple[Path, dict[str, Any]]]:
        """(path, document) of each record of UNION for FILE whose key is one of KEYS: where to correct one."""
        folder = self._dir(union)
        out = []
        for path in sorted(folder.glob("*.json")) if keys and folder.is_dir() else []:
            doc = self._read(path)
            if isinstance(doc, dict) and doc.get("key") in keys and doc.get("file") == file:
                out.append((path, doc))
        return out

    def fixup_path(self, union: str, fixup: Fixup) -> Path:
        """Where FIXUP is recorded."""
        return self._dir(union) / "fixups" / f"{fixup.key}.json"

    def load_fixups(self, union: str) -> list[Fixup]:
        """Every recorded fixup of UNION, in file order; a malformed one is an InputError naming it."""
        folder = self._dir(union) / "fixups"
        out = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            doc = self._read(path)
            try:
                if not isinstance(doc, dict) or not isinstance(doc.get("item"), str) \
                        or not isinstance(doc.get("file"), str) or not doc["file"]:
                    raise ValueError("needs 'item' and 'file' strings")
                conflict = doc.get("conflict")
                if conflict is not None and not isinstance(conflict, str):
                    raise ValueError("'conflict' must be a string")
                out.append(Fixup(doc["item"], doc["file"], _decode(doc.get("base")), _decode(doc.get("result")),
                                 conflict, read_lines(doc, "upstream_removed")))
            except (ValueError, TypeError) as exc:
                raise _corrupt(path, str(exc)) from None
        return sorted(out, key=lambda f: (f.item, f.file))

    def preflight(self) -> None:
        """Refuse before writing anything when store.json is a symlink."""
        refuse_symlink(self.root / "store.json")

    def record(self, union: str, path_in_tree: str, hunk_key: str, hunk: ConflictHunk | None,
               resolution: bytes, entries: list[str], upstream: list[HunkUpstream] | None = None,
               scopes: list[str | None] | None = None, each: list[bytes] | None = None) -> Path:
        """Write the resolution of the hunk HUNK_KEY of PATH_IN_TREE, with UPSTREAM: what is true of upstream's
        lines at each of the file's hunks of that key, in order (union.upstream_hunks), each place named by its
        def/class (SCOPES, in the same order; None: module level) and its n-th hunk of the key there; EACH: the
        resolution of each of those hunks (RESOLUTION: the last one's). Where the key's places, here and in
        other files, were resolved differently, each place keeps its own (helper-174)."""
        doc: dict[str, Any] = {
            "key": hunk_key,
            "file": path_in_tree,
            "entries": entries,
            "ours": hunk.ours.decode("utf-8", "surrogateescape") if hunk else None,
            "theirs": hunk.theirs.decode("utf-8", "surrogateescape") if hunk else None,
            "resolution": resolution.decode("utf-8", "surrogateescape"),
            # how many lines: joined by newlines, no line and one empty line read alike
            "lines": 0 if isinstance(resolution, _NoLines) else resolution.count(b"\n") + 1,
            "git": self.git_version,
            "carrytool": __version__,
        }
        target = self._dir(union) / f"{hunk_key[:16]}.json"
        # upstream's lines the resolution drops and keeps at each place of PATH_IN_TREE with this key (UPSTREAM,
        # in order), beside those recorded at the key's places in other files (helper-166: one key in two
        # places, the last recorded spoke for both): a replay that drops others, or keeps lines upstream no
        # longer has at the hunk, stops the fold (union.upstream_hunks)
        old, named, texts = self._places_at(target, hunk_key)
        places = {place: said for place, said in old.items() if place[0] != path_in_tree}
        places.update({(path_in_tree, n): said for n, said in enumerate(upstream or [])})
        named = {place: name for place, name in named.items() if place[0] != path_in_tree}
        seen: dict[str | None, int] = {}
        for n, scope in enumerate(scopes if upstream and scopes and len(scopes) == len(upstream) else []):
            named[path_in_tree, n] = (scope, seen.get(scope, 0))
            seen[scope] = seen.get(scope, 0) + 1
        texts = {place: text for place, text in texts.items() if place[0] != path_in_tree}
        mine = each if upstream and each and len(each) == len(upstream) else [resolution] * len(upstream or [])
        texts.update({(path_in_tree, n): text for n, text in enumerate(mine)})
        # one resolution for every place: the record's own (each place's only where they differ, so a store
        # whose places agree is written as before)
        differ = len({tuple(_lines_field(text).values()) for place, text in texts.items() if place in places}) > 1
        if places:
            whole = merged_upstream(list(places.values()))
            if whole.removed is not None:
                doc["upstream_removed"] = written_lines(whole.removed)
            if whole.kept is not None:
                doc["upstream_kept"] = written_lines(whole.kept)
            doc["upstream_at"] = [{"file": file, **place_fields(n, named.get((file, n))), **upstream_fields(said),
                                   **(_lines_field(texts[file, n]) if differ else {})}
                                  for (file, n), said in sorted(places.items())]
        text = json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
        write_atomic(target, text.encode())
        self._write_meta()
        return target

    def _places_at(self, target: Path, key: str) -> tuple[dict[tuple[str, int], HunkUpstream],
                                                           dict[tuple[str, int], tuple[str | None, int]],
                                                           dict[tuple[str, int], bytes]]:
        """The places the record TARGET (of KEY) names, the def/class each is in where it says, and the resolution
        of each (its own, or the record's), as `load_upstream` reads them; none when it is absent or unreadable
        (it is written anew) or a record made before places were kept."""
        if target.is_symlink() or not target.is_file():
            return {}, {}, {}
        try:
            doc = json.loads(target.read_text(encoding="utf-8"))
            if not isinstance(doc, dict) or doc.get("key") != key:
                return {}, {}, {}
            places, own = places_of(doc), _resolutions_at(doc)
            whole = _read_resolution(doc) if isinstance(doc.get("resolution"), str) else None
            texts = {place: own.get(place, whole) for place in places if place in own or whole is not None}
            return places, scopes_of(doc), texts
        except (OSError, ValueError):
            return {}, {}, {}

    def record_fixup(self, union: str, fixup: Fixup, *, keep_same: bool = False) -> Path:
        """Write FIXUP (replacing the one of the same item and file); one with no change removes it,
        unless KEEP_SAME (a conflict kept as the fold showed it: the refold must not ask again)."""
        target = self.fixup_path(union, fixup)
        if fixup.base == fixup.result and not keep_same:
            refuse_symlink(target)
            target.unlink(missing_ok=True)
            return target
        doc = {"item": fixup.item, "file": fixup.file, "base": _encode(fixup.base),
               "result": _encode(fixup.result), "git": self.git_version, "carrytool": __version__}
        if fixup.conflict is not None:
            doc["conflict"] = fixup.conflict
        if fixup.upstream is not None:
            doc["upstream_removed"] = written_lines(fixup.upstream)
        write_atomic(target, (json.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode())
        self._write_meta()
        return target

    def _write_meta(self) -> None:
        meta = self.root / "store.json"
        doc = {"store": STORE_VERSION, "git": self.git_version, "carrytool": __version__,
               "key": "sha256 of the two conflict sides, sorted, joined by NUL, without marker labels "
                      "(git merge-tree, conflict style 'merge')"}
        text = json.dumps(doc, indent=2) + "\n"
        refuse_symlink(meta)
        try:
            current = meta.read_text(encoding="utf-8") if meta.exists() else None
        except (OSError, ValueError):
            current = None
        if current != text:
            write_atomic(meta, text.encode())
