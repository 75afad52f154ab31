"""Long `elif` chains and deep nesting: the scope finder and the asserts answer, never a RecursionError."""

from __future__ import annotations

from carrytool.asserts import AssertSpec, evaluate
from carrytool.pipeline.scopes import scope_at, scope_names
from tests.conftest import Cli, Small


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


def test_explain_on_a_1500_branch_elif_chain(cli: Cli, small: Small) -> None:
    chain = elif_chain(1500).decode()
    small.base = small.up.commit({"deep.py": chain}, "a long elif chain", parent="main", ref="refs/heads/main")
    small.pr(1, {"deep.py": chain.replace("c == 1498:", "c == -1:")}, parent=small.base)
    small.pr(2, {"deep.py": chain.replace("c == 1497:", "c == -2:")}, parent=small.base)
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[{"file": "deep.py", "in": "f", "calls": "g", "times": 1}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    [overlap] = report["overlaps"]
    assert overlap["entries"] == ["pr/1", "pr/2"] and overlap["scopes"] == ["f"]
    result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1")
    assert result.exit_code == 0 and "RecursionError" not in result.stderr
