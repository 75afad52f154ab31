"""The lock file as a reviewer and another machine see it: a stable, line-per-key JSON text, and `--locked`
in a repository that has none of the locked commits fetches them by SHA (or, offline, says it cannot)."""

from __future__ import annotations

import json

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo
from tests.pipeline.test_sync import A_TWO, B_TEN


def test_the_lock_is_indented_json_ending_in_a_newline(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    text = small.manifest_path.with_name("manifest.yaml.lock").read_text()
    # one key per line, two-space indent: a lock change reviews as a line diff
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    assert '\n  "entries": [\n    {\n      "id": "pr/1",\n' in text


def test_locked_in_a_repository_without_the_commits_fetches_them(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    code, first = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0
    other = init_repo(small.root / "other", bare=True)
    offline = cli("sync", "-m", small.manifest_path, "--repo", other.path, "--locked", "--offline")
    assert offline.exit_code == 2 and "the lock names commits this repository does not have" in offline.stderr
    assert other.ref("refs/heads/dev") is None
    code, again = cli.json("sync", "-m", small.manifest_path, "--repo", other.path, "--locked")
    assert code == 0 and again["result"]["sha"] == first["result"]["sha"]
    assert other.ref("refs/heads/dev") == first["result"]["sha"]


def test_a_lock_that_cannot_be_renamed_into_place_says_the_branch_moved(cli: Cli, small: Small) -> None:
    """The rename is the last write: when it fails the branch has moved (or already was there), and the
    error says which, so the user knows only the lock is left to write."""
    small.pr(1, A_TWO)
    small.manifest([{"pr": 1}])
    blocker = small.manifest_path.with_name("manifest.yaml.lock")
    blocker.mkdir()
    (blocker / "keep").write_text("a directory where the lock goes\n")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    sha = small.branch()
    assert result.exit_code == 4 and sha is not None
    text = " ".join(result.stderr.split())
    assert f"; dev moved to {sha}, but the lock was not updated" in text, text
    assert not [p for p in blocker.parent.iterdir() if p.name.endswith(".tmp")]    # the staged lock removed
    again = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert again.exit_code == 4 and small.branch() == sha
    assert f"; dev was already at {sha}, but the lock was not updated" in " ".join(again.stderr.split())
    blocker.joinpath("keep").unlink()
    blocker.rmdir()
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    assert json.loads(blocker.read_text())["result"] == sha
