"""Exact messages: what a failing (and a holding) assert says, and where it points."""

from __future__ import annotations

import sys
import textwrap

import pytest

from carrytool.asserts import AssertOutcome, AssertSpec, evaluate

RUNNING = f"Python {sys.version_info.major}.{sys.version_info.minor}"
NO_PARSE = (f"the file does not parse with {RUNNING}, the Python carrytool runs on; if the project needs a newer "
            "Python, run carrytool with it")


def placed(source: str, marker: str, line: int) -> bytes:
    """Return `source` shifted down with comment lines so that `marker` sits on line `line`."""
    lines = textwrap.dedent(source).lstrip("\n").split("\n")
    index = next(i for i, text in enumerate(lines) if marker in text)
    assert index < line, "the marker cannot move up"
    return ("# padding\n" * (line - 1 - index) + "\n".join(lines)).encode()


def run(file: str, data: bytes | None, check: str, target: str | tuple[str, ...], scope: str | None = None,
        **bounds: object) -> AssertOutcome:
    spec = AssertSpec(name="m", file=file, check=check, target=target, scope=scope, **bounds)  # type: ignore[arg-type]
    return evaluate(spec, data)


WAKE = """
class Worker:
    def sleep(self, level=1):
        self.backend.suspend(level)

    def wake_up(self, tags=None):
        if needs_wake_sync:
            try:
                self.backend.resume(tags)
            except RuntimeError:
                ok = 0
            get_world_group().all_reduce(ok)
            {extra}
        else:
            {other}
"""


@pytest.mark.parametrize("extra, other, marker, line, ok, message", [
    ("pass", "self.backend.resume(tags)", "if needs_wake_sync", 141, True,
     "backend.resume is called exactly 1 time on every path (3 paths) through Worker.wake_up"),
    ("self.backend.resume(tags)", "self.backend.resume(tags)", "if needs_wake_sync", 141, False,
     "Worker.wake_up: backend.resume is called 2 times on the path through the `if needs_wake_sync` branch at "
     "vllm/v1/worker/gpu_worker.py:141 (want exactly 1)"),
    ("pass", "pass", "else:", 150, False,
     "Worker.wake_up: backend.resume is never called on the path through the `else` branch at vllm/v1/worker/gpu_worker.py:150 "
     "(want exactly 1)"),
])
def test_count_messages(extra: str, other: str, marker: str, line: int, ok: bool, message: str) -> None:
    data = placed(WAKE.format(extra=extra, other=other), marker, line)
    outcome = run("vllm/v1/worker/gpu_worker.py", data, "calls", "backend.resume", "Worker.wake_up", times=1)
    assert (outcome.ok, outcome.message) == (ok, message)
    assert outcome.line == (line + 2 if ok else line)  # a holding count points at the first call


def test_order_message() -> None:
    source = """
    class CuMemAllocator:
        def sleep(self):
            if x:
                torch.cuda.synchronize()
            for handle in handles:
                unmap_and_release(handle)
    """
    outcome = run("vllm/device_allocator/cumem.py", placed(source, "unmap_and_release", 88), "order",
                  ("torch.cuda.synchronize", "unmap_and_release"), "CuMemAllocator.sleep")
    assert outcome.message == ("CuMemAllocator.sleep: unmap_and_release at vllm/device_allocator/cumem.py:88 is reachable without "
                               "torch.cuda.synchronize (on the path that skips the `if x` at vllm/device_allocator/cumem.py:85)")
    assert (outcome.ok, outcome.line) == (False, 88)


def test_not_calls_message() -> None:
    source = """
    class GPUModelRunner:
        def execute_model(self, scheduler_output):
            get_pp_group().all_reduce(flag)
    """
    outcome = run("vllm/v1/worker/gpu_model_runner.py", placed(source, "all_reduce", 412), "not_calls", "all_reduce",
                  "GPUModelRunner.execute_model")
    assert outcome.message == ("GPUModelRunner.execute_model: all_reduce is called at vllm/v1/worker/gpu_model_runner.py:412 "
                               "(want no calls)")
    assert (outcome.ok, outcome.line) == (False, 412)


@pytest.mark.parametrize("data, check, target, scope, message", [
    (None, "calls", "g", None, "vllm/x.py does not exist in the composed tree"),
    (None, "contains", "g", None, "vllm/x.py does not exist in the composed tree"),
    (b"x = 1\n" * 11 + b"def f(:\n", "calls", "g", None, f"vllm/x.py:12: syntax error: invalid syntax ({NO_PARSE})"),
    (b"def f(:\n", "contains", "def", "f", f"vllm/x.py:1: syntax error: invalid syntax ({NO_PARSE})"),
    (b"class Worker:\n    def __init__(self): pass\n    def sleep(self): pass\n    def wake_up(self): pass\n",
     "calls", "g", "Worker.wake_upp",
     "no scope Worker.wake_upp in vllm/x.py (defined there: Worker.sleep, Worker.wake_up, ...)"),
    (b"x = 1\n", "calls", "g", "f", "no scope f in vllm/x.py (nothing is defined there)"),
    # a method missing from a class: that class's own are listed, not the look-alike class's (APIRouter's
    # close names hid APIRoute's in a new user's trial on fastapi)
    (b"class APIRouter:\n    def route(self): pass\n    def post(self): pass\n    def get(self): pass\n"
     b"class APIRoute:\n    def __init__(self): pass\n    def matches(self): pass\n",
     "calls", "g", "APIRoute.no_such_method",
     "no scope APIRoute.no_such_method in vllm/x.py (defined there: APIRoute.__init__, APIRoute.matches)"),
])
def test_missing_file_syntax_error_and_missing_scope(data: bytes | None, check: str, target: str,
                                                     scope: str | None, message: str) -> None:
    outcome = run("vllm/x.py", data, check, target, scope)
    assert (outcome.ok, outcome.message) == (False, message)


def test_a_syntax_error_names_the_python_that_refused_the_file() -> None:
    """helper-123: jax (Python >= 3.12) on carrytool running on 3.11: `def jit[**P, R](...)` was only "syntax
    error: expected '('", every assert on the file failed, and nothing said the Python was the cause."""
    outcome = run("jax/_src/api.py", b"import x\n\n\ndef f(:\n    pass\n", "defines", "f")
    assert (outcome.ok, outcome.unparsable, outcome.line) == (False, True, None)
    assert outcome.message.startswith("jax/_src/api.py:4: syntax error: invalid syntax (")
    assert f"does not parse with {RUNNING}, the Python carrytool runs on" in outcome.message
    assert "if the project needs a newer Python, run carrytool with it" in outcome.message
    # a text check reads the file as text: it is judged, parse or not
    assert run("jax/_src/api.py", b"def f(:\n", "contains", "def f").unparsable is False


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695 and `type` statements")
@pytest.mark.parametrize("source, line, what", [
    (b"import x\n\n\ndef jit[**P, R](fun):\n    pass\n", 4, "PEP 695 type parameters"),
    (b"class Box[T]:\n    pass\n", 1, "PEP 695 type parameters"),
    (b"x = 1\ntype Shape = tuple[int, ...]\n", 2, "a `type` statement"),
])
def test_newer_grammar_on_the_failing_line_is_named(source: bytes, line: int, what: str) -> None:
    outcome = run("jax/_src/api.py", source, "defines", "jit")
    assert outcome.message.startswith(f"jax/_src/api.py:{line}: syntax error: ")
    assert f"(the line holds {what}, new in Python 3.12: {NO_PARSE})" in outcome.message, outcome.message


@pytest.mark.parametrize("bounds, message", [
    ({"times": 1}, "g is called exactly 1 time on every path (1 path) through f"),
    ({"min": 1, "max": 3}, "g is called 1 to 2 times on the paths (2 paths) through f (want between 1 and 3)"),
    ({"min": 1}, "g is called 1 to any number of times on the paths (2 paths) through f (want at least 1)"),
    ({}, "g is called on at least one path through f (first at pkg/mod.py:2)"),
])
def test_holding_messages_say_what_held(bounds: dict[str, int], message: str) -> None:
    bodies = {
        (("times", 1),): "def f():\n    g()\n",
        (("max", 3), ("min", 1)): "def f(c):\n    g()\n    if c:\n        g()\n",
        (("min", 1),): "def f(xs):\n    g()\n    for x in xs:\n        g()\n",
        (): "def f():\n    g()\n",
    }
    source = bodies[tuple(sorted(bounds.items()))]
    outcome = run("pkg/mod.py", source.encode(), "calls", "g", "f", **bounds)
    assert (outcome.ok, outcome.message) == (True, message)


def test_why_and_entry_are_fields_not_message() -> None:
    spec = AssertSpec(name="resume-once", file="w.py", check="calls", target="g", scope="f", times=1,
                      why="#45612 handshake must gate backend.resume", entry="pr/45612", line=7)
    outcome = evaluate(spec, b"def f():\n    pass\n")
    assert not outcome.ok
    assert "45612" not in outcome.message
    assert (outcome.name, outcome.file, outcome.why, outcome.entry) == (
        "resume-once", "w.py", "#45612 handshake must gate backend.resume", "pr/45612")
    assert outcome.to_json()["why"] == "#45612 handshake must gate backend.resume"


@pytest.mark.parametrize("spec_fields, message", [
    ({"check": "calls_twice", "target": "g"}, "unknown check `calls_twice`"),
    ({"check": "calls", "target": "a..b"}, "`calls` needs a dotted name such as backend.resume, got 'a..b'"),
    ({"check": "calls", "target": ("a", "b")}, "`calls` needs a dotted name"),
    ({"check": "defines", "target": "f()"}, "`defines` needs a dotted name"),
    ({"check": "order", "target": ("a", "b c")}, "`order` needs a list of dotted names"),
    ({"check": "contains", "target": ""}, "`contains` needs a non-empty text"),
    ({"check": "not_calls", "target": "g", "times": 1}, "`times` only applies to `calls`, not to `not_calls`"),
    ({"check": "calls", "target": "g", "min": -1}, "`min` needs a whole number >= 0, got -1"),
    ({"check": "calls", "target": "g", "min": True}, "`min` needs a whole number >= 0, got True"),
    ({"check": "calls", "target": "g", "min": 3, "max": 1}, "the bounds can never hold: at least 3 and at most 1"),
    ({"check": "calls", "target": "g", "guarded_by": "not a name"}, "`guarded_by` needs a name"),
    ({"check": "matches", "target": "(unclosed"}, "invalid regex `(unclosed`: missing ), unterminated subpattern"),
])
def test_malformed_specs_fail_with_a_reason(spec_fields: dict[str, object], message: str) -> None:
    spec = AssertSpec(name="bad", file="pkg/mod.py", **spec_fields)  # type: ignore[arg-type]
    outcome = evaluate(spec, b"def f():\n    g()\n")
    assert not outcome.ok
    assert message in outcome.message, outcome.message


def test_messages_name_files_by_their_path_in_the_tree() -> None:
    # mypy/build.py and mypyc/build.py both exist: a basename would not say which one failed.
    data = b"def f(c):\n    if c:\n        return\n    g()\n"
    for file in ("mypy/build.py", "mypyc/build.py"):
        assert run(file, data, "calls", "g", "f", times=1).message == (
            f"f: g is never called on the path that returns at {file}:3 (want exactly 1)")
        assert run(file, data, "calls", "g", "nope").message == f"no scope nope in {file} (defined there: f)"
        assert run(file, data, "not_calls", "h").message == f"h is not called anywhere in {file}"
        assert run(file, data, "contains", "g()").message == f"`g()` is present at {file}:4"


def test_lexical_and_text_failures_say_where_the_scope_is() -> None:
    # (helper-115: "is_extended_negative is never read in PrettyPrinter._print_Add" named no file:line)
    source = placed("""
        class PrettyPrinter:
            def _print_Add(self, expr):
                return expr.is_zero
    """, "def _print_Add", 120)
    where = "PrettyPrinter._print_Add at sympy/pretty.py:120"
    for check, target, said in [("reads", "is_extended_negative", f"is_extended_negative is never read in {where}"),
                                ("mentions", "is_extended_negative", f"is_extended_negative is never mentioned in {where}"),
                                ("contains", "is_extended_negative", f"`is_extended_negative` is not in {where}"),
                                ("matches", "negative$", f"regex `negative$` matches nothing in {where}")]:
        outcome = run("sympy/pretty.py", source, check, target, "PrettyPrinter._print_Add")
        assert (outcome.ok, outcome.line) == (False, 120)
        assert outcome.message.startswith(f"PrettyPrinter._print_Add: {said}"), outcome.message


def test_a_call_in_an_assert_message_is_said_to_run_only_when_the_assert_fails() -> None:
    # (helper-115: "the call at meijerint.py:1741 is unreachable", though it runs whenever the assert fails)
    source = placed("""
        def _rewrite(f, x):
            assert f.is_polynomial(x), _debug(f)
            return f
    """, "assert", 1741)
    outcome = run("sympy/meijerint.py", source, "calls", "_debug", "_rewrite")
    assert not outcome.ok
    assert outcome.message == (
        "_rewrite: _debug is never called on any path through _rewrite (the call at sympy/meijerint.py:1741 is in "
        "the message of the `assert` at sympy/meijerint.py:1741: it runs only when the assert fails, and never "
        "under `python -O`)")
