"""Mutants of the code an assert guards, and which asserts kill them: how strong a manifest's asserts are.

Pure: source text in, mutated source text out, never a file written. For every Python assert with a
scope, the *guarded calls* are the calls its check names in that scope (for `through: local`, also in the
same-file functions it follows; for `mentions`, the statements using the name); for `not_calls`, the
guarded code is an absence. Each guarded call's statement is then broken the ways hot-path code breaks
in a merge:

- `drop-call`: the statement is deleted (a `pass` keeps its block alive); `drop-statement` when it is no
  call (an assignment or an `if` using the name `mentions` names);
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
from dataclasses import dataclass

from carrytool.asserts.calltarget import parse_call_target
from carrytool.asserts.edits import Editor, Mutant
from carrytool.asserts.engine import evaluate_all, spec_problem
from carrytool.asserts.lexical import is_call_of, lexical_calls
from carrytool.asserts.local import calls_through
from carrytool.asserts.names import identifier_nodes, names_identifier, parse_target
from carrytool.asserts.pyscope import Scope, resolve_scope
from carrytool.asserts.source import SourceFile
from carrytool.asserts.spec import TEXT_CHECKS, AssertOutcome, AssertSpec

ReadFile = Callable[[str], "bytes | None"]


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
        # no mutant proves nothing: a manifest whose asserts guard no call must not read as 100% strong
        return self.killed / len(self.mutants) if self.mutants else 0.0

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
        called = isinstance(call, ast.Call) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        yield from editor.drop(stmt, "drop-call" if called else "drop-statement")
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
