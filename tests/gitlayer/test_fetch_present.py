"""`Git.fetch_present`: a fetch from a local repository whose objects are already here, without `git fetch`.
It must leave exactly the refs `git fetch` leaves (same values, same absent sources), and give way to a
real fetch (writing nothing) whenever an object or its history is missing or the shortcut does not apply."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from carrytool.errors import GitError
from carrytool.gitlayer.git import Git
from tests.conftest import Cli, Small
from tests.gitrepo import Repo, init_repo
from tests.pipeline.test_sync import A_TWO, by_id, sync

NS = "refs/carrytool/dev"


def _upstream(small: Small) -> dict[str, str]:
    """PRs 1-3 (3 an annotated tag of a commit), and the specs a sync fetches for PRs 1-4 (4 does not exist)."""
    small.pr(1, A_TWO)
    small.pr(2, {"b.py": "x = 5\ny = 2\nz = 3\n"})
    three = small.up.commit({"docs/c.txt": "c3\n"}, "pr 3", parent=small.base)
    small.up.git("tag", "-a", "-m", "tagged", "t3", three)
    small.up.git("update-ref", "refs/pull/3/head", small.up.rev("refs/tags/t3"))
    specs = {"+refs/heads/main": f"{NS}/upstream"}
    specs.update({f"+refs/pull/{n}/head": f"{NS}/pr/{n}" for n in (1, 2, 3, 4)})
    return specs


def _refs(repo: Path) -> str:
    return Repo(repo).git("for-each-ref", "--format=%(objectname) %(refname)", "refs/carrytool")


def _with_objects(small: Small, name: str) -> Path:
    """A bare repository that has every object of upstream (under refs/mirror), an older value of pr/1's
    ref, pr/2's current one, and a stray ref under pr/4 that no fetch touches."""
    repo = init_repo(small.root / name, bare=True)
    repo.git("fetch", "-q", str(small.up.path), "+refs/*:refs/mirror/*")
    repo.git("update-ref", f"{NS}/pr/1", small.base)
    repo.git("update-ref", f"{NS}/pr/2", small.up.rev("refs/pull/2/head"))
    repo.git("update-ref", f"{NS}/pr/4", small.base)
    return repo.path


def test_the_refs_left_are_those_git_fetch_leaves(small: Small) -> None:
    specs = _upstream(small)
    shortcut, fetched = _with_objects(small, "a.git"), _with_objects(small, "b.git")
    with Git(shortcut, quarantine=True) as git:
        absent = git.fetch_present(str(small.up.path), specs)
    assert absent == {"+refs/pull/4/head"}
    specs_b = {s: d for s, d in specs.items() if s != "+refs/pull/4/head"}
    Repo(fetched).git("fetch", "-q", "--no-tags", str(small.up.path), *(f"{s}:{d}" for s, d in specs_b.items()))
    assert _refs(shortcut) == _refs(fetched)
    assert _refs(shortcut) == "\n".join([
        f"{small.up.rev('refs/pull/1/head')} {NS}/pr/1",
        f"{small.up.rev('refs/pull/2/head')} {NS}/pr/2",
        f"{small.up.rev('refs/tags/t3')} {NS}/pr/3",        # the tag itself, as fetch stores it
        f"{small.base} {NS}/pr/4",
        f"{small.base} {NS}/upstream"])


def test_a_tip_whose_history_is_missing_is_fetched(small: Small) -> None:
    """The PR's commit is here but not its tree: fetch's connectivity check says fetch, and nothing is written."""
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    five = small.up.commit({"e.py": "e\n"}, "pr 5", parent=small.base, ref="refs/pull/5/head")
    loose = Path("objects") / five[:2] / five[2:]
    (repo / loose).parent.mkdir(exist_ok=True)
    shutil.copyfile(small.up.path / ".git" / loose, repo / loose)
    specs["+refs/pull/5/head"] = f"{NS}/pr/5"
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) is None
    assert _refs(repo) == before


def test_sha_sources_and_remote_urls_are_left_to_fetch(small: Small) -> None:
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), {small.base: f"{NS}/locked/x"}) is None
        assert git.fetch_present(f"file://{small.up.path}", specs) is None
        assert git.fetch_present(str(small.up.path), {"refs/heads/main": f"{NS}/upstream"}) is None   # unforced
    assert _refs(repo) == before


def test_sync_into_a_repository_with_the_objects_composes_what_a_fetching_one_does(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, {"b.py": "x = 5\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 9, "on_missing": "skip"}])
    code, fetched = sync(cli, small)
    assert code == 0
    small.work.path.rename(small.root / "fetched.git")
    small.work = init_repo(small.root / "work", bare=True)
    small.work.git("fetch", "-q", str(small.up.path), "+refs/*:refs/mirror/*")
    code, present = sync(cli, small)
    assert code == 0 and by_id(present)["pr/9"]["reason"] == "missing"
    fetched.pop("lock_written"), present.pop("lock_written")      # the second run finds the same lock there
    assert present == fetched
    assert present["result"]["sha"] == "ec471663d8e49d994275367bdb484520efc4474e"
    assert _refs(small.work.path) == _refs(small.root / "fetched.git")


def test_a_ref_here_naming_a_missing_object_leaves_it_to_fetch(small: Small) -> None:
    """fetch's connectivity check (`--not --all`) cannot walk from a ref naming a missing object: the
    shortcut writes nothing and gives way to git fetch, whatever fetch then makes of it."""
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    Repo(repo).git("pack-refs", "--all")
    packed = repo / "packed-refs"
    packed.write_text(packed.read_text().replace(small.base + f" {NS}/pr/1", "1234567890" * 4 + f" {NS}/pr/1"))
    before = _refs(repo)
    assert f"{'1234567890' * 4} {NS}/pr/1" in before.splitlines()
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) is None
    assert _refs(repo) == before


def test_a_partial_clone_is_left_to_fetch_and_its_promisor_never_asked(small: Small) -> None:
    """In a partial clone a missing object is fetched on demand from the clone's promisor remote, which the
    manifest never names: the shortcut's connectivity check would read from it. It steps aside, unasked."""
    specs = _upstream(small)
    small.up.git("config", "uploadpack.allowFilter", "true")
    log = small.root / "asked.log"
    wrapper = small.root / "upload-pack"
    wrapper.write_text(f'#!/bin/sh\necho asked >> "{log}"\nexec git-upload-pack "$@"\n')
    wrapper.chmod(0o755)
    repo = small.root / "partial.git"
    Repo(small.root).git("clone", "-q", "--bare", "--filter=blob:none", f"file://{small.up.path}", str(repo))
    Repo(repo).git("config", "remote.origin.uploadpack", str(wrapper))
    assert Repo(repo).git("config", "remote.origin.promisor") == "true"
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) is None
    assert not log.exists()
    assert _refs(repo) == before


def test_a_source_git_would_find_under_another_name_is_left_to_fetch(small: Small) -> None:
    """fetch finds a source it does not have by git's ref-name rules (here pull/4 as a tag named
    `refs/pull/4/head`); the shortcut, matching exact names, leaves that to fetch and writes nothing."""
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    small.up.git("update-ref", "refs/tags/refs/pull/4/head", small.base)
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) is None
    assert _refs(repo) == before
    Repo(repo).git("fetch", "-q", "--no-tags", str(small.up.path), "+refs/pull/4/head:refs/fetched")
    assert Repo(repo).rev("refs/fetched") == small.base      # git does take it


@pytest.mark.parametrize("key, value", [("url.{copy}.insteadOf", "{up}"),
                                        ("transfer.hideRefs", "refs/carrytool"),
                                        ("fetch.hideRefs", "refs/mirror")])
def test_config_that_changes_where_fetch_reads_or_what_it_sees_is_left_to_fetch(small: Small, key: str,
                                                                                 value: str) -> None:
    """A URL rewritten by `url.<base>.insteadOf` may not be the local path at all (here another one, which
    could as well be a network URL); refs hidden from fetch change what its connectivity check counts as
    here: the shortcut writes nothing and gives way."""
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    copy = small.root / "copy.git"
    Repo(small.root).git("clone", "-q", "--mirror", str(small.up.path), str(copy))
    key, value = key.format(copy=copy), value.format(up=small.up.path)
    Repo(repo).git("config", key, value)
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) is None
    assert _refs(repo) == before
    Repo(repo).git("config", "--unset", key)
    with Git(repo, quarantine=True) as git:
        assert git.fetch_present(str(small.up.path), specs) == {"+refs/pull/4/head"}


def test_in_the_background_the_refs_are_known_at_once_and_land_before_the_block_ends(small: Small) -> None:
    """Within `refs_in_background` the update runs beside the caller: `refs_named` answers for its refs
    without waiting, every command that reads refs waits for it, and the refs are git fetch's at the end."""
    specs = _upstream(small)
    shortcut, fetched = _with_objects(small, "a.git"), _with_objects(small, "b.git")
    specs_b = {s: d for s, d in specs.items() if s != "+refs/pull/4/head"}
    Repo(fetched).git("fetch", "-q", "--no-tags", str(small.up.path), *(f"{s}:{d}" for s, d in specs_b.items()))
    want = dict(line.split(" ")[::-1] for line in _refs(fetched).splitlines())
    with Git(shortcut, quarantine=True) as git:
        with git.refs_in_background():
            assert git.fetch_present(str(small.up.path), specs) == {"+refs/pull/4/head"}
            assert git._ref_write is not None
            assert git.refs_named(list(specs.values())) == want      # the pr/4 left alone keeps its value
            assert git._ref_write is not None                        # ... answered without waiting
            listed = git.run("for-each-ref", "--format=%(objectname) %(refname)", "refs/carrytool").stdout
            assert git._ref_write is None                            # for-each-ref waited for the write
            assert listed.decode().strip() == _refs(fetched)
        assert git.refs_named([f"{NS}/pr/1"]) == {f"{NS}/pr/1": small.up.rev("refs/pull/1/head")}
    assert _refs(shortcut) == _refs(fetched)


def test_a_background_write_that_fails_is_raised_when_the_block_ends_and_writes_nothing(small: Small) -> None:
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    Repo(repo).git("update-ref", f"{NS}/pr/3/x", small.base)     # pr/3 cannot be a ref: a directory is there
    before = _refs(repo)
    with Git(repo, quarantine=True) as git:
        with pytest.raises(GitError, match="cannot write the fetched refs") as raised:
            with git.refs_in_background():
                git.fetch_present(str(small.up.path), specs)
        assert f"{NS}/pr/3" in raised.value.stderr
    assert _refs(repo) == before                 # update-ref's transaction: all or nothing


def test_an_error_in_the_block_stands_and_the_write_is_waited_for(small: Small) -> None:
    specs = _upstream(small)
    repo = _with_objects(small, "a.git")
    with Git(repo, quarantine=True) as git:
        with pytest.raises(KeyError, match="composing failed"):
            with git.refs_in_background():
                git.fetch_present(str(small.up.path), specs)
                raise KeyError("composing failed")
        assert git._ref_write is None
    assert f"{small.up.rev('refs/pull/1/head')} {NS}/pr/1" in _refs(repo).splitlines()


def test_sync_stops_with_the_reason_when_the_fetched_refs_cannot_be_written(cli: Cli, small: Small) -> None:
    small.pr(1, A_TWO)
    small.pr(2, {"b.py": "x = 5\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    small.work.git("fetch", "-q", str(small.up.path), "+refs/*:refs/mirror/*")
    small.work.git("update-ref", f"{NS}/pr/2/x", small.base)
    code, report = sync(cli, small)
    assert code == 4 and report["error"]["kind"] == "GitError"
    assert report["error"]["message"].startswith("cannot write the fetched refs")
    assert f"'{NS}/pr/2/x' exists" in report["error"]["message"]       # git's own reason
    assert f"remove it (`git update-ref -d {NS}/pr/2/x`)" in report["error"]["message"]   # and what to do
    assert small.work.git("for-each-ref", "refs/heads") == ""
