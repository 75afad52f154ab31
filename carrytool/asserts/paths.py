"""Path-sensitive walks over a scope, without enumerating paths.

A walk carries an abstract state (a `Domain`: call counts, "called before" sets) through the scope's
statements in evaluation order. Where control flow forks (if/elif/else, match cases, try handlers,
loops, `and`/`or`, conditional expressions) each alternative is walked once and the results are joined,
so the cost is linear in the size of the scope, however many paths it has.

The path model, as the contract fixes it and where it is silent:
- `if`/`elif`/`else` and `match` cases are alternatives; an `if` without `else` and a `match` without an
  irrefutable case also have the path that takes none of them. Tests are not evaluated (any branch may
  be taken), except that `while True:` (any constant true test) always enters its body and leaves only
  by `break`, `return` or `raise`.
- A loop body (`for`, `async for`, `while`, comprehensions) runs zero or more times: a call in it has no
  upper bound and does not count toward a minimum. A `for`'s iterable is evaluated once, a `while`'s test
  before every iteration; `else:` of a loop runs when it ends without `break`.
- `return` and `raise` end a path; `break`/`continue` end an iteration.
- `try`: the path without exception runs the body, then `else:`. A handler path runs the body to any of
  its exits (its end, a `return`, `raise`, `break` or `continue` in it: calls are assumed not to raise,
  so the whole body counts as run) and then the handler. An explicit `raise` in a `try` that has handlers
  is caught by them. `finally:` runs on every path leaving the `try`.
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
from typing import Any, Generic, Protocol, TypeVar

from carrytool.asserts.messages import short_code
from carrytool.asserts.pyscope import Scope, run_body
from carrytool.asserts.source import SourceFile

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Label:
    """A branch decision a path takes, e.g. "through the `if x` branch at f.py:3"; rendered lazily."""

    text: str          # with `{code}` and `{at}` placeholders
    line: int
    node: ast.AST | None = None
    guard: ast.AST | None = None  # a `case` guard, shown after the pattern

    def render(self, src: SourceFile) -> str:
        """Return the path this decision describes: "the path through the `if x` branch at f.py:3"."""
        code = short_code(self.node)
        if self.guard is not None:
            code += f" if {short_code(self.guard)}"
        return "the path " + self.text.replace("{at}", src.at(self.line)).replace("{code}", code)


Alt = tuple[S, "Label | None"]


class Domain(Protocol[S]):
    """What a walk computes: how states start, react to calls, join, and pass through loops."""

    def start(self) -> S:
        """Return the state at the entry of the scope."""

    def on_call(self, state: S, call: ast.Call) -> S:
        """Return the state after `call` was made (its callee and arguments already evaluated)."""

    def join(self, alts: Sequence[Alt[S]]) -> S:
        """Merge the states of two or more alternatives, each with the decision that leads to it."""

    def widen(self, entry: S, back: S | None, loop: ast.AST, skip: Label | None) -> S:
        """Return the state at a loop head from its entry and the state after one more iteration."""

    def rebase(self, state: S, head: S) -> S:
        """Return a state computed in the first iteration as it holds for any iteration."""


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


def walk_scope(domain: Domain[S], src: SourceFile, scope: Scope) -> S | None:
    """Walk every path through `scope`; return the joined state at the end of all of them.

    None means no path through the scope ends (it loops forever).
    """
    walker = Walker(domain, src)
    finals: list[tuple[S | None, Label | None]] = []
    for node in scope.nodes:
        exits = walker.block(run_body(node), domain.start())
        end = Label(f"that reaches the end of {scope.where} at {{at}}",
                    getattr(node, "end_lineno", None) or len(src.lines))
        final = walker.join([(exits.normal, end), *exits.jumps()])
        definition = Label("through the definition at {at}", getattr(node, "lineno", 0))
        finals.append((final, definition if len(scope.nodes) > 1 else None))
    return walker.join(finals)


class Walker(Generic[S]):
    """Carries a domain's state through statements and expressions in evaluation order."""

    def __init__(self, domain: Domain[S], src: SourceFile) -> None:
        self.domain = domain
        self.src = src

    def join(self, alts: Sequence[tuple[S | None, Label | None]]) -> S | None:
        """Join the reachable alternatives; None when none is reachable."""
        live = [(state, label) for state, label in alts if state is not None]
        if not live:
            return None
        if len(live) == 1:
            return live[0][0]
        return self.domain.join(live)

    # ---- statements ----------------------------------------------------------------------------

    def block(self, stmts: Sequence[ast.stmt], state: S) -> Exits[S]:
        """Walk a statement list; statements after a jump are unreachable and not walked."""
        out: Exits[S] = Exits()
        current = state
        for stmt in stmts:
            exits = self.stmt(stmt, current)
            out.absorb(exits)
            if exits.normal is None:
                return out
            current = exits.normal
        out.normal = current
        return out

    def stmt(self, node: ast.stmt, state: S) -> Exits[S]:
        """Walk one statement."""
        handler = _STATEMENTS.get(type(node))
        if handler is not None:
            return handler(self, node, state)
        return Exits(normal=self.exprs(_evaluated_children(node), state))

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
            taken = Label(f"through the `{keyword} {{code}}` branch at {{at}}", current.lineno, current.test)
            branches.append((self.block(current.body, state), taken))
            if self._is_elif(current):
                current, keyword = current.orelse[0], "elif"  # type: ignore[assignment]
                continue
            if current.orelse:
                line = self._keyword_line("else", current.body[-1], current.orelse[0])
                branches.append((self.block(current.orelse, state), Label("through the `else` branch at {at}", line)))
            else:
                text = ("that skips the `if {code}` at {at}" if current is node
                        else "that takes none of the branches of the `if {code}` at {at}")
                branches.append((Exits(normal=state), Label(text, node.lineno, node.test)))
            return self._merge(branches)

    def _is_elif(self, node: ast.If) -> bool:
        inner = node.orelse[0] if len(node.orelse) == 1 else None
        return isinstance(inner, ast.If) and self.src.line_text(inner.lineno).lstrip().startswith("elif")

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
        return self.block(node.body, state)

    def _try(self, node: ast.Try, state: S) -> Exits[S]:
        body = self.block(node.body, state)
        out: Exits[S] = Exits(returns=list(body.returns), breaks=list(body.breaks),
                              continues=list(body.continues))
        branches: list[tuple[S | None, Label | None]] = []
        if node.handlers:
            caught = self.join([(body.normal, None), *body.jumps()])
            for handler in node.handlers:
                if caught is None:
                    break  # no path through the body ends, so no handler can run after it
                exits = self.block(handler.body, self.exprs([handler.type], caught))
                out.absorb(exits)
                branches.append((exits.normal, self._handler_label(handler, node)))
        else:
            out.raises += body.raises
        no_exception = body.normal
        if node.orelse and no_exception is not None:
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
        out: Exits[S] = Exits()
        if exits.normal is not None:
            ran = self.block(final, exits.normal)
            out.absorb(ran)
            out.normal = ran.normal
        for kind in ("returns", "raises", "breaks", "continues"):
            for state, label in getattr(exits, kind):
                ran = self.block(final, state)
                out.absorb(ran)
                if ran.normal is not None:  # the jump resumes once `finally` is done
                    getattr(out, kind).append((ran.normal, label))
        return out

    def _for(self, node: ast.For | ast.AsyncFor, state: S) -> Exits[S]:
        entry = self.expr(node.iter, state)
        return self._loop(node, entry, lambda s: self.block(node.body, self.expr(node.target, s)), None)

    def _while(self, node: ast.While, state: S) -> Exits[S]:
        entry = self.expr(node.test, state)
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
        if not enters:
            done = Exits(normal=head)
            if node.orelse:  # break/continue in a loop's else belong to an enclosing loop
                done = self.block(node.orelse, head)
                out.absorb(done)
            ends.insert(0, (done.normal, skip))
        out.normal = self.join(ends)
        return out

    # ---- expressions ---------------------------------------------------------------------------

    def exprs(self, nodes: Sequence[ast.AST | None], state: S) -> S:
        """Evaluate expressions left to right (None entries are absent optional parts)."""
        for node in nodes:
            if node is not None:
                state = self.expr(node, state)
        return state

    def expr(self, node: ast.AST, state: S) -> S:
        """Evaluate one expression."""
        handler = _EXPRESSIONS.get(type(node))
        if handler is not None:
            result: S = handler(self, node, state)
            return result
        for part in _forks_and_calls(node):
            state = _EXPRESSIONS[type(part)](self, part, state)
        return state

    def _call(self, node: ast.Call, state: S) -> S:
        state = self.exprs([node.func, *node.args, *[k.value for k in node.keywords]], state)
        return self.domain.on_call(state, node)

    def _boolop(self, node: ast.BoolOp, state: S) -> S:
        op = "and" if isinstance(node.op, ast.And) else "or"
        alts: list[tuple[S | None, Label | None]] = []
        for index, value in enumerate(node.values):
            state = self.expr(value, state)
            if index < len(node.values) - 1:
                alts.append((state, Label(f"that short-circuits the `{op}` at {{at}} after `{{code}}`",
                                          value.lineno, value)))
        alts.append((state, Label(f"that evaluates every operand of the `{op}` at {{at}}", node.lineno)))
        return self.join(alts)  # type: ignore[return-value]

    def _compare(self, node: ast.Compare, state: S) -> S:
        state = self.exprs([node.left, node.comparators[0]], state)
        alts: list[tuple[S | None, Label | None]] = []
        for comparator in node.comparators[1:]:  # a chain stops at its first false link
            alts.append((state, Label("that short-circuits the comparison at {at}", node.lineno)))
            state = self.expr(comparator, state)
        alts.append((state, None))
        return self.join(alts)  # type: ignore[return-value]

    def _ifexp(self, node: ast.IfExp, state: S) -> S:
        state = self.expr(node.test, state)
        return self.join([  # type: ignore[return-value]
            (self.expr(node.body, state), Label("through the true arm of `{code}` at {at}", node.lineno, node)),
            (self.expr(node.orelse, state), Label("through the false arm of `{code}` at {at}", node.lineno, node)),
        ])

    def _lambda(self, node: ast.Lambda, state: S) -> S:
        return self._defaults(node.args, state)

    def _defaults(self, args: ast.arguments, state: S) -> S:
        return self.exprs([*args.defaults, *args.kw_defaults], state)

    def _dict(self, node: ast.Dict, state: S) -> S:
        for key, value in zip(node.keys, node.values):
            state = self.exprs([key, value], state)
        return state

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                       state: S) -> S:
        # Only the first iterable is evaluated in the enclosing scope; the rest runs per element.
        entry = self.expr(node.generators[0].iter, state)
        return self._generator_loop(node, 0, entry)

    def _generator_loop(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                        index: int, entry: S) -> S:
        back = self._generator_iteration(node, index, entry)
        skip = Label("that skips the comprehension at {at}", node.lineno) if index == 0 else None
        return self.domain.widen(entry, back, node, skip)

    def _generator_iteration(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                             index: int, state: S) -> S:
        generator = node.generators[index]
        state = self.expr(generator.target, state)
        filtered: list[tuple[S | None, Label | None]] = []
        for condition in generator.ifs:  # a false filter ends this element early
            state = self.expr(condition, state)
            filtered.append((state, None))
        if index + 1 < len(node.generators):
            inner = self.expr(node.generators[index + 1].iter, state)
            state = self._generator_loop(node, index + 1, inner)
        elif isinstance(node, ast.DictComp):
            state = self.exprs([node.key, node.value], state)
        else:
            state = self.expr(node.elt, state)
        return self.join([*filtered, (state, None)])  # type: ignore[return-value]


def _evaluated_children(node: ast.AST) -> list[ast.AST]:
    """Return the sub-expressions a simple statement or expression evaluates, in evaluation order."""
    if isinstance(node, ast.Assign):
        return [node.value, *node.targets]
    if isinstance(node, ast.AnnAssign):  # the annotation is not evaluated in a function
        return [node.value, node.target] if node.value is not None else []
    if isinstance(node, ast.Assert):  # the message only runs when the assert fails, which ends nothing
        return [node.test]
    children: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            children.append(child)
        elif isinstance(child, ast.keyword):
            children.append(child.value)
    return children


def _forks_and_calls(node: ast.AST) -> list[ast.AST]:
    """Return the calls and forking sub-expressions of `node` in evaluation order.

    Everything else (operators, attributes, subscripts, displays) just evaluates its parts in order, so
    it is flattened here without recursion: a 3,000-term `a + b + ...` must not exhaust the stack.
    """
    found: list[ast.AST] = []
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if type(current) in _EXPRESSIONS:
            found.append(current)
        elif type(current) is not ast.Name and type(current) is not ast.Constant:
            stack.extend(reversed(_evaluated_children(current)))
    return found


def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


def _irrefutable(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


_STATEMENTS: dict[type, Callable[..., Exits]] = {  # type: ignore[type-arg]
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

_EXPRESSIONS: dict[type, Callable[..., Any]] = {
    ast.Call: Walker._call,
    ast.BoolOp: Walker._boolop,
    ast.Compare: Walker._compare,
    ast.IfExp: Walker._ifexp,
    ast.Lambda: Walker._lambda,
    ast.Dict: Walker._dict,
    ast.ListComp: Walker._comprehension,
    ast.SetComp: Walker._comprehension,
    ast.GeneratorExp: Walker._comprehension,
    ast.DictComp: Walker._comprehension,
}
