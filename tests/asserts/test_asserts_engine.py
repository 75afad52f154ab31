"""The assertion engine's semantics, table-driven over source strings."""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import CHECKS, AssertOutcome, AssertSpec, evaluate


def run(check: str, target: str | tuple[str, ...], source: str | bytes, scope: str | None = None,
        file: str = "pkg/mod.py", **bounds: object) -> AssertOutcome:
    """Evaluate one assert on `source` (dedented when text)."""
    data = textwrap.dedent(source).lstrip("\n").encode() if isinstance(source, str) else source
    spec = AssertSpec(name="t", file=file, check=check, target=target, scope=scope, **bounds)  # type: ignore[arg-type]
    return evaluate(spec, data)


def expect(outcome: AssertOutcome, ok: bool, fragment: str) -> None:
    assert outcome.ok is ok, outcome.message
    assert fragment in outcome.message, outcome.message


def test_public_api() -> None:
    assert CHECKS == ("defines", "mentions", "calls", "not_calls", "order", "reads", "contains", "absent", "matches")


# ---- comments, strings, docstrings -----------------------------------------------------------------

IGNORED = """
def f():
    '''Calls g() and mentions flag.'''
    # g() is not called here; flag neither
    text = "g(); flag"
    return text
"""


@pytest.mark.parametrize("check, target, ok, fragment", [
    ("calls", "g", False, "g is never called on any path through f"),
    ("calls", "g", False, "only in a comment, a string"),
    ("not_calls", "g", True, "g is not called anywhere in f"),
    ("mentions", "flag", False, "flag is never mentioned in f"),
    ("mentions", "text", True, "text is mentioned in f at pkg/mod.py:4"),
    ("order", ("g", "text"), False, "g is never called on any path"),
    ("contains", "g()", True, "is present at pkg/mod.py:2"),  # text checks do see comments and strings
])
def test_comments_strings_and_docstrings_never_count(check: str, target: str, ok: bool, fragment: str) -> None:
    expect(run(check, target, IGNORED, "f"), ok, fragment)


# ---- call targets: suffix on whole components ------------------------------------------------------

@pytest.mark.parametrize("call, target, ok", [
    ("self.backend.resume(tags)", "backend.resume", True),
    ("backend.resume(tags)", "backend.resume", True),
    ("xbackend.resume(tags)", "backend.resume", False),
    ("self.xbackend.resume(tags)", "backend.resume", False),
    ("xbackend.resume(tags)", "resume", True),
    ("self.backend.resume(tags)", "self.backend.resume", True),
    ("backend.resume(tags)", "self.backend.resume", False),
    ("backend.resumes(tags)", "resume", False),
    ("torch.cuda.synchronize()", "torch.cuda.synchronize", True),
    ("torch.cuda.synchronize()", "cuda.synchronize", True),
    ("torch.cuda.synchronize()", "synchronize", True),
    ("torch.synchronize()", "cuda.synchronize", False),
    ("get_pp_group().all_reduce(x)", "all_reduce", True),
    ("get_pp_group().all_reduce(x)", "get_pp_group.all_reduce", True),
    ("get_pp_group().all_reduce(x)", "get_pp_group().all_reduce", True),
    ("pp_group.all_reduce(x)", "get_pp_group().all_reduce", False),
    ("get_world_group().cpu_group.barrier()", "cpu_group.barrier", True),
    ("self.workers[0].execute()", "execute", True),
    ("self.workers[0].execute()", "workers.execute", False),
    ("make()()", "make", True),  # the inner call of `make`; the outer callee has no name
    ("await_(x)", "await_", True),
])
def test_call_targets_match_as_suffix_on_whole_components(call: str, target: str, ok: bool) -> None:
    source = f"def f(self, tags, x):\n    {call}\n"
    expect(run("calls", target, source, "f", times=1), ok, target)


# ---- counts on every path --------------------------------------------------------------------------

COUNTS = [
    ("straight line", "g()", {"times": 1}, True, "g is called exactly 1 time on every path (1 path) through f"),
    ("twice", "g()\ng()", {"times": 1}, False, "g is called 2 times on every path through f (calls at pkg/mod.py:2, pkg/mod.py:3) (want exactly 1)"),
    ("if/else both", "if c:\n    g()\nelse:\n    g()", {"times": 1}, True, "(2 paths)"),
    ("if without else", "if c:\n    g()", {"times": 1}, False,
     "g is never called on the path that skips the `if c` at pkg/mod.py:2 (want exactly 1)"),
    ("elif missing", "if c:\n    g()\nelif d:\n    pass\nelse:\n    g()", {"times": 1}, False,
     "never called on the path through the `elif d` branch at pkg/mod.py:4"),
    ("elif chain without else", "if c:\n    g()\nelif d:\n    g()", {"min": 1}, False,
     "the path that takes none of the branches of the `if c` at pkg/mod.py:2"),
    ("else-if is not elif", "if c:\n    g()\nelse:\n    if d:\n        g()", {"min": 1}, False,
     "the path that skips the `if d` at pkg/mod.py:5"),
    ("else branch", "if c:\n    g()\nelse:\n    h()", {"times": 1}, False,
     "never called on the path through the `else` branch at pkg/mod.py:4"),
    ("nested ifs", "if a:\n    if b:\n        g()\n    g()\nelse:\n    g()", {"max": 1}, False,
     "g is called 2 times on the path through the `if b` branch at pkg/mod.py:3 (want at most 1)"),
    ("sequential ifs", "if a:\n    g()\nif b:\n    g()", {"max": 1}, False,
     "called 2 times on the path through the `if a` branch at pkg/mod.py:2"),
    ("early return", "if c:\n    return\ng()", {"times": 1}, False,
     "g is never called on the path that returns at pkg/mod.py:3 (want exactly 1)"),
    ("return after call", "g()\nif c:\n    return 1\nh()", {"times": 1}, True, "(2 paths)"),
    ("raise ends a path", "if c:\n    raise ValueError(c)\ng()", {"times": 1}, False,
     "never called on the path that raises at pkg/mod.py:3"),
    ("return value is evaluated", "return g()", {"times": 1}, True, "exactly 1 time"),
    ("match with wildcard", "match cmd:\n    case 'a':\n        g()\n    case _:\n        g()", {"times": 1},
     True, "(2 paths)"),
    ("match without wildcard", "match cmd:\n    case 'a':\n        g()\n    case Foo(x=1):\n        g()",
     {"times": 1}, False, "never called on the path that matches no case of the `match cmd` at pkg/mod.py:2"),
    ("match case", "match cmd:\n    case Foo():\n        pass\n    case _:\n        g()", {"times": 1}, False,
     "never called on the path through the `case Foo()` at pkg/mod.py:3"),
    ("match guard", "match cmd:\n    case x if ok(x):\n        g()", {"times": 1}, False,
     "the path that matches no case of the `match cmd`"),
    ("match capture is irrefutable", "match cmd:\n    case 1:\n        g()\n    case other:\n        g()",
     {"times": 1}, True, "(2 paths)"),
    ("for loop min", "for x in xs:\n    g()", {"min": 1}, False,
     "g is never called on the path that skips the loop at pkg/mod.py:2 (want at least 1)"),
    ("for loop max", "for x in xs:\n    g()", {"max": 1}, False,
     "g at pkg/mod.py:3 is inside the loop at pkg/mod.py:2, so it may be called any number of times (want at most 1)"),
    ("while loop", "while c:\n    g()", {"max": 5}, False, "inside the loop at pkg/mod.py:2"),
    ("while test runs once at least", "while g():\n    pass", {"min": 1}, True, "called 1 to any number"),
    ("while test repeats", "while g():\n    pass", {"max": 1}, False, "inside the loop at pkg/mod.py:2"),
    ("for iterable runs once", "for x in g():\n    pass", {"times": 1}, True, "exactly 1 time"),
    ("nested loops name the inner", "for x in xs:\n    for y in x:\n        g()", {"max": 1}, False,
     "inside the loop at pkg/mod.py:3"),
    ("loop without call is bounded", "for x in xs:\n    h()\ng()", {"times": 1}, True, "exactly 1 time"),
    ("break bounds the loop", "for x in xs:\n    g()\n    break", {"max": 1}, True, "0 to 1 times"),
    ("continue loops again", "for x in xs:\n    if c:\n        g()\n        continue\n    break", {"max": 1}, False,
     "inside the loop at pkg/mod.py:2"),
    ("for else runs without break", "for x in xs:\n    if c:\n        break\nelse:\n    g()", {"times": 1}, False,
     "never called on the path that breaks out of the loop at pkg/mod.py:4"),
    ("while True enters", "while True:\n    g()\n    if c:\n        return", {"min": 1}, True, "called 1 to"),
    ("while True leaves only by jumps", "while True:\n    if c:\n        break\ng()", {"times": 1}, True,
     "exactly 1 time"),
    ("list comprehension", "ys = [g(x) for x in xs]", {"max": 1}, False,
     "g at pkg/mod.py:2 is inside the comprehension at pkg/mod.py:2"),
    ("comprehension min", "ys = {x: g(x) for x in xs}", {"min": 1}, False,
     "never called on the path that skips the comprehension at pkg/mod.py:2"),
    ("comprehension first iterable", "ys = [x for x in g()]", {"times": 1}, True, "exactly 1 time"),
    ("generator filter", "ys = (x for x in xs if g(x))", {"max": 1}, False, "inside the comprehension"),
    ("try handler counts the body", "try:\n    g()\nexcept E:\n    h()", {"times": 1}, True, "(2 paths)"),
    ("handler adds a call", "try:\n    g()\nexcept RuntimeError:\n    g()", {"max": 1}, False,
     "g is called 2 times on the path through the `except RuntimeError` handler at pkg/mod.py:4 (want at most 1)"),
    ("bare except", "try:\n    h()\nexcept:\n    g()", {"max": 0}, False,
     "on the path through the bare `except` handler at pkg/mod.py:4"),
    ("try else", "try:\n    h()\nexcept E:\n    pass\nelse:\n    g()", {"times": 1}, False,
     "never called on the path through the `except E` handler at pkg/mod.py:4"),
    ("no-exception path", "try:\n    h()\nexcept E:\n    g()", {"times": 1}, False,
     "never called on the path that raises no exception in the `try` at pkg/mod.py:2"),
    ("raise in try is caught", "try:\n    if c:\n        raise E()\n    g()\nexcept E:\n    pass", {"min": 1},
     False, "never called on the path that raises at pkg/mod.py:4"),
    ("finally on every path", "try:\n    if c:\n        return 1\n    h()\nfinally:\n    g()", {"times": 1}, True,
     "exactly 1 time"),
    ("finally after raise", "try:\n    raise E()\nfinally:\n    g()", {"times": 1}, True, "exactly 1 time"),
    ("re-raise from handler", "try:\n    h()\nexcept E:\n    raise\ng()", {"times": 1}, False,
     "never called on the path that raises at pkg/mod.py:5"),
    ("nested def is not run", "def inner():\n    g()\ninner()", {"min": 1}, False, "never called on any path"),
    ("lambda is not run", "k = lambda: g()\nk()", {"min": 1}, False, "is not run by the scope"),
    ("nested class is not run", "class K:\n    g()", {"min": 1}, False, "is not run by the scope"),
    ("decorator is evaluated", "@g()\ndef inner():\n    pass", {"times": 1}, True, "exactly 1 time"),
    ("default is evaluated", "def inner(x=g()):\n    pass", {"times": 1}, True, "exactly 1 time"),
    ("lambda default is evaluated", "k = lambda x=g(): x", {"times": 1}, True, "exactly 1 time"),
    ("class bases are evaluated", "class K(g()):\n    pass", {"times": 1}, True, "exactly 1 time"),
    ("with body runs once", "with lock():\n    g()", {"times": 1}, True, "exactly 1 time"),
    ("walrus", "if (n := g()) > 1:\n    pass", {"times": 1}, True, "exactly 1 time"),
    ("and may skip", "ok = c and g()", {"times": 1}, False,
     "never called on the path that short-circuits the `and` at pkg/mod.py:2 after `c`"),
    ("or bounds", "ok = g() or g()", {"min": 1, "max": 2}, True, "1 to 2 times"),
    ("ternary", "x = g() if c else h()", {"times": 1}, False,
     "never called on the path through the false arm of `g() if c else h()` at pkg/mod.py:2"),
    ("comparison chain", "ok = a < b < g()", {"min": 1}, False, "short-circuits the comparison at pkg/mod.py:2"),
    ("assert test runs", "assert g(), h()", {"times": 1}, True, "exactly 1 time"),
    ("assert message does not", "assert c, g()", {"max": 0}, True, "exactly 0 times"),
    ("max zero without calls", "h()", {"max": 0}, True, "g is called exactly 0 times on every path"),
    ("unreachable code", "return\ng()", {"min": 1}, False, "(the call at pkg/mod.py:3 never runs: after the `return` at pkg/mod.py:2)"),
    ("f-string expression", "s = f'{g()}'", {"times": 1}, True, "exactly 1 time"),
    ("times zero", "g()", {"times": 0}, False, "g is called 1 time on every path through f (calls at pkg/mod.py:2) (want exactly 0)"),
    ("min without calls", "h()", {"min": 1}, False, "g is never called on any path through f"),
]


@pytest.mark.parametrize("body, bounds, ok, fragment",
                         [case[1:] for case in COUNTS], ids=[case[0] for case in COUNTS])
def test_counts_on_every_path(body: str, bounds: dict[str, int], ok: bool, fragment: str) -> None:
    source = "def f(c, d, a, b, xs, cmd, lock):\n" + textwrap.indent(body, "    ") + "\n"
    expect(run("calls", "g", source, "f", **bounds), ok, fragment)


ASYNC = """
async def f(session, rows):
    async with session.begin():
        await g()
    async for row in rows:
        await h(row)
"""


@pytest.mark.parametrize("target, bounds, ok, fragment", [
    ("g", {"times": 1}, True, "g is called exactly 1 time on every path (2 paths) through f"),
    ("begin", {"times": 1}, True, "exactly 1 time"),
    ("h", {"max": 1}, False, "h at pkg/mod.py:5 is inside the loop at pkg/mod.py:4"),
    ("h", {}, True, "h is called on at least one path through f (first at pkg/mod.py:5)"),
])
def test_async_functions_await_and_async_loops(target: str, bounds: dict[str, int], ok: bool,
                                               fragment: str) -> None:
    expect(run("calls", target, ASYNC, "f", **bounds), ok, fragment)


def test_plain_calls_needs_one_reachable_call() -> None:
    expect(run("calls", "g", "def f():\n    if c:\n        g()\n", "f"), True,
           "g is called on at least one path through f (first at pkg/mod.py:3)")
    expect(run("calls", "g", "def f():\n    h()\n", "f"), False, "g is never called on any path through f")
    expect(run("calls", "backend.resume", "def f(self):\n    self.backend.resum()\n", "f"), False,
           "(did you mean `backend.resum`, called at pkg/mod.py:2?)")
    expect(run("calls", "g", "def f():\n    x = g\n", "f"), False, "(`g` is used at pkg/mod.py:2, but not called)")


def test_forty_sequential_ifs_are_not_exponential() -> None:
    source = "def f():\n" + "".join(f"    if c{i}:\n        g()\n" for i in range(40))
    expect(run("calls", "g", source, "f", max=40), True, "0 to 40 times on the paths (over a million paths)")
    expect(run("calls", "g", source, "f", max=39), False, "called 40 times on the path through the `if c0`")
    expect(run("order", ("g", "h"), source + "    h()\n", "f"), False, "h at pkg/mod.py:82 is reachable without g")


# ---- scopes ----------------------------------------------------------------------------------------

SCOPES = """
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    def typed_helper():
        g()

try:
    from fast import accel
except ImportError:
    def accel():
        g()


class Outer:
    class Inner:
        def method(self):
            g()

        async def amethod(self):
            await g()

    @property
    def value(self):
        return g()

    @value.setter
    def value(self, new):
        h(new)

    @overload
    def pick(self, x: int) -> int: ...

    @overload
    def pick(self, x: str) -> str: ...

    def pick(self, x):
        return g(x)

    if TYPE_CHECKING:
        def checked(self):
            g()


def outer():
    def helper():
        g()
    return helper
"""


@pytest.mark.parametrize("scope, bounds, ok, fragment", [
    ("typed_helper", {"times": 1}, True, "through typed_helper"),
    ("accel", {"times": 1}, True, "through accel"),
    ("Outer.Inner.method", {"times": 1}, True, "through Outer.Inner.method"),
    ("Outer.Inner.amethod", {"times": 1}, True, "through Outer.Inner.amethod"),
    ("Outer.checked", {"times": 1}, True, "through Outer.checked"),
    ("outer.helper", {"times": 1}, True, "through outer.helper"),
    ("outer", {"min": 1}, False, "(the call at pkg/mod.py:46 is not run by the scope"),
    ("Outer.pick", {"times": 1}, True, "(1 path)"),  # the @overload stubs are left out
    ("Outer.value", {}, True, "g is called on at least one path through Outer.value"),
    ("Outer.value", {"times": 1}, False,
     "Outer.value: g is never called on the path through the definition at pkg/mod.py:27 (want exactly 1)"),
    ("Outer", {"min": 1}, False, "g is never called on any path through Outer"),  # class body runs no method
    (None, {"min": 1}, False, "g is never called on any path through pkg/mod.py"),
])
def test_scopes(scope: str | None, bounds: dict[str, int], ok: bool, fragment: str) -> None:
    expect(run("calls", "g", SCOPES, scope, **bounds), ok, fragment)


@pytest.mark.parametrize("check, target, scope, ok, fragment", [
    ("defines", "Outer.Inner.method", None, True, "Outer.Inner.method is defined at pkg/mod.py:16"),
    ("defines", "Outer.Inner.amethod", None, True, "defined at pkg/mod.py:19"),
    ("defines", "Inner.method", "Outer", True, "Outer.Inner.method is defined at pkg/mod.py:16"),
    ("defines", "typed_helper", None, True, "defined at pkg/mod.py:4"),
    ("defines", "accel", None, True, "defined at pkg/mod.py:10"),
    ("defines", "Outer.checked", None, True, "defined at pkg/mod.py:40"),
    ("defines", "outer.helper", None, True, "defined at pkg/mod.py:45"),
    ("defines", "Outer.Inner", None, True, "defined at pkg/mod.py:15"),
    ("defines", "Outer.value", None, True, "defined at pkg/mod.py:23"),
    ("defines", "Inner.methd", "Outer", False,
     "Outer: Inner.methd is not defined in Outer (defined there: Inner.method, Inner.amethod)"),
    ("defines", "Outer.Inner.method.nope", None, False, "is not defined in pkg/mod.py"),
    ("calls", "g", "Outer.Iner.method", False,
     "no scope Outer.Iner.method in pkg/mod.py (defined there: Outer.Inner, Outer.Inner.method, Outer.Inner.amethod, "
     "...)"),
])
def test_defines_and_scope_lookup(check: str, target: str, scope: str | None, ok: bool, fragment: str) -> None:
    expect(run(check, target, SCOPES, scope), ok, fragment)


ASSIGNED = """
import zlib as z
try:
    import brotli
    BROTLI_INSTALLED = True
except ImportError:
    BROTLI_INSTALLED = False


class Decoder:
    limit: int = 3

    def decode(self):
        local = 1


REGISTRY[KEY] = 1
obj.HANDLER = None
"""


@pytest.mark.parametrize("target, scope, fragment", [
    ("BROTLI_INSTALLED", None, "; BROTLI_INSTALLED is assigned at pkg/mod.py:4, and `defines` finds functions and "
                               "classes only: `mentions: BROTLI_INSTALLED` requires the name"),
    ("brotli", None, "; brotli is assigned at pkg/mod.py:3"),
    ("z", None, "; z is assigned at pkg/mod.py:1"),
    ("limit", "Decoder", "Decoder: limit is not defined in Decoder (defined there: decode); limit is assigned at "
                         "pkg/mod.py:10"),
])
def test_defines_of_a_name_assigned_says_what_finds_it(target: str, scope: str | None, fragment: str) -> None:
    """helper-107: a grep marker on a constant became `defines: BROTLI_INSTALLED`, which failed naming only
    the functions and classes defined there."""
    expect(run("defines", target, ASSIGNED, scope), False, fragment)
    for name in ("local", "KEY", "obj"):        # a function's own names; names only read where others are set
        verdict = run("defines", name, ASSIGNED, None)
        expect(verdict, False, f"{name} is not defined in pkg/mod.py")
        assert "assigned" not in verdict.message, verdict.message


# ---- order -----------------------------------------------------------------------------------------

ORDER = [
    ("straight", "a()\nb()", True, "a is called before b on every path through f"),
    ("reversed", "b()\na()", False, "f: b at pkg/mod.py:2 is reachable without a"),
    ("first only in one branch", "if c:\n    a()\nb()", False,
     "b at pkg/mod.py:4 is reachable without a (on the path that skips the `if c` at pkg/mod.py:2)"),
    ("first only in the if branch", "if c:\n    a()\nelse:\n    h()\nb()", False,
     "(on the path through the `else` branch at pkg/mod.py:4)"),
    ("first in both branches", "if c:\n    a()\nelse:\n    a()\nb()", True, "a is called before b"),
    ("second inside the branch", "if c:\n    a()\n    b()", True, "a is called before b"),
    ("argument before call", "b(a())", True, "a is called before b"),
    ("call before argument", "a(b())", False, "b at pkg/mod.py:2 is reachable without a"),
    ("callee expression first", "a().b()", True, "a is called before b"),
    ("first only in a loop", "for x in xs:\n    a()\nb()", False,
     "(on the path that skips the loop at pkg/mod.py:2)"),
    ("second inside the loop", "a()\nfor x in xs:\n    b()", True, "a is called before b"),
    ("same iteration", "for x in xs:\n    a()\n    b()", True, "a is called before b"),
    ("early return", "if c:\n    return\na()\nb()", True, "a is called before b"),
    ("return skips second", "a()\nif c:\n    return\nb()", True, "a is called before b"),
    ("try handler", "try:\n    a()\nexcept E:\n    b()", True, "a is called before b"),
    ("and operand", "ok = c and a()\nb()", False, "short-circuits the `and` at pkg/mod.py:2 after `c`"),
    ("guard in comprehension", "ys = [b(x) for x in xs if a(x)]", True, "a is called before b"),
    ("with item", "with a():\n    b()", True, "a is called before b"),
    ("never called", "b()", False, "f: a is never called on any path through f"),
    ("only in a nested def", "def k():\n    a()\nb()", False, "a is never called on any path through f"),
    ("second never called", "a()", False, "b is never called on any path through f"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in ORDER], ids=[case[0] for case in ORDER])
def test_order_is_dominance(body: str, ok: bool, fragment: str) -> None:
    source = "def f(c, xs):\n" + textwrap.indent(body, "    ") + "\n"
    expect(run("order", ("a", "b"), source, "f"), ok, fragment)


def test_order_of_three_names_needs_every_earlier_one() -> None:
    source = "def f(c):\n    a()\n    if c:\n        b()\n    z()\n"
    expect(run("order", ("a", "b", "z"), source, "f"), False,
           "z at pkg/mod.py:5 is reachable without b (on the path that skips the `if c` at pkg/mod.py:3)")
    source = "def f():\n    a()\n    b()\n    z()\n"
    expect(run("order", ("a", "b", "z"), source, "f"), True, "a, b and z are called in this order on every path")


# ---- guarded_by ------------------------------------------------------------------------------------

GUARDS = [
    ("and in the test", "if flag and x:\n    g()", True,
     "g is guarded by flag in f: its call sits in the true branch of an `if` that tests it"),
    ("else branch", "if flag:\n    h()\nelse:\n    g()", False,
     "f: g at pkg/mod.py:5 is not guarded by flag: it is in the `else` part of the `if flag` at pkg/mod.py:2"),
    ("outside any if", "g()", False, "g at pkg/mod.py:2 is not guarded by flag: no enclosing `if` tests flag"),
    ("if on something else", "if x:\n    g()", False, "no enclosing `if` tests flag"),
    ("nested ifs", "if flag:\n    for i in x:\n        if i:\n            g()", True, "its call sits"),
    ("inner if tests it", "if x:\n    if self.flag > 0:\n        g()", True, "its call sits"),
    ("elif tests it", "if x:\n    h()\nelif flag:\n    g()", True, "its call sits"),
    ("elif of a guard", "if flag:\n    h()\nelif x:\n    g()", False, "in the `else` part of the `if flag`"),
    ("ternary true arm", "y = g() if flag else None", True, "its call sits"),
    ("ternary false arm", "y = None if flag else g()", False, "in the false arm of `None if flag else g()`"),
    ("call in the test", "if flag and g():\n    pass", False, "no enclosing `if` tests flag"),
    ("nested def under the guard", "if flag:\n    def k():\n        g()\n    k()", False,
     "never called on any path"),
    ("nested def outside the guard", "if flag:\n    g()\ndef k():\n    g()", False,
     "g at pkg/mod.py:5 is not guarded by flag"),
    ("two guarded calls", "if flag:\n    g()\nif flag:\n    g()", True, "all 2 of its calls sit"),
    ("never called", "h()", False, "g is never called on any path through f"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in GUARDS], ids=[case[0] for case in GUARDS])
def test_guarded_by(body: str, ok: bool, fragment: str) -> None:
    source = "def f(self, flag, x):\n" + textwrap.indent(body, "    ") + "\n"
    expect(run("calls", "g", source, "f", guarded_by="flag"), ok, fragment)


def test_guarded_by_with_a_count() -> None:
    source = "def f(flag):\n    if flag:\n        g()\n        g()\n"
    expect(run("calls", "g", source, "f", guarded_by="flag", max=1), False, "g is called 2 times")
    expect(run("calls", "g", source, "f", guarded_by="flag", max=2), True, "; g is guarded by flag in f")


# ---- not_calls -------------------------------------------------------------------------------------

NOT_CALLS = [
    ("absent", "h()", True, "g is not called anywhere in f"),
    ("direct", "h()\ng()", False, "f: g is called at pkg/mod.py:3 (want no calls)"),
    ("nested def", "def k():\n    g()", False, "f: g is called at pkg/mod.py:3 (want no calls)"),
    ("lambda", "k = lambda: g()", False, "g is called at pkg/mod.py:2"),
    ("nested class", "class K:\n    def m(self):\n        g()", False, "g is called at pkg/mod.py:4"),
    ("unreachable still counts", "return\ng()", False, "g is called at pkg/mod.py:3"),
    ("several", "g()\ng()\ng()", False, "g is called at pkg/mod.py:2 and 2 more places (want no calls)"),
    ("string and comment", "h('g()')  # g()", True, "g is not called anywhere in f"),
    ("reference is not a call", "k = g", True, "g is not called anywhere in f"),
]


@pytest.mark.parametrize("body, ok, fragment", [case[1:] for case in NOT_CALLS],
                         ids=[case[0] for case in NOT_CALLS])
def test_not_calls_is_lexical(body: str, ok: bool, fragment: str) -> None:
    source = "def f():\n" + textwrap.indent(body, "    ") + "\n"
    expect(run("not_calls", "g", source, "f"), ok, fragment)


def test_not_calls_without_scope_sees_the_whole_module() -> None:
    source = "import x\n\nclass A:\n    def m(self):\n        x.g()\n"
    expect(run("not_calls", "x.g", source), False, "x.g is called at pkg/mod.py:5 (want no calls)")


# ---- mentions --------------------------------------------------------------------------------------

MENTIONS = [
    ("name", "scale_specs", "y = scale_specs", True, "scale_specs is mentioned in f at pkg/mod.py:2"),
    ("attribute", "scale_specs", "y = self.scale_specs", True, "mentioned in f at pkg/mod.py:2"),
    ("keyword", "scale_specs", "h(scale_specs=1)", True, "mentioned in f at pkg/mod.py:2"),
    ("argument", "tags", "pass", True, "tags is mentioned in f at pkg/mod.py:1"),
    ("lambda argument", "item", "k = lambda item: 0", True, "mentioned in f at pkg/mod.py:2"),
    ("string", "scale_specs", "h('scale_specs')", False,
     "scale_specs is never mentioned in f at pkg/mod.py:1 as a name, attribute, argument or keyword (`scale_specs` appears at "
     "pkg/mod.py:2, but only in a comment, a string, an import or a definition's name)"),
    ("comment", "scale_specs", "pass  # scale_specs", False, "appears at pkg/mod.py:2"),
    ("definition name", "scale_specs", "def scale_specs():\n    pass", False, "never mentioned"),
    ("dotted attribute chain", "group.cpu_group", "y = get_world_group().group.cpu_group", True, "at pkg/mod.py:2"),
    ("dotted through a call", "get_world_group.cpu_group", "y = get_world_group().cpu_group", True, "pkg/mod.py:2"),
    ("dotted whole components", "group.cpu_group", "y = xgroup.cpu_group", False, "never mentioned"),
    ("dotted needs attributes", "a.b", "y = b", False, "never mentioned"),
]


@pytest.mark.parametrize("target, body, ok, fragment", [case[1:] for case in MENTIONS],
                         ids=[case[0] for case in MENTIONS])
def test_mentions(target: str, body: str, ok: bool, fragment: str) -> None:
    source = "def f(self, tags):\n" + textwrap.indent(body, "    ") + "\n"
    expect(run("mentions", target, source, "f"), ok, fragment)


def test_annotations_are_not_evaluated() -> None:
    source = "def f():\n    def k(x: Annotated[int, g()]) -> h():\n        pass\n    y: g() = 1\n"
    expect(run("calls", "g", source, "f"), False, "(the call at pkg/mod.py:2 is not run by the scope: it is in a nested "
                                                  "def, lambda, class or annotation)")
    expect(run("not_calls", "h", source, "f"), False, "h is called at pkg/mod.py:2")


@pytest.mark.parametrize("expression, arm", [("0 if c else g()", "true"), ("g() if c else 0", "false")])
def test_a_path_through_a_conditional_expression_names_its_arm(expression: str, arm: str) -> None:
    outcome = run("calls", "g", f"def f(c):\n    x = {expression}\n    return x\n", "f", times=1)
    expect(outcome, False, f"f: g is never called on the path through the {arm} arm of `{expression}` at "
                           "pkg/mod.py:2 (want exactly 1)")


def test_unicode_identifiers_are_judged() -> None:
    # helper-115: names beyond ASCII could not be written
    source = "class Café:\n    def résumé(self):\n        self.backend.réveil()\n"
    expect(run("calls", "backend.réveil", source, "Café.résumé"), True, "backend.réveil is called")
    expect(run("defines", "Café.résumé", source), True, "Café.résumé is defined at pkg/mod.py:2")
    expect(run("mentions", "réveil", source, "Café"), True, "réveil is mentioned")


def test_a_name_is_compared_as_python_normalises_it() -> None:
    # Python reads identifiers in NFKC: `re\u0301veil` (an editor's decomposed é) is the name `réveil`
    source = "class Café:\n    def résumé(self):\n        self.backend.réveil()\n"
    decomposed = "backend.re\u0301veil"
    expect(run("calls", decomposed, source, "Cafe\u0301.re\u0301sume\u0301"), True, "is called")
    expect(run("defines", "Cafe\u0301.re\u0301sume\u0301", source), True, "is defined at pkg/mod.py:2")
    expect(run("mentions", "re\u0301veil", source, "Café"), True, "is mentioned")


def test_an_order_naming_a_call_twice_is_malformed() -> None:
    expect(run("order", ("a", "b", "a"), "def f():\n    a()\n    b()\n    a()\n", "f"), False,
           "`order` lists a twice: a call cannot come after itself")
