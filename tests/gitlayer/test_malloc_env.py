"""Every git child runs with glibc's malloc tuned for big files (env.MALLOC_TUNABLES), unless the user set
GLIBC_TUNABLES themselves; what git computes does not change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from carrytool.gitlayer.env import MALLOC_TUNABLES, isolated_env, scrubbed_env
from tests.conftest import Cli, Small


def test_scrubbed_env_tunes_malloc_unless_the_user_did(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert scrubbed_env()["GLIBC_TUNABLES"] == MALLOC_TUNABLES
    assert isolated_env("/x/git", "/x/objects")["GLIBC_TUNABLES"] == MALLOC_TUNABLES
    assert "glibc.malloc.mmap_threshold=" in MALLOC_TUNABLES and "glibc.malloc.trim_threshold=" in MALLOC_TUNABLES
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=1")
    assert scrubbed_env()["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=1"
    monkeypatch.setenv("GLIBC_TUNABLES", "")
    assert scrubbed_env()["GLIBC_TUNABLES"] == ""


def _wrapped_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs each call's GLIBC_TUNABLES and subcommand, then runs the real git."""
    log, folder = tmp_path / "git.log", tmp_path / "wrapped"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "[$GLIBC_TUNABLES] $*" >> {log}\n'
                                f'exec {shutil.which("git")} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _setup(small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})
    small.pr(3, {"a.py": "def f():\n    return 30\n\n\ndef g():\n    return 2\n"})     # conflicts with pr/1
    small.manifest([{"pr": n} for n in (1, 2, 3)], policy={"on_conflict": "skip"})


def test_every_git_child_of_a_sync_gets_the_tuning(cli: Cli, small: Small, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(small)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    log = _wrapped_git(tmp_path, monkeypatch)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    calls = log.read_text().splitlines()
    assert any(" merge-tree " in c for c in calls) and any(" fetch " in c for c in calls)
    assert all(c.startswith(f"[{MALLOC_TUNABLES}] ") for c in calls), [c for c in calls
                                                                       if not c.startswith(f"[{MALLOC_TUNABLES}]")]


def test_the_tuning_changes_no_result(cli: Cli, small: Small, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same manifest synced with the tuning and with glibc's defaults (the user's empty GLIBC_TUNABLES,
    kept as it is): the same report, the same composed commit."""
    _setup(small)
    reports = []
    for tunables in (None, ""):
        if tunables is None:
            monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
        else:
            monkeypatch.setenv("GLIBC_TUNABLES", tunables)
        repo = tmp_path / f"into-{len(reports)}.git"
        shutil.copytree(small.work.path, repo)
        code, report = cli.json("sync", "-m", small.manifest_path, "--repo", repo)
        assert code == 0 and report["result"]["sha"]
        for key in ("started_at", "finished_at", "duration_ms", "repo"):
            report.pop(key, None)
        reports.append(report)
    assert reports[0]["result"] == reports[1]["result"]
    assert [e["status"] for e in reports[0]["entries"]] == ["applied", "applied", "conflict"]
    assert reports[0]["entries"] == reports[1]["entries"]
