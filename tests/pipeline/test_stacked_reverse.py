"""An earlier entry built on a later one (h265, a newcomer's trial on pylint: pr/11293 is built on pr/11294's head
and rewrites its lines, and the manifest lists 11293 first). pr/11294's whole change conflicts with pr/11293's, so
sync stopped on it and said "fold pr/11293, pr/11294 into a union", though pr/11293 already carries pr/11294's
change (a git merge chain finds pr/11294 merged). The conflict says which earlier entry holds its head, and the
next step is to remove its entry or move it before that one, not a union."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_sync import A_TWO, by_id, sync


def _reversed(small: Small) -> None:
    lower = small.pr(2, A_TWO)
    rewritten = {"a.py": "def f():\n    return 2  # and said so\n\n\ndef g():\n    return 2\n"}
    small.up.commit(rewritten, "pr 1, on pr 2", parent=lower, ref="refs/pull/1/head")
    small.manifest([{"pr": 1}, {"pr": 2}])          # the one built on the other first


def test_a_pr_an_earlier_entry_is_built_on_says_so_and_suggests_no_union(cli: Cli, small: Small) -> None:
    _reversed(small)
    code, report = sync(cli, small)
    entry = by_id(report)["pr/2"]
    assert code == 3 and entry["status"] == "conflict", report
    assert entry["detail"].endswith("; pr/1, before it, is built on it (its history holds this PR's head) and "
                                    "carries its change already"), entry["detail"]
    out = " ".join(cli("sync", "-m", small.manifest_path, "--repo", small.work.path).stdout.split())
    assert "next: pr/1 is built on pr/2 (its history holds pr/2's head) and carries its change already: remove " \
           "pr/2's entry from the manifest, or move it before pr/1" in out, out
    assert "union" not in out, out


def test_the_other_order_is_still_said_stacked(cli: Cli, small: Small) -> None:
    _reversed(small)
    small.manifest([{"pr": 2}, {"pr": 1}])
    code, report = sync(cli, small)
    entry = by_id(report)["pr/1"]
    assert code == 3 and "it is stacked on pr/2" in entry["detail"] and "carries its change" not in entry["detail"]


def test_explain_marks_the_pair_and_suggests_no_union(cli: Cli, small: Small) -> None:
    _reversed(small)
    assert sync(cli, small)[0] == 3                 # fetches what --offline reads
    code, ex = cli.json("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path)
    [pair] = [o for o in ex["overlaps"] if o["entries"] == ["pr/1", "pr/2"]]
    assert pair["kind"] == "conflict" and pair.get("held") is True and "stacked" not in pair, pair
    text = cli("explain", "pr/2", "--offline", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "consider a union" not in text, text
    plan = " ".join(cli("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path).stdout.split())
    assert "pr/1 x pr/2 (the earlier is built on the later's head: it carries the later's change already)" in plan
