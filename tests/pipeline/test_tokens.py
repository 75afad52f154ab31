"""A token planted in every URL of the manifest appears in nothing carrytool prints or writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from carrytool.demo.scenario import Scenario
from carrytool.gitlayer.urls import redact, refname_problem
from tests.conftest import Cli

SECRET = "SEKRIT"
UPSTREAM = f"https://x-access-token:ghp_{SECRET}up0123456789abcdef@example.invalid/upstream.git"
FORK = f"https://{SECRET}fk@example.invalid/fork.git"                        # a short bare token as user
MOVED = f"https://example.invalid/moved.git?private_token={SECRET}pt&access_token={SECRET}at"


def test_a_planted_token_appears_in_no_output_report_lock_markdown_or_commit(
        cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    config = tmp_path / "gitconfig"       # CI's way: the user's global config maps the URLs to where they are
    config.write_text("".join(f'[url "{target}"]\n\tinsteadOf = {url}\n' for url, target in (
        (UPSTREAM, demo.upstream), (FORK, demo.fork), (MOVED, demo.upstream))))
    env = {"GIT_CONFIG_GLOBAL": str(config)}
    text = demo.manifest.read_text()
    text = text.replace("url: ../upstream.git", f"url: {UPSTREAM}").replace("url: ../fork.git", f"url: {FORK}")
    demo.manifest.write_text(text)
    m, repo = str(demo.manifest), str(demo.work)
    outputs: list[tuple[str, str]] = []
    reports = tmp_path / "reports"

    def run(name: str, *argv: str, codes: tuple[int, ...] = (0,)) -> None:
        report = reports / f"{name}.json"
        extra = ["--report", str(report)] if argv[0] in ("sync", "verify", "explain") else []
        result = cli(*argv, *extra, env=env)
        outputs.append((f"{name} stdout", result.stdout))
        outputs.append((f"{name} stderr", result.stderr))
        if report.exists():
            outputs.append((f"{name} report", report.read_text()))
        assert result.exit_code in codes, (name, result.stdout, result.stderr)

    run("check", "check", "-m", m)
    run("sync", "sync", "-m", m, "--repo", repo)
    run("sync-json", "sync", "-m", m, "--repo", repo, "--format", "json")
    for fmt in ("text", "markdown", "json"):
        run(f"explain-{fmt}", "explain", "-m", m, "--repo", repo, "--format", fmt)
        run(f"explain-entry-{fmt}", "explain", "pr/45612", "-m", m, "--repo", repo, "--format", fmt)
    run("explain-commit-message", "explain", "carry/wake-path-union", "-m", m, "--repo", repo,
        "--format", "commit-message")
    run("union-status", "union", "status", "-m", m, "--repo", repo)
    run("union-status-json", "union", "status", "-m", m, "--repo", repo, "--format", "json")
    run("verify-rebuild", "verify", "--rebuild", "-m", m, "--repo", repo)
    lock = demo.manifest.with_name(demo.manifest.name + ".lock")
    outputs.append(("lock", lock.read_text()))
    # the upstream URL changes: the lock no longer matches (exit 2), and says so without the token
    demo.manifest.write_text(text.replace(f"url: {UPSTREAM}", f"url: {MOVED}"))
    run("sync-locked-moved", "sync", "--locked", "-m", m, "--repo", repo, codes=(2,))
    run("verify-rebuild-moved", "verify", "--rebuild", "-m", m, "--repo", repo, codes=(2,))
    run("sync-moved", "sync", "-m", m, "--repo", repo, "--format", "json")
    outputs.append(("lock after the move", lock.read_text()))
    log = subprocess.run(["git", "log", "--all", "--format=%H%n%B%n%N"], cwd=demo.work, capture_output=True,
                         text=True, check=True).stdout
    outputs.append(("commit messages and trailers", log))
    refs = subprocess.run(["git", "for-each-ref"], cwd=demo.work, capture_output=True, text=True).stdout
    outputs.append(("refs", refs))
    reflog = "".join(p.read_text(errors="replace") for p in (demo.work / "logs").rglob("*") if p.is_file()) \
        if (demo.work / "logs").exists() else ""
    outputs.append(("reflogs", reflog))
    leaks = [name for name, out in outputs if SECRET in out]
    assert not leaks, f"the token leaked into: {', '.join(leaks)}"
    assert any("moved.git" in out for name, out in outputs if name.startswith("sync-locked-moved"))


@pytest.mark.parametrize("url, shown", [
    ("https://user:tok@host/r.git", "https://***@host/r.git"),
    ("https://ghp_abc@host/r.git", "https://***@host/r.git"),
    ("https://t@host/r.git", "https://***@host/r.git"),
    ("http://u:p@ss@host/r.git", "http://***@host/r.git"),
    ("https://host/r.git?access_token=abc&x=1", "https://host/r.git?access_token=***&x=1"),
    ("https://host/r.git?private_token=abc", "https://host/r.git?private_token=***"),
    ("https://host/r.git?oauth_token=abc;api_key=def", "https://host/r.git?oauth_token=***;api_key=***"),
    ("ssh://git@host/r.git", "ssh://git@host/r.git"),
    ("ssh://git:pw@host/r.git", "ssh://***@host/r.git"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("fatal: unable to access 'https://oauth2:glpat-xyz@gitlab.com/o/r.git/': 403",
     "fatal: unable to access 'https://***@gitlab.com/o/r.git/': 403"),
])
def test_redact_hides_every_credential_form(url: str, shown: str) -> None:
    assert redact(url) == shown


@pytest.mark.parametrize("name, branch, problem", [
    ("main", True, None),
    ("HEAD", False, None),
    ("HEAD", True, "'HEAD' is not a branch name"),
    ("", True, "an empty name"),
    ("-x", True, "'-x' starts with '-'"),
    ("a@{1}", False, "'a@{1}' contains '@{' or is '@'"),
    ("a b", False, "'a b' contains a space, a control character or one of ~ ^ : ? * [ \\"),
    ("a..b", False, "'a..b' contains '..' or '//', or starts/ends with '/' or ends with '.'"),
    ("a/.b", False, "'a/.b' has a component that starts with '.' or ends with '.lock'"),
    ("x.lock/y", False, "'x.lock/y' has a component that starts with '.' or ends with '.lock'"),
])
def test_refname_problem_names_the_rule(name: str, branch: bool, problem: str | None) -> None:
    assert refname_problem(name, branch=branch) == problem
