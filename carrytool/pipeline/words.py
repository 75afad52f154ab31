"""The words a change brings into a file: names and string literals its lines have that the file had nowhere
(pipeline.regions: a union line merging two PRs' changes carries each one's words, h215).

A word is a name of three characters or more (not a Python keyword or builtin: `print`, `self` and `None` say
nothing of whose change a line is) or a string literal's text of three characters or more (quotes aside);
bytes, read from every line, comments and strings included (a word the file has anywhere, even in a comment,
is not new). Pure functions over text.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

_WORD = re.compile(rb"""[A-Za-z_][A-Za-z0-9_]*|'([^'\n]*)'|"([^"\n]*)\"""")
_COMMON = frozenset(name.encode() for name in (*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"))


def words_of(lines: Iterable[bytes], *, code_only: bool = False) -> set[bytes]:
    """The words of LINES: names as they are, string literals' text prefixed by a quote (`'weekly`), so a name
    is no string's text. CODE_ONLY: what a `#` comment ends a line with left out (a `#` in a string aside)."""
    found: set[bytes] = set()
    for line in lines:
        for match in _WORD.finditer(_code(line) if code_only else line):
            text = match.group(1) if match.group(1) is not None else match.group(2)
            if text is not None:
                if len(text.strip()) >= 3:
                    found.add(b"'" + text)
            elif len(match.group(0)) >= 3 and match.group(0) not in _COMMON:
                found.add(match.group(0))
    return found


def _code(line: bytes) -> bytes:
    """LINE up to a `#` comment, quotes followed (a `#` in a string is no comment)."""
    quote = 0
    for at, char in enumerate(line):
        if quote:
            quote = 0 if char == quote else quote
        elif char in b"'\"":
            quote = char
        elif char == ord("#"):
            return line[:at]
    return line


def new_words(added: Iterable[bytes], *, known: Iterable[set[bytes]]) -> set[bytes]:
    """The words of ADDED lines (comments aside) none of KNOWN (words_of the file before, of the lines the
    change removes, of those other changes add) has: what the change brings that nothing else there does."""
    return words_of(added, code_only=True).difference(*known)
