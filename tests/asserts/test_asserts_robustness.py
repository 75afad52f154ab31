"""The engine never raises, reads and parses each file once, and stays linear on large or odd inputs."""

from __future__ import annotations

import ast
import importlib.util
import random
import sys

import pytest

from carrytool.asserts import CHECKS, AssertOutcome, AssertSpec, evaluate, evaluate_all
from carrytool.asserts.pyscope import definitions
from carrytool.asserts.source import SourceFile

TARGETS: dict[str, str | tuple[str, ...]] = {
    "defines": "f", "mentions": "self", "reads": "self", "calls": "append", "not_calls": "append",
    "order": ("isinstance", "append"), "contains": "def", "absent": "lambda", "matches": r"^\s+return\b",
}


def every_check(file: str, scope: str | None = None) -> list[AssertSpec]:
    """Return one spec per check (and per bound for `calls`) on `file`."""
    specs = [AssertSpec(name=check, file=file, check=check, target=TARGETS[check], scope=scope) for check in CHECKS]
    specs += [AssertSpec(name="bounded", file=file, check="calls", target="append", scope=scope, min=1, max=2),
              AssertSpec(name="guarded", file=file, check="calls", target="append", scope=scope, guarded_by="x")]
    return specs


GARBAGE = [
    b"",
    b"\x00\x01\x02 binary \xff\xfe\x00",
    bytes(random.Random(7).randrange(256) for _ in range(4096)),
    "café = 1\ndef f():\n    return café\n".encode("latin-1"),  # not UTF-8 and no coding cookie
    b"\xef\xbb\xbfdef f():\n    return 1\n",  # a BOM
    b"def f():\r\n    x.append(1)\r\n",
    b"def f(:\n",
    b"   indented\n",
    b"def f():\n    return " + b"(" * 150 + b"1" + b")" * 150 + b"\n",
    b"def f():\n    return " + b"(" * 300 + b"1" + b")" * 300 + b"\n",
]


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
@pytest.mark.parametrize("scope", [None, "f"])
def test_any_bytes_give_an_outcome_never_an_exception(data: bytes, scope: str | None) -> None:
    for spec in every_check("pkg/odd.py", scope):
        outcome = evaluate(spec, data)
        assert isinstance(outcome, AssertOutcome)
        assert outcome.message


def test_a_coding_cookie_is_honoured() -> None:
    data = "# -*- coding: latin-1 -*-\ndef f(café):\n    café.append(1)\n".encode("latin-1")
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="mentions", target="café", scope="f"), data)
    assert (outcome.ok, outcome.message) == (True, "café is mentioned in f at m.py:2")
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="contains", target="café.append"), data)
    assert (outcome.ok, outcome.line) == (True, 3)


def test_non_utf8_python_without_cookie_fails_as_unparseable() -> None:
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g"), GARBAGE[3])
    assert (outcome.ok, outcome.message) == (False, "m.py:1: cannot parse as Python: byte 0xe9 is not valid utf-8")
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g"), b"x = 1\n# \xff\n")
    assert outcome.message == "m.py:2: cannot parse as Python: byte 0xff is not valid utf-8"


STDLIB = ["argparse", "asyncio.base_events", "dataclasses", "json.decoder", "pathlib", "subprocess", "tarfile",
          "typing"]


def stdlib_source(name: str) -> bytes | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    with open(spec.origin, "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("module", STDLIB)
def test_every_check_on_every_function_of_real_code(module: str) -> None:
    data = stdlib_source(module)
    if data is None:
        pytest.skip(f"{module} has no Python source here")
    file = module.replace(".", "/") + ".py"
    scopes = [None, *definitions(SourceFile(file, data))]
    specs = [spec for scope in scopes for spec in every_check(file, scope)]
    outcomes = evaluate_all(specs, lambda path: data)
    assert len(outcomes) == len(specs)
    assert all(outcome.message for outcome in outcomes)
    assert any(outcome.ok for outcome in outcomes) and not all(outcome.ok for outcome in outcomes)


def test_evaluate_all_reads_and_parses_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"a.py": b"def f():\n    g()\n", "b.py": b"def h():\n    g()\n    g()\n"}
    reads: list[str] = []
    parses: list[object] = []
    real_parse = ast.parse

    def counting_parse(*args: object, **kwargs: object) -> ast.AST:
        parses.append(args[0])
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    def read(path: str) -> bytes | None:
        reads.append(path)
        return files.get(path)

    monkeypatch.setattr(ast, "parse", counting_parse)
    specs = [AssertSpec(name="1", file="a.py", check="calls", target="g", scope="f", times=1),
             AssertSpec(name="2", file="b.py", check="calls", target="g", scope="h", times=1),
             AssertSpec(name="3", file="a.py", check="not_calls", target="g", scope="f"),
             AssertSpec(name="4", file="gone.py", check="calls", target="g"),
             AssertSpec(name="5", file="b.py", check="contains", target="g()"),
             AssertSpec(name="6", file="a.py", check="order", target=("g", "g"), scope="f"),
             AssertSpec(name="7", file="gone.py", check="contains", target="g")]
    outcomes = evaluate_all(specs, read)
    assert reads == ["a.py", "b.py", "gone.py"]
    assert len(parses) == 2
    assert [o.name for o in outcomes] == ["1", "2", "3", "4", "5", "6", "7"]
    assert [o.ok for o in outcomes] == [True, False, False, False, True, False, False]
    assert outcomes[3].message == "gone.py does not exist in the composed tree"


def test_long_operator_chains_do_not_exhaust_the_stack() -> None:
    data = ("def f():\n    x = " + " + ".join(f"g({i})" for i in range(2000)) + "\n").encode()
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g", scope="f", times=2000), data)
    assert outcome.ok, outcome.message


def test_long_elif_chains_are_one_fork() -> None:
    body = "".join(f"    {'if' if i == 0 else 'elif'} c == {i}:\n        g()\n" for i in range(800))
    data = ("def f(c):\n" + body + "    else:\n        g()\n").encode()
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g", scope="f", times=1), data)
    assert (outcome.ok, outcome.message) == (True, "g is called exactly 1 time on every path (801 paths) through f")


@pytest.mark.parametrize("source, ok, message", [
    # as deep as Python parses: analysed exactly
    ("return " + "g(" * 180 + ")" * 180, True, "g is called exactly 180 times on every path (1 path) through f"),
    # deeper than the parser allows, or than ast construction recurses: a clean failure naming the cause
    ("return " + "g(" * 400 + ")" * 400, False, "m.py:2: syntax error: too many nested parentheses (the file does not parse with "
     f"Python {sys.version_info.major}.{sys.version_info.minor}, the Python carrytool runs on; if the project "
     "needs a newer Python, run carrytool with it)"),
    # Python 3.11+ builds the tree of a 3,000-term chain recursively and gives up; 3.10 builds it: either
    # way an exact answer, never a crash
    ("return " + " + ".join(["g()"] * 3000), False,
     "m.py: cannot parse as Python: maximum recursion depth exceeded during ast construction")
    if sys.version_info >= (3, 11) else
    ("return " + " + ".join(["g()"] * 3000), True, "g is called exactly 3000 times on every path (1 path) through f"),
])
def test_deeply_nested_calls_fail_cleanly_or_hold(source: str, ok: bool, message: str) -> None:
    data = ("def f():\n    " + source + "\n").encode()
    outcome = evaluate(AssertSpec(name="c", file="m.py", check="calls", target="g", scope="f", min=1), data)
    assert (outcome.ok, outcome.message) == (ok, message)


def test_many_asserts_on_a_large_file_complete() -> None:
    # Not timed (benchmarks time things); this only has to finish in a normal test run.
    functions = "".join(
        f"def f{i}(c, xs):\n    if c:\n        a()\n    else:\n        a()\n"
        f"    for x in xs:\n        b(x)\n    try:\n        a()\n    except E:\n        pass\n" for i in range(450))
    data = functions.encode()
    specs = [AssertSpec(name=str(i), file="big.py", check="calls", target="a", scope=f"f{i}", times=2)
             for i in range(0, 450, 5)]
    specs += [AssertSpec(name="m", file="big.py", check="not_calls", target="zz"),
              AssertSpec(name="o", file="big.py", check="order", target=("a", "b"), scope="f7")]
    outcomes = evaluate_all(specs, lambda path: data)
    assert data.count(b"\n") >= 4900
    assert all(outcome.ok for outcome in outcomes), [o.message for o in outcomes if not o.ok]
