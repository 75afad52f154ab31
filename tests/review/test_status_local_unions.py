"""status --offline of a local-path upstream, of PRs a union stands for and of a PR skipped for a reason the
manifest's policy gives (h219 #s3, #s4, #s5): what the last sync did with them, told truthfully."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.review.test_status_local import _status

NO_FORGE = "upstream.url is a local path: no forge says the PR's state"


def _union(small: Small, files: dict, *, parent: str = "main") -> str:
    """A union carry's commit, made on upstream and fetched into the work repository (a `commit:` entry)."""
    sha = small.up.commit(files, "union u", parent=parent, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    return sha


def test_prs_of_a_union_the_last_sync_did_not_apply_are_not_said_to_be_carried(cli: Cli, small: Small) -> None:
    """h219 s4: carry/u (pr/1 and pr/2 whole) conflicts with upstream every night (on_conflict: skip); status said
    `keep`, "carry/u provides it (`supersedes`): sync carries that", of PRs nothing of which is in the fork."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 20\ny = 2\nz = 3\n"})
    union = _union(small, {"b.py": "x = 30\ny = 2\nz = 3\n"})
    small.up.commit({"b.py": "x = 2\ny = 2\nz = 3\n"}, "upstream's x", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}],
                   policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["skipped", "skipped", "conflict"], report
    by_id = _status(cli, small)
    for number in (1, 2):
        item = by_id[f"pr/{number}"]
        assert item["suggestion"] == "investigate", item
        assert item["why"] == (
            f"{NO_FORGE}; carry/u provides it (`supersedes`), but the last sync did not apply carry/u (its "
            "composed chain lacks it): its change is in the fork only if upstream already has it; run "
            "`carrytool explain carry/u`")


def test_a_union_the_last_sync_applied_still_carries_its_prs(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 20\ny = 2\nz = 3\n"})
    union = _union(small, {"b.py": "x = 30\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    item = _status(cli, small)["pr/1"]
    assert (item["suggestion"], item["why"]) == (
        "keep", f"{NO_FORGE}; carry/u provides it (`supersedes`): sync carries that, not the PR itself")


def test_a_pr_only_partly_superseded_is_not_sent_to_sync_to_fetch(cli: Cli, small: Small) -> None:
    """h219 s3: pr/2, no entry, is superseded only for docs/c.txt; status said "run `carrytool sync` to fetch it",
    which no sync does (no entry carries it whole), and nothing said its b.py change is in no entry."""
    small.pr(2, {"docs/c.txt": "c2\n", "b.py": "x = 1\ny = 22\nz = 3\n"})
    union = _union(small, {"docs/c.txt": "c2\n"})
    small.manifest([{"carry": "u", "commit": union, "supersedes": [{"pr": 2, "paths": ["docs/c.txt"]}]}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    item = _status(cli, small)["pr/2"]
    assert item["suggestion"] == "investigate" and item["superseded_only"] is True
    assert item["why"] == (
        f"{NO_FORGE}; no entry carries it whole, so sync never fetches its head: only its docs/c.txt comes "
        "through carry/u (`supersedes` paths), and its other paths are in no entry; to carry them, add "
        "`- pr: 2` to the manifest's entries (carry/u keeps docs/c.txt), or widen carry/u's `supersedes` paths")
    assert "run `carrytool sync`" not in item["why"]


def test_a_pr_skipped_as_precompiled_is_given_that_reason(cli: Cli, small: Small) -> None:
    """h219 s5: pr/1 changes csrc/k.cu under `policy.precompiled`; status blamed an entry before it."""
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n", "csrc/k.cu": "// k2\n"})
    small.manifest([{"pr": 1}], policy={"precompiled": {"paths": ["csrc/**"]}})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][0]["reason"] == "precompiled", report
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "investigate"
    assert "an entry before it" not in item["why"]
    assert item["why"].endswith(
        "(as the last sync fetched it): sync skips it as precompiled: it changes csrc/k.cu (policy.precompiled: "
        "csrc/**); a precompiled build cannot take it: run `carrytool explain pr/1`")


def test_a_pr_only_a_disabled_union_supersedes_is_not_said_to_be_carried(cli: Cli, small: Small) -> None:
    """h226: pr/1, carried by its own entry one night, is then folded into carry/u (no entry of its own), and
    carry/u is disabled (`enabled: false`). No entry carries pr/1's change any more; status said `keep`, "sync
    carries it unless an entry before it conflicts with it"."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    union = _union(small, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"carry": "u", "commit": union, "supersedes": [1], "enabled": False}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "investigate", item
    assert item["why"] == (
        f"{NO_FORGE}; only carry/u provides it (`supersedes`), and its entry is disabled (`enabled: false`): sync "
        "carries none of them, so its change is in the fork only if upstream already has it; to carry it, enable "
        "carry/u or add `- pr: 1` to the manifest's entries")


def test_a_disabled_pr_a_union_carries_is_said_to_come_through_the_union(cli: Cli, small: Small) -> None:
    """h226's review: pr/1's own entry disabled, and carry/u (applied) superseding it whole: status said "its
    entry is disabled: sync leaves it out", of a PR whose change the fork carries through carry/u."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 20\ny = 2\nz = 3\n"})
    union = _union(small, {"b.py": "x = 30\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1, "enabled": False}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    item = _status(cli, small)["pr/1"]
    assert (item["suggestion"], item["why"]) == (
        "keep", f"{NO_FORGE}; carry/u provides it (`supersedes`): sync carries that, not the PR itself")


def test_a_pr_a_disabled_union_supersedes_for_some_paths_is_not_said_to_be_provided_whole(cli: Cli,
                                                                                           small: Small) -> None:
    """h236: carry/u, disabled, supersedes pr/2 only for docs/c.txt; status said "only carry/u provides it ... to
    carry it, enable carry/u", which would carry docs/c.txt alone."""
    small.pr(2, {"docs/c.txt": "c2\n", "b.py": "x = 1\ny = 22\nz = 3\n"})
    union = _union(small, {"docs/c.txt": "c2\n"})
    small.manifest([{"carry": "u", "commit": union, "supersedes": [{"pr": 2, "paths": ["docs/c.txt"]}],
                     "enabled": False}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    item = _status(cli, small)["pr/2"]
    assert item["suggestion"] == "investigate", item
    assert item["why"] == (
        f"{NO_FORGE}; only carry/u provides its docs/c.txt (`supersedes` paths), and its entry is disabled "
        "(`enabled: false`): sync carries none of it, so its change is in the fork only if upstream already has "
        "it; to carry it, add `- pr: 2` to the manifest's entries")
