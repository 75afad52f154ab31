"""What one line of Python does (pipeline.lineroles), table-driven (h225)."""
from __future__ import annotations

import pytest

from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.lineroles import (
    aliases_of,
    does_something,
    leading_roles,
    line_carries,
    only_comments,
    opened_at,
    quotes_open,
    reads_of,
    roles_of,
)


@pytest.mark.parametrize(("line", "roles"), [
    (b"    X = log(bb, send_report=False)\n", {("assign", "X"), ("call", "log"), ("keyword", "send_report")}),
    (b"send_report = None", {("assign", "send_report")}),
    (b"self.send_report = d", {("assign", "self.send_report")}),
    (b"# send_report(d, 'weekly') later", {("comment", "")}),
    (b"reporting.send_report(dd, period='weekly')", {("call", "send_report"), ("keyword", "period")}),
    (b"x = 'send_report(d)'  # log(x)", {("assign", "x")}),                 # strings and comments: no calls
    (b"timeout=3,", {("keyword", "timeout")}),                              # a fragment of a call
    (b"x: int = f(3)", {("assign", "x"), ("call", "f")}),
    (b"a, *b = g()", {("assign", "a"), ("assign", "b"), ("call", "g")}),
    (b"total += count", {("assign", "total")}),
    (b"f = lambda x=1: x", {("assign", "f")}),
    (b"@pytest.mark.parametrize('x', [f(1)])", {("decorator", "parametrize"), ("call", "f")}),
    (b"from a.b import (c as d, e)", {("import", "c"), ("import", "e")}),
    (b"import numpy as np, os.path", {("import", "numpy"), ("import", "os.path")}),
    (b"def send_report(d, period='w'):", {("def", "send_report"), ("keyword", "period")}),
    (b"return send_report(d)", {("statement", "return"), ("call", "send_report")}),
    (b"if a == b:", {("statement", "if")}),
    (b"self.snap = self.state", {("assign", "self.snap"), ("value", "self.state")}),   # a value assigned alone
    (b"'weekly',", set()),                                                  # no role: likeness decides
    (b'"""Send the report', set()),                                         # a string left open: unread
])
def test_roles_of_a_line(line: bytes, roles: set[tuple[str, str]]) -> None:
    assert roles_of(line) == roles


@pytest.mark.parametrize(("line", "roles"), [
    (b"X = log(bb, send_report(dd, 'weekly'))", {("assign", "X"), ("call", "log")}),
    (b"reporting.send_report(dd, period=str(dd)).wait()", {("call", "send_report"), ("call", "wait")}),
    (b"return f(g(x))", {("statement", "return"), ("call", "f")}),
])
def test_leading_roles_leave_out_calls_inside_brackets_and_keywords(line: bytes, roles: set[tuple[str, str]]) -> None:
    assert leading_roles(line) == roles


def test_reads_are_the_dotted_names_a_line_neither_calls_nor_assigns() -> None:
    assert reads_of(b"self.v1 = keep(10, self.state)") == {("value", "self.state")}
    assert reads_of(b"self.send_report = d.x.run(a.b)") == {("value", "a.b")}


def _adds(path: str, *lines: bytes) -> Hunk:
    return Hunk(path, 3, 0, 4, len(lines), added=lines)


@pytest.mark.parametrize(("path", "carries"), [("m.py", False), ("notes.txt", True)])
def test_a_line_only_naming_a_call_carries_it_in_python_only(path: str, carries: bool) -> None:
    # outside Python, likeness of text alone, as before
    dropped, kept = _adds(path, b"    send_report(d, 'weekly')"), _adds(path, b"    X = log(b)")
    assert line_carries(b"    send_report = None", dropped, [kept]) is carries


def test_a_string_left_open_holds_the_rest_of_its_line_and_the_lines_after_it() -> None:
    # h232: a docstring's lines were read as code (`send_report(dd, 'weekly') is ...` a call of it), and a line
    # opening a string not read at all (likeness of text decided)
    lines = [b'    """Later:', b"    send_report(dd, 'weekly') is the caller's.", b'    """', b"    f(x)"]
    assert opened_at(lines) == ["", '"""', '"""', ""]
    assert [roles_of(line, opened) for line, opened in zip(lines, opened_at(lines))] == [
        set(), set(), set(), {("call", "f")}]
    assert roles_of(b'send_report(dd, """weekly') == {("call", "send_report")}
    assert roles_of(b"x = 'a\\") == {("assign", "x")}
    assert opened_at([b"x = 'a\\", b"b' + g(y)"]) == ["", "'"]
    assert roles_of(b"b' + g(y)", "'") == {("call", "g")}
    assert opened_at([b"x = 'a", b"g(y)"]) == ["", ""]        # a quote no backslash continues ends at its line


@pytest.mark.parametrize(("dropped", "line"), [
    (b"    return send_report(d, 'weekly')", b"    return None"),          # the kind of statement alone
    (b"    send_report(d, str(d))", b"    label = str(dd)"),                # a call inside its brackets
    (b"    send_report(d, period='weekly')", b"    Y = fetch(dd, period='weekly')"),     # a keyword it passes
    (b"    send_report(d, 'weekly')", b"    \"send_report(dd, 'weekly')\","),           # its text, in a string
])
def test_a_line_sharing_only_what_a_call_does_aside_carries_it_not(dropped: bytes, line: bytes) -> None:
    # h232: each was read as the call re-expressed, the other PR's line sharing nothing with it
    assert line_carries(line, _adds("m.py", dropped), [_adds("m.py", b"    X = log(b)")]) is False


@pytest.mark.parametrize(("added", "line"), [
    (b"    timeout=3,", b"    timeout=5,"),                  # a fragment of a call does no more than pass it
    (b"    if weekly:", b"    if weekly2:"),                  # a statement doing nothing named
    (b"    self.snap = self.state", b"    self.v1 = keep(10, self.state)"),
])
def test_a_line_sharing_what_a_line_does_without_naming_anything_carries_it(added: bytes, line: bytes) -> None:
    assert line_carries(line, _adds("m.py", added), [_adds("m.py", b"    X = log(b)")]) is True


@pytest.mark.parametrize(("lines", "inert"), [
    ([b"    # log later"], True),
    ([b'    """log later"""'], True),                          # h232: a string standing alone does nothing either
    ([b'    """Later:', b"    X = log()", b'    """'], True),  # a docstring's lines
    ([b"    # log", b'    "later"'], True),
    ([b"    'weekly',"], False),                               # an item of a list
    ([b"    X = log()  # later"], False),
])
def test_comments_and_strings_alone_do_nothing(lines: list[bytes], inert: bool) -> None:
    assert only_comments(lines, "m.py") is inert


def test_a_docstrings_line_read_alone_does_nothing_a_call_does() -> None:
    assert not does_something(_adds("m.py", b"    Sends the weekly report."))
    assert not does_something(_adds("m.py", b"    # log later"))
    assert does_something(_adds("m.py", b"    X = log()"))


@pytest.mark.parametrize("path", ["m.py", "data.json"])
def test_likeness_of_very_long_lines_compares_their_ends_only(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # h232: two 10,000-character lines (minified data, a generated table) cost difflib's ratio ~30 s a pair on the
    # CI machine, several pairs a hunk: one scenario's explain took 56 s, another's 140 s; the ends of such lines
    # are compared. Not timed: what difflib is handed is measured (its cost is the product of the lengths)
    from carrytool.pipeline import lineroles

    handed: list[int] = []
    real = lineroles.SequenceMatcher

    def matcher(junk, one, two, autojunk):  # noqa: ANN001, ANN202
        handed.append(len(one) * len(two))
        return real(junk, one, two, autojunk=autojunk)

    monkeypatch.setattr(lineroles, "SequenceMatcher", matcher)
    lineroles._ratio.cache_clear()
    long = "'" + "x" * 10000 + "',"
    dropped = _adds(path, long.encode())
    line = (long[:5000] + "y" + long[5000:]).encode()
    assert line_carries(line, dropped, [_adds(path, b"    X = log(b)")]) is True
    assert handed and max(handed) <= 400 * 400, handed      # the ends of each: 400 bytes, not 10,000


@pytest.mark.parametrize(("dropped", "line", "carries"), [
    (b"    errors.append(d)", b"    names.append(dd)", False),          # another object's method (h235)
    (b"    self.errors.append(d)", b"    self.names.append(dd)", False),
    (b"    errors.append(d)", b"    self.errors.append(dd)", True),      # the same attribute, reached otherwise
    (b"    errors[0].append(d)", b"    errors.append(dd)", False),      # an item of it is another object
    (b"    get_errors().append(d)", b"    get_errors().append(dd)", True),
    (b"    ', '.join(d)", b"    '-'.join(dd)", True),                  # a string's method, any string
    (b"    send_report(d, 'weekly')", b"    reporting.send_report(dd, 'weekly')", True),   # either names none
    (b"    send_report(d, 'weekly')", b"    send_report(dd)", False),  # an argument dropped (h235)
    (b"    X2 = send_report(d, 'weekly')", b"    X2 = send_report(dd)", False),
    (b"    send_report(d, 'weekly')", b"    send_report(dd, period='weekly')", True),
    (b"    send_report(d, 'weekly')", b"    send_report(*args)", True),          # a star: any number
    (b"    send_report(d, 'weekly')", b"    send_report(dd,", True),            # not closed here: not counted
    (b"    send_report(d, g(a, b), c,)", b"    send_report(d, x, c)", True),    # commas inside and trailing
    (b"    run(lambda a, b: a, d)", b"    run(lambda: 1, dd)", True),          # a lambda's parameters
])
def test_a_call_carries_one_on_the_same_object_with_no_fewer_arguments(dropped: bytes, line: bytes,
                                                                       carries: bool) -> None:
    assert line_carries(line, _adds("m.py", dropped), [_adds("m.py", b"    X = log(b)")]) is carries


def test_the_strings_a_files_lines_start_in() -> None:
    source = b'def f():\n    """Sets.\n\n    send_report(d)\n    """\n    x = 1\n    s = \'\'\'a\n    b\'\'\'  # """\n'
    assert quotes_open(source) == {3: '"""', 4: '"""', 5: '"""', 8: "'''"}
    assert quotes_open(b'x = """open\nsend_report(d)\n') == {}              # unsure: none


def test_a_hunk_is_read_from_the_string_its_file_has_open_where_it_starts() -> None:
    # h235: a line of a docstring opened above the hunk was read as code; so too a PR's line
    line, dropped = b"    send_report(dd, 'weekly') is the caller's.", _adds("m.py", b"    send_report(d, 'weekly')")
    kept = _adds("m.py", b"    X = log(b)")
    assert line_carries(line, dropped, [kept]) is True
    assert line_carries(line, dropped, [kept], '"""') is False
    assert only_comments([line, b'    """'], "m.py", '"""') and not only_comments([line, b'    """'], "m.py")
    documented, other = _adds("m.py", b"    X = log() is done first."), _adds("m.py", b"    Z = other(b)")
    assert not does_something(documented, '"""') and does_something(documented)
    assert line_carries(b"    X = log(bb)", documented, [other]) is True            # read as the PR's code
    assert line_carries(b"    X = log(bb)", documented, [other], "", lambda h: '"""' if h is documented else "") \
        is False                                                    # its text: more akin to the other's


def test_a_name_the_unions_hunk_binds_to_a_function_calls_it() -> None:
    # h235: `sr = send_report` then `sr(dd, 'weekly')` was warned a drop of `send_report(d, 'weekly')`
    lines = [b"    sr = reporting.send_report", b"    add = names.append  # later", b"    x = f()", b"    n = None"]
    assert aliases_of(lines, "m.py") == {"sr": ("send_report", "reporting"), "add": ("append", "names")}
    assert aliases_of(lines, "m.txt") == {} and aliases_of(lines[:1], "m.py", '"""') == {}
    dropped, kept = _adds("m.py", b"    send_report(d, 'weekly')"), _adds("m.py", b"    X = log(b)")
    aliases = aliases_of(lines, "m.py")
    assert line_carries(b"    sr(dd, 'weekly')", dropped, [kept], aliases=aliases) is True
    assert line_carries(b"    sr(dd, 'weekly')", dropped, [kept]) is False
    assert line_carries(b"    obj.sr(dd, 'weekly')", dropped, [kept], aliases=aliases) is False    # obj's own sr
    assert line_carries(b"    add(dd)", _adds("m.py", b"    errors.append(d)"), [kept], aliases=aliases) is False
