"""JSON as `json.dumps(obj, indent=2)` writes it, character for character, in about half the time.

CPython's json module (before 3.14) uses its C encoder only when no indent is asked for; with one it
falls back to a Python generator per value (8 ms for a 300-entry sync's 0.14 MB report, 1.5 ms for its
lock). Here strings go through the C string encoder and the nesting is written by one recursive function.
A value it does not know (a float, a non-string key, a custom type) hands the whole document to json
itself, so the text is always json's.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

_CONSTANTS = {True: "true", False: "false", None: "null"}
CHUNK = 4096          # pieces joined at a time


class _Unknown(Exception):
    """A value the fast path does not write: json.dumps writes the whole document."""


def indented(obj: Any, *, ensure_ascii: bool = True) -> str:
    """`json.dumps(OBJ, indent=2, ensure_ascii=ENSURE_ASCII)`: the same text."""
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list[str] = []
    put = parts.append
    chunks: list[str] = []      # PARTS joined every CHUNK pieces: a piece is some 70 bytes of objects for a
    # dozen characters, so a 19 MB explain (helper-96: 60 polars PRs) held 120 MB of them at once

    def flush() -> None:
        if len(parts) > CHUNK:
            chunks.append("".join(parts))
            parts.clear()

    def write(value: Any, pad: str) -> None:
        kind = type(value)
        if kind is str:
            put(quote(value))
        elif kind is dict:
            if not value:
                put("{}")
                return
            inner = pad + "  "
            opening = "{\n"
            for key, item in value.items():
                if type(key) is not str:
                    raise _Unknown
                put(opening + inner + quote(key) + ": ")
                opening = ",\n"
                write(item, inner)
            flush()
            put("\n" + pad + "}")
        elif kind is list or kind is tuple:
            if not value:
                put("[]")
                return
            inner = pad + "  "
            opening = "[\n"
            for item in value:
                put(opening + inner)
                opening = ",\n"
                write(item, inner)
                flush()
            put("\n" + pad + "]")
        elif kind is int:
            put(int.__repr__(value))
        elif kind is bool or value is None:
            put(_CONSTANTS[value])
        else:
            raise _Unknown

    try:
        write(obj, "")
    except (_Unknown, RecursionError):
        return json.dumps(obj, indent=2, ensure_ascii=ensure_ascii)
    chunks.append("".join(parts))
    return "".join(chunks)
