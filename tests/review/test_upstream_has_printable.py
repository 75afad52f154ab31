"""Which lines "upstream already has" may name (`_printable`: a command can print them): every character a tab
or printable, read as UTF-8. Checked against that rule character by character."""

from __future__ import annotations

import pytest

from carrytool.review.has_commit import _printable

LINES = [b"", b"x = 1", b"\tindented = 1", b"\t\t", b"a\tb", b"\x0b", b"tab\tand\x1b[0m escape", b"\r",
         b"caf\xc3\xa9", "non\u00a0breaking".encode(), "zero\u200bwidth".encode(), "emoji \U0001f600".encode(),
         "e\u0301".encode(), b"\xff not utf-8", b"\x00", "line\u2028sep".encode(), b"  # comment"]


def _by_character(line: bytes) -> bool:
    try:
        text = line.decode()
    except UnicodeDecodeError:
        return False
    return all(char == "\t" or char.isprintable() for char in text)


@pytest.mark.parametrize("line", LINES)
def test_printable_is_tab_or_printable_character_by_character(line: bytes) -> None:
    assert _printable(line) == _by_character(line)


def test_the_lines_tell_both_answers() -> None:
    assert {_by_character(line) for line in LINES} == {True, False}
    assert _printable(b"\tx") and not _printable(b"x\x0b")
