"""Tree paths and path patterns as the manifest uses them (owns, excludes, supersedes paths, policy).

A pattern is a '/'-separated path inside the tree. It matches a path when it names the path itself,
a directory containing it (`vllm/worker` matches `vllm/worker/gpu_worker.py`), or matches it as a glob:
`*` and `?` stay inside one component, `**` spans any number of components, `[abc]` is a class (a literal
`[`, `*` or `?` is a class of one: `pages/[[]id].js` names `pages/[id].js`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")

_GLOB_CHARS = set("*?[")


def path_problem(path: str) -> str | None:
    """Return why PATH cannot name something inside a tree, or None when it can."""
    if not path:
        return "an empty path"
    if "\0" in path or "\n" in path:
        return "a path with a NUL or newline"
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
        return f"an absolute path ({path})"
    if "\\" in path:
        return f"a path with a backslash ({path}); use '/'"
    parts = path.rstrip("/").split("/")
    if any(part == ".." for part in parts):
        return f"a path that leaves the tree ({path})"
    if any(part in ("", ".") for part in parts):
        return f"a path with an empty or '.' component ({path})"
    if parts[0] == ".git" or any(part.lower() == ".git" for part in parts):
        return f"a path inside .git ({path})"
    return None


def normalize(path: str) -> str:
    return path.rstrip("/")


def is_glob(pattern: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in pattern)


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    pattern = normalize(pattern)
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]")  # a `[` in a class is literal
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    # a pattern also covers everything below what it names
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


def literal_pattern(path: str) -> str:
    """A pattern that names PATH itself, its glob characters each a class of one (`pages/[[]id].js`)."""
    return "".join(f"[{ch}]" if ch in _GLOB_CHARS else ch for ch in path)


def matches(pattern: str, path: str) -> bool:
    """True when PATTERN names PATH, a directory above it, or matches it as a glob."""
    return _compile(pattern).fullmatch(path) is not None


def matches_any(patterns: Iterable[str], path: str) -> bool:
    return any(matches(p, path) for p in patterns)


def first_match(patterns: Iterable[str], path: str) -> str | None:
    return next((p for p in patterns if matches(p, path)), None)


def overlaps(a: str, b: str) -> bool:
    """True when either pattern matches the other read as a path (they may name the same file)."""
    return matches(a, b) or matches(b, a)


def _prefixes(text: str) -> list[str]:
    """Return the leading component paths of TEXT: `a`, `a/b`, `a/b/c` for `a/b/c`."""
    parts = normalize(text).split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _stem(pattern: str) -> str:
    """Return the literal directory part of a pattern: the components before the first one with a glob."""
    parts = normalize(pattern).split("/")
    for n, part in enumerate(parts):
        if is_glob(part):
            return "/".join(parts[:n])
    return "/".join(parts)


class PatternIndex(Generic[T]):
    """Patterns added one by one, each with a value; finds the first added one that overlaps a new pattern.

    Comparing every pair is quadratic (3,000 carries owning two paths each: 18 million matches). A pattern
    only matches paths that start with its stem (the literal components before the first glob), so the
    index files each pattern under its stem and under every leading component path of its own text, and
    compares a new pattern only with the patterns those keys hold (and with the stemless globs).
    """

    def __init__(self) -> None:
        self._items: list[tuple[str, T]] = []
        self._by_stem: dict[str, list[int]] = {}
        self._by_prefix: dict[str, list[int]] = {}
        self._stemless: list[int] = []

    def add(self, pattern: str, value: T) -> None:
        """Add PATTERN with VALUE."""
        index = len(self._items)
        self._items.append((pattern, value))
        stem = _stem(pattern)
        (self._by_stem.setdefault(stem, []) if stem else self._stemless).append(index)
        for prefix in _prefixes(pattern):
            self._by_prefix.setdefault(prefix, []).append(index)

    def first_overlap(self, pattern: str) -> tuple[str, T] | None:
        """Return the earliest added (pattern, value) overlapping PATTERN, or None."""
        stem = _stem(pattern)
        if not stem:
            candidates: Iterable[int] = range(len(self._items))
        else:
            found = set(self._stemless)
            for prefix in _prefixes(pattern):        # those that match PATTERN: their stem leads its text
                found.update(self._by_stem.get(prefix, ()))
            found.update(self._by_prefix.get(stem, ()))  # those PATTERN matches: their text starts with its stem
            candidates = sorted(found)
        for index in candidates:
            other, value = self._items[index]
            if overlaps(other, pattern):
                return other, value
        return None


def glob_problem(pattern: str) -> str | None:
    """Why PATTERN is not a usable path pattern, or None."""
    problem = path_problem(pattern)
    if problem:
        return problem
    try:
        _compile(pattern)
    except re.error as exc:
        return f"an invalid pattern ({pattern}: {exc})"
    return None
