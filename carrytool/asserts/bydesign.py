"""Definitions of one name in one body that are several by design, not a later one replacing an earlier one.

Python binds a name to its last definition in a body; the earlier ones are dead code. Not so for an
`@overload` stub (under any name it is imported as), a property's `setter`/`getter`/`deleter`,
`register`ed and `dispatch`ed implementations, a hybrid's `expression`, and a definition whose decorator
takes arguments, as registering decorators do (`@given(...)`, `@app.get(...)`), unless that decorator is
one known to wrap (`@pytest.mark.parametrize(...)`, `@lru_cache(...)`, `@patch(...)`). The scopes of the
asserts (`pyscope`) and the shadowed-definition warning of sync (`pipeline.shadowed`) both follow these
rules, so an assert and a warning never disagree on which definition is live.
"""

from __future__ import annotations

import ast

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef

# decorators (their last name) that make a definition one of several by design
_BY_DESIGN = frozenset({"overload", "setter", "getter", "deleter", "register", "dispatch", "expression",
                        "comparator", "update_expression", "inplace"})
# decorators that take arguments and wrap the definition they are given (the name binds the last one), where
# registering ones keep each (helper-111: two `@pytest.mark.parametrize(...) def test_x` went unsaid)
_WRAPPING = frozenset({"fixture", "parametrize", "skipif", "xfail", "skip", "usefixtures", "filterwarnings",
                       "dataclass", "lru_cache", "cache", "wraps", "total_ordering", "timeout", "flaky",
                       "deprecated", "contextmanager"})
# ... and those whose last name registers elsewhere (`@router.patch("/a")`, helper-112): wrapping after these
_WRAPPING_AFTER = {"patch": {"", "mock"}, "object": {"patch"}, "dict": {"patch"}, "multiple": {"patch"},
                   "define": {"", "attr", "attrs"}, "frozen": {"", "attr", "attrs"}, "s": {"attr"},
                   "attrs": {"", "attr"}}


def overload_names(module: ast.Module) -> frozenset[str]:
    """The names `typing.overload` goes by in MODULE (`from typing import overload as ov`) besides its own."""
    return frozenset({"overload"} | {alias.asname for node in module.body if isinstance(node, ast.ImportFrom)
                                     for alias in node.names if alias.name == "overload" and alias.asname})


def is_overload(node: Definition, overloads: frozenset[str]) -> bool:
    """Whether NODE is an `@overload` stub (OVERLOADS: `overload_names` of its module)."""
    return any((parts := dotted(d.func if isinstance(d, ast.Call) else d)) and parts[-1] in overloads
               for d in node.decorator_list)


def by_design(node: Definition, overloads: frozenset[str]) -> bool:
    """Whether NODE is one of several definitions of its name by design: decorated with an overload, an
    accessor or a registration (`_BY_DESIGN`), or with a decorator that takes arguments (registering ones
    do, and keep each definition: `@given("a step")`, `@app.get("/path")`)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts = dotted(target)
        if parts and (parts[-1] in _BY_DESIGN or parts[-1] in overloads):
            return True
        if isinstance(decorator, ast.Call) and not _wraps(parts):
            return True
    return False


def _wraps(parts: list[str]) -> bool:
    """Whether a decorator taking arguments, named PARTS (`pytest.mark.parametrize`), wraps what it decorates
    rather than registering it."""
    if not parts:
        return False
    before = parts[-2] if len(parts) > 1 else ""
    return "mark" in parts or parts[-1] in _WRAPPING or before in _WRAPPING_AFTER.get(parts[-1], ())


def dotted(node: ast.expr) -> list[str]:
    """`a.b.c` as ["a", "b", "c"] (what a decorator names); of `f().b`, ["b"]."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]
