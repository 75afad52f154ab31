"""Whether two insertions of whole statements at one place give the same result in either order.

Pure, over `ast` statements. The order matters when one insertion reads what the other binds (a name, or
the attribute or subscript an assignment sets: helper-128, `_URL_TYPES = UrlT` beside `UrlT = str`), or
when an inserted statement makes a call as it runs that is not order-safe (pipeline.pycalls: a well-known
factory such as `field(...)`, `TypeVar("T")` or `re.compile(...)`, or any call of an imported callee on
imported names and literals when the other insertion runs no code and copies no state; a decorator's call is not
counted: it registers what it decorates). What a statement reads is what runs when it runs: a def's
decorators, defaults and annotations, a class's bases and body, never a function's or a lambda's body (it
runs when called, once both insertions ran). Under `from __future__ import annotations` (in ours' and
theirs' versions of the file) annotations are strings, not run: a def's annotations and an annotated
assignment's annotation are no reads (its value still is), unless a decorator or a class's base or
decorator in the insertion may resolve them as it runs (`@singledispatch` registers by them, `@dataclass`
looks `ClassVar` up, a pydantic model resolves them). Names both insertions bind are left to the `shadows`
gate (pipeline.structured_gates). What a decorator, a base or a metaclass runs, and the order of a class body's
names, are pipeline.pynamespace's (helper-139).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

from carrytool.pipeline import pycalls, pynamespace
from carrytool.pipeline.pybindings import _bound, _walrus

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def order_conflict(first: Sequence[ast.stmt], second: Sequence[ast.stmt],
                   module: Callable[[], pycalls.Module | None] | None = None, *,
                   body_of: ast.AST | None = None) -> str | None:
    """Why FIRST and SECOND, two insertions at one place in one body, may not run in either order (a
    sentence naming the name or the call), or None when each runs the same whichever runs first. MODULE
    gives the facts of the whole module (pipeline.pycalls), asked for only when a call or a read in an
    annotation is met: without them every call is refused and every annotation read. BODY_OF: the node
    whose body holds both (a class with bases may give its body a namespace that runs code as it binds:
    `Enum`'s, where `GREEN = auto()` counts the members bound before it)."""
    plain = not (isinstance(body_of, ast.ClassDef) and (body_of.bases or body_of.keywords))
    facts: list[pycalls.Module | None] = []

    def known() -> pycalls.Module | None:
        if not facts:
            facts.append(module() if module else None)
        return facts[0]

    for reader, binder in ((first, second), (second, first)):
        bound = {name for node in binder for name in (*_bound(node), *_walrus(node), *_changed(node))}
        for node in reader:
            read = _read_of(node, bound, lazy=False)
            if read is not None and (found := known()) is not None and found.lazy_annotations:
                read = _read_of(node, bound, lazy=True)
            if read is not None:
                return (f"one insertion reads `{_short(read)}`, which the other binds at the same place: "
                        "their order decides what it reads")
    for mine, other in ((first, second), (second, first)):
        for node in mine:
            calls = list(_calls(node, lazy=False))
            if calls and (found := known()) is not None:
                calls = [call for call in _calls(node, lazy=found.lazy_annotations)
                         if not pycalls.is_safe(call, other, found, plain=plain)]
            if calls:
                return (f"an insertion calls `{_short(_text(calls[0].func))}` as it runs: what the call runs may "
                        "depend on the other insertion at the same place, so their order may matter")
    if isinstance(body_of, ast.ClassDef) or any(isinstance(node, (*_FUNCTIONS, ast.ClassDef))
                                                for node in (*first, *second)):
        return pynamespace.namespace_conflict(first, second, known(), body_of=body_of)
    return None


def _read_of(node: ast.stmt, bound: set[str], *, lazy: bool) -> str | None:
    return next((text for text in _reads(node, lazy=lazy) if _depends(text, bound)), None)


def _runs(node: ast.AST, *, decorators: bool = True, lazy: bool = False) -> Iterator[ast.AST]:
    """NODE and its parts that run when it runs (not a function's or a lambda's body; a def's decorators
    only with DECORATORS; with LAZY, not an annotation, unless a decorator or a class's base or decorator
    in NODE may read it as it runs)."""
    todo: list[tuple[ast.AST, bool]] = [(node, lazy)]
    while todo:
        part, lazily = todo.pop()
        yield part
        if isinstance(part, _FUNCTIONS):
            lazily = lazily and not part.decorator_list
            signature: list[ast.AST] = [part.args, *([part.returns] if part.returns else [])]
            if lazily:
                signature = [d for d in (*part.args.defaults, *part.args.kw_defaults) if d is not None]
            todo += [(child, lazily) for child in (*(part.decorator_list if decorators else []), *signature)]
        elif isinstance(part, ast.Lambda):
            todo.append((part.args, lazily))
        elif isinstance(part, ast.ClassDef):
            lazily = lazily and not (part.decorator_list or part.bases or part.keywords)
            todo += [(child, lazily) for child in ast.iter_child_nodes(part)
                     if decorators or child not in part.decorator_list]
        elif isinstance(part, ast.AnnAssign) and lazily:
            todo += [(child, lazily) for child in ast.iter_child_nodes(part) if child is not part.annotation]
        else:
            todo += [(child, lazily) for child in ast.iter_child_nodes(part)]


def _reads(node: ast.stmt, *, lazy: bool = False) -> Iterator[str]:
    """What NODE reads as it runs: names, and attributes and subscripts (as `ast.unparse` writes them), each
    access whole (`self.b`, not `self` too: the base of an access is read through it); with LAZY, not what
    an annotation names (`_runs`)."""
    parts = list(_runs(node, lazy=lazy))
    bases = {id(part.value) for part in parts if isinstance(part, (ast.Attribute, ast.Subscript))}
    for part in parts:
        if id(part) in bases:
            continue
        if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
            yield part.id
        elif isinstance(part, (ast.Attribute, ast.Subscript)) and isinstance(part.ctx, ast.Load):
            yield _text(part)
        elif isinstance(part, ast.AugAssign):        # `x += 1` reads x first
            yield part.target.id if isinstance(part.target, ast.Name) else _text(part.target)


def _changed(node: ast.stmt) -> Iterator[str]:
    """What NODE changes as it runs beyond what it binds anew: `x += 1` and `del x` (helper-131: beside
    `y = x`, each order gives `y` another value, or a NameError)."""
    for part in _runs(node):
        targets = [part.target] if isinstance(part, ast.AugAssign) else part.targets if isinstance(part, ast.Delete) \
            else []
        for target in targets:
            yield target.id if isinstance(target, ast.Name) else _text(target)


def _depends(read: str, bound: set[str]) -> bool:
    """Whether reading READ reads one of BOUND: `a.b` reads what binding `a` or `a.b` sets, and `a` what
    binding `a.b` or `a[k]` changes in it (helper-131: `n = len(D)` beside `D['k'] = 1`)."""
    return any(read == name or read.startswith((name + ".", name + "[")) or name.startswith((read + ".", read + "["))
               for name in bound)


def _calls(node: ast.stmt, *, lazy: bool) -> Iterator[ast.Call]:
    """The calls NODE makes as it runs (a builtin's too: `filter(is_enabled, ...)` runs what it is given, and
    `sorted(key=...)` or `str(conf)` what the object defines: helper-131); with LAZY, not in an annotation."""
    return (part for part in _runs(node, decorators=False, lazy=lazy) if isinstance(part, ast.Call))


def _text(node: ast.expr) -> str:
    try:
        text = ast.unparse(node)
    except RecursionError:      # too deep to write back (helper-84): a text no binding can equal
        return f"<expression at {node.lineno}:{node.col_offset}>"
    return text


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
