"""Promises of sync that only show when something goes wrong: the branch moves by compare-and-swap, an error
after planning is in the report, stale ref locks are cleared, unknown commits and old gits are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import carrytool.pipeline.sync as sync_module
from carrytool.manifest.schema import SHIPPED
from tests.conftest import Cli, Small

A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}
B_TEN = {"b.py": "x = 10\ny = 2\nz = 3\n"}


def test_the_branch_moves_only_from_the_value_read_at_the_start(cli: Cli, small: Small, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone moves the fork branch while carrytool composes: update-ref's old value refuses (exit 4), the
    other writer's value stays, no lock is written, and the report records the error."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    lock_before = lock.read_bytes()
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2}])
    original = sync_module.plan_and_compose

    def racing(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        planned = original(*args, **kwargs)
        small.work.git("update-ref", "refs/heads/dev", small.base)     # another writer, mid-run
        return planned

    monkeypatch.setattr(sync_module, "plan_and_compose", racing)
    out = tmp_path / "report.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", out)
    assert result.exit_code == 4, (result.stdout, result.stderr)
    assert "changed while carrytool was composing" in result.stderr
    assert small.branch() == small.base, "the other writer's value was overwritten"
    assert lock.read_bytes() == lock_before
    report = json.loads(out.read_text())
    assert report["ok"] is False and report["exit_code"] == 4
    assert report["error"]["kind"] == "RefMoved" and "changed while carrytool" in report["error"]["message"]
    assert report["result"]["updated"] is False and "lock_written" not in report


def test_stale_ref_locks_under_our_namespace_are_cleared(cli: Cli, small: Small) -> None:
    """A killed fetch leaves `refs/carrytool/.../X.lock`: the next run removes it (saying so) and succeeds."""
    head = small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    ref = small.work.path / "refs" / "carrytool" / "dev" / "pr" / "1"
    small.work.git("pack-refs", "--all")
    ref.parent.mkdir(parents=True, exist_ok=True)
    stale = ref.with_name("1.lock")
    stale.write_text("")
    small.up.commit(B_TEN, "pr 1 moved", parent=head, ref="refs/pull/1/head")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert f"removed a stale ref lock {stale}" in result.stderr
    assert not stale.exists()
    assert small.work.git("show", "dev:b.py") == "x = 10\ny = 2\nz = 3"


def test_an_unknown_carry_commit_is_exit_2(cli: Cli, small: Small) -> None:
    small.manifest([{"carry": "fix", "commit": "f" * 40}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert f"carry/fix: commit {'f' * 40}" in result.stderr
    assert small.branch() is None


@pytest.mark.parametrize("version, code", [("2.37.9", 4), ("1.9.0", 4), ("2.38.0", 0)])
def test_a_git_older_than_2_38_is_exit_4(small: Small, tmp_path: Path, version: str, code: int) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    (fake / "git").write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "git version {version}"; exit 0; '
                              f'fi\nexec {real} "$@"\n')
    (fake / "git").chmod(0o755)
    small.manifest([])
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([sys.executable, "-m", "carrytool", "sync", "-m", str(small.manifest_path),
                             "--repo", str(small.work.path)], capture_output=True, text=True, env=env)
    assert result.returncode == code, result.stderr
    if code:
        assert f"git {version} is too old: carrytool needs git >= 2.38" in result.stderr


def test_schema_command_prints_the_shipped_schema(cli: Cli) -> None:
    result = cli("schema")
    assert result.exit_code == 0
    assert result.stdout == SHIPPED.read_text()
    assert json.loads(result.stdout)["$schema"].startswith("https://json-schema.org/")
