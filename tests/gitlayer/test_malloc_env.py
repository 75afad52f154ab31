"""Every git child runs with glibc's malloc tuned for big files (env.MALLOC_TUNABLES), unless the user set
GLIBC_TUNABLES themselves; what git computes does not change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from carrytool.gitlayer.env import MALLOC_TUNABLES, isolated_env, scrubbed_env
from tests.conftest import Cli, Small


@pytest.fixture
def no_malloc_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_scrubbed_env_tunes_malloc_unless_the_user_did(no_malloc_env: pytest.MonkeyPatch) -> None:
    monkeypatch = no_malloc_env
    assert scrubbed_env()["GLIBC_TUNABLES"] == MALLOC_TUNABLES
    assert isolated_env("/x/git", "/x/objects")["GLIBC_TUNABLES"] == MALLOC_TUNABLES
    assert "glibc.malloc.mmap_threshold=" in MALLOC_TUNABLES and "glibc.malloc.trim_threshold=" in MALLOC_TUNABLES
    # other tunables of the user's: kept, the malloc ones added after them
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0")
    assert scrubbed_env()["GLIBC_TUNABLES"] == f"glibc.pthread.rseq=0:{MALLOC_TUNABLES}"
    # a threshold of the user's: their GLIBC_TUNABLES as it is
    for theirs in ("glibc.malloc.trim_threshold=0", "glibc.pthread.rseq=0:glibc.malloc.mmap_threshold=65536"):
        monkeypatch.setenv("GLIBC_TUNABLES", theirs)
        assert scrubbed_env()["GLIBC_TUNABLES"] == theirs
    # empty: no tuning
    monkeypatch.setenv("GLIBC_TUNABLES", "")
    assert scrubbed_env()["GLIBC_TUNABLES"] == ""
    # glibc's older variables, which GLIBC_TUNABLES would override: nothing added
    monkeypatch.delenv("GLIBC_TUNABLES")
    for old in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.setenv(old, "0")
        env = scrubbed_env()
        assert "GLIBC_TUNABLES" not in env and env[old] == "0"
        monkeypatch.delenv(old)


def _wrapped_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs each call's GLIBC_TUNABLES and subcommand, then runs the real git."""
    log, folder = tmp_path / "git.log", tmp_path / "wrapped"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "[$GLIBC_TUNABLES] $*" >> {log}\n'
                                f'exec {shutil.which("git")} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


# a file larger than glibc's default thresholds (128 KiB), so that the tuning changes where git's buffers
# for it come from
BIG = "".join(f"line {n}: {'x' * 40}\n" for n in range(6000))


def _setup(small: Small) -> None:
    start = small.up.commit({"big.txt": BIG}, "a big file", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n",
                 "big.txt": BIG.replace("line 10:", "line ten:")}, parent=start)
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n",
                 "big.txt": BIG.replace("line 5000:", "line five thousand:")}, parent=start)
    small.pr(3, {"a.py": "def f():\n    return 30\n\n\ndef g():\n    return 2\n",       # conflicts with pr/1
                 "big.txt": BIG.replace("line 3000:", "line three thousand:")}, parent=start)
    small.manifest([{"pr": n} for n in (1, 2, 3)], policy={"on_conflict": "skip"})


def test_every_git_child_of_a_sync_gets_the_tuning(cli: Cli, small: Small, tmp_path: Path,
                                                    no_malloc_env: pytest.MonkeyPatch) -> None:
    _setup(small)
    log = _wrapped_git(tmp_path, no_malloc_env)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    calls = log.read_text().splitlines()
    assert any(" merge-tree " in c for c in calls) and any(" fetch " in c for c in calls)
    assert all(c.startswith(f"[{MALLOC_TUNABLES}] ") for c in calls), [c for c in calls
                                                                       if not c.startswith(f"[{MALLOC_TUNABLES}]")]


def test_the_tuning_changes_no_result(cli: Cli, small: Small, tmp_path: Path, no_malloc_env: pytest.MonkeyPatch) -> None:
    """The same manifest, whose PRs merge a 300 KB file, synced with the tuning and with glibc's defaults
    (the user's empty GLIBC_TUNABLES, kept as it is): the same report, the same composed commit. (malloc
    cannot change what git computes; this guards against the variable breaking git's start.)"""
    monkeypatch = no_malloc_env
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
        reports.append(report)
    assert reports[0]["result"] == reports[1]["result"]
    assert [e["status"] for e in reports[0]["entries"]] == ["applied", "applied", "conflict"]
    assert reports[0]["entries"] == reports[1]["entries"]
