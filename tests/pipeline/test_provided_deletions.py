"""A union's check of a PR hunk that only removes lines (helper-144: pr/1 deleted a line of `g`, the union
changed `g` elsewhere and kept it; sync said nothing, explain called it re-expressed, its drop was stale).
The removed lines still standing where the PR removes them (in their def/class, else between the same
neighbours) are the deletion left out; the same line elsewhere is not."""

from __future__ import annotations

from carrytool.pipeline.leftout import LeftOut
from tests.conftest import Cli, Small

G = ("def g():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    f = 6\n    g = 7\n    return a\n\n\n"
     "def h():\n    b = 2\n    return 0\n")
M = "import os\n\nA = 1\nFLAG = True\nB = 2\n\nC = 3\nD = 4\n\nY = 8\nZ = 9\n"


def _sync(cli: Cli, small: Small, path: str, text: str, prs: dict[int, str], union: str,
          drops: list | None = None) -> dict:
    """Sync PRS (number -> PATH's text) under a union committed by hand (PATH: UNION) superseding them all, on a
    base where PATH is TEXT, pr/1's item declaring DROPS: the JSON report."""
    small.base = small.up.commit({path: text}, "base 2", parent="main", ref="refs/heads/main")
    for number, content in prs.items():
        small.pr(number, {path: content})
    commit = small.up.commit({path: union}, "union", parent=small.base, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    first = {"pr": 1, "drops": drops} if drops else 1
    small.manifest([*({"pr": n} for n in prs),
                    {"carry": "union", "commit": commit, "supersedes": [first, *(n for n in prs if n != 1)]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    return report


def _absent(report: dict) -> list[tuple[str, str, list[int]]]:
    return [(w["entry"], w["file"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


def _stale(report: dict) -> list[tuple[int, str]]:
    """The stale drops: a drop of a deletion the union carries covers nothing it lacks (a region it reconciled
    would make it dropped on purpose: the union's own hunk meets every deletion it carries)."""
    entry = next(e for e in report["entries"] if e["id"] == "carry/union")
    assert "dropped_on_purpose" not in entry, entry
    return [(w["pr"], w["file"]) for w in report["warnings"] if w["kind"] == "stale-drop"]


def test_a_deletion_the_union_leaves_out_is_warned_and_one_it_carries_is_not(cli: Cli, small: Small) -> None:
    # pr/1 removes g's `b = 2` (h keeps one: not pr/1's), pr/2 g's `f = 6`; the union carries pr/1's only
    union = G.replace("    b = 2\n", "", 1).replace("d = 4", "d = 40")
    report = _sync(cli, small, "g.py", G, {1: G.replace("    b = 2\n", "", 1), 2: G.replace("    f = 6\n", "")}, union,
                   [{"file": "g.py", "in": "g", "why": "b stays"}])
    assert _absent(report) == [("pr/2", "g.py", [6, 6])], report["warnings"]
    assert _stale(report) == [(1, "g.py")]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert warning["message"].startswith(
        "carry/union supersedes pr/2 but the composed tree still has the line pr/2 removes at g.py:6 (g) "
        "(g.py:7 in its base), in no region carry/union reconciled"), warning["message"]
    assert 'drops: [{file: g.py, in: g, why: "..."}]' in warning["message"]


def test_a_module_level_line_the_same_between_other_neighbours_is_not_the_prs(cli: Cli, small: Small) -> None:
    # pr/1 removes FLAG (from between A and B); the union does and declares its own FLAG between C and D;
    # pr/2 removes `Y = 8`, which the union keeps
    union = M.replace("FLAG = True\n", "").replace("C = 3\n", "C = 3\nFLAG = True\n")
    report = _sync(cli, small, "m.py", M, {1: M.replace("FLAG = True\n", ""), 2: M.replace("Y = 8\n", "")}, union,
                   [{"file": "m.py", "why": "FLAG stays"}])
    assert _absent(report) == [("pr/2", "m.py", [9, 9])], report["warnings"]
    assert _stale(report) == [(1, "m.py")]


def test_a_deletion_in_a_region_the_union_reconciled_is_not_warned(cli: Cli, small: Small) -> None:
    # pr/1 removes `b = 2` and `f = 6`; pr/2 changes `c = 3`, next to `b = 2`: the union took pr/2's side there
    pr1 = G.replace("    b = 2\n", "", 1).replace("    f = 6\n", "")
    report = _sync(cli, small, "g.py", G, {1: pr1, 2: G.replace("c = 3", "c = 30")}, G.replace("c = 3", "c = 30"))
    assert _absent(report) == [("pr/1", "g.py", [5, 5])], report["warnings"]


def test_a_drop_covering_a_deletion_accounts_it_dropped_and_is_not_stale(cli: Cli, small: Small) -> None:
    union = G.replace("d = 4", "d = 40")
    report = _sync(cli, small, "g.py", G, {1: G.replace("    b = 2\n", "", 1)}, union,
                   [{"file": "g.py", "in": "g", "why": "b stays"}])
    assert [w["kind"] for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")] == []
    entry = next(e for e in report["entries"] if e["id"] == "carry/union")
    assert entry["dropped_on_purpose"] == [
        {"pr": 1, "file": "g.py", "lines": [2, 2], "scopes": ["g"], "in": "g", "why": "b stays"}]


def test_a_deletion_moved_within_its_def_is_carried(cli: Cli, small: Small) -> None:
    # pr/1 moves `b = 2` to the end of g (a deletion hunk and an addition): the union carries it as it is
    moved = G.replace("    b = 2\n", "", 1).replace("    g = 7\n", "    g = 7\n    b = 2\n")
    report = _sync(cli, small, "g.py", G, {1: moved, 2: G.replace("    f = 6\n", "")},
                   moved.replace("d = 4", "d = 40"), [{"file": "g.py", "in": "g", "why": "b stays"}])
    assert _absent(report) == [("pr/2", "g.py", [6, 6])], report["warnings"]
    assert _stale(report) == [(1, "g.py")]


def test_the_clause_says_a_deletion_leaves_its_lines_standing() -> None:
    assert LeftOut("pr/1", "g.py", (2, 2), ("g",), removed=(3, 4)).lacking() == \
        "still has the lines pr/1 removes at g.py:2 (g) (g.py:3-4 in its base)"
    assert LeftOut("pr/1", "g.py", (2, 3), ("g",)).lacking() == "lacks pr/1's hunk g.py:2-3 (g)"
    assert LeftOut("pr/1", "g.py", (2, 3), ()).lacking("its") == "lacks its hunk g.py:2-3"
