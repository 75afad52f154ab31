"""The store of a union's hunk resolutions and fixups (union.resolutions): a directory of small JSON files
next to the manifest (`carries/resolutions/<union>/`, fixups under `fixups/`), committed with it. Each hunk
record also says what was true of upstream's lines at each place of its key (union.recorded_upstream)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from carrytool import __version__
from carrytool.errors import InputError
from carrytool.gitlayer.jsonread import read_json
from carrytool.manifest.safefile import refuse_symlink, write_atomic
from carrytool.union.recorded_upstream import (
    Context,
    HunkUpstream,
    RecordedUpstream,
    contexts_of,
    merged_upstream,
    place_fields,
    places_of,
    read_lines,
    scopes_of,
    upstream_fields,
    upstream_of_doc,
    written_lines,
)
from carrytool.union.resolutions import ConflictHunk, Fixup, lines_field, read_resolution

_KEY = re.compile(r"^[0-9a-f]{64}$")
# The record format this carrytool reads and writes (`store.json`'s `store`): raised when a record holds what an
# older carrytool that reads the version would replay wrongly, which then refuses the store (`_version`). Per-place
# resolutions (`upstream_at[*].resolution`, helper-174) are version 1: stores holding them were written as 1
# before the version was read, and every carrytool that reads it knows them (a carrytool from before them reads
# no version, so no number could stop it). So are the lines around each place (`upstream_at[*].before`/`after`,
# h191): a carrytool that does not know them names places as it always did, by def/class and n-th hunk there,
# as in a record without them; they add a check it does not make, and hold nothing it would replay otherwise.
STORE_VERSION = 1
FILE_MODES = ("100644", "100755", "120000")


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


def _resolutions_at(doc: dict[str, Any]) -> dict[tuple[str, int], bytes]:
    """(file, n) -> the resolution of each place of DOC's `upstream_at` that has its own (the key's places were
    resolved differently: helper-174); ValueError when malformed."""
    out = {}
    for place in doc.get("upstream_at") or []:
        if isinstance(place, dict) and "resolution" in place:
            if "lines" not in place:
                raise ValueError("an 'upstream_at' place's 'resolution' needs its 'lines'")
            out[place["file"], place["hunk"]] = read_resolution(place)
    return out


def _version(meta: Path) -> int | None:
    """The store version META (store.json) says; None when there is none (a store made by hand, or one being
    made); an InputError naming it when it is not an object with a positive integer `store`, or says a version
    newer than STORE_VERSION: records this carrytool would replay wrongly (h187)."""
    if meta.is_symlink() or not meta.exists():      # a link is refused before anything is written (preflight)
        return None
    try:
        doc = read_json(meta)
    except (OSError, ValueError) as exc:
        doc, why = None, f"unreadable JSON: {exc}"
    else:
        why = "needs an object with a positive integer 'store', the store's version"
    version = doc.get("store") if isinstance(doc, dict) else None
    if type(version) is not int or version < 1:
        raise InputError(f"not a valid resolution store version file ({why})", where=str(meta),
                         hint=f"restore it from version control (git checkout -- {meta}); if no version of it "
                              "was ever committed, delete it: carrytool writes it again")
    if version > STORE_VERSION:
        wrote = doc.get("carrytool")            # type: ignore[union-attr]
        by = f"carrytool {wrote}" if isinstance(wrote, str) else "a newer carrytool"
        raise InputError(f"the resolution store was written by {by}: store version {version}, "
                         f"this carrytool ({__version__}) reads version {STORE_VERSION} and older; its records "
                         "may hold what this one would replay wrongly (a resolution at the wrong place), so it "
                         "neither reads nor writes them", where=str(meta),
                         hint=f"upgrade carrytool to {wrote if isinstance(wrote, str) else 'the newest'} or later "
                              "(pipx upgrade carrytool), then run this command again")
    return version


class Store:
    """`<manifest dir>/resolutions/<union>/`: one JSON record per conflict hunk, fixups/, and store.json."""

    def __init__(self, root: Path, git_version: str) -> None:
        self.root = root
        self.git_version = git_version
        self._readable = False          # store.json's version was read and is one this carrytool knows

    def _dir(self, union: str) -> Path:
        """UNION's folder, once store.json says a version this carrytool reads (every read and write asks)."""
        if not self._readable:
            _version(self.root / "store.json")
            self._readable = True
        return self.root / union

    def _read(self, path: Path) -> Any:
        if path.is_symlink():
            raise _corrupt(path, "a symlink")
        try:
            return read_json(path)
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
                records[doc["key"]] = read_resolution(doc)
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
                                                   _resolutions_at(doc), contexts_of(doc))
            except ValueError as exc:
                raise _corrupt(path, str(exc)) from None
        return out

    def where(self, union: str, keys: set[str]) -> list[tuple[str, list[str]]]:
        """(file, entries) of each record of UNION whose key is one of KEYS, sorted: what a resolution
        resolved, to name it (helper-88: "3 recorded resolution(s) were not needed", no more)."""
        return sorted((whole[0], whole[1]) for whole, _places in self._described(union, keys))

    def described(self, union: str, keys: set[str]) -> list[tuple[str, list[str], str, int]]:
        """(file, entries, resolution, its number of lines) of each record of UNION whose key is one of KEYS,
        in key order; of each place of it, in order, where its places were resolved differently."""
        return [said for whole, places in self._described(union, keys) for said in places or [whole]]

    def _described(self, union: str, keys: set[str]
                   ) -> list[tuple[tuple[str, list[str], str, int], list[tuple[str, list[str], str, int]]]]:
        """`described`, record by record: the record (its file: the last recorded), and each place with its own
        resolution."""
        out = []
        folder = self._dir(union)
        for path in sorted(folder.glob("*.json")) if keys and folder.is_dir() else []:
            doc = self._read(path)
            if isinstance(doc, dict) and doc.get("key") in keys:
                entries = [str(e) for e in doc["entries"]] if isinstance(doc.get("entries"), list) else []
                places = [at for at in doc.get("upstream_at") or [] if isinstance(at, dict) and "resolution" in at]
                said = []
                for one in [doc, *places]:
                    text = str(one.get("resolution", ""))
                    lines = one.get("lines") if type(one.get("lines")) is int else text.count("\n") + 1
                    said.append((str(one.get("file") or "?"), entries, text, lines))
                out.append((said[0], said[1:]))
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
        """Refuse before writing anything when store.json is a symlink, unreadable, or of a newer store version."""
        refuse_symlink(self.root / "store.json")
        _version(self.root / "store.json")

    def record(self, union: str, path_in_tree: str, hunk_key: str, hunk: ConflictHunk | None,
               resolution: bytes, entries: list[str], upstream: list[HunkUpstream] | None = None,
               scopes: list[str | None] | None = None, each: list[bytes] | None = None,
               contexts: list[Context | None] | None = None) -> Path:
        """Write the resolution of the hunk HUNK_KEY of PATH_IN_TREE, with UPSTREAM: what is true of upstream's
        lines at each of the file's hunks of that key, in order (union.upstream_hunks), each place named by its
        def/class (SCOPES, in the same order; None: module level) and its n-th hunk of the key there; EACH: the
        resolution of each of those hunks (RESOLUTION: the last one's); CONTEXTS: the lines around each, by which
        a refold knows the place (h185's trial). Where the key's places, here and in other files, were resolved
        differently, each place keeps its own (helper-174)."""
        doc: dict[str, Any] = {
            "key": hunk_key,
            "file": path_in_tree,
            "entries": entries,
            "ours": hunk.ours.decode("utf-8", "surrogateescape") if hunk else None,
            "theirs": hunk.theirs.decode("utf-8", "surrogateescape") if hunk else None,
            # and how many lines: joined by newlines, no line and one empty line read alike
            **lines_field(resolution),
            "git": self.git_version,
            "carrytool": __version__,
        }
        target = self._dir(union) / f"{hunk_key[:16]}.json"
        # upstream's lines the resolution drops and keeps at each place of PATH_IN_TREE with this key (UPSTREAM,
        # in order), beside those recorded at the key's places in other files (helper-166: one key in two
        # places, the last recorded spoke for both): a replay that drops others, or keeps lines upstream no
        # longer has at the hunk, stops the fold (union.upstream_hunks)
        old, named, texts, around = self._places_at(target, hunk_key)
        places = {place: said for place, said in old.items() if place[0] != path_in_tree}
        places.update({(path_in_tree, n): said for n, said in enumerate(upstream or [])})
        named = {place: name for place, name in named.items() if place[0] != path_in_tree}
        seen: dict[str | None, int] = {}
        for n, scope in enumerate(scopes if upstream and scopes and len(scopes) == len(upstream) else []):
            named[path_in_tree, n] = (scope, seen.get(scope, 0))
            seen[scope] = seen.get(scope, 0) + 1
        texts = {place: text for place, text in texts.items() if place[0] != path_in_tree}
        around = {place: lines for place, lines in around.items() if place[0] != path_in_tree}
        if upstream and contexts and len(contexts) == len(upstream) and None not in contexts:
            around.update({(path_in_tree, n): lines for n, lines in enumerate(contexts) if lines is not None})
        mine = each if upstream and each and len(each) == len(upstream) else [resolution] * len(upstream or [])
        texts.update({(path_in_tree, n): text for n, text in enumerate(mine)})
        # one resolution for every place: the record's own (each place's only where they differ, so a store
        # whose places agree is written as before)
        differ = len({tuple(lines_field(text).values()) for place, text in texts.items() if place in places}) > 1
        if places:
            whole = merged_upstream(list(places.values()))
            if whole.removed is not None:
                doc["upstream_removed"] = written_lines(whole.removed)
            if whole.kept is not None:
                doc["upstream_kept"] = written_lines(whole.kept)
            doc["upstream_at"] = [{"file": file, **place_fields(n, named.get((file, n)), around.get((file, n))),
                                   **upstream_fields(said),
                                   **(lines_field(texts[file, n]) if differ else {})}
                                  for (file, n), said in sorted(places.items())]
        text = json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
        write_atomic(target, text.encode())
        self._write_meta()
        return target

    def _places_at(self, target: Path, key: str) -> tuple[dict[tuple[str, int], HunkUpstream],
                                                           dict[tuple[str, int], tuple[str | None, int]],
                                                           dict[tuple[str, int], bytes],
                                                           dict[tuple[str, int], Context]]:
        """The places the record TARGET (of KEY) names, the def/class each is in where it says, the resolution
        of each (its own, or the record's) and the lines around each where it keeps them, as `load_upstream`
        reads them; none when it is absent or unreadable (it is written anew) or a record made before places
        were kept."""
        if target.is_symlink() or not target.is_file():
            return {}, {}, {}, {}
        try:
            doc = read_json(target)
            if not isinstance(doc, dict) or doc.get("key") != key:
                return {}, {}, {}, {}
            places, own = places_of(doc), _resolutions_at(doc)
            whole = read_resolution(doc) if isinstance(doc.get("resolution"), str) else None
            texts = {place: own.get(place, whole) for place in places if place in own or whole is not None}
            return places, scopes_of(doc), texts, contexts_of(doc)
        except (OSError, ValueError):
            return {}, {}, {}, {}

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
        _version(meta)              # never lowered: a newer store's version is refused, not rewritten
        try:
            current = meta.read_text(encoding="utf-8") if meta.exists() else None
        except (OSError, ValueError):
            current = None
        if current != text:
            write_atomic(meta, text.encode())
