"""Call checks users need: `*.method` receivers, `args:` filters, `through: local`, `after:`, `in_try:`."""

from __future__ import annotations

import pytest

from carrytool.asserts import AssertSpec
from carrytool.asserts.engine import spec_problem
from tests.asserts.test_asserts_engine import expect, run

# ---- `*.name`: a method called on any receiver expression ---------------------------------------------


@pytest.mark.parametrize("call, target, ok", [
    ("self._get_sleep_mode_backend().suspend(tags)", "*.suspend", True),
    ("backend.suspend(tags)", "*.suspend", True),
    ("self.backends[0].suspend(tags)", "*.suspend", True),
    ("(a or b).suspend(tags)", "*.suspend", True),
    ("suspend(tags)", "*.suspend", False),                      # no receiver
    ("self.backend.xsuspend(tags)", "*.suspend", False),
    ("self.workers[0].backend.resume()", "*.backend.resume", True),
    ("backend.resume()", "*.backend.resume", False),            # nothing before `backend`
    ("self.get_backend().resume()", "*.get_backend().resume", True),
    ("self.get_backend.resume()", "*.get_backend().resume", False),
    ("self._get_sleep_mode_backend().suspend(tags)", "backend.suspend", False),  # plain targets: unchanged
])
def test_a_star_receiver_matches_a_method_on_any_expression(call: str, target: str, ok: bool) -> None:
    expect(run("calls", target, f"def f(self, tags):\n    {call}\n", "f"), ok, target)


def test_a_star_target_is_refused_where_a_name_is_wanted() -> None:
    spec = AssertSpec(name="t", file="m.py", check="mentions", target="*.suspend")
    assert "needs a dotted name" in (spec_problem(spec) or "")


# ---- `args:`: which argument a call gets -------------------------------------------------------------

HANDSHAKE = """
def wake(flag):
    dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=get_world_group().cpu_group)
"""


@pytest.mark.parametrize("args, ok", [
    ((("op", "ReduceOp.MIN"), ("group", "cpu_group")), True),
    ((("op", "ReduceOp.MIN"),), True),
    ((("group", "device_group"),), False),
    ((("op", "ReduceOp.SUM"),), False),
    ((("async_op", "True"),), False),                           # absent keyword
    (((0, "flag"),), True),                                     # by position
    (((1, "ReduceOp.MIN"),), False),                            # passed by keyword, not position
])
def test_args_filter_the_calls_that_count(args: tuple, ok: bool) -> None:
    expect(run("calls", "all_reduce", HANDSHAKE, "wake", args=args), ok, "all_reduce(")


def test_args_constants_and_not_calls() -> None:
    source = "def f():\n    g(x, flag=True)\n"
    expect(run("calls", "g", source, "f", args=(("flag", "True"),)), True, "g(flag=True)")
    expect(run("calls", "g", source, "f", args=(("flag", "False"),)), False, "never called")
    expect(run("not_calls", "g", source, "f", args=(("flag", "False"),)), True, "not called")
    expect(run("not_calls", "g", source, "f", args=(("flag", "True"),)), False, "g(flag=True) is called at")


@pytest.mark.parametrize("fields, fragment", [
    ({"args": (("op", "not a name"),)}, "`args` values are dotted names"),
    ({"args": (("-x", "a"),)}, "`args` keys are keyword names or positions"),
    ({"through": "remote"}, "`through` can only be `local`"),
    ({"after": ("a b",)}, "`after` needs a list of call targets"),
])
def test_malformed_new_keys_fail_with_a_message(fields: dict, fragment: str) -> None:
    expect(run("calls", "g", "def f():\n    g()\n", "f", **fields), False, fragment)


@pytest.mark.parametrize("check, target, key, value", [
    ("mentions", "g", "through", "local"),
    ("order", ("a", "b"), "args", (("x", "y"),)),
    ("not_calls", "g", "after", ("a",)),
    ("order", ("a", "b"), "in_try", True),
])
def test_new_keys_only_go_with_their_checks(check: str, target: object, key: str, value: object) -> None:
    expect(run(check, target, "def f():\n    a()\n    b()\n", "f", **{key: value}), False, f"`{key}` only applies")


# ---- `through: local`: follow calls into same-file functions -------------------------------------------

RUNNER = """
import dist


def _sync(mode):
    return dist.all_reduce(mode)


class Runner:
    def execute_model(self, mode):
        mode = self._agree(mode)
        return self.model(mode)

    def _agree(self, mode):
        return self._really_agree(mode)

    def _really_agree(self, mode):
        return _sync(mode)

    def other(self):
        self.helper.all_reduce(1)
"""


@pytest.mark.parametrize("scope, through, ok, fragment", [
    ("Runner.execute_model", None, True, "is not called anywhere in Runner.execute_model"),
    ("Runner.execute_model", "local", False, "all_reduce is called at pkg/mod.py:5, reached from Runner.execute_model "
                                             "through Runner._agree at pkg/mod.py:10 -> Runner._really_agree at pkg/mod.py:14"
                                             " -> _sync at pkg/mod.py:17"),
    ("Runner.other", "local", False, "all_reduce is called at pkg/mod.py:20"),  # the scope's own call
])
def test_not_calls_through_local_follows_helpers(scope: str, through: str | None, ok: bool, fragment: str) -> None:
    expect(run("not_calls", "all_reduce", RUNNER, scope, through=through), ok, fragment)


DEPTH = """
def a():
    b()

def b():
    c()

def c():
    d()

def d():
    target()
"""


def test_through_local_is_bounded_and_static() -> None:
    # a -> b -> c -> d: three followed levels reach d's body? a is the scope, b, c, d are followed (depth 3).
    expect(run("not_calls", "target", DEPTH, "a", through="local"), False, "target is called")
    deeper = DEPTH.replace("    target()", "    e()") + "\ndef e():\n    target()\n"
    expect(run("not_calls", "target", deeper, "a", through="local"), True, "nor in the same-file functions")
    dynamic = "class C:\n    def f(self):\n        self.other.g()\n\n    def g(self):\n        target()\n"
    expect(run("not_calls", "target", dynamic, "C.f", through="local"), True, "not called")
    recursive = "def f():\n    f()\n    g()\n\ndef g():\n    f()\n"
    expect(run("calls", "f", recursive, "f", through="local", min=1), True, "f is called")


WORKER = """
class Worker:
    def wake_up(self, tags):
        backend = self._get_backend()
        if self._needs_sync():
            ok = 1
            try:
                backend.resume(tags)
            except Exception:
                ok = 0
            self._handshake(ok)
        else:
            backend.resume(tags)

    def _handshake(self, ok):
        flag = torch.tensor([ok])
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=get_world_group().cpu_group)
"""


@pytest.mark.parametrize("check, target, fields, ok, fragment", [
    ("order", ("*.resume", "all_reduce"), {}, False, "all_reduce is never called"),
    ("order", ("*.resume", "all_reduce"), {"through": "local"}, True, "*.resume is called before all_reduce"),
    ("calls", "all_reduce", {"through": "local", "args": (("group", "cpu_group"),)}, True, "at least one path"),
    ("calls", "all_reduce", {"through": "local", "max": 1}, True, "called 0 to 1 times"),
    ("calls", "all_reduce", {"through": "local", "min": 1}, False, "never called on the path through the `else`"),
])
def test_paths_through_local_walk_the_callee_in_place(check: str, target: object, fields: dict, ok: bool,
                                                      fragment: str) -> None:
    expect(run(check, target, WORKER, "Worker.wake_up", **fields), ok, fragment)


def test_a_generator_is_not_walked_at_its_call() -> None:
    source = ("class R:\n    def wake(self):\n        for t in self._tensors():\n            t.zero_()\n\n"
              "    def _tensors(self):\n        sync()\n        yield from self.caches\n")
    expect(run("calls", "sync", source, "R.wake", through="local"), False, "never called")
    expect(run("not_calls", "sync", source, "R.wake", through="local"), False, "reached from R.wake")


def test_order_through_local_sees_a_moved_handshake() -> None:
    moved = WORKER.replace("            ok = 1\n", "            ok = 1\n            self._handshake(ok)\n")
    expect(run("order", ("*.resume", "all_reduce"), moved, "Worker.wake_up", through="local"), False,
           "all_reduce at pkg/mod.py:")


# ---- `after:` and `in_try:` --------------------------------------------------------------------------

WAKE = """
def wake_up(self, tags):
    for data in self.items:
        create_and_map(data)
        if data.backup is not None:
            data.copy_(data.backup)
    torch.cuda.synchronize()
"""


@pytest.mark.parametrize("source, ok, fragment", [
    (WAKE, True, "no call of create_and_map, copy_ can run after torch.cuda.synchronize"),
    (WAKE.replace("    torch.cuda.synchronize()\n", "").replace("    for data", "    torch.cuda.synchronize()\n"
                                                                   "    for data"),
     False, "create_and_map at pkg/mod.py:4 can run after torch.cuda.synchronize at pkg/mod.py:2"),
    (WAKE.replace("    torch.cuda.synchronize()\n", "").replace("        create_and_map(data)\n",
                                                               "        torch.cuda.synchronize()\n"
                                                               "        create_and_map(data)\n"),
     False, "can run after torch.cuda.synchronize"),
    (WAKE.replace("    torch.cuda.synchronize()\n", "").replace("            data.copy_(data.backup)\n",
                                                               "            data.copy_(data.backup)\n"
                                                               "        torch.cuda.synchronize()\n"),
     False, "create_and_map at pkg/mod.py:3 can run after"),   # in the loop: the next iteration re-maps
])
def test_after_means_nothing_of_the_work_follows(source: str, ok: bool, fragment: str) -> None:
    expect(run("calls", "torch.cuda.synchronize", source, "wake_up", after=("create_and_map", "copy_")),
           ok, fragment)


def test_in_try_wants_a_call_inside_a_handled_try() -> None:
    expect(run("calls", "*.resume", WORKER, "Worker.wake_up", in_try=True), True, "inside a `try`")
    bare = WORKER.replace("            try:\n                backend.resume(tags)\n            except Exception:\n"
                          "                ok = 0\n", "            backend.resume(tags)\n")
    expect(run("calls", "*.resume", bare, "Worker.wake_up", in_try=True), False, "no call of *.resume sits")
    only_finally = "def f():\n    try:\n        g()\n    finally:\n        h()\n"
    expect(run("calls", "g", only_finally, "f", in_try=True), False, "with an `except` handler")



def test_in_try_false_wants_no_call_inside_a_handled_try() -> None:
    # helper-115: `in_try: false` was accepted and judged nothing, so a wrapped call still held
    expect(run("calls", "*.resume", WORKER, "Worker.wake_up", in_try=False), False,
           "Worker.wake_up: *.resume at pkg/mod.py:7")
    expect(run("calls", "*.resume", WORKER, "Worker.wake_up", in_try=False), False,
           "sits in the body of a `try` with an `except` handler (want none)")
    bare = WORKER.replace("            try:\n                backend.resume(tags)\n            except Exception:\n"
                          "                ok = 0\n", "            backend.resume(tags)\n")
    expect(run("calls", "*.resume", bare, "Worker.wake_up", in_try=False), True,
           "no call of *.resume sits in the body of a `try` with an `except` handler")
    only_finally = "def f():\n    try:\n        g()\n    finally:\n        h()\n"
    expect(run("calls", "g", only_finally, "f", in_try=False), True, "no call of g sits")

# ---- `reads:` a value used, not a name declared ----------------------------------------------------------

@pytest.mark.parametrize("body, ok, fragment", [
    ("    mode = synced\n", True, "synced is read in f at pkg/mod.py:2"),
    ("    if synced is not None:\n        pass\n", True, "is read"),
    ("    g(mode=synced)\n", True, "is read"),
    ("    pass\n", False, "synced is never read in f at pkg/mod.py:1 (it is only bound or declared, e.g. at pkg/mod.py:1)"),
    ("    synced = 1\n", False, "never read"),
    ("    g(synced=1)\n", False, "never read"),
])
def test_reads_wants_a_load_not_a_parameter(body: str, ok: bool, fragment: str) -> None:
    expect(run("reads", "synced", f"def f(x, synced=None):\n{body}", "f"), ok, fragment)


def test_after_a_target_called_in_a_loop_the_work_that_follows_the_loop_runs_after_it() -> None:
    """The target may have run in any iteration: work after the loop runs after it (a violation), and
    the loop without the trailing work is fine."""
    source = ("def wake_up(xs):\n    create_and_map(xs)\n    for x in xs:\n        torch.cuda.synchronize()\n"
              "    copy_(xs)\n")
    expect(run("calls", "torch.cuda.synchronize", source, "wake_up", after=("create_and_map", "copy_"), min=0),
           False, "copy_ at pkg/mod.py:5 can run after torch.cuda.synchronize at pkg/mod.py:4")
    moved = source.replace("    copy_(xs)\n", "").replace("    create_and_map(xs)\n", "    create_and_map(xs)\n    copy_(xs)\n")
    expect(run("calls", "torch.cuda.synchronize", moved, "wake_up", after=("create_and_map", "copy_"), min=0),
           True, "no call of create_and_map, copy_ can run after torch.cuda.synchronize")


def test_args_take_the_constants_as_values_too() -> None:
    # helper-115: a YAML true/false/null reaches the engine as a bool or None when the spec is built in code
    source = "def f():\n    plot(polar=True, group=None)\n"
    expect(run("calls", "plot", source, "f", args=(("polar", True), ("group", None))), True, "is called")
    expect(run("calls", "plot", source, "f", args=(("polar", False),)), False, "never called")
