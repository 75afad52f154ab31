"""What a statement binds at the top of its scope (names, assignment targets, `:=` names), and the
definitions of a body by scope: for the structured merge's gates (pipeline.pyparts) and the order rule
(pipeline.pyorder, pipeline.pycalls)."""

from __future__ import annotations

import ast
from collections import Counter

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

Key = tuple[str, str]
Defs = tuple[Counter, dict]          # (scope, name) -> count; (scope, name) -> lines (relative, 0-based)


def definitions_of(body: list[ast.stmt], scope: str = "", shift: int = 0, *, walrus: bool = True) -> Defs:
    """(scope, name) -> how often the name is bound at the top of that scope (defs, classes, imports,
    assignments, loop and `with` targets, `type` aliases; with WALRUS, names an `:=` binds: the caller
    knows whether its source has one), scopes qualified by their enclosing defs (`Worker.wake_up`), and
    the (first, last) lines (0-based) of each binding statement."""
    out: Counter = Counter()
    lines: dict[Key, list[tuple[int, int]]] = {}

    def visit(nodes: list[ast.stmt], scope: str) -> None:
        for node in nodes:
            for name in _bound(node) + (_walrus(node) if walrus else []):
                out[(scope, name)] += 1
                lines.setdefault((scope, name), []).append(
                    (node.lineno - 1 + shift, (node.end_lineno or node.lineno) - 1 + shift))
            if isinstance(node, _DEFS):
                visit(node.body, f"{scope}.{node.name}" if scope else node.name)
            else:
                for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in getattr(node, field_name, []) or []:
                        visit(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child],
                              scope)

    visit(body, scope)
    return out, lines


def _bound(node: ast.stmt) -> list[str]:
    """What NODE binds at the top of its scope: names, and the targets an assignment sets that are not
    names (`SETTINGS['mode']`, `self.timeout`: as `ast.unparse` writes them), each unpacked (`a, *b = ...`)
    (helper-83: an unpacked name or a subscript two insertions both assigned was kept twice, silently)."""
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name in _targets(target)]
    if isinstance(node, ast.AnnAssign) and (isinstance(node.target, ast.Name) or node.value is not None):
        return _targets(node.target)
    if isinstance(node, (ast.For, ast.AsyncFor)):          # helper-84: bindings the gates did not count
        return _targets(node.target)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [name for item in node.items if item.optional_vars is not None for name in _targets(item.optional_vars)]
    if _TYPE_ALIAS is not None and isinstance(node, _TYPE_ALIAS) and isinstance(node.name, ast.Name):
        return [node.name.id]
    return []


_TYPE_ALIAS = getattr(ast, "TypeAlias", None)       # `type X = ...`, Python 3.12


def _targets(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _targets(element)]
    if isinstance(target, ast.Starred):
        return _targets(target.value)
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        try:
            return [ast.unparse(target)]
        except RecursionError:      # a target too deep to write back (helper-84): one no other can equal
            return [f"<target at {target.lineno}:{target.col_offset}>"]
    return []


def _walrus(node: ast.stmt) -> list[str]:
    """The names NODE's own expressions bind with `:=` in its scope (comprehensions and default values
    included: they bind there too; not a lambda's body, nor the statements NODE holds)."""
    found: list[str] = []
    todo = [child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt)]
    while todo:
        child = todo.pop()
        if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
            found.append(child.target.id)
        if not isinstance(child, ast.Lambda):
            todo.extend(grand for grand in ast.iter_child_nodes(child) if not isinstance(grand, ast.stmt))
    return found
