"""A line of a PR's hunk the union drops beside one it writes in its own words (h236's review).

Upstream rewrote f's body (test_provided_rewrite); pr/2 adds `send_report(d, 'weekly')` and `audit(d)`; the union,
made on the rewrite, writes `send_report(dd, 'weekly')` and no form of `audit(d)`. Any line of the union's own
carrying any line of the hunk credited the whole of it: `re-expressed`, exit 0, `audit(d)` lost unsaid. Each line
of the hunk doing something must now be carried by a line of the union's own there (carried.uncarried)."""
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
            "lines of its own there for the rest of this hunk, but none doing what line 10 does)" in message, message
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


# the seed's union (docs/explain.md's demo): #45612 wraps the base's `allocator.wake_up(tags)` in a handshake and
# keeps that call in both branches; #45398 makes the call `backend.resume(tags)`; the union writes the handshake
# around #45398's call. #45612's kept calls are base lines another PR changed there, and the union took that side:
# reconciled, not lost (the per-line rule above first warned the demo's union, `lacks line 54`)
W = "def wake(tags):\n    allocator = get()\n    allocator.wake_up(tags)\n    restore()\n"
W_BACKEND = W.replace("    allocator.wake_up(tags)\n", "    backend.resume(tags)\n")
W_SYNC = W.replace("    allocator.wake_up(tags)\n", "    if needs_sync():\n        # symmetric handshake\n        ok = 1\n        try:\n"
                   "            allocator.wake_up(tags)\n        except Exception:\n            ok = 0\n"
                   "        handshake(ok)\n    else:\n        allocator.wake_up(tags)\n")


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_base_line_a_pr_keeps_that_another_pr_changes_is_reconciled_where_the_union_takes_that(
        cli: Cli, small: Small, command: str) -> None:
    union = W_SYNC.replace("allocator.wake_up(tags)", "backend.resume(tags)").replace(
        "# symmetric handshake", "# symmetric handshake, around backend.resume")      # the union's own words
    r = _on_bases(cli, small, W_BACKEND, W_SYNC, union, base=W, base2=None, up=W, command=command)
    assert _lines(r) == [], r["warnings"]
    dropped = union.replace("        backend.resume(tags)\n", "        pass\n")     # a line the PR adds, gone: warned
    assert "handshake(ok)" in dropped and "ok = 0" in dropped
    r = _on_bases(cli, small, W_BACKEND, W_SYNC, dropped.replace("        handshake(ok)\n", ""), base=W, base2=None,
                  up=W, command=command)
    assert [entry for entry, _l in _lines(r)] == ["pr/2"], r["warnings"]


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_hunk_dropped_beside_an_unrelated_line_of_the_unions_own_is_lost(cli: Cli, small: Small,
                                                                            command: str) -> None:
    # h240's review: no other PR's hunk in f's rewrite; the union writes `dd = clamp(dd)` (a fix of its own) and no
    # form of pr/2's two calls; a line of its own "for any of them" read the whole hunk as re-expressed, exit 0
    one = F.replace("import os", "import os, sys")
    union = _union("    dd = clamp(dd)\n", RW.replace("import os", "import os, sys"))
    r = _on_bases(cli, small, one, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [("pr/2", [9, 10])], r["warnings"]
