"""A union's line calling a dropped PR's call on another object, with fewer arguments, or inside a docstring opened
above it, is no form of that call (h235: the holes h225's and h232's rule left; the case of test_provided_rewrite).

Upstream rewrote f's whole body, pr/1 adds `X = log(b)`, pr/2 a call; the union, made on the rewrite, keeps pr/1's
line in a new form and writes, where pr/2's line was, a line calling the same name but not pr/2's call: a method of
another object (`names.append(dd)` for `errors.append(d)`: a method was matched by its own name, and append, get,
update, add are everywhere), the call without an argument (`send_report(dd)` for `send_report(d, 'weekly')`), or
the call's text on a line of a docstring opened above the union's hunk (read from its first line, as code). Each was
pr/2's call re-expressed: exit 0, nothing said. A call carries a PR's call of the same name on the same object
(or where either names none: `send_report`, `reporting.send_report`, `self.send_report`) with no fewer arguments
(where both close on their line and pass no `*`), and a hunk's lines are read from the string its file has open
where it starts."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, TWO, F, _coverage
from tests.pipeline.test_provided_rewrite_roles import _union

KEEP = "    X = log(bb)\n"
DOC = '    """Sets the names.\n\n    Then returns one.\n    """\n'


def _two(lines: str) -> str:
    """pr/2: F with LINES after `d = 4`."""
    return F.replace("    d = 4\n", "    d = 4\n" + lines)


def _documented(text: str) -> str:
    """TEXT with f's docstring (DOC)."""
    return text.replace("def f():\n", "def f():\n" + DOC)


DROPPED = {
    "a-method-of-another-object": (_two("    errors.append(d)\n"), _union(KEEP, "    names.append(dd)\n"), RW),
    "a-method-of-another-attribute": (_two("    self.errors.append(d)\n"),
                                      _union(KEEP, "    self.names.append(dd)\n"), RW),
    "an-argument-dropped": (TWO, _union(KEEP, "    send_report(dd)\n"), RW),
    "an-argument-dropped-assigned": (_two("    X2 = send_report(d, 'weekly')\n"),
                                     _union(KEEP, "    X2 = send_report(dd)\n"), RW),
    "in-a-docstring-opened-above": (TWO, _documented(_union(KEEP)).replace(
        "    Then returns one.\n", "    send_report(dd, 'weekly') is the caller's.\n    Then returns one.\n"),
        _documented(RW)),
}


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("name", list(DROPPED))
def test_a_line_calling_the_name_of_a_dropped_call_otherwise_is_not_it(cli: Cli, small: Small, command: str,
                                                                       name: str) -> None:
    two, union, up = DROPPED[name]
    r = _on_bases(cli, small, ONE, two, union, base=F, base2=None, up=up, command=command)
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "absent")]


CARRIED = {
    "the-same-object": (_two("    errors.append(d)\n"), "    errors.append(dd)\n"),
    "the-same-attribute-reached-otherwise": (_two("    self.errors.append(d)\n"), "    errors.append(dd)\n"),
    "more-arguments": (TWO, "    send_report(dd, 'weekly', retries=3)\n"),
    "arguments-from-a-star": (TWO, "    send_report(*args)\n"),
    "a-lambdas-parameters-are-one-argument": (_two("    run(lambda a, b: a, d)\n"), "    run(lambda: 1, dd)\n"),
    # a call split over lines, its arguments counted on its whole text (h243: uncounted, `send_report(\n dd)`
    # carried it too; test_provided_call_context)
    "split-over-lines-counted": (TWO, "    send_report(\n        dd,\n        'weekly')\n"),
}


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_line_making_a_prs_call_in_new_words_is_it_still(cli: Cli, small: Small, name: str) -> None:
    two, written = CARRIED[name]
    r = _on_bases(cli, small, ONE, two, _union(KEEP, written), base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [], r["warnings"]
    assert [status for _pr, _lines_, status in _coverage(r)] == ["re-expressed", "re-expressed"]


def test_a_call_written_after_a_docstring_closed_above_is_code(cli: Cli, small: Small) -> None:
    # the docstring read from the file's start ends above the union's line: that line is the call
    union = _documented(_union(KEEP, "    send_report(dd, 'weekly')\n"))
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=_documented(RW), command="explain")
    assert _lines(r) == [], r["warnings"]
    assert [status for _pr, _lines_, status in _coverage(r)] == ["re-expressed", "re-expressed"]


@pytest.mark.parametrize(("written", "carried"), [
    ("    sr = send_report\n    sr(dd, 'weekly')\n", True),
    ("    sr = reporting.send_report\n    sr(dd, period='weekly')\n", True),
    ("    sr = send_report\n    sr(dd)\n", False),                       # still without its argument
    ("    sr = log\n    sr(dd, 'weekly')\n", False),                     # another function
    ("    add = names.append\n    add(dd)\n", False),                  # another object's method, bound
], ids=["an-alias", "an-alias-of-a-modules-function", "an-alias-dropping-an-argument", "an-alias-of-another",
        "a-bound-method-of-another-object"])
def test_a_call_through_a_name_the_union_binds_to_it_is_that_call(cli: Cli, small: Small, written: str,
                                                                  carried: bool) -> None:
    # h235: an alias bound in the union's hunk (`sr = send_report`) was another name: pr/2's call was warned dropped
    two = TWO if "append" not in written else _two("    errors.append(d)\n")
    r = _on_bases(cli, small, ONE, two, _union(KEEP, written), base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == ([] if carried else [("pr/2", [9, 9])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")
