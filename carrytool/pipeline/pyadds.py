"""What a hunk's lines add to a Python module, read from the lines alone: names a `def`/`class` line defines
and constant keys a dict display writes. Landing asks both of every hunk it lands in a `.py` file, to pick
the files its parsing checks (pipeline.shadowed, pipeline.dictkeys) then read; those checks, and the
parsing code under them, are imported only when a hunk adds one (a sync of PRs that add neither loads none
of them)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

# a name's bytes: ASCII letters, digits, `_`, and any byte of a UTF-8 letter (helper-111: `def été()`)
DEF_LINE = re.compile(rb"^([ \t]*)(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)", re.M)

# a constant key written before a `:`, at a line's start or after `{` or `,`: a plain string literal (no escapes), an integer, a one-line tuple
KEY = re.compile(rb"""(?:^|[{,])[ \t]*((?:[bBuU]?(['"])(?:(?!\2)[^\\\n])*\2)|\d+|\([^()\n]*\))[ \t]*:(?!=)""",
                 re.M)


def written_keys(lines: Sequence[bytes]) -> frozenset[object]:
    """The constant keys LINES (a hunk's added or removed lines) seem to write, by value."""
    return frozenset(_values(b"\n".join(lines))) if any(b":" in line for line in lines) else frozenset()


def adds_key(added: Sequence[bytes], removed: Sequence[bytes] = ()) -> bool:
    """Whether ADDED writes a key that REMOVED (the same hunk's) did not."""
    new = written_keys(added)
    return bool(new) and not new <= written_keys(removed)


def _values(data: bytes) -> Iterator[object]:
    for match in KEY.finditer(data):
        value = _literal(match.group(1))
        if value is not None:
            yield value


def _literal(token: bytes) -> object:
    try:
        value = ast.literal_eval(token.decode("utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return None
    return value if _is_key(value) else None


def _is_key(value: object) -> bool:
    if isinstance(value, tuple):
        return all(_is_key(v) for v in value)
    return isinstance(value, (str, bytes, int)) and not isinstance(value, bool)


def defined_names(lines: Sequence[bytes]) -> frozenset[str]:
    """The names LINES (a hunk's added or removed lines) define with a `def`/`class` line."""
    if not any(b"def" in line or b"class" in line for line in lines):
        return frozenset()
    return frozenset(_name(m.group(2)) for m in DEF_LINE.finditer(b"\n".join(lines)))


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def adds_definition(added: Sequence[bytes], removed: Sequence[bytes] = ()) -> bool:
    """Whether ADDED defines a name that REMOVED (the same hunk's) did not: a new definition, not a def line
    rewritten."""
    new = defined_names(added)
    return bool(new) and not new <= defined_names(removed)
