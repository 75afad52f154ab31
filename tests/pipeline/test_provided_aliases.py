"""A PR's call made through a name bound to the function, and names bound at module level (h255; the case of
test_provided_rewrite: upstream rewrote f's body, pr/1 adds `X = log(b)`, pr/2 a call, the union on the rewrite
keeps pr/1's line in a new form and writes a form of pr/2's call, or not).

h243 read a name bound above the union's hunk in its def (`sr = send_report`) as the function it names, on the
union's side only: pr/2's own `sr(d, 'weekly')`, through `sr = send_report` above its hunk, was another call than
the union's `send_report(dd, 'weekly')` (warned dropped, a false alarm); nor were names bound at module level read
(`from reporting import send_report as sr`, `sr = send_report` at the top), on either side."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_call_context import KEEP
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_repeats import _absent, _run
from tests.pipeline.test_provided_rewrite import RW, F, _coverage


def _with(text: str, top: str = "", body: str = "") -> str:
    """TEXT with TOP after `import os` and BODY at the top of f's body."""
    return text.replace("import os\n", "import os\n" + top).replace("def f():\n", "def f():\n" + body)


def _case(top: str, body: str, theirs: str, mine: str) -> tuple[str, str, str, str]:
    """pr/2 adding THEIRS after `d = 4` and the union writing MINE there, TOP and BODY in every version: the base,
    pr/2, upstream's rewrite and the union."""
    base, up = _with(F, top, body), _with(RW, top, body)
    two = base.replace("    d = 4\n", "    d = 4\n" + theirs)
    union = up.replace("    bb = 2\n", "    bb = 2\n" + KEEP).replace("    dd = 4\n", "    dd = 4\n" + mine)
    return base, up, two, union


CALL = "    send_report(dd, 'weekly')\n"
CASES = {
    # the PR calls through a name bound above its hunk in the def
    "theirs-bound-in-the-def": ("", "    sr = send_report\n", "    sr(d, 'weekly')\n", CALL, True),
    "theirs-bound-to-a-method": ("", "    sr = self.send_report\n", "    sr(d, 'weekly')\n",
                                 "    self.send_report(dd, 'weekly')\n", True),
    "theirs-bound-dropping-an-argument": ("", "    sr = send_report\n", "    sr(d, 'weekly')\n",
                                          "    send_report(dd)\n", False),
    "theirs-bound-to-another-function": ("", "    sr = log\n", "    sr(d, 'weekly')\n", CALL, False),
    # names bound at module level, on either side
    "theirs-imported-as": ("from reporting import send_report as sr\n", "", "    sr(d, 'weekly')\n",
                           "    reporting.send_report(dd, 'weekly')\n", True),
    "theirs-bound-at-module-level": ("sr = send_report\n", "", "    sr(d, 'weekly')\n", CALL, True),
    "mine-imported-as": ("from reporting import send_report as sr\n", "", "    send_report(d, 'weekly')\n",
                         "    sr(dd, 'weekly')\n", True),
    "mine-bound-at-module-level": ("sr = send_report\n", "", "    send_report(d, 'weekly')\n",
                                   "    sr(dd, 'weekly')\n", True),
    "mine-module-alias-dropping-an-argument": ("sr = send_report\n", "", "    send_report(d, 'weekly')\n",
                                               "    sr(dd)\n", False),
    "mine-bound-at-module-level-to-another": ("sr = log\n", "", "    send_report(d, 'weekly')\n",
                                              "    sr(dd, 'weekly')\n", False),
    "mine-module-alias-rebound": ("sr = send_report\nsr = log\n", "", "    send_report(d, 'weekly')\n",
                                  "    sr(dd, 'weekly')\n", False),
    "mine-module-alias-rebound-in-the-def": ("sr = send_report\n", "    sr = log\n", "    send_report(d, 'weekly')\n",
                                             "    sr(dd, 'weekly')\n", False),
    # bound again at module level to what is no function named alone (h257: no test read module_bindings' rebinding)
    "mine-module-alias-rebound-to-a-call": ("sr = send_report\nsr = make()\n", "", "    send_report(d, 'weekly')\n",
                                            "    sr(dd, 'weekly')\n", False),
    "mine-module-alias-rebound-by-a-def": ("sr = send_report\n\n\ndef sr(a, b):\n    return a\n\n\n", "",
                                           "    send_report(d, 'weekly')\n", "    sr(dd, 'weekly')\n", False),
    "mine-imported-as-another": ("from reporting import audit as sr\n", "", "    send_report(d, 'weekly')\n",
                                 "    sr(dd, 'weekly')\n", False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_name_bound_to_the_function_calls_it_on_either_side(cli: Cli, small: Small, name: str) -> None:
    top, body, theirs, mine, carried = CASES[name]
    base, up, two, union = _case(top, body, theirs, mine)
    line = 9 + top.count("\n") + body.count("\n")
    r = _on_bases(cli, small, _with(F, top, body).replace("    b = 2\n", "    b = 2\n    X = log(b)\n"), two, union,
                  base=base, base2=None, up=up, command="explain")
    assert _lines(r) == ([] if carried else [("pr/2", [line, line])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")


# the brief's case, without upstream's rewrite: a class whose method binds `sr = self.send_report` on a line the PR
# leaves alone; pr/1 adds `sr(d)` below it, and the union, committed by hand, writes `self.send_report(d)` there
K = ("class K:\n    def f(self, d):\n        sr = self.send_report\n        d = d + 1\n        return d\n\n"
     "    def g(self):\n        return 2\n")
K1 = K.replace("        d = d + 1\n", "        d = d + 1\n        sr(d)\n")
K2 = K.replace("        return 2\n", "        return 3\n")


@pytest.mark.parametrize(("written", "carried"), [("        self.send_report(d)\n", True),
                                                  ("        self.send_report()\n", False),
                                                  ("        self.reporter.send_report(d)\n", True),
                                                  ("        other.send_report(d)\n", False)],
                         ids=["the-method", "dropping-the-argument", "a-delegate", "another-object"])
def test_a_prs_call_through_a_name_bound_above_its_hunk_is_that_call(cli: Cli, small: Small, written: str,
                                                                     carried: bool) -> None:
    union = K.replace("        d = d + 1\n", "        d = d + 1\n" + written).replace("return 2", "return 3")
    report = _run(cli, small, K1, K2, union, base=K, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [5, 5])]), \
        report["warnings"]


@pytest.mark.parametrize(("header", "lost"), [
    ("class K:\n  def f(self, sr):", True), ("class K:\n  async def f(self, *, sr=None):", True),
    ("def g():\n  def f(*sr):", True),
    ("def f(sr):", True), ("class K:\n  def f(self,\n        sr):", True),       # (guards: read before)
    ("class K:\n  def f(self, cb=sr):", False)])                                  # a default names it: the alias
def test_a_parameter_named_as_a_module_alias_is_no_alias(cli: Cli, small: Small, header: str, lost: bool) -> None:
    """h257: `sr = send_report` at module level and `def f(self, sr):` in a class: in f, `sr` is its parameter,
    whatever the caller passes; the union's `sr(dd, 'weekly')` there was read as pr/2's `send_report(d, 'weekly')`,
    re-expressed, exit 0 (a parameter of a def at module level was read, named at the module's top level)."""
    base, up, two, union = (t.replace("def f():", header)
                            for t in _case("sr = send_report\n", "", "    send_report(d, 'weekly')\n",
                                           "    sr(dd, 'weekly')\n"))
    r = _on_bases(cli, small, base.replace("    b = 2\n", "    b = 2\n    X = log(b)\n"), two, union, base=base,
                  base2=None, up=up, command="explain")
    line = 10 + header.count("\n")
    assert _lines(r) == ([("pr/2", [line, line])] if lost else []), r["warnings"]
    assert _coverage(r)[1][2] == ("absent" if lost else "re-expressed")
