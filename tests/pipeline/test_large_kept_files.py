"""A kept file too large to hold in memory (h256): `read_json` read it outside its MemoryError guard, so a lock,
a cache or a night's lock of gigabytes ended the command in a MemoryError traceback, exit 70. A lock a command
needs is named as too large to read (exit 2); a cache, or a lock sync only looks back at, costs what it saved.

The file is sparse (no disk is used) and the commands run in a subprocess whose address space is limited
(RLIMIT_AS) below the file's size, so reading it whole fails as it would on a machine without the memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import Cli, Small

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 2 << 30          # the address space of the subprocess
SIZE = 8 << 30           # the file's size: more than LIMIT


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _huge(path: Path) -> None:
    path.unlink(missing_ok=True)
    with path.open("wb") as handle:
        handle.truncate(SIZE)


def _run(*args: object, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """carrytool ARGS (or the Python CODE) in a subprocess whose address space is LIMIT."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "carrytool", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=_limited, timeout=120)


def test_read_json_says_a_file_too_large_to_hold_is_too_large(tmp_path: Path) -> None:
    """The guard itself, and the caches read through it: a kept answer, the probe verdicts, the forge's."""
    big = tmp_path / "big.json"
    _huge(big)
    result = _run(code=f"""
from pathlib import Path
from carrytool.gitlayer.jsonread import read_json
from carrytool.pipeline.kept import KeptAnswers
from carrytool.review.probe import VerdictCache
try:
    read_json(Path({str(big)!r}))
except ValueError as exc:
    print("ValueError:", exc)
kept = KeptAnswers(Path({str(tmp_path)!r}), "big", (2, 0), "rule", ["pipeline/kept.py"], 10, str, str)
kept.path = Path({str(big)!r})
print("kept:", kept.get("key"))
print("verdicts:", VerdictCache(Path({str(big)!r}))._load())
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["ValueError: too large to read", "kept: None",
                                         "verdicts: {}"], result.stdout


def _synced(cli: Cli, small: Small) -> Path:
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    return small.manifest_path.parent / "manifest.yaml.lock"


def test_a_lock_too_large_to_hold_is_named_not_a_traceback(cli: Cli, small: Small) -> None:
    lock = _synced(cli, small)
    good = small.root / "good.lock"
    good.write_text(lock.read_text())
    _huge(lock)
    for command in (["sync", "--locked"], ["diff", lock, good], ["status", "--offline"]):
        result = _run(*command, "-m", small.manifest_path, "--repo", small.work.path)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        assert f"cannot read the lock {lock}: too large to read" in " ".join(result.stderr.split()), result.stderr
    result = _run("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q")    # looked back at only
    assert result.returncode == 0, result.stderr
    assert json.loads(lock.read_text())["result"] == small.branch()                    # written anew


def test_diff_of_the_night_before_a_lock_too_large_to_hold_is_no_traceback(cli: Cli, small: Small) -> None:
    """h257: `carrytool diff` with no lock named reads the lock on disk to find the night before it: outside a work
    tree for sync's records in --repo (night_hint), inside one to pass over the commit that holds it
    (nights._last_night), both with reads outside the guard: a MemoryError traceback, exit 70."""
    lock = _synced(cli, small)
    folder, good = lock.parent, lock.read_text()
    for in_a_work_tree in (False, True):
        if in_a_work_tree:
            lock.write_text(good)
            for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                                                        "night"]):
                subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)
        _huge(lock)
        result = _run("diff", "-m", small.manifest_path, "--repo", small.work.path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (in_a_work_tree, result.stderr[-800:])
        said = " ".join(result.stderr.split())
        assert f"cannot read the lock {lock}: too large to read" in said if in_a_work_tree else \
            "is not in a git work tree" in said, said
