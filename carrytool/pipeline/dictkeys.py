"""Keys one entry adds to a dict display that another entry, or upstream, writes again in the same display.

Two PRs that each add `'sinh': ...` to one `handlers_dict = {...}`, at different places, merge cleanly, and
both hunks land: the dict then holds the key twice, the later value wins when the module runs, and the
earlier one is dead (helper-133: sympy's pr/30138 and pr/30192 in sympy/assumptions/refine.py). So does an
entry adding a key upstream has since added elsewhere in the display. `pipeline.shadowed`'s rule, for keys.

Found from what landing knows (which lines of the composed file each entry landed): only files where an
entry's hunk adds a line writing a constant key (`'name':`, `3:`, `('a', 1):`) are read, scanned with a
regular expression for such a key written twice in the file by two sides (one of them on a line an entry
landed, the other upstream's or another entry's) that no `def` or `class` line
separates (`_reach`), and only then parsed. Keys compared by value (`'a'` and `"a"` are one key): strings, bytes, integers and
tuples of those. Not said: a key written twice by one entry alone, or by upstream alone, and a key line a
hunk rewrote (it removed a line writing that key): it stays upstream's, changed.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import functools
import re
from collections.abc import Callable, Iterator, Mapping

from carrytool.gitlayer.git import Git
from carrytool.pipeline.keptfindings import Finding, KeptFindings
from carrytool.pipeline.pyadds import KEY, _is_key, _literal, written_keys
from carrytool.pipeline.shadowed import UPSTREAM, owned_findings

Owners = Mapping[int, tuple[str, frozenset[object]]]    # line -> (the entry that landed it, keys its hunk removed)
# a line whose first token is `def` or `class` (or `async def`): no expression holds one (see _reach)
_BARRIER = re.compile(rb"^[ \t\f]*(?:async[ \t\f]+)?(?:def|class)[ \t\f]", re.M)
# what can carry a string over a line end: a triple quote, a backslash before a line end
_SPANS = re.compile(rb"'''|\"\"\"|\\[\r\n]")
# a source encoding declaration (PEP 263), read as Python reads it on the first two lines
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
SEPARATE_DISPLAYS = True     # the scan tells writes a def or class line separates apart (tests compare both)


def duplicate_keys(git: Git, tip: str, owners: Mapping[str, Owners], kept: KeptFindings | None = None
                   ) -> list[dict[str, object]]:
    """The warnings for the composed commit TIP. OWNERS: path -> who landed which lines of TIP's file (every
    other line is upstream's), for the files where an entry added a key. KEPT: what earlier runs found
    parsing the same blobs."""
    out: list[dict[str, object]] = []
    for path, owned, found in owned_findings(git, tip, owners, _suspect, "duplicate-keys", _found, kept):
        for where, written, lines in found:
            key = _literal(written.encode("utf-8"))     # (kept as its repr: a key is a string, bytes, ...)
            by = [_owner(owned, line, key) for line in lines]
            if key is not None and len(set(by)) > 1:
                out.append(_warning(path, where, key, lines, by))
    return out


def _found(module: ast.Module) -> list[Finding]:
    """(the dict display, the key's repr, the lines it is written at) for each key a display writes twice. A key
    Python will not write out (an integer past its 4,300 digits: ValueError, helper-153) is left out."""
    out: list[Finding] = []
    for where, key, lines in _twice(module):
        try:
            out.append((where, repr(key), lines))
        except ValueError:
            continue
    return out


def _owner(owned: Owners, line: int, key: object) -> str:
    found = owned.get(line)
    return UPSTREAM if found is None or key in found[1] else found[0]


def _suspect(data: bytes, owned: Owners) -> bool:
    """Whether a key written on a line an entry landed is written again somewhere in DATA by another side (the
    scan, by `_owner`'s rule: a warning needs two owners). A key written twice by one side only is no
    suspect: parsing every such file cost a sync of 60 accelerate PRs 0.09 s, for four files and no warning."""
    lines = data.split(b"\n")
    mine = set().union(*(written_keys([lines[n - 1]]) for n in owned if 0 < n <= len(lines)))
    if not mine:
        return False
    by: dict[object, list[tuple[int, str]]] = {}      # value -> (where it is written, by whom), in file order
    line, at = 1, 0
    for match in KEY.finditer(data):
        value = _literal(match.group(1))
        if value is None or value not in mine:
            continue
        line += data.count(b"\n", at, match.start(1))
        at = match.start(1)
        by.setdefault(value, []).append((at, _owner(owned, line, value)))
    if not SEPARATE_DISPLAYS:
        return any(len({who for _at, who in writes}) > 1 for writes in by.values())
    reach = _reach(data)
    for writes in by.values():
        later = None            # the next write after this one by another side than the one after it
        for n in range(len(writes) - 1, 0, -1):
            if writes[n][1] != writes[n - 1][1]:
                later = writes[n][0]
            if later is not None and later < reach(writes[n - 1][0]):
                return True
    return False


def _reach(data: bytes) -> Callable[[int], int]:
    """For a key written at offset P of DATA (a token: in no string, no comment), the offset from which on no key
    can be in the same dict display: the start of the first line after P whose first token is `def` or `class`
    (`_BARRIER`) with no triple quote and no backslash before a line end from P to it (`_SPANS`); else past
    the end. Why: a display is one expression, and its lines are inside its braces. No string is open at such
    a line's start: one open there would have started at P or after (P is no string's inside) and crossed a
    line end, and only a triple-quoted string or a backslash before the line end does. Nor is a comment (it
    ends with its line). So `def` or `class` there is a token, which no expression holds: a file that has
    it inside a display's braces does not parse, and an unparsed file has no duplicate keys to say."""
    end = len(data) + 1
    if not _ascii_as_bytes(data):
        return lambda at: end
    barriers = [m.start() for m in _BARRIER.finditer(data)]
    spans = [m.start() for m in _SPANS.finditer(data)]

    def reach(at: int) -> int:
        n = bisect.bisect_right(barriers, at)
        if n == len(barriers):
            return end
        span = bisect.bisect_left(spans, at)
        return barriers[n] if span == len(spans) or spans[span] >= barriers[n] else end
    return reach


def _ascii_as_bytes(data: bytes) -> bool:
    """Whether Python reads each ASCII byte of DATA as that character: not so in a file whose coding line names an
    encoding that writes a character in other bytes (h246: UTF-7 writes `\"\"\"` as `+ACIAIgAi-`, so a def line in a
    triple-quoted string read as a barrier; also ISO-2022, HZ, EBCDIC). The scan then tells no display apart."""
    for line in data.split(b"\n", 2)[:2]:
        found = _CODING.match(line)
        if found:
            return _ascii_encoding(found.group(1).decode("ascii"))
    return True


@functools.lru_cache(maxsize=None)
def _ascii_encoding(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return True         # Python reads no such file: nothing parsed, nothing missed
    for byte in range(128):
        try:
            if bytes([byte]).decode(name) != chr(byte):
                return False
        except (UnicodeDecodeError, ValueError):
            return False
    return True


def _twice(module: ast.Module) -> Iterator[tuple[str, object, list[int]]]:
    """(where the dict is, key, the lines it is written at) for each constant key a dict display holds twice."""
    for node, where in _dicts(module, ""):
        lines: dict[object, list[int]] = {}
        for key in node.keys:
            value = _constant(key) if key is not None else None
            if value is not None:
                lines.setdefault(value, []).append(key.lineno)  # type: ignore[union-attr]
        for value, at in lines.items():
            if len(at) > 1:
                yield where, value, at


def _constant(node: ast.expr) -> object:
    if isinstance(node, ast.Constant):
        return node.value if _is_key(node.value) else None
    if isinstance(node, ast.Tuple):
        values = [_constant(element) for element in node.elts]
        return tuple(values) if all(v is not None for v in values) else None
    return None


def _dicts(node: ast.AST, scope: str) -> Iterator[tuple[ast.Dict, str]]:
    """Each dict display under NODE with a name for it: its assignment target if it is one's whole value
    (`handlers_dict`), else `the dict at line N`, and the def/class it is in (`in Refiner.setup`). Walked
    with a stack of its own, in source order: a tree that parses can still nest deeper than Python's
    recursion limit (helper-140: a 980-term `1 + 1 + ...` beside a duplicated key, RecursionError, exit 70).
    A node that holds no other (a name, a constant, an operator: `_LEAVES`) is not walked into, and the
    fields that never hold a node (`_fields_of`) are not read: `ast.iter_child_nodes` on every node cost a
    sync of 60 xarray PRs ~0.1 s, for the same dicts in the same order (h212)."""
    stack: list[tuple[ast.AST, str]] = [(node, scope)]
    while stack:
        parent, outer = stack.pop()
        later: list[tuple[ast.AST, str]] = []
        for child in _children(parent):
            inner = outer
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{outer}.{child.name}" if outer else child.name
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and isinstance(child.value, ast.Dict):
                target = child.targets[0] if isinstance(child, ast.Assign) else child.target
                yield child.value, _named(ast.unparse(target), outer)
                later.append((child.value, outer))
                continue
            if isinstance(child, ast.Dict):
                yield child, _named(f"the dict at line {child.lineno}", outer)
            later.append((child, inner))
        stack.extend(reversed(later))


# nodes that hold no other node a dict display could be in
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal,
                     ast.Import, ast.ImportFrom, ast.alias}
                    | {kind for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
                       for kind in base.__subclasses__()})
# fields that hold a name, a number, a flag or leaves only, never a node a dict display could be in
_NOT_NODES = frozenset({"ctx", "op", "ops", "id", "name", "arg", "attr", "level", "module", "names",
                        "type_comment", "kind", "simple", "conversion", "is_async"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(name for name in kind._fields if name not in _NOT_NODES)  # type: ignore[attr-defined]
    return found


def _children(parent: ast.AST) -> Iterator[ast.AST]:
    """PARENT's child nodes, as `ast.iter_child_nodes` yields them, less the leaves (`_LEAVES`)."""
    for name in _fields_of(type(parent)):
        value = getattr(parent, name, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST) and type(item) not in _LEAVES:
                    yield item
        elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
            yield value


def _named(name: str, scope: str) -> str:
    return f"{name} (in {scope})" if scope else name


def _warning(path: str, where: str, key: object, lines: list[int], by: list[str]) -> dict[str, object]:
    """The warning for KEY written at LINES (file order) of one dict display, landed by BY."""
    entry = next((owner for owner in by[:-1] if owner != UPSTREAM), by[-1])
    lost = ", ".join(dict.fromkeys(f"{owner}'s" for owner in by[:-1]))
    said = ", ".join(f"line {line} by {owner}" for line, owner in zip(lines, by))
    return {"kind": "duplicate-key", "entry": entry, "file": path, "dict": where, "key": repr(key),
            "lines": lines, "by": by,
            "message": f"{path}: the dict {where} holds the key {key!r} {len(lines)} times ({said}): the last, "
                       f"{by[-1]}'s, wins when the module runs, and {lost} value is dead"}
