"""A line of a PR's hunk the union drops beside one it writes in its own words (h236's review).

Upstream rewrote f's body (test_provided_rewrite); pr/2 adds `send_report(d, 'weekly')` and `audit(d)`; the union,
made on the rewrite, writes `send_report(dd, 'weekly')` and no form of `audit(d)`. Any line of the union's own
carrying any line of the hunk credited the whole of it: `re-expressed`, exit 0, `audit(d)` lost unsaid. Each line
of the hunk doing something must now be carried by a line of the union's own there (regions.uncarried)."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, F, _coverage

TWO = F.replace("    d = 4\n", "    d = 4\n    send_report(d, 'weekly')\n    audit(d)\n")
LOG = RW.replace("    bb = 2\n", "    bb = 2\n    X = log(bb)\n")


def _union(lines: str, on: str = LOG) -> str:
    return on.replace("    dd = 4\n", "    dd = 4\n" + lines)


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_line_of_a_prs_hunk_dropped_beside_one_re_expressed_is_lost(cli: Cli, small: Small, command: str) -> None:
    r = _on_bases(cli, small, ONE, TWO, _union("    send_report(dd, 'weekly')\n"), base=F, base2=None, up=RW,
                  command=command)
    assert _lines(r) == [("pr/2", [9, 10])], r["warnings"]          # was [] (no warning): audit(d) is gone
    if command == "sync":
        [message] = [w["message"] for w in r["warnings"] if w["kind"] == "provided-absent"]
        assert "lacks line 10 of its hunk m.py:9-10 (f), in no region carry/union reconciled (the union writes " \
            "lines of its own there for the rest of this hunk, but none doing what these do)" in message, message
    else:
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 10], "absent")]


@pytest.mark.parametrize("lines", ["    send_report(dd, 'weekly'); audit(dd)\n",
                                   "    send_report(dd, audit(dd))\n",
                                   "    audit(dd)\n    send_report(dd, 'weekly')\n",
                                   "    send_report(dd,\n                'weekly')\n    audit(dd, strict=True)\n"],
                         ids=["merged", "merged-inside", "reordered", "split"])
def test_every_line_of_the_hunk_in_the_unions_words_is_re_expressed(cli: Cli, small: Small, lines: str) -> None:
    r = _on_bases(cli, small, ONE, TWO, _union(lines), base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [], r["warnings"]
    assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 10], "re-expressed")]


def test_a_line_dropped_with_no_other_pr_there_is_lost_too(cli: Cli, small: Small) -> None:
    # pr/1 changes the import only: no other PR's hunk in f's rewrite; the union's `send_report` line does what
    # one line of pr/2's does, and is no form of `audit(d)`
    one = F.replace("import os", "import os, sys")
    union = _union("    send_report(dd, 'weekly')\n", RW.replace("import os", "import os, sys"))
    r = _on_bases(cli, small, one, TWO, union, base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [("pr/2", [9, 10])], r["warnings"]
