"""Untrusted text made safe to print: file names, titles, commit subjects and code come from PR authors.

Terminal text gets control characters (ANSI escapes, carriage returns, bidirectional overrides) shown as
escapes instead of acting on the terminal; Markdown gets its syntax escaped so a title cannot become a
link, a table column or raw HTML. Commands are quoted where they are built (`shlex`).
"""

from __future__ import annotations

import re
from typing import TextIO

# C0 controls but the newline, DEL, C1 controls, and the invisible marks that reorder displayed text
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~#!&])")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """Return TEXT with control characters shown as `\\xNN` escapes (newlines kept unless told)."""
    text = _UNSAFE.sub(_escape_char, text)
    return text if newlines else text.replace("\n", "\\n")


class PrintableStream:
    """A text stream that shows control characters of everything written to it as escapes."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(printable(text))

    def isatty(self) -> bool:
        return self.stream.isatty()


def md_text(text: str) -> str:
    """Return TEXT as literal Markdown on one line: no emphasis, link, HTML, table column or code span."""
    return _MARKDOWN.sub(r"\\\1", printable(text, newlines=False))


_SPAN = re.compile(r"`([^`]+)`")


def md_prose(text: str) -> str:
    """Return TEXT as Markdown on one line whose `code spans` stay code spans (md_code: nothing inside them can
    leave them) and whose other text is literal (md_text): a backtick escaped as `\\``, as md_text writes it,
    shows in GitHub Markdown as a backtick, not as code (h262)."""
    out, at = [], 0
    for span in _SPAN.finditer(text):
        out += [md_text(text[at:span.start()]), md_code(span.group(1))]
        at = span.end()
    return "".join(out) + md_text(text[at:])


def md_code(text: str) -> str:
    """Return TEXT as inline code that stays one table cell, whatever backticks or bars it holds."""
    text = printable(text, newlines=False)
    if not re.search(r"[`|<>&]", text):
        return f"`{text}`"
    # loaded here: most renderings never need it
    import html

    return "<code>" + html.escape(text).replace("|", "&#124;").replace("`", "&#96;") + "</code>"


def md_fence(lines: list[str], info: str = "") -> list[str]:
    """Return LINES as a fenced code block whose fence no line can close."""
    safe = [printable(line, newlines=False) for line in lines]
    longest = max((len(run) for line in safe for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *safe, fence]
