"""The verdict of one check and the small phrases every check's message is built from."""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

_SPACES = re.compile(r"\s+")
_CODE_WIDTH = 48
_TEXT_WIDTH = 60


class Verdict(NamedTuple):
    """What a check found: whether it holds, why (one sentence), and the line it is about."""

    ok: bool
    message: str
    line: int | None = None


def passed(message: str, line: int | None = None) -> Verdict:
    """Return a holding verdict."""
    return Verdict(True, message, line)


def failed(message: str, line: int | None = None) -> Verdict:
    """Return a failing verdict."""
    return Verdict(False, message, line)


def short_code(node: ast.AST | None) -> str:
    """Return `node` as one line of source, shortened so that a message stays readable."""
    if node is None:
        return ""
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        # Hand-built or exotic nodes: a message without the code beats no message.
        return "..."
    return shorten(_SPACES.sub(" ", text).strip(), _CODE_WIDTH)


def shorten(text: str, width: int) -> str:
    """Return `text` cut to `width` characters, marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def quote_text(text: str) -> str:
    """Return a text-check target as it appears in a message: backticked, one line, bounded."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return f"`{shorten(flat, _TEXT_WIDTH)}`"


def times(count: int) -> str:
    """Return "1 time" / "N times"."""
    return "1 time" if count == 1 else f"{count} times"


def called(count: int) -> str:
    """Return how often something is called, as a predicate: "never called", "called 2 times"."""
    return "never called" if count == 0 else f"called {times(count)}"


def count_paths(paths: int) -> str:
    """Return "1 path" / "N paths", without spelling out astronomically many."""
    if paths >= 1_000_000:
        return "over a million paths"
    return "1 path" if paths == 1 else f"{paths} paths"


def want_bounds(low: int | None, high: int | None) -> str:
    """Return the wanted count range as a phrase: "exactly 1", "at least 2", "between 1 and 3"."""
    if low is not None and high is not None:
        return f"exactly {low}" if low == high else f"between {low} and {high}"
    if low is not None:
        return f"at least {low}"
    return f"at most {high}"
