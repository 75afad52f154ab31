"""status with a local-path upstream (`upstream: {url: ../up}`), which has no forge (h185: `status --offline` was
exit 2, "cannot tell the forge project from upstream.url"): offline, each PR is told from this repository, as a
PR the forge cache does not know; online it is exit 2 saying what to run."""

from __future__ import annotations

import json

import pytest

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
        f"{heads['p1'][:12]} (as the last sync fetched it) is not in upstream's history, and the last sync carried it "
        "onto this upstream")
    assert by_id["pr/2"]["why"].startswith(
        f"upstream has its commits, as this repository tells: its head {heads['p2'][:12]} (as the last sync fetched "
        f"it) is in upstream's history, merged by {heads['merge'][:12]}; ")
    assert by_id["pr/2"]["why"].endswith("upstream.url is a local path, with no forge to ask: check the PR where "
                                         "it is reviewed")
    # upstream has no refs/pull/3/head: the sync "to fetch it" would stop on it (h259)
    assert by_id["pr/3"]["why"].startswith("upstream.url is a local path: no forge says the PR's state; upstream has "
                                           "no refs/pull/3/head now (no sync here fetched it")
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


# -- what the last sync did, told truthfully (h213 #5, h214 #2 and #3) -------------------------------------------

def _status(cli: Cli, small: Small) -> dict[str, dict]:
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    return {e["id"]: e for e in out["entries"]}


def test_a_pr_that_conflicts_with_upstream_is_not_said_to_be_carried(cli: Cli, small: Small) -> None:
    """h213 #5: pr/1 conflicts with upstream alone; sync skipped it (or stopped on it), yet status said `keep`,
    "merging it onto upstream changes something: sync keeps carrying it" (never merged, never checked)."""
    head = small.pr(1, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n"})
    small.up.commit({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 4\n"}, "upstream's g",
                    parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][0]["status"] == "conflict", report
    item = _status(cli, small)["pr/1"]
    assert (item["suggestion"], item["head"]) == ("investigate", head)
    assert item["why"] == (
        f"upstream.url is a local path: no forge says the PR's state; as this repository tells, its head {head[:12]} "
        "(as the last sync fetched it) conflicts with upstream in a.py: sync skips it (on_conflict: skip); run "
        "`carrytool explain pr/1`")
    # under on_conflict: fail the sync stops (exit 3, no lock): the same merge says so
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 3
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "investigate"
    assert item["why"].endswith("conflicts with upstream in a.py: sync stops on it (on_conflict: fail, exit 3); run "
                                "`carrytool explain pr/1`")


def test_a_pr_the_last_sync_left_out_for_a_conflict_with_another_is_not_said_to_be_carried(cli: Cli,
                                                                                             small: Small) -> None:
    """h214 #3 (celery's pr/10095): pr/2 conflicts with pr/1 every night, not with upstream; status said `keep`,
    "sync keeps carrying it". The last sync's chain, from the same upstream and head, says it was left out."""
    p1 = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    p2 = small.pr(2, {"b.py": "x = 20\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied", "conflict"], report
    by_id = _status(cli, small)
    said = "upstream.url is a local path: no forge says the PR's state; as this repository tells, its head"
    assert by_id["pr/1"]["suggestion"] == "keep"
    assert by_id["pr/1"]["why"] == (f"{said} {p1[:12]} (as the last sync fetched it) is not in upstream's history, "
                                    "and the last sync carried it onto this upstream")
    assert by_id["pr/2"]["suggestion"] == "investigate"
    # h248: the words said "an entry before it conflicts with it, or provides it already"; which one it is
    assert by_id["pr/2"]["why"] == (
        f"{said} {p2[:12]} (as the last sync fetched it) merges onto upstream alone, but the last sync, from this "
        "upstream and head, did not carry it: it conflicts with pr/1 in b.py (merged onto the last sync's branch "
        "from pr/1 on): run `carrytool explain pr/2`")


def test_a_pr_sync_found_redundant_is_said_so(cli: Cli, small: Small) -> None:
    """h248: pr/2 makes pr/1's change again (the same hunk); sync found nothing left to apply after pr/1, and
    status said "an entry before it conflicts with it, or provides it already": the lock does not say which,
    the last sync's branch does."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c1\n"})
    p2 = small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n"}, message="pr 2, the same change")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [e.get("reason") for e in report["entries"]] == [None, "redundant"], report
    item = _status(cli, small)["pr/2"]
    assert item["suggestion"] == "keep"
    assert item["why"] == (
        "upstream.url is a local path: no forge says the PR's state; as this repository tells, its head "
        f"{p2[:12]} (as the last sync fetched it) merges onto upstream alone, and the last sync, from this upstream "
        "and head, found nothing left to apply after pr/1 (redundant): the fork has its change while pr/1 carries "
        "it (`carrytool explain pr/2` says more)")


def test_a_pr_whose_ref_upstream_deleted_is_not_sent_to_sync_to_fetch(cli: Cli, small: Small) -> None:
    """h214 #2 (celery's pr/10255): upstream deleted the PR's ref; sync skips it as `missing` (on_missing: skip),
    the lock has `"head": null`; status said "its head is not in this repository (run `carrytool sync` to fetch
    it)", which sync cannot do. It says the ref is gone, the last head a night record has, and what to do."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    p2 = small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_missing": "skip"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    small.up.git("update-ref", "-d", "refs/pull/2/head")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][1]["reason"] == "missing", report
    item = _status(cli, small)["pr/2"]
    assert (item["suggestion"], item["head"]) == ("investigate", None)
    assert "run `carrytool sync" not in item["why"]
    assert item["why"] == (
        "upstream.url is a local path: no forge says the PR's state; upstream has no refs/pull/2/head any more, so "
        "the last sync skipped it as missing (closed and its ref deleted, or a wrong number), and no sync can fetch "
        f"it again; the last head a sync fetched was {p2[:12]} (refs/carrytool/dev/nights); check the PR where it "
        "is reviewed: to stop carrying it, remove `- pr: 2` from the manifest; to keep carrying that head, pin it in "
        f"the entry (`head: {p2}`: this repository has it)")


def test_a_pinned_pr_whose_ref_moved_past_the_pin_is_not_said_to_be_at_the_pin(cli: Cli, small: Small) -> None:
    """h239 (sqlalchemy trial): pr/13455 was force-pushed with a regression, the maintainer pinned the entry to the
    last good head (`head: SHA`); sync still fetched the PR's ref, at the new head. status said "its head <pin> (as
    the last sync fetched it)", which the last sync did not fetch, and nothing of the PR having moved past the pin."""
    good = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=good, message="pr 1, pushed again")
    small.manifest([{"pr": 1, "head": good}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][0]["head"] == good, report
    assert small.work.ref("refs/carrytool/dev/pr/1") == moved      # the PR's ref, as this sync fetched it
    item = _status(cli, small)["pr/1"]
    assert (item["suggestion"], item["head"]) == ("keep", good)
    assert "(as the last sync fetched it)" not in item["why"]
    assert item["why"] == (
        f"upstream.url is a local path: no forge says the PR's state; as this repository tells, its head {good[:12]} "
        f"(pinned by its entry's `head:`; the PR's ref, as the last sync fetched it, is at {moved[:12]}: pushed "
        f"since the pin, carried only once you move the pin (`head: {moved}` in its entry, then `carrytool sync`) "
        "or remove it) is not in upstream's history, and the last sync carried it onto this upstream")


def test_a_pr_pushed_again_since_the_lock_is_not_said_to_be_at_the_locked_head(cli: Cli, small: Small) -> None:
    """h239 (sqlalchemy trial): pr/13412 was pushed again, and the night that fetched it went red on an assert (no
    lock written). status said "its head <the lock's> (as the last sync fetched it)": the last sync fetched the
    new head, which is the one that broke the night."""
    old = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    asserts = [{"name": "no-eleven", "file": "b.py", "absent": "x = 11"}]
    small.manifest([{"pr": 1}], asserts=asserts)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=old, message="pr 1, pushed again")
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 1
    assert small.work.ref("refs/carrytool/dev/pr/1") == moved
    item = _status(cli, small)["pr/1"]
    assert "(as the last sync fetched it)" not in item["why"], item["why"]
    assert f"the PR's ref, as the last sync fetched it, is at {moved[:12]}" in item["why"], item["why"]


def test_a_pin_that_is_not_the_locked_head_is_not_said_to_pin_it(cli: Cli, small: Small) -> None:
    """h246: the night that fetched pr/1's new head went red (no lock), and the maintainer pinned the entry to that
    new head (`head:`) without a sync since. status showed the lock's head "pinned by its entry's `head:`; the
    PR's ref ... is at <the pin>: pushed since the pin": the lock's head is no pin, and the ref is the pin."""
    old = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    asserts = [{"name": "no-eleven", "file": "b.py", "absent": "x = 11"}]
    small.manifest([{"pr": 1}], asserts=asserts)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=old, message="pr 1, pushed again")
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 1
    small.manifest([{"pr": 1, "head": moved}], asserts=asserts)
    item = _status(cli, small)["pr/1"]
    assert item["head"] == old, item
    assert "pinned" not in item["why"] and "pushed since the pin" not in item["why"], item["why"]
    assert f"as the lock's night composed it; the PR's ref, as the last sync fetched it, is at {moved[:12]}" \
        in item["why"], item["why"]


def test_a_lock_entry_id_that_names_no_pr_number_is_no_traceback(cli: Cli, small: Small) -> None:
    """h246: status read the number of every `pr/` id of the lock with int(): a hand-edited `"id": "pr/abc"` was a
    ValueError, exit 70 (sync, diff and bisect refuse such a lock, exit 2, as not matching the manifest); and
    `pr/1 ` (int() takes spaces) was read as pr/1. Such an id names no PR's head."""
    heads = build(cli, small)
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    for bad in ("pr/abc", "pr/", "pr/1 "):
        doc = json.loads(lock.read_text())
        doc["entries"][0]["id"] = bad
        lock.write_text(json.dumps(doc))
        assert _status(cli, small)["pr/1"]["head"] == heads["p1"]      # the PR's ref, as the last sync fetched it


def test_a_pr_upstream_made_as_another_commit_is_a_drop_naming_that_commit(cli: Cli, small: Small) -> None:
    """h248 (h245's trl trial, pr/6432 squashed upstream as 65eb0dfb25): a PR that conflicts with upstream alone
    was `investigate` only, while `explain` knew upstream has every hunk of it and which commit made them."""
    head = small.pr(1, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n"})
    made = small.up.commit({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n\n\ndef h():\n    return 5\n"},
                           "Make g three, add h (#1)", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][0]["status"] == "conflict", report
    item = _status(cli, small)["pr/1"]
    assert (item["suggestion"], item["head"]) == ("drop", head)
    assert item["why"] == (
        f"upstream.url is a local path: no forge says the PR's state; as this repository tells, its head {head[:12]} "
        "(as the last sync fetched it) conflicts with upstream in a.py: sync skips it (on_conflict: skip); but "
        f"upstream already has its one hunk (a.py: 1 of 1, line 6): likely merged upstream as {made[:10]} \"Make g "
        "three, add h (#1)\"; upstream has its one hunk, so `carrytool status --write` removes its entry "
        "(`carrytool explain pr/1` says more)")
    # explain says the same, from the same cache: its JSON names the commit
    code, out = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0 and out["plan"]["upstream_has"]["pr/1"]["commit"] == made, out["plan"]
    kept = list((small.work.path / "carrytool" / "cache").glob("upstreamhas-git*.json"))
    assert len(kept) == 1 and len(json.loads(kept[0].read_text())["upstreamhas"]) == 1     # one answer, shared
    written = cli("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline", "--write")
    assert written.exit_code == 0 and "wrote: pr/1: removed" in written.stdout, written.output


def test_a_pr_upstream_made_part_of_stays_investigate_saying_what_upstream_has(cli: Cli, small: Small) -> None:
    """h248: upstream has one of its two hunks: `investigate`, saying which, never `drop`."""
    small.pr(1, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n", "b.py": "x = 1\ny = 22\nz = 3\n"})
    small.up.commit({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n\n\ndef h():\n    return 5\n"},
                    "Make g three", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "investigate"
    assert item["why"].endswith("conflicts with upstream in a.py: sync skips it (on_conflict: skip); upstream "
                                "already has 1 of its 2 hunks (a.py: 1 of 1, line 6): likely merged upstream as "
                                f"{small.up.rev('main')[:10]} \"Make g three\"; run `carrytool explain pr/1`")


@pytest.mark.parametrize("on_missing", ["fail", "skip"])
def test_a_pr_whose_ref_upstream_deleted_since_the_last_sync_is_no_keep(cli: Cli, small: Small,
                                                                        on_missing: str) -> None:
    """h259: upstream deleted the PR's ref after the last sync, which carried it; `status --offline` said `keep`
    ("the last sync carried it onto this upstream") of a PR the next sync skips as missing, or stops on (exit 2).
    It reads the local-path upstream's PR refs (one `ls-remote` of the path, no network) and says the ref is gone,
    that why cannot be told here, what the next sync does, and what to do. A pinned entry's pin stays `keep`."""
    p1 = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    p2 = small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_missing": on_missing})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    small.up.git("update-ref", "-d", "refs/pull/1/head")
    small.up.git("update-ref", "-d", "refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2, "head": p2}, {"pr": 3}], policy={"on_missing": on_missing})
    by_id = _status(cli, small)
    item = by_id["pr/1"]
    assert (item["suggestion"], item["head"]) == ("investigate", p1), item
    next_sync = "skips it as missing (on_missing: skip)" if on_missing == "skip" else \
        "stops on it (on_missing: fail, exit 2)"
    assert item["why"] == (
        "upstream.url is a local path: no forge says the PR's state; upstream has no refs/pull/1/head now (deleted "
        f"since the last sync, which fetched its head {p1[:12]}): whether the PR was merged or closed cannot be told "
        f"here, with no forge to ask; the next sync {next_sync}; check the PR where it is reviewed: to stop carrying "
        f"it, remove `- pr: 1` from the manifest; to keep carrying that head, pin it in the entry (`head: {p1}`: "
        "this repository has it)")
    assert by_id["pr/2"]["suggestion"] == "keep", by_id["pr/2"]     # pinned: sync composes the pin
    assert by_id["pr/3"]["why"] == (
        "upstream.url is a local path: no forge says the PR's state; upstream has no refs/pull/3/head now (no sync "
        "here fetched it: a wrong number, or closed and its ref deleted): whether the PR was merged or closed cannot "
        f"be told here, with no forge to ask; the next sync {next_sync}; check the PR where it is reviewed: to stop "
        "carrying it, remove `- pr: 3` from the manifest")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == (0 if on_missing == "skip" else 2), report
    assert on_missing == "fail" or [e.get("reason") for e in report["entries"]] == ["missing", None, "missing"]
