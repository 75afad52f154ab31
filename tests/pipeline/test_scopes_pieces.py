"""pipeline.scopes finds def/class spans from a file's pieces (pipeline.pyparts), each distinct piece parsed
once: the spans must be exactly those of one `ast.parse` of the whole file (same tuples, same order, () when
it does not parse), on real files, on copies broken on purpose and on the shapes that move a cut."""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest

from carrytool.pipeline import scopes

HERE = Path(__file__).resolve().parents[2]
STDLIB = Path(ast.__file__).parent
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


def reference(source: bytes) -> tuple[tuple[int, int, str], ...]:
    """The spans as one whole parse gives them (carrytool's `_spans` before it parsed in pieces)."""
    return _whole_parse(source)[0]


def _whole_parse(source: bytes) -> tuple[tuple[tuple[int, int, str], ...], bool]:
    """The reference spans, and whether SOURCE parses at all (from the one parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return (), False
    out = []
    stack = [(child, "") for child in reversed(tree.body)]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{prefix}{node.name}"
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first, node.end_lineno or node.lineno, inner))
            inner += "."
        children = [c for name in _BLOCKS for c in (getattr(node, name, None) or []) if isinstance(c, ast.AST)]
        stack += [(child, inner) for child in reversed(children)]
    return tuple(out), True


def spans(source: bytes) -> tuple[tuple[int, int, str], ...]:
    return scopes._spans.__wrapped__(source)         # type: ignore[attr-defined]  # past the lru_cache


def _forget() -> None:
    scopes._bodies.clear()
    scopes._headers.clear()


def _files() -> list[Path]:
    ours = sorted((HERE / "carrytool").rglob("*.py"))
    big = sorted((p for p in STDLIB.glob("*.py") if p.stat().st_size > 40_000), key=lambda p: p.name)
    return ours + big[:25] + sorted((STDLIB / "asyncio").glob("*.py"))[:10]


def long_class(name: str, methods: int, indent: str = "") -> str:
    body = "".join(f"\n{indent}    def m{n}(self, x):\n{indent}        return x + {n}\n" for n in range(methods))
    return f"{indent}class {name}(Base):\n{indent}    \"\"\"Doc.\"\"\"\n{body}"


# What a PR's hunk might put into a long class or between modules' statements (each at the class body's
# indentation, "    "; shifted to column 0 for module level); several must move or spoil a cut.
SNIPPETS = [
    "def one(): pass\n",
    "async def fetch(self):\n    async with lock:\n        return await go()\n",
    "@property\n@other(\n    1,\n)\ndef decorated(self):\n    return 1\n",
    "if TYPE_CHECKING:\n    def typed(self): ...\nelse:\n    def typed(self):\n        return 2\n",
    "try:\n    import fast\nexcept ImportError:\n    def fast(): pass\nfinally:\n    class Done: pass\n",
    "def matcher(self, v):\n    match v:\n        case [x]:\n            def found(): return x\n        case _:\n"
    "            pass\n",
    "def factory(self):\n    class Local:\n        def inner(self):\n            def deeper(): pass\n"
    "    return Local\n",
    "TEXT = \"\"\"\nclass NotAClass:\n    def not_a_method(self): pass\n\"\"\"\n",
    "x = 1 + \\\n    2\n",
    "OPEN = \"\"\"\n",
    "def broken(self:\n",
    "y = [\n",
    "\x0c\n",
    "def z(self): return '\\\n'\n",
    "class Small:\n    pass\n",
    "lambda_ = lambda: 0\n",
    "ITEMS = [\n'an item at the same indentation: a cut that does not parse',\n]\n",
]


def _insert(lines: list[str], rng: random.Random) -> list[str]:
    snippet = rng.choice(SNIPPETS)
    at = rng.randint(0, len(lines))
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())] if at < len(lines) else ""
    block = [indent + line if line.strip() else line for line in snippet.splitlines(keepends=True)]
    return [*lines[:at], *block, *lines[at:]]


def _mutate(text: bytes, rng: random.Random) -> bytes:
    lines = text.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        at = rng.randrange(len(lines)) if lines else 0
        if roll < 0.55 or not lines:
            lines = _insert(lines, rng)
        elif roll < 0.7:
            del lines[at]
        elif roll < 0.85:                              # a hunk edited: one line rewritten
            lines[at] = lines[at].replace("return", "return not", 1).replace("self", "me", 1)
        else:
            lines[at] = lines[at][4:] if lines[at].startswith("    ") else "    " + lines[at]
    return "".join(lines).encode("utf-8", "surrogateescape")


def _check(source: bytes) -> bool:
    expected, whole = _whole_parse(source)
    assert spans(source) == expected
    _check_lines(source, expected, whole)
    return bool(expected) or b"def " not in source


def _parses(source: bytes) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _check_lines(source: bytes, expected: tuple[tuple[int, int, str], ...], whole: bool) -> None:
    """scope_of_line, from the pieces around each line only, answers as the whole parse does on every line
    (every third of a long file) of a file that parses (WHOLE); of one that does not, it answers something."""
    total = source.count(b"\n") + 2
    step = 1 if total < 3000 else 3
    for line in range(1, total + 1, step):
        got = scopes.scope_of_line(source, line)
        if whole:
            assert got == scopes.scope_in(expected, line), (line, got)
        else:
            assert got is None or isinstance(got, str)


def test_real_files_give_the_whole_parse_spans() -> None:
    files = _files()
    assert len(files) > 80
    for path in files:
        assert _check(path.read_bytes()), path


def test_broken_copies_of_real_files_give_the_whole_parse_spans() -> None:
    # two broken copies of each file, other ones on each Python (CI's two passes: four a run)
    rng = random.Random(17 + sys.version_info.minor)
    parsed = broken = 0
    for path in _files():
        text = path.read_bytes()
        for _ in range(2):
            if rng.random() < 0.2:
                _forget()
            mutated = _mutate(text, rng)
            if _check(mutated):
                parsed += 1
            else:
                broken += 1
    assert parsed > 60 and broken > 30           # both verdicts were compared, many times


MODULE = ("\"\"\"A module.\"\"\"\nimport os\n\n\n" + long_class("First", 30) + "\n\n" + "def helper():\n"
          "    return 1\n\n\n@decorator\n" + long_class("Second", 25).replace(
              "    def m12(", long_class("Nested", 20, "    ") + "\n    def m12(") + "\n\n"
          "if sys.version_info >= (3, 12):\n    def versioned(): pass\n\n\n" + long_class("Third", 45) + "\n")


@pytest.mark.parametrize("seed", range(30))
def test_long_classes_with_snippets_give_the_whole_parse_spans(seed: int) -> None:
    rng = random.Random(seed)
    base = MODULE.encode()
    assert _check(base)
    for _ in range(12):
        _check(_mutate(base, rng))


@pytest.mark.parametrize("text", [
    b'QUOTE = \'"""\'\ndef f(): return QUOTE\nTEMPLATE = """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'# a comment with """\ndef f(): return 1\nTEMPLATE = """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = "a" \\\n"""\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b's = """a\\\\"""\nclass B:\n    pass\nt = """\nclass C:\n    pass\n"""\n',
    b"QUOTE = 'it''s' + '\"\"\"'\ndef f(): return QUOTE\nT = \"\"\"\nclass Generated:\n    pass\n\"\"\"\ndef g(): return 2\n",
    b'a = """x""" + \'"""\'\ndef f(): return a\nT = """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = "a # b"  # """\ndef f(): return 1\nT = """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = "\\\\"""\nclass Generated:\n    pass\n""" """\ndef g(): return 2\n',
])
def test_quotes_the_scan_may_pair_wrongly_take_the_tokenizers_strings(text: bytes) -> None:
    """Triple quotes inside a comment or another string, or after a backslash: the scan of the quotes may
    take a string's text (`class Generated:`) for code and cut a piece of it, which parses alone. The
    guard sees it, and the file's strings then come from a scan of its strings and comments as the
    tokenizer reads them (pyparts.strings_exactly): a line's scope still comes from the pieces around it,
    and is the whole parse's. Each case once more with one triple quote more in a string: an even count,
    so a scan left without a closing quote does not give it away."""
    for variant in (text, text + b"QUOTE2 = '\"\"\"'\n"):
        assert _parses(variant) and not scopes._plain_strings(variant)
        assert scopes._lazy(variant) is not None
        _check(variant)
        _check(MODULE.encode() + variant)


@pytest.mark.parametrize("text", [
    b"d = {'k': '''\nclass Generated:\n    def m(self): pass\n'''}\ndef g(): return 2\n",
    b'pytester.makepyfile(**{"tests/conftest.py": """\nclass Generated:\n    def m(self): pass\n"""})\n'
    b'def g(): return 2\n',
    b'a = """x""" + """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = "#, \\"q\\"" + r\'\\\'\' + """\nclass Generated:\n    pass\n"""  # "\ndef g(): return 2\n',
    b'x = f"{y}"\nT = f"""\nclass Generated:\n    {y}\n"""\ndef g(): return 2\n',
    b'x = f"{y}" + """\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
])
def test_strings_before_triple_quotes_on_their_line_keep_the_pieces(text: bytes) -> None:
    """Strings that close and code before a triple quote on its line (pytester's `{"name.py": <three quotes>`)
    do not make it doubtful: the scan of that line finds it in code, so a line's scope still comes from the
    pieces around it, and is the whole parse's."""
    assert _parses(text) and scopes._plain_strings(text)
    _check(text)
    _check(MODULE.encode() + text)


def _multiline_field(methods: int = 25) -> bytes:
    """A long class whose method returns a one-quote f-string with a replacement field over three lines at
    the class body's indentation (Python 3.12): the line `    1` looks like a statement of the class."""
    body = "".join(f"    def m{n}(self):\n        return {n}\n" for n in range(methods))
    return ("class Long:\n" + body + '    def m(self):\n        return f"{\n    1\n    +\n    2}"\n'
            + body.replace("def m", "def k")).encode()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the f-string grammar of Python 3.12 (PEP 701)")
@pytest.mark.parametrize("text", [
    b'x = f"""{\'"""\'}\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = f"{"a"}" + \'\'\'\nclass Generated:\n    pass\n\'\'\'\ndef g(): return 2\n',
    b'x = f"""{\n1  # """\n}\nclass Generated:\n    pass\n"""\ndef g(): return 2\n',
    b'x = f"""{"""a""" + str(\n)}\nclass Generated:\n    pass\n"""\ny = """\n"""\ndef g(): return 2\n',
    b'x = f"{\n1  # }"\n}"\nclass Generated:\n    pass\n',
    b'x = rf"\\{"""\nclass A:\n    def m(self): pass\n"""}"\n',
    _multiline_field(),
])
def test_formatted_strings_with_quotes_or_line_ends_in_their_fields_give_the_whole_parse_scopes(
        text: bytes) -> None:
    """From Python 3.12 a replacement field may hold its f-string's own quotes, a comment or line ends
    (PEP 701): the scan of the triple quotes alone would close a string inside a field, or cut a piece
    inside a one-quote string (`_multiline_field`: `    1` was Long's, not Long.m's). A file with a formatted
    string takes the tokenizer's strings, or the whole parse where that scan is unsure."""
    assert _parses(text)
    _check(text)
    _check(MODULE.encode() + text)


@pytest.mark.parametrize("text", [
    b"# -*- coding: latin-1 -*-\nclass A:\n    def f(self): return '\xe9'\n",
    b"\xef\xbb\xbfclass A:\n    def f(self): pass\n",
    b"class A:\r\n    def f(self):\r\n        pass\r\n\r\ndef g(): pass\r\n",
    b"class A:\r    def f(self):\r        pass\rdef g(): pass\r",
    b"class A:\n    def f(self): pass\n\x0c\ndef g(): pass\n",
    b"def f(): pass\ndef g(): return 1",
    b"x = '''\ndef f(): pass\n",
    b"def f():\n    pass\n\x00\n",
    b"def f(\n",
    b"",
    b"\n\n# only a comment\n",
    b"class A:\n\tdef f(self):\n\t\tpass\n\n\tdef g(self):\n        pass\n",
    b"from __future__ import barry_as_FLUFL\ndef f(): return 1 <> 2\n",
    b"def \xff(): pass\n",
])
def test_edge_files_give_the_whole_parse_spans(text: bytes) -> None:
    _check(text)
    long = text + MODULE.encode() if not text.endswith((b"(\n", b"'''\ndef f(): pass\n")) else MODULE.encode() + text
    _check(long)


def test_a_changed_method_reparses_only_its_piece() -> None:
    base = MODULE.encode()
    _forget()
    assert spans(base) == reference(base)
    before = dict(scopes.stats)
    changed = base.replace(b"return x + 7\n", b"return x - 7\n\n    def added(self):\n        pass\n", 1)
    assert spans(changed) == reference(changed)
    assert scopes.stats["whole"] == before.get("whole", 0)
    assert scopes.stats["pieces"] - before["pieces"] <= 2       # the method's piece, its class's header at most
    moved = b"import sys\n\n\n" + changed                          # every line moves: the pieces are the same
    before = dict(scopes.stats)
    assert spans(moved) == reference(moved)
    assert scopes.stats["pieces"] - before["pieces"] <= 1 and scopes.stats["whole"] == before["whole"]


def test_a_class_whose_body_pieces_fail_late_is_parsed_as_one_piece() -> None:
    """Methods, then a list whose items sit at the body's indentation (a cut there does not parse): the
    class is parsed whole, and the spans of the methods before it are given once."""
    items = "    ITEMS = [\n    'item',\n    ]\n"
    text = long_class("Late", 30).replace("    def m20(", items + "\n    def m20(").encode()
    _forget()
    whole = scopes.stats["whole"]
    assert _check(text)
    assert [s[2] for s in spans(text)].count("Late.m3") == 1
    assert scopes.stats["whole"] == whole                     # the class, not the file


def test_a_short_class_with_the_text_of_a_long_classs_header() -> None:
    """`class A:` + `pass` is both a short class's piece and what a long class A's header is parsed as."""
    text = ("class A:\n    pass\nX = 1\n\n\n" + long_class("A", 30).replace("(Base)", "")).encode()
    _forget()
    assert _check(text)
    assert _check(b"\n\n" + text[text.index(b"X = 1"):] + text[:text.index(b"X = 1")])


def test_the_piece_memo_restarts_at_its_size_and_answers_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scopes, "_PIECES_MAX", 400)
    base = MODULE.encode()
    assert spans(base) == reference(base)
    kept = [*scopes._bodies, *scopes._headers]
    assert 0 < sum(map(len, kept)) <= 400 + max(map(len, kept))
    assert spans(base) == reference(base)


def test_a_line_parses_only_the_pieces_around_it() -> None:
    """scope_of_line parses the module statement or long class holding the line and the body piece within,
    not the file's other pieces; the next line of the same method parses nothing more."""
    base = MODULE.encode()
    _forget()
    scopes._lazy.cache_clear()
    before = scopes.stats["pieces"]
    line = base.decode().splitlines().index("    def m7(self, x):") + 2
    assert scopes.scope_of_line(base, line) == "First.m7"
    assert scopes.stats["pieces"] - before == 2               # First's header and m7's piece
    assert scopes.scope_of_line(base, line - 1) == "First.m7"
    assert scopes.stats["pieces"] - before == 2
    assert len(spans(base)) > 100 and scopes.stats["pieces"] - before > 50     # the whole file: every piece


def test_a_line_plans_only_the_body_of_the_class_holding_it() -> None:
    """A long class's body is cut into pieces only when a line asks into it: a line of First.m7 plans
    First's body, not Second's, Nested's or Third's; a line of Second.Nested then plans Second's and
    Nested's. The whole-file spans plan every body, and answer as the whole parse."""
    base = MODULE.encode() + b"# one more line: a text no other test plans\n"
    scopes._lazy.cache_clear()
    before = scopes.pyparts.stats["bodies"]
    lines = base.decode().splitlines()
    assert scopes.scope_of_line(base, lines.index("    def m7(self, x):") + 2) == "First.m7"
    assert scopes.pyparts.stats["bodies"] - before == 1
    nested = lines.index("        def m3(self, x):") + 2
    assert scopes.scope_of_line(base, nested) == "Second.Nested.m3"
    assert scopes.pyparts.stats["bodies"] - before == 3
    assert scopes.scope_of_line(base, len(lines) - 2) == "Third.m44"      # Third's last method, planned now
    assert scopes.pyparts.stats["bodies"] - before == 4
    assert spans(base) == reference(base)


def test_a_syntax_error_elsewhere_leaves_a_lines_scope() -> None:
    """A file that does not parse (a newer grammar, a typo far away): the whole parse has no spans, so
    scope_at says nothing anywhere; scope_of_line still names the scope of a line whose pieces parse, and
    says nothing where they do not."""
    good = MODULE.encode()
    broken = good.replace(b"def helper():\n    return 1\n", b"def helper(:\n    return 1\n")
    assert not _parses(broken) and spans(broken) == ()
    line = good.decode().splitlines().index("    def m7(self, x):") + 2
    assert scopes.scope_at(broken, line) is None
    assert scopes.scope_of_line(broken, line) == "First.m7"
    at = broken.decode().splitlines().index("def helper(:") + 1
    assert scopes.scope_of_line(broken, at) is None and scopes.scope_of_line(broken, at + 1) is None
