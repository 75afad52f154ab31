"""Hand-edited locks, bad --report paths, a full disk, a read-only repository, absurd numbers: an exit code
and a message naming the file and key, never a traceback, and never a half-written state."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tests.conftest import Cli, Small
from tests.gitrepo import read_only

A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}
B_TEN = {"b.py": "x = 10\ny = 2\nz = 3\n"}
SHA = "1" * 40


def locked_setup(cli: Cli, small: Small) -> tuple[Path, dict]:
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, _ = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0
    path = small.manifest_path.with_name("manifest.yaml.lock")
    return path, json.loads(path.read_text())


def _set(doc: dict, keys: list, value: object) -> dict:
    target = doc
    for key in keys[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return doc


_DELETE = object()
EDITS = {
    "upstream-not-a-map": (["upstream"], "https://example.com/up.git", "upstream"),
    "upstream-sha-missing": (["upstream", "sha"], _DELETE, "upstream.sha"),
    "upstream-sha-number": (["upstream", "sha"], 12345, "upstream.sha"),
    "upstream-sha-option": (["upstream", "sha"], "--output=/tmp/pwned", "upstream.sha"),
    "entries-not-a-list": (["entries"], {"id": "pr/1"}, "entries"),
    "entry-not-a-map": (["entries", 0], "pr/1", "entries[0]"),
    "entry-head-number": (["entries", 0, "head"], 7, "entries[0].head"),
    "entry-head-short": (["entries", 1, "head"], "abc", "entries[1].head"),
    "entry-id-missing": (["entries", 0, "id"], _DELETE, "entries[0].id"),
    "entry-id-number": (["entries", 0, "id"], 12, "entries[0].id"),
    "entry-sha256-number": (["entries", 0, "sha256"], 5, "entries[0].sha256"),
    "superseded-list": (["superseded_heads"], [SHA], "superseded_heads"),
    "entry-odd-key": (["entries", 0, "heads"], SHA, "entries[0].heads"),
    "odd-top-key": (["extra"], 1, "extra"),
    "result-list": (["result"], [SHA], "result"),
    "superseded-not-a-number": (["superseded_heads"], {"x1": SHA}, "superseded_heads.x1"),
    "superseded-huge": (["superseded_heads"], {"9" * 5000: SHA}, "superseded_heads"),
    "lock-not-a-map": ([], None, "lock"),
}


# what the error says about the value, for some of them (the key, the rule, what it got)
SAID = {
    "upstream-not-a-map": "`upstream` must be a mapping, got 'https://example.com/up.git'",
    "entries-not-a-list": '`entries` must be a list, got {"id": "pr/1"}',
    "entry-head-number": "`entries[0].head` must be a full commit SHA or null, got 7",
    "result-list": "`result` must be a full commit SHA or null, got [",
    "superseded-not-a-number": "`superseded_heads.x1` must be a PR number",
    "entry-id-number": "`entries[0].id` must be a string, got 12",
    "entry-sha256-number": "`entries[0].sha256` must be a string, got 5",
    "superseded-list": f'`superseded_heads` must be a mapping of PR number to SHA, got ["{SHA[:20]}',
}


@pytest.mark.parametrize("name", list(EDITS))
def test_hand_edited_locks_are_exit_2_naming_the_file_and_key(cli: Cli, small: Small, name: str) -> None:
    path, doc = locked_setup(cli, small)
    keys, value, key = EDITS[name]
    edited = [doc] if not keys else _set(doc, keys, value)
    path.write_text(json.dumps(edited))
    before = small.branch()
    for command in (["sync", "--locked"], ["verify", "--rebuild", "--offline"]):
        result = cli(*command, "-m", small.manifest_path, "--repo", small.work.path)   # no traceback: raises
        assert result.exit_code == 2, (command, result.stdout, result.stderr)
        assert str(path) in result.stderr and key in result.stderr, result.stderr
        assert SAID.get(name, "") in " ".join(result.stderr.split()), result.stderr
    assert small.branch() == before


def test_report_into_a_missing_directory_is_created(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    target = tmp_path / "out" / "nightly" / "sync.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", target)
    assert result.exit_code == 0, result.stderr
    assert json.loads(target.read_text())["ok"] is True


@pytest.mark.parametrize("command", ["sync", "verify-rebuild", "explain"])
def test_report_onto_a_directory_is_refused_before_anything_moves(cli: Cli, small: Small, tmp_path: Path,
                                                                  command: str) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    target = tmp_path / "a-directory"
    target.mkdir()
    argv = {"sync": ["sync"], "verify-rebuild": ["verify", "--rebuild"], "explain": ["explain"]}[command]
    result = cli(*argv, "-m", small.manifest_path, "--repo", small.work.path, "--report", target)
    assert result.exit_code == 2 and str(target) in result.stderr and "directory" in result.stderr
    assert small.branch() is None and not small.manifest_path.with_name("manifest.yaml.lock").exists()
    assert list(target.iterdir()) == []


def test_report_under_a_file_is_refused_before_anything_moves(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    (tmp_path / "file").write_text("x")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", tmp_path / "file" / "r.json")
    assert result.exit_code == 2 and "file" in result.stderr
    assert small.branch() is None


def test_disk_full_while_writing_the_lock_moves_nothing_and_leaves_no_temp(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    monkeypatch.undo()
    assert result.exit_code == 4, (result.stdout, result.stderr)
    assert "No space left on device" in result.stderr and "manifest.yaml.lock" in result.stderr
    assert small.branch() is None, "the branch moved although the lock could not be written"
    assert sorted(p.name for p in small.manifest_path.parent.iterdir()) == ["manifest.yaml"]


def test_a_read_only_repository_is_exit_4_with_a_message(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    with read_only(small.work.path):
        for argv in (["sync"], ["explain"], ["sync", "--offline"]):
            result = cli(*argv, "-m", small.manifest_path, "--repo", small.work.path)
            assert result.exit_code == 4, (argv, result.stdout, result.stderr)
            assert "carrytool: error:" in result.stderr and str(small.work.path) in result.stderr
        # only reading: fine
        result = cli("verify", "-m", small.manifest_path, "--repo", small.work.path, "--rev", "dev")
        assert result.exit_code == 0, result.stderr
        # composing writes objects: exit 0 if git finds them all already there, else 4; never a traceback
        result = cli("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code in (0, 4), result.stderr


def test_a_lock_beside_a_read_only_manifest_is_exit_4_and_moves_nothing(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    with read_only(small.manifest_path.parent):
        result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 4, (result.stdout, result.stderr)
    assert "manifest.yaml.lock" in result.stderr
    assert small.branch() is None


def test_a_5000_digit_pr_number_is_exit_2(cli: Cli, small: Small) -> None:
    text = ("version: 1\nupstream: {url: ../up}\nfork: {branch: dev}\nentries:\n"
            f"  - pr: {'9' * 5000}\n  - carry: x\n    commit: {'a' * 40}\n    supersedes: [{'8' * 5000}]\n")
    small.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    small.manifest_path.write_text(text)
    for argv in (["check"], ["sync", "--repo", str(small.work.path)]):
        result = cli(*argv, "-m", small.manifest_path)
        assert result.exit_code == 2, (argv, result.stdout, result.stderr)
        assert f"{small.manifest_path}:5" in result.stderr and "pr" in result.stderr
        assert len(result.stderr) < 1000


def test_a_lock_without_a_recorded_result_still_reproduces_it(cli: Cli, small: Small) -> None:
    """`result` is what the inputs composed to, a record for reviewers: `null` is accepted, and --locked
    composes the same SHA from the inputs alone."""
    path, doc = locked_setup(cli, small)
    sha = doc["result"]
    doc["result"] = None
    path.write_text(json.dumps(doc, indent=2) + "\n")
    small.work.git("update-ref", "-d", "refs/heads/dev")
    code, report = cli.json("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    assert report["result"]["sha"] == sha and small.branch() == sha
