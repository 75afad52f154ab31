"""Text checks for any file (C++, CUDA, YAML, Python, ...): `contains`, `absent`, `matches`.

The text is the file decoded as Python would decode it (else UTF-8, undecodable bytes replaced), with
line endings normalised to `\\n`. With a scope on a Python file the text is the scope's lines, from its
first decorator to its last line; same-named definitions are searched one after the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from carrytool.asserts.messages import Verdict, failed, passed, quote_text
from carrytool.asserts.pyscope import Scope, segment
from carrytool.asserts.source import SourceFile

Finder = Callable[[str], "int | None"]


def check_text(src: SourceFile, scope: Scope | None, check: str, target: str) -> Verdict:
    """Judge one text check; `scope` None (or the module scope) means the whole file."""
    prefix = scope.prefix if scope else ""
    where = scope.where if scope and scope.name else src.path
    located = scope.located(src) if scope and scope.name else src.path   # a failure says where to look
    shown = quote_text(target)
    if check == "matches":
        try:
            pattern = re.compile(target, re.MULTILINE)
        except re.error as exc:
            return failed(f"{prefix}invalid regex {shown}: {exc}")
        line = _first_line(src, scope, lambda text: _search(pattern, text))
        if line is None:
            return failed(f"{prefix}regex {shown} matches nothing in {located}", _line(scope))
        return passed(f"regex {shown} matches at {src.at(line)}", line)
    line = _first_line(src, scope, lambda text: _find(text, target))
    if check == "contains":
        if line is None:
            return failed(f"{prefix}{shown} is not in {located}", _line(scope))
        return passed(f"{shown} is present at {src.at(line)}", line)
    if line is not None:
        return failed(f"{prefix}{shown} is present at {src.at(line)} (want it absent)", line)
    return passed(f"{shown} is absent from {where}", _line(scope))


def _first_line(src: SourceFile, scope: Scope | None, find: Finder) -> int | None:
    """Return the line where `find` first succeeds in the scope's text, or None."""
    segments = [segment(src, node) for node in scope.nodes] if scope and scope.name else [(1, src.text)]
    for start, text in segments:
        offset = find(text)
        if offset is not None:
            return start + text.count("\n", 0, offset)
    return None


def _find(text: str, target: str) -> int | None:
    offset = text.find(target)
    return offset if offset >= 0 else None


def _search(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text)
    return found.start() if found else None


def _line(scope: Scope | None) -> int | None:
    return scope.line if scope else None
