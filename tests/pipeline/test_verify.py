"""`carrytool verify`: asserts on a commit or a checkout, GitHub annotations, and --rebuild."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import jsonschema
import pytest

from carrytool.demo import sources
from carrytool.demo.scenario import Scenario
from tests.conftest import Cli, Small
from tests.review.test_bisect import DEFINES_F, build


def synced(cli: Cli, demo: Scenario) -> str:
    code, report = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0
    return report["result"]["sha"]


def test_verify_rev_holds_on_the_composed_branch(cli: Cli, demo: Scenario, report_schema: dict) -> None:
    synced(cli, demo)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert code == 0 and report["ok"] is True and len(report["asserts"]) == 10
    jsonschema.validate(report, report_schema)
    result = cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert result.exit_code == 0 and "ok: 10 asserts hold" in result.stdout


def test_verify_fails_on_upstream_alone_and_annotates_for_github(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    result = cli("verify", "-m", demo.manifest, "--repo", demo.upstream, "--rev", "main", "--format", "github",
                 env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    resume = next(line for line in lines if "carrytool%3A resume-once" in line)
    assert resume.startswith("::error file=vllm/v1/worker/gpu_worker.py,line=")
    assert "backend.resume is never called" in resume and "(guards carry/wake-path-union)" in resume
    assert "| resume-once | `vllm/v1/worker/gpu_worker.py" in summary.read_text()


def test_verify_path_reads_a_checkout(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    synced(cli, demo)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "-b", "intarweb-dev", str(demo.work), str(checkout)], check=True)
    code, report = cli.json("verify", "-m", demo.manifest, "--path", checkout)
    assert code == 0 and all(a["ok"] for a in report["asserts"])
    worker = checkout / "vllm/v1/worker/gpu_worker.py"
    worker.write_text(worker.read_text().replace("try:\n                backend.resume(tags)", "try:\n                pass"))
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", checkout)   # default: the work tree
    failed = [a for a in report["asserts"] if not a["ok"]]
    assert code == 1 and [a["name"] for a in failed] == ["resume-once"]
    assert failed[0]["message"] == ("Worker.wake_up: backend.resume is never called on the path through the "
                                    "`if needs_wake_sync` branch at vllm/v1/worker/gpu_worker.py:47 (want exactly 1)")
    (checkout / "vllm/v1/worker/gpu_model_runner.py").write_text("def broken(:\n")
    code, report = cli.json("verify", "-m", demo.manifest, "--path", checkout)
    kv = next(a for a in report["asserts"] if a["name"] == "kv-nested-zeroing")
    assert code == 1 and "syntax error" in kv["message"]


def test_verify_of_a_work_tree_without_the_fork_branch_says_what_it_checked(cli: Cli, demo: Scenario,
                                                                           tmp_path: Path) -> None:
    """helper-91: right after a sync, plain `verify` in a clone with upstream's main checked out said "0/2
    hold, FAILED" and never what it had checked. A warning names the work tree, its branch and the command
    that checks the fork branch; none when the fork branch is checked out."""
    synced(cli, demo)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(demo.upstream), str(checkout)], check=True)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", checkout)
    [warning] = [w for w in report["warnings"] if w["kind"] == "work-tree"]
    assert code == 1 and warning["branch"] == "main"
    # the fork branch is not in this clone (helper-93: the hint named `--rev intarweb-dev`, exit 2 there)
    assert f"checked the files of the work tree {checkout}, which has main checked out, not the fork branch " \
        "intarweb-dev: the fork branch is not in this repository: fetch it, or run `carrytool verify --rev " \
        f"intarweb-dev -m {demo.manifest}` in the repository sync wrote it to" in warning["message"], warning["message"]
    subprocess.run(["git", "-C", str(checkout), "fetch", "-q", str(demo.work), "intarweb-dev:refs/remotes/fork/"
                    "intarweb-dev", "intarweb-dev:refs/remotes/origin/intarweb-dev"], check=True)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", checkout)
    [warning] = [w for w in report["warnings"] if w["kind"] == "work-tree"]
    said = warning["message"].split("`")[1]
    assert said == f"carrytool verify --rev origin/intarweb-dev -m {demo.manifest} --repo {checkout}", said
    assert cli(*said.split()[1:]).exit_code == 0            # the command it names works
    # run from a subdirectory (helper-93: the subdirectory was taken for the top, "0/10 hold, FAILED")
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", checkout / "vllm")
    assert report["target"]["path"] == str(checkout), report.get("target")
    subprocess.run(["git", "-C", str(checkout), "fetch", "-q", str(demo.work), "intarweb-dev:intarweb-dev"], check=True)
    subprocess.run(["git", "-C", str(checkout), "checkout", "-q", "intarweb-dev"], check=True)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", checkout)
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "work-tree"]


def test_verify_of_another_branch_names_the_fork_branch_next_not_bisect(cli: Cli, demo: Scenario,
                                                                        tmp_path: Path) -> None:
    """h258 (pola-rs/polars): plain `verify` in the clone holding the manifest (its main checked out) warned
    that it checked the wrong tree, then said `next: carrytool bisect --assert ...`, which composes the
    manifest and answered "passes every check: nothing to bisect" (exit 1). The next step is the command
    that checks the fork branch."""
    synced(cli, demo)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(demo.upstream), str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "fetch", "-q", str(demo.work),
                    "intarweb-dev:refs/remotes/origin/intarweb-dev"], check=True)
    result = cli("verify", "-m", demo.manifest, "--repo", checkout)
    hints = [line for line in result.stdout.splitlines() if line.startswith("next:")]
    assert result.exit_code == 1 and hints == [
        f"next: `carrytool verify --rev origin/intarweb-dev -m {demo.manifest} --repo {checkout}` checks the fork "
        "branch"], result.stdout
    subprocess.run(["git", "-C", str(checkout), "update-ref", "-d", "refs/remotes/origin/intarweb-dev"], check=True)
    result = cli("verify", "-m", demo.manifest, "--repo", checkout)
    hints = [line for line in result.stdout.splitlines() if line.startswith("next:")]
    assert hints == ["next: verify the fork branch where sync wrote it, as the warning says"], result.stdout


def test_verify_of_a_work_tree_with_nothing_checked_out_says_so(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    """A repository made with `git init` that sync composed into has no commit checked out: the warning said
    "which has master checked out" (a trial on python/mypy), as if a branch of files were there."""
    synced(cli, demo)
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(fresh)], check=True)
    subprocess.run(["git", "-C", str(fresh), "fetch", "-q", str(demo.work), "intarweb-dev:intarweb-dev"], check=True)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", fresh)
    [warning] = [w for w in report["warnings"] if w["kind"] == "work-tree"]
    assert code == 1 and warning["branch"] == "trunk"
    assert warning["message"] == (
        f"checked the files of the work tree {fresh}, which has no commit checked out (trunk has none yet), not the "
        f"fork branch intarweb-dev: `carrytool verify --rev intarweb-dev -m {demo.manifest} --repo {fresh}` checks "
        "what sync composed"), warning["message"]


def test_verify_report_file_and_bad_rev(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    result = cli("verify", "-m", demo.manifest, "--repo", demo.upstream, "--rev", "main", "--report", out)
    assert result.exit_code == 1 and json.loads(out.read_text())["ok"] is False
    assert cli("verify", "-m", demo.manifest, "--repo", demo.upstream, "--rev", "nope").exit_code == 2


def test_rebuild_proves_the_published_branch(cli: Cli, demo: Scenario) -> None:
    tip = synced(cli, demo)
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild", "--offline")
    assert code == 0 and report["rebuild"] == {"rev": "refs/heads/intarweb-dev", "expected": tip, "actual": tip,
                                               "ok": True}
    # someone pushes a hand-made commit on top of the published branch
    subprocess.run(["git", "update-ref", "refs/heads/intarweb-dev", demo.upstream_head], cwd=demo.work, check=True)
    result = cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild", "--offline")
    assert result.exit_code == 1 and "not what the manifest says" in result.stderr
    # the outcome line says why, beside "asserts: N/N hold" (helper-107: a bare FAILED there)
    assert result.stdout.rstrip().endswith(f"FAILED (verification failed, exit 1): refs/heads/intarweb-dev is "
                                           f"{demo.upstream_head[:12]}, not {tip[:12]}, what manifest + lock "
                                           "compose"), result.stdout
    # the fork has a url: publishing the lock is a push (without --push nothing reaches the fork)
    assert "`carrytool sync --locked --push " in result.stderr and "publishes exactly the lock" in result.stderr
    # helper-100: after a night whose lock push lost a race, that command put yesterday's branch back
    assert "the next nightly sync puts both right: leave the branch" in result.stderr


def test_verify_verbose_lists_the_asserts_that_held(cli: Cli, demo: Scenario) -> None:
    synced(cli, demo)
    plain = cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert "held: resume-once" not in plain.stdout
    result = cli("verify", "-v", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev")
    assert result.exit_code == 0
    held = [line for line in result.stdout.splitlines() if line.startswith("assert held: ")]
    assert len(held) == 10
    assert any(line.startswith("assert held: resume-once: backend.resume is called exactly 1 time") for line in held)


def test_repo_help_of_verify_and_explain_does_not_promise_a_write(cli: Cli) -> None:
    for command in ("verify", "explain"):
        text = " ".join(cli(command, "--help").stdout.split())
        assert "--repo" in text and "write the fork branch" not in text, command
    assert "write the fork branch" in " ".join(cli("sync", "--help").stdout.split())


@pytest.mark.parametrize("command", ["sync", "verify", "explain"])
def test_a_run_that_fails_before_its_result_still_writes_the_report(command: str, cli: Cli, tmp_path: Path) -> None:
    """CI uploads the report as an artifact exactly when a run fails: an invalid manifest still leaves one."""
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("version: 1\nupstream: {url: x}\nfork: {branch: dev}\nentries: [{pr: -3}]\n")
    report = tmp_path / "out" / f"{command}.json"
    result = cli(command, "-m", manifest, "--report", report)
    assert result.exit_code == 2, result.output
    written = json.loads(report.read_text())
    assert written["ok"] is False and written["exit_code"] == 2 and written["command"] == command
    assert "entries[0].pr" in written["error"]["message"]


def test_rebuild_fails_where_sync_would(cli: Cli, demo: Scenario) -> None:
    """helper-74: --rebuild copied the plan's entries and warnings but not its violations, failed conflicts
    or landing failures, so CI's proof passed on a manifest that sync refuses, with the same branch."""
    tip = synced(cli, demo)
    text = demo.manifest.read_text()
    title = '    title: "cumem: synchronize at wake exit"\n'
    assert title in text       # pr/45554 changes cumem.py too: a path rule sync refuses (exit 2)
    demo.manifest.write_text(text.replace(title, f"{title}    owns: [{sources.CUMEM_PY}]\n", 1))
    dry = cli("sync", "-m", demo.manifest, "--repo", demo.work, "--locked", "--dry-run", "--offline")
    assert dry.exit_code == 2 and "pr/45554" in dry.output
    code, report = cli.json("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild", "--offline")
    assert code == 2 and report["ok"] is False and report["rebuild"]["expected"] == tip
    assert "pr/45554" in [v["entry"] for v in report["violations"]]


@pytest.mark.parametrize("mutants", [False, True])
def test_verify_path_that_is_no_directory_is_bad_input(cli: Cli, demo: Scenario, tmp_path: Path, mutants: bool) -> None:
    """helper-73: a typo in --path read as a failed check (exit 1, "... does not exist in the composed tree"
    for every assert). It is bad input: exit 2, naming the path."""
    (tmp_path / "file").write_text("x\n")
    for path, why in ((tmp_path / "no-such-dir", "no such directory"), (tmp_path / "file", "not a directory")):
        result = cli("verify", "-m", demo.manifest, "--path", path, *(["--mutants"] if mutants else []))
        assert result.exit_code == 2 and f"--path {path}: {why}" in result.stderr, result.output


def test_verify_path_says_a_file_is_not_in_the_checkout(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    """helper-108: a file of the checkout that links to outside it "does not exist in the composed tree"."""
    outside = tmp_path / "outside.py"
    outside.write_text("def wake_up():\n    pass\n")
    checkout = tmp_path / "checkout"
    target = checkout / "vllm" / "v1" / "worker" / "gpu_worker.py"
    target.parent.mkdir(parents=True)
    target.symlink_to(outside)
    code, report = cli.json("verify", "-m", demo.manifest, "--path", checkout)
    messages = {a["message"] for a in report["asserts"] if a["file"] == "vllm/v1/worker/gpu_worker.py"}
    assert code == 1 and messages == {f"vllm/v1/worker/gpu_worker.py is not a file in {checkout.resolve()} "
                                      "(missing, a directory, or a link to outside it: nothing outside the "
                                      "checkout is read)"}, messages


def test_rebuild_that_fetches_takes_the_repository_lock(cli: Cli, demo: Scenario) -> None:
    """helper-74: `verify --rebuild` fetches what the lock names into refs/carrytool/ without the repository's
    lock, beside a sync that clears stale ref locks there. It takes the lock when it fetches (not --offline)."""
    from carrytool.gitlayer.repolock import RepoLock

    synced(cli, demo)
    with RepoLock(demo.work):
        result = cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild")
        assert result.exit_code == 4 and "carrytool.lock" in result.stderr, result.output
        assert cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild", "--offline").exit_code == 0
    assert cli("verify", "-m", demo.manifest, "--repo", demo.work, "--rebuild").exit_code == 0


def test_mutants_report_is_guarded_and_written_whole(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    """helper-75: `verify --mutants --report carries/manifest.yaml` replaced the manifest (the --report guard
    ran after the mutants branch), with a plain write; and a mutants report then counted as "not a report".
    Guarded, written by rename, named as carrytool's (and a first sync's lock, not there yet, is refused)."""
    synced(cli, demo)
    before = demo.manifest.read_bytes()
    result = cli("verify", "--mutants", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev",
                 "--report", demo.manifest)
    assert result.exit_code == 2 and "is the manifest" in result.stderr and demo.manifest.read_bytes() == before
    out = tmp_path / "mutants.json"
    for _ in range(2):
        result = cli("verify", "--mutants", "-m", demo.manifest, "--repo", demo.work, "--rev", "intarweb-dev",
                     "--report", out)
        assert result.exit_code == 0, result.output
        assert json.loads(out.read_text())["command"] == "verify --mutants"
    lock = demo.manifest.with_name(demo.manifest.name + ".lock")
    lock.unlink()
    result = cli("sync", "-m", demo.manifest, "--repo", demo.work, "--report", lock)
    assert result.exit_code == 2 and "is the manifest's lock" in result.stderr and not lock.exists()


def test_a_failed_verify_says_what_to_run_next(cli: Cli, small: Small) -> None:
    # (helper-115: verify printed no `next:` line on a failed assert, where sync did)
    guarded = {**DEFINES_F, "entry": "pr/1"}
    build(small, 3, {2: {"a.py": "def g():\n    return 1\n"}}, [guarded])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    sha = report["result"]["sha"]
    assert code == 1 and not report["ok"], report
    options = ["-m", str(small.manifest_path.resolve()), "--repo", str(Path(small.work.path).resolve())]
    result = cli("verify", *options, "--rev", sha)
    assert result.exit_code == 1
    bisect = shlex.join(["carrytool", "bisect", "--rev", sha, "--assert", "f-defined", *options])
    explain = shlex.join(["carrytool", "explain", "pr/1", *options])
    assert (f"next: `{bisect}` names the entry of that chain that broke it; `{explain}` shows what pr/1 carries "
            f"and where it lands") in result.stdout, result.stdout
    # the step works, and finds the entry
    code, out = cli.json(*shlex.split(bisect)[1:])
    assert code == 0 and out["first_bad"] == "pr/2", out
    # a checkout (no chain to read): bisect composes the manifest
    quiet = cli("verify", "-q", *options, "--path", small.work.path)
    assert f"next: `{shlex.join(['carrytool', 'bisect', '--assert', 'f-defined', *options])}` composes the " \
           f"manifest as sync would and names the entry that breaks it" in quiet.stdout, quiet.stdout
