"""What a fetch leaves under refs/carrytool: a ref that disappeared upstream disappears here too, so an
`--offline` run later never composes a stale head."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_sync import A_TWO, by_id, sync


def test_a_pr_ref_gone_upstream_is_missing_online_and_then_offline(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1, "on_missing": "skip"}])
    code, first = sync(cli, small, "--dry-run")
    assert code == 0 and by_id(first)["pr/1"]["status"] == "applied"
    fetched = [r for r in small.work.git("for-each-ref", "--format=%(refname)").split() if r.endswith("/pr/1")]
    assert len(fetched) == 1
    small.up.git("update-ref", "-d", "refs/pull/1/head")
    code, online = sync(cli, small, "--dry-run")
    assert code == 0 and by_id(online)["pr/1"]["reason"] == "missing"
    assert small.work.ref(fetched[0]) is None
    code, offline = sync(cli, small, "--dry-run", "--offline")
    assert code == 0 and by_id(offline)["pr/1"]["reason"] == "missing"
    assert offline["result"]["sha"] == online["result"]["sha"]


def test_a_fetched_pr_ref_naming_a_missing_object_is_bad_input_naming_the_entry(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 5\n"})
    small.pr(2, {"a.py": "y\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, _ = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0
    small.work.git("pack-refs", "--all")
    packed = small.work.path / "packed-refs"
    lines = [("1234567890" * 4 + " refs/carrytool/dev/pr/1") if line.endswith(" refs/carrytool/dev/pr/1") else line
             for line in packed.read_text().splitlines()]
    packed.write_text("\n".join(lines) + "\n")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run", "--offline")
    assert code == 2, report.get("error")
    assert "pr/1" in report["error"]["message"] and "missing object" in report["error"]["message"]
