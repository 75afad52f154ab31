"""Names a Python module uses that nothing binds: after an `on_conflict: theirs` resolution dropped their binding.

An entry resolved with `theirs` against upstream takes its own lines where the two conflict; an upstream
`import pytest` in the conflicting region goes, while upstream's use of `pytest` elsewhere in the file
(no conflict there) stays: the module raises NameError when that line runs, and sync said only "possible
upstream content loss" (helper-133, on sympy). Only the Python files where such a step overrode upstream
lines are read; `symtable` (the compiler's own scope analysis, in C) says which names a scope loads that no
enclosing function, the module nor the builtins bind, and only when there are some is the file parsed, to
find the first line using each. A module that can bind names unseen (`from m import *`, a module-level
`__getattr__`, any use of `globals` or `exec`) says nothing. Under `from __future__ import
annotations` a name used only in annotations is not loaded.

`union continue` reads a union's result the same way (`introduced`: names the result loads that nothing binds
while upstream's and each folded PR's version of the file bind them or do not load them), with the binding a
version has (`binding_of`) or a name the file binds (`bound_names`) as the likely fix.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import symtable
import warnings
from collections.abc import Sequence

from carrytool.pipeline.shadowed import parse_module

STAR = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.M)
DYNAMIC = frozenset({"globals", "exec", "__getattr__"})
MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
                          "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__"})
KNOWN = frozenset(dir(builtins)) | MODULE_NAMES
_TABLE_NAMES = {ast.Lambda: "lambda", ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.DictComp: "dictcomp",
                ast.GeneratorExp: "genexpr"}


def unbound_names(data: bytes) -> dict[str, int] | None:
    """Name -> the first line loading it where nothing binds it, in the module DATA; None when DATA is no
    Python this interpreter reads, or can bind names unseen."""
    loose = _loose(data)
    if not loose or not any(loose.values()):
        return None if loose is None else {}
    module = parse_module(data)
    return _first_loads(module, loose) if module is not None else None


def introduced(result: bytes, versions: Sequence[bytes | None]) -> dict[str, int] | None:
    """Name -> the first line loading it, of the names the module RESULT loads where nothing binds them while
    each of VERSIONS (the same file elsewhere: None, no such file) binds it or does not load it: names the
    change from those versions to RESULT left unbound (`union continue`: a resolution or an edit of the fold).
    None when RESULT, or one of VERSIONS, is no Python this interpreter reads or can bind names unseen (a star
    import, a module `__getattr__`, `globals`, `exec`): nothing is said of that file."""
    loose = unbound_names(result)
    if not loose:
        return loose
    elsewhere = [loose_names(data) for data in versions if data is not None]
    if any(names is None for names in elsewhere):
        return None
    return {name: line for name, line in loose.items() if not any(name in names for names in elsewhere if names)}


def bound_names(data: bytes) -> frozenset[str]:
    """Every name some scope of the module DATA binds (assigned, imported, a parameter, a def or class), and
    the builtins: what a name nothing binds may be a typo of."""
    top = _table(data)
    if top is None:
        return KNOWN
    return KNOWN | {s.get_name() for t in _tables(top) for s in t.get_symbols()
                    if s.is_assigned() or s.is_imported() or s.is_parameter() or s.is_namespace()}


@functools.lru_cache(maxsize=64)
def loose_names(data: bytes) -> frozenset[str] | None:
    """The names some scope of DATA loads where nothing binds them (`unbound_names` without the parse that
    finds their lines, which may leave out names loaded only in annotations never evaluated). None also when
    DATA does not parse: a fold asks again of the files it read (union.syntax), hence the cache."""
    loose = _loose(data)
    return None if loose is None else frozenset().union(*loose.values())


def _loose(data: bytes) -> dict[tuple[str, int], set[str]] | None:
    """Scope (its name and line, as `symtable` says them) -> the names it loads that nothing binds."""
    if STAR.search(data):
        return None
    top = _table(data)
    if top is None:
        return None
    tables = _tables(top)
    bound = {s.get_name() for s in top.get_symbols() if s.is_local()}
    bound |= {s.get_name() for t in tables for s in t.get_symbols() if s.is_declared_global() and s.is_assigned()}
    if DYNAMIC & (bound | {s.get_name() for t in tables for s in t.get_symbols() if s.is_referenced()}):
        return None
    return {t_key(t): {s.get_name() for s in t.get_symbols() if s.is_referenced() and s.is_global()
                       and (t is not top or not s.is_local())} - bound - KNOWN for t in tables}


def t_key(table: symtable.SymbolTable) -> tuple[str, int]:
    return (table.get_name(), table.get_lineno())


def _table(data: bytes) -> symtable.SymbolTable | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return symtable.symtable(data.replace(b"\r", b" ").decode("utf-8"), "<carried>", "exec")
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None


def _tables(top: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    out, todo = [], [top]
    while todo:
        table = todo.pop()
        out.append(table)
        todo += table.get_children()
    return out


def _first_loads(module: ast.Module, loose: dict[tuple[str, int], set[str]]) -> dict[str, int]:
    """The first line loading each name of LOOSE (scope (name, line) -> its unbound names) in its scope."""
    lazy = any(isinstance(node, ast.ImportFrom) and node.module == "__future__" and
               any(alias.name == "annotations" for alias in node.names) for node in module.body)
    found: dict[str, int] = {}
    todo: list[tuple[ast.AST, tuple[str, int]]] = [(module, ("top", 0))]
    while todo:
        node, scope = todo.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id in loose.get(scope, ()):
                found[node.id] = min(found.get(node.id, node.lineno), node.lineno)
            continue
        if not isinstance(node, _SPECIAL):
            todo += [(child, scope) for child in ast.iter_child_nodes(node)]
            continue
        outer, inner = _parts(node, lazy)
        key = (node.name if isinstance(node, _DEFS) else _TABLE_NAMES.get(type(node), ""), getattr(node, "lineno", 0))
        todo += [(child, scope) for child in outer] + [(child, key if key in loose else scope) for child in inner]
    return found


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SPECIAL = (*_DEFS, ast.Lambda, *_COMPREHENSIONS, ast.arg, ast.AnnAssign)


def _parts(node: ast.AST, lazy: bool) -> tuple[list[ast.AST], list[ast.AST]]:
    """NODE's children evaluated in the scope NODE is in, and those in the scope NODE opens (a def's body;
    its decorators, defaults and annotations are the enclosing scope's; a comprehension's first iterable
    too), without annotations never evaluated (LAZY: postponed by `from __future__ import annotations`)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        head = [*node.decorator_list, node.args] + ([node.returns] if node.returns and not lazy else [])
        return head, list(node.body)
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords], list(node.body)
    if isinstance(node, ast.Lambda):
        return [node.args], [node.body]
    if isinstance(node, _COMPREHENSIONS):
        first, *rest = node.generators
        return [first.iter], [child for child in ast.iter_child_nodes(node) if child is not first] + \
            [first.target, *first.ifs]
    if lazy and isinstance(node, ast.arg):
        return [], []
    if lazy and isinstance(node, ast.AnnAssign):
        return [child for child in (node.target, node.value) if child is not None], []
    return list(ast.iter_child_nodes(node)), []


def binding_of(data: bytes, name: str) -> tuple[int, str] | None:
    """The first binding of NAME in DATA (`binding_line`) and, as one line, the statement that binds it: an
    import as it binds NAME alone (`from peft import PeftWarning`, of a `from peft import (...)` over many
    lines), else the line's text."""
    module = parse_module(data)
    if module is None:
        return None
    for node in ast.walk(module):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    written = alias.name + (f" as {alias.asname}" if alias.asname else "")
                    if isinstance(node, ast.Import):
                        return node.lineno, f"import {written}"
                    return node.lineno, f"from {'.' * node.level}{node.module or ''} import {written}"
    line = binding_line(data, name)
    if line is None:
        return None
    return line, data.split(b"\n")[line - 1].strip().decode("utf-8", "replace")


def binding_line(data: bytes, name: str) -> int | None:
    """The first line of DATA (a module) binding NAME at module level: an import, def, class or assignment."""
    module = parse_module(data)
    if module is None:
        return None
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node.lineno
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            return node.lineno
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return node.lineno
    return None
