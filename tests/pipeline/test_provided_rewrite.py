"""A PR's line the union drops where upstream rewrote the whole block around it (h209's review).

Upstream rewrites every line of f's body (`a = 1` -> `aa = 1`, ...), so neither PR's hunk maps into the union's base
and each stands for the region its merge met: the whole rewritten block. pr/1 adds `X = log(b)`, pr/2
`send_report(d, 'weekly')`; the union, made on the rewrite, writes pr/1's line in a new form (`X = log(bb)`) and no
form at all of pr/2's. That line of the union's own, in both regions, was read as pr/2's in another form too:
`re-expressed`, exit 0, nothing said. Nor did the two PRs' insertions meet in the fold but through upstream's
rewrite: merged together they do not conflict, so keeping pr/1's (in any form) took no side against pr/2's."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases

F = "import os\n\n\ndef f():\n" + "".join(f"    {v} = {n}\n" for n, v in enumerate("abcdeghi", 1)) + "    return a\n"
RW = F
for _v in "abcdeghi":
    RW = RW.replace(f"    {_v} = ", f"    {_v}{_v} = ")
RW = RW.replace("return a", "return aa")
ONE = F.replace("    b = 2\n", "    b = 2\n    X = log(b)\n")
TWO = F.replace("    d = 4\n", "    d = 4\n    send_report(d, 'weekly')\n")


def _coverage(report: dict) -> list[tuple[str, list[int], str]]:
    return [(c["pr"], h["lines"], h["status"]) for c in report["coverage"] for h in c["hunks"]]


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("kept", ["    X = log(bb)\n", "    X = log(b)\n", "    X = log(bb, 'weekly')\n"],
                         ids=["re-expressed", "verbatim", "a-string-of-pr2-elsewhere"])
def test_a_line_dropped_in_upstreams_rewrite_is_not_another_prs_line_there(cli: Cli, small: Small, command: str,
                                                                           kept: str) -> None:
    """So too where pr/1's line holds a word of pr/2's (the string `'weekly'`): no form of pr/2's call (h219's
    review of h215's rule, reverted: one such word credited pr/2's whole hunk, exit 0)."""
    union = RW.replace("    bb = 2\n", "    bb = 2\n" + kept)
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    if command == "sync":
        [warning] = [w for w in r["warnings"] if w["kind"] == "provided-absent"]
        assert "both could be kept: pr/1 inserts in the same conflict" in warning["message"], warning["message"]
    if command == "explain":
        one = "re-expressed" if "bb" in kept else "verbatim"
        assert _coverage(r) == [("pr/1", [7, 7], one), ("pr/2", [9, 9], "absent")]


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_both_lines_in_new_forms_in_upstreams_rewrite_are_re_expressed(cli: Cli, small: Small, command: str) -> None:
    union = RW.replace("    bb = 2\n", "    bb = 2\n    X = log(bb)\n").replace(
        "    dd = 4\n", "    dd = 4\n    send_report(dd, 'weekly')\n")
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "re-expressed")]
