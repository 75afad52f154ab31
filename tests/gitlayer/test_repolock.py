"""The repository lock: one holder at a time, even when many processes take over a stale lock at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from carrytool.errors import EnvironmentProblem, LockHeld
from carrytool.gitlayer import repolock
from carrytool.gitlayer.repolock import RepoLock
from tests.gitrepo import init_repo, read_only

PROCESSES = 8
TRIALS = 40          # a dropped same-file check shows in about 1 trial in 9: missed 1 run in 100


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def plant_stale(path: Path, pid: int) -> None:
    (path / "carrytool.lock").write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "since": "then"}))


class _QuickPoll:
    """`time` for RepoLock in a contender: waiters retry every millisecond instead of every 0.1 s, so a
    trial takes milliseconds instead of seconds and more waiters are trying at each hand-off."""

    def __getattr__(self, name: str):  # noqa: ANN204 - whatever `time` has
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(min(seconds, 0.001))


def _contend(git_dir: str, log: str, barrier) -> None:  # noqa: ANN001 - a multiprocessing.Barrier
    repolock.time = _QuickPoll()          # (a forked child: the parent's module is untouched)
    barrier.wait()
    with RepoLock(Path(git_dir), wait=60):
        with open(log, "a") as handle:
            handle.write(f"enter {os.getpid()}\n")
        time.sleep(0.002)
        with open(log, "a") as handle:
            handle.write(f"exit {os.getpid()}\n")


def overlaps(lines: list[str]) -> int:
    """How many times a process entered while another was inside."""
    inside, bad = None, 0
    for line in lines:
        what, pid = line.split()
        if what == "enter":
            bad += inside is not None
            inside = pid
        else:
            inside = None if inside == pid else inside
    return bad


def _trials(git_dir: str, folder: str, trials: int, stale: int) -> list[int]:
    """TRIALS takeovers of a stale lock (recording the dead pid STALE) by PROCESSES contenders at once, each
    logging to FOLDER: the trials in which two held the lock at once."""
    ctx = multiprocessing.get_context("fork")
    bad = []
    for trial in range(trials):
        plant_stale(Path(git_dir), stale)
        log = Path(folder) / f"log.{trial}"
        log.touch()
        barrier = ctx.Barrier(PROCESSES)
        procs = [ctx.Process(target=_contend, args=(git_dir, str(log), barrier)) for _ in range(PROCESSES)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        assert all(proc.exitcode == 0 for proc in procs), [proc.exitcode for proc in procs]
        lines = log.read_text().splitlines()
        assert len(lines) == 2 * PROCESSES
        if overlaps(lines):
            bad.append(trial)
    return bad


def test_racing_takeover_of_a_stale_lock_never_has_two_holders(tmp_path: Path) -> None:
    # the contenders are forked from a small Python process, not from pytest's (hundreds of MB to copy-on-write
    # each time: 0.6 s a trial, against milliseconds)
    repo = init_repo(tmp_path / "repo", bare=True)
    script = "import sys; from tests.gitlayer.test_repolock import _trials; " \
             "print(len(_trials(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))"
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", script, str(repo.path), str(tmp_path), str(TRIALS), str(dead_pid())],
                         capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0", f"two holders at once in {run.stdout.strip()} of {TRIALS} trials"
    assert not (repo.path / "carrytool.lock").exists()


def test_a_stale_lock_recording_our_own_pid_does_not_block(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", bare=True)
    plant_stale(repo.path, os.getpid())
    notes: list[str] = []
    started = time.monotonic()
    with RepoLock(repo.path, wait=5, notify=notes.append):
        assert time.monotonic() - started < 2
    assert notes and "stale lock" in notes[0]


def test_a_lock_recording_a_live_unrelated_pid_is_stale_when_nobody_holds_it(tmp_path: Path) -> None:
    """A PID alone proves nothing (it may have been reused): only a held lock blocks."""
    repo = init_repo(tmp_path / "repo", bare=True)
    plant_stale(repo.path, os.getppid())
    with RepoLock(repo.path, wait=0):
        pass


def test_a_held_lock_blocks_names_its_holder_and_is_released_on_death(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", bare=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from carrytool.gitlayer.repolock import RepoLock\n"
         "with RepoLock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)", str(repo.path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as err:
            with RepoLock(repo.path, wait=0.3):
                pass
        assert f"pid {holder.pid}" in str(err.value) and socket.gethostname() in str(err.value)
        holder.kill()          # kill -9: no cleanup ran, the kernel released the lock
        holder.wait()
        notes: list[str] = []
        with RepoLock(repo.path, wait=5, notify=notes.append):
            pass
        assert notes and f"pid {holder.pid}" in notes[0]
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_linked_work_trees_share_one_lock(tmp_path: Path) -> None:
    main = init_repo(tmp_path / "main")
    main.commit({"a": "a\n"}, "a", ref="refs/heads/main")
    main.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    linked_git_dir = Path(main.git("-C", str(tmp_path / "linked"), "rev-parse", "--absolute-git-dir"))
    assert linked_git_dir != main.path / ".git"
    with RepoLock(main.path / ".git"):
        with pytest.raises(LockHeld):
            with RepoLock(linked_git_dir, wait=0):
                pass


def test_a_read_only_git_dir_is_an_environment_error(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", bare=True)
    with read_only(repo.path):
        with pytest.raises(EnvironmentProblem) as err:
            with RepoLock(repo.path):
                pass
    assert "carrytool.lock" in str(err.value)


def test_a_lock_file_naming_another_host_is_taken_over_when_nobody_holds_it(tmp_path: Path) -> None:
    """The lock is the flock, not the file's contents: a file left by a run on another machine (a shared
    disk, a restored backup) whose process holds no flock here is stale, whatever pid it names."""
    repo = init_repo(tmp_path / "r", bare=True)
    (repo.path / "carrytool.lock").write_text(json.dumps({"pid": os.getpid(), "host": "elsewhere.example",
                                                          "since": "then"}))
    notes: list[str] = []
    with RepoLock(repo.path, notify=notes.append) as lock:
        assert lock.held
        held = json.loads((repo.path / "carrytool.lock").read_text())
        assert held["host"] == socket.gethostname() and held["pid"] == os.getpid()
    assert notes == [f"removing a stale lock {repo.path / 'carrytool.lock'} left by pid {os.getpid()} on "
                     "elsewhere.example (no longer running)"]
    assert not (repo.path / "carrytool.lock").exists()


def test_a_lock_held_by_something_else_says_another_process(tmp_path: Path) -> None:
    """`flock` taken on the lock file by another program (the file records no holder): the wait and the
    error say `another process`, not `pid None` (a new user's trial, holding it with flock(1))."""
    import fcntl

    repo = init_repo(tmp_path / "repo", bare=True)
    path = repo.path / "carrytool.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        notes: list[str] = []
        with pytest.raises(LockHeld) as err:
            with RepoLock(repo.path, wait=0.2, notify=notes.append):
                pass
        assert notes == [f"waiting up to 0.2s for {path} (held by another process)"]
        assert str(err.value).startswith(f"another carrytool run holds {path} (another process)")
    finally:
        os.close(fd)
