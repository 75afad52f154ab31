"""What each sync composed from, recorded under refs/carrytool/<branch>/nights, red nights too (h201): a red
night writes no lock, and `bisect --rev` of it needs the heads it had (tests/review/test_bisect_night_heads.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.pipeline import night_record
from tests.conftest import Cli, Small
from tests.gitrepo import init_repo

RED = {"name": "never", "file": "a.py", "contains": "never there"}


def sync(cli: Cli, small: Small, *args: str, work: Path | None = None) -> tuple[int, dict]:
    return cli.json("sync", "-m", small.manifest_path, "--repo", work or small.work.path, *args)


def records(small: Small) -> dict[str, dict]:
    """{composed SHA: lock} of the record, in its order (newest first)."""
    repo = small.work
    order = repo.git("cat-file", "blob", "refs/carrytool/dev/nights:order").split()
    return {sha: json.loads(repo.git("cat-file", "blob", f"refs/carrytool/dev/nights:{sha}.lock")) for sha in order}


def test_a_red_night_records_what_it_composed_and_moves_nothing_else(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}], asserts=[RED])
    code, report = sync(cli, small)
    assert code == 1 and report["result"]["updated"] is False, report
    assert small.branch() is None and not (small.manifest_path.parent / "manifest.yaml.lock").exists()
    sha = report["result"]["sha"]
    lock = records(small)[sha]
    assert lock["result"] == sha and lock["upstream"]["sha"] == report["upstream"]["sha"]
    assert [(e["id"], e["head"]) for e in lock["entries"]] == [("pr/1", report["entries"][0]["head"])]
    code, _ = sync(cli, small, "--dry-run")
    assert code == 1 and list(records(small)) == [sha]


def test_a_dry_run_records_nothing_and_a_green_night_the_lock_it_wrote(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    code, _ = sync(cli, small, "--dry-run")
    assert code == 0 and small.work.git("for-each-ref", "refs/carrytool/dev/nights") == ""
    code, report = sync(cli, small)
    assert code == 0
    written = json.loads((small.manifest_path.parent / "manifest.yaml.lock").read_text())
    assert records(small) == {report["result"]["sha"]: written}


def test_the_record_is_deterministic_and_keeps_the_last_nights(cli: Cli, small: Small, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Same inputs, same record commit (in another repository, and run again); the oldest goes past NIGHTS."""
    monkeypatch.setattr(night_record, "NIGHTS", 2)
    small.manifest([{"pr": 1}], asserts=[RED])
    other = init_repo(tmp_path / "other", bare=True)
    composed = []
    for n in range(3):
        small.pr(1, {"b.py": f"x = {n}\ny = 2\nz = 3\n"})
        sync(cli, small)
        code, report = sync(cli, small, work=other.path)
        assert code == 1
        composed.append(report["result"]["sha"])
        assert small.work.rev("refs/carrytool/dev/nights") == other.rev("refs/carrytool/dev/nights")
    before = small.work.rev("refs/carrytool/dev/nights")
    sync(cli, small)
    assert small.work.rev("refs/carrytool/dev/nights") == before
    assert list(records(small)) == [composed[2], composed[1]]
    assert small.work.git("rev-list", "--count", "refs/carrytool/dev/nights") == "1"     # no history to grow
