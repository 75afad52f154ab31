"""A PR a union supersedes whole that upstream has merged since: explain and sync say so, as `union status`
does (h179, DeepSpeed: #6847 squash-merged; union status said "pr/6847 is merged upstream: drop it from
the union", explain and sync only "skipped (superseded): provided whole by carry/offload-union")."""

from __future__ import annotations

import json

from tests.conftest import Cli, Small


def test_explain_and_sync_say_a_superseded_pr_is_merged_upstream(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"docs/c.txt": "c, and more\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    where = ("-m", small.manifest_path, "--repo", small.work.path)
    made = cli("union", "new", "both", "1", "2", *where)
    assert made.exit_code == 0, made.stdout + made.stderr
    small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "x is 10 (#1)", parent=small.base, ref="refs/heads/main")
    [status] = json.loads(cli("union", "status", "both", *where, "--format", "json").stdout)
    assert status["merged_upstream"] == [1], status
    said = "upstream has merged it: drop it from the union (take it out of carry/both's `supersedes`, then " \
           "`carrytool union compose both`)"
    story = cli("explain", "pr/1", *where).stdout
    assert f"pr/1: skipped (superseded): provided whole by carry/both; {said}" in story, story
    assert "merged upstream" not in cli("explain", "pr/2", *where).stdout
    code, report = cli.json("sync", "--dry-run", *where)
    assert code == 0, report
    details = {entry["id"]: entry.get("detail") for entry in report["entries"]}
    assert details["pr/1"] == f"provided whole by carry/both; {said}", details
    assert details["pr/2"] == "provided whole by carry/both", details
    text = cli("sync", "--dry-run", *where).stdout
    assert "by carry/both; merged upstream: drop it from the union" in text, text
