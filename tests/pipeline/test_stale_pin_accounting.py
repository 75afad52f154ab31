"""A pinned PR (`head:`) a union supersedes whole, refolded at the PR's new head (what `stale-pin` says to do): the
union folds the PR's ref, and sync judges the fold against the ref (h251); its accounting of what the union
carries of the PR read the pin's hunks, and warned `provided-absent` of a hunk the PR dropped since, "the PR moved
since" the fold, though the fold is at its head (h253's review)."""

from __future__ import annotations

from tests.conftest import Cli, Small


def test_a_hunk_the_pr_dropped_after_its_pin_is_not_said_lost_by_a_union_folded_at_its_head(
        cli: Cli, small: Small) -> None:
    good = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c one\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})
    small.manifest([{"pr": 1, "head": good}, {"pr": 2}])
    args = ("-m", str(small.manifest_path), "--repo", str(small.work.path))
    assert cli("union", "new", "u", "1", "2", *args).exit_code == 0
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n", "docs/c.txt": "c\n"}, parent=good,
                     message="pr 1, pushed again without its docs change")
    assert cli("union", "compose", "u", *args).exit_code == 0
    assert f"head: {moved}" in small.manifest_path.read_text()
    code, out = cli.json("sync", *args)
    assert code == 0 and out["ok"], out
    kinds = sorted(w["kind"] for w in out["warnings"])
    assert kinds == ["stale-pin"], out["warnings"]
