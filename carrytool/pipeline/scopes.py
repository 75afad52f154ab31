"""Which function or class a line of Python sits in: qualified names (`Worker.wake_up`) from the AST."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import lru_cache

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")   # where statements nest, in source order


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and except/case clauses) directly inside NODE: a def or class is always one."""
    out: list[ast.AST] = []
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if isinstance(block, list):
            out += block
    return out


@lru_cache(maxsize=256)
def _spans(source: bytes) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, qualified name) of every def/class, outermost first; () when unparsable."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    out: list[tuple[int, int, str]] = []
    # Iterative pre-order walk: a 1,500-branch `elif` chain nests 1,500 deep and must not exhaust the stack.
    stack: list[tuple[ast.AST, str]] = [(child, "") for child in reversed(_statements(tree))]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, _DEFS):
            inner = f"{prefix}{node.name}"
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first, node.end_lineno or node.lineno, inner))
            inner += "."
        stack += [(child, inner) for child in reversed(_statements(node))]
    return tuple(out)


def scope_at(source: bytes, line: int) -> str | None:
    """The innermost def/class containing LINE (1-based), or None at module level."""
    best = None
    for first, last, name in _spans(source):
        if first <= line <= last:
            best = name
    return best


def scopes_in(source: bytes, first: int, last: int) -> set[str]:
    """Innermost scopes touched by lines FIRST..LAST; a pure insertion between lines uses FIRST."""
    found = set()
    for line in range(first, max(first, last) + 1):
        scope = scope_at(source, line)
        if scope:
            found.add(scope)
    return found


def is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def scope_names(path: str, source: bytes | None, lines: Iterable[tuple[int, int]]) -> list[str]:
    """Sorted scopes of PATH touched by the (first, last) line ranges; [] for non-Python files."""
    if source is None or not is_python(path):
        return []
    found: set[str] = set()
    for first, last in lines:
        found |= scopes_in(source, first, last)
    return sorted(found)
