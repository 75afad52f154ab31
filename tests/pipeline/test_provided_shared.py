"""A change two PRs make alike, inside hunks that are not identical, is neither's region reconciled (h186's review of
the union check).

pr/2, stacked on pr/1, makes pr/1's change and one of its own on the next line: one -U0 hunk. Each PR's hunk met
the other's and read as reconciled, where git's merge leaves the shared line outside the conflict (only the next
line conflicts): a union putting `a = 1` back lost both PRs' change, exit 0 and nothing said."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, git  # noqa: F401 (a fixture)
from tests.pipeline.test_provided_repeats import _absent, _run
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_places import HUNK

pytestmark = pytest.mark.usefixtures("git")     # each test under git 2.39 and 2.47

# pr/1 changes `a = 1` to `a = 3`; pr/2, stacked on it, also `b = 2` to `b = 5`: one -U0 hunk of two lines
G = "def f():\n    a = 1\n    b = 2\n    return a + b\n\n\ndef g():\n    return 0\n"
A3 = G.replace("a = 1", "a = 3")
A3B5 = A3.replace("b = 2", "b = 5")


def test_a_change_two_prs_share_in_hunks_not_alike_that_the_union_drops_is_warned(cli: Cli, small: Small) -> None:
    r = _run(cli, small, A3, A3B5, G.replace("b = 2", "b = 5"), base=G)
    assert _lines(r) == [("pr/1", [2, 2]), ("pr/2", [2, 3])], r["warnings"]
    message = _absent(r)[1][2]     # pr/1's hunk is all of its change pr/2 shares: no side of a conflict
    # pr/2's `b = 5` stands: the line lost is named (h197: "lacks its hunk m.py:2-3")
    assert "lacks line 2 of its hunk m.py:2-3 (f), in no region carry/union reconciled" in message, message
    assert "lacks its hunk m.py:2 (f), in no region" in _absent(r)[0][2], _absent(r)[0][2]


def test_a_change_two_prs_share_in_hunks_not_alike_that_the_union_keeps_is_no_loss(cli: Cli, small: Small) -> None:
    assert _lines(_run(cli, small, A3, A3B5, A3B5, base=G)) == []


def test_a_shared_change_lost_beside_a_conflict_settled_for_one_side_is_warned(cli: Cli, small: Small) -> None:
    # pr/1 sets b = 7, pr/2 b = 5 (a conflict: the union takes pr/2's); both set a = 3, which the union drops
    one = A3.replace("b = 2", "b = 7")
    r = _run(cli, small, one, A3B5, G.replace("b = 2", "b = 5"), base=G)
    assert _lines(r) == [("pr/1", [2, 3]), ("pr/2", [2, 3])], r["warnings"]
    assert all("lacks line 2 of its hunk m.py:2-3 (f)" in m for _e, _l, m in _absent(r)), r["warnings"]


def test_a_conflict_settled_for_one_side_keeping_the_shared_change_is_reconciled(cli: Cli, small: Small) -> None:
    one = A3.replace("b = 2", "b = 7")
    assert _lines(_run(cli, small, one, A3B5, A3B5, base=G)) == []


def test_a_shared_change_put_back_at_a_stop_is_said_by_continue(cli: Cli, tmp_path: Path) -> None:
    # the fold stops on b (git leaves `a = 3` outside the conflict); the maintainer takes b = 5 and also puts
    # `a = 1` back, outside the conflict
    prs = TwoPrs(tmp_path, {"m.py": G}, {"m.py": A3.replace("b = 2", "b = 7")}, {"m.py": A3B5})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    text = (prs.scratch / "m.py").read_text()
    [hunk] = HUNK.findall(text)
    assert "    a = 3\n" + hunk in text, text
    (prs.scratch / "m.py").write_text(text.replace(hunk, "    b = 5\n").replace("a = 3", "a = 1"))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks line 2 of pr/1's hunk m.py:2-3 (f)" in out, out
    assert "warning: the union lacks line 2 of pr/2's hunk m.py:2-3 (f)" in out, out
    status = cli("union", "status", "u", *args)
    said = status.stdout + status.stderr
    assert "warning: the union lacks line 2 of pr/1's hunk m.py:2-3 (f)" in said, said


# h194's review: the union writes its own words at the conflict (`b = 6`, neither PR's) and puts `a = 1` back: the
# union's hunk meets each PR's, so the whole hunk read as re-expressed, the shared `a = 3` with it
B7, B6 = A3.replace("b = 2", "b = 7"), G.replace("b = 2", "b = 6")


def test_a_shared_change_lost_beside_a_conflict_settled_in_the_unions_own_words_is_warned(cli: Cli,
                                                                                           small: Small) -> None:
    r = _run(cli, small, B7, A3B5, B6, base=G)
    assert _lines(r) == [("pr/1", [2, 3]), ("pr/2", [2, 3])], r["warnings"]
    assert all("lacks line 2 of its hunk m.py:2-3 (f)" in m for _e, _l, m in _absent(r)), r["warnings"]


def test_a_conflict_settled_in_the_unions_own_words_keeping_the_shared_change_is_no_loss(cli: Cli,
                                                                                          small: Small) -> None:
    assert _lines(_run(cli, small, B7, A3B5, A3.replace("b = 2", "b = 6"), base=G)) == []


def test_a_shared_change_the_union_rewrites_beside_its_own_words_is_its_own(cli: Cli, small: Small) -> None:
    # the union's hunk changes `a = 1` too (`a = 4`): its words for the shared line, not a loss
    assert _lines(_run(cli, small, B7, A3B5, B6.replace("a = 1", "a = 4"), base=G)) == []


def test_a_shared_change_put_back_beside_a_resolution_of_ones_own_is_said_by_continue(cli: Cli,
                                                                                       tmp_path: Path) -> None:
    prs = TwoPrs(tmp_path, {"m.py": G}, {"m.py": B7}, {"m.py": A3B5})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    text = (prs.scratch / "m.py").read_text()
    [hunk] = HUNK.findall(text)
    (prs.scratch / "m.py").write_text(text.replace(hunk, "    b = 6\n").replace("a = 3", "a = 1"))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks line 2 of pr/1's hunk m.py:2-3 (f)" in out, out
    assert "warning: the union lacks line 2 of pr/2's hunk m.py:2-3 (f)" in out, out


def test_a_resolution_of_ones_own_keeping_the_shared_change_says_nothing(cli: Cli, tmp_path: Path) -> None:
    prs = TwoPrs(tmp_path, {"m.py": G}, {"m.py": B7}, {"m.py": A3B5})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    text = (prs.scratch / "m.py").read_text()
    [hunk] = HUNK.findall(text)
    (prs.scratch / "m.py").write_text(text.replace(hunk, "    b = 6\n"))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0 and "warning" not in out and "note:" not in out, out
    code, sync = cli.json("sync", "--dry-run", *args)
    assert code == 0 and not [w for w in sync["warnings"] if w["kind"] == "provided-absent"], sync
