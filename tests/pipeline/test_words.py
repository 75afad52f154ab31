"""The words a change brings into a file (pipeline.words): names and strings, table-driven (h215)."""
from __future__ import annotations

import pytest

from carrytool.pipeline.words import new_words, words_of


@pytest.mark.parametrize(("line", "words"), [
    (b"report(log(bb), 'weekly')", {b"report", b"log", b"'weekly"}),     # `bb`: two characters
    (b"X = send_report(d, \"weekly\")", {b"send_report", b"'weekly"}),   # either quote: one string
    (b"if self.ready is None: print(len(xs))", {b"ready"}),              # keywords, builtins, self: nobody's
    (b"log = 'log'", {b"log", b"'log"}),                                  # a name is no string's text
    (b"x = f('ab', ' ')", set()),                                         # short strings say nothing
    (b"total = count  # weekly 'report'", {b"total", b"count", b"weekly", b"'report"}),
])
def test_words_of_a_line(line: bytes, words: set[bytes]) -> None:
    assert words_of([line]) == words


def test_code_only_leaves_a_comment_out_but_not_a_hash_in_a_string() -> None:
    assert words_of([b"total = count  # weekly 'report'"], code_only=True) == {b"total", b"count"}
    assert words_of([b"tag = '#weekly'  # note"], code_only=True) == {b"tag", b"'#weekly"}


def test_new_words_are_those_nothing_known_has() -> None:
    added = [b"    report(log(bb), 'weekly')  # summary"]
    assert new_words(added, known=[words_of([b"def report(): pass"])]) == {b"log", b"'weekly"}
