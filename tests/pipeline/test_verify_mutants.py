"""`carrytool verify --mutants`: the score of the asserts on a tree, judged in memory, text and JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from carrytool.demo.scenario import Scenario
from tests.conftest import Cli
from tests.test_vllm_manifest import MANIFEST, demo_composition, write_tree

CONTRACT_KEYS = {"score", "mutants", "killed", "asserts", "survivors"}
MUTATIONS = {"drop-call", "drop-statement", "duplicate", "swap", "unguard", "untry", "drop-arg", "add-call"}


def synced(cli: Cli, demo: Scenario) -> None:
    code, _ = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0


def test_the_demo_gets_a_score_and_named_survivors(cli: Cli, demo: Scenario) -> None:
    synced(cli, demo)
    code, data = cli.json("verify", "--mutants", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert code == 0 and CONTRACT_KEYS <= set(data)
    assert 0 < data["killed"] < data["mutants"] and data["score"] == round(data["killed"] / data["mutants"], 4)
    assert [row["name"] for row in data["asserts"]][:3] == ["resume-once", "no-raw-allocator-wake", "wake-handshake"]
    assert all(isinstance(row["killed"], int) for row in data["asserts"])
    # the demo's `mentions: scale_specs` "passes on both": its statements' mutants survive it
    fp8 = next(row for row in data["asserts"] if row["name"] == "fp8-scale-restore")
    assert fp8["killed"] == 0 and fp8["mutants"] > 0
    for survivor in data["survivors"]:
        assert {"file", "line", "scope", "mutation", "description"} <= set(survivor)
        assert survivor["mutation"] in MUTATIONS
    assert any(s["scope"] == "GPUModelRunner.post_kv_cache_wake_up" and s["mutation"] == "drop-call"
               for s in data["survivors"])
    text = cli("verify", "--mutants", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert text.exit_code == 0
    assert text.stdout.startswith(f"Mutation score: {data['killed']}/{data['mutants']} mutants killed")
    assert f"Survivors ({len(data['survivors'])}):" in text.stdout
    assert "gpu_model_runner.py:" in text.stdout and text.stdout.rstrip().endswith("survive)")


def test_the_vllm_manifest_on_the_demo_composition(cli: Cli, demo: Scenario) -> None:
    """The real manifest holds on the story's composition, and kills most mutants of what it guards."""
    synced(cli, demo)
    code, data = cli.json("verify", "--mutants", "-m", MANIFEST, "--repo", demo.work, "--rev", "intarweb-dev")
    assert code == 0 and data["failing"] == []
    assert data["score"] >= 0.55 and data["mutants"] >= 60
    rows = {row["name"]: row for row in data["asserts"]}
    assert rows["runner-no-consensus"]["killed"] >= 1 and rows["wake-handshake-min"]["killed"] >= 3


def test_mutants_never_touch_the_tree(cli: Cli, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", demo_composition())
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "add", "-A"], check=True)
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    status = ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=all"]
    listed = subprocess.run(status, capture_output=True, text=True).stdout
    code, data = cli.json("verify", "--mutants", "-m", MANIFEST, "--path", tree)
    assert code == 0 and data["mutants"] > 0
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == before
    assert subprocess.run(status, capture_output=True, text=True).stdout == listed


def test_an_assert_failing_on_the_unmutated_tree_exits_1(cli: Cli, tmp_path: Path) -> None:
    files = demo_composition()
    files["vllm/v1/worker/gpu_worker.py"] = files["vllm/v1/worker/gpu_worker.py"].replace(
        "self._get_sleep_mode_backend().suspend(offload_tags)", "self.allocator.sleep(offload_tags)")
    tree = write_tree(tmp_path / "tree", files)
    code, data = cli.json("verify", "--mutants", "-m", MANIFEST, "--path", tree)
    assert code == 1 and {f["name"] for f in data["failing"]} == {"sleep-through-backend", "sleep-no-raw-allocator"}
    assert all("sleep-through-backend" not in k["killed_by"] for k in data["kills"])
    text = cli("verify", "--mutants", "-m", MANIFEST, "--path", tree)
    assert text.exit_code == 1 and "FAIL sleep-through-backend:" in text.stdout
    assert "2 asserts already fail on the unmutated tree (exit 1)" in text.stdout


def test_usage_errors(cli: Cli, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", demo_composition())
    for extra, words in ((["--format", "github"], "--format"), (["--rebuild"], "--rebuild"),
                         (["--rev", "main"], "either --rev or --path")):
        result = cli("verify", "--mutants", "-m", MANIFEST, "--path", tree, *extra)
        assert result.exit_code == 2 and words in result.stderr, result.stderr


def test_report_file_holds_the_json(cli: Cli, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", demo_composition())
    out = tmp_path / "mutants.json"
    result = cli("verify", "--mutants", "-m", MANIFEST, "--path", tree, "--report", out)
    assert result.exit_code == 0
    assert CONTRACT_KEYS <= set(json.loads(out.read_text()))
    assert result.stdout.startswith("Mutation score:")


def test_no_mutant_is_no_score(tmp_path: Path, cli: Cli) -> None:
    """Asserts that guard no call derive no mutant: the score is 0, never a vacuous 100%."""
    from tests.gitrepo import init_repo, write_manifest

    repo = init_repo(tmp_path / "repo")
    repo.commit({"pkg/mod.py": "def f():\n    return 1\n"}, "base", ref="refs/heads/main")
    manifest = write_manifest(tmp_path / "m.yaml", {
        "version": 1, "upstream": {"url": str(repo.path)}, "fork": {"branch": "dev"}, "entries": [],
        "asserts": [{"name": "d", "file": "pkg/mod.py", "defines": "f"}]})
    result = cli("verify", "--mutants", "-m", manifest, "--repo", repo.path, "--rev", "HEAD", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["mutants"], data["score"]) == (0, 0.0)
    text = cli("verify", "--mutants", "-m", manifest, "--repo", repo.path, "--rev", "HEAD")
    assert "no mutant could be derived" in text.stdout and "100%" not in text.stdout


def test_an_unknown_rev_is_exit_2_with_a_hint(cli: Cli, demo: Scenario) -> None:
    result = cli("verify", "--mutants", "-m", demo.manifest, "--repo", demo.work, "--rev", "no-such-branch")
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and f"no commit 'no-such-branch' in {demo.work}" in text, text
    assert "hint: pass a branch, tag or SHA that exists" in text, text
