"""A definition one entry adds that another entry, or upstream, defines again in the same scope: both hunks
land, the merges are clean, and one change is dead code (helper-105: two sqlglot PRs each added `class
OpenRowset` to one module, at different places, and sync said nothing)."""

from __future__ import annotations

import gc

from carrytool.pipeline.pyadds import adds_definition
from carrytool.pipeline.shadowed import no_collection, parse_module
from tests.conftest import Cli, Small
from tests.pipeline.test_sync import sync

MODULE = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(12)) + \
    "class Model:\n" + "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(8))


def _between(text: str, anchor: str, block: str) -> str:
    """TEXT with BLOCK inserted right before the line ANCHOR."""
    at = text.index(anchor)
    return text[:at] + block + text[at:]


def _base(small: Small) -> None:
    small.base = small.up.commit({"m.py": MODULE}, "a module", parent="main", ref="refs/heads/main")


def _shadowed(report: dict) -> list[dict]:
    return [w for w in report["warnings"] if w["kind"] == "shadowed-definition"]


def _two_prs(small: Small, one: str, two: str) -> None:
    """pr/1 adds ONE before f2, pr/2 adds TWO before f9, both to MODULE; the manifest carries both."""
    _base(small)
    small.pr(1, {"m.py": _between(MODULE, "def f2():", one)})
    small.pr(2, {"m.py": _between(MODULE, "def f9():", two)})
    small.manifest([{"pr": 1}, {"pr": 2}])


def test_two_prs_defining_one_class_at_different_places(cli: Cli, small: Small) -> None:
    _two_prs(small, "class OpenRowset:\n    kind = 1\n\n\n", "class OpenRowset:\n    kind = 2\n\n\n")
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied", "applied"], report
    [warning] = _shadowed(report)
    composed = small.work.git("show", "dev:m.py").splitlines()
    assert [composed[n - 1] for n in warning["lines"]] == ["class OpenRowset:", "class OpenRowset:"]
    assert {k: warning[k] for k in ("entry", "file", "name", "by")} == \
        {"entry": "pr/1", "file": "m.py", "name": "OpenRowset", "by": ["pr/1", "pr/2"]}
    first, second = warning["lines"]
    assert warning["message"] == (f"m.py defines OpenRowset 2 times in one scope (line {first} by pr/1, line {second} "
                                  "by pr/2): when the module runs, the last, pr/2's, replaces pr/1's, whose code is dead")


def test_a_method_upstream_added_since_and_a_pr_adds_too(cli: Cli, small: Small) -> None:
    """The PR's base has no `Model.reset`; upstream added one since, elsewhere in the class."""
    _base(small)
    small.pr(1, {"m.py": _between(MODULE, "    def m6(self):", "    def reset(self):\n        return 'pr'\n\n")})
    small.up.commit({"m.py": _between(MODULE, "    def m1(self):", "    def reset(self):\n        return 'up'\n\n")},
                    "upstream adds reset", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    [warning] = _shadowed(report)
    assert (warning["entry"], warning["name"], warning["by"]) == ("pr/1", "Model.reset", ["upstream", "pr/1"])
    assert "the last, pr/1's, replaces upstream's, whose code is dead" in warning["message"]
    for quiet in ([], ["-q"]):          # a change that is not in the image: said under -q too
        text = cli("sync", *quiet, "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
        assert "m.py defines Model.reset 2 times in one scope" in " ".join(text.output.split()), text.output


def test_what_is_defined_twice_by_design_or_by_one_side_alone_is_not_said(cli: Cli, small: Small) -> None:
    overloads = "@overload\ndef g(x: int) -> int: ...\n\n\n@overload\ndef g(x: str) -> str: ...\n\n\n"
    accessor = "    @property\n    def size(self):\n        return 1\n\n    @size.setter\n    def size(self, v):\n" \
               "        pass\n\n"
    branches = "if X:\n    def h():\n        return 1\nelse:\n    def h():\n        return 2\n\n\n"
    _base(small)
    upstream_twice = _between(MODULE, "def f5():", "def f1():\n    return 'again'\n\n\n")  # upstream's own
    small.base = small.up.commit({"m.py": upstream_twice}, "upstream's own twice", parent="main",
                                 ref="refs/heads/main")
    one = _between(upstream_twice, "def f3():", overloads + branches + "def _():\n    pass\n\n\n")
    small.pr(1, {"m.py": _between(one, "    def m2(self):", accessor)})
    small.pr(2, {"m.py": _between(upstream_twice, "def f10():", "def g(x):\n    return x\n\n\n"
                                  "def _():\n    pass\n\n\n" + branches)})
    small.pr(3, {"m.py": _between(upstream_twice, "def f7():", "def twice():\n    return 1\n\n\n"
                                  "def twice():\n    return 2\n\n\n")})                       # one PR's own
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied"] * 3, report
    assert _shadowed(report) == [], _shadowed(report)


def test_a_nested_class_and_a_file_that_does_not_parse(cli: Cli, small: Small) -> None:
    nested = "class Outer:\n    class Inner:\n        def run(self):\n            return 0\n\n" \
             "        def stop(self):\n            return 0\n"
    small.base = small.up.commit({"n.py": nested, "bad.py": "def broken(:\n    pass\n"}, "nested", parent="main",
                                 ref="refs/heads/main")
    small.pr(1, {"n.py": nested.replace("        def stop", "        def go(self):\n            return 1\n\n"
                                        "        def stop"),
                 "bad.py": "def broken(:\n    pass\n\n\ndef f():\n    pass\n\n\ndef f():\n    pass\n"})
    small.pr(2, {"n.py": nested + "\n        def go(self):\n            return 2\n",
                 "bad.py": "def f():\n    pass\n\n\ndef broken(:\n    pass\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0, report
    assert [(w["file"], w["name"], w["by"]) for w in _shadowed(report)] == \
        [("n.py", "Outer.Inner.go", ["pr/1", "pr/2"])]


def test_explain_and_verify_rebuild_say_it_too(cli: Cli, small: Small) -> None:
    _two_prs(small, "def twin():\n    return 1\n\n\n", "def twin():\n    return 2\n\n\n")
    code, report = sync(cli, small)
    assert code == 0 and [w["name"] for w in _shadowed(report)] == ["twin"]
    code, explained = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert [w["name"] for w in _shadowed(explained)] == ["twin"]
    code, verified = cli.json("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path,
                              "--offline")
    assert code == 0 and [w["name"] for w in _shadowed(verified)] == ["twin"]


def test_adds_definition() -> None:
    assert adds_definition((b"x = 1", b"    async def run(self):"))
    assert adds_definition((b"class A(B):",))
    assert not adds_definition((b"# def later", b"x = 'class Foo:'", b"defined = 1"))
    assert not adds_definition((b"def f(x=0):",), (b"def f():",))         # a new signature: no new definition
    assert adds_definition((b"def f(x=0):", b"def g():"), (b"def f():",))


def test_a_def_line_rewritten_is_not_a_new_definition(cli: Cli, small: Small) -> None:
    """helper-106: upstream defines f1 twice already; a PR only changing the second's signature was named as
    adding a definition upstream has."""
    twice = _between(MODULE, "def f5():", "def f1():\n    return 'again'\n\n\n")
    small.base = small.up.commit({"m.py": twice}, "upstream's own twice", parent="main", ref="refs/heads/main")
    rewritten = twice.replace("def f1():\n    return 'again'", "def f1(x=0):\n    return 'again'")
    small.pr(1, {"m.py": _between(rewritten, "def f9():", "def brand_new():\n    return 1\n\n\n")})  # (read)
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0 and _shadowed(report) == [], report


def test_definitions_several_by_design_and_the_one_that_is_not(cli: Cli, small: Small) -> None:
    """helper-106: registering decorators keep every definition (behave's steps, dispatch, a hybrid's
    expression), `overload` imported under another name; but a plain def replacing a property is said."""
    module = "from typing import overload as ov\n\n\n@given('a')\ndef step_impl(ctx):\n    pass\n\n\n" \
             "@ov\ndef g(x: int) -> int: ...\n\n\ndef g(x):\n    return x\n\n\n" \
             "class U:\n    @property\n    def size(self):\n        return 1\n\n    @size.setter\n" \
             "    def size(self, v):\n        pass\n\n    @hybrid_property\n    def name(self):\n        return 1\n\n" \
             "    def other(self):\n        return 2\n"
    small.base = small.up.commit({"m.py": module}, "by design", parent="main", ref="refs/heads/main")
    added = module.replace("@ov\n", "@when('b')\ndef step_impl(ctx):\n    pass\n\n\n@ov\ndef g(x: str) -> str: ...\n"
                                    "\n\n@ov\n")
    added = added.replace("    def other(self):", "    @name.expression\n    def name(cls):\n        return 2\n\n"
                                                   "    def size(self):\n        return 3\n\n    def other(self):")
    small.pr(1, {"m.py": added})
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    assert [(w["name"], w["by"]) for w in _shadowed(report)] == [("U.size", ["upstream", "pr/1"])], _shadowed(report)


def test_a_file_moved_by_upstream_or_by_a_later_entry(cli: Cli, small: Small) -> None:
    """helper-106: the twins landed in a file upstream moved since the PRs' base, or a later entry moved:
    nothing was said (the lines were kept under the PR's own path)."""
    _base(small)
    small.pr(1, {"m.py": _between(MODULE, "def f2():", "def twin():\n    return 1\n\n\n")})
    small.pr(2, {"m.py": _between(MODULE, "def f9():", "def twin():\n    return 2\n\n\n")})
    small.pr(3, {"m.py": None, "moved.py": MODULE})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied"] * 3, report
    assert [(w["file"], w["name"]) for w in _shadowed(report)] == [("moved.py", "twin")]
    small.up.commit({"m.py": None, "n.py": MODULE}, "upstream moves m.py", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied"] * 2, report
    [warning] = _shadowed(report)
    composed = small.work.git("show", "dev:n.py").splitlines()
    assert warning["file"] == "n.py" and [composed[n - 1] for n in warning["lines"]] == ["def twin():"] * 2


def test_a_lone_carriage_return_does_not_shift_the_lines(cli: Cli, small: Small) -> None:
    """helper-106: Python reads a lone CR as a line end, git does not: every later line was one off."""
    module = "x = 1  # a lone \r carriage return\n" + MODULE
    small.base = small.up.commit({"m.py": module}, "a CR", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": _between(module, "def f2():", "def twin(): return 1\n\n\n")})
    small.pr(2, {"m.py": _between(module, "def f9():", "def twin(): return 2\n\n\n")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    [warning] = _shadowed(report)
    composed = small.work.git("show", "dev:m.py").split("\n")
    assert [composed[n - 1] for n in warning["lines"]] == ["def twin(): return 1", "def twin(): return 2"]


def test_what_the_first_version_missed(cli: Cli, small: Small) -> None:
    """helper-111: a `def` at the start of a line inside a string (code a test compiles) hid every later
    pair of its class; a name with a letter beyond ASCII was not read; a decorator with arguments that
    wraps (`@pytest.mark.parametrize(...)`, `@pytest.fixture(scope=...)`, `@dataclass(frozen=True)`) counted
    as registering; a pair inside one `if` block was not looked at."""
    module = ("import pytest\n\n\nclass TestParse:\n    def test_src(self):\n        src = '''\n"
              "def foo():\n    return 1\n'''\n        assert compile(src, 'x', 'exec')\n\n"
              "    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n\n"
              "if FLAG:\n    def g():\n        return 0\n\n    def h():\n        return 0\n\n\n"
              "def end():\n    pass\n")

    def at(text: str, anchor: str, block: str) -> str:
        return _between(text, anchor, block)

    one = at(module, "    def test_b(self):", "    def test_new(self):\n        return 1\n\n")
    one = at(one, "    def h():", "    def g2():\n        return 1\n\n")
    one = at(one, "def end():", "def été():\n    return 1\n\n\n@pytest.mark.parametrize('x', [1])\ndef test_p(x):\n"
                                "    pass\n\n\n@pytest.fixture(scope='module')\ndef res():\n    return 1\n\n\n")
    two = module.replace("        pass\n\n\nif FLAG:", "        pass\n\n    def test_new(self):\n        return 2\n\n\nif FLAG:")
    two = two.replace("        return 0\n\n\ndef end", "        return 0\n\n    def g2():\n        return 2\n\n\ndef end")
    two = two + "\n\ndef été():\n    return 2\n\n\n@pytest.mark.parametrize('x', [2])\ndef test_p(x):\n    pass\n\n\n" \
        "@pytest.fixture(scope='module')\ndef res():\n    return 2\n"
    strings = module[:module.index("\n\nif FLAG")] + "\n"          # the class alone: its pair is the file's only one
    small.base = small.up.commit({"t.py": module, "u.py": strings}, "tests", parent="main", ref="refs/heads/main")
    small.pr(1, {"t.py": one, "u.py": at(strings, "    def test_b(self):", "    def test_new(self):\n        return 1\n\n")})
    small.pr(2, {"t.py": two, "u.py": strings + "\n    def test_new(self):\n        return 2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied", "applied"], report
    assert sorted((w["file"], w["name"]) for w in _shadowed(report)) == [
        ("t.py", "TestParse.test_new"), ("t.py", "g2"), ("t.py", "res"), ("t.py", "test_p"), ("t.py", "été"),
        ("u.py", "TestParse.test_new")]


def test_quotes_in_comments_and_routes_named_patch(cli: Cli, small: Small) -> None:
    """helper-112: a `\"\"\"` in a comment (or a one-line string) paired with the next docstring and hid the
    pair between from the scan; `@router.patch("/a")` registers a route (both stay), where `@patch(...)`
    of unittest.mock wraps."""
    module = ("# a \"\"\" in a comment\n\n\ndef f1():\n    return 1\n\n\n"
              "def f2():\n    \"\"\"A docstring.\"\"\"\n    return 2\n\n\ndef f3():\n    return 3\n")
    routes = "from fastapi import APIRouter\nfrom unittest.mock import patch\n\nrouter = APIRouter()\n\n\n" \
             "def end():\n    pass\n"
    small.base = small.up.commit({"c.py": module, "r.py": routes}, "base", parent="main", ref="refs/heads/main")
    one = {"c.py": _between(module, "def f2():", "def twin():\n    return 1\n\n\n"),
           "r.py": _between(routes, "def end():", "@router.patch('/a')\ndef update():\n    pass\n\n\n"
                                                  "@patch('os.getcwd')\ndef test_cwd(mocked):\n    pass\n\n\n")}
    two = {"c.py": module + "\n\ndef twin():\n    return 2\n",
           "r.py": routes + "\n\n@router.patch('/b')\ndef update():\n    pass\n\n\n@patch('os.getcwd')\n"
                            "def test_cwd(mocked):\n    pass\n"}
    small.pr(1, one)
    small.pr(2, two)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied", "applied"], report
    assert sorted((w["file"], w["name"]) for w in _shadowed(report)) == [("c.py", "twin"), ("r.py", "test_cwd")]


def test_parsing_holds_the_collector_off_and_gives_it_back_as_it_found_it() -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    with no_collection():
        seen.append(gc.isenabled())
        assert parse_module(b"x = {1: 2}\n") is not None and parse_module(b"def (:\n") is None
        seen.append(gc.isenabled())               # the inner one left it off: the outer one decides
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        assert parse_module(b"x = 1\n") is not None and not gc.isenabled()   # off it was, off it stays
    finally:
        gc.enable()
