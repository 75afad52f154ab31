"""Parse a Python file in pieces, each distinct piece once: for the structured merge and the scope finder.

A merged file differs from what was parsed before (the sides, the other order, the next merge) only around
its conflict hunks, yet `ast.parse` of a 8,000-line module costs ~40 ms. So the file is cut into pieces at
lines that look like the start of a statement of the module (column 0), or of the body of a long class (its
body's indentation, below a `class _:` wrapper per enclosing class); a long class becomes its header (parsed
with a `pass` body) and the pieces of its body. Each piece is parsed on its own, once per distinct text (a
cache keyed by the bytes), and only the pieces the conflict hunks touch are turned into syntax trees.

Why the verdict is exactly `ast.parse`'s: a piece that parses on its own ends where the tokenizer is at a
fresh line (no string, bracket or backslash continuation is open, else it would not parse) and every piece
starts with a line at its level's indentation (the wrapper checks that no line of it leaves its class: the
wrapper must hold exactly one statement per level). By induction from the first piece, when every piece
parses, every cut is such a fresh line in the whole file too, the whole file's tokens are the pieces' tokens
in order and the file's statements are the pieces' statements: the file parses, with those statements. When
a piece does not parse (a cut inside a string, say), the whole file is parsed instead: the verdict is its.
Guards send a file to the whole parse outright: `from __future__ import barry_as_FLUFL` (it changes the
grammar; `ast.parse` checks no future import's place, 3.10 to 3.13), a coding declaration (the pieces would be decoded as UTF-8), form feeds and lone carriage returns
(the indentation rules and line numbers would differ). tests/pipeline/test_pyparts.py compares the two on
real and generated files.
"""

from __future__ import annotations

import ast
import bisect
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from carrytool.pipeline.pybindings import Defs, Key, definitions_of
from carrytool.pipeline.pystrings import Quoted, triple_quoted

_BIG = 1 << 62
SPLIT_MIN = 40            # a class longer than this (lines) is parsed as its header and its body's pieces
_CACHE_MAX = 200_000      # pieces kept (their definitions and whether they parse), then the cache restarts
_COOKIE = re.compile(rb"^[ \t]*#.*coding[:=]", re.MULTILINE)
_CLAUSE = re.compile(rb"(?:else|elif|except|finally)\b")
_BARRY = re.compile(rb"from\s+__future__\s+import\s*(?:\([^)]*|(?:[^\n]|\\\n)*)barry_as_FLUFL")
_HEADER_END = re.compile(rb":[ \t]*(?:#[^\n]*)?\r?\n?$")


@dataclass
class _Piece:
    start: int                        # 0-based first line, last line excluded
    end: int
    wrapper: tuple[bytes, ...]        # the indentation of each enclosing class (() at module level)
    header: bool = False              # a long class's header: parsed with `pass` as its body
    indent: bytes = b""               # a header's body indentation
    level: bytes = b""                # the piece's own indentation
    stop: int = 0                     # a header: where its class ends (the end of its last body piece)
    _scan: _Scan | None = field(default=None, repr=False, compare=False)     # a header's, to plan its body
    _children: Sequence[_Piece] | None = field(default=(), repr=False, compare=False)   # None: not yet

    @property
    def children(self) -> Sequence[_Piece]:
        """A header's body pieces (none for any other piece), planned when first asked: the scopes of a
        few lines look into one class of a module with many."""
        found = self._children
        if found is None:
            with _PLANNING:          # once: callers key memos by the children's identity
                if self._children is None:
                    assert self._scan is not None
                    stats["bodies"] += 1
                    self._children = _plan(self._scan, self.end, self.stop, (*self.wrapper, self.level), self.indent)
                    self._scan = None
                found = self._children
        return found


Piece = _Piece                        # what `plan` returns

_cache: dict[bytes, Defs | None] = {}
_PLANNING = threading.RLock()         # a header's children are planned once, whichever thread asks
stats = Counter()                     # parses done and cache hits, for tests and benchmarks


def _blank(line: bytes) -> bool:
    text = line.strip()
    return not text or text.startswith(b"#")


@dataclass
class _Scan:
    lines: list[bytes]
    text: bytes
    starts: list[int]                 # offset of each line in TEXT (and of the end)
    strings: list[tuple[int, int]]    # (first, last) lines that start inside a triple-quoted string


def _scan(lines: list[bytes], text: bytes, quoted: Quoted | None = None) -> _Scan:
    """Offsets of the lines, and those (0-based) that start inside a triple-quoted string as far as a scan of
    the quotes can tell (a mistake only costs a whole parse: see the module's docstring). QUOTED: TEXT's
    `triple_quoted`, when the caller has it."""
    starts = list(accumulate(map(len, lines), initial=0))
    return _Scan(lines, text, starts, _strings(text, starts, quoted))


def _strings(text: bytes, starts: list[int], quoted: Quoted | None = None) -> list[tuple[int, int]]:
    """(first, last) lines inside each triple-quoted string (triple_quoted's pairing)."""
    inside: list[tuple[int, int]] = []
    for start, end, _quote, _passed in (triple_quoted(text) if quoted is None else quoted):
        if end < 0:
            break
        first = bisect.bisect_right(starts, start)          # the line after the one it opens on
        last = bisect.bisect_right(starts, end) - 1         # the line it closes on
        if first <= last:
            inside.append((first, last))
    return inside


_CODE_AT: dict[bytes, re.Pattern[bytes]] = {}


def _cuts(scan: _Scan, lo: int, hi: int, indent: bytes) -> list[int]:
    """Lines in LO..HI that may start a statement at INDENT: code at exactly that indentation, not a
    clause of a compound statement, not after a decorator or a backslash continuation, not in a string."""
    pattern = _CODE_AT.get(indent)
    if pattern is None:
        pattern = _CODE_AT[indent] = re.compile(rb"\n" + re.escape(indent) + rb"[^\s#)\]}]")
    lines, starts = scan.lines, scan.starts
    out = []
    width = len(indent)
    decorated = False              # the piece so far is decorators: it goes on to their def or class
    found = [lo] if lo < hi and pattern.match(b"\n" + lines[lo][:width + 1]) else []
    end = min(len(scan.text), starts[hi] + width + 1)
    found += [i for i in (bisect.bisect_right(starts, m.start() + 1) - 1
                          for m in pattern.finditer(scan.text, starts[lo], end)) if lo < i < hi]
    strings = scan.strings         # (first, last), in order, apart: walked beside FOUND
    k, count = max(0, bisect.bisect_right(strings, (lo, _BIG)) - 1), len(strings)
    for i in found:
        line = lines[i]
        while k < count and strings[k][1] < i:
            k += 1
        if decorated and line.startswith((b"def ", b"class ", b"async "), width):
            decorated = False
        elif not decorated and not (k < count and strings[k][0] <= i) and not _CLAUSE.match(line, width) \
                and not (i > 0 and lines[i - 1].rstrip(b"\r\n").endswith(b"\\")):
            out.append(i)
            decorated = line[width:width + 1] == b"@"
    return out


def _plan(scan: _Scan, lo: int, hi: int, wrapper: tuple[bytes, ...], indent: bytes) -> list[_Piece]:
    cuts = _cuts(scan, lo, hi, indent)
    if not cuts or cuts[0] != lo:
        cuts = [lo, *cuts] if lo < hi else cuts
    pieces = []
    for n, start in enumerate(cuts):
        end = cuts[n + 1] if n + 1 < len(cuts) else hi
        piece = _Piece(start, end, wrapper, level=indent)
        if end - start > SPLIT_MIN:
            _split_class(scan, piece, indent)
        pieces.append(piece)
    return pieces


def _split_class(scan: _Scan, piece: _Piece, indent: bytes) -> None:
    """Cut a long class into its header and its body's pieces (left whole when it does not look like one)."""
    lines = scan.lines
    at = piece.start
    if lines[at][len(indent):].startswith(b"@"):      # decorators: the class is the first line that says so
        at = next((i for i in range(at, piece.end) if lines[i].startswith(indent + b"class ")), piece.end)
    if at >= piece.end or not lines[at][len(indent):].startswith(b"class "):
        return
    colon = next((i for i in range(at, piece.end) if _HEADER_END.search(lines[i])), None)   # `):` of a long
    body = next((i for i in range(colon + 1, piece.end) if not _blank(lines[i])), None) if colon is not None \
        else None                                                                         # header
    if body is None:
        return
    inner = lines[body][:len(lines[body]) - len(lines[body].lstrip(b" \t"))]
    if len(inner) <= len(indent) or not inner.startswith(indent):
        return
    # Its body's pieces start at BODY (the first is there, as _plan puts one at its first line) and end at
    # the piece's end: they are planned when first asked for (`children`).
    piece.header, piece.indent, piece.stop, piece._scan, piece._children = True, inner, piece.end, scan, None
    piece.end = body               # the header's own lines; its class ends with its last child


def _wrap(wrapper: tuple[bytes, ...]) -> bytes:
    return b"".join(level + b"class _:\n" for level in wrapper)


def _innermost(tree: ast.Module, depth: int) -> list[ast.stmt] | None:
    """The statements inside DEPTH wrapper classes, or None when a piece's line left its class."""
    body: list[ast.stmt] = tree.body
    for _ in range(depth):
        if len(body) != 1 or not isinstance(body[0], ast.ClassDef):
            return None
        body = body[0].body
    return body


def _source(lines: list[bytes], piece: _Piece) -> bytes:
    text = _wrap(piece.wrapper) + b"".join(lines[piece.start:piece.end])
    if piece.header:
        text += piece.indent + b"pass\n"
    return text


def _parse_piece(source: bytes, piece: _Piece) -> tuple[list[ast.stmt], int] | None:
    """The piece's statements (a header: its class, its body without the `pass`) and how many wrapper lines
    precede it; None when it does not parse on its own."""
    stats["parsed"] += 1
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    body = _innermost(tree, len(piece.wrapper))
    if body is None or (piece.header and (len(body) != 1 or not isinstance(body[0], ast.ClassDef))):
        return None
    if piece.header:
        body[0].body.pop()         # the `pass` we added
    return body, len(piece.wrapper)


class Parsed:
    """One file's parse: whether it parses, its definitions, and the syntax tree of the parts that meet the
    lines asked for (`tree`). Build with `parse`."""

    def __init__(self, ok: bool) -> None:
        self.ok = ok
        self._defs: Counter = Counter()
        self._lines: dict[Key, list[tuple[int, int]]] = {}
        self.tree: ast.Module | None = None     # whole, or only the statements meeting the hot lines
        self.pieces = 0
        self.all_spans = False      # the lines of every binding statement, not only those meeting hot lines

    def definitions(self, spans: dict[Key, list[tuple[int, int]]] | None = None) -> Counter:
        """(scope, name) -> how often it is bound (as pipeline.structured.definitions); SPANS receives the
        (first, last) lines (1-based) of each binding statement that meets the lines `parse` was asked about
        (in pieces; of every one when parsed whole)."""
        if spans is not None:
            spans.update({key: [(a + 1, b + 1) for a, b in found] for key, found in self._lines.items()})
        return self._defs


def parse(lines: list[bytes], hot: list[tuple[int, int]] = (), *, whole: bool = False,
          spans: bool = False) -> Parsed:  # type: ignore[assignment]
    """Parse the file of LINES; its `tree` holds (at least) every statement of the module that meets the HOT
    line ranges (1-based, inclusive), with its enclosing classes, at their real lines. WHOLE: one `ast.parse`.
    SPANS: `definitions` gives the lines of every binding statement (from the pieces' cache, parsing no
    piece again), not only of those meeting HOT."""
    text = b"".join(lines)
    if not whole and _vouches(lines, text):
        found = _by_pieces(lines, text, [(a - 1, b) for a, b in hot if a <= b], spans)
        if found is not None:
            return found
    stats["whole"] += 1
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Parsed(False)
    out = Parsed(True)
    out.tree = tree
    out._defs, out._lines = definitions_of(tree.body, walrus=b":=" in text)
    return out


def _vouches(lines: list[bytes], text: bytes) -> bool:
    """Whether the pieces can vouch for TEXT at all (see the guards in the module's docstring)."""
    return not (_BARRY.search(text) or b"\f" in text or (b"\r" in text and text.count(b"\r") != text.count(b"\r\n"))
                or _COOKIE.search(b"".join(lines[:2])))


def plan(lines: list[bytes]) -> list[_Piece] | None:
    """The module's pieces, in source order (a long class: its header, with its body's pieces as `children`);
    None when a guard sends the file to one whole parse."""
    text = b"".join(lines)
    return _plan(_scan(lines, text), 0, len(lines), (), b"") if _vouches(lines, text) else None


def plan_sources(lines: list[bytes], text: bytes | None = None,
                 quoted: Quoted | None = None) -> tuple[list[_Piece] | None, Callable[[_Piece], bytes]]:
    """`plan`, and `piece_source` for its pieces (and `whole_class`'s), each read as one slice of the text.
    TEXT (the lines joined) and QUOTED (its `triple_quoted`) when the caller has them."""
    if text is None:
        text = b"".join(lines)
    if not _vouches(lines, text):
        return None, lambda piece: _source(lines, piece)
    scan = _scan(lines, text, quoted)
    starts = scan.starts

    def source(piece: _Piece) -> bytes:
        body = text[starts[piece.start]:starts[piece.end]]
        if piece.wrapper:
            body = _wrap(piece.wrapper) + body
        return body + piece.indent + b"pass\n" if piece.header else body

    return _plan(scan, 0, len(lines), (), b""), source


def piece_source(lines: list[bytes], piece: _Piece) -> bytes:
    """What PIECE is parsed as: its wrapper (one `class _:` line per enclosing class), its lines (a long
    class's header: with a `pass` body)."""
    return _source(lines, piece)


def piece_statements(source: bytes, piece: _Piece) -> list[ast.stmt] | None:
    """The statements of PIECE (whose `piece_source` is SOURCE) at their lines in SOURCE (a long class's
    header: its class, without a body); None when it does not parse on its own."""
    parsed = _parse_piece(source, piece)
    return parsed[0] if parsed is not None else None


def whole_class(piece: _Piece) -> _Piece:
    """A long class as one piece, its body included (when its header or body pieces do not parse alone)."""
    return _Piece(piece.start, _end(piece), piece.wrapper, level=piece.level)


def _by_pieces(lines: list[bytes], text: bytes, hot: list[tuple[int, int]], spans: bool = False) -> Parsed | None:
    """The parse from the pieces, or None when one does not parse on its own (then the whole file decides)."""
    pieces = _plan(_scan(lines, text), 0, len(lines), (), b"")
    out = Parsed(True)
    out.all_spans = spans
    body: list[ast.stmt] = []
    if not _collect(lines, pieces, "", hot, out, body):
        return None
    out.tree = ast.Module(body=body, type_ignores=[])
    return out


def _meets(start: int, end: int, hot: list[tuple[int, int]]) -> bool:
    return any(a < end and start < b for a, b in hot)


def _collect(lines: list[bytes], pieces: Sequence[_Piece], scope: str, hot: list[tuple[int, int]], out: Parsed,
             body: list[ast.stmt]) -> bool:
    """Add each piece's definitions to OUT (and its statements to BODY when it meets HOT); False as soon as a
    piece does not parse on its own. A long class whose header or body pieces do not parse on their own
    (a cut in the wrong place) is parsed as one piece instead."""
    for piece in pieces:
        if piece.header:
            inner = Parsed(True)
            inner.all_spans = out.all_spans
            nodes: list[ast.stmt] = []
            if _class(lines, piece, scope, hot, inner, nodes):
                _merge(out, inner)
                body.extend(nodes)
                continue
            stats["whole-class"] += 1
            piece = whole_class(piece)
        if not _piece(lines, piece, scope, hot, out, body):
            return False
    return True


def _merge(out: Parsed, inner: Parsed) -> None:
    out.pieces += inner.pieces
    out._defs.update(inner._defs)
    for key, found in inner._lines.items():
        out._lines.setdefault(key, []).extend(found)


def _piece(lines: list[bytes], piece: _Piece, scope: str, hot: list[tuple[int, int]], out: Parsed,
           body: list[ast.stmt]) -> bool:
    """One piece (a long class's header: its class, without its body's pieces)."""
    out.pieces += 1
    warm = _meets(piece.start, _end(piece), hot)
    source = _source(lines, piece)
    cached = _cache.get(source, False)
    if cached is None:
        return False
    if cached is False or warm:
        parsed = _parse_piece(source, piece)
        if len(_cache) > _CACHE_MAX:
            _cache.clear()
        if parsed is None:
            _cache[source] = None
            return False
        nodes = parsed[0]
        cached = _cache[source] = definitions_of(nodes, "", -len(piece.wrapper), walrus=b":=" in source)
        if warm:
            for node in nodes:
                ast.increment_lineno(node, piece.start - len(piece.wrapper))
            body.extend(nodes)
    else:
        stats["hits"] += 1
    defs, where = cached  # type: ignore[misc]
    for (inner, name), count in defs.items():
        key = (f"{scope}.{inner}" if scope and inner else scope or inner, name)
        out._defs[key] += count
        if warm or out.all_spans:       # the lines of bindings elsewhere never meet the lines asked about
            out._lines.setdefault(key, []).extend([(a + piece.start, b + piece.start) for a, b in where[(inner, name)]])
    return True


def _class(lines: list[bytes], piece: _Piece, scope: str, hot: list[tuple[int, int]], out: Parsed,
           body: list[ast.stmt]) -> bool:
    """A long class: its header, then its body's pieces; its syntax tree (when it meets HOT) holds the
    statements of the pieces that meet HOT."""
    name = _class_name(lines, piece)
    mark = len(body)
    if name is None or not _piece(lines, piece, scope, hot, out, body):
        return False
    classdef = body[mark] if len(body) > mark else None
    inner_body: list[ast.stmt] = []
    if not _collect(lines, piece.children, f"{scope}.{name}" if scope else name, hot, out, inner_body):
        return False
    end = _last_code(lines, piece.children[-1])
    if isinstance(classdef, ast.ClassDef):
        classdef.body.extend(inner_body)
        classdef.end_lineno = end + 1
    key = (scope, name)        # the class's binding spans the whole class, as the whole parse says
    if key in out._lines:
        out._lines[key] = [(a, b) for a, b in out._lines[key] if not piece.start <= a <= piece.end] + \
            [(_class_line(lines, piece), end)]
    return True


def _end(piece: _Piece) -> int:
    """Where PIECE ends, its class's body included."""
    return piece.stop if piece.header else piece.end


extent = _end     # the last line (1-based) of a piece (0-based start), its class's body included


def _class_line(lines: list[bytes], piece: _Piece) -> int:
    return next(i for i in range(piece.start, piece.end) if lines[i].startswith(piece.level + b"class "))


def _class_name(lines: list[bytes], piece: _Piece) -> str | None:
    match = re.match(rb"[ \t]*class[ \t]+([A-Za-z_][A-Za-z_0-9]*)", lines[_class_line(lines, piece)])
    return match.group(1).decode() if match else None


def _last_code(lines: list[bytes], piece: _Piece) -> int:
    """The last line (0-based) of PIECE (or of its class's last child) that is not blank or a comment."""
    if piece.children:
        return _last_code(lines, piece.children[-1])
    end = piece.end - 1
    while end > piece.start and _blank(lines[end]):
        end -= 1
    return end
