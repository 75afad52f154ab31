"""Answers kept on disk by a key that names everything deciding them: one JSON file, read whole, written whole.

The file is `{FIELD: {KEY: answer}}` (after a subclass's MARK, when it has one): read at the first `get`,
written by `save` (a temporary file beside it, then renamed) when this run put answers: this run's first,
then the file's others up to a limit. A file that cannot be read or written only costs the work it would
have saved; an answer that does not have the expected shape is not an answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from carrytool import __version__
from carrytool.gitlayer.jsonread import read_json
from carrytool.pipeline.atomic import write_json_cache

V = TypeVar("V")
PACKAGE = Path(__file__).resolve().parent.parent      # carrytool/


@functools.lru_cache(maxsize=None)
def code_digest(*files: str) -> str | None:
    """A digest of carrytool's source FILES (paths inside the package, e.g. `pipeline/compose.py`): a key
    that holds it names the code that answered, not only the version number, which stays the same from
    one commit to the next. None when a file cannot be read (then nothing is kept)."""
    digest = hashlib.sha1()
    for name in files:
        try:
            digest.update((PACKAGE / name).read_bytes())
        except OSError:
            return None
        digest.update(b"\0")
    return digest.hexdigest()


class KeptAnswers(Generic[V]):
    """Answers by key, in memory and (given FOLDER) in `FOLDER/NAME-git<VERSION>.json` under NAME, at most
    LIMIT of them, for the git VERSION that answered, the RULE and the carrytool source files CODE that
    asked (nothing on disk when one cannot be read). DECODE turns what the file holds into an answer
    (None: not one); ENCODE the other way.

    MARK (a subclass's): a (field, value) pair written first in the file; a file without it holds no answer
    this class reads, and its answers go at the next write (a promise about every answer in the file, such
    as keptyaml's: none holds a credential)."""

    mark: tuple[str, str] | None = None

    def __init__(self, folder: Path | None, name: str, version: Sequence[int], rule: str, code: Sequence[str],
                 limit: int, decode: Callable[[object], V | None], encode: Callable[[V], object]) -> None:
        self.version = ".".join(map(str, version))
        self.rule, self.code = rule, code_digest(*code)
        self.path = folder / f"{name}-git{self.version}.json" if folder is not None and self.code else None
        self._field, self._limit, self._decode, self._encode = name, limit, decode, encode
        self._disk: dict[str, object] | None = None
        self._used: dict[str, V] = {}       # asked or put by this run
        self._new = 0                       # put by this run, not yet saved

    def digest(self, *parts: object) -> str:
        """A key: PARTS (JSON) with the rule, carrytool's version and source, and git's version."""
        what = [self.rule, __version__, self.code, self.version, *parts]
        return hashlib.sha1(json.dumps(what).encode()).hexdigest()

    def get(self, key: str) -> V | None:
        if key in self._used:
            return self._used[key]
        if self._disk is None:
            self._disk = self._read()
        raw = self._disk.get(key)
        found = self._decode(raw) if raw is not None else None
        if found is not None:
            self._used[key] = found
        return found

    def put(self, key: str, value: V) -> None:
        self._used[key] = value
        self._new += 1

    def _read(self) -> dict[str, object]:
        if self.path is None:
            return {}
        try:
            data = read_json(self.path)                   # too large to hold: ValueError (h256)
            found = data[self._field]
            if self.mark is not None and data.get(self.mark[0]) != self.mark[1]:
                return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}
        return found if isinstance(found, dict) else {}

    def save(self) -> None:
        """Write this run's answers and the file's others (up to the limit); nothing when it put none.
        Never raises for a folder it cannot write."""
        if self.path is None or not self._new:
            return
        out: dict[str, object] = {key: self._encode(value) for key, value in self._used.items()}
        for key, raw in (self._disk if self._disk is not None else self._read()).items():
            if len(out) >= self._limit:
                break
            out.setdefault(key, raw)
        path = self.path
        data = {self.mark[0]: self.mark[1], self._field: out} if self.mark is not None else {self._field: out}
        if write_json_cache(path.parent, f".{self._field}", data, lambda _tmp: path):
            self._new = 0
