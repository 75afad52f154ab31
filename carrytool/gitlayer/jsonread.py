"""JSON read back from the files and blobs carrytool keeps (locks, night records, fold states, resolution
records, caches, the repository lock), with one error for every way a text is not a JSON document.

`json.loads` refuses bad text with a ValueError (JSONDecodeError; UnicodeDecodeError for bytes that are not
UTF-8), but a document nested deeper than Python's reader recurses raises RecursionError, and one too large
to hold MemoryError: a hand-edited `[[[...` 100,000 deep ended commands in a traceback, exit 70 (h219, h228),
wherever a reader caught ValueError alone. Here all of them are ValueError, so a reader catches one error and
says, or ignores, one thing.
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


def read_json(path: Path) -> Any:
    """The JSON document in the file PATH, read as UTF-8; OSError when it cannot be read (FileNotFoundError
    when absent), ValueError when it is not a JSON document (load_json)."""
    return load_json(path.read_text(encoding="utf-8"))
