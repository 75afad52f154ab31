"""A union's line only naming a dropped PR's call is no form of it (h225; the case of test_provided_rewrite).

Upstream rewrote f's whole body, pr/1 adds `X = log(b)`, pr/2 `send_report(d, 'weekly')`, and the union, made on
the rewrite, keeps pr/1's line in a new form. A line of the union's own that named pr/2's call without calling it
(a keyword `send_report=False`, a name or an attribute bound `send_report = None`, a comment) was read, by likeness
of text, as pr/2's call re-expressed: no warning, exit 0, explain `re-expressed`. A line re-expresses a PR's line
where it does what that line does (pipeline.lineroles): calls the same name, however it is reached, with any
arguments."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, TWO, F, _coverage

AT_ONE, AT_TWO = "    bb = 2\n", "    dd = 4\n"


def _union(one: str, two: str = "") -> str:
    """The rewrite with ONE after pr/1's place and TWO after pr/2's."""
    return RW.replace(AT_ONE, AT_ONE + one).replace(AT_TWO, AT_TWO + two)


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("union", [
    _union("    X = log(bb, send_report=False)\n"),
    _union("    X = log(bb)\n", "    send_report = None\n"),
    _union("    X = log(bb)\n", "    self.send_report = d\n"),
    _union("    X = log(bb)\n", "    # send_report(d, 'weekly') later\n"),
], ids=["a-keyword-named-like-it", "binds-its-name", "sets-an-attribute-named-like-it", "a-comment-of-it"])
def test_a_line_naming_a_dropped_call_is_not_that_call_re_expressed(cli: Cli, small: Small, command: str,
                                                                    union: str) -> None:
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "absent")]


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("union", [
    _union("    X = log(bb)\n", "    send_report(dd, 'weekly')\n"),
    _union("    X = log(bb)\n", "    send_report(dd, period='weekly')\n"),
    _union("    X = log(bb)\n", "    reporting.send_report(dd, 'weekly')\n"),
    _union("    X = log(bb)\n", "    self.send_report(dd, 'weekly')\n"),
    _union("    X = log(bb, send_report=False)\n", "    send_report(dd, 'weekly')\n"),
    _union("    X = log(bb, send_report(dd, 'weekly'))\n"),
], ids=["new-arguments", "a-keyword-argument", "from-a-module", "a-method", "beside-a-keyword-named-like-it",
        "one-line-merging-both"])
def test_a_line_calling_a_prs_call_in_new_words_is_it_re_expressed(cli: Cli, small: Small, command: str,
                                                                   union: str) -> None:
    """However the union reaches it and whatever it passes; a line merging both PRs' calls is each one's (it
    calls what only pr/2 calls, and assigns what only pr/1 assigns)."""
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "re-expressed")]


def test_a_call_both_prs_make_is_the_one_the_line_is_most_akin_to(cli: Cli, small: Small) -> None:
    # pr/2 logs too (`log(d, 'weekly')`): the union's `X = log(bb)` calls what either PR calls, and is pr/1's line
    # in a new form, not pr/2's (h215's reverted test, kept: likeness decides among PRs doing the same)
    two = F.replace("    d = 4\n", "    d = 4\n    log(d, 'weekly')\n")
    r = _on_bases(cli, small, ONE, two, _union("    X = log(bb)\n"), base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "absent")]


def test_a_call_inside_brackets_both_lines_make_is_no_form_of_the_dropped_one(cli: Cli, small: Small) -> None:
    # pr/2 reports `str(d)`; the union's `X = log(bb, str(bb))`, pr/1's line in a new form, calls `str` too, but
    # only for `log`'s sake: no form of pr/2's call
    two = F.replace("    d = 4\n", "    d = 4\n    send_report(d, str(d))\n")
    r = _on_bases(cli, small, ONE, two, _union("    X = log(bb, str(bb))\n"), base=F, base2=None, up=RW,
                  command="explain")
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "absent")]
