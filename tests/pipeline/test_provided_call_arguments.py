"""A PR's change of a call's arguments, which a union's line of its own keeps as they were (h255).

pr/1 changes `x = send(a, 1)` to `x = send(a, 2)`; upstream edited the line since (`x = send(a, 1) or 0`), so the
union, made on upstream's, writes the line in its own words: `x = send(a, 1) or fb(a)`. It calls the same name on
the same object with no fewer arguments (linecalls.agree, h235), so it read as pr/1's line re-expressed, exit 0,
though it is pr/1's base line: the change is not carried. A union's call keeping an argument as the PR's base had
it, where the PR changed it (linecalls.keeps_base: by place, or by keyword; one the PR adds or drops too), is no
form of the PR's line. So in a chain: `a.b(d).c(1)` for pr/1's `a.b(e).c(1)`. Nor is a third value, neither the base's
nor the PR's (`send(a, 3)`, h259), unless upstream changed that argument too (its `send(a, 5)`: the union reconciled
the two) or another folded PR's hunk there does."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_call_context import _two, _union, _verdicts
from tests.pipeline.test_provided_conflicting_place import git  # noqa: F401 (a fixture: both gits)
from tests.pipeline.test_provided_regions import _statuses
from tests.pipeline.test_provided_repeats import _absent, _run

F = "import os\n\n\ndef f(a, d, e):\n    b = 1\n    x = send(a, 1)\n    y = 2\n    return x\n\n\ndef g(b):\n    return b\n"
TWO = F.replace("    return b\n", "    return b + 1\n")       # pr/2, apart

CASES = {
    # the base line, pr/1's, the union's own (upstream's is the base's `or 0`), whether it carries pr/1's
    "a-value-kept": ("send(a, 1)", "send(a, 2)", "send(a, 1) or fb(a)", False),
    "a-value-changed": ("send(a, 1)", "send(a, 2)", "send(a, 2) or fb(a)", True),
    "a-value-kept-renamed": ("send(a, 1)", "send(a, 2)", "send(aa, 1) or fb(aa)", False),
    "a-value-changed-renamed": ("send(a, 1)", "send(a, 2)", "send(aa, 2) or fb(aa)", True),
    # h259: a third value, neither the base's nor the PR's, where upstream kept the base's: no form of it
    "a-value-changed-otherwise": ("send(a, 1)", "send(a, 2)", "send(a, 3) or fb(a)", False),
    "a-keyword-changed-otherwise": ("send(a, mode='fast')", "send(a, mode='safe')", "send(a, mode='slow') or fb(a)",
                                    False),
    "a-keyword-kept": ("send(a, mode='fast')", "send(a, mode='safe')", "send(a, mode='fast') or fb(a)", False),
    "a-keyword-changed": ("send(a, mode='fast')", "send(a, mode='safe')", "send(a, mode='safe') or fb(a)", True),
    "an-argument-dropped-kept": ("send(a, 1)", "send(a)", "send(a, 1) or fb(a)", False),
    "an-argument-dropped": ("send(a, 1)", "send(a)", "send(a) or fb(a)", True),
    "a-keyword-added-kept": ("send(a)", "send(a, strict=True)", "send(a) or fb(a)", False),
    "a-chains-first-call-kept": ("a.b(d).c(1)", "a.b(e).c(1)", "a.b(d).c(1) or fb(a)", False),
    "a-chains-first-call-changed": ("a.b(d).c(1)", "a.b(e).c(1)", "a.b(e).c(1) or fb(a)", True),
    "a-chains-last-call-kept": ("a.b(d).c(1)", "a.b(d).c(2)", "a.b(d).c(1) or fb(a)", False),
    "a-star-unknown": ("send(a, 1)", "send(a, 2)", "send(*args) or fb(a)", True),
    # h263: a literal is read by its value: black's double quotes are no third value, nor keep the base otherwise
    "a-keyword-changed-double-quoted": ("send(a, mode='fast')", "send(a, mode='safe')",
                                        'send(a, mode="safe") or fb(a)', True),
    "a-value-changed-double-quoted": ("send(a, 'x')", "send(a, 'y')", 'send(a, "y") or fb(a)', True),
    "a-value-changed-parenthesized": ("send(a, 1)", "send(a, 2)", "send(a, (2)) or fb(a)", True),
    "a-keyword-kept-double-quoted": ("send(a, mode='fast')", "send(a, mode='safe')",
                                     'send(a, mode="fast") or fb(a)', False),
    "a-value-changed-to-a-float": ("send(a, 1)", "send(a, 2)", "send(a, 2.0) or fb(a)", False),
}


def _texts(name: str) -> tuple[str, str, str, str]:
    base, one, union, _carried = CASES[name]
    text = F.replace("send(a, 1)", base)
    return text, text.replace(base, one), text.replace(base, base + " or 0"), \
        text.replace(base, union).replace("    return b\n", "    return b + 1\n")


@pytest.mark.parametrize("name", list(CASES))
def test_a_unions_call_keeping_the_arguments_a_pr_changes_is_no_form_of_it(cli: Cli, small: Small, name: str) -> None:
    carried = CASES[name][3]
    base, one, up, union = _texts(name)
    report = _run(cli, small, one, TWO.replace("send(a, 1)", CASES[name][0]), union, base=base, up=up,
                  command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [6, 6])]), \
        report["warnings"]
    assert _statuses(report, "pr/1") == [("m.py", [6, 6], "re-expressed" if carried else "absent")]


def test_a_call_spanning_lines_keeping_the_value_is_warned_by_sync(cli: Cli, small: Small, git: str) -> None:  # noqa: F811
    base, one, up, _u = _texts("a-value-kept")
    union = up.replace("    x = send(a, 1) or 0\n", "    x = send(a,\n             1) or fb(a)\n").replace(
        "    return b\n", "    return b + 1\n")
    [(entry, lines, message)] = _absent(_run(cli, small, one, TWO, union, base=base, up=up))
    assert (entry, lines) == ("pr/1", [6, 6]), message
    assert "lacks line 6 of its hunk m.py:6 (f)" in message, message


def test_the_warning_says_which_argument_the_union_kept(cli: Cli, small: Small) -> None:
    base, one, up, union = _texts("a-keyword-kept")
    two = base.replace("    return b\n", "    return b + 1\n")
    [(_e, _l, message)] = _absent(_run(cli, small, one, two, union, base=base, up=up))
    assert "its line m.py:6 `x = send(a, mode='fast') or fb(a)` is no form of it: it passes send mode as it was " \
        "(`'fast'`), not as the PR makes it (`'safe'`)" in message, message


# h255: the reverse of h243's delegate (test_provided_delegate): pr/2 calls `self.reporter.send_report(d)`, the union
# `self.send_report(dd)`, one attribute nearer: perhaps another object's method of that name, so still warned, but
# the warning said the union wrote nothing for it; it names the union's line and the objects
NEARER = {
    "one-attribute-nearer": ("    self.reporter.send_report(d)\n", "    self.send_report(dd)\n",
                             "its line m.py:10 `self.send_report(dd)` is no form of it: it calls send_report on self, "
                             "not on self.reporter"),
    "another-object": ("    self.reporter.send_report(d)\n", "    other.send_report(dd)\n",
                       "it calls send_report on other, not on self.reporter"),
    "fewer-arguments": ("    send_report(d, 'weekly')\n", "    send_report(dd)\n",
                        "it passes send_report 1 argument, not 2"),
}


@pytest.mark.parametrize("name", list(NEARER))
def test_a_call_the_union_makes_otherwise_is_warned_saying_what_differs(cli: Cli, small: Small, name: str) -> None:
    theirs, mine, said = NEARER[name]
    lines, r = _verdicts(cli, small, _two(theirs), _union(mine), command="sync")
    assert lines == [("pr/2", [9, 9])], r["warnings"]
    [message] = [w["message"] for w in r["warnings"] if w["kind"] == "provided-absent"]
    assert said in message, message


# h257: a decorator's own call was left out of the union's calls with their arguments, so keeps_base never saw it:
# pr/1 routes f to '/y', upstream adds `strict=True` to the route, and the union's `@app.route('/x', strict=True,
# name='f')` (the base's route) read as pr/1's line re-expressed, exit 0
D = "import os\n\n\n@app.route('/x')\ndef f(a):\n    b = 1\n    return a\n\n\ndef g(b):\n    return b\n"


@pytest.mark.parametrize(("route", "carried"), [("'/x'", False), ("'/y'", True), ("\n    '/x'", False),
                                               ("\n    '/y'", True)],
                         ids=["kept", "changed", "kept-over-two-lines", "changed-over-two-lines"])
def test_a_unions_decorator_keeping_the_route_a_pr_changes_is_no_form_of_it(cli: Cli, small: Small, route: str,
                                                                           carried: bool) -> None:
    up = D.replace("@app.route('/x')", "@app.route('/x', strict=True)")
    union = up.replace("@app.route('/x', strict=True)", f"@app.route({route}, strict=True, name='f')").replace(
        "    return b\n", "    return b + 1\n")
    report = _run(cli, small, D.replace("'/x'", "'/y'"), D.replace("    return b\n", "    return b + 1\n"), union,
                  base=D, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == ([] if carried else [("pr/1", [4, 4])]), \
        report["warnings"]
    assert _statuses(report, "pr/1") == [("m.py", [4, 4], "re-expressed" if carried else "absent")]


# h259: the union passes the argument pr/1 changes as a third value; upstream's line there (what the union's own hunk
# replaces) passing it as the base did, it is no form of pr/1's change; upstream or pr/2 changing that argument too,
# the union's value reconciles them (re-expressed, as before)
THIRD = {
    "upstream-kept-it": ("send(a, 1) or 0", None, "absent"),
    "upstream-changed-it": ("send(a, 5) or 0", None, "re-expressed"),
    "another-pr-changed-it": ("send(a, 1) or 0", "send(a, 4)", "re-expressed"),
}


@pytest.mark.parametrize("name", list(THIRD))
def test_a_third_value_is_a_form_of_the_prs_call_only_where_another_change_asks_for_it(cli: Cli, small: Small,
                                                                                        name: str) -> None:
    upstream, two, said = THIRD[name]
    base = F
    one, up = F.replace("send(a, 1)", "send(a, 2)"), F.replace("send(a, 1)", upstream)
    pr2 = F.replace("send(a, 1)", two) if two else TWO
    union = F.replace("send(a, 1)", "send(a, 3) or fb(a)").replace("    return b\n", "    return b + 1\n")
    report = _run(cli, small, one, pr2, union, base=base, up=up, command="explain")
    assert _statuses(report, "pr/1") == [("m.py", [6, 6], said)], report["warnings"]
    absent = _absent(report)
    assert [(pr, lines) for pr, lines, _m in absent] == ([("pr/1", [6, 6])] if said == "absent" else []), absent
    if absent:
        assert "its line m.py:6 `x = send(a, 3) or fb(a)` is no form of it: it passes send argument 2 as `3`, " \
            "neither as it was (`1`) nor as the PR makes it (`2`)" in absent[0][2], absent[0][2]
