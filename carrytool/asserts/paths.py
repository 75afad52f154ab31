"""Path-sensitive walks over a scope, without enumerating paths.

A walk carries an abstract state (a `Domain`: call counts, "called before" sets) through the scope's
statements in evaluation order. Where control flow forks (if/elif/else, match cases, try handlers,
loops, `and`/`or`, conditional expressions) each alternative is walked once and the results are joined,
so the cost is linear in the size of the scope, however many paths it has.

The path model, as the contract fixes it and where it is silent:
- `if`/`elif`/`else` and `match` cases are alternatives; an `if` without `else` and a `match` without an
  irrefutable case also have the path that takes none of them. Tests are not evaluated (any branch may
  be taken), except that `while True:` (any constant true test) always enters its body and leaves only
  by `break`, `return` or `raise`, and a test Python folds (`if False:`, `if False and x():`, `while 0:`,
  `if not True:`: `constant_truth`) takes only the branch it decides; what no path runs is noted as
  skipped, for the lexical checks to ignore too (`unreachable`; helper-115).
- A loop body (`for`, `async for`, `while`, comprehensions) runs zero or more times: a call in it has no
  upper bound and does not count toward a minimum. A `for`'s iterable is evaluated once, a `while`'s test
  before every iteration; `else:` of a loop runs when it ends without `break`.
- `return` and `raise` end a path; `break`/`continue` end an iteration.
- `try`: the path without exception runs the body, then `else:`. A handler path runs the body to any of
  its exits (its end, a `return`, `raise`, `break` or `continue` in it: calls are assumed not to raise,
  so the whole body counts as run) and then the handler. An explicit `raise` in a `try` that has handlers
  is caught by them. `finally:` runs on every path leaving the `try`: it is walked once, from the join of
  every way into it (the domain's `seed`), and each pending exit is resumed after it (`then`), so nested
  `try`/`finally` costs one walk per level, not one per pending exit (which doubled with every level).
- `with` bodies run once; the context expressions are evaluated first (`with lock():` calls `lock`).
- Nested `def`, `async def`, `lambda` and `class` bodies are not run; their decorators, default values,
  class bases and keywords are. Annotations are not evaluated. `assert` evaluates its test, never its
  message, and never ends a path.
- Calls evaluate the callee expression, then the arguments, then the call itself, so in `b(a())` the call
  of `a` comes first. `await x()` is the call of `x`. The right operands of `and`/`or`, later links of a
  comparison chain and the arms of a conditional expression may or may not run.
- Several definitions with the same qualified name are alternatives (see `pyscope`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic

from carrytool.asserts.expressions import (
    Alt,
    Budget,
    Domain,
    ExpressionWalker,
    Label,
    S,
    TooComplex,
    constant_truth,
    evaluated_children,
)
from carrytool.asserts.pyscope import Scope, run_body
from carrytool.asserts.source import SourceFile


@dataclass
class Exits(Generic[S]):
    """How a block can be left: falling through (`normal`) or by a jump, each with its decision."""

    normal: S | None = None
    returns: list[Alt[S]] = field(default_factory=list)
    raises: list[Alt[S]] = field(default_factory=list)
    breaks: list[Alt[S]] = field(default_factory=list)
    continues: list[Alt[S]] = field(default_factory=list)

    def absorb(self, other: Exits[S]) -> None:
        """Add the jumps of `other` (not its fall-through) to this one's."""
        self.returns += other.returns
        self.raises += other.raises
        self.breaks += other.breaks
        self.continues += other.continues

    def jumps(self) -> list[Alt[S]]:
        """Return every jump out of the block."""
        return self.returns + self.raises + self.breaks + self.continues


def walk_scope(domain: Domain[S], src: SourceFile, scope: Scope, budget: Budget | None = None, *,
               returning: bool = False) -> S | None:
    """Walk every path through `scope`; return the joined state at the end of all of them.

    With `returning`, only the paths that end by `return` or by falling off the end are joined (not
    those ending in `raise`). None means no such path ends (the scope loops forever, or always raises).
    Raises `TooComplex` when the walk needs more steps than `budget` allows.
    """
    walker = Walker(domain, src, budget)
    finals: list[tuple[S | None, Label | None]] = []
    for node in scope.nodes:
        exits = walker.block(run_body(node), domain.start())
        end = Label(f"that reaches the end of {scope.where} at {{at}}",
                    getattr(node, "end_lineno", None) or len(src.lines))
        ends = [*exits.returns, *exits.breaks, *exits.continues] if returning else exits.jumps()
        final = walker.join([(exits.normal, end), *ends])
        definition = Label("through the definition at {at}", getattr(node, "lineno", 0))
        finals.append((final, definition if len(scope.nodes) > 1 else None))
    return walker.join(finals)


class Walker(ExpressionWalker[S]):
    """Carries a domain's state through statements, joining the paths where they fork."""

    def block(self, stmts: Sequence[ast.stmt], state: S) -> Exits[S]:
        """Walk a statement list; statements after a jump are unreachable and not walked."""
        out: Exits[S] = Exits()
        current = state
        for index, stmt in enumerate(stmts):
            exits = self.stmt(stmt, current)
            out.absorb(exits)
            if exits.normal is None:
                if index + 1 < len(stmts):
                    self.skip(stmts[index + 1:], self._ended_by(stmt))
                return out
            current = exits.normal
        out.normal = current
        return out

    def _ended_by(self, stmt: ast.stmt) -> Label:
        """Say why no path gets past STMT: the jump it is, or the compound statement no path leaves."""
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return Label(f"after the `{type(stmt).__name__.lower()}` at {{at}}", stmt.lineno)
        return Label("after the statement at {at}, which no path leaves", stmt.lineno)

    def stmt(self, node: ast.stmt, state: S) -> Exits[S]:
        """Walk one statement."""
        self.budget.spend()
        handler = _STATEMENTS.get(type(node))
        if handler is not None:
            return handler(self, node, state)
        return Exits(normal=self.exprs(evaluated_children(node), state))

    def _return(self, node: ast.Return, state: S) -> Exits[S]:
        state = self.exprs([node.value], state)
        return Exits(returns=[(state, Label("that returns at {at}", node.lineno))])

    def _raise(self, node: ast.Raise, state: S) -> Exits[S]:
        state = self.exprs([node.exc, node.cause], state)
        return Exits(raises=[(state, Label("that raises at {at}", node.lineno))])

    def _break(self, node: ast.Break, state: S) -> Exits[S]:
        return Exits(breaks=[(state, Label("that breaks out of the loop at {at}", node.lineno))])

    def _continue(self, node: ast.Continue, state: S) -> Exits[S]:
        return Exits(continues=[(state, None)])

    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, state: S) -> Exits[S]:
        state = self.exprs(node.decorator_list, state)
        return Exits(normal=self._defaults(node.args, state))

    def _class(self, node: ast.ClassDef, state: S) -> Exits[S]:
        state = self.exprs([*node.decorator_list, *node.bases], state)
        return Exits(normal=self.exprs([k.value for k in node.keywords], state))

    def _if(self, node: ast.If, state: S) -> Exits[S]:
        # An elif chain is one multi-way fork; walking it flat also keeps long chains off the stack.
        branches: list[tuple[Exits[S], Label | None]] = []
        current, keyword = node, "if"
        while True:
            state = self.expr(current.test, state)
            truth = constant_truth(current.test)   # `if False:` never runs, `if True:` always (helper-115)
            taken = Label(f"through the `{keyword} {{code}}` branch at {{at}}", current.lineno, current.test)
            if truth is False:
                self.skip(current.body, Label(f"under the always-false `{keyword} {{code}}` at {{at}}", current.lineno,
                                              current.test))
            else:
                branches.append((self.block(current.body, state), taken))
            if truth is True:
                self.skip(current.orelse, Label(f"in the `else` part of the always-true `{keyword} {{code}}` at {{at}}",
                                                current.lineno, current.test))
                return self._merge(branches)
            elif_node = self._elif(current)
            if elif_node is not None:
                current, keyword = elif_node, "elif"
                continue
            if current.orelse:
                line = self._keyword_line("else", current.body[-1], current.orelse[0])
                branches.append((self.block(current.orelse, state), Label("through the `else` branch at {at}", line)))
            else:
                text = ("that skips the `if {code}` at {at}" if current is node
                        else "that takes none of the branches of the `if {code}` at {at}")
                branches.append((Exits(normal=state), Label(text, node.lineno, node.test)))
            return self._merge(branches)

    def _elif(self, node: ast.If) -> ast.If | None:
        """Return the `elif` continuing an `if` (the AST spells it `else:` + `if`; the source tells)."""
        inner = node.orelse[0] if len(node.orelse) == 1 else None
        if isinstance(inner, ast.If) and self.src.line_text(inner.lineno).lstrip().startswith("elif"):
            return inner
        return None

    def _keyword_line(self, keyword: str, before: ast.stmt, after: ast.stmt) -> int:
        """Return the line of a block keyword (`else`, `finally`) between two statements."""
        for line in range(getattr(before, "end_lineno", before.lineno) or before.lineno, after.lineno + 1):
            text = self.src.line_text(line).lstrip()
            if text.startswith(keyword) and text[len(keyword):len(keyword) + 1] in (":", " "):
                return line
        return after.lineno

    def _merge(self, branches: list[tuple[Exits[S], Label | None]]) -> Exits[S]:
        out: Exits[S] = Exits()
        for exits, _ in branches:
            out.absorb(exits)
        out.normal = self.join([(exits.normal, label) for exits, label in branches])
        return out

    def _match(self, node: ast.Match, state: S) -> Exits[S]:
        pending: S | None = self.expr(node.subject, state)  # the state when no earlier case was taken
        branches: list[tuple[Exits[S], Label | None]] = []
        for case in node.cases:
            if pending is None:
                break
            matched = self.expr(case.guard, pending) if case.guard is not None else pending
            label = Label("through the `case {code}` at {at}", case.pattern.lineno, case.pattern, case.guard)
            branches.append((self.block(case.body, matched), label))
            if case.guard is not None:
                pending = self.join([(pending, None), (matched, None)])  # no match, or the guard failed
            elif _irrefutable(case.pattern):
                pending = None
        if pending is not None:
            branches.append((Exits(normal=pending),
                             Label("that matches no case of the `match {code}` at {at}", node.lineno, node.subject)))
        return self._merge(branches)

    def _with(self, node: ast.With | ast.AsyncWith, state: S) -> Exits[S]:
        for item in node.items:
            state = self.exprs([item.context_expr, item.optional_vars], state)
        exits = self.block(node.body, state)
        if exits.raises and any(_swallows(item.context_expr) for item in node.items):
            # `with pytest.raises(E):`, `contextlib.suppress(E)`: what the body raises, the manager swallows, and
            # the path goes on after the `with` (helper-119); `with open(p):` or a lock does not (helper-120)
            swallowed = Label("where the `with` at {at} swallows what its body raises", node.lineno)
            exits.normal = self.join([(exits.normal, None), *((raised, swallowed) for raised, _why in exits.raises)])
        return exits

    def _try(self, node: ast.Try, state: S) -> Exits[S]:
        body = self.block(node.body, state)
        out: Exits[S] = Exits(returns=list(body.returns), breaks=list(body.breaks),
                              continues=list(body.continues))
        branches: list[tuple[S | None, Label | None]] = []
        if node.handlers:
            caught = self.join([(body.normal, None), *body.jumps()])
            for handler in node.handlers:
                if caught is None:  # no path through the body ends, so no handler can run after it
                    self.skip(node.handlers, Label("in a handler of the `try` at {at}, whose body no path leaves",
                                                   node.lineno))
                    break
                exits = self.block(handler.body, self.exprs([handler.type], caught))
                out.absorb(exits)
                branches.append((exits.normal, self._handler_label(handler, node)))
        else:
            out.raises += body.raises
        no_exception = body.normal
        if no_exception is None:
            self.skip(node.orelse, Label("in the `else` of the `try` at {at}, whose body never ends normally",
                                         node.lineno))
        elif node.orelse:
            exits = self.block(node.orelse, no_exception)
            out.absorb(exits)
            no_exception = exits.normal
        quiet = Label("that raises no exception in the `try` at {at}", node.lineno) if node.handlers else None
        out.normal = self.join([(no_exception, quiet), *branches])
        return self._finally(node.finalbody, out) if node.finalbody else out

    def _handler_label(self, handler: ast.ExceptHandler, node: ast.Try) -> Label:
        star = "*" if type(node).__name__ == "TryStar" else ""
        if handler.type is None:
            return Label(f"through the bare `except{star}` handler at {{at}}", handler.lineno)
        return Label(f"through the `except{star} {{code}}` handler at {{at}}", handler.lineno, handler.type)

    def _finally(self, final: list[ast.stmt], exits: Exits[S]) -> Exits[S]:
        """Walk `finally:` once for every way into it, then resume each pending exit after it."""
        joined = self.join([(exits.normal, None), *exits.jumps()])
        if joined is None:
            return Exits()
        seed = self.domain.seed(joined)
        ran = self.block(final, seed)
        out: Exits[S] = Exits()
        for kind in _JUMPS:  # a jump out of `finally` itself replaces whatever exit was pending
            getattr(out, kind).extend((self.domain.then(joined, seed, state), label)
                                      for state, label in getattr(ran, kind))
        if ran.normal is None:
            return out
        if exits.normal is not None:
            out.normal = self.domain.then(exits.normal, seed, ran.normal)
        for kind in _JUMPS:  # a pending jump resumes once `finally` is done
            getattr(out, kind).extend((self.domain.then(state, seed, ran.normal), label)
                                      for state, label in getattr(exits, kind))
        return out

    def _for(self, node: ast.For | ast.AsyncFor, state: S) -> Exits[S]:
        entry = self.expr(node.iter, state)
        return self._loop(node, entry, lambda s: self.block(node.body, self.expr(node.target, s)), None)

    def _while(self, node: ast.While, state: S) -> Exits[S]:
        entry = self.expr(node.test, state)
        if constant_truth(node.test) is False:   # `while False:` / `while 0:` never enters (helper-115)
            self.skip(node.body, Label("in the body of the always-false `while {code}` at {at}", node.lineno,
                                       node.test))
            return self.block(node.orelse, entry) if node.orelse else Exits(normal=entry)
        return self._loop(node, entry, lambda s: self.block(node.body, s), node.test)

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While, entry: S,
              iterate: Callable[[S], Exits[S]], test: ast.expr | None) -> Exits[S]:
        """Walk one iteration from the entry, then derive the loop head for any number of them."""
        enters = test is not None and _always_true(test)
        once = iterate(entry)
        back = self.join([(once.normal, None), *[(state, None) for state, _ in once.continues]])
        if back is not None and test is not None:
            back = self.expr(test, back)
        skip = None if enters else Label("that skips the loop at {at}", node.lineno)
        head = self.domain.widen(entry, back, node, skip)

        def rebased(alts: list[Alt[S]]) -> list[Alt[S]]:
            return [(self.domain.rebase(state, head), label) for state, label in alts]

        out: Exits[S] = Exits(returns=rebased(once.returns), raises=rebased(once.raises))
        ends: list[tuple[S | None, Label | None]] = list(rebased(once.breaks))
        if enters:
            self.skip(node.orelse, Label("in the `else` of the `while {code}` at {at}, which only `break` leaves",
                                         node.lineno, test))
        else:
            done = Exits(normal=head)
            if node.orelse:  # break/continue in a loop's else belong to an enclosing loop
                done = self.block(node.orelse, head)
                out.absorb(done)
            ends.insert(0, (done.normal, skip))
        out.normal = self.join(ends)
        return out


_JUMPS = ("returns", "raises", "breaks", "continues")


# context managers whose `__exit__` swallows the exception their body raises (by their last name)
_SWALLOWING = frozenset({"raises", "suppress", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp",
                         "raises_regex", "assert_raises", "assert_raises_regex"})


def _swallows(manager: ast.expr) -> bool:
    """Whether MANAGER (a `with` item's expression) is a call of a known swallowing manager (`_SWALLOWING`)."""
    target = manager.func if isinstance(manager, ast.Call) else manager
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    return name in _SWALLOWING


def _always_true(test: ast.expr) -> bool:
    return constant_truth(test) is True


def _irrefutable(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


_STATEMENTS: dict[type, Callable[..., Exits[Any]]] = {
    ast.Return: Walker._return,
    ast.Raise: Walker._raise,
    ast.Break: Walker._break,
    ast.Continue: Walker._continue,
    ast.FunctionDef: Walker._def,
    ast.AsyncFunctionDef: Walker._def,
    ast.ClassDef: Walker._class,
    ast.If: Walker._if,
    ast.Match: Walker._match,
    ast.With: Walker._with,
    ast.AsyncWith: Walker._with,
    ast.Try: Walker._try,
    ast.For: Walker._for,
    ast.AsyncFor: Walker._for,
    ast.While: Walker._while,
}
if hasattr(ast, "TryStar"):  # Python 3.11+: `except*` behaves like `except` for paths
    _STATEMENTS[ast.TryStar] = Walker._try


class _Reach:
    """The domain that computes nothing: a walk with it only notes the code no path runs."""

    def start(self) -> bool:
        return True

    def on_call(self, state: bool, call: ast.Call) -> bool:
        return state

    def join(self, alts: Sequence[Alt[bool]]) -> bool:
        return True

    def widen(self, entry: bool, back: bool | None, loop: ast.AST, skip: Label | None) -> bool:
        return entry

    def rebase(self, state: bool, head: bool) -> bool:
        return state

    def seed(self, joined: bool) -> bool:
        return joined

    def then(self, state: bool, seed: bool, final: bool) -> bool:
        return state


def unreachable(src: SourceFile) -> dict[int, Label]:
    """Return, by node id, every node of the file in code no path runs, with why (built once per file).

    The path model decides, so every check agrees with `calls`: the body of an always-false `if`/`while`
    and the `else` of an always-true `if` (see `constant_truth`), operands a constant short-circuits, and
    what follows a `return`, `raise`, `break`, `continue` or a statement no path leaves, in the module, in
    class bodies and in every function and lambda, nested ones included (helper-115: `reads` held on a read
    under `if False:` or after the final `return`). A nested function no one calls still runs as far as this
    goes: whether something calls it, a decorator registers it or a caller gets it is not decided here.
    """
    def build() -> dict[int, Label]:
        skipped: list[tuple[list[ast.AST], Label]] = []
        for node in ast.walk(src.tree) if src.tree is not None else ():
            if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            walker = Walker(_Reach(), src)
            try:
                if isinstance(node, ast.Lambda):
                    walker.expr(node.body, True)
                else:
                    walker.block(run_body(node), True)
            except TooComplex:
                continue  # absurd code: all of this body counts as running, as before (its own checks say it is too complex)
            skipped += walker.skipped
        out: dict[int, Label] = {}
        for nodes, why in skipped:   # outer bodies are walked first, so the outermost reason wins
            for root in nodes:
                for node in ast.walk(root):
                    out.setdefault(id(node), why)
        return out
    return src.memo("unreachable", build)
