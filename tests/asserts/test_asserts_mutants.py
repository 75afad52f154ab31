"""Mutants of the guarded code, derived and judged in memory: each operator, dedup, and the verdicts."""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import AssertSpec
from carrytool.asserts.mutants import derive_mutants, judge_mutants

SOURCE = textwrap.dedent('''\
    class Worker:
        def wake_up(self, tags):
            """Wake."""
            backend = self.backend
            snapshot = backend.suspended_tags()
            if self.multi_rank:
                ok = 1
                try:
                    backend.resume(tags)
                except Exception:
                    ok = 0
                self.handshake(ok)
            else:
                backend.resume(tags)
            if "kv" in snapshot:
                self.zero_kv()

        def handshake(self, ok):
            dist.all_reduce(ok, op=ReduceOp.MIN, group=world.cpu_group)
    ''')
FILE = "w.py"


def spec(name: str, check: str, target: object, **fields: object) -> AssertSpec:
    return AssertSpec(name=name, file=FILE, check=check, target=target, scope=fields.pop("scope", "Worker.wake_up"),
                      **fields)  # type: ignore[arg-type]


def read(path: str) -> bytes | None:
    return SOURCE.encode() if path == FILE else None


def kinds(specs: list[AssertSpec]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for mutant in derive_mutants(specs, read):
        out.setdefault(mutant.mutation, []).append(mutant.description)
    return out


def test_each_operator_on_a_guarded_call() -> None:
    found = kinds([spec("r", "calls", "*.resume", times=1)])
    assert found["drop-call"] == ["deleted `backend.resume(tags)`", "deleted `backend.resume(tags)`"]
    assert found["duplicate"] == ["`backend.resume(tags)` runs twice", "`backend.resume(tags)` runs twice"]
    assert found["untry"] == ["`backend.resume(tags)` moved out of the `try` at line 8"]
    assert found["unguard"] == ["the `if self.multi_rank` around `backend.resume(tags)` removed"]
    assert "swap" not in found  # alone in its block: no neighbour to trade places with


def test_drop_arg_swap_and_through_local() -> None:
    found = kinds([spec("h", "calls", "all_reduce", through="local")])
    assert [d.split(" dropped")[0] for d in found["drop-arg"]] == ["`op=`", "`group=`"]
    assert all(d.split(" from ")[1].startswith("`dist.all_reduce(ok, op=ReduceOp.MIN") for d in found["drop-arg"])
    mutants = derive_mutants([spec("h", "calls", "all_reduce", through="local")], read)
    assert {m.scope for m in mutants} == {"Worker.handshake"}
    order = kinds([spec("o", "order", ("suspended_tags", "handshake"))])
    assert "`self.handshake(ok)` moved before `try: ...`" in order["swap"]
    # a statement whose neighbour binds what it reads is not swapped: that is a NameError, not a reordering
    assert not any("snapshot" in d and "backend = self.backend" in d for d in order["swap"])


def test_not_calls_adds_the_call_after_the_docstring() -> None:
    [mutant] = derive_mutants([spec("n", "not_calls", "allocator.wake_up")], read)
    assert mutant.mutation == "add-call" and mutant.line == 4
    assert mutant.source.decode().split("\n")[3] == "        allocator.wake_up()"


def test_mutants_are_deduplicated_parsed_and_never_the_original() -> None:
    one = derive_mutants([spec("a", "calls", "*.resume"), spec("b", "calls", "resume")], read)
    assert all(m.origin == ("a", "b") for m in one)
    assert len({m.source for m in one}) == len(one)
    for mutant in one:
        compile(mutant.source, FILE, "exec")
        assert mutant.source != SOURCE.encode()


def test_deleting_a_statement_that_calls_nothing_guarded_is_no_drop_call() -> None:
    """h179: `verify --mutants` called the deletion of an assignment (`mentions` guards the statements using a
    name) `drop-call`: it is `drop-statement`; a guarded call's statement deleted stays `drop-call`."""
    found = kinds([spec("snap", "mentions", "snapshot")])
    assert found["drop-statement"] == ["deleted `snapshot = backend.suspended_tags()`",
                                       "deleted `if 'kv' in snapshot: ...`"], found
    assert "drop-call" not in found, found
    assert kinds([spec("r", "calls", "*.suspended_tags")])["drop-call"] == \
        ["deleted `snapshot = backend.suspended_tags()`"]


def test_text_checks_and_unknown_scopes_derive_nothing() -> None:
    assert derive_mutants([spec("t", "contains", "resume"), spec("s", "calls", "g", scope="Nope.f")], read) == []


def test_judging_kills_survivors_and_scores() -> None:
    specs = [spec("resume-once", "calls", "*.resume", times=1),
             spec("in-try", "calls", "*.resume", in_try=True),
             spec("mention", "mentions", "resume")]
    judged = judge_mutants(specs, read)
    data = judged.to_json()
    assert data["mutants"] == 6 and data["killed"] == 5 and data["score"] == pytest.approx(5 / 6, abs=1e-4)
    rows = {row["name"]: row for row in data["asserts"]}
    assert rows["resume-once"]["killed"] == 4      # both drops, both duplicates
    assert rows["in-try"]["killed"] == 2           # the untry, and the drop of the call in the try
    assert rows["mention"]["killed"] == 0          # a bare mention "passes on both"
    assert rows["mention"]["mutants"] == 6 and rows["mention"]["score"] == pytest.approx(5 / 6, abs=1e-4)
    # the unguarded body always runs the try and the handshake: one resume on every path, still in a try
    assert [(s["mutation"], s["line"]) for s in data["survivors"]] == [("unguard", 6)]


def test_an_assert_failing_on_the_original_kills_nothing() -> None:
    judged = judge_mutants([spec("never", "calls", "nothing_called"), spec("r", "calls", "*.resume", times=1)], read)
    assert not judged.baseline[0].ok
    assert all("never" not in names for names in judged.killers)


def test_no_swap_across_a_docstring_or_pass() -> None:
    """helper-87: `x` "moved before" the docstring survived every assert (it changes nothing) and lowered the
    score. No statement is swapped with a docstring, another bare constant or `pass`."""
    source = b'def f(self):\n    """Doc."""\n    x = self.g()\n    pass\n    return x\n'
    specs = [AssertSpec(name="g", file="m.py", check="calls", target="g", scope="f")]  # type: ignore[arg-type]
    found = [m.description for m in derive_mutants(specs, lambda path: source if path == "m.py" else None)]
    assert any("deleted `x = self.g()`" in d for d in found), found
    assert not any("moved" in d for d in found), found
