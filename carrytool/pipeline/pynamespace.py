"""Whether two insertions at one place run code that sees the order they are bound in (helper-139).

Pure, over `ast`. pipeline.pyorder has refused an insertion that reads what the other binds, or makes a call
whose order may matter; a decorator's call and a class's creation were not counted. They are here:

- (fields) in a class body, both insertions bind names other than by defs (assignments, annotated ones,
  nested classes, defs under a decorator that may make them members): a decorator, a base or a metaclass may
  take them in order (a dataclass's, attrs' or a NamedTuple's fields and so `__init__`'s parameters, where a
  field without a default after one with a default is a TypeError; an Enum's members, their order and which
  of two equal values is the alias; a metaclass's `__prepare__`), and so may `dataclass(C)` applied after
  the class statement, so a class without bases counts too. Methods (undecorated, or under a decorator that
  only wraps: `property`, `staticmethod`, ...) are no fields of any of these: they stay accepted;
- (registration) both insertions decorate with a decorator that may register what it decorates
  (`@app.command()`, `@router.get(...)`, a pydantic `@field_validator`): whichever runs first registers
  first (help order, route matching, validators run in order). Decorators that only wrap (PURE) aside
  (`typing.overload` is none: it records the overloads in order, `typing.get_overloads`);
- (the module's code) an insertion is decorated by a def or a class of this module, or creates a class
  whose base is a class of this module with an `__init_subclass__` or a metaclass (or names a metaclass of
  the module): that code runs at the insertion and may read anything of the module, as a call of the
  module's own function does (pipeline.pycalls).

What stays unsound in principle: an imported base whose `__init_subclass__` or metaclass registers
subclasses (two subclasses inserted at one place register in either order: refusing them would refuse two
model classes added at one place, the commonest adjacency there is, on what the rule cannot see), a decorator that is a closure
of the module's code under another name (`register = make_registry()`).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence

from carrytool.pipeline import pycalls

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
PURE = frozenset({
    "builtins.property", "builtins.staticmethod", "builtins.classmethod",
    "functools.cache", "functools.lru_cache", "functools.cached_property", "functools.wraps",
    "functools.total_ordering", "functools.singledispatch", "functools.singledispatchmethod",
    "abc.abstractmethod", "contextlib.contextmanager", "contextlib.asynccontextmanager",
    "dataclasses.dataclass", "enum.unique", "pytest.fixture",
    *(f"{module}.{name}" for module in ("typing", "typing_extensions")
      for name in ("final", "override", "runtime_checkable", "no_type_check")),
    *(f"{module}.{name}" for module in ("attr", "attrs") for name in ("s", "attrs", "define", "frozen", "mutable")),
})
_PROPERTY_PARTS = ("setter", "getter", "deleter")


def namespace_conflict(first: Sequence[ast.stmt], second: Sequence[ast.stmt], module: pycalls.Module | None, *,
                       body_of: ast.AST | None = None) -> str | None:
    """Why FIRST and SECOND, two insertions at one place in BODY_OF's body, may see the order they run in
    (a sentence), or None. MODULE: the whole module's facts; without them every decorator and every base but a
    builtin may run the module's code."""
    if isinstance(body_of, ast.ClassDef) and _binds_fields(first, module) and _binds_fields(second, module):
        return (f"both insertions bind names in the body of class `{body_of.name}`: a decorator, a base or a "
                "metaclass may take them in order (fields, Enum members), so their order may matter")
    if any(registers(first, module)) and any(registers(second, module)):
        found = next(registers(first, module))
        return (f"both insertions are decorated, `{_text(found)}` among them: each may register what it "
                "decorates as it runs, so their order may matter")
    for mine in (first, second):
        code = next(_runs_module_code(mine, module), None)
        if code is not None:
            return (f"an insertion runs `{_text(code)}`, code of this module, as it runs (a decorator, an "
                    "`__init_subclass__` or a metaclass): it may read what the other binds, so their order may matter")
    return None


def _binds_fields(statements: Sequence[ast.stmt], module: pycalls.Module | None) -> bool:
    return any(not isinstance(node, _FUNCTIONS) or not all(_pure(d, module) for d in node.decorator_list)
               for node in statements)


def registers(statements: Sequence[ast.stmt], module: pycalls.Module | None) -> Iterator[ast.expr]:
    """The decorators STATEMENTS run (theirs, and those in the bodies of the classes they define) that may
    register what they decorate: all but PURE's."""
    return (d for d in _decorators(statements) if not _pure(d, module))


def _decorators(statements: Sequence[ast.stmt]) -> Iterator[ast.expr]:
    for node in statements:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            yield from node.decorator_list
        if isinstance(node, ast.ClassDef):
            yield from _decorators(node.body)


def _classes(statements: Sequence[ast.stmt]) -> Iterator[ast.ClassDef]:
    for node in statements:
        if isinstance(node, ast.ClassDef):
            yield node
            yield from _classes(node.body)


def _pure(decorator: ast.expr, module: pycalls.Module | None) -> bool:
    """Whether DECORATOR only wraps what it decorates (by the module's imports): PURE's, a property's
    `@x.setter`."""
    if isinstance(decorator, ast.Attribute) and decorator.attr in _PROPERTY_PARTS:
        return True
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    origin = pycalls.origin_of(func, module) if module is not None else None
    return origin is not None and (origin in PURE or origin.startswith("pytest.mark."))


def _runs_module_code(statements: Sequence[ast.stmt], module: pycalls.Module | None) -> Iterator[ast.expr]:
    """The decorators, bases and metaclasses in STATEMENTS that run this module's code as they run (without
    MODULE's facts: every decorator but a property's parts, every base but a builtin)."""
    for decorator in _decorators(statements):
        if not _pure(decorator, module) and (module is None or pycalls.root_name(decorator) in module.code):
            yield decorator
    for node in _classes(statements):
        for base in node.bases:
            root = pycalls.root_name(base)
            if (root in module.hooks) if module is not None else not (root and hasattr(builtins, root)):
                yield base
        for keyword in node.keywords:       # others are handed to a base's `__init_subclass__`: the base's
            root = pycalls.root_name(keyword.value)
            if keyword.arg == "metaclass" and (module is None or root in module.code):
                yield keyword.value


def _text(node: ast.expr) -> str:
    try:
        text = ast.unparse(node)
    except RecursionError:
        return "a decorator"
    return text if len(text) <= 60 else text[:57] + "..."
