"""Lexical checks (`defines`, `mentions`, `not_calls`) and the per-scope indexes every check shares.

Lexical means "anywhere inside the scope's text": nested functions, lambdas and classes included, and
for a definition its decorators and parameters too. Comments and strings never count: the indexes are
built from the AST, where a comment does not exist and a docstring is just a string constant.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from carrytool.asserts.calltarget import matches_call
from carrytool.asserts.expressions import Label
from carrytool.asserts.messages import Verdict, failed, passed
from carrytool.asserts.names import (
    Dotted,
    dotted_form,
    identifier_nodes,
    names_identifier,
    render,
)
from carrytool.asserts.paths import unreachable
from carrytool.asserts.pyscope import (
    Scope,
    compound_blocks,
    dead_definitions,
    definitions,
    run_body,
    segment,
    suggest,
)
from carrytool.asserts.source import SourceFile

_NESTING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class LexicalIndex:
    """What a scope holds, in source order: its calls (and whether the scope runs them), its identifiers.

    Neither holds what sits in an annotation Python never evaluates (a local variable's, or any under
    `from __future__ import annotations`): no call happens there (helper-115). Such identifiers are kept
    apart, in `unevaluated`: they are mentions, not reads.
    """

    calls: list[tuple[ast.Call, bool]]
    identifiers: list[ast.AST]
    unevaluated: frozenset[int] = frozenset()   # ids of the nodes in annotations never evaluated
    dead: Mapping[int, Label] = field(default_factory=dict)   # ids of the nodes no path runs, with why


def lexical_index(src: SourceFile, scope: Scope) -> LexicalIndex:
    """Return the scope's lexical index, built once per scope and file."""
    def build() -> LexicalIndex:
        calls: list[tuple[ast.Call, bool]] = []
        nodes: list[ast.AST] = []
        unevaluated: set[int] = set()
        future = _future_annotations(src)
        unreached = unreachable(src)
        for root in scope.nodes:
            for node, runs, evaluated in _walk(root, future):
                nodes.append(node)
                if not evaluated:
                    unevaluated.add(id(node))
                elif isinstance(node, ast.Call):
                    calls.append((node, runs and id(node) not in unreached))
        calls.sort(key=lambda item: _position(item[0]))
        identifiers = sorted(identifier_nodes(nodes), key=_position)
        dead = {id(node): unreached[id(node)] for node in nodes if id(node) in unreached}
        return LexicalIndex(calls, identifiers, frozenset(unevaluated), dead)
    return src.memo(("lexical", tuple(id(node) for node in scope.nodes)), build)


def lexical_calls(src: SourceFile, scope: Scope) -> list[tuple[ast.Call, bool]]:
    """Return every call inside the scope with whether the scope's own paths run it."""
    return lexical_index(src, scope).calls


def _future_annotations(src: SourceFile) -> bool:
    """Whether the module has `from __future__ import annotations` (no annotation is evaluated then)."""
    return any(isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
               and any(alias.name == "annotations" for alias in stmt.names) for stmt in getattr(src.tree, "body", ()))


def _walk(root: ast.AST, future: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    """Yield every node under `root` with whether the scope runs it and whether Python evaluates it at all
    (iteratively: deep code must not exhaust the stack)."""
    # (node, runs, evaluated, in a function's own body: where a variable's annotation is never evaluated)
    stack: list[tuple[ast.AST, bool, bool, bool]] = [(root, True, True, False)]
    while stack:
        node, runs, evaluated, local = stack.pop()
        yield node, runs, evaluated
        for name, value in ast.iter_fields(node):
            child_runs = _child_runs(node, name, runs, node is root)
            child_evaluated = evaluated and not (name in ("annotation", "returns") and (
                future or (local and isinstance(node, ast.AnnAssign))))
            child_local = local
            if name == "body" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                child_local = not isinstance(node, ast.ClassDef)   # a class body's annotations are evaluated
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append((child, child_runs, child_evaluated, child_local))


def _child_runs(node: ast.AST, field: str, runs: bool, is_root: bool) -> bool:
    if field in ("annotation", "returns"):
        return False  # the path walk does not evaluate annotations
    if not isinstance(node, _NESTING):
        return runs
    if field == "body":
        return is_root  # the scope's own body runs; a nested definition's body does not
    return runs and not is_root  # a scope's decorators and defaults run in the enclosing scope


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def callee(src: SourceFile, call: ast.Call) -> Dotted:
    """Return the dotted form of a call's callee, computed once per call node."""
    return src.memo(("callee", id(call)), lambda: dotted_form(call))


def is_call_of(src: SourceFile, call: ast.Call, target: Dotted) -> bool:
    """Tell whether `call` calls `target` (suffix match on whole components; see `calltarget`)."""
    return matches_call(call, callee(src, call), target)


def check_defines(src: SourceFile, scope: Scope, target: str) -> Verdict:
    """Judge `defines: Q`: Q (relative to the scope) is a function, async function or class there."""
    prefix = f"{scope.name}." if scope.name else ""
    every = definitions(src).get(prefix + target, [])
    found = [node for node in every if id(node) not in unreachable(src)]
    if found:
        line = found[0].lineno
        return passed(f"{prefix}{target} is defined at {src.at(line)}", line)
    if every:   # (helper-115: `if False:` + `def` kept `defines` green)
        why = unreachable(src)[id(every[0])]
        return failed(f"{scope.prefix}{prefix}{target} at {src.at(every[0].lineno)} is never defined: its `def` never "
                      f"runs ({why.fill(src)})", every[0].lineno)
    dead = dead_definitions(src).get(prefix + target)
    if dead:
        _node, why, whose = dead[0]
        return failed(f"{scope.prefix}{why.said(src, whose)}, so {prefix}{target} is not defined there (only the "
                      f"last binding of a name in a body counts)", why.line)
    inside = [name[len(prefix):] for name in definitions(src) if name.startswith(prefix)]
    assigned = _assigned_at(scope, target)
    # (helper-107: a grep marker on a constant became `defines: BROTLI_INSTALLED`, failing with no why)
    why = f"; {target} is assigned at {src.at(assigned)}, and `defines` finds functions and classes only: " \
          f"`mentions: {target}` requires the name" if assigned else ""
    return failed(f"{scope.prefix}{target} is not defined in {scope.where} {suggest(target, inside)}{why}",
                  scope.line)


def _assigned_at(scope: Scope, target: str) -> int | None:
    """The line where SCOPE's own statements (in the blocks of compound statements too, not in a nested
    definition) assign TARGET, a plain name, or import it; None when they do not."""
    if "." in target:
        return None
    todo = [stmt for node in scope.nodes for stmt in run_body(node)]
    while todo:
        stmt = todo.pop(0)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Store)
                   for t in targets for n in ast.walk(t)):
                return stmt.lineno
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name.split(".")[0]) == target for alias in stmt.names):
                return stmt.lineno
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [child for block in compound_blocks(stmt) for child in block]
    return None


def check_mentions(src: SourceFile, scope: Scope, target: Dotted, shown: str) -> Verdict:
    """Judge `mentions: NAME`: NAME is used as a name, attribute, argument or keyword in the scope."""
    index = lexical_index(src, scope)
    for node in index.identifiers:
        if id(node) not in index.dead and names_identifier(node, target):
            line = getattr(node, "lineno", None)
            return passed(f"{shown} is mentioned in {scope.where} at {src.at(line)}", line)
    hint = _dead_hint(src, index, target) or text_hint(src, scope, target[-1][0])
    return failed(f"{scope.prefix}{shown} is never mentioned in {scope.located(src)} as a name, attribute, argument "
                  f"or keyword{hint}", scope.line)


def _dead_hint(src: SourceFile, index: LexicalIndex, target: Dotted) -> str:
    """' (the mention at F:L never runs: under the always-false `if False` at F:K)', or ""."""
    node = next((node for node in index.identifiers if id(node) in index.dead and names_identifier(node, target)),
                None)
    if node is None:
        return ""
    return f" (the mention at {src.at(getattr(node, 'lineno', None))} never runs: {index.dead[id(node)].fill(src)})"


def check_reads(src: SourceFile, scope: Scope, target: Dotted, shown: str) -> Verdict:
    """Judge `reads: NAME`: NAME's value is used in the scope (loaded), not only bound or declared.

    A parameter, an assignment target, a keyword argument's name or an attribute being assigned do not
    read it; `x = NAME`, `f(NAME)`, `if NAME is None` and `self.NAME.g()` do.
    """
    index = lexical_index(src, scope)
    reads = [node for node in index.identifiers
             if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load)
             and id(node) not in index.unevaluated and names_identifier(node, target)]
    for node in reads:
        if id(node) not in index.dead:   # a read no path runs reads nothing (helper-115)
            line = getattr(node, "lineno", None)
            return passed(f"{shown} is read in {scope.where} at {src.at(line)}", line)
    if reads:
        line = getattr(reads[0], "lineno", None)
        return failed(f"{scope.prefix}{shown} is never read in {scope.located(src)} (the read at {src.at(line)} never "
                      f"runs: {index.dead[id(reads[0])].fill(src)})", line)
    declared = next((node for node in index.identifiers if names_identifier(node, target)), None)
    how = "in an annotation Python never evaluates" if id(declared) in index.unevaluated else "bound or declared"
    hint = (f" (it is only {how}, e.g. at {src.at(getattr(declared, 'lineno', None))})"
            if declared is not None else text_hint(src, scope, target[-1][0]))
    return failed(f"{scope.prefix}{shown} is never read in {scope.located(src)}{hint}", scope.line)


def check_not_calls(src: SourceFile, scope: Scope, target: Dotted, shown: str) -> Verdict:
    """Judge `not_calls: D`: no call of D anywhere lexically inside the scope."""
    found = [call for call, _ in lexical_calls(src, scope) if is_call_of(src, call, target)]
    if not found:
        return passed(f"{shown} is not called anywhere in {scope.where}", scope.line)
    more = len(found) - 1
    others = f" and {more} more place{'s' if more > 1 else ''}" if more else ""
    # Dead code still counts here: the failure is loud and the fix is to delete it, where a model gap in
    # what "never runs" would let a live call pass silently (helper-115). Say so, so no one hunts a path.
    dead = lexical_index(src, scope).dead.get(id(found[0]))
    never = f" (it never runs: {dead.fill(src)}; `not_calls` counts dead code too)" if dead else ""
    return failed(f"{scope.prefix}{shown} is called at {src.at(found[0].lineno)}{never}{others} (want no calls)",
                  found[0].lineno)


def absence_hint(src: SourceFile, scope: Scope, target: Dotted) -> str:
    """Say why a target that no path calls may still look present: an unrun call, a near name, text."""
    index = lexical_index(src, scope)
    for call, runs in index.calls:
        if is_call_of(src, call, target):
            dead = index.dead.get(id(call))
            message = _assert_message_of(scope, call)
            # (helper-115: a call in an assert's message was said to be "unreachable")
            why = (f"never runs: {dead.fill(src)}" if dead else
                   f"is in the message of the `assert` at {src.at(message.lineno)}: it runs only when the assert "
                   f"fails, and never under `python -O`" if message else "is unreachable" if runs
                   else "is not run by the scope: it is in a nested def, lambda, class or annotation")
            return f" (the call at {src.at(call.lineno)} {why})"
    # Compare like with like: the callee's trailing components, as many as the target has.
    forms = {render(callee(src, call)[-len(target):]): call
             for call, _ in lexical_calls(src, scope) if callee(src, call)}
    close = difflib.get_close_matches(render(target), list(forms), n=1, cutoff=0.8)
    if close:
        return f" (did you mean `{close[0]}`, called at {src.at(forms[close[0]].lineno)}?)"
    name = target[-1][0]
    for node in lexical_index(src, scope).identifiers:
        if names_identifier(node, ((name, False),)):
            return f" (`{name}` is used at {src.at(getattr(node, 'lineno', None))}, but not called)"
    return text_hint(src, scope, name)


def _assert_message_of(scope: Scope, call: ast.Call) -> ast.Assert | None:
    """The `assert` whose message holds CALL, or None (only on failures: one more walk of the scope)."""
    for root in scope.nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Assert) and node.msg is not None \
                    and any(inner is call for inner in ast.walk(node.msg)):
                return node
    return None


def text_hint(src: SourceFile, scope: Scope, word: str) -> str:
    """Point at text holding `word` where the Python checks do not look (comments, strings, ...)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])")
    for node in scope.nodes:
        start, text = segment(src, node)
        found = pattern.search(text)
        if found:
            line = start + text.count("\n", 0, found.start())
            return (f" (`{word}` appears at {src.at(line)}, but only in a comment, a string, an import "
                    f"or a definition's name)")
    return ""
