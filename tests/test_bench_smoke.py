"""The benchmark harness runs end to end at a tiny size, and its generator is deterministic.

Not a timed test: it asserts that every runner reports a time and a count, never how fast they are.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.generate import generate, plan_workload
from bench.workloads import WORKLOADS

TINY = replace(WORKLOADS["small"], name="tiny", files=50, prs=5, overlap=0.4, multi_commit=0.4, renames=0.4)
RUNNERS = ("naive", "chain", "carrytool")


def test_generator_is_deterministic(tmp_path: Path) -> None:
    first = generate(TINY, tmp_path / "one")
    second = generate(TINY, tmp_path / "two")
    other = generate(replace(TINY, seed=TINY.seed + 1), tmp_path / "three")
    assert first.head == second.head
    assert first.manifest.read_text() == second.manifest.read_text()
    assert other.head != first.head


def test_plan_has_the_asked_shape() -> None:
    plan = plan_workload(replace(TINY, prs=40, overlap=0.5))
    assert len(plan.prs) == 40
    assert len(plan.paths) == TINY.files
    assert all(0 <= pr.base <= TINY.upstream_commits // 2 for pr in plan.prs)
    touched = [e.path for pr in plan.prs for e in pr.edits]
    assert len(touched) > len(set(touched)), "overlapping PRs share files"


def test_all_three_runners_report_a_time_and_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    code = main(["--workload", "small", "--files", "50", "--prs", "5", "--repeat", "1", "--quiet",
                 "--out", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    table = capsys.readouterr().out
    for name in RUNNERS:
        assert f"{name} s" in table
    [workload] = json.loads(out.read_text())["workloads"]
    assert workload["entries"] == 5
    for name in RUNNERS:
        runner = workload["runners"][name]
        assert runner["median_seconds"] > 0
        assert runner["applied"] == 5, (name, runner)     # the small workload's 5 PRs all apply, whatever runs them
    assert workload["runners"]["carrytool"]["peak_rss_mb"] > 0
    assert "same tree as chain" in table
    assert table.split("\n")[4].split("|")[-3].strip() == "yes"      # carrytool composed the chain's tree


def test_the_startup_runner_reports_both_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    code = main(["--workload", "small", "--files", "50", "--prs", "2", "--repeat", "1", "--quiet",
                 "--runners", "startup", "--out", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    table = capsys.readouterr().out
    assert "| workload" in table and "--version s" in table and "sync --help s" in table
    [run] = json.loads(out.read_text())["workloads"][0]["runners"]["startup"]["runs"]
    assert run["seconds"] > 0 and run["help_seconds"] > 0 and run["help_cpu_seconds"] > 0


def test_structured_bench_counts_resolved_and_refused_conflicts(small) -> None:  # noqa: ANN001
    from bench.structured import borrow, measure, render

    base = "class R:\n    def run(self):\n        return 1\n"
    small.up.commit({"r.py": base, "s.py": "def f():\n    return 1\n"}, "runner", parent=small.base,
                    ref="refs/heads/main")
    main_sha = small.up.rev("refs/heads/main")
    small.up.git("symbolic-ref", "HEAD", "refs/heads/main")
    small.pr(1, {"r.py": base + "\n    def a(self):\n        pass\n", "s.py": "def f():\n    return 2\n"},
             parent=main_sha)
    small.pr(2, {"r.py": base + "\n    def b(self):\n        pass\n", "s.py": "def f():\n    return 3\n"},
             parent=main_sha)
    pairs, chain, prs = measure(borrow(small.up.path, small.root / "borrowed.git"), 10, 10)
    assert prs == 2 and (pairs.files, pairs.resolved_files) == (2, 1)
    assert pairs.kinds == {"methods": 1} and pairs.refused == {"edit-edit": 1}
    assert (chain.files, chain.resolved_files) == (2, 1)     # s.py refuses, so pr/2 leaves the chain
    assert "| pairs | 2 | 1 (methods 1) | 1 (edit-edit 1) |" in render("small", pairs, chain, prs)


def test_explain_is_timed_beside_sync_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    code = main(["--workload", "small", "--files", "50", "--prs", "5", "--repeat", "1", "--quiet",
                 "--runners", "carrytool", "--with-explain", "--out", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    table = capsys.readouterr().out
    assert "explain beside sync" in table and "explain (warm)/sync" in table
    [run] = json.loads(out.read_text())["workloads"][0]["runners"]["carrytool"]["runs"]
    for key in ("explain_seconds", "explain_warm_seconds", "explain_cpu_seconds", "explain_rss_mb"):
        assert run[key] > 0, key
    code = main(["--workload", "small", "--files", "50", "--prs", "5", "--repeat", "1", "--quiet",
                 "--runners", "carrytool", "--out", str(tmp_path / "work")])
    assert "explain beside sync" not in capsys.readouterr().out


def test_cold_explain_keeps_what_the_syncs_kept_and_nothing_an_explain_kept(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold explain in the bench: as a reviewer's explain after the nightly sync, which finds the sync's
    kept merges, findings and patch ids, but no scope cache and no pair decisions."""
    from bench import runners

    cache = tmp_path / "repo" / "carrytool" / "cache"
    (cache / "scopes-v2-py3.11").mkdir(parents=True)
    (cache / "scopes-v2-py3.11" / "pack-1.json").write_text("{}")
    for name in ("pairs-git2.39.5.json", "merges-git2.39.5.json", "merges-git2.47.3.json", "findings-git2.39.5.json",
                 "patchids-git2.39.5.json"):
        (cache / name).write_text("{}")
    seen: list[list[str]] = []

    def timed(argv, scratch):  # noqa: ANN001, ANN202
        seen.append(sorted(p.name for p in cache.iterdir()))
        return runners.Timed(0.1, 10.0, 0.1, 0, b"", b"")

    monkeypatch.setattr(runners, "time_process", timed)
    inputs = type("Inputs", (), {"manifest": tmp_path / "m.yaml"})()
    out = runners.explain_twice(inputs, tmp_path / "repo", tmp_path)   # type: ignore[arg-type]
    assert seen[0] == ["findings-git2.39.5.json", "merges-git2.39.5.json", "merges-git2.47.3.json",
                       "patchids-git2.39.5.json"]  # what sync keeps
    assert len(seen) == 2 and out["explain_seconds"] == out["explain_warm_seconds"] == 0.1


def test_explain_cold_parts_names_each_cache_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """bench.explain_cold_parts on a tiny generated corpus: a row for sync, warm, cold and each cache kind."""
    from bench import explain_cold_parts

    # the corpus `--workload small --files 50 --prs 5` makes (its timed sync: test_explain_is_timed_beside_sync)
    manifest = generate(replace(WORKLOADS["small"], files=50, prs=5), tmp_path / "work").manifest
    monkeypatch.setattr("sys.argv", ["explain_cold_parts", str(manifest), "--repeat", "1"])
    explain_cold_parts.main()
    rows = [line.split(" | ")[0].lstrip("| ") for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[:4] == ["command", "sync", "explain (warm)", "explain (cold)"], rows
    assert "explain without scopes" in rows and "explain without pairs" in rows, rows
