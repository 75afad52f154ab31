"""pipeline.pyparts: parsing a file in pieces says exactly what one `ast.parse` says (the verdict, the
definitions with their lines, the statements around the lines asked for), on real files and on files made
to break the cuts: strings left open, backslash continuations, decorators, clauses, nested classes, tabs."""

from __future__ import annotations

import ast
import random
import re
import sys
from pathlib import Path

import pytest

from carrytool.pipeline import pyparts, pystrings
from carrytool.pipeline.structured_segments import split_lines

HERE = Path(__file__).resolve().parents[2]
STDLIB = Path(ast.__file__).parent


def _statements(tree: ast.Module | None) -> list[ast.stmt]:
    """Every statement of TREE, as ast.walk finds them: statements sit only in the statement lists (body,
    orelse, finalbody) of statements, except clauses and match cases, never in an expression, so the
    expressions (most of a tree) need no walk."""
    out: list[ast.stmt] = []
    stack: list[ast.AST] = [tree] if tree is not None else []
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            found = getattr(node, name, None)
            if isinstance(found, list):
                stack += found
        if isinstance(node, ast.stmt):
            out.append(node)
    return out


def _shape(tree: ast.Module | None, hot: list[tuple[int, int]]) -> list[tuple]:
    """Every statement meeting HOT: its lines (decorators included), type, column and name."""
    out = []
    for node in _statements(tree):
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        last = node.end_lineno or node.lineno
        if any(first <= b and a <= last for a, b in hot):
            out.append((first, last, type(node).__name__, node.col_offset, getattr(node, "name", None)))
    return sorted(out)


def _near(spans: dict, hot: list[tuple[int, int]]) -> dict:
    """The binding spans that meet HOT (the pieces give only those)."""
    out = {key: sorted(s for s in found if any(s[0] <= b and a <= s[1] for a, b in hot)) for key, found in spans.items()}
    return {key: found for key, found in out.items() if found}


def _same(lines: list[bytes], hot: list[tuple[int, int]], *, every_span: bool = False) -> bool:
    pieces = pyparts.parse(lines, hot)
    whole = pyparts.parse(lines, hot, whole=True)
    assert pieces.ok == whole.ok
    if whole.ok:
        where_p: dict = {}
        where_w: dict = {}
        assert pieces.definitions(where_p) == whole.definitions(where_w)
        assert _near(where_p, hot) == _near(where_w, hot)
        assert _shape(pieces.tree, hot) == _shape(whole.tree, hot)
    if whole.ok and every_span:     # spans=True: every binding's lines, from the pieces' cache (the shadows gate)
        every: dict = {}
        pyparts.parse(lines, hot, spans=True).definitions(every)
        assert {key: sorted(found) for key, found in every.items()} == \
            {key: sorted(found) for key, found in where_w.items()}
    return whole.ok


BREAKERS = [b'"""\n', b"'''\n", b'x = """\n', b"y = (\n", b")\n", b"]\n", b"\\\n", b"z = 1 + \\\n", b"    pass\n",
            b"else:\n", b"except Exception:\n", b"@dec\n", b"class K:\n", b"\tpass\n", b"# c\n", b"def f():\n",
            b"  x = 1\n", b"    def m(self):\n", b"        return 1\n", b"r'''\n", b"s = 'a\\\n", b"if x:\n"]


def _mutated(lines: list[bytes], rng: random.Random) -> list[bytes]:
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(lines))
        roll = rng.random()
        if roll < 0.5 or not lines:
            lines.insert(at, rng.choice(BREAKERS))
        elif roll < 0.75:
            del lines[min(at, len(lines) - 1)]
        else:
            j = min(at, len(lines) - 1)
            lines[j] = lines[j][4:] if lines[j].startswith(b"    ") else b"    " + lines[j]
    return lines


NESTED = b'''\
"""A module."""
import os


@decorated(
    1,
)
class Outer(Base):
    """Doc with a line at column 0:
def not_a_function():
"""

    X = 1

    @staticmethod
    def one():
        return textwrap.dedent("""
class NotAClass:
    pass
""")

    class Inner:
        Y = 2

        def two(self):
            return 2 + \\
3

        def three(self):
            try:
                pass
            except Exception:
                pass
            else:
                pass
''' + b"".join(b"\n        def m%d(self):\n            return %d\n" % (n, n) for n in range(30)) + b'''

    def four(self):
        return [
            x for x in y
        ]


def after():
    return Outer.Inner


class Long(
    Base,
    Mixin,
):  # a header of three lines
    ITEMS = [
    "an item at the body's indentation: a cut there fails, the class is parsed whole",
    ]
''' + b"".join(b"\n    def l%d(self):\n        return %d\n" % (n, n) for n in range(20)) + b'''

class Header(
    Base,
):
''' + b"".join(b"\n    def h%d(self):\n        return %d\n" % (n, n) for n in range(20))


def _files() -> list[Path]:
    ours = sorted((HERE / "carrytool").rglob("*.py"))
    theirs = sorted(p for p in STDLIB.glob("*.py") if p.stat().st_size > 20_000)[:12]
    return ours + theirs


def test_pieces_say_what_the_whole_parse_says_on_real_and_broken_files() -> None:
    # the file and two broken copies of it, other ones on each Python (CI's two passes: four copies a run)
    rng = random.Random(19 + sys.version_info.minor)
    parsed = broken = 0
    for path in _files():
        lines = split_lines(path.read_bytes())
        for case in range(3):
            text = lines if case == 0 else _mutated(lines, rng)
            first = rng.randint(1, max(1, len(text)))
            hot = [(first, first + rng.randint(0, 8))]
            if rng.random() < 0.3:
                pyparts._cache.clear()
            if _same(text, hot, every_span=True):
                parsed += 1
            else:
                broken += 1
    assert parsed > 100 and broken > 100           # both verdicts were compared, many times


@pytest.mark.parametrize("seed", range(40))
def test_nested_classes_strings_at_column_0_and_continuations(seed: int) -> None:
    rng = random.Random(seed)
    lines = split_lines(NESTED)
    assert _same(lines, [(1, len(lines))])
    for _ in range(10):
        text = _mutated(lines, rng)
        first = rng.randint(1, len(text))
        _same(text, [(first, first + 3)])


def test_a_long_class_is_parsed_in_pieces_and_only_its_changed_piece_again() -> None:
    lines = split_lines(NESTED)
    pyparts._cache.clear()
    pyparts.parse(lines)
    before = dict(pyparts.stats)
    at = next(i for i, line in enumerate(lines) if b"def m20" in line)
    changed = [*lines[:at], b"        def added(self):\n", b"            return 0\n", b"\n", *lines[at:]]
    result = pyparts.parse(changed, [(at + 1, at + 3)])
    assert result.ok and result.pieces > 30
    assert pyparts.stats["whole"] == before.get("whole", 0)
    parses = pyparts.stats["parsed"] - before.get("parsed", 0)
    assert parses <= 4         # the new piece, the class headers around it (Outer, Inner), nothing else
    assert [n.name for n in ast.walk(result.tree) if isinstance(n, ast.FunctionDef)] == ["added"]
    assert pyparts.stats["whole-class"] > before.get("whole-class", 0)          # Long, not Header
    at = next(i for i, line in enumerate(lines) if b"def h10" in line)
    before = dict(pyparts.stats)
    changed = [*lines[:at], b"    def added(self):\n", b"        return 0\n", b"\n", *lines[at:]]
    result = pyparts.parse(changed, [(at + 1, at + 3)])
    assert pyparts.stats["parsed"] - before["parsed"] <= 2 and pyparts.stats["whole"] == before["whole"]
    assert [n.name for n in result.tree.body] == ["Header"]


@pytest.mark.parametrize("text", [
    b"# -*- coding: latin-1 -*-\nx = 1\n",
    b"from __future__ import barry_as_FLUFL\nx = 1 <> 2\n",
    b"from __future__ import (\n    annotations,\n    barry_as_FLUFL,\n)\nx = 1 <> 2\n",
    b"x = 1\r\ny = 2\rz = 3\n",
    b"x = 1\n\x0c\ny = 2\n",
])
def test_files_the_pieces_cannot_vouch_for_are_parsed_whole(text: bytes) -> None:
    whole = pyparts.stats["whole"]
    lines = split_lines(text)
    _same(lines, [(1, 2)])
    assert pyparts.stats["whole"] == whole + 2


def test_a_cut_inside_brackets_costs_a_whole_parse_and_nothing_else() -> None:
    whole = pyparts.stats["whole"]
    lines = split_lines(b"x = [\n1,\n]\n\n\ndef f():\n    pass\n")
    assert _same(lines, [(2, 2)])
    assert pyparts.stats["whole"] == whole + 2


def test_the_suite_runs_on_a_python_whose_grammar_it_knows() -> None:
    assert sys.version_info >= (3, 10)


def test_a_quote_in_a_comment_hides_no_statement_from_its_scope() -> None:
    """The quote scan takes the `\"\"\"` of two comments for a string: no cut between them, so a body piece of
    Long runs on into `x = 1` at column 0, which leaves the class: that piece must not count as Long's."""
    methods = b"".join(b"    def a%d(self):\n        return %d\n" % (n, n) for n in range(25))
    text = (b"class Long:\n" + methods + b'    # docs: """\n    def b(self):\n        return 1\nx = 1\n'
            b'# end """\ndef after():\n    pass\n')
    lines = split_lines(text)
    assert _same(lines, [(1, len(lines))])
    assert pyparts.parse(lines).definitions()[("", "x")] == 1


def _strings_by_regex(text: bytes, starts: list[int]) -> list[tuple[int, int]]:
    """The quote scan as a regex over the triple quotes (what `_strings` did before it used `bytes.find`)."""
    import bisect
    import re

    inside, opened = [], None
    for match in re.finditer(rb"\"\"\"|'''", text):
        if opened is None:
            opened = (match.group(), match.start())
        elif match.group() == opened[0] and text[match.start() - 1:match.start()] != b"\\":
            first, last = bisect.bisect_right(starts, opened[1]), bisect.bisect_right(starts, match.start()) - 1
            if first <= last:
                inside.append((first, last))
            opened = None
    return inside


@pytest.mark.parametrize("extra", [b'"""a\\""""\nx\n"""', b"'''\"\"\"\n'''x\"\"\"\n", b'""""""""\n\n"""', b"\\'''\n'''",
                                   b"'''\\'''a\n'''", b'x = 1\n', b'"""\n', b"'''\n\"\"\"\n'''\n\"\"\"\n"])
def test_the_quote_scan_finds_what_a_regex_over_the_quotes_finds(extra: bytes) -> None:
    rng = random.Random(len(extra))
    for path in _files()[::3]:
        text = path.read_bytes()
        at = rng.randint(0, len(text))
        for source in (text, text[:at] + extra + text[at:], extra):
            starts = pyparts._scan(split_lines(source), source).starts
            assert pyparts._strings(source, starts) == _strings_by_regex(source, starts)


def _triple_strings_by_tokenize(text: bytes) -> list[tuple[int, int]] | None:
    """(first line, last line) of each triple-quoted string Python's tokenizer finds, outside any other
    (3.12's f-strings are several tokens: from their start to their end; one of one quote counts too when
    it spans lines, as a replacement field may from 3.12); None when TEXT does not tokenize (an error token: an
    unterminated string, a stray backslash)."""
    import io
    import tokenize

    out: list[tuple[int, int]] = []
    opened: list[tuple[int, bool]] = []           # 3.12: open f-strings (first line, triple-quoted)
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    try:
        for token in tokenize.tokenize(io.BytesIO(text).readline):
            body = token.string.lstrip("rRbBuUfFtT")
            if token.type == tokenize.ERRORTOKEN and token.string.strip():
                return None
            if token.type == tokenize.STRING and body[:3] in ('"""', "'''") and not opened:
                out.append((token.start[0], token.end[0]))
            elif fstring_start is not None and token.type == fstring_start:
                opened.append((token.start[0], body[:3] in ('"""', "'''")))
            elif fstring_end is not None and token.type == fstring_end:
                first, triple = opened.pop()
                if not opened and (triple or first != token.end[0]):
                    out.append((first, token.end[0]))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):   # (a quote dropped inside a UTF-8 character)
        return None
    return sorted(out)


def _exact_lines(text: bytes) -> list[tuple[int, int]] | None:
    import bisect

    found = pystrings.strings_exactly(text, nested=sys.version_info >= (3, 12))
    if found is None:
        return None
    starts = [0] + [m.end() for m in re.finditer(rb"\n", text)]
    return sorted((bisect.bisect_right(starts, start), bisect.bisect_right(starts, end)) for start, end, _q, _p in found)


QUOTY = [b'"""', b"'''", b'"', b"'", b"#", b"\\", b'\\"', b"\n", b' """x""" ', b" '#' ", b' "\\"\\"\\"" ', b"f'{x}'"]


def test_the_exact_string_scan_finds_the_tokenizers_triple_quoted_strings() -> None:
    """strings_exactly pairs the triple quotes as Python's tokenizer does, on real files and on copies with
    quotes, comment marks and backslashes dropped in (where the file still tokenizes), and is unsure only
    where the tokenizer fails (from Python 3.12, also at a formatted string with a replacement field)."""
    rng = random.Random(23)
    compared = unsure = 0
    for path in _files():
        text = path.read_bytes()
        for case in range(4):
            source = text
            for _ in range(case * 2):
                at = rng.randint(0, len(source))
                source = source[:at] + rng.choice(QUOTY) + source[at:]
            expected = _triple_strings_by_tokenize(source)
            got = _exact_lines(source)
            if expected is None:
                unsure += got is None
                continue
            if got is None and sys.version_info >= (3, 12) and re.search(rb"[fFtT][rRbB]?[\"']", source):
                continue
            assert got == expected, (path, case)
            compared += 1
    assert compared > 60 and unsure > 10


@pytest.mark.parametrize(("text", "expected"), [
    (b'x = f"{"a"}" + \'\'\'\nb\n\'\'\'\n', [(1, 3)]),
    (b'x = f"""{\'"""\'}\nclass G:\n    pass\n"""\n', [(1, 4)]),
    (b'x = f"{\n1  # }"\n}"\ny = 1\n', [(1, 3)]),
    (b"x = f\"{x:{w}}\" '''a'''\n", [(1, 1)]),
    (b"x = f\"{{'''}}\"\ny = '''\n'''\n", [(2, 3)]),
    (b"if 0:\n    pass\nelif\"{'''\":\n    pass\ns = '''\n'''\n", [(5, 6)]),
    (b"x = rf\"{a!r:>{w}}\" f'{b[\"k\"]}' f\"{f'{1}'}\"\n", []),
    (b'x = rf"\\{"""\nclass A:\n    def m(self): pass\n"""}"\n', [(1, 4)]),
    (b'x = f"\\{1}" """a\n"""\n', [(1, 2)]),
    (b'x = "a\\\r\nb"\r\ny = """\r\n"""\r\n', [(3, 4)]),
    (b"x = f\"{x:'>10}\"\n", None),
    (b'x = f"abc\n', None),
])
def test_the_exact_string_scan_follows_formatted_strings_as_python_3_12_does(text: bytes, expected) -> None:
    """With Python 3.12's f-strings (PEP 701: a replacement field may hold the string's own quotes, a
    comment, line ends), on any Python: fields are followed, a one-quote f-string over several lines counts,
    `elif"..."` is a keyword and a plain string, a backslash does not keep a brace from opening a field (as
    3.12's tokenizer reads `\\{`), a backslash and "\\r\\n" continue a string; unsure (None) at a quote in a
    format spec or a line end in a one-quote string."""
    found = pystrings.strings_exactly(text, nested=True)
    if expected is None:
        assert found is None
        return
    assert found is not None
    starts = [0] + [m.end() for m in re.finditer(rb"\n", text)]
    import bisect
    assert [(bisect.bisect_right(starts, a), bisect.bisect_right(starts, b)) for a, b, _q, _p in found] == expected
    if sys.version_info >= (3, 12):
        assert _triple_strings_by_tokenize(text) == expected


def test_a_triple_quote_nothing_closes_ends_the_exact_scan_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three quotes that open a string nothing closes: the file does not tokenize, and the scan says so at
    the first of them. Scanning on (an empty string, the next quotes, and for each later triple quote a
    search to the end of the file again) took a minute for 112 KB of such lines."""
    searches: list[int] = []
    real = pystrings.TOKENS

    class Counting:
        def search(self, text: bytes, pos: int = 0):  # noqa: ANN202
            searches.append(pos)
            return real.search(text, pos)

        def match(self, text: bytes, pos: int = 0):  # noqa: ANN202
            return real.match(text, pos)

    monkeypatch.setattr(pystrings, "TOKENS", Counting())
    assert pystrings.strings_exactly(b'\\"""x"\n' * 1000, nested=False) is None
    assert pystrings.strings_exactly(b'x = 1\ny = """\n', nested=True) is None
    assert len(searches) == 2
