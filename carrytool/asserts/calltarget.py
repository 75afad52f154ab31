"""Call targets beyond a plain dotted name: `*.suspend` (a method on any receiver) and `args:` filters.

A `CallTarget` is a `Dotted` (so every check, message and hint that takes a dotted name takes it too)
that also says how a call must look to count:

- `receiver`: written `*.suspend` or `*.backend.resume`. The call must be a method call, and its
  callee must end with the named attributes, whatever expression the receiver is:
  `self._get_sleep_mode_backend().suspend(x)`, `backends[0].suspend(x)` and `backend.suspend(x)` all
  call `*.suspend`; a bare `suspend(x)` does not (there is no receiver).
- `args`: `{op: ReduceOp.MIN, group: cpu_group}`. A call counts only when each named argument is
  there and its value ends with the given dotted name (`op=dist.ReduceOp.MIN`,
  `group=get_world_group().cpu_group`), or is that constant (`True`, `False`, `None`). A key that is
  a whole number names a positional argument (0 is the first). A call passing `*args`/`**kwargs`
  where the argument would be cannot be judged and does not count.

A plain target (no `*`, no `args`) is matched exactly as before (`names.is_suffix`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from carrytool.asserts.names import Dotted, Part, dotted_form, is_suffix, parse_target

_CONSTANTS = {"True": True, "False": False, "None": None}


def constant_name(value: object) -> str | None:
    """`True`, `False` or `None` for the constant VALUE (what YAML's true, false and null load as), else None."""
    return next((name for name, constant in _CONSTANTS.items() if value is constant), None)


class CallTarget(tuple):  # type: ignore[type-arg]
    """A dotted call target with a receiver wildcard and/or argument filters (see the module docstring)."""

    receiver: bool
    args: tuple[tuple[str | int, Dotted], ...]

    def __new__(cls, parts: Dotted, *, receiver: bool = False,
                args: tuple[tuple[str | int, Dotted], ...] = ()) -> CallTarget:
        made = super().__new__(cls, parts)
        made.receiver = receiver
        made.args = args
        return made


def parse_call_target(text: object, args: Mapping[object, object] | None = None) -> Dotted | None:
    """Parse a call target (`a.b`, `f().g`, `*.g`) with optional argument filters; None when malformed."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    receiver = stripped.startswith("*.")
    dotted = parse_target(stripped[2:] if receiver else stripped)
    if dotted is None:
        return None
    filters: list[tuple[str | int, Dotted]] = []
    for key, value in (args or {}).items():
        parsed = parse_target(value if isinstance(value, str) else constant_name(value))
        if parsed is None or not _valid_key(key):
            return None
        filters.append((int(key) if isinstance(key, int) or str(key).isdigit() else str(key), parsed))
    if not receiver and not filters:
        return dotted
    return CallTarget(dotted, receiver=receiver, args=tuple(filters))


def _valid_key(key: object) -> bool:
    if isinstance(key, bool):
        return False
    if isinstance(key, int):
        return key >= 0
    return isinstance(key, str) and (key.isidentifier() or key.isdigit())


def args_problem(args: object) -> str | None:
    """Say why an `args:` value is not a mapping of argument -> dotted name, or None."""
    if args is None:
        return None
    if not isinstance(args, Mapping) or not args:
        return f"`args` needs a mapping such as {{op: ReduceOp.MIN, group: cpu_group}}, got {args!r}"
    for key, value in args.items():
        if not _valid_key(key):
            return f"`args` keys are keyword names or positions (0, 1, ...), got {key!r}"
        if parse_target(value if isinstance(value, str) else constant_name(value)) is None:
            return f"`args` values are dotted names such as ReduceOp.MIN, or True, False, None, got {value!r} for {key}"
    return None


def matches_call(call: ast.Call, form: Dotted, target: Dotted) -> bool:
    """Tell whether `call` (whose callee has the dotted form `form`) calls `target`."""
    if isinstance(target, CallTarget):
        named = _method_call(call.func, tuple(target)) if target.receiver else is_suffix(target, form)
        return named and all(_argument_is(call, key, value) for key, value in target.args)
    return is_suffix(target, form)


def _method_call(func: ast.expr, parts: tuple[Part, ...]) -> bool:
    """`receiver.a.b`: every named component is an attribute (or a call of one), so a receiver exists."""
    node: ast.expr = func
    for index, (name, want_call) in enumerate(reversed(parts)):
        if index and want_call:
            if not isinstance(node, ast.Call):
                return False
            node = node.func
        elif index and isinstance(node, ast.Call):
            node = node.func  # `f().g` matches `f.g`, as with plain targets
        if not isinstance(node, ast.Attribute) or node.attr != name:
            return False
        node = node.value
    return True


def _argument_is(call: ast.Call, key: str | int, value: Dotted) -> bool:
    expr = _argument(call, key)
    if expr is None:
        return False
    if len(value) == 1 and value[0][0] in _CONSTANTS and not value[0][1]:
        return isinstance(expr, ast.Constant) and expr.value is _CONSTANTS[value[0][0]]
    return is_suffix(value, dotted_form(expr))


def _argument(call: ast.Call, key: str | int) -> ast.expr | None:
    if isinstance(key, int):
        positional = call.args[:next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)),
                                     len(call.args))]
        return positional[key] if key < len(positional) else None
    for keyword in call.keywords:
        if keyword.arg == key:
            return keyword.value
    return None


def render_target(text: str, args: Mapping[object, object] | None) -> str:
    """Return how messages show a target with filters: `all_reduce(op=ReduceOp.MIN, group=cpu_group)`."""
    if not args:
        return text
    shown = ", ".join(f"{k}={v}" if not str(k).isdigit() else f"#{k}={v}" for k, v in args.items())
    return f"{text}({shown})"
