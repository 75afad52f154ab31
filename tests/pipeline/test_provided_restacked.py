"""A union of two stacked PRs, the earlier entry built on the later's head (h265's pylint trial: pr/11293 holds
pr/11294's head and inserts its own functions in the middle of pr/11294's; the union took pr/11293's version).
pr/2's hunk no longer stands as one block in the union's tree, because pr/1's own commits since pr/2's head split
it, and it was warned `provided-absent` ("no other PR it folds changes those lines"). Its lines as pr/1's head
holds them (pr/1's version of them) standing there: reconciled by pr/1. The union lacking both versions: still
warned."""

from __future__ import annotations

from tests.conftest import Cli, Small

BASE = "def head():\n    return 0\n\n\ndef tail():\n    return 9\n"
FUNCS = ("def split(names):\n    grouped = {}\n    for name in names:\n        grouped[name] = name.upper()\n"
         "    return grouped\n\n\n"
         "def member(node, names):\n    found = split(names)\n    return node in found\n\n\n")
LOWER = BASE.replace("def tail", FUNCS + "def tail")                    # pr/2: its functions, one hunk
GUARD = "def guard(node):\n    return member(node, ('six.PY2',))\n\n\n"
UPPER = LOWER.replace("def member", GUARD + "def member")              # pr/1, on pr/2's head: its own inside it


def _run(cli: Cli, small: Small, union: str, lower_text: str = LOWER, upper_text: str = UPPER) -> dict:
    b = small.base = small.up.commit({"m.py": BASE}, "base", parent="main", ref="refs/heads/main")
    lower = small.pr(2, {"m.py": lower_text}, parent=b)
    small.up.commit({"m.py": upper_text}, "pr 1, on pr 2", parent=lower, ref="refs/pull/1/head")
    commit = small.up.commit({"m.py": union}, "union", parent=b, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    return report


def _absent(report: dict) -> list[tuple[str, list[int] | None]]:
    return [(w["entry"], w.get("lines")) for w in report["warnings"] if w["kind"] == "provided-absent"]


def test_a_hunk_the_pr_built_on_it_splits_is_reconciled_by_that_pr(cli: Cli, small: Small) -> None:
    assert _absent(_run(cli, small, UPPER)) == []


def test_the_union_lacking_both_versions_is_still_warned(cli: Cli, small: Small) -> None:
    # the union keeps pr/1's guard but drops `member` whole: neither PR's version of it stands
    union = UPPER.replace("def member(node, names):\n    found = split(names)\n    return node in found\n\n\n", "")
    found = _absent(_run(cli, small, union))
    assert [entry for entry, _lines in found] == ["pr/1", "pr/2"], found


def test_the_union_lacking_the_lines_pr_1_did_not_touch_is_still_warned(cli: Cli, small: Small) -> None:
    # pr/1's guard there, but a line of pr/2's `split` both heads hold, dropped
    union = UPPER.replace("        grouped[name] = name.upper()\n", "")
    found = _absent(_run(cli, small, union))
    assert "pr/2" in [entry for entry, _lines in found], found


def test_a_hunk_the_upper_pr_leaves_alone_is_still_warned_where_its_text_stands_elsewhere(cli: Cli, small: Small
                                                                                         ) -> None:
    # pr/2 adds `found = split(names)` to tail too, a line `member` has; pr/1 changes only its own function and
    # `member`'s return; the union drops tail's copy: pr/1's version of that hunk is pr/2's, not there
    lower = LOWER.replace("def tail():\n", "def tail():\n    found = split(names)\n")
    upper = lower.replace("def member", GUARD + "def member")
    union = upper.replace("def tail():\n    found = split(names)\n", "def tail():\n")
    report = _run(cli, small, union, lower, upper)
    assert "pr/2" in [entry for entry, _lines in _absent(report)], report["warnings"]
