"""Evaluate hot-path assertions on source text: the entry points and the dispatch to each check.

Every check reads the file's bytes given to it, never the disk. A missing file, a file that does not
parse, a missing scope or a malformed spec is a failed outcome whose message says which; nothing here
raises for any file content.

Where the contract is silent, the decisions live with the code they shape (and in docs/assertions.md):
the callee's dotted form continues through call boundaries (`names`); same-named definitions such as a
property's getter and setter are alternatives of one scope, `@overload` stubs aside (`pyscope`); the path
model for loops, `while True`, `try` and nested definitions (`paths`); a bounded `calls` with no call at
all judges only the bounds, so `max: 0` holds (`counts`); `guarded_by` looks at every lexical call,
nested functions included (`guards`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace

from carrytool.asserts.after import check_after
from carrytool.asserts.calltarget import args_problem, parse_call_target, render_target
from carrytool.asserts.counts import check_calls
from carrytool.asserts.expressions import TooComplex
from carrytool.asserts.guards import check_guarded
from carrytool.asserts.lexical import (
    check_defines,
    check_mentions,
    check_not_calls,
    check_reads,
)
from carrytool.asserts.local import check_not_calls_through
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import parse_target
from carrytool.asserts.order import check_order
from carrytool.asserts.paths import unreachable
from carrytool.asserts.pyscope import Scope, resolve_scope
from carrytool.asserts.source import SourceFile
from carrytool.asserts.spec import CHECKS, PATHS, TEXT_CHECKS, AssertOutcome, AssertSpec
from carrytool.asserts.text import check_text
from carrytool.asserts.trys import check_in_try

_BOUNDS = ("times", "min", "max", "guarded_by")
MISSING = "does not exist in the composed tree"       # what a file the tree does not have is said to do
_CALL_CHECKS = ("calls", "not_calls", "order")


def evaluate(spec: AssertSpec, source: bytes | None) -> AssertOutcome:
    """Evaluate one assertion on a file's content (`None` when the file does not exist in the tree)."""
    return _evaluate(spec, SourceFile(spec.file, source) if source is not None else None)


def evaluate_all(specs: Iterable[AssertSpec], read_file: Callable[[str], bytes | None], *,
                 missing: str = MISSING) -> list[AssertOutcome]:
    """Evaluate assertions in order, reading each distinct file once and parsing each Python file once.
    MISSING: what is said of a file READ_FILE does not have (`FILE <missing>`)."""
    files: dict[str, SourceFile | None] = {}
    outcomes: list[AssertOutcome] = []
    for spec in specs:
        if spec.file not in files:
            data = read_file(spec.file)
            files[spec.file] = SourceFile(spec.file, data) if data is not None else None
        outcomes.append(_evaluate(spec, files[spec.file], missing))
    return outcomes


def _evaluate(spec: AssertSpec, src: SourceFile | None, missing: str = MISSING) -> AssertOutcome:
    try:
        verdict = _judge(spec, src, missing)
    except RecursionError:
        # The walks recurse along the nesting of the code; absurdly deep code is refused, not crashed on.
        verdict = failed(f"{spec.file}: the code is nested too deeply to analyse")
    # a Python check (or a scoped text check) on a file that does not parse was not judged at all
    unparsable = not verdict.ok and src is not None and (spec.check not in TEXT_CHECKS or bool(spec.scope)) \
        and verdict.message == src.parse_error
    return AssertOutcome(name=spec.name, file=spec.file, ok=verdict.ok, message=verdict.message,
                         line=verdict.line, entry=spec.entry, why=spec.why, unparsable=unparsable)


def _judge(spec: AssertSpec, src: SourceFile | None, missing: str) -> Verdict:
    if src is None:
        return failed(f"{spec.file} {missing}")
    problem = spec_problem(spec)
    if problem:
        return failed(problem)
    spec = _normalized(spec)
    if spec.check in TEXT_CHECKS and not spec.scope:
        return check_text(src, None, spec.check, str(spec.target))
    if src.parse_error:
        return failed(src.parse_error)
    scope = _running(src, resolve_scope(src, spec.scope))
    if isinstance(scope, str):
        return failed(scope)
    return _judge_python(spec, src, scope)


def _running(src: SourceFile, scope: Scope | str) -> Scope | str:
    """SCOPE without its definitions no path runs (`if False:` + `def`), or why none is left (helper-115)."""
    if isinstance(scope, str):
        return scope
    dead = unreachable(src)
    live = tuple(node for node in scope.nodes if id(node) not in dead)
    if live:
        return scope if len(live) == len(scope.nodes) else replace(scope, nodes=live)
    node = scope.nodes[0]
    return f"{scope.where} at {src.at(getattr(node, 'lineno', None))} is never defined: its `def` never runs " \
           f"({dead[id(node)].fill(src)})"


def _judge_python(spec: AssertSpec, src: SourceFile, scope: Scope) -> Verdict:
    try:
        verdict = _judge_scope(spec, src, scope)
        if verdict.ok or not scope.dead:
            return verdict
        # the code the user sees may be in a definition that never runs as its name (helper-115)
        return failed(f"{verdict.message} ({'; '.join(scope.dead)}: only the last binding of a name in a body "
                      f"counts)", verdict.line)
    except TooComplex as error:
        # Walks are linear in the size of the scope; only absurd code gets here, and it must not hang CI.
        return failed(f"{scope.prefix}{scope.where} is too complex to analyse ({error}), so the assert "
                      f"cannot be judged", scope.line)


def _judge_scope(spec: AssertSpec, src: SourceFile, scope: Scope) -> Verdict:
    check, target = spec.check, spec.target
    if check in TEXT_CHECKS:
        return check_text(src, scope, check, str(target))
    if check == "defines":
        return check_defines(src, scope, str(target).strip())
    if check == "order":
        names = [name.strip() for name in _names(target)]
        return check_order(src, scope, [parse_call_target(name) or () for name in names], names,
                           through=spec.through)
    shown = str(target).strip()
    if check == "mentions":
        return check_mentions(src, scope, parse_target(shown) or (), shown)
    if check == "reads":
        return check_reads(src, scope, parse_target(shown) or (), shown)
    args = dict(spec.args) if spec.args else None
    dotted = parse_call_target(shown, args) or ()
    shown = render_target(shown, args)
    if check == "not_calls":
        if spec.through:
            return check_not_calls_through(src, scope, dotted, shown)
        return check_not_calls(src, scope, dotted, shown)
    low, high = _bounds(spec)
    counted = check_calls(src, scope, dotted, shown, low, high, returning=spec.paths == "returning",
                          through=spec.through)
    if counted.ok and (spec.after or spec.in_try is not None):
        return _judge_placement(spec, src, scope, dotted, shown, counted)
    if not counted.ok or spec.guarded_by is None:
        return counted
    guard = spec.guarded_by.strip()
    guarded = check_guarded(src, scope, dotted, shown, parse_target(guard) or (), guard)
    if not guarded.ok or (low is None and high is None):
        return guarded
    return passed(f"{counted.message}; {guarded.message}", counted.line)


def _judge_placement(spec: AssertSpec, src: SourceFile, scope: Scope, dotted: tuple, shown: str,
                     counted: Verdict) -> Verdict:
    """Judge `after` / `in_try` (true or false) once `calls` (with its bounds) holds; then `guarded_by`."""
    verdicts = [counted]
    if spec.after:
        work = [name.strip() for name in spec.after]
        verdicts.append(check_after(src, scope, dotted, shown, [parse_call_target(name) or () for name in work],
                                    work, through=spec.through))
    if spec.in_try is not None:
        verdicts.append(check_in_try(src, scope, dotted, shown, want=spec.in_try))
    if spec.guarded_by is not None:
        guard = spec.guarded_by.strip()
        verdicts.append(check_guarded(src, scope, dotted, shown, parse_target(guard) or (), guard))
    bad = next((verdict for verdict in verdicts if not verdict.ok), None)
    if bad is not None:
        return bad
    return passed("; ".join(verdict.message for verdict in verdicts), counted.line)


def _normalized(spec: AssertSpec) -> AssertSpec:
    """SPEC with its names as Python reads identifiers, in NFKC: a decomposed `é` an editor wrote is the `é`
    of the code (helper-115: names beyond ASCII). A text check's text stays as written."""
    def nfkc(text: str) -> str:
        return unicodedata.normalize("NFKC", text)
    target = spec.target if spec.check in TEXT_CHECKS else \
        tuple(map(nfkc, spec.target)) if isinstance(spec.target, tuple) else nfkc(spec.target)
    return replace(spec, target=target, scope=spec.scope and nfkc(spec.scope),
                   guarded_by=spec.guarded_by and nfkc(spec.guarded_by),
                   after=spec.after and tuple(map(nfkc, spec.after)),
                   args=tuple((key, nfkc(value) if isinstance(value, str) else value) for key, value in spec.args)
                   if isinstance(spec.args, (tuple, list)) else spec.args)


def spec_problem(spec: AssertSpec) -> str | None:
    """Return why a spec cannot be evaluated (unknown check, malformed target or bounds), or None."""
    check, target = spec.check, spec.target
    if check not in CHECKS:
        return f"unknown check `{check}` (known: {', '.join(CHECKS)})"
    if spec.scope is not None and not isinstance(spec.scope, str):
        return f"`in` needs a qualified name such as Worker.wake_up, got {spec.scope!r}"
    if check in TEXT_CHECKS:
        return None if isinstance(target, str) and target else f"`{check}` needs a non-empty text"
    if check == "order":
        names = _names(target)
        if not names or any(parse_call_target(name) is None for name in names):
            return f"`order` needs a list of dotted names such as [torch.cuda.synchronize, unmap_and_release], " \
                   f"got {target!r}"
        twice = next((name for i, name in enumerate(names) if name.strip() in [n.strip() for n in names[:i]]), None)
        if twice:
            return f"`order` lists {twice.strip()} twice: a call cannot come after itself, so it can never hold"
    elif check in _CALL_CHECKS and parse_call_target(target) is None:
        return f"`{check}` needs a dotted name such as backend.resume, got {target!r}"
    elif check not in _CALL_CHECKS and (parse_target(target) is None or (check == "defines" and "(" in str(target))):
        return f"`{check}` needs a dotted name such as backend.resume, got {target!r}"
    return _bounds_problem(spec) or _extra_problem(spec)


def _extra_problem(spec: AssertSpec) -> str | None:
    """Say why `through`, `args`, `after` or `in_try` cannot apply to this spec, or None."""
    allowed = {"through": _CALL_CHECKS, "args": ("calls", "not_calls"), "after": ("calls",), "in_try": ("calls",)}
    for key, checks in allowed.items():
        if getattr(spec, key) is not None and spec.check not in checks:
            return f"`{key}` only applies to {' or '.join(f'`{c}`' for c in checks)}, not to `{spec.check}`"
    if spec.through is not None and spec.through != "local":
        return f"`through` can only be `local` (follow calls into same-file functions), got {spec.through!r}"
    if spec.args is not None:
        problem = args_problem(dict(spec.args) if isinstance(spec.args, (tuple, list)) else spec.args)
        if problem:
            return problem
    if spec.after is not None and (not _names(spec.after) or any(parse_call_target(n) is None for n in _names(spec.after))):
        return f"`after` needs a list of call targets such as [create_and_map], got {spec.after!r}"
    if spec.in_try is not None and not isinstance(spec.in_try, bool):
        return f"`in_try` needs true or false, got {spec.in_try!r}"
    return None


def _bounds_problem(spec: AssertSpec) -> str | None:
    for key in _BOUNDS:
        if getattr(spec, key) is not None and spec.check != "calls":
            return f"`{key}` only applies to `calls`, not to `{spec.check}`"
    for key in ("times", "min", "max"):
        value = getattr(spec, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return f"`{key}` needs a whole number >= 0, got {value!r}"
    if spec.paths not in PATHS:
        return f"`paths` needs one of {', '.join(PATHS)}, got {spec.paths!r}"
    if spec.paths != "all" and (spec.check != "calls" or _bounds(spec) == (None, None)):
        return "`paths` only applies to `calls` with `times`, `min` or `max`"
    if spec.guarded_by is not None and parse_target(spec.guarded_by) is None:
        return f"`guarded_by` needs a name such as coordinate_pp_cudagraph_mode, got {spec.guarded_by!r}"
    low, high = _bounds(spec)
    if low is not None and high is not None and low > high:
        return f"the bounds can never hold: at least {low} and at most {high}"
    return None


def _bounds(spec: AssertSpec) -> tuple[int | None, int | None]:
    """Return the (low, high) bounds on the count: `times` is both, `min`/`max` narrow it."""
    lows = [value for value in (spec.times, spec.min) if value is not None]
    highs = [value for value in (spec.times, spec.max) if value is not None]
    return (max(lows) if lows else None), (min(highs) if highs else None)


def _names(target: object) -> list[str]:
    if isinstance(target, str):
        return [target]
    if isinstance(target, (tuple, list)) and all(isinstance(name, str) for name in target):
        return list(target)
    return []
