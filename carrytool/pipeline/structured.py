"""Structured merge for Python: resolve conflict hunks where both sides only inserted whole statements.

Pure: the three sides of one file and git's diff3-style merge of them in, the resolved bytes and one
kind per hunk out, or the reasons each refused hunk stays a conflict. Statement boundaries come from
the standard library's `ast` (`lineno`/`end_lineno`); nothing here runs git.

A hunk resolves when, after the lines all three sides share at its edges are set aside:
- the base part is empty and each side inserted whole statements of the allowed kinds (definitions,
  imports, assignments) into the same body, neither reading what the other binds nor making a call as it
  runs whose order may matter (pipeline.pyorder, pipeline.pycalls), nor both binding names in one class
  body or registering by decorators (pipeline.pynamespace: else `order-dependent`), or whole items
  of the same list/dict/set/tuple literal: the result holds ours' insertion, then theirs', each byte for
  byte (ours is the earlier entry);
- or each part is one `from m import ...` of the same module and both sides only added names: the
  union of the names, sorted when both sides kept them sorted, else ours' order then theirs' additions.
- or one side rewrote whole statements and the other only inserted whole statements right before or
  after them (the base lines kept): the rewrite with the insertion where it was anchored.
- or both inserted, and the same statements are in both: kept once where each insertion stays whole (one
  holds the other, or ours ends with what theirs begins with), else a `shadows` refusal.
The whole file is then accepted only when it parses, no name is defined twice in a scope where neither
side defined it twice (nor an attribute or subscript an assignment sets: pybindings `_bound`), no dict
display holds a key twice where an added line holds one, no added line imports `*`, every line either
side added is there, and the other order (theirs first) gives
the same definitions. Anything else refuses the file: it stays the conflict git reported; or, partially
(`partial=True`, for unions), the refused hunks stay conflicts and the others resolve when the gates hold
with the refused hunks taken as ours and as theirs. Files are parsed in pieces (pipeline.pyparts).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from carrytool.pipeline import pycalls, pyorder, pyparts

MARKER_SIZE = 23          # `git merge-file --marker-size`: long enough that source text never holds one
_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ALLOWED = (*_DEFS, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


@dataclass(frozen=True)
class Hunk:
    """A resolved hunk: its lines in the resolved file (1-based, inclusive) and what both sides added."""

    lines: tuple[int, int]
    kind: str     # functions | methods | classes | imports | assignments | definitions | items | import-union
                  # | adjacent-edit (one side rewrote statements, the other inserted next to them)


@dataclass
class Resolution:
    """The outcome for one file: TEXT is None when any hunk (or a whole-file gate) refused.

    A partial outcome (`resolve(..., partial=True)`, some hunks resolved and some refused) keeps TEXT None
    and gives VARIANTS: the file with the resolved hunks resolved and each refused hunk as ours, as the
    base, as theirs. Merging the three (git's text merge) shows only the refused hunks as conflicts."""

    text: bytes | None
    hunks: list[Hunk] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # one reason per refused hunk, or one per file gate
    variants: tuple[bytes, bytes, bytes] | None = None
    why: list[str] = field(default_factory=list)       # REFUSED, each said in a sentence (`explain_refusal`)

    @property
    def ok(self) -> bool:
        return self.text is not None


@dataclass
class _Conflict:
    ours: list[bytes]
    base: list[bytes]
    theirs: list[bytes]
    prefix: list[bytes] = field(default_factory=list)   # lines all three share at the hunk's edges
    suffix: list[bytes] = field(default_factory=list)
    kind: str | None = None
    refused: str | None = None
    why: str | None = None              # a sentence saying why it is refused, when more is known than REFUSED
    merged_import: list[bytes] | None = None
    parts: list[list[bytes]] = field(default_factory=list)   # what the resolution holds, in order
    swappable: bool = False          # two insertions at one place: "the other order" swaps them
    shared: tuple[int, int] | None = None    # lines (0-based, end excluded) of the parts both inserted


Segment = "list[bytes] | _Conflict"

# what each refusal means, for the one the user reads (`explain_refusal`); some say more (the name at fault)
REFUSALS = {
    "markers": "git's merge of it could not be read",
    "not-utf8": "it is not UTF-8 text",
    "binary": "it is not text",
    "not-a-content-conflict": "the conflict is not in its lines (a rename, a deletion, a mode or a type change)",
    "edit-edit": "both sides changed the same lines",
    "delete-edit": "one side deleted lines the other changed",
    "syntax": "the merged file does not parse",
    "not-statements": "an insertion is not whole statements",
    "not-items": "an insertion is not whole items of one literal",
    "other-statements": "an insertion holds statements other than definitions, imports or assignments, whose "
                        "order may matter",
    "mixed-scopes": "the insertions are in different bodies",
    "shadows": "a name would be bound twice",
    "duplicate-key": "a dict key would be given twice",
    "dict-spread": "a `**spread` is added beside other added items: which wins depends on the order",
    "star-import": "an added `from m import *` binds names no one can list",
    "lost-line": "a line one side added would be lost",
    "order-dependent": "the other order gives other definitions",
}


def explain_refusal(kind: str) -> str:
    """The sentence saying what refusal KIND means."""
    return REFUSALS.get(kind, kind)


def split_lines(text: bytes) -> list[bytes]:
    return _LINE.findall(text)


def parse_diff3(merged: bytes, marker_size: int = MARKER_SIZE) -> list[list[bytes] | _Conflict] | None:
    """Segments of `git merge-file --diff3` output: clean line lists and conflicts; None if malformed."""
    start, mid, sep, end = (c * marker_size for c in (b"<", b"|", b"=", b">"))
    out: list[list[bytes] | _Conflict] = []
    clean: list[bytes] = []
    state, parts = None, {"ours": [], "base": [], "theirs": []}   # type: ignore[var-annotated]
    marks = (60, 124, 61, 62)      # < | = >
    for line in split_lines(merged):
        if not line or line[0] not in marks:
            (clean if state is None else parts[state]).append(line)
            continue
        bare = line.rstrip(b"\r\n")
        head = bare[:marker_size]
        tail = bare[marker_size:marker_size + 1]
        is_marker = head in (start, mid, sep, end) and tail in (b"", b" ") and bare[marker_size - 1:marker_size] == head[:1]
        if is_marker and head == start and state is None:
            out.append(clean)
            clean, state, parts = [], "ours", {"ours": [], "base": [], "theirs": []}
        elif is_marker and head == mid and state == "ours":
            state = "base"
        elif is_marker and head == sep and bare == sep and state == "base":
            state = "theirs"
        elif is_marker and head == end and state == "theirs":
            out.append(_Conflict(parts["ours"], parts["base"], parts["theirs"]))
            state = None
        elif state is None:
            clean.append(line)
        else:
            parts[state].append(line)
    if state is not None:
        return None
    out.append(clean)
    return [s for s in out if not (isinstance(s, list) and not s)]


def resolve(base: bytes, ours: bytes, theirs: bytes, merged: bytes, *, partial: bool = False) -> Resolution:
    """Resolve every conflict hunk of MERGED (diff3 markers of MARKER_SIZE) or say why not.

    PARTIAL: resolve the hunks that do resolve even when others are refused (see Resolution.variants).
    The gates then hold for the file with each refused hunk as ours and as theirs, the lines the refused
    hunks hold aside; a gate that fails refuses every hunk (it cannot say which one is at fault)."""
    segments = parse_diff3(merged)
    if segments is None:
        return _refuse(["markers"])
    try:
        for text in (base, ours, theirs):
            text.decode("utf-8")
    except UnicodeDecodeError:
        return _refuse(["not-utf8"])
    conflicts = [s for s in segments if isinstance(s, _Conflict)]
    for conflict in conflicts:
        _classify_lines(conflict)
    early = [c for c in conflicts if c.refused]
    if early and (not partial or len(early) == len(conflicts)):
        return _refuse_hunks(early)
    lines, blocks = _assemble(segments, theirs_first=False)
    parsed = pyparts.parse(lines, [r for pair in blocks for r in pair])
    tree = parsed.tree if parsed.ok else None
    if tree is None:
        for conflict in conflicts:
            conflict.refused = conflict.refused or "syntax"
    else:
        index = _Index(tree, [r for c, pair in zip(conflicts, blocks) if not c.refused for r in pair])
        module = _module_facts(ours, theirs)
        for conflict, (first, second) in zip(conflicts, blocks):
            if conflict.refused is None and conflict.parts:
                _classify_statements(conflict, index, first, second, lines, module)
    refused = [c.refused for c in conflicts if c.refused]
    if refused and (not partial or len(refused) == len(conflicts)):
        return _refuse_hunks([c for c in conflicts if c.refused])
    text = b"".join(lines)
    inserted = {line for c, pair in zip(conflicts, blocks) if not c.refused for a, b in pair
                for line in range(a, b + 1)}
    problem = _gates(base, ours, theirs, lines, segments, parsed, inserted)
    variants = None
    if problem is None and refused:
        variants = tuple(b"".join(_assemble(segments, theirs_first=False, refused_as=side)[0])
                         for side in ("ours", "base", "theirs"))
        other_lines, other_blocks = _assemble(segments, theirs_first=False, refused_as="theirs")
        other = pyparts.parse(other_lines, [r for pair in other_blocks for r in pair])
        if not other.ok:
            problem = "syntax"
        else:
            moved = {line for c, pair in zip(conflicts, other_blocks) if not c.refused for a, b in pair
                     for line in range(a, b + 1)}
            problem = _gates(base, ours, theirs, other_lines, segments, other, moved, refused_as="theirs")
    if problem:
        kind, why = problem if isinstance(problem, tuple) else (problem, explain_refusal(problem))
        return _refuse([kind] * len(conflicts), [why] * len(conflicts))
    hunks = [Hunk((min(o[0], t[0]), max(o[1], t[1])), c.kind or "statements")  # type: ignore[arg-type]
             for c, (o, t) in zip(conflicts, blocks) if not c.refused]
    if refused:
        return Resolution(None, hunks, refused, variants, _whys([c for c in conflicts if c.refused]))  # type: ignore[arg-type]
    return Resolution(text, hunks)


def _refuse(kinds: list[str], whys: list[str] | None = None) -> Resolution:
    return Resolution(None, refused=kinds, why=whys or [explain_refusal(kind) for kind in kinds])


def _refuse_hunks(conflicts: list[_Conflict]) -> Resolution:
    return _refuse([c.refused for c in conflicts], _whys(conflicts))  # type: ignore[misc]


def _whys(conflicts: list[_Conflict]) -> list[str]:
    """Each refused one of CONFLICTS said in a sentence: what is known of it, else what its kind means."""
    return [c.why or explain_refusal(c.refused) for c in conflicts]  # type: ignore[arg-type]


def sides_of(shown: bytes) -> tuple[bytes, bytes, list[int]] | None:
    """Ours' and theirs' versions of SHOWN (git's `merge`-style conflict markers of 7), and for each line of
    ours' version (0-based) its line in SHOWN; None when the markers are malformed or ambiguous."""
    ours: list[bytes] = []
    theirs: list[bytes] = []
    where: list[int] = []
    state = None
    for n, line in enumerate(split_lines(shown)):
        bare = line.rstrip(b"\r\n")
        if bare.startswith(b"<<<<<<<") and bare[7:8] in (b"", b" ") and bare[:8] != b"<" * 8:
            if state is not None:
                return None
            state = "ours"
        elif bare == b"=======" and state is not None:
            if state != "ours":
                return None
            state = "theirs"
        elif bare.startswith(b">>>>>>>") and bare[7:8] in (b"", b" ") and bare[:8] != b">" * 8:
            if state != "theirs":
                return None
            state = None
        elif bare.startswith((b"<<<<<<<", b">>>>>>>", b"|||||||")) and bare[7:8] in (b"", b" "):
            return None
        else:
            if state != "theirs":
                ours.append(line)
                where.append(n)
            if state != "ours":
                theirs.append(line)
    if state is not None:
        return None
    return b"".join(ours), b"".join(theirs), where


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


def _assemble(segments, *, theirs_first: bool, refused_as: str = "ours"):  # noqa: ANN001, ANN202 - internal
    """The file's lines with each conflict resolved (refused ones take REFUSED_AS: ours, base or theirs, so the
    rest can be parsed), and per conflict the (first, last) line ranges of ours' and theirs' insertions
    (1-based; a refused conflict's first range is the side it took)."""
    lines: list[bytes] = []
    blocks: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for segment in segments:
        if isinstance(segment, list):
            lines += segment
            continue
        lines += segment.prefix
        if segment.refused or not segment.parts:
            start = len(lines) + 1
            lines += getattr(segment, refused_as) if segment.refused else segment.merged_import or []
            blocks.append(((start, len(lines)), (len(lines) + 1, len(lines))))
        else:
            first, second = segment.parts
            if theirs_first and segment.swappable:
                first, second = second, first
            start = len(lines) + 1
            lines += first
            middle = len(lines)
            lines += second
            blocks.append(((start, middle), (middle + 1, len(lines))))
        lines += segment.suffix
    return lines, blocks


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


# -- whole-file gates --------------------------------------------------------------------------------

def _gates(base: bytes, ours: bytes, theirs: bytes, lines: list[bytes], segments,  # noqa: ANN001
           parsed: pyparts.Parsed, inserted: set[int], *, refused_as: str = "ours") -> str | tuple[str, str] | None:
    """The reason the resolved file is refused (alone, or with a sentence naming what is at fault), or None:
    shadowing, a lost line, order dependence. Refused conflicts (in TEXT as REFUSED_AS) still hold both
    sides' lines: they count as present."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    result = parsed.definitions(spans)
    added = sorted(inserted)
    unsafe = _unsafe_insertion(parsed.tree, added)
    if unsafe:
        return unsafe
    twice = {key for key, n in result.items()
             if n > 1 and any(bisect.bisect_left(added, a) < bisect.bisect_right(added, b) for a, b in spans.get(key, ()))}
    if twice:       # parse the sides only when a name bound twice is bound in a resolved hunk
        # the statements binding it must be those of one side, the same text as many times: then the
        # resolution binds it as that side did. A count alone let a side that binds it twice hide the other
        # side's binding it overrides (helper-84: ours edits `T = 5` to `T = 10`, theirs adds `T = 30`)
        whole = pyparts.parse(lines, spans=True)
        sides = [(pyparts.parse(side_lines, spans=True), side_lines)
                 for side_lines in (split_lines(ours), split_lines(theirs))]
        mine = _bindings(whole, lines, twice)
        side_bindings = [_bindings(p, side_lines, twice) for p, side_lines in sides]
        for scope, name in sorted(key for key in twice if mine[key] not in [b[key] for b in side_bindings]):
            where = f" in `{scope}`" if scope else ""
            return "shadows", f"two definitions of `{name}`{where}: the later one would override the other side's"
    rewritten = Counter(line for s in segments if isinstance(s, _Conflict) and s.merged_import is not None
                        for line in s.ours + s.theirs)
    held = Counter(line for s in segments if isinstance(s, _Conflict) and s.refused for line in s.ours + s.theirs)
    have = Counter(lines) + rewritten + held
    for side in (ours, theirs):
        if _added(base, side) - have:
            return "lost-line"
    other, _ = _assemble(segments, theirs_first=True, refused_as=refused_as)
    if other == lines:
        return None
    other_parsed = pyparts.parse(other)
    if not other_parsed.ok or other_parsed.definitions() != result:
        return "order-dependent"
    return None


def _bindings(parsed: pyparts.Parsed, lines: list[bytes], keys: set[tuple[str, str]]
              ) -> dict[tuple[str, str], Counter[bytes]]:
    """For each of KEYS, the statements that bind it in PARSED (a parse of LINES with every span), by their text
    (each line stripped), counted; nothing when it does not parse."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    if parsed.ok:
        parsed.definitions(spans)
    return {key: Counter(b"\n".join(line.strip() for line in lines[a - 1:b]) for a, b in spans.get(key, ()))
            for key in keys}


def _unsafe_insertion(tree: ast.Module | None, added: list[int]) -> str | None:
    """What no count of bound names sees, in the statements that meet the lines ADDED (sorted, 1-based):
    a `from M import *` (it binds names no one can list: helper-83, a def it overrode was kept beside it),
    a dict display with a key twice where one of them is on an added line (the later value wins at run
    time: helper-83, two PRs' values for one key both kept)."""
    if tree is None:
        return None

    def meets(node: ast.AST) -> bool:
        first = node.lineno  # type: ignore[attr-defined]
        at = bisect.bisect_left(added, first)
        return at < len(added) and added[at] <= (node.end_lineno or first)  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) and meets(node):
            return "star-import"
        if isinstance(node, ast.Dict) and meets(node):
            seen: dict[object, ast.expr] = {}
            spreads = [v for k, v in zip(node.keys, node.values) if k is None]
            if any(meets(v) for v in spreads) and sum(1 for k, v in zip(node.keys, node.values)
                                                     if meets(v) or (k is not None and meets(k))) > 1:
                return "dict-spread"        # `**X` beside other added items: which wins depends on the order
            for key in node.keys:
                if key is None:             # `**spread`
                    continue
                name = _key_name(key)
                if name in seen and (meets(key) or meets(seen[name])):
                    return "duplicate-key"
                seen.setdefault(name, key)
    return None


def _key_name(key: ast.expr) -> object:
    """What a dict display's KEY is equal to: its value where it is a literal (`1`, `True` and `-0 + 1`
    alike; an f-string of constants is its string), else its syntax."""
    if isinstance(key, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in key.values):
        return ("value", "".join(str(v.value) for v in key.values))   # type: ignore[attr-defined]
    try:
        value = ast.literal_eval(key)
        hash(value)                 # a list is no key: its syntax stands for it
        return ("value", value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        try:
            return ("expr", ast.dump(key))
        except RecursionError:
            return ("at", key.lineno, key.col_offset)


def _added(base: bytes, side: bytes) -> Counter[bytes]:
    """The lines SIDE has more often than BASE (each extra copy counts): what it added."""
    return Counter(split_lines(side)) - Counter(split_lines(base))
