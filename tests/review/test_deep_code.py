"""Long `elif` chains and deep nesting: the scope finder and the asserts answer, never a RecursionError."""

from __future__ import annotations

from carrytool.asserts import AssertSpec, evaluate
from carrytool.pipeline.scopes import scope_at, scope_names


def elif_chain(branches: int) -> bytes:
    """A function with one `if`, `branches - 1` `elif`s and an `else` that defines a helper."""
    body = "".join(f"    {'if' if i == 0 else 'elif'} c == {i}:\n        g()\n" for i in range(branches))
    return ("def f(c):\n" + body + "    else:\n        def inner():\n            g()\n        g()\n").encode()


def test_scopes_of_a_1500_branch_elif_chain() -> None:
    data = elif_chain(1500)
    last = data.count(b"\n")
    assert scope_at(data, 3) == "f"
    assert scope_at(data, last - 1) == "f.inner"
    assert scope_names("m.py", data, [(2, 4), (last - 1, last - 1)]) == ["f", "f.inner"]


def test_every_check_on_a_1500_branch_elif_chain() -> None:
    data = elif_chain(1500)
    cases = [("calls", "g", "f", {"times": 1}, True), ("calls", "g", "f.inner", {}, True),
             ("mentions", "c", "f", {}, True), ("not_calls", "h", "f", {}, True),
             ("order", ("g",), "f", {}, True), ("defines", "inner", "f", {}, True),
             ("contains", "g()", "f.inner", {}, True), ("calls", "g", "f", {"guarded_by": "c"}, False)]
    for check, target, scope, extra, ok in cases:
        outcome = evaluate(AssertSpec(name="x", file="m.py", check=check, target=target, scope=scope, **extra), data)
        assert outcome.ok is ok, (check, outcome.message)
        assert "nested too deeply" not in outcome.message
