"""Definitions one entry adds that another entry, or upstream, defines again in the same scope of a module.

Two PRs that each add `class OpenRowset` to one module, at different places, merge cleanly, and both
hunks land: the module then binds the name twice, and the later definition replaces the earlier one
when the module runs, whose code is dead. So does an entry that adds a function upstream has since
added elsewhere in the file. Nothing failed and nothing was dropped, yet one change is not in the image.

Found from what landing knows (which lines of the composed file each entry landed): only files where an
entry's own hunks add a `def`/`class` line are read, scanned for names defined twice in one scope (a
regular expression, in C, and the indentation of the definitions around), and only a file with such a
pair is parsed, to compare the definitions of each scope's own body (the module's, a class's). Not
counted: definitions that are several by design (an `@overload`, under any name it is imported as; a
property's `setter`/`getter`/`deleter`, `register`ed and `dispatch`ed implementations, a hybrid's
`expression`; any definition whose decorator takes arguments, as registering decorators do: `@given(...)`,
`@app.get(...)`), the name `_`, definitions in `if`/`try` branches (alternatives, not a second binding),
and names defined twice by one entry alone, or by upstream alone: what the composition made is what is
said. A def line an entry rewrote (a new signature) defines nothing new: it stays upstream's.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import gc
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence

from carrytool.asserts.bydesign import Definition, by_design, overload_names
from carrytool.asserts.pyscope import compound_blocks
from carrytool.gitlayer.git import Git
from carrytool.pipeline.keptfindings import Finding, KeptFindings
from carrytool.pipeline.pyadds import DEF_LINE, _name
from carrytool.pipeline.pystrings import triple_quoted

UPSTREAM = "upstream"

Owners = Mapping[int, tuple[str, frozenset[str]]]    # line -> (the entry that landed it, names its hunk removed)


def owner(owners: Owners, line: int, name: str) -> str:
    """Who defined NAME at LINE: the entry that landed the line, unless its hunk rewrote a definition of
    NAME there (then it is upstream's, changed); upstream for a line no entry landed."""
    found = owners.get(line)
    return UPSTREAM if found is None or name in found[1] else found[0]


Scan = tuple[Callable[[bytes], list[Finding]], Callable[[list[Finding], Owners], bool]]


def owned_findings(git: Git, tip: str, owners: Mapping[str, Owners], suspect: Callable[[bytes, Owners], bool],
                   check: str, find: Callable[[ast.Module], list[Finding]], kept: KeptFindings | None = None,
                   scan: Scan | None = None) -> Iterator[tuple[str, Owners, list[Finding]]]:
    """Each file of OWNERS (path -> who landed which lines) at TIP that the cheap SUSPECT scan says may hold
    what is looked for, with what FIND finds in it parsed, when it finds something: kept by blob in KEPT,
    as CHECK's (pipeline.keptfindings), so a blob is parsed for a check once. A file not Python this
    interpreter reads has no finding: nothing is said of it (the shadowed-definition and duplicate-key
    checks). SCAN: SUSPECT in its two parts, what the scan finds in a blob whoever landed what (kept by
    blob in KEPT too: a blob a run found before is not even read) and whether that is a suspect given who
    landed which lines (judged every run)."""
    for path, owned in sorted(owners.items()):
        at = git.file_entry(tip, path)
        if at is None:
            continue
        data: bytes | None = None
        if scan is not None:
            scan_key = kept.key(f"{check}-scan", at[1]) if kept is not None else ""
            scanned = kept.get(scan_key) if kept is not None else None
            if scanned is None:
                data = git.read_blob(at[1])
                scanned = scan[0](data)
                if kept is not None:
                    kept.put(scan_key, scanned)
            if not scan[1](scanned, owned):
                continue
        else:
            data = git.read_blob(at[1])
            if not suspect(data, owned):
                continue
        key = kept.key(check, at[1]) if kept is not None else ""
        found = kept.get(key) if kept is not None else None
        if found is None:
            if data is None:
                data = git.read_blob(at[1])
            with no_collection():
                module = parse_module(data)
                found = find(module) if module is not None else []
            if kept is not None:
                kept.put(key, found)
        if found:
            yield path, owned, found


def shadowed_definitions(git: Git, tip: str, owners: Mapping[str, Owners], kept: KeptFindings | None = None
                         ) -> list[dict[str, object]]:
    """The warnings for the composed commit TIP. OWNERS: path -> who landed which lines of TIP's file (every
    other line is upstream's), for the files where an entry added a definition. KEPT: what earlier runs
    found parsing the same blobs."""
    out: list[dict[str, object]] = []
    for path, owned, found in owned_findings(git, tip, owners, _suspect, "shadowed", _found, kept,
                                             scan=(_scan, _suspected)):
        for scope, name, lines in found:
            by = [owner(owned, line, name) for line in lines]
            if len(set(by)) > 1:
                out.append(_warning(path, scope, name, lines, by))
    return out


def _found(module: ast.Module) -> list[Finding]:
    """(scope, name, the lines of its definitions) for each name a scope of MODULE defines twice (`_twice`)."""
    return [(scope, nodes[0].name, [node.lineno for node in nodes])
            for scope, nodes in _twice(module, overload_names(module))]


def parse_module(data: bytes) -> ast.Module | None:
    """DATA parsed, its lines numbered as git numbers them: a lone carriage return, a line end to Python,
    is not one to git (helper-106: every later line was one off), so it is read as a space."""
    try:
        with warnings.catch_warnings(), no_collection():   # (invalid escapes warn when parsed, on newer Pythons)
            warnings.simplefilter("ignore")
            return ast.parse(data.replace(b"\r", b" "))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Python's cyclic garbage collector held off: a syntax tree (and what is read off it) holds no cycle, yet
    its hundred thousand new nodes set off collections that walk every object of the run again and again
    (a third of the parse of xarray's 8,500-line test module, h212). Nested, the outermost one decides."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _suspect(data: bytes, owned: Owners, *, owned_apart: bool = True) -> bool:
    """Whether DATA defines a name twice in one scope (the module's body, or a class's: the `def`/`class`
    lines before it with less indentation say which), not both by the same side: the cheap scan before a
    parse, which decides. (A `def` inside a function is that function's: test modules define the same
    helper in many tests.) Twice over: a `def` at the start of a line inside a triple-quoted string (code a
    test compiles) is no definition, and taken for one it made every later method of its class look nested
    in it (helper-111); the quote pairing that leaves such strings out (`triple_quoted`, fast) may pair a
    quote in a comment with the next docstring and leave out what lies between (helper-112). So the file
    is read with those strings left out, and as it is: a pair either way is a suspect. (Python's own
    pairing, `strings_exactly`, cost 40-100 ms a sync more on real corpora.)"""
    return _suspected(_scan(data), owned, owned_apart=owned_apart)


def _scan(data: bytes) -> list[Finding]:
    """`_suspect`'s scan of DATA, whoever landed what: each (scope, name) it finds defined twice, with its
    lines, read with the triple-quoted strings left out ("strings out: <scope's line>") and, when some `def`
    stood inside one, as it is ("as is: <scope's line>")."""
    matches = list(DEF_LINE.finditer(data))
    if len(matches) < 2:
        return []
    spans = [(start, end) for start, end, _quote, _passed in triple_quoted(data)
             if end > 0 and data.find(b"\n", start, end) >= 0]
    starts = [start for start, _end in spans]
    inside = [(at := bisect.bisect_right(starts, m.start()) - 1) >= 0 and m.start() < spans[at][1] for m in matches]
    found = _pairs(data, [m for m, skip in zip(matches, inside) if not skip], "strings out")
    return found + (_pairs(data, matches, "as is") if any(inside) else [])


def _suspected(found: list[Finding], owned: Owners, *, owned_apart: bool = True) -> bool:
    """Whether a name `_scan` FOUND defined twice in one scope is not defined both times by the same side
    (OWNED: who landed which line); with OWNED_APART false, whoever defined it."""
    return any(not owned_apart or len({owner(owned, n, name) for n in lines}) > 1 for _where, name, lines in found)


def _pairs(data: bytes, matches: list[re.Match[bytes]], variant: str) -> list[Finding]:
    seen: dict[tuple[int, bytes], list[int]] = {}
    stack: list[tuple[int, int, bool]] = []        # (indentation, line, a class) of the enclosing definitions
    line, pos = 1, 0
    for match in matches:
        line += data.count(b"\n", pos, match.start())
        pos = match.start()
        indent = len(match.group(1).expandtabs())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if all(is_class for _indent, _line, is_class in stack) and match.group(2) != b"_":
            seen.setdefault((stack[-1][1] if stack else 0, match.group(2)), []).append(line)
        stack.append((indent, line, data.startswith(b"class", match.end(1))))
    return [(f"{variant}: {scope}", _name(name), lines) for (scope, name), lines in seen.items() if len(lines) > 1]



def folded_twice(git: Git, upstream: str, tip: str, folded: Sequence[tuple[str, str, str]]) -> list[str]:
    """What a union fold TIP (on UPSTREAM) defines more often in one scope than upstream does and than any
    one of the FOLDED PRs' heads does ((id, base, head) each): two PRs' definitions of one name, which the
    union holds both of (sync cannot tell them apart: the union is one entry). One message per name.
    Only the Python files the fold changes that define a name twice (the scan) are parsed, with the same
    versions of upstream and the heads."""
    out: list[str] = []
    changes = git.diff_trees([(git.tree_of(upstream), git.tree_of(tip))], renames=False)[0]
    for path in sorted({c.path for c in changes if c.path.endswith(".py") and c.status != "D"}):
        data = git.file_at(tip, path)
        counts = _counts(data) if data is not None and _defined_twice(data) else None
        twice = {key: n for key, n in (counts or {}).items() if n > 1}
        if not twice:
            continue
        before = _counts(git.file_at(upstream, path)) or {}
        sides = [(pr, _counts(git.file_at(head, path)) or {}, _counts(git.file_at(base, path)) or {})
                 for pr, base, head in folded]
        for (scope, name), n in sorted(twice.items()):
            key = (scope, name)
            if n <= max([before.get(key, 0)] + [head.get(key, 0) for _pr, head, _base in sides]):
                continue             # upstream's own, or one PR's own
            who = [pr for pr, head, _base in sides if head.get(key)]
            where = f"{scope}.{name}" if scope else name
            said = f"{', '.join(who)} {'defines' if len(who) == 1 else 'each define'} it" + \
                (", as upstream does" if before.get(key) else "")
            out.append(f"{path}: the union defines {where} {n} times in one scope ({said}): when the module runs "
                       "the last replaces the others, whose code is dead")
    return out


def _defined_twice(data: bytes) -> bool:
    """The scan of `_suspect`, whoever landed what: a name defined twice in one scope."""
    return _suspect(data, {}, owned_apart=False)


def _counts(data: bytes | None) -> dict[tuple[str, str], int] | None:
    """(scope, name) -> how many definitions of NAME the scope's own body holds, not counting those several
    by design (`_bodies`, without the blocks of compound statements); None when DATA is no Python this
    interpreter reads."""
    module = parse_module(data) if data is not None else None
    if module is None:
        return None
    out: dict[tuple[str, str], int] = {}
    for scope, named in _bodies(module, overload_names(module), blocks=False):
        for name, nodes in named.items():
            out[(scope, name)] = out.get((scope, name), 0) + len(nodes)
    return out


def _twice(module: ast.Module, overloads: frozenset[str]) -> list[tuple[str, list[Definition]]]:
    """(scope, definitions) for each name a body defines more than once (`_bodies`, with the blocks)."""
    return [(scope, nodes) for scope, named in _bodies(module, overloads, blocks=True)
            for nodes in named.values() if len(nodes) > 1]


def _bodies(module: ast.Module, overloads: frozenset[str], *, blocks: bool
            ) -> Iterator[tuple[str, dict[str, list[Definition]]]]:
    """Each body's definitions by name, not counting the name `_` nor definitions several by design
    (`by_design`): the module's body and each class's, nested classes too (a function's body is its own
    business), with the scope each binds in; with BLOCKS, each block of an `if`/`try`/`with` (...) as a
    body of its own, binding in the scope it is in, apart from its alternatives."""
    todo: list[tuple[str, list[ast.stmt]]] = [("", module.body)]
    while todo:
        scope, body = todo.pop(0)
        named: dict[str, list[Definition]] = {}
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name != "_" and not by_design(node, overloads):
                    named.setdefault(node.name, []).append(node)
                if isinstance(node, ast.ClassDef):
                    todo.append((f"{scope}.{node.name}" if scope else node.name, node.body))
            elif blocks:
                todo += [(scope, block) for block in compound_blocks(node)]
        yield scope, named


def _warning(path: str, scope: str, name: str, lines: list[int], by: list[str]) -> dict[str, object]:
    """The warning for NAME, defined at LINES (file order) of one scope, landed by BY."""
    where = f"{scope}.{name}" if scope else name
    # the entry whose definition no longer counts, else (upstream's no longer counts) the one replacing it
    entry = next((owner for owner in by[:-1] if owner != UPSTREAM), by[-1])
    lost = ", ".join(dict.fromkeys(f"{owner}'s" for owner in by[:-1]))
    said = ", ".join(f"line {line} by {owner}" for line, owner in zip(lines, by))
    return {"kind": "shadowed-definition", "entry": entry, "file": path, "name": where, "lines": lines,
            "by": by,
            "message": f"{path} defines {where} {len(lines)} times in one scope ({said}): when the module runs, "
                       f"the last, {by[-1]}'s, replaces {lost}, whose code is dead"}
