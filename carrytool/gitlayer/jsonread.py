"""JSON read back from the files and blobs carrytool keeps (locks, night records, fold states, resolution
records, caches, the repository lock), with one error for every way a text is not a JSON document.

`json.loads` refuses bad text with a ValueError (JSONDecodeError; UnicodeDecodeError for bytes that are not
UTF-8), but a document nested deeper than Python's reader recurses raises RecursionError, and one too large
to hold MemoryError: a hand-edited `[[[...` 100,000 deep ended commands in a traceback, exit 70 (h219, h228),
wherever a reader caught ValueError alone. Here all of them are ValueError, so a reader catches one error and
says, or ignores, one thing. A file too large to hold fails before json.loads sees it, in its read: that is
guarded too (h256: a lock of gigabytes was a MemoryError traceback, exit 70, from `read_text`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOO_DEEP = "nested too deep to read (not a file carrytool wrote)"
TOO_LARGE = "too large to read"


def load_json(data: str | bytes) -> Any:
    """The JSON document DATA (`json.loads`); ValueError, saying why, when DATA is not one: not JSON, not UTF-8,
    truncated, nested too deep or too large to read."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    except MemoryError:
        raise ValueError(TOO_LARGE) from None


def read_utf8(path: Path) -> str:
    """The text of the file PATH, read as UTF-8; OSError when it cannot be read (FileNotFoundError when absent),
    ValueError when it is not UTF-8 (UnicodeDecodeError) or too large to hold."""
    try:
        return path.read_bytes().decode("utf-8")
    except MemoryError:
        raise ValueError(TOO_LARGE) from None


def read_json(path: Path) -> Any:
    """The JSON document in the file PATH, read as UTF-8; OSError when it cannot be read (FileNotFoundError
    when absent), ValueError when it is not a JSON document (load_json) or too large to hold (read_utf8)."""
    return load_json(read_utf8(path))
