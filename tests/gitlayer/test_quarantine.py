"""Objects a run writes go to a quarantine; the user's store gets one pack of what must persist."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from carrytool.errors import CarryError, GitError
from carrytool.gitlayer.git import Git, Signature, _read_file
from tests.conftest import Cli, Small


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """WHERE mounted as a tmpfs of SIZE for the block (root only: the test is skipped elsewhere)."""
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                                           capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def _loose(repo: Path) -> int:
    out = subprocess.run(["git", "count-objects", "-v"], cwd=repo, capture_output=True, text=True).stdout
    return int(dict(line.split(": ") for line in out.splitlines())["count"])


def _composed(repo: Path, tip: str) -> list[str]:
    """The commits, trees and blobs reachable from TIP that upstream's repository does not have."""
    out = subprocess.run(["git", "rev-list", "--objects", tip, "--not", "--glob=refs/mirror/*"], cwd=repo,
                         capture_output=True, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines()]


def _exists(repo: Path, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, capture_output=True).returncode == 0


def _fsck(repo: Path) -> None:
    proc = subprocess.run(["git", "fsck", "--connectivity-only", "--no-dangling"], cwd=repo, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def _verify_pack(repo: Path) -> list[str]:
    """`git verify-pack -v` of the repository's one pack, line by line (one line per object, then the chains)."""
    [pack] = [p for p in (repo / "objects" / "pack").glob("*.pack")]
    verify = subprocess.run(["git", "verify-pack", "-v", str(pack)], capture_output=True, text=True, check=True)
    return verify.stdout.splitlines()


def _small_sync(small: Small, cli: Cli, *extra: str) -> dict:
    small.up.commit({"docs/c.txt": "c2\n"}, "upstream", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})
    small.pr(3, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    # upstream's objects are already here, packed: whatever is loose afterwards, the run wrote
    subprocess.run(["git", "-c", "fetch.unpackLimit=1", "fetch", "-q", str(small.up.path), "+refs/*:refs/mirror/*"],
                   cwd=small.work.path, check=True, capture_output=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, *extra)
    assert code == 0, report
    return report


def test_sync_writes_one_pack_and_no_loose_object(small: Small, cli: Cli) -> None:
    before = len(list((small.work.path / "objects" / "pack").glob("*.pack")))
    _small_sync(small, cli)
    composed = _composed(small.work.path, small.branch())
    assert len(composed) > 6 and _loose(small.work.path) == 0
    packs = list((small.work.path / "objects" / "pack").glob("*.pack"))
    assert len(packs) == before + 2          # upstream's and the composed objects' pack
    _fsck(small.work.path)
    tip = small.branch()
    log = subprocess.run(["git", "log", "--format=%H %T", tip], cwd=small.work.path, capture_output=True,
                         text=True, check=True).stdout
    assert len(log.splitlines()) == 5        # base, upstream, three carries: every commit and tree is there
    assert all(_exists(small.work.path, line.split()[1]) for line in log.splitlines())
    code, again = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and again["result"]["sha"] == tip
    assert len(list((small.work.path / "objects" / "pack").glob("*.pack"))) == len(packs)   # nothing new
    assert _loose(small.work.path) == 0


def test_a_dry_run_keeps_its_composed_commit_and_drops_the_rest(small: Small, cli: Cli) -> None:
    report = _small_sync(small, cli, "--dry-run")
    sha = report["result"]["sha"]
    assert small.branch() is None
    assert _exists(small.work.path, sha)     # the report names it: `git show SHA` works after a dry run
    subprocess.run(["git", "update-ref", "refs/heads/look", sha], cwd=small.work.path, check=True)
    _fsck(small.work.path)
    composed = _composed(small.work.path, sha)
    assert sha in composed and _loose(small.work.path) == 0
    stand_ins = subprocess.run(["git", "fsck", "--unreachable", "--no-reflogs"], cwd=small.work.path,
                               capture_output=True, text=True).stdout
    assert "commit" not in stand_ins         # the stand-in commits of composing did not persist


def test_the_composed_objects_are_in_the_store_before_the_landing_checks_end(small: Small, cli: Cli,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """They are packed into the store in a thread while the landing checks read (nothing else persists
    earlier: the stand-ins of composing do not, see the dry run's test)."""
    from carrytool.pipeline import sync

    seen: list[tuple[bool, bool]] = []
    account = sync.account

    def checked(git: Git, steps: list, *composed: str) -> object:
        tip = [s.commit for s in steps if s.commit][-1]
        started = git._migrating is not None
        out = account(git, steps, *composed)
        git._await_migration()
        seen.append((started, _exists(small.work.path, tip)))   # the store alone: no ref names it yet
        return out

    monkeypatch.setattr(sync, "account", checked)
    report = _small_sync(small, cli)
    assert seen == [(True, True)] and report["result"]["updated"]
    assert _loose(small.work.path) == 0
    _fsck(small.work.path)


def test_a_migration_in_the_background_fails_as_it_would_have_in_the_foreground(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its error (here index-pack refusing a truncated pack) comes with the next migration, the same error;
    the scratch still goes at close."""
    from carrytool.gitlayer import quarantine
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    whole = quarantine.pack_of_objects
    monkeypatch.setattr(quarantine, "pack_of_objects", lambda *args: whole(*args)[:-30])
    errors = []
    for later in (False, True):
        git = Git(repo.path, quarantine=True)
        try:
            git.keep(_quarantined_commit(git, base, b"cannot be migrated\n"))
            git.keep_unreferenced = False
            scratch = git.tmpdir()
            if later:
                git.migrate_objects(later=True)              # started: no error yet
            with pytest.raises(CarryError) as caught:
                git.migrate_objects()
            errors.append((type(caught.value), str(caught.value)))
        finally:
            with contextlib.suppress(CarryError):
                git.close()
        assert not scratch.exists()
    assert errors[0] == errors[1] and "index-pack" in errors[0][1]
    assert not list((repo.path / "objects" / "pack").glob("*.keep"))


def test_an_interrupted_wait_for_the_background_migration_leaves_no_keep_and_no_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the run waits for it: close still waits for the thread (it reads the quarantine) before
    the scratch goes, and releases the .keep of the pack it made."""
    import threading

    from carrytool.gitlayer import quarantine
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    go, whole = threading.Event(), quarantine.pack_of_objects
    monkeypatch.setattr(quarantine, "pack_of_objects", lambda *args: (go.wait(), whole(*args))[1])
    git = Git(repo.path, quarantine=True)
    kept = _quarantined_commit(git, base, b"x\n")
    git.keep(kept)
    git.migrate_objects(later=True)
    worker = git._migrating[1].thread       # type: ignore[index]
    join = worker.join

    def interrupted(*args: object) -> None:
        worker.join = join           # type: ignore[method-assign]
        raise KeyboardInterrupt

    worker.join = interrupted        # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        git.migrate_objects()
    scratch = git.tmpdir()
    threading.Timer(0.2, go.set).start()
    git.close()
    assert not worker.is_alive() and not scratch.exists()
    assert _exists(repo.path, kept) and not list((repo.path / "objects" / "pack").glob("*.keep"))


def test_unkept_objects_vanish_and_kept_ones_persist(tmp_path: Path) -> None:
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    with Git(repo.path, quarantine=True) as git:
        git.keep_unreferenced = False
        tree = git.edit_tree(git.tree_of(base), {"a.txt": ("100644", git.write_blob(b"kept\n"))})
        kept = git.write_commit(tree, [base], sig, sig, "kept\n")
        other = git.write_commit(git.edit_tree(tree, {"b.txt": ("100644", git.write_blob(b"dropped\n"))}),
                                 [kept], sig, sig, "dropped\n")
        assert git.read_object(other) is not None and git.rev_parse(other) == other   # visible during the run
        git.keep(kept)
    assert _exists(repo.path, kept) and _exists(repo.path, tree)
    assert not _exists(repo.path, other)
    loose = _loose(repo.path)
    with Git(repo.path, quarantine=True) as git:   # keep_unreferenced (the default): every object persists
        blob = git.write_blob(b"anything\n")
        git.flush_objects()
    assert _exists(repo.path, blob)
    assert _loose(repo.path) == loose


def test_the_migrated_pack_holds_every_object_byte_for_byte(tmp_path: Path) -> None:
    """The pack carrytool makes itself (sizes on one to four header bytes, every kind) is what git reads."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    loose = _loose(repo.path)
    contents = [b"", b"x" * 15, b"y" * 16, bytes(range(256)) * 8, b"z\n" * 40000]
    with Git(repo.path, quarantine=True) as git:
        blobs = [git.write_blob(data) for data in contents]
        tree = git.edit_tree(git.tree_of(base), {f"f{i}": ("100644", oid) for i, oid in enumerate(blobs)})
        commit = git.write_commit(tree, [base], sig, sig, "all sizes\n")
        git.keep(commit)
    assert _loose(repo.path) == loose
    for oid, data in zip(blobs, contents):
        got = subprocess.run(["git", "cat-file", "blob", oid], cwd=repo.path, capture_output=True, check=True)
        assert got.stdout == data
    assert _exists(repo.path, tree) and _exists(repo.path, commit)
    _fsck(repo.path)


def test_composed_trees_arrive_as_deltas_and_read_back_the_same(tmp_path: Path) -> None:
    """A chain of trees that differ by one entry is packed as deltas (chains of at most 50), and git reads
    every tree back byte for byte."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({f"f{i:03d}.txt": f"{i}\n" for i in range(120)}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    trees, tip = [], base
    with Git(repo.path, quarantine=True) as git:
        tree = git.tree_of(base)
        for n in range(70):
            tree = git.edit_tree(tree, {f"f{(7 * n) % 120:03d}.txt": ("100644", git.write_blob(f"v{n}\n".encode()))})
            tip = git.write_commit(tree, [tip], sig, sig, f"step {n}\n")
            trees.append((tree, git.read_object(tree)[1]))     # type: ignore[index]
        git.keep(tip)
    for tree, data in trees:
        got = subprocess.run(["git", "cat-file", "tree", tree], cwd=repo.path, capture_output=True, check=True)
        assert got.stdout == data
    _fsck(repo.path)
    verified = _verify_pack(repo.path)
    chains = [line for line in verified if line.startswith("chain length")]
    assert chains and max(int(line.split("=")[1].split(":")[0]) for line in chains) <= 50


def test_without_a_quarantine_objects_are_in_the_store_at_once(tmp_path: Path) -> None:
    """Commands that name objects in files (union's state) write straight into the store, as before:
    a kill -9 right after a write loses nothing."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    git = Git(repo.path)
    blob = git.write_blob(b"written\n")
    git.flush_objects()
    assert _exists(repo.path, blob)          # before close: nothing waits in a quarantine
    git.close()


def _named(doc: object) -> set[str]:
    """Every full SHA-1 a JSON document names, anywhere (64-digit patch digests are not objects)."""
    import json
    import re

    return set(re.findall(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])", json.dumps(doc)))


def test_every_sha_the_report_the_lock_and_explain_name_persists(small: Small, cli: Cli) -> None:
    """A patch entry's base and head commits are reached by nothing composed, yet the report, the lock and
    explain's JSON name them (and `carrytool diff` of two locks reads them): they must outlive the run."""
    import json

    f5 = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    small.up.commit({"docs/c.txt": "c2\n"}, "upstream", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": f5.replace("return 1\n", "return 10\n")})
    small.pr(2, {"a.py": f5.replace("return 1\n", "return 20\n")})
    small.pr(3, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    union = small.up.commit({"a.py": f5.replace("return 1\n", "return 120\n")}, "union of 1 and 2", parent="main",
                            ref="refs/heads/union")
    carried = small.up.commit({"docs/d.txt": "d\n"}, "a carried commit", parent="main", ref="refs/heads/carry")
    small.up.commit({"csrc/k.cu": "// kernel 2\n"}, "patch source", parent="main", ref="refs/heads/p")
    small.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    (small.manifest_path.parent / "fix.patch").write_text(
        small.up.git("format-patch", "--stdout", "-1", "refs/heads/p") + "\n")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union",
                   "refs/heads/carry:refs/heads/carry")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}, {"carry": "u", "commit": union, "supersedes": [1, 2]},
                    {"carry": "d", "commit": carried}, {"carry": "fix", "patch": "fix.patch"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    fix = next(e for e in report["entries"] if e["id"] == "carry/fix")
    lock = json.loads(small.manifest_path.with_name("manifest.yaml.lock").read_text())
    named = _named(report) | _named(lock)
    assert fix["head"] in named and fix["base"] in named
    code, explained = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, explained
    named |= _named(explained)
    assert len(named) > 10
    assert [sha for sha in sorted(named) if not _exists(small.work.path, sha)] == []
    _fsck(small.work.path)


def _quarantined_commit(git: Git, base: str, text: bytes) -> str:
    sig = Signature("t", "t@t", 1000000000)
    tree = git.edit_tree(git.tree_of(base), {"a.txt": ("100644", git.write_blob(text))})
    return git.write_commit(tree, [base], sig, sig, "kept\n")


def test_a_concurrent_repack_cannot_delete_the_migrated_pack_before_the_ref_names_it(tmp_path: Path) -> None:
    """Between migration and update-ref nothing names the new pack's objects: `git repack -a -d` would
    delete it, unless it arrived with a .keep (as receive-pack's packs do). The .keep goes at close."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    seen: list[bool] = []
    with Git(repo.path, quarantine=True) as git:
        git.keep_unreferenced = False
        commit = _quarantined_commit(git, base, b"kept\n")

        def repack() -> None:
            subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=repo.path, check=True)
            subprocess.run(["git", "prune-packed"], cwd=repo.path, check=True)
            seen.append(_exists(repo.path, commit))       # the store alone (no quarantine in this process)
            seen.append(any(p.read_text().startswith("carrytool pid ")
                            for p in (repo.path / "objects" / "pack").glob("*.keep")))

        git.before_ref_write = repack
        assert git.update_ref("refs/heads/dev", commit, None, "test")
    assert seen == [True, True]
    assert repo.ref("refs/heads/dev") == commit and _exists(repo.path, commit)
    assert list((repo.path / "objects" / "pack").glob("*.keep")) == []        # released at close
    _fsck(repo.path)


def test_objects_gone_from_the_store_after_the_ref_was_written_are_written_again(tmp_path: Path) -> None:
    """The quarantine keeps its copies until close, and close checks the kept commits reached the store:
    what a concurrent gc removed anyway (or a prune of an object found there) is packed again."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    before = set((repo.path / "objects" / "pack").iterdir())
    with Git(repo.path, quarantine=True) as git:
        git.keep_unreferenced = False
        commit = _quarantined_commit(git, base, b"again\n")

        def lose() -> None:
            for path in set((repo.path / "objects" / "pack").iterdir()) - before:
                path.unlink()                              # as an overeager gc would
            assert not _exists(repo.path, commit)

        git.before_ref_write = lose
        assert git.update_ref("refs/heads/dev", commit, None, "test")
        assert _exists(repo.path, commit)                  # checked (and written again) after update-ref
        lose()
    assert _exists(repo.path, commit)                      # and at close
    _fsck(repo.path)


def test_objects_gone_before_the_ref_is_written_are_written_again_first(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A repack between migrating and update-ref: the kept objects are checked again before the ref names
    them, so it never names a missing commit; and when checking again after the write fails (a prune
    deleting index-pack's file), the ref moved all the same: update_ref says so (an adversarial review:
    the run said "not updated" and dropped the lock)."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    before = set((repo.path / "objects" / "pack").iterdir())
    seen: list[bool] = []
    with Git(repo.path, quarantine=True) as git:
        git.keep_unreferenced = False
        commit = _quarantined_commit(git, base, b"first\n")

        def lose() -> None:
            for path in set((repo.path / "objects" / "pack").iterdir()) - before:
                path.unlink()
            assert not _exists(repo.path, commit)

        real_run = Git.run

        def run(self: Git, *args: str, **kwargs: object):  # noqa: ANN202
            if args[:1] == ("update-ref",):
                seen.append(_exists(repo.path, commit))            # as the ref is written
            return real_run(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Git, "run", run)
        git.before_ref_write = lose
        assert git.update_ref("refs/heads/dev", commit, None, "test") and seen == [True]
        git.before_ref_write = None
        real_recheck, calls = Git.recheck_kept, []

        def failing_after_the_write(self: Git) -> None:
            calls.append(True)
            if len(calls) == 2:
                raise GitError("`git index-pack` failed (exit 128)")
            real_recheck(self)

        monkeypatch.setattr(Git, "recheck_kept", failing_after_the_write)
        second = _quarantined_commit(git, commit, b"second\n")
        assert git.update_ref("refs/heads/dev", second, commit, "test") is True and len(calls) == 2
        monkeypatch.setattr(Git, "recheck_kept", real_recheck)
    assert subprocess.run(["git", "rev-parse", "refs/heads/dev"], cwd=repo.path, capture_output=True,
                          text=True).stdout.strip() == second
    _fsck(repo.path)


def test_a_stale_keep_of_a_dead_carrytool_run_is_swept_and_no_other(tmp_path: Path) -> None:
    import socket

    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=repo.path, check=True)
    [pack] = (repo.path / "objects" / "pack").glob("*.pack")
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = socket.gethostname()
    stale = pack.with_suffix(".keep")
    stale.write_text(f"carrytool pid {dead.pid} host {host}\n")
    others = {"a.keep": f"carrytool pid {os.getpid()} host {host}\n", "b.keep": f"carrytool pid {dead.pid} host elsewhere\n",
              "c.keep": "receive-pack 123 on somewhere\n", "d.keep": ""}
    for name, text in others.items():
        (repo.path / "objects" / "pack" / name).write_text(text)
    Git(repo.path, quarantine=True).close()
    assert not stale.exists()
    assert all((repo.path / "objects" / "pack" / name).exists() for name in others)


def _break_pack_dir(repo: Path) -> None:
    """Every object loose, then objects/pack a dangling link: reading works, migrating cannot write."""
    pack = repo / "objects" / "pack"
    for found in list(pack.glob("*.pack")):
        data = found.read_bytes()
        for side in (found, found.with_suffix(".idx"), found.with_suffix(".rev")):
            side.unlink(missing_ok=True)
        subprocess.run(["git", "unpack-objects", "-q"], cwd=repo, input=data, check=True)
    shutil.rmtree(pack)
    pack.symlink_to(repo / "no-such-dir")


def test_close_removes_the_scratch_even_when_migrating_fails(tmp_path: Path) -> None:
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    _break_pack_dir(repo.path)
    git = Git(repo.path, quarantine=True)
    git.write_blob(b"cannot be migrated\n")
    git.flush_objects()
    scratch = git.tmpdir()
    with pytest.raises(CarryError):
        git.close()
    assert not scratch.exists()


def test_explain_json_is_one_document_when_migrating_fails(small: Small, cli: Cli, tmp_path: Path) -> None:
    """explain migrates before it prints: a failure is the one JSON document on stdout, not a report
    followed by an error report."""
    import json

    small.up.commit({"docs/c.txt": "c2\n"}, "upstream", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, _ = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0
    _break_pack_dir(small.work.path)
    small.manifest([{"pr": 2}, {"pr": 1}])               # composes new commits, which must be migrated
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = cli("explain", "--offline", "-m", small.manifest_path, "--repo", small.work.path, "--format", "json",
                 env={"TMPDIR": str(scratch)})
    assert result.exit_code == 4
    doc = json.loads(result.stdout)                      # exactly one document
    assert "error" in doc and "entries" not in doc
    assert list(scratch.iterdir()) == []


def test_a_memory_backed_scratch_without_room_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Docker's /dev/shm is 64 MB: a quarantine there fills up. A candidate with less free room than
    MIN_SCRATCH_FREE is skipped (the system's temporary directory is used instead)."""
    from carrytool.gitlayer import env

    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    free = env.free_bytes(str(tmp_path))
    assert free > 0
    monkeypatch.setattr(env, "MIN_SCRATCH_FREE", free // 2)
    assert env.fast_tmp_base() == str(tmp_path)
    monkeypatch.setattr(env, "MIN_SCRATCH_FREE", free * 4 + (1 << 40))       # neither it nor /dev/shm
    assert env.fast_tmp_base() is None


def test_a_full_scratch_is_an_actionable_error(small: Small, cli: Cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A quarantine that runs out of space names the directory and TMPDIR, with git's words (needs a
    256 KB tmpfs: root only)."""
    import base64
    import random

    with small_tmpfs(tmp_path / "tiny", "256k") as tiny:
        rng = random.Random(17)
        lines = [base64.b64encode(rng.randbytes(57)).decode() for _ in range(12000)]
        small.up.commit({"big.txt": "\n".join(lines) + "\n"}, "big", parent="main", ref="refs/heads/main")
        main = small.up.rev("refs/heads/main")
        small.pr(5, {"big.txt": "\n".join(["first changed"] + lines[1:]) + "\n"}, parent=main)
        small.pr(6, {"big.txt": "\n".join(lines[:-1] + ["last changed"]) + "\n"}, parent=main)
        small.manifest([{"pr": 5}, {"pr": 6}])
        from carrytool.gitlayer import env

        monkeypatch.delenv("TMPDIR", raising=False)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tiny))
        monkeypatch.setattr(env, "MIN_SCRATCH_FREE", 0)         # a scratch this small is used anyway
        code, report = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
        assert code == 4, report
        message = report["error"]["message"]
        assert f"the scratch directory {tiny}/carrytool-" in message and "No space left on device" in message
        assert "TMPDIR" in message
        assert list(tiny.iterdir()) == []


def test_scratch_of_a_killed_run_is_swept_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill -9 leaves the quarantine in (memory-backed) scratch: the next run removes carrytool's
    directories whose owner process is dead on this host, and only those."""
    import socket

    from carrytool.gitlayer import env
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    base = tmp_path / "scratch"
    base.mkdir()
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    monkeypatch.setattr(env, "MIN_SCRATCH_FREE", 0)
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = socket.gethostname()
    owners = {"carrytool-dead": f"carrytool-scratch pid {dead.pid} host {host}\n",
              "carrytool-alive": f"carrytool-scratch pid {os.getppid()} host {host}\n",
              "carrytool-elsewhere": f"carrytool-scratch pid {dead.pid} host not-{host}\n",
              "other-dead": f"carrytool-scratch pid {dead.pid} host {host}\n",
              "carrytool-unmarked": None}
    for name, owner in owners.items():
        (base / name / "objects").mkdir(parents=True)
        if owner is not None:
            (base / name / ".carrytool-owner").write_text(owner)
    with Git(repo.path, quarantine=True) as git:
        mine = git.tmpdir()
        assert mine.parent == base and (mine / ".carrytool-owner").read_text().startswith("carrytool-scratch pid ")
        left = sorted(p.name for p in base.iterdir())
    assert left == sorted(["carrytool-alive", "carrytool-elsewhere", "other-dead", "carrytool-unmarked", mine.name])
    assert not mine.exists()


# holds an exclusive flock on the file argv[1] names, says so, and sleeps until killed
FLOCK_HOLDER = ("import fcntl, os, sys, time\n"
                "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "print('locked', flush=True)\n"
                "time.sleep(600)\n")
# exits 0 when the file argv[1] names can be flocked at once, 1 when another process holds it
FLOCK_TRY = ("import fcntl, os, sys\n"
             "fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n"
             "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "except BlockingIOError:\n"
             "    sys.exit(1)\n")


def test_scratch_whose_owner_file_is_locked_is_kept_until_its_holder_ends(tmp_path: Path) -> None:
    """A run in another pid namespace (a container sharing /tmp and the host name) names a pid this one cannot
    see: the pid check alone took its live scratch (a bisect lost its checkout, h219). Its owner file is locked
    while it runs: the sweep keeps the directory, and removes it once the holder is gone."""
    import socket
    import sys

    from carrytool.gitlayer.processes import sweep_dead_scratch

    dead = subprocess.Popen(["true"])
    dead.wait()
    folder = tmp_path / "carrytool-elsewhere"
    (folder / "objects").mkdir(parents=True)
    owner = folder / ".carrytool-owner"
    owner.write_text(f"carrytool-scratch pid {dead.pid} host {socket.gethostname()}\n")
    holder = subprocess.Popen([sys.executable, "-c", FLOCK_HOLDER, str(owner)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        sweep_dead_scratch(tmp_path)
        assert (folder / "objects").is_dir() and owner.read_text().startswith("carrytool-scratch pid ")
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    sweep_dead_scratch(tmp_path)
    assert not folder.exists()


def test_the_scratch_owner_file_is_locked_while_the_run_lives(tmp_path: Path) -> None:
    """Git.tmpdir's owner file is flocked from the moment it names its owner until close: another process's
    sweep, whatever pid it sees, cannot take it."""
    import sys

    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    with Git(repo.path, quarantine=True) as git:
        owner = git.tmpdir() / ".carrytool-owner"
        assert subprocess.run([sys.executable, "-c", FLOCK_TRY, str(owner)]).returncode == 1
        copy = tmp_path / "owner"
        shutil.copy(owner, copy)        # the same file unlocked: the check can succeed
        assert subprocess.run([sys.executable, "-c", FLOCK_TRY, str(copy)]).returncode == 0
    assert not owner.parent.exists()


def test_a_loose_object_the_store_already_has_is_freshened(tmp_path: Path) -> None:
    """An object the run needs and the store has (so not migrated) gets a fresh mtime, as git gives an
    object it is asked to write again: an expiring prune in the window before the ref names it leaves it."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo.path, input=b"old\n",
                          capture_output=True, check=True).stdout.decode().strip()
    loose = repo.path / "objects" / blob[:2] / blob[2:]
    os.utime(loose, (1000000000, 1000000000))
    with Git(repo.path, quarantine=True) as git:
        assert git.write_blob(b"old\n") == blob
        git.flush_objects()
    assert loose.stat().st_mtime > 1000000000 + 86400


def test_a_full_scratch_while_carrytool_writes_objects_itself_is_the_same_error(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """SHA-1 objects carrytool computes are written into the quarantine in process: a full scratch there
    is the same actionable error (root only: a 64 KB tmpfs)."""
    import random

    from carrytool.errors import EnvironmentProblem
    from carrytool.gitlayer import env
    from tests.gitrepo import init_repo

    with small_tmpfs(tmp_path / "tiny", "64k") as tiny:
        repo = init_repo(tmp_path / "r", bare=True)
        monkeypatch.delenv("TMPDIR", raising=False)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tiny))
        monkeypatch.setattr(env, "MIN_SCRATCH_FREE", 0)
        git = Git(repo.path, quarantine=True)
        git.write_blob(random.Random(3).randbytes(256 << 10))
        with pytest.raises(EnvironmentProblem, match=f"the scratch directory {tiny}/carrytool-.* ran out of space"):
            git.flush_objects()
        git.keep_unreferenced = False
        git.close()
        assert list(tiny.iterdir()) == []


@pytest.mark.parametrize("others", [0, 4])
def test_a_git_process_reading_beside_a_flush_never_meets_half_an_object(tmp_path: Path, others: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A git process of the run (a prefetch's diff-tree, a later merge-tree) looks in the quarantine before
    the user's store: an object carrytool writes there that the store also has loose (a PR's blob a
    composed tree names) must appear whole, or the reader takes the half file and fails. Written beside
    and renamed into place; an in-place write (tried, and reverted) failed 63 of 154 such reads. With
    OTHERS objects besides, the flush is a pack: the pack and its .idx each go into place whole (a pack
    written in place fails such reads: "index file ... is too small")."""
    import threading
    import time

    from carrytool.gitlayer import objectwrite
    from carrytool.gitlayer.env import git_argv
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    data = b"payload\n" * 2000

    def git(*args: str, stdin: bytes = b"") -> str:
        return subprocess.run(["git", *args], input=stdin, cwd=repo.path, capture_output=True,
                              check=True).stdout.decode().strip()

    blob = git("hash-object", "-w", "--stdin", stdin=data)          # loose in the user's store
    named, empty = git("mktree", stdin=f"100644 blob {blob}\tf\n".encode()), git("mktree")
    real_write = os.write

    def slow(fd: int, data: object) -> int:                         # a flush caught half-way, often
        time.sleep(0.002)
        return real_write(fd, bytes(data)[:64])                      # type: ignore[call-overload]

    failures: list[bytes] = []
    reads = [0, 0]                                                   # all, and those while flushing
    flushing, stop = threading.Event(), threading.Event()
    with Git(repo.path, quarantine=True) as run:
        run.keep_unreferenced = False
        args = ("diff-tree", "-r", "-p", "--stdin")
        cwd, env = run._placement(args)                              # quarantine first, the store after it

        def read() -> None:
            while not stop.is_set():
                proc = subprocess.run(git_argv(*args), cwd=cwd, env=env, input=f"{empty} {named}\n".encode(),
                                      capture_output=True)
                reads[0] += 1
                reads[1] += flushing.is_set()
                if proc.returncode or proc.stderr:
                    failures.append(proc.stderr[:200])

        reader = threading.Thread(target=read)
        reader.start()
        try:
            assert run.write_blob(data) == blob
            for n in range(others):
                run.write_blob(b"other %d\n" % n)
            monkeypatch.setattr(objectwrite.os, "write", slow)
            flushing.set()
            run.flush_objects()
        finally:
            flushing.clear()
            monkeypatch.setattr(objectwrite.os, "write", real_write)
            stop.set()
            reader.join()
        written = run._pack_count
    assert reads[1] >= 3, reads                                      # the reads did meet the flush
    assert failures == []
    assert written == (1 if others else 0)


def test_each_directory_s_tree_is_a_delta_of_its_own_previous_version(tmp_path: Path) -> None:
    """Two directories whose trees have the same size, edited in turn: each new tree is a delta of the
    same directory's previous one (not of the other directory's, which differs everywhere), so only the
    first version of each is stored whole."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    files = {f"{d}/{d}{i:03d}.txt": f"{d}{i}\n" for d in "ab" for i in range(40)}
    base = repo.commit(files, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    tip = base
    with Git(repo.path, quarantine=True) as git:
        tree = git.tree_of(base)
        for n in range(20):
            d = "ab"[n % 2]
            tree = git.edit_tree(tree, {f"{d}/{d}{n:03d}.txt": ("100644", git.write_blob(f"v{n}\n".encode()))})
            tip = git.write_commit(tree, [tip], sig, sig, f"step {n}\n")
        git.keep(tip)
    _fsck(repo.path)
    verified = _verify_pack(repo.path)
    trees = [line.split() for line in verified if " tree " in line]
    whole = [fields for fields in trees if len(fields) == 5]
    assert len(trees) == 40 and len(whole) == 3      # 20 roots (a delta chain), 10 of each directory


def test_a_file_s_next_version_is_a_delta_of_its_previous_one(tmp_path: Path) -> None:
    """A large file edited in one stretch per step (a composed chain of entries editing a hot file): each
    version after the first is stored as a delta of the previous version at its path, whatever its size;
    one that differs in more than half of it, and a file at another path, are stored whole. git reads
    every version back byte for byte."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    lines = [f"line {i}: {'x' * (i % 50)}\n" for i in range(3000)]
    base = repo.commit({"big.py": "".join(lines), "other.py": "o\n"}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    tip, versions = base, []
    with Git(repo.path, quarantine=True) as git:
        tree = git.tree_of(base)
        for n in range(6):
            if n == 3:
                lines = [line.upper() for line in lines]             # differs everywhere: stored whole
            else:
                lines[500 * n:500 * n + 2] = [f"step {n}\n"] * (n + 1)  # one stretch, the size changes
            data = "".join(lines).encode()
            edits = {"big.py": ("100644", git.write_blob(data))}
            if n == 5:
                edits["sub/big.py"] = ("100644", git.write_blob(data + b"# moved\n"))   # another path
            tree = git.edit_tree(tree, edits)
            tip = git.write_commit(tree, [tip], sig, sig, f"step {n}\n")
            versions.append((edits["big.py"][1], data))
        git.keep(tip)
        git.keep_unreferenced = False           # as sync: what the kept commit reaches, found by a walk
    for oid, data in versions:
        got = subprocess.run(["git", "cat-file", "blob", oid], cwd=repo.path, capture_output=True, check=True)
        assert got.stdout == data
    _fsck(repo.path)
    verified = _verify_pack(repo.path)
    blobs = {fields[0]: fields for fields in (line.split() for line in verified)
             if len(fields) > 2 and fields[1] == "blob"}
    assert len(blobs) == 7
    deltas = {oid: fields[6] for oid, fields in blobs.items() if len(fields) == 7}   # oid -> its delta base
    chain = [oid for oid, _ in versions]
    assert deltas == {chain[1]: chain[0], chain[2]: chain[1], chain[4]: chain[3], chain[5]: chain[4]}
    assert all(int(blobs[oid][3]) < 200 for oid in deltas)       # a few lines, not the file


@pytest.mark.parametrize("size", [300, 30000])
def test_a_file_emptied_after_a_version_in_the_same_pack_reads_back(tmp_path: Path, size: int) -> None:
    """git cannot read a delta whose result is empty (nor apply one under four bytes): an emptied file's
    blob, new to the store, is stored whole, and git reads it (fsck alone does not notice)."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"f.txt": "base\n"}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    with Git(repo.path, quarantine=True) as git:
        tip, tree = base, git.tree_of(base)
        for data in (b"v" * (size - 1) + b"\n", b""):
            tree = git.edit_tree(tree, {"f.txt": ("100644", git.write_blob(data))})
            tip = git.write_commit(tree, [tip], sig, sig, "step\n")
        git.keep(tip)
        git.keep_unreferenced = False
        assert git.update_ref("refs/heads/main", tip, base, "test")
    empty = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    size_of = subprocess.run(["git", "cat-file", "-s", empty], cwd=repo.path, capture_output=True, text=True)
    assert size_of.returncode == 0 and size_of.stdout == "0\n", size_of.stderr
    archive = subprocess.run(["git", "archive", "main"], cwd=repo.path, capture_output=True)
    assert archive.returncode == 0, archive.stderr


def _packs(repo: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (repo / "objects" / "pack").glob("*.pack")}


def _migrate_with_budget(tmp_path: Path, name: str, budget: int, monkeypatch: pytest.MonkeyPatch,
                         reads: list[str], *, pack_min: int = 3, packs_max: int = 256) -> tuple[Path, str, int]:
    """A commit of several sizes of blob and a chain of trees, migrated with COPIES_BUDGET = BUDGET; the
    quarantine files migrating read go to READS. Flushes of PACK_MIN objects or more are written as
    packs, at most PACKS_MAX of them; returns the repository, the commit and the packs written."""
    import carrytool.gitlayer.objectwrite as objectwrite
    import carrytool.gitlayer.quarantine as quarantine
    from tests.gitrepo import init_repo

    monkeypatch.setattr(objectwrite, "COPIES_BUDGET", budget)
    monkeypatch.setattr(objectwrite, "QUARANTINE_PACK_MIN", pack_min)
    monkeypatch.setattr(objectwrite, "QUARANTINE_PACKS_MAX", packs_max)
    monkeypatch.setattr(quarantine, "_read_file", lambda path, *span: reads.append(path) or _read_file(path, *span))
    repo = init_repo(tmp_path / name, bare=True)
    base = repo.commit({f"f{i:02d}.txt": f"{i}\n" for i in range(40)}, "base", ref="refs/heads/main")
    sig = Signature("t", "t@t", 1000000000)
    with Git(repo.path, quarantine=True) as git:
        tip, tree = base, git.tree_of(base)
        for n, data in enumerate([b"", b"x" * 15, bytes(range(256)) * 8, b"z\n" * 40000, b"w\n"]):
            tree = git.edit_tree(tree, {f"f{(7 * n) % 40:02d}.txt": ("100644", git.write_blob(data))})
            tip = git.write_commit(tree, [tip], sig, sig, f"step {n}\n")
            git.flush_objects()                            # as before the next git process: a flush per step
        git.keep(tip)
        written = git._pack_count
    return repo.path, tip, written


def test_migrating_packs_the_run_s_objects_from_memory_byte_for_byte(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The objects carrytool wrote are packed from the copies it kept, not read back from the quarantine;
    over the memory budget they are read from its packs or loose files; every way gives the same pack,
    byte for byte."""
    from_memory: list[str] = []
    memory_repo, tip, packs = _migrate_with_budget(tmp_path, "memory", 64 << 20, monkeypatch, from_memory)
    assert from_memory == [] and packs == 5                    # a pack per step: blob, tree, commit
    runs = {}
    for name, pack_min, packs_max, written in [("packed", 3, 256, 5), ("loose", 4, 256, 0), ("capped", 3, 2, 2)]:
        reads: list[str] = []
        repo, same_tip, packs = _migrate_with_budget(tmp_path, name, 0, monkeypatch, reads, pack_min=pack_min,
                                                     packs_max=packs_max)
        assert same_tip == tip and packs == written
        assert len(reads) == 15                                 # 5 blobs, 5 trees, 5 commits
        assert sum(path.endswith(".pack") for path in reads) == 3 * written
        runs[name] = repo
    for repo in (memory_repo, *runs.values()):
        assert _packs(repo) == _packs(memory_repo) and len(_packs(repo)) == 1     # the run's one pack
        assert _exists(repo, tip)
        _fsck(repo)


def test_blobs_read_later_in_another_thread_are_what_read_blobs_reads(tmp_path: Path) -> None:
    """read_blobs_later settles its process on the caller's thread (objects still staged in memory are
    written first) and reads in another: the same blobs as read_blobs, trees and missing names left out."""
    import hashlib
    import threading

    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    with Git(repo.path, quarantine=True) as git:
        staged = git.write_blob(b"staged, not written yet\n")
        stored = hashlib.sha1(b"blob 2\0a\n").hexdigest()         # a.txt, in the store
        names = [staged, stored, git.tree_of(base), "1" * 40]
        read = git.read_blobs_later(names)
        box: dict[str, dict[str, bytes]] = {}
        worker = threading.Thread(target=lambda: box.update(found=read()))
        worker.start()
        worker.join()
        assert box["found"] == {staged: b"staged, not written yet\n", stored: b"a\n"}
        assert box["found"] == git.read_blobs(names)


def test_blobs_read_later_from_a_repository_gone_meanwhile_fail_as_a_git_error(tmp_path: Path) -> None:
    from carrytool.errors import GitError
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    base = repo.commit({"a.txt": "a\n"}, "base", ref="refs/heads/main")
    with Git(repo.path, quarantine=True) as git:
        read = git.read_blobs_later([git.tree_of(base)])
        shutil.move(repo.path, tmp_path / "moved")
        try:
            with pytest.raises(GitError, match="cat-file"):
                read()
        finally:
            shutil.move(tmp_path / "moved", repo.path)


@pytest.mark.parametrize("loose", ["big", "small"])
def test_a_push_sends_objects_compressed_whatever_a_quarantine_pack_holds(tmp_path: Path, loose: str) -> None:
    """A blob the store has loose (a PR's, fetched under unpackLimit) that a run writes again lands in a
    quarantine pack, stored (uncompressed). pack-objects copies a pack's entry as it stands and, once it
    found an object in a pack, looks there first for every other: a push read beside the quarantine sent
    the big blob itself (1.2 MB where 80 KB do) or, when the loose blob was a small one, the new big blob
    beside it in that pack (two adversarial reviews). A push reads the store alone."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "r", bare=True)
    big = b"".join(b"line %d of some very compressible text\n" % i for i in range(30000))
    small = b"".join(b"a-line %d\n" % i for i in range(2000))
    (tmp_path / "loose").write_bytes(big if loose == "big" else small)
    blob = subprocess.run(["git", "hash-object", "-w", str(tmp_path / "loose")], cwd=repo.path, capture_output=True,
                          check=True, text=True).stdout.strip()
    base = repo.commit({"z.txt": "z\n"}, "base", ref="refs/heads/main")
    remote = init_repo(tmp_path / "remote", bare=True)
    subprocess.run(["git", "config", "receive.unpackLimit", "1"], cwd=remote.path, check=True)
    sig = Signature("t", "t@t", 1000000000)
    with Git(repo.path, quarantine=True) as git:
        git.keep_unreferenced = False
        assert git.write_blob(big if loose == "big" else small) == blob
        files = {"a.txt": ("100644", blob), "b.txt": ("100644", git.write_blob(b"b\n"))}
        if loose == "small":
            files["c.txt"] = ("100644", git.write_blob(big))           # new: migrated into the store
        commit = git.write_commit(git.edit_tree(git.tree_of(base), files), [base], sig, sig, "composed\n")
        git.flush_objects()
        assert blob in git._packed                                   # the quarantine's stored copy
        git.keep(commit)
        git.run("push", "-q", str(remote.path), f"{commit}:refs/heads/dev")
    [pack] = (remote.path / "objects" / "pack").glob("*.pack")
    assert pack.stat().st_size < len(big) // 4
    assert _exists(remote.path, commit)
    _fsck(remote.path)
