"""One conflict hunk of the structured merge (pipeline.structured): the lines all sides share at its edges
set aside, what each side did (inserted, rewrote next to the other's insertion, extended one `from m
import`), and whether its parts are whole statements of one body or whole items of one literal."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from carrytool.pipeline import pycalls, pyorder
from carrytool.pipeline.structured_segments import _Conflict

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ALLOWED = (*_DEFS, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


# -- hunks ------------------------------------------------------------------------------------------

def _classify_lines(conflict: _Conflict) -> None:
    """Set aside shared edge lines; refuse edits, or recognise a `from m import` both sides extended."""
    ours, base, theirs = conflict.ours, conflict.base, conflict.theirs
    while ours and base and theirs and ours[0] == base[0] == theirs[0]:
        conflict.prefix.append(ours.pop(0))
        base.pop(0)
        theirs.pop(0)
    while ours and base and theirs and ours[-1] == base[-1] == theirs[-1]:
        conflict.suffix.insert(0, ours.pop())
        base.pop()
        theirs.pop()
    if not base:
        shared = _shared(ours, theirs)
        if shared is None:
            conflict.parts, conflict.swappable = [ours, theirs], True
        else:       # both inserted the same statements: kept once, where both insertions stay whole
            conflict.parts, conflict.shared, conflict.kind = shared[0], shared[1], None
        return
    merged = _merge_import(base, ours, theirs)
    n = len(base)
    if merged is not None:
        conflict.merged_import, conflict.kind = merged, "import-union"
    elif ours and ours != base and theirs[:n] == base and len(theirs) > n:   # theirs inserted after what ours edited
        conflict.parts, conflict.kind = [ours, theirs[n:]], "adjacent-edit"
    elif ours and ours != base and theirs[-n:] == base and len(theirs) > n:  # ... or before it
        conflict.parts, conflict.kind = [theirs[:-n], ours], "adjacent-edit"
    elif theirs and theirs != base and ours[:n] == base and len(ours) > n:
        conflict.parts, conflict.kind = [theirs, ours[n:]], "adjacent-edit"
    elif theirs and theirs != base and ours[-n:] == base and len(ours) > n:
        conflict.parts, conflict.kind = [ours[:-n], theirs], "adjacent-edit"
    elif not ours or not theirs:
        conflict.refused = "delete-edit"
    else:
        conflict.refused = "edit-edit"


def _shared(ours: list[bytes], theirs: list[bytes]) -> tuple[list[list[bytes]], tuple[int, int]] | None:
    """Two insertions that hold the same lines (a helper both PRs added): when one holds the other whole, or
    ours ends with what theirs begins with, the parts that keep both insertions whole, each line once, and
    where the shared lines are in them. None when they share nothing that way (both are then kept)."""
    def code(lines: list[bytes]) -> bool:
        return any(line.strip() for line in lines)

    for small, large, big_first in ((theirs, ours, True), (ours, theirs, False)):
        for at in range(len(large) - len(small) + 1):
            if code(small) and large[at:at + len(small)] == small:
                return ([large, []] if big_first else [[], large]), (at, at + len(small))
    for k in range(min(len(ours), len(theirs)) - 1, 0, -1):
        if ours[-k:] == theirs[:k] and code(ours[-k:]):
            return [ours, theirs[k:]], (len(ours) - k, len(ours))
    return None


def _parse(text: bytes) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _module_facts(ours: bytes, theirs: bytes) -> Callable[[], pycalls.Module | None]:
    """The facts the order rule needs of the whole module (pipeline.pycalls), from OURS and THEIRS (the
    resolution holds the statements of both): parsed once, when first asked for; None when one does not parse."""
    found: list[pycalls.Module | None] = []

    def facts() -> pycalls.Module | None:
        if not found:
            trees = [_parse(side) for side in (ours, theirs)]
            found.append(pycalls.module_of(trees) if all(trees) else None)  # type: ignore[arg-type]
        return found[0]

    return facts


class _Index:
    """The statements (each with its parent body) and literals of one parsed file that meet RANGES: only
    the subtrees spanning a conflict are walked."""

    def __init__(self, tree: ast.Module, ranges: list[tuple[int, int]]) -> None:
        self.stmts: list[tuple[int, int, ast.stmt, tuple[int, str]]] = []
        self.literals: list[ast.expr] = []
        self.parents: dict[int, ast.AST] = {}
        self.ranges = [r for r in ranges if r[0] <= r[1]]
        self._visit(tree)

    def _meets(self, node: ast.AST) -> bool:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
        last = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return any(first <= b and a <= last for a, b in self.ranges)

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, (*_LITERALS, ast.ImportFrom)):
            self.literals.append(node)  # type: ignore[arg-type]
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST) or not hasattr(child, "lineno"):
                    if isinstance(child, ast.AST) and not isinstance(child, (ast.expr_context, ast.operator)):
                        self._visit(child)
                    continue
                if isinstance(child, ast.stmt) and isinstance(value, list):
                    start = min([child.lineno, *(d.lineno for d in getattr(child, "decorator_list", []))])
                    self.stmts.append((start, child.end_lineno or child.lineno, child, (id(node), name)))
                    self.parents[id(child)] = node
                if self._meets(child):
                    self._visit(child)


def _blank(line: bytes) -> bool:
    text = line.strip()
    return not text or text.startswith(b"#")


def _statement_kind(index: _Index, first: int, last: int, lines: list[bytes], *,
                    any_statement: bool = False) -> tuple[str | None, object, str | None, list[ast.stmt]]:
    """(kind, parent, refusal, statements) for lines FIRST..LAST: whole sibling statements of one body, or
    whole items of one literal (no statements). An empty range has no kind and no parent."""
    if first > last:
        return None, None, None, []
    if any(lines[i - 1].strip() for i in range(first, last + 1)):    # blank lines at the edges belong to no
        while not lines[first - 1].strip():                          # statement: a method inserted last in
            first += 1                                               # its class, then a blank line, is whole
        while not lines[last - 1].strip():
            last -= 1
    inside, straddle = [], False
    for start, end, node, parent in index.stmts:
        if first <= start and end <= last:
            inside.append((start, end, node, parent))
        elif start < first <= end < last or first < start <= last < end:
            straddle = True
    if straddle:
        return None, None, "not-statements", []
    nested = {id(n) for _, _, n, _ in inside}
    top = [(s, e, n, p) for s, e, n, p in inside if id(index.parents[id(n)]) not in nested]
    code = [i for i in range(first, last + 1) if not _blank(lines[i - 1])]
    covered = {i for s, e, _, _ in top for i in range(s, e + 1)}
    if top and all(i in covered for i in code):
        parents = {p for _, _, _, p in top}
        if len(parents) != 1:
            return None, None, "mixed-scopes", []
        nodes = [n for _, _, n, _ in top]
        if not any_statement and not all(isinstance(n, _ALLOWED) for n in nodes):
            return None, None, "other-statements", []
        return _kind_of(nodes, index.parents[id(nodes[0])]), parents.pop(), None, nodes
    if top:
        return None, None, "not-statements", []
    return (*_items_kind(index, first, last, code), [])


def _items_kind(index: _Index, first: int, last: int, code: list[int]):  # noqa: ANN202 - internal
    around = [n for n in index.literals if n.lineno < first and (n.end_lineno or 0) > last]
    if not around:
        return None, None, "not-statements"
    literal = min(around, key=lambda n: (n.end_lineno or 0) - n.lineno)
    elements = [*(k for k in getattr(literal, "keys", []) if k is not None), *getattr(literal, "values", []),
                *getattr(literal, "elts", []), *getattr(literal, "names", [])]
    covered: set[int] = set()
    for element in elements:
        start, end = element.lineno, element.end_lineno or element.lineno
        if first <= start and end <= last:
            covered.update(range(start, end + 1))
        elif not (end < first or start > last):
            return None, None, "not-items"
    if not code or not all(i in covered for i in code):
        return None, None, "not-items"
    kind = "import-union" if isinstance(literal, ast.ImportFrom) else "items"
    return kind, ("literal", literal.lineno, literal.col_offset), None


def _kind_of(nodes: list[ast.stmt], parent: ast.AST) -> str:
    if all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes):
        return "imports"
    if all(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes):
        return "methods" if isinstance(parent, ast.ClassDef) else "functions"
    if all(isinstance(n, ast.ClassDef) for n in nodes):
        return "classes"
    if all(isinstance(n, (ast.Assign, ast.AnnAssign)) for n in nodes):
        return "assignments"
    return "definitions"


def _classify_statements(conflict: _Conflict, index: _Index, first: tuple[int, int], second: tuple[int, int],
                         lines: list[bytes], module: Callable[[], pycalls.Module | None] | None = None) -> None:
    """Both parts must be whole statements of one body (for two insertions: definitions, imports or
    assignments, neither reading what the other binds nor making a call whose order may matter:
    pipeline.pyorder), or whole items of one literal. MODULE: the facts of the whole module the order rule
    may ask for (`_module_facts`)."""
    free = not conflict.swappable and conflict.shared is None      # a rewrite next to an insertion
    kind_a, parent_a, why_a, nodes_a = _statement_kind(index, *first, lines, any_statement=free)
    kind_b, parent_b, why_b, nodes_b = _statement_kind(index, *second, lines, any_statement=free)
    if conflict.shared is not None and not why_a and not why_b:
        at = first[0] if first[0] <= first[1] else second[0]
        _, parent_c, why_c, _ = _statement_kind(index, at + conflict.shared[0], at + conflict.shared[1] - 1,
                                                lines)
        if why_c or (parent_c is not None and parent_c not in {p for p in (parent_a, parent_b) if p is not None}):
            why_a = why_c or "mixed-scopes"
    if why_a or why_b:
        conflict.refused = why_a or why_b
    elif kind_a and kind_b and parent_a != parent_b:
        conflict.refused = "mixed-scopes"
    elif conflict.swappable and nodes_a and nodes_b and (order := pyorder.order_conflict(
            nodes_a, nodes_b, module, body_of=index.parents.get(id(nodes_a[0])))):
        conflict.refused, conflict.why = "order-dependent", order
    elif conflict.kind is None:
        kinds = {k for k in (kind_a, kind_b) if k}
        conflict.kind = kinds.pop() if len(kinds) == 1 else "definitions"


# -- `from m import a, b` + `from m import a, c` -----------------------------------------------------

def _import_of(lines: list[bytes]) -> tuple[ast.ImportFrom, bytes] | None:
    text = b"".join(lines)
    if not text.strip() or b"#" in text or b";" in text:
        return None
    indent = text[:len(text) - len(text.lstrip(b" \t"))]
    tree = _parse(b"\n".join(line[len(indent):] if line.startswith(indent) else line for line in
                             text.split(b"\n")))
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.ImportFrom):
        return None
    return tree.body[0], indent


def _by_name(name: tuple[str, str | None]) -> tuple[str, str]:
    return name[0], name[1] or ""


def _merge_import(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> list[bytes] | None:
    parsed = [_import_of(side) for side in (base, ours, theirs)]
    if any(p is None for p in parsed):
        return None
    (b, _), (o, indent), (t, _) = parsed  # type: ignore[misc]
    if len({(n.module, n.level) for n in (b, o, t)}) != 1:
        return None
    names = [[(a.name, a.asname) for a in n.names] for n in (b, o, t)]
    if ("*", None) in names[1] or not set(names[0]) <= set(names[1]) or not set(names[0]) <= set(names[2]):
        return None
    union = names[1] + [n for n in names[2] if n not in names[1]]
    if all(side == sorted(side, key=_by_name) for side in names[1:]):
        union.sort(key=_by_name)
    words = [f"{n} as {a}" if a else n for n, a in union]
    head = indent.decode() + "from " + "." * o.level + (o.module or "") + " import "
    newline = b"\r\n" if ours[-1].endswith(b"\r\n") else b"\n"
    if len(ours) == 1:
        return [(head + ", ".join(words)).encode() + newline]
    item = re.match(rb"[ \t]*", ours[1]).group(0)   # type: ignore[union-attr]
    closing = ours[-1] if ours[-1].strip() == b")" else None
    if closing is None or not ours[0].rstrip().endswith(b"("):
        return None
    return [(head + "(").encode() + newline, *(item + w.encode() + b"," + newline for w in words), closing]
