"""Scopes of a Python file: the definitions it holds by qualified name, and the `in:` an assert names.

Qualified names join the names of enclosing classes and functions with dots (`Worker.wake_up`,
`Outer.Inner.method`, `outer.helper` for a function defined inside a function). Definitions inside
compound statements count where they stand: under `if TYPE_CHECKING:`, `try:`/`except`, `with`, loops
and `match` cases, at module level, in class bodies and in functions.

Only a live definition is a scope: Python binds a name to the last definition in a body, so a plain
`def` (or an assignment, an import, a `del`) later in the same body, or in a body enclosing its block,
leaves an earlier one dead, with whatever is defined inside it (helper-115: a lost change hid behind
its replacement). Several live definitions with one qualified name (`if`/`else` and `try`/`except`
variants, a property's getter and setter, registered implementations: `bydesign`) form one scope
together, as alternatives: a path through any of them is a path through the scope, and lexical checks
look inside all of them. `@overload` stubs are left out when a real definition exists.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

from carrytool.asserts.bydesign import by_design, is_overload, overload_names
from carrytool.asserts.source import SourceFile

DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Scope:
    """Where an assert looks: some definitions, or the whole module when `name` is None."""

    name: str | None
    nodes: tuple[ast.AST, ...]
    where: str  # how messages name it: the qualified name, or the file's path for the module
    dead: tuple[str, ...] = ()  # why same-named definitions are not part of it ("... is redefined at ...")

    @property
    def prefix(self) -> str:
        """Return the start of a failing message: `Worker.wake_up: `, or nothing for the module."""
        return f"{self.name}: " if self.name else ""

    @property
    def line(self) -> int | None:
        """Return the line of the (first) definition, None for the whole module."""
        return getattr(self.nodes[0], "lineno", None) if self.name else None

    def located(self, src: SourceFile) -> str:
        """Return how a failure names the scope so an editor can jump there: `Worker.wake_up at m.py:2`, or
        the file's path for the module (helper-115: "never read in PrettyPrinter._print_Add" said not where)."""
        return f"{self.where} at {src.at(self.line)}" if self.name else self.where


@dataclass(frozen=True)
class Dead:
    """A definition that never runs as its name: NODE itself, or the definition enclosing it, is bound again
    later in its body."""

    node: DefNode      # the definition whose name is bound again (the dead one, or one enclosing it)
    line: int          # where
    how: str           # "redefined", "rebound" or "deleted"

    def said(self, src: SourceFile, qualname: str) -> str:
        """Return `Worker.wake_up at m.py:2 is redefined at m.py:6`, QUALNAME being NODE's."""
        return f"{qualname} at {src.at(self.node.lineno)} is {self.how} at {src.at(self.line)}"


def definitions(src: SourceFile) -> dict[str, list[DefNode]]:
    """Return every live definition of the file by qualified name, in source order (built once per file)."""
    return _definitions(src)[0]


def dead_definitions(src: SourceFile) -> dict[str, list[tuple[DefNode, Dead, str]]]:
    """Return the definitions that never run as their name, by qualified name: (node, why, the qualified
    name of the definition bound again)."""
    return _definitions(src)[1]


def _definitions(src: SourceFile) -> tuple[dict[str, list[DefNode]], dict[str, list[tuple[DefNode, Dead, str]]]]:
    def build() -> tuple[dict[str, list[DefNode]], dict[str, list[tuple[DefNode, Dead, str]]]]:
        live: dict[str, list[DefNode]] = {}
        dead: dict[str, list[tuple[DefNode, Dead, str]]] = {}
        if src.tree is not None:
            _collect(src.tree.body, _rebound(src.tree), live, dead)
        return live, dead
    return src.memo("definitions", build)


def _collect(stmts: list[ast.stmt], rebound: dict[int, tuple[int, str]], live: dict[str, list[DefNode]],
             dead: dict[str, list[tuple[DefNode, Dead, str]]]) -> None:
    # Iterative pre-order walk: a 1,500-branch `elif` chain nests 1,500 deep and must not exhaust the stack.
    stack: list[tuple[ast.stmt, str, tuple[Dead, str] | None]] = [(stmt, "", None) for stmt in reversed(stmts)]
    while stack:
        stmt, where, inside = stack.pop()
        if isinstance(stmt, _DEFS):
            qualname = where + stmt.name
            if inside is None and id(stmt) in rebound:
                inside = (Dead(stmt, *rebound[id(stmt)]), qualname)
            if inside is None:
                live.setdefault(qualname, []).append(stmt)
            else:
                dead.setdefault(qualname, []).append((stmt, *inside))
            stack += [(child, qualname + ".", inside) for child in reversed(stmt.body)]
            continue
        stack += [(child, where, inside) for block in reversed(compound_blocks(stmt)) for child in reversed(block)]


def _rebound(module: ast.Module) -> dict[int, tuple[int, str]]:
    """Return, by id, the definitions whose name their body binds again later, with (line, how): a plain
    `def`/`class` (not one several by design), an assignment that does not wrap the name (`f =
    staticmethod(f)` keeps it), an import or a `del`, in the same block or in a block enclosing it (in the
    same body). A binding inside an `if`/`try`/loop block may not run, so it leaves what came before."""
    overloads = overload_names(module)
    out: dict[int, tuple[int, str]] = {}
    todo: list[tuple[list[ast.stmt], dict[str, tuple[int, str]]]] = [(module.body, {})]
    while todo:   # iterative, as `_collect`
        stmts, later = todo.pop()
        after = dict(later)
        for stmt in reversed(stmts):
            if isinstance(stmt, _DEFS):
                # (an `@overload` stub is followed by its implementation by design)
                if stmt.name in after and not (after[stmt.name][1] == "redefined" and is_overload(stmt, overloads)):
                    out[id(stmt)] = after[stmt.name]
                if not by_design(stmt, overloads):
                    after[stmt.name] = (stmt.lineno, "redefined")
                todo.append((stmt.body, {}))
                continue
            todo += [(block, dict(after)) for block in compound_blocks(stmt)]
            after.update((name, (stmt.lineno, how)) for name, how in _binds(stmt))
    return out


def _binds(stmt: ast.stmt) -> list[tuple[str, str]]:
    """The names a simple statement binds again, with how ("rebound", "deleted")."""
    if isinstance(stmt, ast.Delete):
        return [(n.id, "deleted") for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name.split(".")[0], "rebound") for alias in stmt.names if alias.name != "*"]
    if isinstance(stmt, ast.Assign) or (isinstance(stmt, ast.AnnAssign) and stmt.value is not None):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        assert value is not None
        wrapped = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        return [(n.id, "rebound") for t in targets for n in ast.walk(t)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in wrapped]
    return []


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
    qualname = name.strip()
    found = definitions(src).get(qualname)
    dead = tuple(dict.fromkeys(why.said(src, whose) for _node, why, whose in dead_definitions(src).get(qualname, ())))
    if not found and dead:
        return f"{qualname}: {dead[0]}, so its code never runs (only the last binding of a name in a body counts)"
    if not found:
        return f"no scope {name} in {src.path} {suggest(name, list(definitions(src)))}"
    tree = src.tree
    overloads = src.memo("overloads", lambda: overload_names(tree))   # once a file, not once an assert (helper-119)
    real = [node for node in found if not is_overload(node, overloads)]
    return Scope(qualname, tuple(real or found), qualname, dead)


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
