"""How a `Git` runs git: each child's environment and directory, its scratch directory and close.

The user's repository for what reads or writes refs or talks to a remote (`IN_REPO`); the private git dir,
made once per run in the scratch directory (with the quarantine), for everything else. The long-lived
processes spoken to line by line (`_Pipe`), and the end of them all at close.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from carrytool.errors import EnvironmentProblem, GitError
from carrytool.gitlayer.env import (
    alternate_path,
    fast_tmp_base,
    git_argv,
    hostname,
    isolated_env,
    scrubbed_env,
    wait_exit,
)

Git = Any   # carrytool.gitlayer.git.Git, which imports this module: not imported back (no cycle)


# Subcommands that read or write the user's refs or talk to a remote: they run in the user's repository
# (with its configuration: their results do not depend on merge or diff settings). The rest runs isolated.
IN_REPO = frozenset({"fetch", "push", "ls-remote", "rev-parse", "update-ref", "for-each-ref", "show-ref",
                     "symbolic-ref", "worktree", "cat-file", "config", "remote"})
# Of those, the ones that write to the user's repository: objects a run wrote are migrated first.
_WRITES_REPO = frozenset({"fetch", "push", "update-ref", "remote", "config"})
# Of those, the ones that read or write refs (the private git dir has none): they wait for a background
# ref write (Git.settle_refs). cat-file is only given object names here (read_object resolves the rest).
_READS_REFS = IN_REPO - {"cat-file", "config", "ls-remote"}


def _owner_tag(prefix: str) -> str:
    """PREFIX pid PID host HOST: who made a .keep file or a scratch directory."""
    return f"{prefix} pid {os.getpid()} host {hostname()}"


def _owner_dead(text: str, prefix: str) -> bool:
    """Whether TEXT is an owner tag of PREFIX naming a process of this host that no longer runs."""
    match = re.fullmatch(re.escape(prefix) + r" pid (\d+) host (\S+)", text.strip())
    if not match or match.group(2) != hostname():
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False                    # alive (another user's): not ours to judge
    return False


_SCRATCH_OWNER = ".carrytool-owner"
_SCRATCH_PREFIX = "carrytool-scratch"


def sweep_dead_scratch(base: Path) -> None:
    """Remove the scratch directories in BASE that carrytool runs killed before their close left behind
    (a quarantine in memory-backed scratch holds RAM until reboot): only `carrytool-*` directories of
    this user holding carrytool's owner file, whose process is gone on this host and whose owner file
    nobody holds locked (a run in another pid namespace is invisible to a pid check, not to its lock)."""
    try:
        found = [p for p in base.iterdir() if p.name.startswith("carrytool-")]
    except OSError:
        return
    for path in found:
        try:
            if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
                continue
            fd = os.open(path / _SCRATCH_OWNER, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if _abandoned(fd):
                shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)         # the lock taken goes with it


def _abandoned(fd: int) -> bool:
    """Whether the owner file open at FD names a process gone on this host and no process holds it locked
    (the kernel drops a killed process's lock, whatever its pid namespace). A file system without flock
    keeps the directory: nothing then tells a live owner from a dead one."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        text = os.read(fd, 4096).decode("utf-8", "replace")
        if not _owner_dead(text, _SCRATCH_PREFIX):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:             # EWOULDBLOCK: its owner runs; any other: the lock cannot be asked
        return False
    return True


def mark_scratch(path: Path) -> int:
    """Mark PATH, a `carrytool-*` directory this process made, as its own: `sweep_dead_scratch` removes it
    once this process is gone and its close did not (killed). Return the descriptor of the owner file,
    locked: keep it open as long as the directory lives (release_scratch)."""
    fd = os.open(path / _SCRATCH_OWNER, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        # locked before it names its owner: a sweep never reads this pid without the lock held
        with contextlib.suppress(OSError):      # no flock here: sweeps keep every directory on it anyway
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, (_owner_tag(_SCRATCH_PREFIX) + "\n").encode())
    except BaseException:
        os.close(fd)
        raise
    return fd


def release_scratch(fd: int | None) -> None:
    """Close FD, the owner file's descriptor mark_scratch returned (its lock goes): once its directory is gone."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


class _Pipe:
    """A long-lived git process spoken to line by line (cat-file, hash-object, mktree)."""

    def __init__(self, git: Git, args: Sequence[str]) -> None:
        self._proc = subprocess.Popen(
            git_argv(*args), cwd=git.private_dir(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=git.env())
        self.lock = threading.Lock()

    @property
    def stdin(self):  # noqa: ANN201 - a binary file object
        return self._proc.stdin

    @property
    def stdout(self):  # noqa: ANN201
        return self._proc.stdout

    def hang_up(self) -> None:
        """Close its stdin: git ends (`close` waits for it)."""
        try:
            self._proc.stdin.close()      # also when git already exited (it could not write an object)
        except OSError:
            pass

    def close(self) -> None:
        self.hang_up()
        if self._proc.poll() is None:
            try:
                wait_exit(self._proc, 10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc.stdout.close()


class Processes:
    """Running git: environments, the private git dir, run/out, long-lived pipes, the scratch directory, close."""

    # Git's state this reads or updates (all of it made in Git.__init__): git_dir, object_format, common_dir,
    # object_dir, _private, _pipes, _tmp, _tmp_owner, _merge_pipe, _side_pipe, _diff3_pipe, _prefetch, _threads,
    # _later_pipes, _quarantine, _fans, _written, _packed, _pack_count, _use_quarantine

    # -- process plumbing -------------------------------------------------------------------------
    def env(self, extra: dict[str, str] | None = None, *, in_repo: bool = False) -> dict[str, str]:
        """The environment of a git child: isolated in the private git dir (objects it writes go to the
        quarantine, the user's store is read as an alternate), or IN_REPO the user's (reading the
        quarantine too, so that every object the run wrote is visible)."""
        if not in_repo:
            private = str(self.private_dir())
            if self._quarantine is None:
                return isolated_env(private, str(self.object_dir), extra)
            return isolated_env(private, str(self._quarantine), extra, alternates=str(self.object_dir))
        env = scrubbed_env(extra)
        env["GIT_DIR"] = str(self.git_dir)
        env["GIT_NO_REPLACE_OBJECTS"] = "1"
        if self._quarantine is not None and not (extra and "GIT_ALTERNATE_OBJECT_DIRECTORIES" in extra):
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = alternate_path(str(self._quarantine))
        return env

    def private_dir(self) -> Path:
        """Create (once) the private git dir composing commands run in: HEAD, empty refs/, a config that
        says only what the object store needs (format, shared permissions), the user's shallow list."""
        if self._private is None:
            private = self.tmpdir() / "git"
            (private / "refs").mkdir(parents=True)
            if self._use_quarantine:
                quarantine = self.tmpdir() / "objects"
                (quarantine / "pack").mkdir(parents=True)
                (quarantine / "info").mkdir()
                self._quarantine = quarantine
            (private / "HEAD").write_text("ref: refs/heads/carrytool\n")
            config = "[core]\n\tbare = true\n"
            if self.object_format != "sha1":
                config = ("[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
                          f"[extensions]\n\tobjectFormat = {self.object_format}\n")
            shared = self._user_config("core.sharedRepository")
            if shared:
                config += f"[core]\n\tsharedRepository = {shared}\n"
            (private / "config").write_text(config)
            # a shallow clone's history ends where its shallow file says; a link follows later fetches
            os.symlink(self.common_dir / "shallow", private / "shallow")
            self._private = private
        return self._private

    def _user_config(self, key: str) -> str | None:
        proc = subprocess.run(["git", "config", "--get", key], cwd=self.git_dir, capture_output=True,
                              env=self.env(in_repo=True))
        value = proc.stdout.decode("utf-8", "replace").strip()
        return value if proc.returncode == 0 and re.fullmatch(r"[A-Za-z0-9]+", value) else None

    def run(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None, cwd: Path | None = None,
            migrate: bool = True) -> subprocess.CompletedProcess:
        """Run `git ARGS` and return the completed process (bytes): in the user's repository when the
        subcommand is one of IN_REPO, else isolated in the private git dir.

        Objects still staged in memory are written first: every git process sees every object.
        """
        self.flush_objects()
        subcommand = _subcommand(args)
        if subcommand in _READS_REFS:
            self.settle_refs()
        if subcommand in _WRITES_REPO and migrate:
            self.migrate_objects()
        if subcommand == "push" and self._quarantine is not None:
            # a push sends from the user's store alone: pack-objects copies a pack's entry as it stands,
            # and the quarantine's are stored (uncompressed); once it found one object in a quarantine
            # pack it looks there first for every other. What it sends, a kept commit reaches, and every
            # kept object is checked to be in the store first (a repack may have dropped one the store
            # had, which the run then did not pack again): see recheck_kept
            if migrate:
                self.recheck_kept()
            env = {**(env or {}), "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""}
        where, child_env = self._placement(args, env)
        proc = subprocess.run(git_argv(*args), cwd=cwd or where, input=input, capture_output=True, env=child_env)
        if check and proc.returncode != 0:
            problem = self.scratch_problem(proc.stderr)
            if problem is not None:
                raise problem
            raise GitError(f"`git {' '.join(args[:3])}` failed (exit {proc.returncode})",
                           stderr=proc.stderr.decode("utf-8", "replace"))
        return proc

    def _placement(self, args: Sequence[str], env: dict[str, str] | None = None) -> tuple[Path, dict[str, str]]:
        """Where `git ARGS` runs and its environment (with ENV): the user's repository for IN_REPO
        subcommands, else the private git dir. For run, and for the processes other threads run."""
        in_repo = _subcommand(args) in IN_REPO
        return (self.git_dir if in_repo else self.private_dir()), self.env(env, in_repo=in_repo)

    def out(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).stdout.decode("utf-8", "surrogateescape").strip()

    def _pipe(self, name: str, args: Sequence[str]) -> _Pipe:
        pipe = self._pipes.get(name)
        if pipe is None:
            pipe = self._pipes[name] = _Pipe(self, args)
        return pipe

    def tmpdir(self) -> Path:
        """The run's scratch directory (the quarantine, the private git dir, merge inputs), made once and
        marked with its owner (pid, host): a later run removes it should this one be killed."""
        if self._tmp is None:
            base = fast_tmp_base()
            sweep_dead_scratch(Path(base or tempfile.gettempdir()))
            tmp = Path(tempfile.mkdtemp(prefix="carrytool-", dir=base))
            try:
                self._tmp_owner = mark_scratch(tmp)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            self._tmp = tmp
        return self._tmp

    def scratch_problem(self, stderr: bytes) -> EnvironmentProblem | None:
        """The error to give when a git child failed because the scratch directory (the quarantine) is
        full: a memory-backed one can be small (Docker's /dev/shm is 64 MB). None for any other failure."""
        if self._tmp is None or b"No space left on device" not in stderr:
            return None
        last = " ".join(stderr.decode("utf-8", "replace").strip().splitlines()[-1:])
        return EnvironmentProblem(
            f"the scratch directory {self._tmp} ran out of space ({last})",
            hint="set TMPDIR to a directory on a file system with room (e.g. TMPDIR=/var/tmp): carrytool "
                 "then keeps its scratch there")

    def close(self) -> None:
        """Migrate what must persist (checking it arrived), release the packs' .keep files, stop the
        processes and remove the scratch directory, even when migrating failed."""
        try:
            self.migrate_objects()          # waits for a background ref write first (settle_refs)
            self.recheck_kept()
        finally:
            try:
                self._close_processes()     # a migration still running ends here, its .keep known
            finally:
                self._release_keeps()
                if self._tmp is not None:
                    shutil.rmtree(self._tmp, ignore_errors=True)
                    release_scratch(self._tmp_owner)     # held to the end: no sweep takes it meanwhile
                    self._tmp = self._tmp_owner = None
                    self._private = None
                    self._quarantine = None
                    self._fans.clear()
                    self._packed.clear()
                    self._written.clear()
                    self._pack_count = 0

    def _close_processes(self) -> None:
        self._reap_ref_write()             # close() is unwinding from an error: the error stands
        # (a second Ctrl-C) a migration's thread reads the quarantine: it ends first, and the .keep of a
        # pack it made is known for close to release; close is unwinding from an error: that error stands
        with contextlib.suppress(Exception):
            self._await_migration()
        if self._prefetch is not None:
            self._prefetch[1].join()
            self._prefetch = None
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        pipes = [p for p in (self._merge_pipe, self._side_pipe, self._diff3_pipe) if p is not None]
        for pipe in (*pipes, *self._pipes.values()):      # every process ends at once, then each is waited for
            pipe.hang_up()
        for merges in pipes:
            merges.close()
        self._merge_pipe = self._side_pipe = self._diff3_pipe = None
        for later in self._later_pipes:
            later.close(stop=True)          # answers nobody asked for (an error came first): not needed
        self._later_pipes.clear()
        for pipe in self._pipes.values():
            pipe.close()
        self._pipes.clear()

    def join_at_close(self, thread: threading.Thread) -> None:
        """A caller's THREAD that may run git in this run's scratch (read_blobs_later's function, say):
        close waits for it before the scratch goes, even when the caller could not (a second Ctrl-C)."""
        self._threads = [known for known in self._threads if known.is_alive()] + [thread]


def _subcommand(args: Sequence[str]) -> str:
    """The git subcommand of ARGS, past global options such as `-c KEY=VALUE`."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return args[i] if i < len(args) else ""
