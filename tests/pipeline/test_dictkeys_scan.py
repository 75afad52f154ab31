"""The duplicate-key scan tells apart writes of a key that a `def` or `class` line separates (they cannot be in one
dict display): a file whose only repeated keys are such is not parsed. The report is the same either way
(`SEPARATE_DISPLAYS` off: every file with a key written by two sides is parsed); a string that may carry a
line over (a triple quote, a backslash before a line end) keeps the writes together."""

from __future__ import annotations

import pytest

from carrytool.pipeline import dictkeys, shadowed
from carrytool.pipeline.dictkeys import _suspect
from tests.conftest import Cli, Small

PR1 = ("pr/1", frozenset())


def _scan(text: str, owned: dict[int, tuple[str, frozenset]], monkeypatch: pytest.MonkeyPatch) -> tuple[bool, bool]:
    """(the scan's verdict, the verdict with separation off) for TEXT."""
    data = text.encode()
    monkeypatch.setattr(dictkeys, "SEPARATE_DISPLAYS", False)
    whole = _suspect(data, owned)
    monkeypatch.setattr(dictkeys, "SEPARATE_DISPLAYS", True)
    return _suspect(data, owned), whole


TWO_FUNCTIONS = "def f():\n    return {\n        'x': 1,\n    }\n\n\ndef g():\n    return {'x': 2}\n"


@pytest.mark.parametrize(("text", "owned", "suspect"), [
    (TWO_FUNCTIONS, {3: PR1}, False),                                       # a def line between: two displays
    (TWO_FUNCTIONS, {8: PR1}, False),                                       # the landed write the later one
    (TWO_FUNCTIONS.replace("def g", "async def g"), {3: PR1}, False),
    ("class A:\n    D = {'x': 1}\n\n    def m(self):\n        return {'x': 2}\n", {2: PR1}, False),
    ("A = {'x': 1}\nclass B:\n    pass\nC = {'x': 2}\n", {4: PR1}, False),
    ("D = {\n    'x': 1,\n    'y': 2,\n    'x': 3,\n}\n", {2: PR1}, True),       # one display, nothing between
    ("D = {\n    'x': 1,\n    # def f(): a comment\n    'x': 3,\n}\n", {2: PR1}, True),
    ("D = {\n    'x': '''\ndef f():\n''',\n    'x': 3,\n}\n", {2: PR1}, True),  # the def line is in a string
    ('D = {\n    "x": """\n    class A:\n""",\n    "x": 3,\n}\n', {5: PR1}, True),
    ("D = {\n    'x': 'a\\\ndef f(): b',\n    'x': 3,\n}\n", {2: PR1}, True),    # a backslash carries the string
    ("D = {\n    'x': 'a\\\r\ndef f(): b',\n    'x': 3,\n}\n", {2: PR1}, True),
    ("D = {'x': 1}\ndefault = 2\nE = {'x': 3}\n", {1: PR1}, True),            # `default` is no def
    ("D = {'x': 1}\n'''doc'''\ndef f():\n    return {'x': 2}\n", {1: PR1}, True),  # a triple quote before the def
    ("def f():\n    return {'x': 1}\ndef g():\n    return {'x': 2, 'y': 3}\nY = {'y': 4}\n", {2: PR1, 4: PR1}, True),
])
def test_the_scan_keeps_together_what_may_be_one_display(text: str, owned: dict, suspect: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    separated, whole = _scan(text, owned, monkeypatch)
    assert whole, "each case writes a key twice by two sides: the scan without separation parses it"
    assert separated is suspect


def test_a_later_write_by_another_side_beyond_one_by_the_same_side_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writes after the first by another side: each write is weighed against the nearest later one by
    another side, past any by its own."""
    text = "D = {\n    'x': 1,\n    'x': 2,\n    'x': 3,\n}\ndef f():\n    return {'x': 4}\n"
    assert _scan(text, {2: PR1, 3: PR1}, monkeypatch) == (True, True)          # line 4: upstream's, one display
    assert _scan(text, {2: PR1, 3: PR1, 4: PR1}, monkeypatch) == (False, True)  # only line 7's is upstream's


CASE = "def case_{n}():\n    return {{\n        'x': {n},\n        'y': {n},\n    }}\n\n\n"
MODULE = "".join(CASE.format(n=n) for n in range(8)) + \
    "TABLE = {\n    'k': 0,\n    'doc': '''\ndef not_code():\n''',\n    'end': 0,\n}\n"


def _sync(cli: Cli, small: Small) -> dict:
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    return report


def test_the_report_is_the_same_with_displays_told_apart(cli: Cli, small: Small,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two PRs: one adds 'x' to a function's dict (upstream writes 'x' in every other function's: no warning),
    one adds 'k' again to TABLE, past a string holding a def line (one display: a warning). Told apart, only
    the second file is parsed; the reports are the same."""
    small.base = small.up.commit({"cases.py": MODULE, "table.py": MODULE}, "modules", parent="main",
                                 ref="refs/heads/main")
    small.pr(1, {"cases.py": MODULE.replace("        'y': 3,\n", "        'y': 3,\n        'z': 3,\n        'x': 30,\n")
                 .replace("        'x': 3,\n", "")})
    small.pr(2, {"table.py": MODULE.replace("    'end': 0,\n", "    'k': 1,\n    'end': 0,\n")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    parsed: list[bool] = []      # of each file parsed: whether it is cases.py
    parse = shadowed.parse_module
    monkeypatch.setattr(shadowed, "parse_module", lambda data: parsed.append(b"'x': 30" in data) or parse(data))
    told = _sync(cli, small)
    parsed_told = len(parsed)
    monkeypatch.setattr(dictkeys, "SEPARATE_DISPLAYS", False)
    whole = _sync(cli, small)
    assert told == whole
    assert [e["status"] for e in told["entries"]] == ["applied", "applied"], told
    [warning] = [w for w in told["warnings"] if w["kind"] == "duplicate-key"]
    assert (warning["file"], warning["key"], warning["by"]) == ("table.py", "'k'", ["upstream", "pr/2"]), warning
    assert parsed[:parsed_told] == [False] and sorted(parsed[parsed_told:]) == [False, True], parsed  # table.py; both


def _parsed(data: bytes) -> bool:
    module = shadowed.parse_module(data)
    return module is not None and bool(dictkeys._found(module))


# a triple quote, a backslash, written in UTF-7's own way (`+ACIAIgAi-` is `"""`): Python reads the file in the
# encoding its coding line names, the scan reads bytes
UTF7 = "# coding: utf-7\nD = {\n    'k': 1,\n    'v': +ACIAIgAi-\ndef f():\n+ACIAIgAi-,\n    'k': 2,\n}\n"


@pytest.mark.parametrize(("text", "line"), [
    (UTF7, 3),
    (UTF7.replace("+ACIAIgAi-\ndef f():\n+ACIAIgAi-", "'a+AFw-\ndef f(): b'"), 3),     # a backslash: `+AFw-`
    ("#!/usr/bin/env python\n" + UTF7.replace("# coding: utf-7", "# vim: set fileencoding=utf-7 :"), 4),
])
def test_a_def_line_in_a_string_python_decodes_is_no_barrier(text: str, line: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """h246: a file in an encoding whose bytes hide a triple quote or a backslash (UTF-7) holds its def line in a
    string, one display: the parse finds the key twice, so the scan must not say the writes apart."""
    assert _parsed(text.encode()), "the full parse finds the duplicate key"
    owned = {line: PR1}
    assert _scan(text, owned, monkeypatch) == (True, True)


def test_an_encoding_that_writes_ascii_as_ascii_keeps_the_barrier(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# -*- coding: latin-1 -*-\n" + TWO_FUNCTIONS
    assert _scan(text, {4: PR1}, monkeypatch) == (False, True)
