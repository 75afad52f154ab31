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
@pytest.mark.parametrize("kept", ["    X = log(bb)\n", "    X = log(b)\n"], ids=["re-expressed", "verbatim"])
def test_a_line_dropped_in_upstreams_rewrite_is_not_another_prs_line_there(cli: Cli, small: Small, command: str,
                                                                           kept: str) -> None:
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


# h215 (h210's rule): a line of the union's own merging both PRs' changes in one (pr/1's `log(...)` and pr/2's
# `'weekly'` report, on the rewrite) counted for the PR it is most akin to alone, and the other was warned
# provided-absent; it carries each PR's own words (names and strings neither base has), so it is each one's
@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("at", ["    bb = 2\n", "    dd = 4\n"], ids=["at-pr1s-place", "at-pr2s-place"])
def test_one_line_of_the_unions_merging_both_prs_changes_is_each_ones(cli: Cli, small: Small, command: str,
                                                                      at: str) -> None:
    union = RW.replace(at, at + "    report(log(bb), 'weekly')\n")
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command=command)
    assert _lines(r) == [], r["warnings"]
    if command == "explain":
        assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "re-expressed")]


# but a word of pr/2's line that is no word of its own (`d`, a name the base has; `report` inside `send_report`;
# `'weekly'` in a comment) is no form of it: pr/1's line in new words there still leaves pr/2's out
@pytest.mark.parametrize("kept", ["    X = log(dd, d)\n", "    X = report(log(bb))\n",
                                  "    X = log(bb)  # a 'weekly' one\n"],
                         ids=["base-name", "part-of-a-name", "in-a-comment"])
def test_a_line_sharing_only_common_words_with_a_dropped_prs_line_is_not_its_form(cli: Cli, small: Small,
                                                                                    kept: str) -> None:
    union = RW.replace("    bb = 2\n", "    bb = 2\n" + kept)
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
    assert _coverage(r) == [("pr/1", [7, 7], "re-expressed"), ("pr/2", [9, 9], "absent")]


# nor is a word the file has elsewhere, before the PR (its base), or on upstream's side (the union's base): pr/2's
# `'weekly'` there, the union's line takes it from the file, not from pr/2's change
SAYS = "\n\nPERIOD = 'weekly'\n"


@pytest.mark.parametrize("where", ["both", "pr-base", "upstream"])
def test_a_word_of_a_dropped_prs_line_the_file_has_elsewhere_is_not_its_form(cli: Cli, small: Small,
                                                                             where: str) -> None:
    base = F + SAYS if where != "upstream" else F
    up = RW + SAYS if where != "pr-base" else RW
    one = base.replace("    b = 2\n", "    b = 2\n    X = log(b)\n")
    two = base.replace("    d = 4\n", "    d = 4\n    send_report(d, 'weekly')\n")
    union = up.replace("    bb = 2\n", "    bb = 2\n    X = log(bb, 'weekly')\n")
    r = _on_bases(cli, small, one, two, union, base=base, base2=None, up=up, command="explain")
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]


def test_a_word_both_prs_bring_is_not_the_dropped_ones_form(cli: Cli, small: Small) -> None:
    # pr/2 logs too (`log(d, 'weekly')`): `log` is either PR's word, so the union's `X = log(bb)` is pr/1's only
    two = F.replace("    d = 4\n", "    d = 4\n    log(d, 'weekly')\n")
    union = RW.replace("    bb = 2\n", "    bb = 2\n    X = log(bb)\n")
    r = _on_bases(cli, small, ONE, two, union, base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == [("pr/2", [9, 9])], r["warnings"]
