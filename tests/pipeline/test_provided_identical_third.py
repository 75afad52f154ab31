"""Two PRs making the same change, and a third conflicting with them whose side the union takes (h249).

On huggingface/trl (h245's trial), #6283 and #6284 share one head, and #6286 changes the same lines: a union of the
three settled for #6286's side was warned `lacks lines 1816-1847 of pr/6283's hunk ... no other PR it folds
changes those lines` (and the same of #6284's), though #6286 does. A change two PRs make alike is outside the
conflict git's merge shows between those two (h186's review: Regions.shared), but not outside one with a third PR
meeting it: that PR's side taken, the shared lines went with the rest of the side not taken. Judged as one PR: as
the union of one of them and the third says. Still warned: the shared change dropped where the third PR meets none
of it, and where the union keeps neither side."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, git  # noqa: F401 (a fixture)
from tests.pipeline.test_provided_repeats import _absent

pytestmark = pytest.mark.usefixtures("git")     # each test under git 2.39 and 2.47

G = ("def f(rows):\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n\n\n"
     "def g():\n    return 0\n\n\ndef h():\n    return 'x'\n")
# pr/1 (and its duplicates) replaces `b = 2` by two lines, and changes h; pr/2 makes `b = 5`, and changes g
DUP = G.replace("    b = 2\n", "    b = 20\n    b += 1\n").replace("return 'x'", "return 'y'")
THIRD = G.replace("    b = 2\n", "    b = 5\n").replace("return 0", "return 2")
TAKEN = THIRD.replace("return 'x'", "return 'y'")     # pr/2's side taken at b, every other change kept


def _run(cli: Cli, small: Small, prs: dict[int, str], union: str, supersedes: list[int] | None = None) -> dict:
    """PRS (number -> m.py) from G, a union of them (in the order SUPERSEDES, default PRS') holding UNION: the JSON
    report of sync --dry-run."""
    b = small.base = small.up.commit({"m.py": G}, "base", parent="main", ref="refs/heads/main")
    for number, text in prs.items():
        small.pr(number, {"m.py": text}, parent=b)
    commit = small.up.commit({"m.py": union}, "union", parent=b, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    folded = supersedes or list(prs)
    small.manifest([*({"pr": n} for n in folded), {"carry": "union", "commit": commit, "supersedes": folded}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    return report


def test_one_pr_and_a_third_whose_side_the_union_takes_is_no_loss(cli: Cli, small: Small) -> None:
    # what the duplicates must be judged as
    assert _lines(_run(cli, small, {1: DUP, 2: THIRD}, TAKEN)) == []


@pytest.mark.parametrize("order", [[1, 3, 2], [2, 1, 3], [1, 2, 3]])
def test_two_identical_prs_and_a_third_whose_side_the_union_takes_is_no_loss(cli: Cli, small: Small,
                                                                             order: list[int]) -> None:
    r = _run(cli, small, {1: DUP, 3: DUP, 2: THIRD}, TAKEN, order)
    assert _lines(r) == [], r["warnings"]


def test_three_identical_prs_and_a_third_whose_side_the_union_takes_is_no_loss(cli: Cli, small: Small) -> None:
    assert _lines(_run(cli, small, {1: DUP, 3: DUP, 4: DUP, 2: THIRD}, TAKEN)) == []


def test_a_pr_holding_another_whole_and_a_third_whose_side_the_union_takes_is_no_loss(cli: Cli,
                                                                                      small: Small) -> None:
    # pr/3 makes only `b = 20` of pr/1's `b = 20` and `b += 1`: pr/2's `b = 5` meets both
    part = G.replace("    b = 2\n", "    b = 20\n").replace("return 'x'", "return 'y'")
    assert _lines(_run(cli, small, {1: DUP, 3: part, 2: THIRD}, TAKEN)) == []
    assert _lines(_run(cli, small, {3: part, 1: DUP, 2: THIRD}, TAKEN)) == []


def test_two_identical_prs_whose_change_the_union_keeps_are_no_loss(cli: Cli, small: Small) -> None:
    union = DUP.replace("return 0", "return 2")      # their side taken at b: pr/2 reconciled
    assert _lines(_run(cli, small, {1: DUP, 3: DUP, 2: THIRD}, union)) == []


def test_two_identical_prs_and_a_third_the_union_keeps_neither_of_are_warned(cli: Cli, small: Small) -> None:
    # `b = 2` put back: neither side (h183's review: identical PRs, neither kept, each "reconciled" by the other)
    union = TAKEN.replace("    b = 5\n", "    b = 2\n")
    r = _run(cli, small, {1: DUP, 3: DUP, 2: THIRD}, union)
    assert _lines(r) == [("pr/1", [3, 4]), ("pr/3", [3, 4])], r["warnings"]


def test_two_identical_prs_change_the_union_drops_outside_the_conflict_is_warned(cli: Cli, small: Small) -> None:
    # pr/2's side taken at b, and the duplicates' `return 'y'` in h, which nothing else changes, dropped
    r = _run(cli, small, {1: DUP, 3: DUP, 2: THIRD}, THIRD)
    assert _lines(r) == [("pr/1", [14, 14]), ("pr/3", [14, 14])], r["warnings"]


def test_a_shared_line_the_third_pr_does_not_meet_dropped_is_warned(cli: Cli, small: Small) -> None:
    # pr/1 sets a, b and c; pr/3 only a (as pr/1); pr/2 sets c = 5 next to pr/1's b, apart from pr/3's a: taking
    # pr/2's side at c leaves `a = 3` outside that conflict, and the union drops it
    one = G.replace("a = 1\n    b = 2\n    c = 3", "a = 3\n    b = 20\n    c = 30")
    three = G.replace("a = 1", "a = 3")
    two = G.replace("c = 3", "c = 5")
    r = _run(cli, small, {1: one, 3: three, 2: two}, two)
    assert _lines(r) == [("pr/1", [2, 4]), ("pr/3", [2, 2])], r["warnings"]
    message = _absent(r)[0][2]
    assert "lacks line 2 of its hunk m.py:2-4 (f)" in message, message


def test_a_third_prs_side_taken_in_one_conflict_and_the_duplicates_in_another_is_no_loss(cli: Cli,
                                                                                        small: Small) -> None:
    # the duplicates also make g `return 1`, pr/2 `return 2`: the union takes pr/2's b and their g
    dup = DUP.replace("return 0", "return 1")
    union = TAKEN.replace("return 2", "return 1")
    assert _lines(_run(cli, small, {1: dup, 2: THIRD}, union)) == []
    assert _lines(_run(cli, small, {1: dup, 3: dup, 2: THIRD}, union)) == []


def test_a_third_prs_side_kept_in_part_is_no_loss(cli: Cli, small: Small) -> None:
    # pr/2 makes `b = 5` and `b *= 2`; the union takes its side but for `b *= 2`
    two = THIRD.replace("    b = 5\n", "    b = 5\n    b *= 2\n")
    assert _lines(_run(cli, small, {1: DUP, 2: two}, TAKEN)) == []
    assert _lines(_run(cli, small, {1: DUP, 3: DUP, 2: two}, TAKEN)) == []
