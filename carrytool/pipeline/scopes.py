"""Which function or class a line of Python sits in: qualified names (`Worker.wake_up`) from the AST.

A file's spans come from its pieces (pipeline.pyparts: module statements, long classes' bodies), each
distinct piece parsed once per process and its spans kept relative to it, so the versions of a 10,000-line
module that PRs change in a few places cost the parse of those places; the result is exactly one whole
`ast.parse`'s (tests/pipeline/test_scopes_pieces.py). `SpanCache` (pipeline.spancache) keeps each blob's
spans, on disk too.
"""

from __future__ import annotations

import ast
import bisect
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change
from carrytool.pipeline import pyparts, pystrings
from carrytool.pipeline.hunks import Hunk

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")   # where statements nest, in source order


_BLOCKS_OF: dict[type, tuple[str, ...]] = {}     # a node type -> those of _BLOCKS it has (most: none)


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and except/case clauses) directly inside NODE: a def or class is always one."""
    kind = type(node)
    names = _BLOCKS_OF.get(kind)
    if names is None:
        names = _BLOCKS_OF[kind] = tuple(name for name in _BLOCKS if name in kind._fields)
    out: list[ast.AST] = []
    for name in names:
        block = getattr(node, name, None)
        if isinstance(block, list):
            out += block
    return out


Spans = tuple[tuple[int, int, str], ...]
_Text = Callable[[pyparts.Piece], bytes]     # what a piece is parsed as (pyparts.piece_source)
_PIECES_MAX = 32 << 20    # bytes of pieces' text kept with their spans, then the memos restart
# a piece's text -> its spans (lines relative to the piece, names to its enclosing classes) and the last
# line of its last statement (None: it has none); None: it does not parse on its own
_bodies: dict[bytes, tuple[Spans, int | None] | None] = {}
_headers: dict[bytes, tuple[int, str] | None] = {}      # a long class's header -> its first line and name
stats: Counter = Counter()      # whole parses and pieces parsed (and the bytes of the memos), for tests


class _Unparsable(Exception):
    """A piece does not parse on its own: its class, or the whole file, is parsed instead."""


@lru_cache(maxsize=256)
def _spans(source: bytes) -> Spans:
    """(first line, last line, qualified name) of every def/class, outermost first; () when unparsable.

    Exactly what one `ast.parse` of SOURCE says, found from its pieces (pipeline.pyparts) when they all
    parse: each distinct piece is parsed once per process, so versions of a large file that differ in a
    few hunks cost the parse of those hunks' pieces. Otherwise (a guard, a piece that does not parse on
    its own) the whole file is parsed.
    """
    lines = source.splitlines(keepends=True)   # at "\n" and "\r\n" as the pieces' lines: a lone "\r" (where
    pieces, text = pyparts.plan_sources(lines, source)  # they would differ) sends the file to the whole parse
    if pieces is not None:
        out: list[tuple[int, int, str]] = []
        try:
            _add_pieces(text, pieces, "", out)
            return tuple(out)
        except _Unparsable:
            pass
    return _whole_spans(source)


def scope_of_line(source: bytes, line: int) -> str | None:
    """The innermost def/class containing LINE (1-based) of SOURCE, or None at module level: scope_at's
    answer, from only the pieces around LINE (the module statement or long class holding it, the body
    piece within) instead of every piece of the file. Hunks touch a few places of a large module: on
    real PRs 4 to 6% of the pieces of the files they change hold a line they change.

    Exactly scope_at's answer for a file that parses. The pieces are cut outside the file's strings: where
    the quick scan of the triple quotes may pair them wrongly (a string might hold text that looks like
    code: `_plain_strings`), or the file has a formatted string (from Python 3.12 its fields may hold
    quotes and line ends), the strings come from a scan of strings and comments as the tokenizer reads
    them (pystrings.strings_exactly). Where that scan is unsure, or the pieces around LINE do not parse
    alone, every piece (or the whole file) decides, as for scope_at. For a file that does not parse as a
    whole (a syntax error elsewhere, a newer grammar), a line whose own pieces parse still gets their
    scope, where scope_at gives none."""
    lazy = _lazy(source)
    if lazy is not None:
        try:
            return lazy.scope(lazy.pieces, "", line)
        except _Unparsable:
            pass
    return scope_in(_spans(source), line)


@lru_cache(maxsize=16)       # the lines of one blob are asked together
def _lazy(source: bytes) -> _Lazy | None:
    quoted: pystrings.Quoted | None = None
    if not (_NESTED_QUOTES and pystrings.any_formatted(source)):
        quoted = list(pystrings.triple_quoted(source))    # one scan of the quotes, for the guard and the pieces
        if not _plain_strings(source, quoted):
            quoted = None
    if quoted is None:                  # where that scan may err: the tokenizer's strings (~8x slower)
        quoted = pystrings.strings_exactly(source, _NESTED_QUOTES)
        if quoted is None:
            return None
    pieces, text = pyparts.plan_sources(source.splitlines(keepends=True), source, quoted)
    return None if pieces is None else _Lazy(pieces, text)


def _plain_strings(text: bytes, quoted: pystrings.Quoted | None = None) -> bool:
    """Whether TEXT's triple-quoted strings are surely where pystrings' scan of the quotes pairs them: each
    opens in code (_in_code: what precedes it on its line, from the line's start or the previous string's
    end, closes every string it opens and starts no comment; a line that continues another after a
    backslash may begin inside a string: not surely code), and closes at the first same quotes after it,
    with no backslash before them. pyparts cuts a file anywhere outside those strings: a wrong pairing can
    make a string's text a piece, which may parse alone. (Whole-file scopes need no such care: every piece
    must parse there, and such a piece's neighbours do not.)"""
    after = 0                          # the end of the previous string's closing quotes
    for start, end, quote, passed in (pystrings.triple_quoted(text) if quoted is None else quoted):
        if end < 0 or passed:
            return False
        newline = text.rfind(b"\n", after, start)      # (not back to the line's start again: one long line)
        if newline < 0 and after:      # on the line the previous string closes on: code since its end
            line_start = after
        else:
            line_start = newline + 1
            last = line_start - 2 - (text[line_start - 2:line_start - 1] == b"\r")   # the line before: its end
            if last >= 0 and text[last] == ord("\\"):
                return False
        if not _in_code(text, line_start, start):
            return False
        after = end + 3
    return True


# From Python 3.12 a replacement field of an f-string (a t-string too, 3.14) may hold the string's own
# quotes, comments and line ends (PEP 701): a file with a formatted string takes the tokenizer's strings
# (pystrings.strings_exactly), not the scan of the triple quotes, which knows nothing of fields
_NESTED_QUOTES = sys.version_info >= (3, 12)


def _in_code(text: bytes, at: int, end: int) -> bool:
    """Whether offset END of TEXT is in code, given that AT (before it, on the same line) is: between them
    every one-line string closes, and no comment and no triple quote start (a triple quote there is one
    the scan did not pair): pystrings' tokens of strings and comments, read up to END. Up to Python 3.11 a
    formatted string ends as any other does."""
    pos = at
    while (found := pystrings.TOKENS.search(text, pos, end)) is not None:
        start, pos = found.span()
        if text[start] == 35 or pos - start == 1 or pystrings.opens_three(text, start):
            return False
    return True


class _Lazy:
    """One file's pieces, and what scope_of_line parsed of them, by piece: each piece's text is sliced and
    looked up once (a hunk of many lines in one large piece costs one lookup, not one per line)."""

    def __init__(self, pieces: list[pyparts.Piece], text: _Text) -> None:
        self.pieces, self.text = pieces, text
        self._spans: dict[int, tuple[Spans, int | None] | None] = {}
        self._headers: dict[int, tuple[int, str] | None] = {}
        self._whole: dict[int, pyparts.Piece] = {}     # a long class as one piece (kept: its id is a key)

    def body(self, piece: pyparts.Piece) -> tuple[Spans, int | None]:
        return self._memo(self._spans, _body_spans, piece)

    def header(self, piece: pyparts.Piece) -> tuple[int, str]:
        return self._memo(self._headers, _header, piece)

    def _memo(self, memo: dict[int, Any], find: Callable[[_Text, pyparts.Piece], Any], piece: pyparts.Piece) -> Any:
        """FIND(text, PIECE), asked once per piece (a piece that does not parse alone is remembered too)."""
        found = memo.get(id(piece), False)
        if found is False:
            try:
                found = find(self.text, piece)
            except _Unparsable:
                found = None
            memo[id(piece)] = found
        if found is None:
            raise _Unparsable(piece.start)
        return found

    def whole(self, piece: pyparts.Piece) -> pyparts.Piece:
        found = self._whole.get(id(piece))
        if found is None:
            found = self._whole[id(piece)] = pyparts.whole_class(piece)
        return found

    def scope(self, pieces: Sequence[pyparts.Piece], prefix: str, line: int) -> str | None:
        """LINE's scope within PIECES (names under PREFIX), as _add_pieces would find it."""
        piece = _piece_at(pieces, line)
        if piece is None:
            return None
        if piece.header:
            try:
                return self.scope_in_class(piece, prefix, line)
            except _Unparsable:
                piece = self.whole(piece)               # as _add_pieces does: the class as one piece
        spans, _last = self.body(piece)
        name = scope_in(spans, line - piece.start)
        return prefix + name if name is not None else None

    def scope_in_class(self, piece: pyparts.Piece, prefix: str, line: int) -> str | None:
        """LINE's scope within the long class PIECE heads: in its body's pieces, else the class itself when
        LINE is within its span (from its first decorator to the end of its last statement: _add_class)."""
        first, name = self.header(piece)
        inner = self.scope(piece.children, f"{prefix}{name}.", line)
        if inner is not None:
            return inner
        if line < first + piece.start:
            return None
        for child in reversed(piece.children):           # the class ends with its last statement
            last = self.last_line(child)
            if last is not None:
                return prefix + name if line <= last else None
        raise _Unparsable(name)

    def last_line(self, piece: pyparts.Piece) -> int | None:
        """The last line of PIECE's last statement (absolute), None when it has none: what _add_pieces finds
        for it (a long class: from its body's pieces, or from the class as one piece when they do not parse)."""
        if piece.header:
            try:
                self.header(piece)
                for child in reversed(piece.children):
                    last = self.last_line(child)
                    if last is not None:
                        return last
                raise _Unparsable(piece.start)
            except _Unparsable:
                piece = self.whole(piece)
        _spans_of, last = self.body(piece)
        return last + piece.start if last is not None else None


def _piece_at(pieces: Sequence[pyparts.Piece], line: int) -> pyparts.Piece | None:
    """The piece of PIECES (in source order) whose lines hold LINE (1-based), a long class's body included."""
    k = bisect.bisect_right(pieces, line - 1, key=lambda p: p.start) - 1
    if k < 0:
        return None
    piece = pieces[k]
    return piece if line <= pyparts.extent(piece) else None


def _whole_spans(source: bytes) -> Spans:
    stats["whole"] += 1
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    return tuple(_walk(tree.body, 0))


def _walk(nodes: list[ast.stmt], shift: int) -> list[tuple[int, int, str]]:
    """The spans of the defs and classes in NODES, outermost first, their lines moved by SHIFT."""
    out: list[tuple[int, int, str]] = []
    # Iterative pre-order walk: a 1,500-branch `elif` chain nests 1,500 deep and must not exhaust the stack.
    stack: list[tuple[ast.AST, str]] = [(child, "") for child in reversed(nodes)]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, _DEFS):
            inner = f"{prefix}{node.name}"
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first + shift, (node.end_lineno or node.lineno) + shift, inner))
            inner += "."
        children = _statements(node)
        if children:
            stack += [(child, inner) for child in reversed(children)]
    return out


def _add_pieces(text: _Text, pieces: Sequence[pyparts.Piece], prefix: str,
                out: list[tuple[int, int, str]]) -> int | None:
    """Append the spans of PIECES (names under PREFIX) to OUT; the last line of their last statement (None:
    they have none). A long class whose header or body pieces do not parse alone is parsed as one piece."""
    end: int | None = None
    for piece in pieces:
        last: int | None
        if piece.header:
            mark = len(out)
            try:
                last = _add_class(text, piece, prefix, out)
            except _Unparsable:
                del out[mark:]
                last = _add_piece(text, pyparts.whole_class(piece), prefix, out)
        else:
            last = _add_piece(text, piece, prefix, out)
        end = last if last is not None else end
    return end


def _add_piece(text: _Text, piece: pyparts.Piece, prefix: str, out: list[tuple[int, int, str]]) -> int | None:
    spans, last = _body_spans(text, piece)
    at = piece.start
    out += [(a + at, b + at, prefix + name) for a, b, name in spans]
    return last + at if last is not None else None


def _add_class(text: _Text, piece: pyparts.Piece, prefix: str, out: list[tuple[int, int, str]]) -> int:
    """A long class: its span from its header and its last body piece, then its body's spans."""
    first, name = _header(text, piece)
    mark = len(out)
    out.append((0, 0, ""))
    last = _add_pieces(text, piece.children, f"{prefix}{name}.", out)
    if last is None:
        raise _Unparsable(name)
    out[mark] = (first + piece.start, last, prefix + name)
    return last


def _body_spans(text: _Text, piece: pyparts.Piece) -> tuple[Spans, int | None]:
    """PIECE's spans, lines relative to its first, and the last line of its last statement: from the memo or
    one parse of the piece."""
    source = text(piece)
    found = _bodies.get(source, False)
    if found is False:           # (the memo is read once: another thread may clear it meanwhile)
        nodes = _parse(source, piece)
        shift = -len(piece.wrapper)
        found = _bodies[source] = None if nodes is None else \
            (tuple(_walk(nodes, shift)), (nodes[-1].end_lineno or nodes[-1].lineno) + shift if nodes else None)
    if found is None:
        raise _Unparsable(piece.start)
    return found


def _header(text: _Text, piece: pyparts.Piece) -> tuple[int, str]:
    """The first line (relative to PIECE, decorators included) and name of the long class PIECE heads."""
    source = text(piece)
    found = _headers.get(source, False)
    if found is False:
        nodes = _parse(source, piece)
        node = nodes[0] if nodes else None
        found = _headers[source] = (min([node.lineno] + [d.lineno for d in node.decorator_list])
                                    - len(piece.wrapper), node.name) if isinstance(node, ast.ClassDef) else None
    if found is None:
        raise _Unparsable(piece.start)
    return found


def _parse(source: bytes, piece: pyparts.Piece) -> list[ast.stmt] | None:
    stats["pieces"] += 1
    stats["memo bytes"] += len(source)
    if stats["memo bytes"] > _PIECES_MAX:
        _bodies.clear()
        _headers.clear()
        stats["memo bytes"] = len(source)
    return pyparts.piece_statements(source, piece)


_MAX_LINE = 1 << 62


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


def hunk_sides(hunk: Hunk, change: Change | None) -> list[tuple[str, int, Sequence[bytes]]]:
    """(blob, first line, lines) of the sides of HUNK whose scopes count: its removed lines in the base
    blob, its added lines in the head blob (a Python file's text hunks only)."""
    if hunk.kind != "text" or change is None or not is_python(hunk.path):
        return []
    return [(oid, start, lines) for oid, start, lines in ((change.old_oid, hunk.old_start, hunk.removed),
                                                         (change.new_oid, hunk.new_start, hunk.added))
            if lines and oid and oid != ZERO]


def hunk_scopes(hunk: Hunk, change: Change | None, scope_at: Callable[[str, int], str | None]) -> list[str]:
    """Qualified scopes of HUNK (CHANGE: its file's change): its removed lines in the base blob, its added
    lines in the head blob, each asked of SCOPE_AT(blob, line). explain's coverage and sync's check of a
    union's hunks (pipeline.provided) ask the same."""
    return hunk_reach(hunk, change, scope_at)[0]


def hunk_reach(hunk: Hunk, change: Change | None, scope_at: Callable[[str, int], str | None]
               ) -> tuple[list[str], bool]:
    """HUNK's scopes (hunk_scopes), and whether a line of it that says something (not blank, not only a
    comment) lies at module level: a drop scoped to a def/class does not cover such a hunk (helper-140: a
    new def and the module-level line registering it, one hunk). A hunk outside Python has no scopes and
    lies at module level."""
    found: set[str] = set()
    module = not hunk_sides(hunk, change)
    for oid, start, lines in hunk_sides(hunk, change):
        # blank lines between two methods belong to the class: they would make every edit "same-scope"
        numbers = [start + k for k, text in enumerate(lines) if text.strip()] or \
            [start + k for k in range(len(lines))]
        for n in numbers:
            scope = scope_at(oid, n)
            if scope:
                found.add(scope)
            elif not lines[n - start].lstrip().startswith(b"#") and lines[n - start].strip():
                module = True
    return sorted(found), module
