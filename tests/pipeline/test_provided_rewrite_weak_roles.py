"""A union's line sharing with a dropped PR's line only what that line does on the side is no form of it (h232's
probes of h225's rule; the case of test_provided_rewrite).

Upstream rewrote f's whole body, pr/1 adds `X = log(b)`, pr/2 a call of `send_report`; the union, made on the
rewrite, keeps pr/1's line in a new form and writes a line of its own where pr/2's was, but no call of
`send_report`. Each was read as pr/2's call re-expressed, exit 0, nothing said: a line sharing only the kind of
statement (`return None` for `return send_report(d, 'weekly')`, `if dd:` for `if d:` over the call), a call made
inside the call's brackets (`label = str(dd)` for `send_report(d, str(d))`), a keyword it passes (`period=`), or
none at all where it holds the call as text (a string, a docstring's lines: read by likeness of text). A line does
what a PR's line does where it shares what that line does at its top: the name it calls, the target it assigns,
... (lineroles); the rest of it (a statement's keyword, a keyword, a call inside brackets) only where the PR's
lines do nothing more."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, TWO, F, _coverage
from tests.pipeline.test_provided_rewrite_roles import _union

KEEP = "    X = log(bb)\n"


def _two(lines: str) -> str:
    """pr/2: F with LINES after `d = 4`."""
    return F.replace("    d = 4\n", "    d = 4\n" + lines)


DROPPED = {
    "the-statement-only": (_two("    return send_report(d, 'weekly')\n"), "    return None\n"),
    "the-if-over-the-call": (_two("    if d:\n        send_report(d, 'weekly')\n"), "    if dd:\n        pass\n"),
    "a-call-inside-its-brackets": (_two("    send_report(d, str(d))\n"), "    label = str(dd)\n"),
    "a-keyword-it-passes": (_two("    send_report(d, period='weekly')\n"), "    Y = fetch(dd, period='weekly')\n"),
    "a-string-of-it": (TWO, "    NAMES = [\n        \"send_report(dd, 'weekly')\",\n    ]\n"),
    "a-docstring-opening-on-it": (TWO, "    \"\"\"send_report(dd, 'weekly') later\n    \"\"\"\n"),
    "a-docstring-line-of-it": (TWO, "    \"\"\"Later:\n    send_report(dd, 'weekly') is the caller's.\n    \"\"\"\n"),
}


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("name", list(DROPPED))
def test_a_line_sharing_only_what_a_dropped_call_does_aside_is_not_it(cli: Cli, small: Small, command: str,
                                                                       name: str) -> None:
    two, written = DROPPED[name]
    r = _on_bases(cli, small, ONE, two, _union(KEEP, written), base=F, base2=None, up=RW, command=command)
    lines = 10 if name == "the-if-over-the-call" else 9
    assert _lines(r) == [("pr/2", [9, lines])], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, lines], "absent")]


CARRIED = {
    "a-string-argument-left-open": (TWO, "    send_report(dd, \"\"\"weekly\n    \"\"\")\n"),
    "the-if-and-the-call": (_two("    if d:\n        send_report(d, 'weekly')\n"),
                            "    if dd:\n        send_report(dd, 'weekly')\n"),
    "a-keyword-fragment": (_two("    send_report(d,\n                period='weekly')\n"),
                           "    send_report(\n        dd,\n        period='weekly',\n    )\n"),
    "the-statement-with-the-call": (_two("    return send_report(d, 'weekly')\n"),
                                    "    return send_report(dd, 'weekly')\n"),
}


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_line_doing_what_a_prs_line_does_is_it_still(cli: Cli, small: Small, name: str) -> None:
    two, written = CARRIED[name]
    r = _on_bases(cli, small, ONE, two, _union(KEEP, written), base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [], r["warnings"]
    assert [status for _pr, _lines_, status in _coverage(r)] == ["re-expressed", "re-expressed"]
