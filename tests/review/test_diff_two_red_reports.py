"""`carrytool diff` of two red nights' reports in the nightly job's fresh clone (h262: pola-rs/polars, as docs/ci.md
step 7 says to keep and compare them): the older night's composed commit was never pushed, so no fetch can bring
it. diff was exit 4 with the advice `git fetch FORK_URL BRANCH` (placeholders: a report names no manifest). It
compares what the reports say (entries, heads, outcomes, asserts) and says plainly what it could not read, and why;
a commit a fetch can bring is named with the real URL and branch."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import Cli
from tests.gitrepo import init_repo, write_manifest
from tests.review.test_diff import Nights


def _two_red_nights(tmp_path: Path, cli: Cli) -> tuple[Nights, Path, Path, Path]:
    """Night 1 green (lock committed); nights 2 and 3 red (an assert fails), each run in its own fresh clone of
    upstream and the fork branch, as CI runs them; their reports kept. Returns (nights, report 2, report 3, the
    clone night 3 ran in)."""
    n = Nights(tmp_path, cli)
    fork = init_repo(tmp_path / "fork.git", bare=True)
    data = {"version": 1, "upstream": {"url": "../../up", "branch": "main"},
            "fork": {"url": str(fork.path), "branch": "dev"}, "policy": {"on_conflict": "skip"},
            "entries": [{"pr": 1}, {"pr": 2}, {"pr": 3}]}
    write_manifest(n.manifest, data)
    assert cli("sync", "-m", n.manifest, "--repo", n.work.path, "--push").exit_code == 0
    n.second_day()
    data["asserts"] = [{"name": "no-z33", "file": "b.py", "absent": "z = 33"}]
    write_manifest(n.manifest, data)
    reports = []
    for night in (2, 3):
        clone = init_repo(tmp_path / f"ci{night}", bare=True)
        clone.git("fetch", "-q", str(fork.path), "refs/heads/dev:refs/heads/dev")
        result = cli("sync", "-m", n.manifest, "--repo", clone.path, "--push", "--report", tmp_path / f"r{night}.json")
        assert result.exit_code == 1, result.output
        report = json.loads((tmp_path / f"r{night}.json").read_text())
        assert report["result"]["sha"] and not report["result"].get("pushed"), report["result"]
        reports.append(tmp_path / f"r{night}.json")
        if night == 2:                       # upstream moves on: night 3 composes another commit
            n.up.commit({"e.txt": "e\n"}, "upstream e", parent="main", ref="refs/heads/main")
    return n, reports[0], reports[1], clone.path


def test_two_red_reports_in_a_fresh_clone_are_compared(tmp_path: Path, cli: Cli) -> None:
    n, old, new, ci3 = _two_red_nights(tmp_path, cli)
    code, out = cli.json("diff", old, new, "-m", n.manifest, "--repo", ci3)
    assert code == 0, out
    assert out["outcome"]["from"]["ok"] is False and out["upstream"]["commits"] == 1
    assert {e["id"]: e["change"] for e in out["entries"]} == {"pr/1": "unchanged", "pr/2": "unchanged",
                                                              "pr/3": "unchanged"}
    gone = json.loads(old.read_text())["result"]["sha"]
    said = out["result_unavailable"]["from"]
    assert said.startswith(f"{gone} (the composed dev in {old}): never pushed") and out["result_unavailable"]["to"] \
        is None, out["result_unavailable"]
    assert out["resolutions"]["known"] is False
    text = cli("diff", old, new, "-m", n.manifest, "--repo", ci3)
    assert text.exit_code == 0 and "FORK_URL" not in text.output and "BRANCH" not in text.output, text.output
    flat = " ".join(text.stdout.split())
    assert "a red night publishes nothing" in flat and "run diff in the repository that night's sync ran in" in flat


def test_a_lock_away_from_its_manifest_names_the_forks_real_url(tmp_path: Path, cli: Cli) -> None:
    """A night whose composed commit a fetch can bring (a lock: a published night) is named with the fork's URL
    and branch from the other night's manifest when its own is not known, never `FORK_URL`."""
    n, _old, new, ci3 = _two_red_nights(tmp_path, cli)
    lock = json.loads(n.manifest.with_name("manifest.yaml.lock").read_text())
    lock["result"] = "b" * 40
    old = tmp_path / "night1.lock"           # no manifest beside it
    old.write_text(json.dumps(lock))
    result = cli("diff", old, new, "-m", n.manifest, "--repo", ci3)
    assert result.exit_code == 4, result.output
    fork = str((tmp_path / "fork.git").resolve())
    assert f"{'b' * 40} (the composed dev in {old}): git fetch {fork} dev; if dev was composed again since: git " \
           f"fetch {fork} {'b' * 40}, or run diff in the repository that night's sync ran in" in result.stderr, \
        result.stderr
    assert "FORK_URL" not in result.stderr and yaml.safe_load(n.manifest.read_text())["fork"]["url"] == fork
