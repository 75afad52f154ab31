"""carrytool diff: two real nights a day apart (entries added, removed, moved, skipped), read from locks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import SECOND_GIT, Cli, isolate_env
from tests.gitrepo import copy_built, init_repo, write_manifest

GIT_NEW = SECOND_GIT
H = "def h():\n    a = 1\n    b = 2\n    c = {}\n    d = 4\n    e = 5\n    return a + b + c + d + e\n"


class Nights:
    """Upstream with PRs, a fork work tree holding the manifest and its lock (committed each night), and a
    bare repository sync composes into."""

    def __init__(self, root: Path, cli: Cli) -> None:
        self.cli = cli
        self.up = init_repo(root / "up")
        self.fork = init_repo(root / "fork")
        self.work = init_repo(root / "work", bare=True)
        self.manifest = root / "fork" / "carries" / "manifest.yaml"
        up = self.up
        self.base = up.commit({"a.py": "def f():\n    return 1\n", "b.py": "x = 1\ny = 2\nz = 3\n",
                               "c.txt": "c\n"}, "base", ref="refs/heads/main")
        self.p1a = up.commit({"a.py": "def f():\n    return 10\n"}, "f returns 10", parent=self.base)
        self.p1b = up.commit({"h.py": H.format(3)}, "add h", parent=self.p1a, ref="refs/pull/1/head")
        self.p2 = up.commit({"c.txt": "c2\n"}, "pr 2", parent=self.base, ref="refs/pull/2/head")
        self.p3 = up.commit({"b.py": "x = 1\ny = 2\nz = 30\n"}, "pr 3", parent=self.base, ref="refs/pull/3/head")
        self.p4 = up.commit({"d.txt": "d\n"}, "pr 4", parent=self.base, ref="refs/pull/4/head")

    def night(self, entries: list, asserts: list | None = None) -> dict:
        data = {"version": 1, "upstream": {"url": "../../up", "branch": "main"}, "fork": {"branch": "dev"},
                "policy": {"on_conflict": "skip"}, "entries": entries}
        if asserts:
            data["asserts"] = asserts
        write_manifest(self.manifest, data)
        result = self.cli("sync", "-m", self.manifest, "--repo", self.work.path)
        assert result.exit_code == 0, result.output
        files = {"carries/manifest.yaml": self.manifest.read_text(),
                 "carries/manifest.yaml.lock": self.manifest.with_name("manifest.yaml.lock").read_text()}
        parent = self.fork.ref("refs/heads/main")
        self.fork.commit(files, "night", parent=parent, ref="refs/heads/main")
        self.fork.git("reset", "-q", "--hard")
        return json.loads(files["carries/manifest.yaml.lock"])

    def second_day(self) -> None:
        """Upstream moves (z = 33: PR 3 now conflicts); PR 1 is force-pushed: same first commit, the second
        changed, a third added."""
        self.up.commit({"b.py": "x = 1\ny = 2\nz = 33\n"}, "upstream z", parent="main", ref="refs/heads/main")
        self.p1b2 = self.up.commit({"h.py": H.format(4)}, "add h", parent=self.p1a)
        self.p1c = self.up.commit({"i.py": "i = 1\n"}, "add i", parent=self.p1b2, ref="refs/pull/1/head")


@pytest.fixture(scope="module")
def _nights_once(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        n = Nights(tmp_path_factory.mktemp("nights"), Cli())
        n.night([{"pr": 1}, {"pr": 2}, {"pr": 3}])
        n.second_day()
        n.night([{"pr": 1}, {"pr": 3}, {"pr": 4}], asserts=[{"name": "f-defined", "file": "a.py", "defines": "f"}])
        return n


@pytest.fixture
def nights(_nights_once: Nights, tmp_path: Path, cli: Cli) -> Nights:
    """The two nights in TMP_PATH, as every test here built them: built once for this file, each test
    working in its own copy (the folders name each other by relative paths: the same SHAs)."""
    n = copy_built(_nights_once, _nights_once.up.path.parent, tmp_path)
    n.cli = cli
    return n


def _diff(nights: Nights, *args: str) -> tuple[int, dict]:
    return nights.cli.json("diff", *args, "-m", nights.manifest, "--repo", nights.work.path)


def test_diff_between_two_nights(nights: Nights) -> None:
    code, out = _diff(nights)
    assert code == 0, out
    old_lock = json.loads(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    new_lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    assert out["upstream"] == {"from": old_lock["upstream"]["sha"], "to": new_lock["upstream"]["sha"], "commits": 1}
    changes = {e["id"]: e["change"] for e in out["entries"]}
    assert changes == {"pr/1": "moved", "pr/3": "status", "pr/4": "added", "pr/2": "removed"}
    moved = next(e for e in out["entries"] if e["id"] == "pr/1")
    assert (moved["from"]["head"], moved["to"]["head"]) == (nights.p1b, nights.p1c)
    assert [(p["old"], p["new"], p["change"], p["subject"]) for p in moved["range_diff"]] == [
        (nights.p1a, nights.p1a, "=", "f returns 10"),
        (nights.p1b, nights.p1b2, "!", "add h"),
        (None, nights.p1c, ">", "add i")]
    status = next(e for e in out["entries"] if e["id"] == "pr/3")
    assert (status["from"]["status"], status["to"]["status"]) == ("applied", "skipped")
    removed = next(e for e in out["entries"] if e["id"] == "pr/2")
    assert removed["from"]["status"] == "applied" and removed["to"] is None
    assert out["asserts"] == {"added": ["f-defined"], "removed": [], "changed": [], "known": True, "failing": [],
                              "holding_again": []}
    assert out["result"] == {"from": old_lock["result"], "to": new_lock["result"]} and out["order"] is None


def test_diff_same_on_new_git(nights: Nights, monkeypatch: pytest.MonkeyPatch) -> None:
    if not GIT_NEW:
        pytest.skip("no second git")
    _, old_git = _diff(nights)
    monkeypatch.setenv("PATH", GIT_NEW + os.pathsep + os.environ["PATH"])
    _, new_git = _diff(nights)
    assert new_git == old_git


def test_rev_path_and_files(nights: Nights, tmp_path: Path) -> None:
    _, default = _diff(nights)
    _, named = _diff(nights, "HEAD~1:carries/manifest.yaml.lock", "HEAD:carries/manifest.yaml.lock")
    assert named["entries"] == default["entries"] and named["locks"]["new"] == "HEAD:carries/manifest.yaml.lock"
    old = tmp_path / "old.lock"
    old.write_text(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    _, files = _diff(nights, str(old), str(nights.manifest.with_name("manifest.yaml.lock")))
    assert files["entries"] == default["entries"]
    # no manifest beside old.lock: unknown, and said so
    assert files["asserts"] == {"added": [], "removed": [], "changed": [], "known": False, "failing": [],
                                "holding_again": []}
    text = nights.cli("diff", str(old), str(nights.manifest.with_name("manifest.yaml.lock")), "-m",
                      nights.manifest, "--repo", nights.work.path).stdout
    assert f"asserts not compared: the older night's manifest, {tmp_path / 'old'} (its lock's name without `.lock`), " \
        "is missing or not a valid manifest" in " ".join(text.split()), \
        text
    code, same = _diff(nights, "HEAD:carries/manifest.yaml.lock")
    assert code == 0 and {e["change"] for e in same["entries"]} == {"unchanged"}
    assert same["upstream"]["commits"] == 0


def test_quiet_diff_prints_the_summary_line_alone(nights: Nights) -> None:
    """-q: the summary line (what changed, in numbers), not every entry (a new user's trial)."""
    full = nights.cli("diff", "-m", nights.manifest, "--repo", nights.work.path)
    quiet = nights.cli("diff", "-q", "-m", nights.manifest, "--repo", nights.work.path)
    assert full.exit_code == quiet.exit_code == 0
    assert quiet.stdout == full.stdout.splitlines()[1] + "\n" and len(full.stdout.splitlines()) > 2


def test_unknown_rev_path_is_input_error(nights: Nights) -> None:
    result = nights.cli("diff", "HEAD~5:carries/manifest.yaml.lock", "-m", nights.manifest,
                        "--repo", nights.work.path)
    assert result.exit_code == 2 and "no lock at HEAD~5:carries/manifest.yaml.lock" in result.stderr
    assert "has no commit `HEAD~5`" in result.stderr          # the commit is missing, not the path
    result = nights.cli("diff", "HEAD:carries/nothing.lock", "-m", nights.manifest, "--repo", nights.work.path)
    assert result.exit_code == 2 and "`HEAD` has no `carries/nothing.lock`" in result.stderr


def test_a_rev_of_the_repo_sync_records_nights_in_is_not_said_to_be_a_one_commit_history(nights: Nights,
                                                                                           tmp_path: Path) -> None:
    """h239 (sqlalchemy trial): the lock sync recorded of a red night, named as docs/ci.md shows it
    (`refs/carrytool/<branch>/nights:<sha>.lock`), is in --repo, not in the manifest's repository where REV:PATH
    is read; the hint said "a repository whose history is one commit has no HEAD~1", which is not the cause.
    It says where that commit is, and how to read the lock from there."""
    tip = nights.work.ref("refs/heads/dev")
    spec = f"refs/carrytool/dev/nights:{tip}.lock"
    result = nights.cli("diff", "HEAD:carries/manifest.yaml.lock", spec, "-m", nights.manifest,
                        "--repo", nights.work.path)
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    assert "history is one commit" not in said, said
    assert f"`refs/carrytool/dev/nights` is a commit of --repo {nights.work.path}, not of " in said, said
    assert f"git -C {nights.work.path} show {spec} > night.lock" in said, said
    night = tmp_path / "night.lock"
    night.write_bytes(subprocess.run(["git", "-C", str(nights.work.path), "show", spec], check=True,
                                     capture_output=True).stdout)
    code, out = _diff(nights, "HEAD:carries/manifest.yaml.lock", str(night))
    assert code == 0 and {e["change"] for e in out["entries"]} == {"unchanged"}, out
    # a commit missing everywhere keeps the hint about HEAD~N
    result = nights.cli("diff", "HEAD~5:carries/manifest.yaml.lock", "-m", nights.manifest,
                        "--repo", nights.work.path)
    assert "has no HEAD~1" in result.stderr


def test_missing_object_names_the_fetch(nights: Nights, tmp_path: Path) -> None:
    """What the whole diff needs (upstream, a night's composed result) and is not here: exit 4, naming the
    fetch."""
    lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    lock["upstream"]["sha"] = "2" * 40
    new = tmp_path / "new.lock"
    new.write_text(json.dumps(lock))
    result = nights.cli("diff", "HEAD~1:carries/manifest.yaml.lock", str(new), "-m", nights.manifest,
                        "--repo", nights.work.path)
    assert result.exit_code == 4, result.output
    # a relative url: as sync read it, from the manifest's directory (helper-97: `git fetch ../../up main`
    # failed where the hint is run, in --repo)
    up = nights.up.path.resolve()
    assert f"{'2' * 40} (upstream main in {new}): git fetch {up} main" in result.stderr


def test_a_missing_pr_head_leaves_out_its_range_diff_alone(nights: Nights, tmp_path: Path) -> None:
    """A PR head only a range-diff reads (a night whose PR was force-pushed since, read in a fresh clone
    where the server serves the old head no more) leaves out that range-diff, naming the fetch, instead of
    stopping the whole diff with exit 4 (helper-79's CI trial): the entry is still `moved`."""
    lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    lock["entries"][0]["head"] = "1" * 40
    new = tmp_path / "new.lock"
    new.write_text(json.dumps(lock))
    args = ("HEAD~1:carries/manifest.yaml.lock", str(new), "-m", nights.manifest, "--repo", nights.work.path)
    result = nights.cli("diff", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    up = nights.up.path.resolve()
    line = f"{'1' * 40} (pr/1 head in {new}): git fetch {up} refs/pull/1/head; if the PR moved since: " \
           f"git fetch {up} {'1' * 40}"         # the ref alone has the new head (helper-79)
    moved = next(e for e in out["entries"] if e["id"] == "pr/1")
    assert (moved["change"], moved["range_diff"], moved["range_diff_unavailable"]) == ("moved", [], [line])
    assert f"carrytool: warning: range-diff not shown for pr/1: {line}" in result.stderr
    assert [e for e in out["entries"] if e["id"] != "pr/1" and "range_diff_unavailable" in e] == []
    text = nights.cli("diff", *args)
    assert text.exit_code == 0 and f"      range-diff unavailable, not in this repository: {line}" in text.stdout
    quiet = nights.cli("diff", "-q", *args)
    assert quiet.exit_code == 0 and "range-diff not shown for pr/1" in quiet.stderr     # said even with -q
    md = nights.cli("diff", *args, "--format", "markdown").stdout
    assert f"pr/1: range-diff unavailable, not in this repository: `{line}`" in md


def test_missing_objects_each_named_for_what_needs_them(nights: Nights, tmp_path: Path) -> None:
    """One missing SHA that a night needs whole (its upstream) and another night names as a PR head is
    refused with its fetch (it was taken for a head, and git's own error showed); one SHA two entries name
    is said for each entry by its own name (helper-81)."""
    old_lock = json.loads(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    new_lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    gone = "a" * 40
    old_lock["entries"][0]["head"] = gone
    new_lock["upstream"]["sha"] = gone
    old, new = tmp_path / "old.lock", tmp_path / "new.lock"
    old.write_text(json.dumps(old_lock))
    new.write_text(json.dumps(new_lock))
    result = nights.cli("diff", str(old), str(new), "-m", nights.manifest, "--repo", nights.work.path)
    assert result.exit_code == 4, result.output
    assert f"{gone} (upstream main in {new}): git fetch {nights.up.path.resolve()} main" in result.stderr
    assert "bad object" not in result.stderr
    new_lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    for item in new_lock["entries"]:
        if item.get("head"):
            item["head"] = gone                  # every PR of the new night at one head this repo lacks
    new.write_text(json.dumps(new_lock))
    old.write_text(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    code, out = nights.cli.json("diff", str(old), str(new), "-m", nights.manifest, "--repo", nights.work.path)
    assert code == 0, out
    said = {e["id"]: e["range_diff_unavailable"] for e in out["entries"] if "range_diff_unavailable" in e}
    assert set(said) == {"pr/1", "pr/3"}, said
    for entry_id, lines in said.items():
        assert [line.split(" in ")[0] for line in lines] == [f"{gone} ({entry_id} head"]


def test_a_patch_carrys_commit_is_not_named_as_a_fetch(tmp_path: Path, cli: Cli) -> None:
    """A patch carry's commit is made from the patch by the night's sync: no remote has it, so its fetch
    is not named (`git fetch FORK_URL SHA` can never work: helper-81)."""
    n = Nights(tmp_path, cli)
    n.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "patch source", parent=n.base, ref="refs/heads/p")
    (n.manifest.parent).mkdir(parents=True, exist_ok=True)
    (n.manifest.parent / "fix.patch").write_text(n.up.git("format-patch", "--stdout", "-1", "refs/heads/p") + "\n")
    n.night([{"carry": "fix", "patch": "fix.patch"}])
    lock = json.loads(n.manifest.with_name("manifest.yaml.lock").read_text())
    lock["entries"][0]["commit"], lock["entries"][0]["sha256"] = "4" * 40, "0" * 64
    old = tmp_path / "old.lock"
    old.write_text(json.dumps(lock))
    code, out = n.cli.json("diff", str(old), "-m", n.manifest, "--repo", n.work.path)
    [item] = out["entries"]
    assert code == 0 and item["change"] == "refolded", out
    assert item["range_diff_unavailable"] == [f"{'4' * 40} (carry/fix commit in {old}): made by that night's sync "
                                              "from fix.patch (no remote has it): run diff in the repository that "
                                              "sync ran in"]


def test_a_fresh_clone_without_the_force_pushed_head(nights: Nights, tmp_path: Path) -> None:
    """The nightly job's clone: both nights' results and upstream fetched, the PR's ref at its new head;
    the old head, force-pushed away, is nowhere. The diff is whole but that range-diff."""
    old_lock = json.loads(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    nights.work.git("update-ref", "refs/old-night", old_lock["result"])
    fresh = init_repo(tmp_path / "fresh", bare=True)
    fresh.git("fetch", "-q", str(nights.work.path), "refs/heads/dev:refs/heads/dev", "refs/old-night:refs/old-night")
    fresh.git("fetch", "-q", str(nights.up.path), "refs/heads/main:refs/heads/main",
              "refs/pull/1/head:refs/pull/1/head")
    assert fresh.git("cat-file", "-t", nights.p1b, check=False) == ""        # force-pushed away
    code, out = nights.cli.json("diff", "-m", nights.manifest, "--repo", fresh.path)
    assert code == 0, out
    _, whole = _diff(nights)
    for got, want in zip(out["entries"], whole["entries"]):
        if got["id"] == "pr/1":
            assert got["change"] == "moved" and got["range_diff"] == [] and got["range_diff_unavailable"]
            assert got["range_diff_unavailable"][0].startswith(f"{nights.p1b} (pr/1 head in HEAD~1:")
        else:
            assert got == want


def test_markdown_and_text(nights: Nights) -> None:
    args = ("-m", nights.manifest, "--repo", nights.work.path)
    md = nights.cli("diff", *args, "--format", "markdown").stdout
    assert f"| `pr/1` | moved | head {nights.p1b[:12]} → {nights.p1c[:12]} |" in md
    assert "| `pr/3` | status | applied → not applied (the lock has no reason) |" in md
    assert "| `pr/4` | added | applied |" in md
    assert "<details><summary>pr/1: range-diff</summary>" in md
    assert f"| ! (changed) | `{nights.p1b[:12]}` | `{nights.p1b2[:12]}` | add h |" in md
    assert "- asserts added: f-defined" in md
    text = nights.cli("diff", *args).stdout
    assert f"  pr/1: moved: head {nights.p1b[:12]} -> {nights.p1c[:12]}" in text
    assert f"      > {'-' * 12} {nights.p1c[:12]} add i" in text
    assert "pr/2: removed: was applied" in text


def test_a_lock_says_not_applied_and_where_the_reason_is(nights: Nights, tmp_path: Path) -> None:
    """pr/3 went from applied to conflict (skipped under `on_conflict: skip`): two locks said "applied ->
    skipped", a reason they do not have (helper-123, on jax). The text says what a lock can tell, and names
    the diff of the reports that says why; a report's own status is said as it is."""
    args = ("-m", nights.manifest, "--repo", nights.work.path)
    text = nights.cli("diff", *args).stdout
    assert "  pr/3: status: applied -> not applied (the lock has no reason)\n" in text, text
    assert "for the reasons, diff the nights' reports (each night's `sync --report FILE`): carrytool diff " \
           "OLD.json NEW.json" in text and "skipped" not in text, text
    report = tmp_path / "sync-report.json"
    nights.cli("sync", *args, "--dry-run", "--report", report)
    text = nights.cli("diff", "HEAD~1:carries/manifest.yaml.lock", report, *args).stdout
    assert "  pr/3: status: applied -> conflict\n" in text and "the lock has no reason" not in text, text
    _, out = _diff(nights)            # the JSON keeps its documented value
    assert next(e for e in out["entries"] if e["id"] == "pr/3")["to"]["status"] == "skipped"


def test_refolded_carry(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path, cli)
    one = n.up.commit({"e.py": H.format(1)}, "union v1", parent=n.base)
    n.work.git("fetch", "-q", str(n.up.path), f"{one}:refs/union/one")
    n.night([{"carry": "u", "commit": one}])
    two = n.up.commit({"e.py": H.format(2)}, "union v1", parent=n.base)
    n.work.git("fetch", "-q", str(n.up.path), f"{two}:refs/union/two")
    n.night([{"carry": "u", "commit": two}])
    _, out = _diff(n)
    [item] = out["entries"]
    assert item["change"] == "refolded" and (item["from"]["commit"], item["to"]["commit"]) == (one, two)
    assert [p["change"] for p in item["range_diff"]] == ["!"]
    lock = json.loads(n.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    lock["entries"][0]["commit"] = "3" * 40          # a commit only its range-diff reads: left out, said
    old = tmp_path / "old.lock"
    old.write_text(json.dumps(lock))
    code, out = n.cli.json("diff", str(old), "-m", n.manifest, "--repo", n.work.path)
    [item] = out["entries"]
    assert code == 0 and (item["change"], item["range_diff"]) == ("refolded", []), out
    assert item["range_diff_unavailable"] == [f"{'3' * 40} (carry/u commit in {old}): the manifest names no fork url: "
                                              "it is in the repository that night's sync ran in"]     # (h262)




def test_a_sync_report_as_the_new_night(nights: Nights, tmp_path: Path) -> None:
    """On a red night no lock is written: its report stands in, with each entry's status and reason."""
    report = tmp_path / "sync-report.json"
    nights.cli("sync", "-m", nights.manifest, "--repo", nights.work.path, "--dry-run", "--report", report)
    _, default = _diff(nights)
    code, out = _diff(nights, "HEAD~1:carries/manifest.yaml.lock", str(report))
    assert code == 0, out
    assert out["upstream"] == default["upstream"]
    assert [(e["id"], e["change"]) for e in out["entries"]] == [(e["id"], e["change"]) for e in default["entries"]]
    skipped = next(e for e in out["entries"] if e["id"] == "pr/3")
    assert (skipped["to"]["status"], skipped["to"]["reason"]) == ("conflict", "conflict")
    assert next(e for e in out["entries"] if e["id"] == "pr/1")["range_diff"] == \
        next(e for e in default["entries"] if e["id"] == "pr/1")["range_diff"]
    # the report has no manifest beside it: it was made from the one on disk, whose asserts are compared
    # (helper-100: "asserts not compared", always, on the red night one wants them)
    assert out["asserts"] == default["asserts"] == {"added": ["f-defined"], "removed": [], "changed": [],
                                                    "known": True, "failing": [], "holding_again": []}


def test_a_report_of_a_sync_that_stopped_before_composing(nights: Nights, tmp_path: Path) -> None:
    """A night that stopped before it had a plan (a PR gone under on_missing: fail) writes a report with no
    entries; diff said it was "not a carrytool lock" (helper-82). It says what stopped that night."""
    nights.up.git("update-ref", "-d", "refs/pull/4/head")
    report = tmp_path / "sync-report.json"
    run = nights.cli("sync", "-m", nights.manifest, "--repo", nights.work.path, "--report", report)
    assert run.exit_code == 2 and "entries" not in json.loads(report.read_text())
    result = nights.cli("diff", "HEAD:carries/manifest.yaml.lock", str(report), "-m", nights.manifest,
                        "--repo", nights.work.path)
    assert result.exit_code == 2, result.output
    assert f"{report} is the report of a sync that stopped before it composed anything (exit 2), so it has no " \
           "entries to compare; it stopped on:\n  " in result.stderr
    assert "pr/4: upstream has no refs/pull/4/head" in result.stderr and "not a carrytool lock" not in result.stderr


def test_a_reason_known_on_one_side_only_is_no_change(tmp_path: Path, cli: Cli) -> None:
    """A lock copied away from its manifest knows an entry was skipped, not why: that is not a change."""
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2, "enabled": False}])
    lock = n.manifest.with_name("manifest.yaml.lock")
    copy = tmp_path / "last-night.lock"
    copy.write_text(lock.read_text())
    code, out = n.cli.json("diff", str(copy), str(lock), "-m", n.manifest, "--repo", n.work.path)
    assert code == 0, out
    disabled = next(e for e in out["entries"] if e["id"] == "pr/2")
    assert disabled["change"] == "unchanged", disabled
    assert (disabled["from"].get("reason"), disabled["to"].get("reason")) == (None, "disabled")


def test_a_pr_whose_head_upstream_has_is_diffed_without_git_refusing(tmp_path: Path, cli: Cli) -> None:
    """A moved PR whose range is empty on one night (its head is its base: upstream has it, merged by a
    fast-forward, here pinned so) gives the other night's commits as range-diff lists a range's own
    commits; `git range-diff` itself refuses an empty range ("need two commit ranges"), which failed the
    whole diff with exit 4 (a new user's trial on fastapi)."""
    nights = Nights(tmp_path, cli)
    nights.night([{"pr": 1}, {"pr": 2}])
    nights.night([{"pr": 1, "head": nights.base}, {"pr": 2}])
    code, out = _diff(nights)
    assert code == 0, out
    moved = next(e for e in out["entries"] if e["id"] == "pr/1")
    assert moved["change"] == "moved" and moved["to"]["status"] == "skipped", moved
    assert [(p["old"], p["new"], p["change"], p["subject"]) for p in moved["range_diff"]] == [
        (nights.p1a, None, "<", "f returns 10"), (nights.p1b, None, "<", "add h")]
    nights.night([{"pr": 1}, {"pr": 2}])                     # and back: every commit is the new night's own
    code, out = _diff(nights)
    assert code == 0, out
    moved = next(e for e in out["entries"] if e["id"] == "pr/1")
    assert [(p["old"], p["new"], p["change"]) for p in moved["range_diff"]] == [
        (None, nights.p1a, ">"), (None, nights.p1b, ">")]


def test_the_default_old_night_is_the_last_commit_of_the_lock(tmp_path: Path, cli: Cli) -> None:
    """helper-97: a night, then a person's commit of the manifest alone (an assert renamed, another made
    stricter, an entry disabled), then a night: `carrytool diff` read HEAD~1's lock (the first night's)
    beside HEAD~1's manifest (already the edited one), so the assert changes went unsaid. The old night is
    the commit that last changed the lock before the one on disk, its manifest read at that commit."""
    n = Nights(tmp_path, cli)
    once = {"name": "h-once", "file": "a.py", "in": "f", "calls": "g", "times": 0}
    first = n.night([{"pr": 1}, {"pr": 2}, {"pr": 3}], asserts=[{"name": "f-old", "file": "a.py", "defines": "f"},
                                                                 once])
    night_one = n.fork.ref("refs/heads/main")
    edited = [{"pr": 1}, {"pr": 2, "enabled": False}, {"pr": 3}]
    stricter = {**once, "times": None, "max": 0}
    del stricter["times"]
    asserts = [{"name": "f-new", "file": "a.py", "defines": "f"}, stricter]
    write_manifest(n.manifest, {"version": 1, "upstream": {"url": "../../up", "branch": "main"},
                                "fork": {"branch": "dev"}, "policy": {"on_conflict": "skip"}, "entries": edited,
                                "asserts": asserts})
    n.fork.commit({"carries/manifest.yaml": n.manifest.read_text()}, "a person: rename an assert, drop pr/2",
                  parent=night_one, ref="refs/heads/main")
    n.fork.git("reset", "-q", "--hard")
    second = n.night(edited, asserts=asserts)          # this night's lock and manifest, committed
    for committed in (True, False):
        if not committed:       # the night wrote its lock and has not committed it yet: the same old night
            n.fork.git("reset", "-q", "--soft", "HEAD~1")
        code, out = cli.json("diff", "-m", n.manifest, "--repo", n.work.path)
        assert code == 0, out
        # night one is HEAD~2 (said by its SHA) once the second night is committed, HEAD~1 before
        assert out["locks"]["old"] == f"{night_one if committed else 'HEAD~1'}:carries/manifest.yaml.lock"
        assert out["asserts"] == {"added": ["f-new"], "removed": ["f-old"], "changed": ["h-once"],
                                  "known": True, "failing": [], "holding_again": []}, out["asserts"]
        pr2 = next(e for e in out["entries"] if e["id"] == "pr/2")
        assert (pr2["change"], pr2["from"]["status"], pr2["to"]["status"], pr2["to"]["reason"]) == (
            "status", "applied", "skipped", "disabled"), pr2
        assert out["result"] == {"from": first["result"], "to": second["result"]}
    n.fork.git("commit", "-q", "-m", "night")
    text = cli("diff", "-m", n.manifest, "--repo", n.work.path).stdout
    assert "asserts changed: h-once" in text and "asserts added: f-new" in text


def test_a_new_order_is_said_with_the_branch_it_composed(nights: Nights) -> None:
    """helper-97: two entries swapped, the branch composed anew, and diff said "3 unchanged"."""
    nights.night([{"pr": 4}, {"pr": 3}, {"pr": 1}], asserts=[{"name": "f-defined", "file": "a.py", "defines": "f"}])
    code, out = _diff(nights)
    assert code == 0, out
    assert out["order"] == {"from": ["pr/1", "pr/3", "pr/4"], "to": ["pr/4", "pr/3", "pr/1"]}
    assert out["result"]["from"] != out["result"]["to"]
    assert {e["change"] for e in out["entries"]} == {"unchanged"}
    text = nights.cli("diff", "-m", nights.manifest, "--repo", nights.work.path).stdout
    assert "3 unchanged; order changed" in text and "order changed: pr/1, pr/3, pr/4 -> pr/4, pr/3, pr/1" in text
    assert f"composed: {out['result']['from'][:12]} -> {out['result']['to'][:12]}" in text
    md = nights.cli("diff", "-m", nights.manifest, "--repo", nights.work.path, "--format", "markdown").stdout
    assert "order changed: pr/1, pr/3, pr/4" in md


def _lockless_night(n: Nights) -> None:
    """The fork's lock deleted in a commit of its own."""
    n.fork.git("rm", "-q", "carries/manifest.yaml.lock")
    n.fork.git("commit", "-q", "-m", "drop the lock")


def test_the_default_old_night_skips_a_deleted_lock_and_line_ends(tmp_path: Path, cli: Cli) -> None:
    """helper-98: the commit that deleted the lock was taken as the night before (exit 2, "no lock at
    HEAD:..."); in a core.autocrlf checkout, the committed lock never equalled the one on disk, so diff
    compared the lock with itself ("2 unchanged")."""
    n = Nights(tmp_path, cli)
    n.night([{"pr": 1}, {"pr": 2}])
    second = n.night([{"pr": 1}, {"pr": 3}])
    night_two = n.fork.ref("refs/heads/main")
    _lockless_night(n)
    write_manifest(n.manifest, {"version": 1, "upstream": {"url": "../../up", "branch": "main"},
                                "fork": {"branch": "dev"}, "policy": {"on_conflict": "skip"},
                                "entries": [{"pr": 1}, {"pr": 4}]})
    assert cli("sync", "-m", n.manifest, "--repo", n.work.path).exit_code == 0      # not committed
    code, out = cli.json("diff", "-m", n.manifest, "--repo", n.work.path)
    assert code == 0, out
    assert out["locks"]["old"] == "HEAD~1:carries/manifest.yaml.lock" and out["result"]["from"] == second["result"]
    assert {e["id"]: e["change"] for e in out["entries"]} == {"pr/1": "unchanged", "pr/4": "added", "pr/3": "removed"}
    n.fork.git("add", "carries/manifest.yaml.lock")
    n.fork.git("commit", "-q", "-m", "night")
    code, again = cli.json("diff", "-m", n.manifest, "--repo", n.work.path)      # committed: the same night before
    assert again["locks"]["old"] == f"{night_two}:carries/manifest.yaml.lock" and again["entries"] == out["entries"]
    crlf = tmp_path / "crlf"      # the fork cloned with CRLF line ends in its checkout
    subprocess.run(["git", "-c", "core.autocrlf=true", "clone", "-q", str(n.fork.path), str(crlf)], check=True)
    subprocess.run(["git", "config", "core.autocrlf", "true"], cwd=crlf, check=True)
    assert b"\r\n" in (crlf / "carries" / "manifest.yaml.lock").read_bytes()
    code, there = cli.json("diff", "-m", crlf / "carries" / "manifest.yaml", "--repo", n.work.path)
    assert code == 0 and there["locks"]["old"].startswith(night_two) and there["entries"] == out["entries"], there


def test_a_shallow_clone_says_its_history_is_cut(nights: Nights, tmp_path: Path) -> None:
    """helper-98: in a clone of depth 2, the history's cut end looked like the commit that added the lock,
    and diff compared with it, silently: it refuses, naming the fetch that brings the history."""
    nights.fork.git("commit", "-q", "--allow-empty", "-m", "a commit of something else")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{nights.fork.path}", str(shallow)], check=True)
    result = nights.cli("diff", "-m", shallow / "carries" / "manifest.yaml", "--repo", nights.work.path)
    assert result.exit_code == 2 and "shallow clone" in result.stderr and "--deepen" in result.stderr, result.output
    deep = tmp_path / "deep"
    subprocess.run(["git", "clone", "-q", "--depth", "3", f"file://{nights.fork.path}", str(deep)], check=True)
    code, out = nights.cli.json("diff", "-m", deep / "carries" / "manifest.yaml", "--repo", nights.work.path)
    # depth 3 reaches the first commit of all, which has no parent: nothing is cut
    first = nights.fork.git("rev-parse", "HEAD~2")
    assert code == 0 and out["locks"]["old"] == f"{first}:carries/manifest.yaml.lock", out
    assert out["asserts"]["added"] == ["f-defined"], out


def test_no_manifest_folder_is_an_input_error(cli: Cli, tmp_path: Path) -> None:
    """helper-98: `carrytool diff` where carries/ is not there was a traceback."""
    result = cli("diff", "-m", tmp_path / "nowhere" / "manifest.yaml", "--repo", tmp_path, "--format", "json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["kind"] == "InputError"


def test_a_missing_manifest_or_lock_is_named(nights: Nights) -> None:
    """helper-102: a manifest that is not there was "not in a git work tree" (its folder missing) or "no
    committed night before the lock on disk" (in the work tree), and a missing lock the latter too."""
    missing = nights.manifest.with_name("nope.yaml")
    for manifest in (missing, nights.manifest.parent / "carries" / "manifest.yaml"):
        result = nights.cli("diff", "-m", manifest, "--repo", nights.work.path)
        assert result.exit_code == 2 and f"no manifest at {manifest}" in result.stderr, result.stderr
    result = nights.cli("diff", "-m", nights.manifest.parent, "--repo", nights.work.path)
    assert result.exit_code == 2 and f"cannot read the manifest {nights.manifest.parent}: Is a directory" in \
        result.stderr, result.stderr
    missing.write_text(nights.manifest.read_text())
    result = nights.cli("diff", "-m", missing, "--repo", nights.work.path)
    assert result.exit_code == 2 and f"no lock at {missing}.lock" in " ".join(result.stderr.split()), result.stderr
    # with both nights named, neither is needed
    result = nights.cli("diff", "HEAD~1:carries/manifest.yaml.lock", "HEAD:carries/manifest.yaml.lock", "-m",
                        missing, "--repo", nights.work.path)
    assert result.exit_code == 0, result.output


def test_what_does_not_change_an_assert_is_no_change(tmp_path: Path) -> None:
    """helper-98: `args` with their keys reordered, `after` reordered, `in_try: false` against none, a new `why`
    were reported as changed asserts; `in_try: true` is a change."""
    from carrytool.manifest.load import load_manifest
    from carrytool.review.diff import _asserts

    one = {"name": "c", "file": "a.py", "in": "f", "calls": "g", "args": {"0": "x", "key": "y"}, "after": ["a", "b"]}
    two = {**one, "args": {"key": "y", "0": "x"}, "after": ["b", "a"], "in_try": False, "why": "reworded"}

    def manifest(name: str, spec: dict):
        data = {"version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
                "entries": [{"pr": 1}], "asserts": [spec]}
        return load_manifest(write_manifest(tmp_path / name / "manifest.yaml", data))

    assert _asserts(manifest("one", one), manifest("two", two)) == {"added": [], "removed": [], "changed": [],
                                                                    "known": True}
    assert _asserts(manifest("one", one), manifest("three", {**two, "in_try": True}))["changed"] == ["c"]
    assert _asserts(manifest("one", one), manifest("four", {**one, "after": ["a"]}))["changed"] == ["c"]


def test_a_night_composed_again_since_is_fetched_by_its_sha(nights: Nights, tmp_path: Path) -> None:
    """helper-100: the morning after, the night before's composed result is not on the fork branch any more
    (each night composes it again on a new upstream): the hint named only `git fetch FORK BRANCH`, which can
    never bring it. It names the fetch by SHA too, and the repository where that night's sync ran."""
    lock = json.loads(nights.manifest.with_name("manifest.yaml.lock").read_text())
    gone = "b" * 40
    lock["result"] = gone
    old = tmp_path / "old.lock"
    old.write_text(json.dumps(lock))
    result = nights.cli("diff", str(old), str(nights.manifest.with_name("manifest.yaml.lock")), "-m",
                        nights.manifest, "--repo", nights.work.path)
    assert result.exit_code == 4, result.output
    # no fork url: no fetch, but where it is (h262: `git fetch FORK_URL dev`; with a url, the fetch by SHA too:
    # tests/review/test_diff_two_red_reports.py)
    assert f"{gone} (the composed dev in {old}): the manifest names no fork url: sync wrote its branch in the " \
           "repository it ran in; run diff in the repository that night's sync ran in" in result.stderr


def test_a_report_as_the_older_night_has_no_known_asserts(nights: Nights, tmp_path: Path) -> None:
    """helper-101: a red night's report given as OLD was read with today's manifest (-m), so an assert added
    since read as no change (`known: true`). Only the newer night's report is read with the manifest given."""
    report = tmp_path / "sync-report.json"
    nights.cli("sync", "-m", nights.manifest, "--repo", nights.work.path, "--dry-run", "--report", report)
    nights.night([{"pr": 1}, {"pr": 3}, {"pr": 4}], asserts=[{"name": "f-defined", "file": "a.py", "defines": "f"},
                                                             {"name": "g-new", "file": "a.py", "not_calls": "g", "in": "f"}])
    code, out = _diff(nights, str(report))
    assert code == 0, out
    assert out["asserts"] == {"added": [], "removed": [], "changed": [], "known": False, "failing": [],
                              "holding_again": []}
    text = nights.cli("diff", str(report), "-m", nights.manifest, "--repo", nights.work.path).stdout
    assert "asserts not compared: the older night's manifest is not known (a report names none, and `-m` is the " \
        "newer night's)" in " ".join(text.split()), text


def test_a_report_says_the_head_of_a_pr_it_skipped_before_reading_it(tmp_path: Path, cli: Cli) -> None:
    """helper-102: a sync report gave no `head` to a PR superseded whole (or disabled), so `diff` of a red
    night's report said such a PR was unchanged where the lock of the same night said it moved."""
    n = Nights(tmp_path, cli)
    union = n.up.commit({"a.py": "def f():\n    return 10\n", "h.py": H.format(3)}, "union", parent=n.base)
    n.work.git("fetch", "-q", str(n.up.path), f"{union}:refs/union/one")
    entries = [{"pr": 1}, {"pr": 2, "enabled": False}, {"carry": "u", "commit": union,
                                                         "supersedes": [{"pr": 1, "head": n.p1b}]}]
    n.night(entries)
    n.second_day()
    p2 = n.up.commit({"c.txt": "c3\n"}, "pr 2 again", parent=n.p2, ref="refs/pull/2/head")
    report = tmp_path / "sync-report.json"
    n.cli("sync", "-m", n.manifest, "--repo", n.work.path, "--dry-run", "--report", report)
    heads = {e["id"]: e.get("head") for e in json.loads(report.read_text())["entries"]}
    assert heads == {"pr/1": n.p1c, "pr/2": p2, "carry/u": union}, heads
    n.night(entries)
    _, by_locks = _diff(n)
    code, by_report = _diff(n, "HEAD~1:carries/manifest.yaml.lock", str(report))
    assert code == 0 and [(e["id"], e["change"]) for e in by_report["entries"]] == \
        [(e["id"], e["change"]) for e in by_locks["entries"]] == [("pr/1", "moved"), ("pr/2", "moved"),
                                                                 ("carry/u", "unchanged")], by_report


def test_the_diff_of_two_reports_says_the_new_night_failed_and_on_which_assert(nights: Nights, tmp_path: Path
                                                                               ) -> None:
    """helper-143: the night an assert was added and failed, `diff` of the two nights' reports said only that a
    PR moved: not that the new night was red, nor which assert failed. Each report's outcome and assert
    results are compared; a lock's night is one that published, every assert of its manifest held."""
    args = ("-m", nights.manifest, "--repo", nights.work.path)
    green, red = tmp_path / "green.json", tmp_path / "red.json"
    assert nights.cli("sync", *args, "--dry-run", "--report", green).exit_code == 0
    data = yaml.safe_load(nights.manifest.read_text())
    data["asserts"].append({"name": "g-defined", "file": "a.py", "defines": "g"})
    write_manifest(nights.manifest, data)
    assert nights.cli("sync", *args, "--report", red).exit_code == 1
    code, out = _diff(nights, str(green), str(red))
    assert code == 0, out
    assert out["outcome"] == {"from": {"ok": True, "exit_code": 0, "published": False},
                              "to": {"ok": False, "exit_code": 1, "published": False}}
    [failing] = out["asserts"]["failing"]
    assert failing["name"] == "g-defined" and failing["message"] and failing["before"] == "new", failing
    assert out["asserts"]["holding_again"] == []
    text = " ".join(nights.cli("diff", str(green), str(red), *args).stdout.split())
    assert "run: ok (exit 0, a report) -> FAILED (exit 1, a report)" in text, text
    assert f"assert failing now: g-defined (new since the old night): {failing['message']}" in text, text
    # the next night publishes again (the assert taken out): it no longer fails, and it is not "holding again"
    data["asserts"] = data["asserts"][:-1]
    write_manifest(nights.manifest, data)
    assert nights.cli("sync", *args).exit_code == 0
    code, back = _diff(nights, str(red), str(nights.manifest.with_name("manifest.yaml.lock")))
    assert back["outcome"]["to"] == {"ok": True, "exit_code": 0, "published": True}, back["outcome"]
    assert (back["asserts"]["failing"], back["asserts"]["holding_again"]) == ([], []), back["asserts"]
    assert "run: FAILED (exit 1, a report) -> published (a lock)" in nights.cli(
        "diff", str(red), str(nights.manifest.with_name("manifest.yaml.lock")), *args).stdout


def test_an_assert_failing_after_a_night_that_ran_none_is_not_said_to_have_held(nights: Nights, tmp_path: Path
                                                                                ) -> None:
    """helper-144: the old night stopped before its asserts (a conflict under `on_conflict: fail`, exit 3) and
    the new one fails an assert: it was said "failing now", as if it had held. And a report without
    `exit_code` (the schema does not require it) read "exit None"."""
    args = ("-m", nights.manifest, "--repo", nights.work.path)
    stopped, red = tmp_path / "stopped.json", tmp_path / "red.json"
    data = yaml.safe_load(nights.manifest.read_text())
    data["asserts"].append({"name": "g-defined", "file": "a.py", "defines": "g"})
    write_manifest(nights.manifest, data)
    assert nights.cli("sync", *args, "--report", red).exit_code == 1
    old = json.loads(red.read_text())
    old.update(ok=False, exit_code=3, asserts=[])        # as a run that stopped on a conflict writes it
    stopped.write_text(json.dumps(old))
    code, out = _diff(nights, str(stopped), str(red))
    assert code == 0 and [f["before"] for f in out["asserts"]["failing"]] == ["not run"], out["asserts"]
    text = " ".join(nights.cli("diff", str(stopped), str(red), *args).stdout.split())
    assert "assert failing now: g-defined (not run on the old night: it stopped before its asserts)" in text, text
    del old["exit_code"]
    stopped.write_text(json.dumps(old))
    text = " ".join(nights.cli("diff", str(stopped), str(red), *args).stdout.split())
    assert "run: FAILED (a report) -> FAILED (exit 1, a report)" in text and "None" not in text, text


def _union_takes_over(tmp_path: Path, cli: Cli) -> Nights:
    """helper-159's celery trial, small: night A applies pr/6 and skips pr/3 (they conflict in b.py); night B
    adds a union that provides pr/6's b.py and the whole of pr/3 (`union new --paths 6=b.py`). Each night's
    sync report is kept beside the fork as night-a.json and night-b.json."""
    n = Nights(tmp_path, cli)
    n.up.commit({"b.py": "x = 1\ny = 2\nz = 60\n", "e.txt": "e\n"}, "pr 6", parent=n.base, ref="refs/pull/6/head")
    n.night([{"pr": 6}, {"pr": 3}])
    n.cli("sync", "-m", n.manifest, "--repo", n.work.path, "--report", tmp_path / "night-a.json")
    union = n.up.commit({"b.py": "x = 1\ny = 2\nz = 36\n"}, "union", parent=n.base)
    n.work.git("fetch", "-q", str(n.up.path), f"{union}:refs/union/one")
    n.night([{"carry": "u", "commit": union, "supersedes": [{"pr": 6, "paths": ["b.py"]}, 3]}, {"pr": 6}, {"pr": 3}])
    n.cli("sync", "-m", n.manifest, "--repo", n.work.path, "--report", tmp_path / "night-b.json")
    return n


def test_a_status_or_the_paths_a_union_provides_changed_is_a_change(tmp_path: Path, cli: Cli) -> None:
    """helper-159: `pr/3: unchanged: not applied -> skipped (superseded)` (the night before's manifest says it was
    not superseded then), and `pr/6: unchanged: applied` though its b.py now comes from the union (the chain's
    `Carry-Filtered` trailer says so)."""
    n = _union_takes_over(tmp_path, cli)
    code, out = _diff(n)
    assert code == 0, out
    items = {e["id"]: e for e in out["entries"]}
    assert {i: e["change"] for i, e in items.items()} == {"carry/u": "added", "pr/6": "status", "pr/3": "status"}
    assert items["pr/3"]["to"]["reason"] == "superseded" and "reason" not in items["pr/3"]["from"]
    assert "provided_by" not in items["pr/6"]["from"]
    assert items["pr/6"]["to"]["provided_by"] == {"b.py": "carry/u"}
    text = n.cli("diff", "-v", "-m", n.manifest, "--repo", n.work.path).stdout
    assert "pr/6: status: applied -> applied (b.py provided by carry/u)" in text, text
    assert "pr/3: status: not applied -> skipped (superseded)" in text, text
    assert "unchanged" not in text, text
    markdown = n.cli("diff", "--format", "markdown", "-m", n.manifest, "--repo", n.work.path).stdout
    assert "| `pr/6` | status | applied → applied (b.py provided by carry/u) |" in markdown, markdown
    # the two nights' reports say the same of pr/6 (helper-159: diffed, they still said it unchanged)
    code, out = _diff(n, str(tmp_path / "night-a.json"), str(tmp_path / "night-b.json"))
    items = {e["id"]: e for e in out["entries"]}
    assert (items["pr/3"]["change"], items["pr/3"]["from"]["status"]) == ("status", "conflict"), items["pr/3"]
    assert items["pr/6"]["change"] == "status" and items["pr/6"]["to"]["provided_by"] == {"b.py": "carry/u"}


def test_a_lock_without_its_manifest_is_not_said_unchanged_beside_a_reason(tmp_path: Path, cli: Cli) -> None:
    """Away from its manifest a lock cannot say why an entry was left out: the entry stays `unchanged` in JSON
    (test_a_reason_known_on_one_side_only_is_no_change), but the text does not print `unchanged` beside an
    arrow from one status to another (helper-159)."""
    n = _union_takes_over(tmp_path, cli)
    copy = tmp_path / "last-night.lock"
    copy.write_text(n.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    lock = n.manifest.with_name("manifest.yaml.lock")
    text = n.cli("diff", "-v", str(copy), str(lock), "-m", n.manifest, "--repo", n.work.path).stdout
    line = next(li for li in text.splitlines() if li.startswith("  pr/3:"))
    assert line == "  pr/3: unchanged: skipped (superseded) (not applied the older night: the lock has no reason)", \
        text


def test_a_pr_whose_head_went_or_came_back_is_a_change(tmp_path: Path, cli: Cli) -> None:
    """h198's sympy trial: a PR that conflicted (not applied) was closed, its ref deleted; under `on_missing:
    skip` the next night's lock holds `head: null`, and diff said "2 unchanged". Its head going is a status
    change (now skipped: missing), in JSON, text and Markdown; and so is its coming back."""
    n = Nights(tmp_path, cli)
    n.second_day()                                            # pr/3 conflicts with upstream from the start
    entries = [{"pr": 1}, {"pr": 3, "on_missing": "skip"}]
    n.night(entries)
    n.up.git("update-ref", "-d", "refs/pull/3/head")
    n.night(entries)
    args = ("-m", n.manifest, "--repo", n.work.path)
    code, out = _diff(n)
    assert code == 0, out
    items = {e["id"]: e for e in out["entries"]}
    assert {i: e["change"] for i, e in items.items()} == {"pr/1": "unchanged", "pr/3": "status"}, out
    gone = items["pr/3"]
    assert (gone["from"]["head"], gone["to"]["head"], gone["to"]["reason"]) == (n.p3, None, "missing"), gone
    text = n.cli("diff", *args).stdout
    assert f"  pr/3: status: head {n.p3[:12]} gone (the PR's ref is missing); not applied -> skipped (missing)" \
        in text, text
    assert "1 status, 1 unchanged" in text, text
    markdown = n.cli("diff", "--format", "markdown", *args).stdout
    assert f"| `pr/3` | status | head {n.p3[:12]} gone (the PR's ref is missing); not applied → skipped (missing)" \
        in markdown, markdown
    old, new = tmp_path / "old.lock", tmp_path / "new.lock"   # away from their manifest: no reason, a change
    old.write_text(n.fork.show("HEAD~1", "carries/manifest.yaml.lock"))
    new.write_text(n.manifest.with_name("manifest.yaml.lock").read_text())
    code, out = n.cli.json("diff", str(old), str(new), *args)
    away = next(e for e in out["entries"] if e["id"] == "pr/3")
    assert (away["change"], away["to"]["head"], away["to"].get("reason")) == ("status", None, None), away
    n.up.git("update-ref", "refs/pull/3/head", n.p3)          # reopened: its head is back (and conflicts again)
    n.night(entries)
    code, out = _diff(n)
    back = next(e for e in out["entries"] if e["id"] == "pr/3")
    assert back["change"] == "status" and (back["from"]["head"], back["to"]["head"]) == (None, n.p3), back
    assert back["from"]["reason"] == "missing" and "reason" not in back["to"], back
    text = n.cli("diff", *args).stdout
    assert f"  pr/3: status: head back at {n.p3[:12]}; skipped (missing) -> not applied" in text, text
    old.write_text(new.read_text())
    new.write_text(n.manifest.with_name("manifest.yaml.lock").read_text())
    code, out = n.cli.json("diff", str(old), str(new), *args)
    assert next(e for e in out["entries"] if e["id"] == "pr/3")["change"] == "status", out


def test_an_entrys_settings_changed_alone_is_a_change(tmp_path: Path, cli: Cli) -> None:
    """An entry whose settings in the manifest changed (its title: the commit's subject; its on_conflict) with
    the same head was said `unchanged`; it is `refolded` (the contract's kinds stay fixed: the entry is composed
    again under its new settings), its `settings` naming what changed when both manifests are known, else the
    lock's settings digests."""
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}, {"pr": 4}])
    copy = tmp_path / "last-night.lock"
    copy.write_text(n.manifest.with_name("manifest.yaml.lock").read_text())
    n.night([{"pr": 1, "title": "f returns ten"}, {"pr": 2, "on_conflict": "fail"}, {"pr": 4, "enabled": False}])
    code, out = _diff(n)
    assert code == 0, out
    items = {e["id"]: e for e in out["entries"]}
    assert {i: e["change"] for i, e in items.items()} == {"pr/1": "refolded", "pr/2": "refolded",
                                                          "pr/4": "status"}, out
    assert [items[i]["settings"]["changed"] for i in ("pr/1", "pr/2", "pr/4")] == [["title"], ["on_conflict"],
                                                                                    ["enabled"]], out
    text = n.cli("diff", "-m", n.manifest, "--repo", n.work.path).stdout
    assert "  pr/1: refolded: title changed\n" in text and "  pr/2: refolded: on_conflict changed\n" in text, text
    assert "  pr/4: status: applied -> skipped (disabled); enabled changed\n" in text, text
    lock = n.manifest.with_name("manifest.yaml.lock")       # away from its manifest: the digests alone
    away = tmp_path / "new.lock"
    away.write_text(lock.read_text())
    code, out = n.cli.json("diff", str(copy), str(away), "-m", n.manifest, "--repo", n.work.path)
    first = next(e for e in out["entries"] if e["id"] == "pr/1")
    old_lock, new_lock = json.loads(copy.read_text()), json.loads(lock.read_text())
    assert first["change"] == "refolded" and first["settings"] == {
        "from": old_lock["entries"][0]["settings"], "to": new_lock["entries"][0]["settings"], "changed": None}, first


def test_a_night_record_says_plainly_it_has_no_manifest_and_how_to_compare_asserts(nights: Nights) -> None:
    """h248 (the sqlalchemy trial): `diff refs/carrytool/dev/nights:<sha>.lock carries/manifest.yaml.lock` said
    "the older night's manifest is not known (a lock's is the manifest beside it (...), and there is none that
    parses)": a record in the repository never has a manifest beside it."""
    record = nights.work.git("rev-parse", "refs/carrytool/dev/nights").strip()
    nights.fork.git("fetch", "-q", str(nights.work.path), f"{record}:refs/carrytool/dev/nights")
    older = nights.work.git("show", "refs/carrytool/dev/nights:order").split()[1]
    lock = str(nights.manifest.with_name("manifest.yaml.lock"))
    text = nights.cli("diff", f"refs/carrytool/dev/nights:{older}.lock", lock, "-m", nights.manifest, "--repo",
                      nights.work.path).stdout
    said = " ".join(text.split())
    committed = nights.fork.git("rev-parse", "HEAD~1").strip()       # the night before's commit of its lock
    assert ("asserts not compared: the older night is sync's record refs/carrytool/dev/nights:"
            f"{older}.lock, which holds the lock alone and no manifest; to compare asserts, name the lock committed "
            f"with that night's manifest instead: `carrytool diff {committed[:12]}:carries/manifest.yaml.lock "
            f"{lock}`") in said, text
    assert "there is none that parses" not in said
    named = nights.cli("diff", f"{committed[:12]}:carries/manifest.yaml.lock", lock, "-m", nights.manifest,
                       "--repo", nights.work.path).stdout
    assert "asserts not compared" not in named and "asserts added: f-defined" in " ".join(named.split()), named
    # a record no commit holds the lock of: said so, and no command
    nights.fork.git("update-ref", "refs/carrytool/dev/nights", record)
    newest = nights.work.git("show", "refs/carrytool/dev/nights:order").split()[0]
    nights.fork.git("reset", "-q", "--hard", "HEAD~1")
    text = nights.cli("diff", lock, f"refs/carrytool/dev/nights:{newest}.lock", "-m", nights.manifest, "--repo",
                      nights.work.path).stdout
    assert ("asserts not compared: the newer night is sync's record refs/carrytool/dev/nights:"
            f"{newest}.lock, which holds the lock alone and no manifest; no commit of this repository's history "
            "has that night's lock at carries/manifest.yaml.lock, so its manifest is not known here") \
        in " ".join(text.split()), text
