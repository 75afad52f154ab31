"""carrytool diff with the manifest outside any git work tree: no committed night to read, but sync recorded
each night in --repo (`refs/carrytool/<branch>/nights`), and the error names the one to compare with."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.review.test_diff import Nights


@pytest.fixture
def loose(tmp_path: Path, cli: Cli) -> tuple[Nights, Path]:
    """Two nights synced from a work tree; then the manifest and its lock copied to a folder outside any work
    tree (its relative upstream url still names the same repository)."""
    n = Nights(tmp_path, cli)
    n.night([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    n.second_day()
    n.night([{"pr": 1}, {"pr": 3}, {"pr": 4}])
    folder = tmp_path / "loose" / "carries"
    folder.mkdir(parents=True)
    for name in ("manifest.yaml", "manifest.yaml.lock"):
        (folder / name).write_bytes((n.manifest.parent / name).read_bytes())
    return n, folder / "manifest.yaml"


def test_outside_a_work_tree_the_error_names_the_night_sync_recorded(loose: tuple[Nights, Path]) -> None:
    """h245 (trl trial): a fork whose manifest is not committed ran `carrytool diff` after two nights; the hint
    said only "name both locks", though sync had recorded the night before in --repo. It names that night's
    record, as a command that runs."""
    nights, manifest = loose
    lock = manifest.with_name("manifest.yaml.lock")
    result = nights.cli("diff", "-m", manifest, "--repo", nights.work.path)
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    assert "is not in a git work tree" in said, said
    older = json.loads(nights.fork.show("HEAD~1", "carries/manifest.yaml.lock"))["result"]
    spec = f"refs/carrytool/dev/nights:{older}.lock"
    command = f"carrytool diff {spec} {shlex.quote(str(lock))} -m {shlex.quote(str(manifest))} " \
              f"--repo {shlex.quote(str(nights.work.path))}"
    assert command in said, said
    # the command it names runs, and tells what the committed nights tell
    code, out = nights.cli.json("diff", spec, lock, "-m", manifest, "--repo", nights.work.path)
    assert code == 0, out
    code, committed = nights.cli.json("diff", "-m", nights.manifest, "--repo", nights.work.path)
    assert code == 0 and out["entries"] == committed["entries"], (out, committed)


def test_outside_a_work_tree_without_a_recorded_night_the_record_looked_in_is_named(loose: tuple[Nights, Path]
                                                                                    ) -> None:
    """No night recorded before the lock on disk (its record gone): the error names the record it looked in (h259:
    it named none), the hint the sync after which that record holds one, and both locks, as it did."""
    nights, manifest = loose
    nights.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    result = nights.cli("diff", "-m", manifest, "--repo", nights.work.path)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "name both locks" in said, said
    assert f", nor does sync's record of the nights (refs/carrytool/dev/nights in {nights.work.path}) hold one " \
           f"before it hint: each `carrytool sync -m {shlex.quote(str(manifest))} --repo " \
           f"{shlex.quote(str(nights.work.path))}` records its night there: once it holds one before the lock on disk, " \
           "diff names it" in said, said
