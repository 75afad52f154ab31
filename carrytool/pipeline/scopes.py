"""Which function or class a line of Python sits in: qualified names (`Worker.wake_up`) from the AST."""

from __future__ import annotations

import ast
import bisect
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")   # where statements nest, in source order


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and except/case clauses) directly inside NODE: a def or class is always one."""
    out: list[ast.AST] = []
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if isinstance(block, list):
            out += block
    return out


@lru_cache(maxsize=256)
def _spans(source: bytes) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, qualified name) of every def/class, outermost first; () when unparsable."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    out: list[tuple[int, int, str]] = []
    # Iterative pre-order walk: a 1,500-branch `elif` chain nests 1,500 deep and must not exhaust the stack.
    stack: list[tuple[ast.AST, str]] = [(child, "") for child in reversed(_statements(tree))]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, _DEFS):
            inner = f"{prefix}{node.name}"
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first, node.end_lineno or node.lineno, inner))
            inner += "."
        stack += [(child, inner) for child in reversed(_statements(node))]
    return tuple(out)


Spans = tuple[tuple[int, int, str], ...]
_MAX_LINE = 1 << 62


class SpanCache:
    """def/class spans of Python blobs by blob SHA: each distinct blob is parsed once.

    In memory, and (given FOLDER, e.g. `<git dir>/carrytool/cache`) on disk: a blob never changes, so
    its spans are valid forever. Files are keyed by Python's minor version too (its grammar decides
    what parses), written whole or not at all; a cache that cannot be read or written is only slower.
    """

    def __init__(self, folder: Path | None = None) -> None:
        tag = f"scopes-py{sys.version_info[0]}.{sys.version_info[1]}"
        self.folder = folder / tag if folder is not None else None
        self._memory: dict[str, Spans] = {}
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
            self._store(oid, found)
        self._memory[oid] = found
        return found

    def _path(self, oid: str) -> Path | None:
        return self.folder / oid[:2] / f"{oid[2:]}.json" if self.folder is not None else None

    def _load(self, oid: str) -> Spans | None:
        path = self._path(oid)
        if path is None:
            return None
        try:
            return tuple((int(a), int(b), str(c)) for a, b, c in json.loads(path.read_bytes()))
        except (OSError, ValueError, TypeError):
            return None

    def _store(self, oid: str, spans: Spans) -> None:
        path = self._path(oid)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump([list(span) for span in spans], handle)
            os.replace(name, path)
        except OSError:
            pass


def scope_in(spans: Spans, line: int) -> str | None:
    """The innermost of SPANS containing LINE (1-based), or None at module level (as `scope_at`).

    SPANS come outermost first in source order, so their first lines never decrease and spans nest:
    the innermost span containing LINE is the last one starting at or before it that contains it,
    found by bisection and a short walk back over earlier siblings that ended before LINE.
    """
    k = bisect.bisect_right(spans, (line, _MAX_LINE, "\U0010ffff")) - 1
    while k >= 0:
        first, last, name = spans[k]
        if first <= line <= last:
            return name
        k -= 1
    return None


def scope_at(source: bytes, line: int) -> str | None:
    """The innermost def/class containing LINE (1-based), or None at module level."""
    best = None
    for first, last, name in _spans(source):
        if first <= line <= last:
            best = name
    return best


def scopes_in(source: bytes, first: int, last: int) -> set[str]:
    """Innermost scopes touched by lines FIRST..LAST; a pure insertion between lines uses FIRST."""
    found = set()
    for line in range(first, max(first, last) + 1):
        scope = scope_at(source, line)
        if scope:
            found.add(scope)
    return found


def is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def scope_names(path: str, source: bytes | None, lines: Iterable[tuple[int, int]]) -> list[str]:
    """Sorted scopes of PATH touched by the (first, last) line ranges; [] for non-Python files."""
    if source is None or not is_python(path):
        return []
    found: set[str] = set()
    for first, last in lines:
        found |= scopes_in(source, first, last)
    return sorted(found)
