"""Another PR's copy of a PR's line is that PR's where git's merge of the hunk onto the tree conflicts too (h186's
review of the union check).

Once upstream edited the line next to a PR's place, git's merge of the PR's hunk onto the union's tree conflicted
there, and the count of the line's copies in the def left out the other folded PRs' (only a clean merge asked for
them): pr/2's copy, the one the union kept, stood for pr/1's, exit 0; the same for a deletion (the copy pr/2
deleted elsewhere stood for the one pr/1 deletes, which the union kept)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SECOND_GIT, Cli, Small
from tests.pipeline.test_provided_repeats import _absent, _run
from tests.union.fold_scenario import TwoPrs

GITS = ["system"] + (["2.47"] if SECOND_GIT else [])


@pytest.fixture(params=GITS)
def git(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test under the system git and, where the machine has it, git 2.47."""
    if request.param != "system":
        monkeypatch.setenv("PATH", f"{SECOND_GIT}:{os.environ['PATH']}")
    return request.param


def _lines(report: dict) -> list[tuple[str, list[int] | None]]:
    return [(entry, lines) for entry, lines, _m in _absent(report)]


# f sets names; pr/1 logs after b, pr/2 after g (one text, no conflict); upstream later edits `c = 3`, the line
# right after pr/1's place
F = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    g = 6\n    return a\n"
ONE = F.replace("    b = 2\n", "    b = 2\n    X = log()\n")
TWO = F.replace("    g = 6\n", "    g = 6\n    X = log()\n")
LATER = F.replace("c = 3", "c = 30")


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_another_prs_copy_hides_no_loss_once_upstream_edits_the_next_line(cli: Cli, small: Small, git: str,
                                                                          command: str) -> None:
    r = _run(cli, small, ONE, TWO, TWO, base=F, later=LATER, command=command)     # the union keeps pr/2's only
    assert _lines(r) == [("pr/1", [4, 4])], r["warnings"]


def test_both_copies_kept_where_upstream_edited_the_next_line_is_no_loss(cli: Cli, small: Small, git: str) -> None:
    # the union on upstream's edit (made after it, or composed again since: on the old one it conflicts)
    union = ONE.replace("    g = 6\n", "    g = 6\n    X = log()\n").replace("c = 3", "c = 30")
    r = _run(cli, small, ONE, TWO, union, base=F, up=LATER)
    assert _lines(r) == [], r["warnings"]


# the same for a deletion: f logs twice; pr/1 deletes the log after b, pr/2 the one after g
LOGS = F.replace("    b = 2\n", "    b = 2\n    X = log()\n").replace("    g = 6\n", "    g = 6\n    X = log()\n")


def test_another_prs_deleted_copy_hides_no_kept_line_once_upstream_edits_the_next_line(cli: Cli, small: Small,
                                                                                       git: str) -> None:
    one = LOGS.replace("    b = 2\n    X = log()\n", "    b = 2\n")
    two = LOGS.replace("    g = 6\n    X = log()\n", "    g = 6\n")
    r = _run(cli, small, one, two, two, base=LOGS, later=LOGS.replace("c = 3", "c = 30"))
    [(entry, lines, message)] = _absent(r)
    assert (entry, lines) == ("pr/1", [3, 3]), r["warnings"]
    assert "still has the line pr/1 removes at m.py:3 (f) (m.py:4 in its base)" in message, message


def test_both_deletions_kept_where_upstream_edited_the_next_line_is_no_loss(cli: Cli, small: Small, git: str) -> None:
    one = LOGS.replace("    b = 2\n    X = log()\n", "    b = 2\n")
    two = LOGS.replace("    g = 6\n    X = log()\n", "    g = 6\n")
    union = one.replace("    g = 6\n    X = log()\n", "    g = 6\n").replace("c = 3", "c = 30")
    r = _run(cli, small, one, two, union, base=LOGS, up=LOGS.replace("c = 3", "c = 30"))
    assert _lines(r) == [], r["warnings"]


def test_a_stacked_prs_line_right_after_the_lower_ones_is_one_copy(cli: Cli, small: Small, git: str) -> None:
    # pr/2, built on pr/1, adds a line right after pr/1's; upstream edited the line after both; the union keeps both
    two = ONE.replace("    X = log()\n", "    X = log()\n    Y = log()\n")
    r = _run(cli, small, ONE, two, two.replace("c = 3", "c = 30"), base=F, up=LATER)
    assert _lines(r) == [], r["warnings"]


# h197: the union made on upstream's edit (`c = 30` already there when it was composed): pr/1's place does not map
# into the union's base, and pr/2's hunk in the same def "reconciled" the line the union dropped, exit 0; the two
# hunks lie apart in the PRs' base, so no side of theirs was taken
@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("two", [TWO, F.replace("    g = 6\n", "    g = 6\n    Y = log()\n")], ids=["copy", "other"])
def test_a_line_dropped_by_a_union_made_on_upstreams_edit_next_to_it_is_warned(cli: Cli, small: Small, git: str,
                                                                               command: str, two: str) -> None:
    r = _run(cli, small, ONE, two, two.replace("c = 3", "c = 30"), base=F, up=LATER, command=command)
    assert _lines(r) == [("pr/1", [4, 4])], r["warnings"]
    if command == "explain":    # the copy too: the union's diff adds pr/1's text (pr/2's copy), not pr/1's line (h203)
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "absent")]


def test_a_line_another_pr_changes_next_to_upstreams_edit_is_still_reconciled(cli: Cli, small: Small,
                                                                              git: str) -> None:
    # pr/2 sets b = 7, the line pr/1's goes after (a conflict of theirs: the union took pr/2's side); upstream's
    # `c = 30` put pr/1's place out of the union's base map; in their base the two hunks meet
    two = F.replace("b = 2", "b = 7")
    r = _run(cli, small, ONE, two, two.replace("c = 3", "c = 30"), base=F, up=LATER, command="explain")
    assert _lines(r) == [], r["warnings"]
    [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "reconciled")]


def test_a_line_dropped_at_a_stop_on_upstreams_edit_next_to_it_is_said_by_continue_and_sync(
        cli: Cli, tmp_path: Path, git: str) -> None:
    # the fold stops on pr/1 against upstream's `c = 30`; the maintainer keeps upstream's side, pr/1's line dropped;
    # pr/2's copy of it merges cleanly after g
    prs = TwoPrs(tmp_path, {"m.py": F}, {"m.py": ONE}, {"m.py": TWO})
    prs.up.commit({"m.py": LATER}, "upstream", parent=prs.base, ref="refs/heads/main")
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    (prs.scratch / "m.py").write_text(LATER)
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks pr/1's hunk m.py:4 (f), in no region it reconciled" in out, out
    code, report = cli.json("sync", *args, "--dry-run")
    assert code == 0, report
    assert _lines(report) == [("pr/1", [4, 4])], report["warnings"]


def _on_bases(cli: Cli, small: Small, one: str, two: str, union: str, *, base: str, base2: str | None, up: str,
              command: str, order: tuple[int, int] = (1, 2)) -> dict:
    """pr/1 from BASE, pr/2 from BASE2 (upstream's next commit, when given; else BASE too), upstream then moved
    on to UP, and a union of both committed by hand on it (m.py: UNION): the JSON report of COMMAND. ORDER: the
    PRs' entries and the union's `supersedes`, in that order."""
    b = small.base = small.up.commit({"m.py": base}, "base", parent="main", ref="refs/heads/main")
    b2 = b if base2 is None else small.up.commit({"m.py": base2}, "newer", parent=b, ref="refs/heads/main")
    small.pr(1, {"m.py": one}, parent=b)
    small.pr(2, {"m.py": two}, parent=b2)
    on = small.up.commit({"m.py": up}, "upstream", parent=b2, ref="refs/heads/main")
    commit = small.up.commit({"m.py": union}, "union", parent=on, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([*({"pr": n} for n in order), {"carry": "union", "commit": commit, "supersedes": list(order)}])
    code, report = cli.json(command, "-m", small.manifest_path, "--repo", small.work.path,
                            *(["--dry-run"] if command == "sync" else []))
    assert code == 0, report
    return report


# h204's review of h197: the mirror, pr/2's hunk out of the union's base map (upstream's `h = 70` right after its
# line), pr/1's far from it; with pr/2 on a newer base, pr/2's base did not map into pr/1's, and the shared def
# said the line the union dropped was "reconciled", exit 0
G = "import os\n\n\n" + F.replace("    g = 6\n", "    g = 6\n    h = 7\n")


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("newer", [False, True], ids=["one-base", "newer-base"])
def test_a_line_dropped_far_from_another_prs_next_to_upstreams_edit_is_warned(cli: Cli, small: Small, git: str,
                                                                              command: str, newer: bool) -> None:
    base2 = G.replace("import os", "import os, sys") if newer else None
    two = (base2 or G).replace("    g = 6\n", "    g = 6\n    Y = log()\n")
    up = (base2 or G).replace("h = 7", "h = 70")
    one = G.replace("    b = 2\n", "    b = 2\n    X = log()\n")
    r = _on_bases(cli, small, one, two, two.replace("h = 7", "h = 70"), base=G, base2=base2, up=up, command=command)
    assert _lines(r) == [("pr/1", [7, 7])], r["warnings"]
    if command == "explain":
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([7, 7], "absent")]


# h204's review of h197: pr/1 sets `b`, pr/2 `d`, apart in their base; upstream's `c = 30` between them joins them
# (the fold's merge of pr/2 shows both PRs' lines in one conflict) and the union settles it for pr/2's side: a
# region reconciled, not "no other PR it folds changes those lines or the next ones"
@pytest.mark.parametrize("command", ["sync", "explain"])
def test_lines_joined_into_one_conflict_by_upstreams_edit_between_them_are_reconciled(cli: Cli, small: Small,
                                                                                      git: str, command: str) -> None:
    one, two = F.replace("b = 2", "b = clamp(2)"), F.replace("d = 4", "d = clamp(4)")
    union = LATER.replace("d = 4", "d = clamp(4)")
    r = _on_bases(cli, small, one, two, union, base=F, base2=None, up=LATER, command=command)
    assert _lines(r) == [], r["warnings"]
    if command == "explain":
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([3, 3], "reconciled")]


def test_lines_joined_by_upstreams_edit_meet_at_the_folds_stop_and_are_reconciled_there(cli: Cli, tmp_path: Path,
                                                                                        git: str) -> None:
    # the same through the fold: it stops on pr/1 against upstream's `c = 30` (kept with pr/1's), then on pr/2,
    # whose `d` meets both in one conflict; the maintainer settles it for pr/2's side
    one, two = F.replace("b = 2", "b = clamp(2)"), F.replace("d = 4", "d = clamp(4)")
    prs = TwoPrs(tmp_path, {"m.py": F}, {"m.py": one}, {"m.py": two})
    prs.up.commit({"m.py": LATER}, "upstream", parent=prs.base, ref="refs/heads/main")
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    (prs.scratch / "m.py").write_text(one.replace("c = 3", "c = 30"))
    assert cli("union", "continue", "u", *args).exit_code == 3
    met = (prs.scratch / "m.py").read_text()
    assert "b = clamp(2)" in met.split("=======")[0] and "d = clamp(4)" in met.split("=======")[1], met
    (prs.scratch / "m.py").write_text(LATER.replace("d = 4", "d = clamp(4)"))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "lacks pr/1" not in out, out
    code, report = cli.json("sync", *args, "--dry-run")
    assert code == 0, report
    assert _lines(report) == [], report["warnings"]


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_line_dropped_next_to_upstreams_edit_is_not_the_unions_own_lines_elsewhere_in_the_def(
        cli: Cli, small: Small, git: str, command: str) -> None:
    # the union, made on upstream's `c = 30` right after pr/1's line, drops that line and writes a line of its own
    # two lines further down, apart from the conflict pr/1's merge met: no other form of pr/1's line (the shared
    # def read it as re-expressed)
    two = F.replace("return a", "return a + 0")
    union = LATER.replace("return a", "return a + 0").replace("e = 5", "e = compute(5)")
    r = _on_bases(cli, small, ONE, two, union, base=F, base2=None, up=LATER, command=command)
    assert _lines(r) == [("pr/1", [4, 4])], r["warnings"]


def test_a_line_next_to_upstreams_edit_the_union_writes_its_own_words_for_is_re_expressed(
        cli: Cli, small: Small, git: str) -> None:
    # its own line where pr/1's merge met upstream's `c = 30`: the maintainer's resolution there
    union = LATER.replace("    c = 30\n", "    Z = log_all()\n    c = 30\n").replace("return a", "return a + 0")
    r = _on_bases(cli, small, ONE, F.replace("return a", "return a + 0"), union, base=F, base2=None, up=LATER,
                  command="explain")
    assert _lines(r) == [], r["warnings"]
    [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "re-expressed")]


# h206: upstream's `c = 30` lands between pr/1's base and pr/2's; pr/1 sets `b` (next to `c`), pr/2, made on
# `c = 30`, sets `d` (next to it too). Folded pr/1 first, pr/1 meets upstream alone and pr/2 merges cleanly after
# it; pr/2 first, pr/1 meets both in one conflict. A union dropping pr/1's `b = clamp(2)` read "reconciled" by
# pr/2's side, as if folded pr/2 first, exit 0: the verdict hung on an order the union may not have folded in.
# pr/2's lines are apart from pr/1's (upstream's `c` between them), so none of its sides was taken against pr/1's
NEWER = F.replace("c = 3", "c = 30")


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("order", [(1, 2), (2, 1)], ids=["1-2", "2-1"])
@pytest.mark.parametrize("up", [NEWER, NEWER.replace("g = 6", "g = 6 ")], ids=["up-is-pr2s-base", "up-moved-on"])
def test_a_line_dropped_next_to_upstreams_edit_a_newer_prs_base_has_is_warned_in_either_order(
        cli: Cli, small: Small, git: str, command: str, order: tuple[int, int], up: str) -> None:
    one, two = F.replace("b = 2", "b = clamp(2)"), NEWER.replace("d = 4", "d = clamp(4)")
    r = _on_bases(cli, small, one, two, up.replace("d = 4", "d = clamp(4)"), base=F, base2=NEWER, up=up,
                  command=command, order=order)
    assert _lines(r) == [("pr/1", [3, 3])], r["warnings"]
    if command == "explain":
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([3, 3], "absent")]


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_line_a_newer_prs_change_meets_next_to_upstreams_edit_is_still_reconciled(cli: Cli, small: Small, git: str,
                                                                                    command: str) -> None:
    # pr/2, made on `c = 30`, sets `c = 31` itself: its line is the one next to pr/1's `b`, in any order one
    # conflict of theirs (and pr/1's with upstream's), settled for pr/2's side
    one, two = F.replace("b = 2", "b = clamp(2)"), NEWER.replace("c = 30", "c = 31")
    r = _on_bases(cli, small, one, two, two, base=F, base2=NEWER, up=NEWER, command=command)
    assert _lines(r) == [], r["warnings"]
    if command == "explain":
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([3, 3], "reconciled")]


def test_a_line_dropped_at_a_stop_against_upstream_alone_is_said_by_continue_and_sync(cli: Cli, tmp_path: Path,
                                                                                      git: str) -> None:
    # the fold of h206's case, pr/1 first: it stops on pr/1 against upstream's `c = 30`; the maintainer keeps
    # upstream's side, pr/1's `b` dropped; pr/2, made on `c = 30`, merges cleanly
    one = F.replace("b = 2", "b = clamp(2)")
    prs = TwoPrs(tmp_path, {"m.py": F}, {"m.py": one}, {"m.py": F})
    newer = prs.up.commit({"m.py": NEWER}, "upstream", parent=prs.base, ref="refs/heads/main")
    prs.up.commit({"m.py": NEWER.replace("d = 4", "d = clamp(4)")}, "two", parent=newer, ref="refs/pull/2/head")
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    (prs.scratch / "m.py").write_text(NEWER)
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks pr/1's hunk m.py:3 (f), in no region it reconciled" in out, out
    code, report = cli.json("sync", *args, "--dry-run")
    assert code == 0, report
    assert _lines(report) == [("pr/1", [3, 3])], report["warnings"]


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("written", ["    # log later\n", "    # X = log()\n    # TODO: log once c is set\n",
                                     '    """log later"""\n', '    # log\n    "once c is set"\n'],
                         ids=["comment", "commented-out", "a-string", "a-comment-and-a-string"])
def test_a_comment_where_upstreams_edit_met_a_prs_line_is_no_form_of_it(cli: Cli, small: Small, git: str,
                                                                         command: str, written: str) -> None:
    """h225: the union writes only a comment where pr/1's `X = log()` met upstream's `c = 30` (no other PR's hunk
    there): read as the maintainer's resolution, pr/1's call `re-expressed`, exit 0, nothing said. A comment does
    nothing; it re-expresses only a comment (lineroles), with other PRs' hunks beside it or none; nor does a string
    standing alone (h232: a docstring of its own, `log later`, was pr/1's call re-expressed)."""
    union = LATER.replace("    c = 30\n", written + "    c = 30\n").replace("return a", "return a + 0")
    r = _on_bases(cli, small, ONE, F.replace("return a", "return a + 0"), union, base=F, base2=None, up=LATER,
                  command=command)
    assert _lines(r) == [("pr/1", [4, 4])], r["warnings"]
    if command == "explain":
        [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
        assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "absent")]


@pytest.mark.parametrize(("said", "written"), [("    # c is set below\n", "    # c is set just below\n"),
                                               ('    "c is set below"\n', '    """c is set just below"""\n')],
                         ids=["a-comment", "a-string"])
def test_a_comment_where_upstreams_edit_met_a_prs_comment_is_its_new_form(cli: Cli, small: Small, git: str,
                                                                          said: str, written: str) -> None:
    # pr/1 only says something there: the union's words for it, comments or strings alike, are its new form
    union = LATER.replace("    c = 30\n", written + "    c = 30\n").replace("return a", "return a + 0")
    r = _on_bases(cli, small, F.replace("    b = 2\n", "    b = 2\n" + said), F.replace("return a", "return a + 0"),
                  union, base=F, base2=None, up=LATER, command="explain")
    assert _lines(r) == [], r["warnings"]
    [cov] = [c for c in r["coverage"] if c["pr"] == "pr/1"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "re-expressed")]
