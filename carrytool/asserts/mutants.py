"""Mutants of the code an assert guards, and which asserts kill them: how strong a manifest's asserts are.

Pure: source text in, mutated source text out, never a file written. For every Python assert with a
scope, the *guarded calls* are the calls its check names in that scope (for `through: local`, also in the
same-file functions it follows; for `mentions`, the statements using the name); for `not_calls`, the
guarded code is an absence. Each guarded call's statement is then broken the ways hot-path code breaks
in a merge:

- `drop-call`: the statement is deleted (a `pass` keeps its block alive);
- `duplicate`: the statement runs twice;
- `swap`: the statement trades places with the one before or after it in its block (a call moved
  before or after its neighbour), and for `order` the first calls of two consecutive names trade places;
- `unguard`: the innermost `if` around it (in the scope) is replaced by its body, `else` dropped;
- `untry`: it is moved out of the `try` (with an `except`) around it, to just before the `try`;
- `drop-arg`: one keyword argument of the call is removed (the callee's default takes over);
- `add-call`: for `not_calls`, a call of the target is added at the top of the scope.

Edits are made on whole lines (a statement sharing a line with another is left alone) and a mutant that
does not parse is discarded, as is one equal to the original or to an earlier mutant. A mutant is
*killed* by an assert that holds on the original and fails on the mutant; one no assert kills
*survives*. Some survivors are equivalent mutants (duplicating an idempotent call, swapping two
independent statements): the report lists them so a maintainer can judge, it does not hide them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from carrytool.asserts.calltarget import parse_call_target
from carrytool.asserts.engine import evaluate_all, spec_problem
from carrytool.asserts.lexical import is_call_of, lexical_calls
from carrytool.asserts.local import calls_through, enclosing
from carrytool.asserts.names import identifier_nodes, names_identifier, parse_target
from carrytool.asserts.pyscope import Scope, resolve_scope
from carrytool.asserts.source import SourceFile
from carrytool.asserts.spec import TEXT_CHECKS, AssertOutcome, AssertSpec

ReadFile = Callable[[str], "bytes | None"]
_TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


@dataclass(frozen=True)
class Mutant:
    """One broken variant of one file: what was done, where, and the whole mutated content."""

    file: str
    line: int
    scope: str | None
    mutation: str
    description: str
    source: bytes = field(repr=False)
    origin: tuple[str, ...] = ()     # the asserts whose guarded code this mutates

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "scope": self.scope, "mutation": self.mutation,
                "description": self.description, "from": list(self.origin)}


@dataclass
class Judged:
    """The verdict of every assert on every mutant."""

    baseline: list[AssertOutcome]
    mutants: list[Mutant]
    killers: list[list[str]]          # per mutant, the asserts that kill it

    @property
    def killed(self) -> int:
        return sum(1 for names in self.killers if names)

    @property
    def score(self) -> float:
        return self.killed / len(self.mutants) if self.mutants else 1.0

    def survivors(self) -> list[Mutant]:
        return [mutant for mutant, names in zip(self.mutants, self.killers) if not names]

    def per_assert(self) -> list[dict[str, object]]:
        """Per assert: the mutants it kills, the mutants of its own code and the share of those killed."""
        rows = []
        for outcome in self.baseline:
            own = [i for i, mutant in enumerate(self.mutants) if outcome.name in mutant.origin]
            own_killed = sum(1 for i in own if self.killers[i])
            rows.append({"name": outcome.name, "killed": sum(1 for names in self.killers if outcome.name in names),
                         "mutants": len(own), "own_killed": own_killed,
                         "score": round(own_killed / len(own), 4) if own else None})
        return rows

    def to_json(self) -> dict[str, object]:
        return {"score": round(self.score, 4), "mutants": len(self.mutants), "killed": self.killed,
                "asserts": self.per_assert(),
                "survivors": [mutant.to_json() for mutant in self.survivors()],
                "kills": [{"mutant": i, **mutant.to_json(), "killed_by": names}
                          for i, (mutant, names) in enumerate(zip(self.mutants, self.killers))]}


def judge_mutants(specs: Sequence[AssertSpec], read_file: ReadFile, *,
                  derive_from: Sequence[AssertSpec] | None = None) -> Judged:
    """Evaluate the asserts on the tree, derive the mutants of their guarded code and judge each one.

    `derive_from` derives the mutants from other asserts' code (to compare two manifests on one set).
    """
    cache: dict[str, bytes | None] = {}

    def read(path: str) -> bytes | None:
        if path not in cache:
            cache[path] = read_file(path)
        return cache[path]

    baseline = evaluate_all(specs, read)
    holding = {outcome.name for outcome in baseline if outcome.ok}
    mutants = derive_mutants(specs if derive_from is None else derive_from, read)
    killers: list[list[str]] = []
    for mutant in mutants:
        mine = [spec for spec in specs if spec.file == mutant.file and spec.name in holding]
        outcomes = evaluate_all(mine, lambda path, m=mutant: m.source if path == m.file else read(path))
        killers.append([outcome.name for outcome in outcomes if not outcome.ok])
    return Judged(baseline, mutants, killers)


def derive_mutants(specs: Sequence[AssertSpec], read_file: ReadFile) -> list[Mutant]:
    """Return the mutants of the code every assert guards, deduplicated, in manifest order."""
    found: dict[tuple[str, bytes], Mutant] = {}
    files: dict[str, SourceFile | None] = {}
    for spec in specs:
        if spec.file not in files:
            data = read_file(spec.file)
            files[spec.file] = SourceFile(spec.file, data) if data is not None else None
        src = files[spec.file]
        if src is None or src.tree is None or spec.check in TEXT_CHECKS or spec_problem(spec):
            continue
        scope = resolve_scope(src, spec.scope)
        if isinstance(scope, str):
            continue
        for mutant in _mutants_for(spec, src, scope):
            key = (mutant.file, mutant.source)
            if mutant.source == src.data:
                continue
            if key in found:
                old = found[key]
                if spec.name not in old.origin:
                    found[key] = Mutant(old.file, old.line, old.scope, old.mutation, old.description, old.source,
                                        (*old.origin, spec.name))
                continue
            found[key] = mutant
    return list(found.values())


def _mutants_for(spec: AssertSpec, src: SourceFile, scope: Scope) -> Iterator[Mutant]:
    editor = Editor(src, spec.name)
    if spec.check == "not_calls":
        yield from editor.add_call(scope, str(spec.target).strip())
        return
    guarded = _guarded_calls(spec, src, scope)
    for call in guarded:
        stmt = editor.statement_of(call)
        if stmt is None or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a parameter or decorator mentioning the name: mutating whole definitions is noise
        yield from editor.drop(stmt)
        yield from editor.duplicate(stmt)
        yield from editor.move(stmt)
        yield from editor.unguard(stmt, scope)
        yield from editor.untry(stmt, scope)
        if isinstance(call, ast.Call):
            yield from editor.drop_args(call)
    if spec.check == "order":
        yield from editor.swap_order(spec, scope)


def _guarded_calls(spec: AssertSpec, src: SourceFile, scope: Scope) -> list[ast.AST]:
    """Return the nodes an assert is about: the calls it names (or, for `mentions`, the uses of the name)."""
    if spec.check in ("mentions", "reads"):
        target = parse_target(str(spec.target)) or ()
        nodes = [node for root in scope.nodes for node in identifier_nodes(ast.walk(root))
                 if names_identifier(node, target)]
        return _first_per_line(nodes)
    if spec.check == "defines":
        return []
    names = list(spec.target) if isinstance(spec.target, tuple) else [str(spec.target)]
    args = dict(spec.args) if spec.args and spec.check != "order" else None
    targets = [parse_call_target(name.strip(), args) or () for name in names]
    calls = ([call for call, _via in calls_through(src, scope)] if spec.through == "local"
             else [call for call, runs in lexical_calls(src, scope) if runs])
    return _first_per_line([call for call in calls if any(is_call_of(src, call, t) for t in targets)])


def _first_per_line(nodes: Iterable[ast.AST]) -> list[ast.AST]:
    seen: set[int] = set()
    out = []
    for node in sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if getattr(node, "lineno", 0) not in seen:
            seen.add(getattr(node, "lineno", 0))
            out.append(node)
    return out


@dataclass
class Place:
    """Where a statement stands: its block, its index there, and the statements enclosing it."""

    block: list[ast.stmt]
    index: int
    parents: tuple[ast.AST, ...]    # outermost first, the statement's block owner last


class Editor:
    """Line edits of one file, each yielding a Mutant when the result still parses."""

    def __init__(self, src: SourceFile, origin: str) -> None:
        self.src = src
        self.origin = origin
        self.places: dict[int, Place] = src.memo("mutant-places", lambda: _places(src))
        self.owner: dict[int, ast.stmt] = src.memo("mutant-owner", lambda: _owners(src))

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        stmt = self.owner.get(id(node))
        return stmt if stmt is not None and self._whole_lines(stmt) else None

    # -- the operators ------------------------------------------------------------------------------
    def drop(self, stmt: ast.stmt) -> Iterator[Mutant]:
        place = self.places[id(stmt)]
        replacement = [self._indent_of(stmt) + "pass"] if len(place.block) == 1 else []
        yield from self._mutant(stmt, "drop-call", f"deleted `{_code(stmt)}`",
                                self._replace(stmt.lineno, _end(stmt), replacement))

    def duplicate(self, stmt: ast.stmt) -> Iterator[Mutant]:
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return  # the copy would never run
        lines = self._lines(stmt.lineno, _end(stmt))
        yield from self._mutant(stmt, "duplicate", f"`{_code(stmt)}` runs twice",
                                self._replace(stmt.lineno, _end(stmt), lines + lines))

    def move(self, stmt: ast.stmt) -> Iterator[Mutant]:
        place = self.places[id(stmt)]
        for other, where in ((place.index - 1, "before"), (place.index + 1, "after")):
            if 0 <= other < len(place.block) and self._whole_lines(place.block[other]) \
                    and self._swappable(place, min(other, place.index)):
                neighbour = place.block[other]
                yield from self._swapped(stmt, neighbour, "swap",
                                         f"`{_code(stmt)}` moved {where} `{_code(neighbour)}`")

    def unguard(self, stmt: ast.stmt, scope: Scope) -> Iterator[Mutant]:
        guard = self._enclosing(stmt, ast.If, scope)
        if guard is None or not self._in_body(stmt, guard) or self.src.line_text(guard.lineno).lstrip().startswith("elif"):
            return
        body = self._dedent(self._lines(guard.body[0].lineno, _end(guard.body[-1])),
                            self._indent_of(guard.body[0]), self._indent_of(guard))
        yield from self._mutant(stmt, "unguard", f"the `if {_code(guard.test)}` around `{_code(stmt)}` removed",
                                self._replace(guard.lineno, _end(guard), body), line=guard.lineno)

    def untry(self, stmt: ast.stmt, scope: Scope) -> Iterator[Mutant]:
        handled = self._enclosing(stmt, _TRY, scope)
        if handled is None or not handled.handlers or not self._in_body(stmt, handled):
            return
        place = self.places[id(stmt)]
        moved = self._dedent(self._lines(stmt.lineno, _end(stmt)), self._indent_of(stmt), self._indent_of(handled))
        text = self._replace(stmt.lineno, _end(stmt), [self._indent_of(stmt) + "pass"] if len(place.block) == 1 else [])
        lines = text.split("\n")
        at = handled.lineno - 1
        lines[at:at] = moved
        yield from self._mutant(stmt, "untry", f"`{_code(stmt)}` moved out of the `try` at line {handled.lineno}",
                                "\n".join(lines))

    def drop_args(self, call: ast.Call) -> Iterator[Mutant]:
        if call.lineno != call.end_lineno or not call.keywords:
            return
        for keyword in call.keywords:
            if keyword.arg is None:
                continue
            smaller = ast.Call(call.func, call.args, [k for k in call.keywords if k is not keyword])
            line = self.src.line_text(call.lineno)
            text = line[:call.col_offset] + ast.unparse(smaller) + line[call.end_col_offset:]
            lines = list(self.src.lines)
            lines[call.lineno - 1] = text
            yield from self._mutant(call, "drop-arg", f"`{keyword.arg}=` dropped from `{_code(call)}`",
                                    "\n".join(lines))

    def swap_order(self, spec: AssertSpec, scope: Scope) -> Iterator[Mutant]:
        names = [name.strip() for name in spec.target] if isinstance(spec.target, tuple) else []
        firsts: list[ast.stmt | None] = []
        for name in names:
            target = parse_call_target(name) or ()
            call = next((c for c, runs in lexical_calls(self.src, scope) if runs and is_call_of(self.src, c, target)),
                        None)
            firsts.append(self.statement_of(call) if call is not None else None)
        for left, right in zip(firsts, firsts[1:]):
            if left is None or right is None or left is right:
                continue
            if _end(left) < right.lineno or _end(right) < left.lineno:
                yield from self._swapped(left, right, "swap", f"`{_code(left)}` and `{_code(right)}` swapped")

    def add_call(self, scope: Scope, target: str) -> Iterator[Mutant]:
        node = scope.nodes[0]
        body = getattr(node, "body", None)
        if not scope.name or not body or isinstance(node, ast.ClassDef) or not self._whole_lines(body[0]):
            if isinstance(node, ast.ClassDef):
                methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if methods and methods[0].body and self._whole_lines(methods[0].body[0]):
                    yield from self._insert_call(methods[0].body[0], target, f"{scope.name}.{methods[0].name}")
            return
        yield from self._insert_call(body[0], target, scope.name)

    def _insert_call(self, first: ast.stmt, target: str, where: str) -> Iterator[Mutant]:
        callee = target.replace("*.", "self.", 1).replace("()", "")
        lines = list(self.src.lines)
        # a docstring stays first; the call goes right after it
        at = _end(first) if _is_docstring(first) else first.lineno - 1
        lines[at:at] = [self._indent_of(first) + f"{callee}()"]
        yield from self._mutant(first, "add-call", f"`{callee}()` added at the top of {where}", "\n".join(lines),
                                line=at + 1)

    # -- helpers ---------------------------------------------------------------------------------------
    def _swappable(self, place: Place, first: int) -> bool:
        """Tell whether block[first] and the statement after it can trade places without the second reading
        a name only the first binds (a NameError any test catches, not a reordering)."""
        bound = {arg.arg for parent in place.parents if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for arg in ast.walk(parent.args) if isinstance(arg, ast.arg)}
        for stmt in place.block[:first]:
            bound |= _names(stmt)[0]
        stored, _ = _names(place.block[first])
        _, loaded = _names(place.block[first + 1])
        return not (stored & loaded) - bound

    def _swapped(self, a: ast.stmt, b: ast.stmt, kind: str, description: str) -> Iterator[Mutant]:
        first, second = (a, b) if a.lineno < b.lineno else (b, a)
        if self._indent_of(first) != self._indent_of(second):
            return
        lines = list(self.src.lines)
        head, tail = self._lines(first.lineno, _end(first)), self._lines(second.lineno, _end(second))
        middle = lines[_end(first):second.lineno - 1]
        lines[first.lineno - 1:_end(second)] = tail + middle + head
        yield from self._mutant(a, kind, description, "\n".join(lines))

    def _mutant(self, node: ast.AST, kind: str, description: str, text: str, line: int | None = None) -> Iterator[Mutant]:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return
        scope = enclosing(self.src).get(id(node)) or None
        yield Mutant(self.src.path, line or getattr(node, "lineno", 0), scope, kind, description,
                     text.encode(), (self.origin,))

    def _enclosing(self, stmt: ast.stmt, kinds: type | tuple[type, ...], scope: Scope) -> ast.AST | None:
        place = self.places.get(id(stmt))
        roots = {id(node) for node in scope.nodes}
        for parent in reversed(place.parents if place else ()):
            if id(parent) in roots or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            if isinstance(parent, kinds):
                return parent if self._whole_lines(parent) else None
        return None

    def _in_body(self, stmt: ast.stmt, parent: ast.AST) -> bool:
        body = getattr(parent, "body", [])
        return any(node is stmt or any(inner is stmt for inner in ast.walk(node)) for node in body)

    def _whole_lines(self, stmt: ast.stmt) -> bool:
        first = self.src.line_text(stmt.lineno)
        last = self.src.line_text(_end(stmt))
        end_col = getattr(stmt, "end_col_offset", None)
        rest = last[end_col:] if end_col is not None else ""
        return first[:stmt.col_offset].strip() == "" and (rest.strip() == "" or rest.strip().startswith("#"))

    def _lines(self, first: int, last: int) -> list[str]:
        return list(self.src.lines[first - 1:last])

    def _replace(self, first: int, last: int, new: list[str]) -> str:
        lines = list(self.src.lines)
        lines[first - 1:last] = new
        return "\n".join(lines)

    def _indent_of(self, stmt: ast.AST) -> str:
        text = self.src.line_text(getattr(stmt, "lineno", 1))
        return text[:len(text) - len(text.lstrip())]

    @staticmethod
    def _dedent(lines: list[str], old: str, new: str) -> list[str]:
        return [new + line[len(old):] if line.startswith(old) else line for line in lines]


def _places(src: SourceFile) -> dict[int, Place]:
    places: dict[int, Place] = {}
    assert src.tree is not None
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(src.tree, ())]
    while stack:
        node, parents = stack.pop()
        for block in _blocks(node):
            for index, stmt in enumerate(block):
                places[id(stmt)] = Place(block, index, (*parents, node))
                stack.append((stmt, (*parents, node)))
    return places


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(node, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(node, name, None), list)]
    blocks += [handler.body for handler in getattr(node, "handlers", ())]
    blocks += [case.body for case in getattr(node, "cases", ())]
    return [block for block in blocks if block and isinstance(block[0], ast.stmt)]


def _owners(src: SourceFile) -> dict[int, ast.stmt]:
    """Map every node to the innermost statement holding it (outer statements are visited first)."""
    owner: dict[int, ast.stmt] = {}
    assert src.tree is not None
    stack: list[ast.AST] = list(reversed(src.tree.body))
    while stack:
        stmt = stack.pop()
        for node in ast.walk(stmt):
            owner[id(node)] = stmt  # type: ignore[assignment]
        for block in _blocks(stmt):
            stack.extend(reversed(block))
    return owner


def _names(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """Return (names the statement binds, names it reads)."""
    stored: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
    return stored, loaded


def _end(stmt: ast.AST) -> int:
    return getattr(stmt, "end_lineno", None) or getattr(stmt, "lineno", 1)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _code(node: ast.AST) -> str:
    from carrytool.asserts.messages import short_code

    if isinstance(node, (ast.If, ast.While, ast.For, ast.With, *_TRY, ast.FunctionDef)):
        return short_code(node).split(":", 1)[0][:40] + ": ..."
    return short_code(node)
