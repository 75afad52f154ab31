"""One file of the tree as the engine sees it: bytes, text, lines and, for Python, its AST (parsed once)."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar, cast

T = TypeVar("T")

_NEWLINES = re.compile(r"\r\n|\r")
RUNNING = f"Python {sys.version_info.major}.{sys.version_info.minor}"
# grammar a failing line may hold that a newer Python parses: (pattern, what it is, the first Python with it)
_NEWER = ((re.compile(r"\s*type\s+\w+\s*(\[.*\])?\s*="), "a `type` statement", (3, 12)),
          (re.compile(r"\s*(async\s+)?def\s+\w+\s*\["), "PEP 695 type parameters", (3, 12)),
          (re.compile(r"\s*class\s+\w+\s*\["), "PEP 695 type parameters", (3, 12)),
          (re.compile(r"\s*except\s*\*"), "`except*`", (3, 11)))


class SourceFile:
    """A file's content with lazily derived views; every view is computed at most once.

    Python and text checks on the same file share one instance, so `evaluate_all` parses each file once
    and derived indexes (definitions, calls per scope) are built once per file.
    """

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self._memo: dict[object, object] = {}

    @cached_property
    def text(self) -> str:
        """The content decoded as Python would (coding cookie, BOM, else UTF-8), newlines as `\\n`.

        Undecodable bytes become U+FFFD, so text checks still see every valid part of a binary-ish file.
        """
        return _NEWLINES.sub("\n", _decode(self.data))

    @cached_property
    def lines(self) -> list[str]:
        """The text's lines, numbered as `ast` numbers them (index 0 is line 1)."""
        return self.text.split("\n")

    @cached_property
    def _parsed(self) -> tuple[ast.Module | None, str | None]:
        undecodable = self._undecodable()
        if undecodable:
            return None, undecodable
        try:
            # Parsing the bytes (not our lenient decode) keeps Python's own rules for encodings.
            return ast.parse(self.data, filename=self.path), None
        except SyntaxError as exc:
            where = f"{self.path}:{exc.lineno}" if exc.lineno else self.path
            return None, f"{where}: syntax error: {exc.msg} ({self._grammar(exc.lineno)})"
        except (ValueError, RecursionError, MemoryError) as exc:
            # Null bytes (ValueError before Python 3.12) and absurd nesting are not Python either.
            return None, f"{self.path}: cannot parse as Python: {exc}"

    def _grammar(self, line: int | None) -> str:
        """Name the Python that refused the file: the project may need a newer one (helper-123: jax's PEP 695
        `def jit[**P, R](...)` was "a syntax error" to carrytool on Python 3.11, and bisect blamed an entry)."""
        newer = next(((what, f"Python {since[0]}.{since[1]}") for pattern, what, since in _NEWER
                      if since > sys.version_info[:2] and pattern.match(self.line_text(line or 0))), None)
        said = f"the line holds {newer[0]}, new in {newer[1]}: " if newer else ""
        return (f"{said}the file does not parse with {RUNNING}, the Python carrytool runs on; if the project "
                "needs a newer Python, run carrytool with it")

    def _undecodable(self) -> str | None:
        """Say where the bytes stop being text in the source's encoding (the same for every Python)."""
        encoding = _encoding(self.data)
        try:
            self.data.decode(encoding)
        except UnicodeDecodeError as exc:
            line = self.data.count(b"\n", 0, exc.start) + 1
            return (f"{self.path}:{line}: cannot parse as Python: byte {self.data[exc.start]:#04x} "
                    f"is not valid {encoding}")
        except LookupError:
            pass  # an unknown coding cookie: ast.parse says so as a syntax error
        return None

    @property
    def tree(self) -> ast.Module | None:
        """The module's AST, or None when the file is not valid Python (see `parse_error`)."""
        return self._parsed[0]

    @property
    def parse_error(self) -> str | None:
        """Why the file does not parse, as a complete message, or None."""
        return self._parsed[1]

    def at(self, line: int | None) -> str:
        """Return `path:line`, the way messages point into this file (by its path in the tree: `mypy/build.py`
        and `mypyc/build.py` are different files)."""
        return f"{self.path}:{line}" if line else self.path

    def line_text(self, line: int) -> str:
        """Return the text of line `line` (1-based), or "" past the end."""
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def memo(self, key: object, build: Callable[[], T]) -> T:
        """Return the value cached under `key`, building it on first use (keys hold node ids)."""
        if key not in self._memo:
            self._memo[key] = build()
        return cast(T, self._memo[key])


def _encoding(data: bytes) -> str:
    """Return the encoding Python reads `data` with: its coding cookie or BOM, else UTF-8."""
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return "utf-8"  # a bogus coding cookie: fall back rather than refuse a text check


def _decode(data: bytes) -> str:
    try:
        return data.decode(_encoding(data), errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")
