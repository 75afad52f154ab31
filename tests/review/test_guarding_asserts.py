"""Which asserts guard a hunk (review.coverage.guarding_asserts): the scope an assert reads, its `entry:`,
and for `defines: Q` the definition it names (helper-146)."""

from __future__ import annotations

import pytest

from carrytool.asserts.spec import AssertSpec
from carrytool.review.coverage import guarding_asserts
from tests.conftest import Cli, Small

DEFINED = AssertSpec("barrier-defined", "e.py", "defines", "Engine._barrier")
DEFINED_IN = AssertSpec("barrier-defined-in", "e.py", "defines", "_barrier", scope="Engine")
MODULE = AssertSpec("mentions-barrier", "e.py", "mentions", "_barrier")
STEP = AssertSpec("barrier-first", "e.py", "order", ("_barrier", "opt.step"), scope="Engine.step")


@pytest.mark.parametrize("spec, file, scopes, entry, guards", [
    # helper-146: a module-level `defines:` guarded pr/7018's hunk in Engine._forward_epilogue
    (DEFINED, "e.py", ["Engine._forward_epilogue", "Engine.forward"], "pr/7018", False),
    (DEFINED, "e.py", ["Engine._barrier"], "pr/7018", True),          # the definition it names
    (DEFINED, "e.py", ["Engine._barrier.inner"], "pr/7018", True),    # inside it
    (DEFINED, "e.py", ["Engine"], "pr/7018", False),                  # another part of the class
    (DEFINED, "e.py", [], "pr/7018", False),                          # module-level lines
    (DEFINED, "other.py", ["Engine._barrier"], "pr/7018", False),     # another file
    (DEFINED, "e.py", ["Engine.step"], None, False),
    (DEFINED_IN, "e.py", ["Engine._barrier"], "pr/1", True),          # `in:` + `defines:` name Engine._barrier
    (DEFINED_IN, "e.py", ["Engine.step"], "pr/1", False),
    (AssertSpec("d", "e.py", "defines", "Engine._barrier", entry="pr/1"), "e.py", ["Engine.step"], "pr/1",
     True),                                                           # declared for the entry: guards its file
    (MODULE, "e.py", ["Engine.step"], "pr/1", True),                  # other checks without `in:`: the module
    (STEP, "e.py", ["Engine.step"], "pr/1", True),
    (STEP, "e.py", ["Engine.forward"], "pr/1", False),
])
def test_which_asserts_guard_a_hunk(spec: AssertSpec, file: str, scopes: list[str], entry: str | None,
                                    guards: bool) -> None:
    assert (guarding_asserts([spec], file, scopes, entry or "pr/9") == [spec]) is guards


ENGINE = ("class Engine:\n    def forward(self):\n        a = 1\n        b = 2\n        c = 3\n        return a\n\n"
          "    def _barrier(self):\n        pass\n")


def test_a_defines_assert_does_not_guard_a_unions_hunk_in_another_def(cli: Cli, small: Small) -> None:
    """helper-146: explain's coverage said pr/1's hunk in Engine.forward, which the union re-expresses, was
    "guarded by barrier-defined", an assert that only checks Engine._barrier is defined."""
    base = small.up.commit({"e.py": ENGINE}, "engine", parent="main", ref="refs/heads/main")
    small.pr(1, {"e.py": ENGINE.replace("a = 1", "a = 10")}, parent=base)
    union = small.up.commit({"e.py": ENGINE.replace("a = 1", "a = 10 + 0")}, "union", parent=base,
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "u", "commit": union, "supersedes": [1]}],
                   asserts=[{"name": "barrier-defined", "file": "e.py", "defines": "Engine._barrier"},
                            {"name": "forward-a", "file": "e.py", "in": "Engine.forward", "mentions": "a"}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    [cov] = report["coverage"]
    assert [(h["status"], h["asserts"]) for h in cov["hunks"]] == [("re-expressed", ["forward-a"])], cov
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "guarded by barrier-defined" not in text and "guarded by forward-a" in text, text
