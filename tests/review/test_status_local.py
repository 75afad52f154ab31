"""status with a local-path upstream (`upstream: {url: ../up}`), which has no forge (h185: `status --offline` was
exit 2, "cannot tell the forge project from upstream.url"): offline, each PR is told from this repository, as a
PR the forge cache does not know; online it is exit 2 saying what to run."""

from __future__ import annotations

import json

from tests.conftest import Cli, Small


def build(cli: Cli, small: Small) -> dict[str, str]:
    """PR 1 open, PR 2 merged upstream by a merge commit, PR 3 never fetched; one sync fetched 1 and 2."""
    heads = {"p1": small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"}),
             "p2": small.pr(2, {"docs/c.txt": "c2\n"})}
    heads["merge"] = small.up.commit({"docs/c.txt": "c2\n"}, "Merge #2", parents=["main", heads["p2"]],
                                     parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}])
    sync = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert sync.exit_code == 0, sync.output
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    return heads


def test_offline_status_of_a_local_upstream_tells_each_pr_from_this_repository(cli: Cli, small: Small) -> None:
    heads = build(cli, small)
    args = ("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    code, out = cli.json(*args)
    assert code == 0, out
    assert out["source"] == "cache"
    by_id = {e["id"]: e for e in out["entries"]}
    assert {i: (e["state"], e["suggestion"], e["head"], e["merged_as"], e["landed"]) for i, e in by_id.items()} == {
        "pr/1": ("unknown", "keep", heads["p1"], None, None),
        "pr/2": ("unknown", "investigate", heads["p2"], None, None),
        "pr/3": ("unknown", "investigate", None, None, None)}
    assert by_id["pr/1"]["why"] == (
        f"upstream.url is a local path: no forge says the PR's state; as this repository tells, its head "
        f"{heads['p1'][:12]} (as the last sync fetched it) is not in upstream's history and merging it onto upstream "
        "changes something: sync keeps carrying it")
    assert by_id["pr/2"]["why"].startswith(
        f"upstream has its commits, as this repository tells: its head {heads['p2'][:12]} (as the last sync fetched "
        f"it) is in upstream's history, merged by {heads['merge'][:12]}; ")
    assert by_id["pr/2"]["why"].endswith("upstream.url is a local path, with no forge to ask: check the PR where "
                                         "it is reviewed")
    assert by_id["pr/3"]["why"] == ("upstream.url is a local path: no forge says the PR's state, and its head is not "
                                    "in this repository (run `carrytool sync` to fetch it)")
    text = cli(*args).stdout
    assert text.startswith("carrytool status (from this repository: upstream.url is a local path, with no forge)\n")
    before = small.manifest_path.read_text()
    written = cli(*args, "--write")
    assert written.exit_code == 0 and "wrote:" not in written.stdout, written.output
    assert small.manifest_path.read_text() == before


def test_online_status_of_a_local_upstream_says_to_run_it_offline(cli: Cli, small: Small) -> None:
    build(cli, small)
    result = cli("status", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2, result.output
    assert "manifest.yaml: upstream.url ../up is a local path, which has no forge to ask about PRs" in result.stderr
    assert "`carrytool status --offline` says what this repository tells of each PR" in result.stderr
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 2 and "is a local path" in json.dumps(out)


def test_a_file_url_is_a_local_upstream_too(cli: Cli, small: Small) -> None:
    """`file:///path` was read as the forge project `path` (`tmp/.../up`) and asked of api.github.com."""
    heads = build(cli, small)
    small.manifest([{"pr": 1}], upstream={"url": f"file://{small.root / 'up'}", "branch": "main"})
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    assert [(e["id"], e["suggestion"], e["head"]) for e in out["entries"]] == [("pr/1", "keep", heads["p1"])]
    result = cli("status", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "is a local path, which has no forge" in result.stderr, result.output
