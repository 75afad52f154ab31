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
