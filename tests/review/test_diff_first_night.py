"""carrytool diff with no committed night at all (h259): the lock never committed, or no lock yet. The error named
no record it had looked in nor a next step ("name both locks" alone); it names sync's record of the nights in
--repo (`refs/carrytool/<branch>/nights`), the night before there as a command that runs when it holds one, and
else what to run so that the next night has one to be compared with."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.conftest import Cli
from tests.gitrepo import write_manifest
from tests.review.test_diff import Nights


def _first(tmp_path: Path, cli: Cli) -> Nights:
    """A fork work tree with one commit, the manifest written (never committed), no night synced yet."""
    n = Nights(tmp_path, cli)
    n.fork.commit({"README": "fork\n"}, "init", ref="refs/heads/main")
    write_manifest(n.manifest, {"version": 1, "upstream": {"url": "../../up", "branch": "main"},
                                "fork": {"branch": "dev"}, "entries": [{"pr": 1}]})
    return n


def _said(n: Nights) -> str:
    result = n.cli("diff", "-m", n.manifest, "--repo", n.work.path)
    assert result.exit_code == 2, result.output
    return " ".join(result.stderr.split())


def test_no_lock_names_the_sync_that_writes_it(tmp_path: Path, cli: Cli) -> None:
    n = _first(tmp_path, cli)
    said = _said(n)
    assert f"no lock at {n.manifest}.lock: no night was synced beside this manifest" in said, said
    assert f"hint: `carrytool sync -m {shlex.quote(str(n.manifest))} --repo {shlex.quote(str(n.work.path))}` " \
           "writes it; or name both locks" in said, said


def test_one_uncommitted_night_names_the_record_looked_in_and_what_to_run(tmp_path: Path, cli: Cli) -> None:
    n = _first(tmp_path, cli)
    assert cli("sync", "-m", n.manifest, "--repo", n.work.path).exit_code == 0
    said = _said(n)
    top, repo = shlex.quote(str(n.fork.path)), shlex.quote(str(n.work.path))
    assert said.startswith(
        f"carrytool: error: no committed night before the lock on disk: no earlier commit of {n.fork.path} holds "
        f"another carries/manifest.yaml.lock, nor does sync's record of the nights (refs/carrytool/dev/nights in "
        f"{n.work.path}) hold one before it hint: commit the lock after each night (`git -C {top} add "
        f"carries/manifest.yaml.lock && git -C {top} commit`): after the next `carrytool sync -m "
        f"{shlex.quote(str(n.manifest))} --repo {repo}`, `carrytool diff` compares its lock with that one; or name "
        "both locks"), said


def test_uncommitted_nights_name_the_night_before_as_sync_recorded_it(tmp_path: Path, cli: Cli) -> None:
    n = _first(tmp_path, cli)
    assert cli("sync", "-m", n.manifest, "--repo", n.work.path).exit_code == 0
    first = n.work.ref("refs/heads/dev")
    n.up.commit({"c.txt": "c9\n"}, "upstream c", parent="main", ref="refs/heads/main")
    assert cli("sync", "-m", n.manifest, "--repo", n.work.path).exit_code == 0
    said = _said(n)
    assert said.startswith("carrytool: error: no committed night before the lock on disk: no earlier commit of "
                           f"{n.fork.path} holds another carries/manifest.yaml.lock hint: compare with the night "
                           f"before as sync recorded it in --repo: `git -C {shlex.quote(str(n.work.path))} show "
                           f"refs/carrytool/dev/nights:{first}.lock > night.lock && carrytool diff night.lock "), said
    # the command it names runs (in a work tree REV:PATH is read there: the record is written out first)
    (tmp_path / "night.lock").write_text(n.work.git("show", f"refs/carrytool/dev/nights:{first}.lock"))
    code, out = cli.json("diff", tmp_path / "night.lock", f"{n.manifest}.lock", "-m", n.manifest, "--repo", n.work.path)
    assert code == 0 and out["upstream"]["from"] != out["upstream"]["to"], out


def test_a_red_night_after_the_first_committed_one_is_named_with_a_command_that_runs(tmp_path: Path, cli: Cli
                                                                                     ) -> None:
    """h265 (a newcomer's trial on pylint): night 1 green and committed, night 2 red (no lock written). The bare
    `diff` the README gives for "the next morning" said to commit the lock after each night (it was) and named
    neither the red night sync recorded after it nor a command; it names that night and a command that runs."""
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}])                          # green, its lock committed: the only committed night
    n.second_day()
    n.manifest.write_text(n.manifest.read_text() + "asserts:\n- {name: no-c2, file: c.txt, absent: c2}\n")
    code, red = cli.json("sync", "-m", n.manifest, "--repo", n.work.path)
    assert code == 1, red
    said = _said(n)
    assert "commit the lock after each night" not in said, said
    record = f"refs/carrytool/dev/nights:{red['result']['sha']}.lock"
    lock, repo = f"{n.manifest}.lock", shlex.quote(str(n.work.path))
    assert said.startswith(
        "carrytool: error: no committed night before the lock on disk: no earlier commit of "
        f"{n.fork.path} holds another carries/manifest.yaml.lock; the last sync in --repo composed "
        f"{red['result']['sha'][:12]} after it and wrote no lock (a red night) hint: compare the lock on disk with "
        f"that night as sync recorded it: `git -C {repo} show {record} > night.lock && carrytool diff "
        f"{shlex.quote(lock)} night.lock -m {shlex.quote(str(n.manifest))} --repo {repo}`, or with its report "
        "(`sync --report FILE`): `carrytool diff "), said
    # the command it names runs, and says what the red night changed
    (tmp_path / "night.lock").write_text(n.work.git("show", record))
    code, out = cli.json("diff", lock, tmp_path / "night.lock", "-m", n.manifest, "--repo", n.work.path)
    assert code == 0 and out["upstream"]["from"] != out["upstream"]["to"], out
