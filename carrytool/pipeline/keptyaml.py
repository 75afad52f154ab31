"""Manifests parsed before, kept by their text: the next sync of the same manifest reads its YAML without
importing PyYAML or parsing it again (a warm sync of the synthetic workload's 300 entries: 29-38 ms less CPU,
on the path that starts every run).

What `manifest.yamlload.load_yaml` gives for a text follows from nothing but the text, the carrytool code that
parses it (a digest of its source, CODE) and PyYAML's own (its files' sizes and times, found without importing
it: `_pyyaml`). Only a document that parsed, whose top is a mapping and whose values are JSON's own (text,
finite numbers, booleans, null) is kept, with every line and raw text the parse recorded (YMap, YList), and
read back into new objects each time: a caller may change what it was given. A manifest with an error is
parsed every time, so the error always quotes the parser's words.

One JSON file per git version beside the other kept answers (`<git dir>/carrytool/cache/yaml-git<X.Y.Z>.json`,
`{"credentials": "never kept", "yaml": {KEY: document}}`: no document holding a credential in a URL is kept, and a
file without that mark, an earlier carrytool's, is read as empty), written by sync (not `--dry-run`); every other
command parses the manifest.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from carrytool.manifest.ynodes import YList, YMap
from carrytool.pipeline.kept import KeptAnswers

LIMIT = 20              # manifests a file keeps (a fork's one, a few of its branches' or its tests')
RULE = "yaml-1"         # bump when what a document is kept as changes
CODE = ("manifest/yamlload.py", "manifest/yamlparse.py", "manifest/ynodes.py", "pipeline/keptyaml.py")
_PYYAML_FILES = ("__init__.py", "constructor.py", "resolver.py", "scanner.py", "parser.py", "composer.py",
                 "reader.py", "cyaml.py")


def _pyyaml() -> list[object] | None:
    """PyYAML's files as found on the import path (names, sizes, modification times), without importing it;
    None when it cannot be told (then nothing is kept)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("yaml")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent
    out: list[object] = [str(folder)]
    try:
        for name in _PYYAML_FILES:
            st = (folder / name).stat()
            out += [name, st.st_size, st.st_mtime_ns]
        out += sorted(p.name for p in folder.glob("_yaml*"))       # libyaml's loader, when PyYAML has it
    except OSError:
        return None
    return out


class KeptYaml(KeptAnswers[dict]):
    """Parsed manifests by their text, in memory and (given FOLDER) on disk for git VERSION (a
    `manifest.yamlload.Keeper`)."""

    # every document in a file with this mark was kept by a carrytool that keeps none holding a credential: a file
    # without it (an earlier carrytool's) is read as empty and rewritten whole at the next write
    mark = ("credentials", "never kept")

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "yaml", version, RULE, CODE, LIMIT,
                         lambda raw: raw if isinstance(raw, dict) else None, lambda found: found)
        self._pyyaml: list[object] | None | bool = False

    def _key(self, text: str) -> str | None:
        if self._pyyaml is False:
            self._pyyaml = _pyyaml()
        if self._pyyaml is None or self.path is None:
            return None
        return self.digest(hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), self._pyyaml)

    def find(self, text: str) -> YMap | None:
        """What parsing TEXT gave before (new objects), or None."""
        key = self._key(text)
        found = self.get(key) if key is not None else None
        return decode(found) if found is not None else None

    def keep(self, text: str, value: object) -> None:
        """Keep VALUE, what parsing TEXT gave, when it can be kept (see the module's docstring). Never a document
        that holds a credential in a URL (`_credential`, read in what would be written: a YAML escape, `\x40` for
        `@`, spells one the text hides): the token stays where the user put it, not copied into the git dir, where
        it would outlive its removal from the manifest."""
        key = self._key(text)
        encoded = encode(value) if key is not None and isinstance(value, YMap) else None
        if key is not None and encoded is not None and not _credential(json.dumps(encoded)):
            self.put(key, encoded)

    def save(self) -> None:
        """KeptAnswers.save; and, when it wrote the file, the files of other git versions beside it that lack the
        mark go (an earlier carrytool's, which may hold a credential; after a git upgrade nothing rewrites them).
        A run under another git parses its manifest again once."""
        wrote = self.path is not None and self._new > 0
        super().save()
        if not wrote or self._new or self.path is None:
            return
        marked = json.dumps(dict([self.mark]), separators=(",", ":"))[:-1].encode()
        for other in self.path.parent.glob("yaml-git*.json"):
            if other != self.path:
                try:
                    with other.open("rb") as handle:
                        if not handle.read(len(marked)).startswith(marked):
                            other.unlink()
                except OSError:
                    pass


def _credential(text: str) -> bool:
    """Whether TEXT holds a credential in a URL (a user part over http(s), a password, a secret query
    parameter): what gitlayer.urls.redact hides in messages."""
    from carrytool.gitlayer.urls import redact

    return redact(text) != text


class _Unkept(Exception):
    """A value JSON would not give back as it was."""


def encode(value: object) -> Any:
    """VALUE (YMap, YList, scalars) as JSON, with its lines and raw texts; None when it cannot be kept."""
    try:
        return _encode(value)
    except (_Unkept, RecursionError):
        return None


def _encode(value: object) -> Any:
    if isinstance(value, YMap):
        # a key's raw text: its scalar value's, None for a mapping or sequence (which has none)
        return {"m": [[k, _encode(v), value.key_lines[k], value.raw.get(k)] for k, v in value.items()],
                "l": value.line}
    if isinstance(value, YList):
        return {"s": [_encode(v) for v in value], "l": value.line, "i": list(value.item_lines),
                "r": list(value.raw)}
    if value is None or type(value) in (str, bool, int):
        return value
    if type(value) is float and math.isfinite(value):
        return value
    raise _Unkept


def decode(raw: object) -> YMap | None:
    """A kept document (`encode`) as new YMap, YList and scalars; None when RAW is not one."""
    try:
        value = _decode(raw)
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, YMap) else None


def _decode(raw: object) -> Any:
    if isinstance(raw, dict):
        if "m" in raw:
            out = YMap()
            out.line = _int(raw["l"])
            out.key_lines, out.raw = {}, {}
            for key, item, line, text in raw["m"]:
                if not isinstance(key, str) or key in out:
                    raise ValueError(key)
                out[key] = _decode(item)
                out.key_lines[key] = _int(line)
                if text is not None:
                    out.raw[key] = _str(text)
            return out
        items = [_decode(item) for item in raw["s"]]
        seq = YList(items)
        seq.line = _int(raw["l"])
        seq.item_lines = [_int(n) for n in raw["i"]]
        seq.raw = [None if t is None else _str(t) for t in raw["r"]]
        if not len(seq.item_lines) == len(seq.raw) == len(seq):
            raise ValueError("lengths")
        return seq
    if raw is None or type(raw) in (str, bool, int, float):
        return raw
    raise TypeError(type(raw))


def _int(raw: object) -> int:
    if type(raw) is not int:
        raise TypeError(type(raw))
    return raw


def _str(raw: object) -> str:
    if not isinstance(raw, str):
        raise TypeError(type(raw))
    return raw
