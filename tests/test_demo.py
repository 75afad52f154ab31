"""The demo scenario: the story of the seed, and the judges' checks of issues 2, 3 and 4 on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from carrytool.demo.run import naive_loop, write_naive_manifest
from carrytool.demo.scenario import Scenario, build
from tests.conftest import Cli, isolate_env

EXPECTED = {
    "pr/45552": ("applied", None), "pr/45554": ("applied", None), "pr/45398": ("skipped", "superseded"),
    "pr/45619": ("skipped", "superseded"), "pr/45620": ("skipped", "superseded"),
    "pr/45612": ("skipped", "redundant"), "pr/44778": ("skipped", "superseded"),
    "pr/45617": ("skipped", "superseded"), "pr/45610": ("skipped", "superseded"),
    "pr/45565": ("skipped", "precompiled"), "pr/45499": ("skipped", "merged-upstream"),
    "carry/wake-path-union": ("applied", None),
}


def sync(cli: Cli, demo: Scenario, manifest: Path | None = None, *args: str) -> tuple[int, dict]:
    return cli.json("sync", "-m", manifest or demo.manifest, "--repo", demo.work, *args)


def test_the_scenario_is_the_same_on_every_build(tmp_path: Path, demo: Scenario) -> None:
    again = build(tmp_path / "again")
    assert (again.upstream_head, again.union, again.prs) == (demo.upstream_head, demo.union, demo.prs)


def test_sync_applies_what_it_should_and_says_why_for_the_rest(cli: Cli, demo: Scenario,
                                                              report_schema: dict) -> None:
    code, report = sync(cli, demo)
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    got = {e["id"]: (e["status"], e.get("reason")) for e in report["entries"]}
    assert got == EXPECTED
    entries = {e["id"]: e for e in report["entries"]}
    assert entries["pr/45612"]["redundant_with"] == ["pr/45552"]
    assert entries["pr/45612"]["filtered"] == ["tests/v1/worker/test_gpu_worker_wake_barrier.py",
                                               "vllm/v1/worker/gpu_worker.py"]
    assert entries["pr/45398"]["superseded_by"] == "carry/wake-path-union"
    for entry in report["entries"]:
        if entry["status"] == "applied":
            landing = entry["landing"]
            assert landing["landed"] == landing["hunks"] and not landing["dropped"] and not landing["clobbered"]
    assert all(a["ok"] for a in report["asserts"]) and len(report["asserts"]) == 10
    kinds = sorted(w["kind"] for w in report["warnings"])
    assert kinds == ["identical-hunk", "provided-absent", "stale-fold"]
    absent = next(w for w in report["warnings"] if w["kind"] == "provided-absent")   # what #45610 gained since
    assert (absent["entry"], absent["other"], absent["file"]) == \
        ("pr/45610", "carry/wake-path-union", "tests/v1/worker/test_pp_cudagraph_consensus.py")
    stale = next(w for w in report["warnings"] if w["kind"] == "stale-fold")
    assert (stale["pr"], stale["folded"], stale["current"]) == (45610, demo.prs[45610][1], demo.prs[45610][2])


def test_the_result_is_byte_for_byte_reproducible(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    _, first = sync(cli, demo)
    other = build(tmp_path / "other")
    code, second = cli.json("sync", "-m", other.manifest, "--repo", other.work,
                            env={"TZ": "Asia/Kathmandu", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00 +0500",
                                 "GIT_AUTHOR_NAME": "someone else", "GIT_CONFIG_PARAMETERS": "'merge.renames'='false'"})
    assert code == 0 and second["result"]["sha"] == first["result"]["sha"]


@pytest.mark.parametrize("order", [(45398, 45612), (45612, 45398)])
def test_the_naive_loop_loses_a_fix_in_each_order_and_calls_it_success(demo: Scenario, tmp_path: Path,
                                                                       order: tuple[int, int]) -> None:
    codes, tree = naive_loop(demo, list(order), tmp_path / "naive")
    assert codes == [0, 0]
    source = (tree / "vllm/v1/worker/gpu_worker.py").read_text()
    lost = "_wake_handshake(local_ok)" if order[0] == 45612 else "backend.resume(tags)"
    assert lost not in source


@pytest.mark.parametrize("first,second", [(45398, 45612), (45612, 45398)])
def test_theirs_on_the_second_of_two_rewrites_is_caught_in_both_orders(cli: Cli, demo: Scenario,
                                                                        first: int, second: int) -> None:
    naive = write_naive_manifest(demo)
    text = naive.read_text().replace("  - pr: 45398\n  - pr: 45612\n    on_conflict: theirs\n",
                                     f"  - pr: {first}\n  - pr: {second}\n    on_conflict: theirs\n")
    naive.write_text(text)
    code, report = sync(cli, demo, naive)
    assert code == 1 and report["ok"] is False and report["result"]["updated"] is False
    victim = next(e for e in report["entries"] if e["id"] == f"pr/{first}")
    clobbers = victim["landing"]["clobbered"]
    assert clobbers and all(c["by"] == f"pr/{second}" for c in clobbers)
    assert {c["file"] for c in clobbers} == {"vllm/v1/worker/gpu_worker.py"}
    assert "Worker.wake_up" in {c["scope"] for c in clobbers}
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/intarweb-dev"], cwd=demo.work,
                          capture_output=True).returncode != 0


SEED_INVARIANTS = ["resume-once", "no-raw-allocator-wake", "wake-handshake", "kv-nested-zeroing",
                   "fp8-scale-restore", "pp-consensus-before-irecv", "runner-no-all-reduce", "pp-all-reduce-gated",
                   "sync-before-unmap", "no-kernel-retry"]


def test_the_seed_invariants_fail_precisely_on_clobbered_compositions(cli: Cli, demo: Scenario) -> None:
    naive = write_naive_manifest(demo)
    text = naive.read_text().replace("  - pr: 45398\n  - pr: 45612\n    on_conflict: theirs\n",
                                     "  - pr: 45612\n  - pr: 45398\n    on_conflict: theirs\n")
    naive.write_text(text)
    code, report = sync(cli, demo, naive)
    assert code == 1 and report["ok"] is False and report["result"]["updated"] is False
    outcomes = {a["name"]: a for a in report["asserts"]}
    assert set(outcomes) == set(SEED_INVARIANTS)
    handshake = outcomes["wake-handshake"]
    assert not handshake["ok"] and handshake["file"] == "vllm/v1/worker/gpu_worker.py"
    assert "Worker.wake_up: _wake_handshake is never called" in handshake["message"]
    assert not outcomes["kv-nested-zeroing"]["ok"] and "_iter_kv_cache_tensors" in outcomes["kv-nested-zeroing"]["message"]
    assert not outcomes["sync-before-unmap"]["ok"]
    assert outcomes["sync-before-unmap"]["message"] == \
        "CuMemAllocator.sleep: torch.cuda.synchronize is never called on any path through CuMemAllocator.sleep"
    assert outcomes["no-kernel-retry"]["ok"] and outcomes["runner-no-all-reduce"]["ok"]


@pytest.fixture(scope="module")
def demo_run() -> subprocess.CompletedProcess:
    """`make demo` (`carrytool demo`), run once for the tests that read its story: it builds its scenario
    afresh with fixed dates and identities, so every run prints the same (test_demo_keep_* run it again)."""
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        return subprocess.run([sys.executable, "-m", "carrytool", "demo"], capture_output=True, text=True,
                              timeout=180)


def test_make_demo_tells_the_story(demo_run: subprocess.CompletedProcess) -> None:
    proc = demo_run
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("cherry-pick exit codes 0, 0") == 2 and "LOST resume-once" in out and "LOST wake-handshake" in out
    assert "was clobbered: pr/45612" in out and "refuses to publish" in out
    assert "first bad: pr/45612, bad only after pr/45398 (4 probes); next: carrytool union new " \
           "union-45398-45612 45398 45612" in out
    assert "carry/wake-path-union  applied" in out and "asserts: 10/10 hold" in out
    assert "no flapping" in out and "folded pr/45610" in out
    assert "pr/45398 x pr/45612: vllm/v1/worker/gpu_worker.py (Worker.wake_up)" in out
    assert "no new union suggested" in out


def test_bisect_finds_the_entry_behind_the_clobber(cli: Cli, demo: Scenario) -> None:
    naive = write_naive_manifest(demo)
    code, out = cli.json("bisect", "-m", naive, "--repo", demo.work, "--assert", "resume-once",
                         "--assert", "no-raw-allocator-wake")
    assert code == 0, out
    assert (out["first_bad"], out["alone_bad"], out["interacts_with"]) == ("pr/45612", False, ["pr/45398"])
    assert [c["name"] for c in out["checks"]] == ["resume-once", "no-raw-allocator-wake"]
    assert [c["id"] for c in out["chain"]] == ["pr/45398", "pr/45612"]
    # no --assert: upstream fails every assert red at the tip; each is searched alone, the earliest wins
    code, out = cli.json("bisect", "-m", naive, "--repo", demo.work, "--offline")
    assert code == 0 and (out["first_bad"], out["interacts_with"]) == ("pr/45612", ["pr/45398"])
    assert out["searched_with"] == ["resume-once"]
    code, out = cli.json("bisect", "-m", demo.manifest, "--repo", demo.work)
    assert code == 1 and out["first_bad"] is None      # the green night: nothing to find


@pytest.fixture(scope="module")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """`carrytool demo --keep kept` run once in a folder of its own: the folder it kept, and the run."""
    where = tmp_path_factory.mktemp("kept-demo")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        proc = subprocess.run([sys.executable, "-m", "carrytool", "demo", "--keep", "kept"], capture_output=True,
                              text=True, timeout=120, cwd=where)
    return where / "kept", proc


def test_demo_keep_leaves_a_scenario_to_explore(kept_demo: tuple[Path, subprocess.CompletedProcess]) -> None:
    """A relative --keep, as a newcomer types it (`--keep demo1` failed: git fetched `demo1/upstream.git`
    from inside the scenario's repository)."""
    keep, proc = kept_demo
    assert proc.returncode == 0, proc.stderr
    assert f"cd {keep} &&" in proc.stdout       # the hints' folder is one to paste from anywhere
    assert (keep / "carries" / "manifest.yaml").exists() and (keep / "work.git").is_dir()
    lock = json.loads((keep / "carries" / "manifest.yaml.lock").read_text())
    assert lock["result"]


def test_demo_keep_refuses_a_directory_it_did_not_make(tmp_path: Path, cli: Cli) -> None:
    """`--keep` on a non-empty folder of the user's is exit 2 and the folder survives; its own folder is reused."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious\n")
    result = cli("demo", "--keep", mine)
    assert result.exit_code == 2, result.output
    assert "not made by `carrytool demo`" in result.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and (mine / "notes.txt").read_text() == "precious\n"
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert cli("demo", "--keep", a_file).exit_code == 2 and a_file.read_text() == "x"


def test_demo_keep_replaces_its_own_directory(kept_demo: tuple[Path, subprocess.CompletedProcess]) -> None:
    keep, first = kept_demo                                  # a whole scenario a demo kept, run again onto
    assert first.returncode == 0, first.stderr
    proc = subprocess.run([sys.executable, "-m", "carrytool", "demo", "--keep", str(keep)], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert (keep / ".carrytool-demo").is_file() and (keep / "carries" / "manifest.yaml").exists()


def test_make_demo_shows_the_next_night_with_diff(demo_run: subprocess.CompletedProcess) -> None:
    proc = demo_run
    assert proc.returncode == 0, proc.stderr
    night = proc.stdout.split("5. The next night:", 1)[1].split("6. carrytool explain", 1)[0]
    assert "1 moved, 11 unchanged" in night and "pr/45554: moved: head" in night
    assert "> ------------" in night and "Address review: a regression test for the drain" in night
    assert "sync: exit 0" in night
