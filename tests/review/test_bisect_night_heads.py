"""`bisect --rev` of a past night: the entry an assert guards that the night left out for a conflict is
composed with the head that night had (its lock records it), not with the head fetched since; where no lock
of that night is found (a red night writes none), the head used is said not to be known as the night's
(h193: pr/2, pushed again after the night, was composed instead, and bisect blamed nobody)."""

from __future__ import annotations

import json

from tests.conftest import Cli, Small
from tests.gitrepo import Repo, init_repo

STEP = "def step(opt, tel):\n    a = 1\n    b = 2\n    opt.step()\n    return a\n"
WRAPPED = STEP.replace("    opt.step()\n", "    opt_step(opt)\n")
TELEMETRY = STEP.replace("    opt.step()\n", "    opt.step()\n    if tel is not None:\n        tel.on_step()\n")
# pushed again after the night: the hook at the top, where pr/1's rename does not reach
AGAIN = STEP.replace("):\n", "):\n    opt.step()\n    tel.on_step()\n", 1)
AFTER = {"name": "telemetry-after-step", "file": "a.py", "in": "step", "order": ["opt.step", "tel.on_step"],
         "entry": "pr/2"}


def night(cli: Cli, small: Small, *, asserts: tuple[dict, ...] = (AFTER,)) -> dict:
    """[pr/1, pr/2]: pr/1 renames opt.step(), so pr/2, which adds a hook after it, conflicts and is skipped.
    With AFTER (its `entry:`) the night is red (no lock); without asserts it is green (the lock is its).
    Its report."""
    base = small.up.commit({"a.py": STEP}, "base with step", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": WRAPPED}, parent=base)
    small.pr(2, {"a.py": TELEMETRY}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"}, asserts=list(asserts))
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == (1 if asserts else 0) and report["result"]["sha"], report
    assert [e["status"] for e in report["entries"]] == ["applied", "conflict"], report
    return report


def push_again(cli: Cli, small: Small, *, sync: bool = False) -> str:
    """pr/2 pushed again (it now applies after pr/1), and fetched (by a dry run, or SYNC: by the next night,
    which writes its lock); its new head."""
    again = small.up.commit({"a.py": AGAIN}, "pr 2, again", parent=small.up.rev("refs/heads/main"),
                            ref="refs/pull/2/head")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, *(() if sync else ("--dry-run",)))
    assert small.work.rev("refs/carrytool/dev/pr/2") == again
    return again


def guard(small: Small) -> None:
    """The assert on pr/2, added to the manifest after the night."""
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"}, asserts=[AFTER])


def bisect(cli: Cli, small: Small, rev: str) -> tuple[dict, str]:
    args = ("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--rev", rev)
    code, out = cli.json(*args)
    assert code == 0, out
    return out, cli(*args).stdout


def commit_lock(small: Small, message: str) -> None:
    """Commit the manifest and its lock (as the nightly does), in a repository of their own."""
    folder = small.manifest_path.parent
    repo = Repo(folder) if (folder / ".git").exists() else init_repo(folder)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", message)


def test_the_head_the_nights_lock_records_is_bisected_not_the_one_fetched_since(cli: Cli, small: Small) -> None:
    """h193: pr/2 was pushed again after the night (and fetched); an assert on it added since fails on the
    night's commit; `bisect --rev` of the night composed the new head, which applies: every tree passed and
    nobody was blamed. The head the night had is in its lock (`result` is the night's commit): pr/1 is blamed,
    with pr/2."""
    report = night(cli, small, asserts=())
    had = report["entries"][1]["head"]
    again = push_again(cli, small)
    guard(small)
    out, text = bisect(cli, small, report["result"]["sha"])
    assert out["first_bad"] == "pr/1" and out["interacts_with"] == ["pr/2"], out
    assert out["left_out"] == [{"id": "pr/2", "status": "conflict", "with": ["pr/1"], "upstream": False,
                                "files": ["a.py"], "head": had, "night": True}], out
    assert again != had and "may not be the one the night had" not in text, text


def test_the_nights_lock_is_found_in_the_committed_history(cli: Cli, small: Small) -> None:
    """The next night wrote its own lock (with the new head); the night's is the lock's previous commit."""
    report = night(cli, small, asserts=())
    commit_lock(small, "night 1")
    push_again(cli, small, sync=True)
    commit_lock(small, "night 2")
    assert json.loads((small.manifest_path.parent / "manifest.yaml.lock").read_text())["result"] != \
        report["result"]["sha"]
    guard(small)
    out, _ = bisect(cli, small, report["result"]["sha"])
    assert out["first_bad"] == "pr/1" and out["interacts_with"] == ["pr/2"], out
    assert out["left_out"][0]["head"] == report["entries"][1]["head"] and out["left_out"][0]["night"] is True, out


def test_a_head_the_nights_lock_records_that_is_gone_is_said_not_tried(cli: Cli, small: Small) -> None:
    """The night's head is no longer in the repository: not tried with today's head, but said, and why."""
    report = night(cli, small, asserts=())
    push_again(cli, small)
    lock = small.manifest_path.parent / "manifest.yaml.lock"
    gone = "0123456789abcdef" * 2 + "01234567"
    lock.write_text(lock.read_text().replace(report["entries"][1]["head"], gone))
    guard(small)
    out, text = bisect(cli, small, report["result"]["sha"])
    assert out["first_bad"] is None, out
    assert out["left_out"] == [{
        "id": "pr/2", "status": "not-tried", "with": [], "upstream": False, "files": [],
        "asserts": ["telemetry-after-step"], "why": f"the head it had that night, {gone} ({lock}), is not in this "
        "repository: fetch it by its SHA (if the forge still has it), then bisect again", "next": None}], out
    assert f"pr/2 (the `entry:` of telemetry-after-step) is not in the chain and was not tried: the head it had " \
           f"that night, {gone}" in text, text


def test_a_red_nights_heads_are_those_sync_recorded_of_it(cli: Cli, small: Small) -> None:
    """h193 / h201: a red night writes no lock, so its left-out pr/2 was tried with the head fetched since (which
    applies: nobody was blamed). sync records what it composed, red nights too, under
    refs/carrytool/<branch>/nights: the night's head is tried, and pr/1 blamed with pr/2."""
    report = night(cli, small)
    assert not (small.manifest_path.parent / "manifest.yaml.lock").exists()
    push_again(cli, small)
    out, text = bisect(cli, small, report["result"]["sha"])
    assert out["first_bad"] == "pr/1" and out["interacts_with"] == ["pr/2"], out
    assert out["left_out"] == [{"id": "pr/2", "status": "conflict", "with": ["pr/1"], "upstream": False,
                                "files": ["a.py"], "head": report["entries"][1]["head"], "night": True}], out
    assert "may not be the one the night had" not in text, text


def test_a_red_nights_entry_tried_with_the_head_fetched_since_is_said_not_the_nights(cli: Cli, small: Small) -> None:
    """A red night synced in another clone (a CI runner's, thrown away) left no lock and no record here: the
    head pr/2 has now is tried, and said not known to be the night's, in JSON (`night: false`, `head`) and in
    the text; composed where the night left it out it now applies."""
    report = night(cli, small)
    small.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    again = push_again(cli, small)
    out, text = bisect(cli, small, report["result"]["sha"])
    assert out["left_out"] == [{"id": "pr/2", "status": "applied", "with": [], "upstream": False, "files": [],
                                "head": again, "night": False}], out
    assert f"pr/2 was tried with its head fetched now ({again[:12]}), which may not be the one the night had: no " \
           "lock of that night records it, nor sync's record in this repository " \
           "(refs/carrytool/<fork branch>/nights: a red night writes no lock" in text, text
    assert "the night left it out, so what it was tried with is likely not what the night had" in text, text
