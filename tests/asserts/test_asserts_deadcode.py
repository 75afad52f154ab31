"""Code no path runs proves nothing (helper-115): `if False:`, `False and ...`, code after the final `return`.

Only what Python itself folds is dead: literal tests (`False`, `0`, `None`, `""`, `not True`), an `and` with an
always-false operand, the `else` of `if True:`, and what follows an unconditional jump. Names such as
`TYPE_CHECKING` are never folded. `not_calls` keeps counting dead calls, and says they never run.
"""

from __future__ import annotations

import pytest

from tests.asserts.test_asserts_engine import expect, run

PRINTER = """
class LatexPrinter:
    def _print_Add(self, expr):
        return expr
{body}
"""

DEFINES = [
    ("if False", "    if False:\n        def _print_X(self, expr):\n            return expr", False,
     "LatexPrinter._print_X at pkg/mod.py:5 is never defined: its `def` never runs (under the always-false "
     "`if False` at pkg/mod.py:4)"),
    ("if 0", "    if 0:\n        def _print_X(self, expr):\n            return expr", False, "never defined"),
    ("else of if True", "    if True:\n        pass\n    else:\n        def _print_X(self, expr):\n            pass",
     False, "in the `else` part of the always-true `if True` at pkg/mod.py:4"),
    ("if True body", "    if True:\n        def _print_X(self, expr):\n            return expr", True, "defined at"),
    ("TYPE_CHECKING is not folded", "    if TYPE_CHECKING:\n        def _print_X(self, expr):\n            pass",
     True, "defined at"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in DEFINES], ids=[case[0] for case in DEFINES])
def test_defines_ignores_a_def_no_path_runs(body: str, ok: bool, fragment: str) -> None:
    expect(run("defines", "LatexPrinter._print_X", PRINTER.format(body=body)), ok, fragment)


def test_a_scope_no_path_defines_is_not_judged() -> None:
    source = PRINTER.format(body="    if False:\n        def _print_X(self, expr):\n            return expr.is_zero")
    expect(run("reads", "is_zero", source, "LatexPrinter._print_X"), False,
           "LatexPrinter._print_X at pkg/mod.py:5 is never defined: its `def` never runs")


CALLS = [
    ("if False and", "if False and isinstance(expr, Rational):\n    pass", False,
     "(the call at pkg/mod.py:2 never runs: after the always-false `False` short-circuits the `and` at pkg/mod.py:2)"),
    ("if False", "if False:\n    isinstance(expr, Rational)", False,
     "(the call at pkg/mod.py:3 never runs: under the always-false `if False` at pkg/mod.py:2)"),
    ("if None", "if None:\n    isinstance(expr, Rational)", False, "never runs"),
    ("if empty string", "if '':\n    isinstance(expr, Rational)", False, "never runs"),
    ("if not True", "if not True:\n    isinstance(expr, Rational)", False, "never runs"),
    ("and False after", "if expr and False:\n    isinstance(expr, Rational)", False, "never runs"),
    ("while False", "while False:\n    isinstance(expr, Rational)", False, "always-false `while False`"),
    ("while 0 else runs", "while 0:\n    pass\nelse:\n    isinstance(expr, Rational)", True, "called"),
    ("else of if True", "if True:\n    pass\nelse:\n    isinstance(expr, Rational)", False,
     "in the `else` part of the always-true `if True`"),
    ("elif after if True", "if True:\n    pass\nelif expr:\n    isinstance(expr, Rational)", False, "never runs"),
    ("dead arm", "x = 1 if False else isinstance(expr, Rational)\ny = isinstance(expr, Rational) if 0 else 2", True,
     "first at pkg/mod.py:2"),
    ("after raise", "raise ValueError\nisinstance(expr, Rational)", False, "after the `raise` at pkg/mod.py:2"),
    ("after if/else that both return", "if expr:\n    return 1\nelse:\n    return 2\nisinstance(expr, Rational)",
     False, "after the statement at pkg/mod.py:2, which no path leaves"),
    ("after continue", "for x in expr:\n    continue\n    isinstance(x, Rational)", False,
     "after the `continue` at pkg/mod.py:3"),
    ("True or is live", "if True or expr:\n    isinstance(expr, Rational)", True, "called"),
    ("a name is not folded", "if DEBUG:\n    isinstance(expr, Rational)", True, "called"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in CALLS], ids=[case[0] for case in CALLS])
def test_calls_ignores_calls_no_path_runs(body: str, ok: bool, fragment: str) -> None:
    source = "def f(expr):\n" + "".join(f"    {line}\n" for line in body.split("\n"))
    expect(run("calls", "isinstance", source, "f", args={"1": "Rational"}), ok, fragment)


def test_order_ignores_calls_no_path_runs() -> None:
    source = "def f():\n    if False:\n        a()\n    b()\n"
    expect(run("order", ("a", "b"), source, "f"), False, "a is never called on any path through f")


READS = [
    ("if False", "if False:\n    y = expr.is_extended_negative", False,
     "(the read at pkg/mod.py:3 never runs: under the always-false `if False` at pkg/mod.py:2)"),
    ("after the final return", "return expr\nexpr.is_extended_negative", False,
     "never runs: after the `return` at pkg/mod.py:2"),
    ("after the final raise", "raise ValueError(expr)\nprint(expr.is_extended_negative)", False,
     "after the `raise` at pkg/mod.py:2"),
    ("dead code inside a nested def", "def inner():\n    return 1\n    return expr.is_extended_negative\nreturn inner",
     False, "after the `return` at pkg/mod.py:3"),
    # A nested def no one calls still counts: whether a caller, a decorator or a registry runs it is not decided.
    ("a nested def no one calls", "def inner():\n    return expr.is_extended_negative\nreturn 1", True, "is read"),
    ("live read", "if expr:\n    y = expr.is_extended_negative", True, "is read in f at pkg/mod.py:3"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in READS], ids=[case[0] for case in READS])
def test_reads_ignores_reads_no_path_runs(body: str, ok: bool, fragment: str) -> None:
    source = "def f(expr):\n" + "".join(f"    {line}\n" for line in body.split("\n"))
    expect(run("reads", "is_extended_negative", source, "f"), ok, fragment)
    expect(run("mentions", "is_extended_negative", source, "f"), ok, "mention" if ok else "never runs")


def test_in_try_ignores_a_dead_call_in_a_try() -> None:
    source = "def f():\n    g()\n    if False:\n        try:\n            g()\n        except E:\n            pass\n"
    expect(run("calls", "g", source, "f", in_try=True), False, "no call of g sits in the body of a `try`")


def test_not_calls_still_counts_dead_calls_and_says_they_never_run() -> None:
    source = "def f():\n    if False:\n        g()\n"
    expect(run("not_calls", "g", source, "f"), False,
           "g is called at pkg/mod.py:3 (it never runs: under the always-false `if False` at pkg/mod.py:2; "
           "`not_calls` counts dead code too)")


SWALLOWED = """
def test_x(config):
    {manager}:
        raise ValueError(1)
    config.notify_exception(flag)
    class A:
        def hook(self):
            return helper()
"""


@pytest.mark.parametrize("manager", ["with pytest.raises(ValueError)", "with contextlib.suppress(KeyError)",
                                     "with open(p) as f, suppress(OSError)", "async with self.assertRaises(E)"])
def test_code_after_a_with_whose_body_raises_runs(manager: str) -> None:
    """helper-119: `with pytest.raises(...): raise ...` (92 places in pytest's tests) ended every path, so the
    code after it was dead: `reads`, `mentions`, `defines`, `in:` and `calls` failed on live code. A context
    manager's `__exit__` may swallow what its body raises, and the path goes on after the `with`."""
    source = SWALLOWED.format(manager=manager)
    expect(run("reads", "config", source, "test_x"), True, "read")
    expect(run("mentions", "notify_exception", source, "test_x"), True, "")
    expect(run("defines", "test_x.A.hook", source), True, "defined at")
    expect(run("calls", "helper", source, "test_x.A.hook"), True, "")
    expect(run("calls", "config.notify_exception", source, "test_x"), True, "")


@pytest.mark.parametrize("body", ["return 1", "raise ValueError(1)"])
def test_code_after_a_with_whose_body_leaves_is_still_dead(body: str) -> None:
    """A `return` is never swallowed; a `raise` under a manager not known to swallow it (`open`, a lock) ends
    the path as before (helper-120: every `with` taken to swallow let `order: [a, b]` hold where b never ran)."""
    source = f"def f(p):\n    a()\n    with open(p):\n        {body}\n    b()\n"
    expect(run("calls", "b", source, "f"), False, "never runs")
    expect(run("order", ("a", "b"), source, "f"), False, "")
