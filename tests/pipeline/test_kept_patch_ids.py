"""The stale-stack check's patch ids, kept by commit (pipeline.keptpatchids): explain after the nightly sync,
and the next sync, ask git for none it read before, and say exactly what asking says. Differential: each
run's warnings are compared with those of a run that asks git for every id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.runners import SYNC_KEEPS
from carrytool.gitlayer.git import Git
from carrytool.pipeline.keptpatchids import KeptPatchIds
from tests.conftest import Cli, Small

A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}


def _stale_stack(small: Small) -> tuple[str, str]:
    """pr/2 built on pr/1's first version; pr/1 amended since (test_sync's helper-114 case): (old, new)."""
    old = small.pr(1, {"b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"})
    small.up.commit({"docs/c.txt": "c2\n"}, "pr 2, on pr 1", parent=old, ref="refs/pull/2/head")
    tree = small.up.git("rev-parse", f"{small.up.commit(A_TWO, 'scratch', parent=small.base)}^{{tree}}")
    when = small.up.git("log", "-1", "--format=%ad", "--date=raw", old)
    new = small.up.git("commit-tree", tree, "-p", small.base, "-m", "pr 1", env={"GIT_AUTHOR_DATE": when})
    small.up.git("update-ref", "refs/pull/1/head", new)
    small.manifest([{"pr": 1}, {"pr": 2}])
    return old, new


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """A list of the commits each `Git.patch_ids_later` call asks git about."""
    calls: list[list[str]] = []
    real = Git.patch_ids_later

    def spy(self: Git, commits):  # noqa: ANN001, ANN202
        calls.append(list(commits))
        return real(self, commits)

    monkeypatch.setattr(Git, "patch_ids_later", spy)
    return calls


def _stale(cli: Cli, small: Small, command: str, *args: str) -> list[dict]:
    code, report = cli.json(command, "-m", small.manifest_path, "--repo", small.work.path, *args)
    assert code == 0, report
    return [w for w in report["warnings"] if w["kind"] == "stale-stack"]


def _kept(small: Small) -> Path:
    [kept] = (small.work.path / "carrytool" / "cache").glob("patchids-git*.json")
    return kept


def test_patch_ids_read_by_sync_are_not_asked_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _stale_stack(small)
    asked = _asked(monkeypatch)
    first = _stale(cli, small, "sync")
    assert [w["commits"] for w in first] == [[{"here": old, "there": new}]]
    assert [sorted(c) for c in asked if c] == [sorted([old, new])]
    kept = _kept(small)
    assert len(json.loads(kept.read_text())["patchids"]) == 2
    # the bench's cold explain keeps what a sync wrote, as a reviewer's explain after the nightly sync finds it
    assert kept.name.startswith(SYNC_KEEPS)
    for command, args in (("sync", ()), ("explain", ("--offline",)), ("sync", ("--dry-run",))):
        asked.clear()
        assert _stale(cli, small, command, *args) == first, command
        assert not any(asked), (command, asked)
    with monkeypatch.context() as m:     # what asking git says, every id asked
        m.setattr(KeptPatchIds, "get", lambda self, key: None)
        asked.clear()
        assert _stale(cli, small, "sync", "--dry-run") == first and [sorted(c) for c in asked] == [sorted([old, new])]


def test_verify_asks_again_and_a_bad_file_only_costs_asking(cli: Cli, small: Small,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _stale_stack(small)
    first = _stale(cli, small, "sync")
    asked = _asked(monkeypatch)
    code, _report = cli.json("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    assert [sorted(c) for c in asked if c] == [sorted([old, new])], code
    kept = _kept(small)
    data = json.loads(kept.read_text())
    for bad in ({"patchids": {key: "not an id" for key in data["patchids"]}},
                {"patchids": {key: 7 for key in data["patchids"]}}, {"patchids": [1, 2]}, [1, 2], "not json", ""):
        kept.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        asked.clear()
        assert _stale(cli, small, "sync", "--dry-run") == first, bad
        assert [sorted(c) for c in asked] == [sorted([old, new])], bad


def test_a_kept_id_is_the_commit_s_whoever_holds_it(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept by commit: pr/1 moved back to its old version (no stale stack) and then amended again (a third
    version): only the new commit is asked, and the warning names it."""
    old, new = _stale_stack(small)
    _stale(cli, small, "sync")
    small.up.git("update-ref", "refs/pull/1/head", old)
    asked = _asked(monkeypatch)
    assert _stale(cli, small, "sync") == [] and not any(asked)
    third = small.up.git("commit-tree", small.up.git("rev-parse", f"{new}^{{tree}}"), "-p", small.base, "-m", "pr 1",
                         env={"GIT_AUTHOR_DATE": small.up.git("log", "-1", "--format=%ad", "--date=raw", old),
                              "GIT_COMMITTER_DATE": "1700000000 +0000"})
    assert third != new
    small.up.git("update-ref", "refs/pull/1/head", third)
    [warning] = _stale(cli, small, "sync")
    assert warning["commits"] == [{"here": old, "there": third}] and [c for c in asked if c] == [[third]]
