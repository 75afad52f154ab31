"""Scopes of a Python file: the definitions it holds by qualified name, and the `in:` an assert names.

Qualified names join the names of enclosing classes and functions with dots (`Worker.wake_up`,
`Outer.Inner.method`, `outer.helper` for a function defined inside a function). Definitions inside
compound statements count where they stand: under `if TYPE_CHECKING:`, `try:`/`except`, `with`, loops
and `match` cases, at module level, in class bodies and in functions.

Several definitions with one qualified name (a property's getter and setter, `if`/`else` variants)
form one scope together, as alternatives: a path through any of them is a path through the scope, and
lexical checks look inside all of them. `@overload` stubs are left out when a real definition exists.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

from carrytool.asserts.source import SourceFile

DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Scope:
    """Where an assert looks: some definitions, or the whole module when `name` is None."""

    name: str | None
    nodes: tuple[ast.AST, ...]
    where: str  # how messages name it: the qualified name, or the file's path for the module

    @property
    def prefix(self) -> str:
        """Return the start of a failing message: `Worker.wake_up: `, or nothing for the module."""
        return f"{self.name}: " if self.name else ""

    @property
    def line(self) -> int | None:
        """Return the line of the (first) definition, None for the whole module."""
        return getattr(self.nodes[0], "lineno", None) if self.name else None


def definitions(src: SourceFile) -> dict[str, list[DefNode]]:
    """Return every definition of the file by qualified name, in source order (built once per file)."""
    def build() -> dict[str, list[DefNode]]:
        found: dict[str, list[DefNode]] = {}
        if src.tree is not None:
            _collect(src.tree.body, "", found)
        return found
    return src.memo("definitions", build)


def _collect(stmts: list[ast.stmt], prefix: str, found: dict[str, list[DefNode]]) -> None:
    # Iterative pre-order walk: a 1,500-branch `elif` chain nests 1,500 deep and must not exhaust the stack.
    stack: list[tuple[ast.stmt, str]] = [(stmt, prefix) for stmt in reversed(stmts)]
    while stack:
        stmt, where = stack.pop()
        if isinstance(stmt, _DEFS):
            qualname = where + stmt.name
            found.setdefault(qualname, []).append(stmt)
            stack += [(child, qualname + ".") for child in reversed(stmt.body)]
            continue
        stack += [(child, where) for block in reversed(compound_blocks(stmt)) for child in reversed(block)]


def compound_blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """Return the statement lists nested in a compound statement (if, try, with, loops, match)."""
    blocks = [getattr(stmt, field) for field in ("body", "orelse", "finalbody")
              if isinstance(getattr(stmt, field, None), list)]
    blocks += [handler.body for handler in getattr(stmt, "handlers", ())]
    blocks += [case.body for case in getattr(stmt, "cases", ())]
    return blocks


def resolve_scope(src: SourceFile, name: str | None) -> Scope | str:
    """Return the scope `name` designates in a parsed file, or a message saying it is not there."""
    assert src.tree is not None, "resolve_scope needs a parsed file"
    if not name:
        return Scope(None, (src.tree,), src.path)
    found = definitions(src).get(name.strip())
    if not found:
        return f"no scope {name} in {src.path} {suggest(name, list(definitions(src)))}"
    real = [node for node in found if not _is_overload(node)]
    return Scope(name.strip(), tuple(real or found), name.strip())


def suggest(name: str, defined: list[str]) -> str:
    """Return "(defined there: ...)" listing the names closest to `name`, in source order: of those in
    the class it names when that class is defined (`APIRoute.nope`: APIRoute's own, not APIRouter's)."""
    if not defined:
        return "(nothing is defined there)"
    owner = name.strip().rpartition(".")[0]
    pool = [d for d in defined if d.rpartition(".")[0] == owner] if owner in defined else []
    pool = pool or defined
    close = set(difflib.get_close_matches(name, pool, n=5, cutoff=0.6))
    listed = [candidate for candidate in pool if candidate in close] or pool[:5]
    more = ", ..." if len(pool) > len(listed) else ""
    return f"(defined there: {', '.join(listed)}{more})"


def _is_overload(node: DefNode) -> bool:
    return any((isinstance(d, ast.Name) and d.id == "overload")
               or (isinstance(d, ast.Attribute) and d.attr == "overload") for d in node.decorator_list)


def run_body(node: ast.AST) -> list[ast.stmt]:
    """Return the statements a scope runs: a definition's body, or the module's top level."""
    return list(getattr(node, "body", []))


def first_line(node: ast.AST) -> int:
    """Return the first line of a definition, counting its decorators."""
    lines: list[int] = [getattr(node, "lineno", 1)]
    lines += [decorator.lineno for decorator in getattr(node, "decorator_list", [])]
    return min(lines)


def segment(src: SourceFile, node: ast.AST) -> tuple[int, str]:
    """Return (first line, text) of a scope: whole lines, decorators included; the module is all text.

    Comments indented under the definition after its last statement belong to it too (the AST ends
    the definition at its last statement).
    """
    if isinstance(node, ast.Module):
        return 1, src.text
    start = first_line(node)
    end = last = getattr(node, "end_lineno", None) or start
    indent = _indent(src.line_text(getattr(node, "lineno", start)))
    while last < len(src.lines):
        text = src.line_text(last + 1)
        if text.strip() and not (text.lstrip().startswith("#") and _indent(text) > indent):
            break
        last += 1
        end = last if text.strip() else end
    return start, "\n".join(src.lines[start - 1:end])


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())
