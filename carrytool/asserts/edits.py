"""Line edits that break one statement of a Python file, each giving a `Mutant` when the result parses.

Pure: the file's text in, mutated text out. Edits work on whole lines (a statement sharing a line with
another is left alone); what each operator does is described in `mutants`, which decides what to break.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from carrytool.asserts.calltarget import parse_call_target
from carrytool.asserts.lexical import is_call_of, lexical_calls
from carrytool.asserts.local import enclosing
from carrytool.asserts.pyscope import Scope
from carrytool.asserts.source import SourceFile
from carrytool.asserts.spec import AssertSpec

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
    def drop(self, stmt: ast.stmt, kind: str = "drop-call") -> Iterator[Mutant]:
        place = self.places[id(stmt)]
        replacement = [self._indent_of(stmt) + "pass"] if len(place.block) == 1 else []
        yield from self._mutant(stmt, kind, f"deleted `{_code(stmt)}`",
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
                    and not _inert(place.block[other]) and self._swappable(place, min(other, place.index)):
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


def _inert(stmt: ast.stmt) -> bool:
    """A statement that does nothing when it runs (a docstring or another bare constant, `pass`): moving a
    statement across it changes nothing, a mutant no assert can kill (helper-87: a survivor "moved before
    the docstring" lowered the score)."""
    return isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
