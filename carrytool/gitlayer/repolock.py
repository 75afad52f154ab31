"""One writer per repository: `flock` on `<common-git-dir>/carrytool.lock`, released by the kernel on death.

The kernel's lock is the truth: a lock file nobody holds is stale whatever PID it records (a killed run,
a reused PID, even our own PID), and taking it over is as atomic as taking a fresh one. The file records
its holder (pid, host, start time) only so that messages can name it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from carrytool.errors import EnvironmentProblem, LockHeld
from carrytool.gitlayer.env import hostname
from carrytool.gitlayer.jsonread import load_json


def common_dir(git_dir: Path) -> Path:
    """The directory shared by every work tree of a repository (a linked work tree names it in `commondir`)."""
    try:
        pointer = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return (git_dir / pointer).resolve() if pointer else git_dir


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (`/proc/PID/stat` field 22), where there is /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


class RepoLock:
    """An exclusive lock on the repository for one carrytool run (`with RepoLock(git_dir): ...`)."""

    def __init__(self, git_dir: Path, *, wait: float = 0.0, notify: Callable[[str], None] | None = None) -> None:
        self.path = common_dir(Path(git_dir)) / "carrytool.lock"
        self.wait = wait
        self.notify = notify
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> RepoLock:
        deadline = time.monotonic() + self.wait
        waiting = False
        while not self._try_acquire():
            if time.monotonic() >= deadline:
                raise LockHeld(f"another carrytool run holds {self.path} ({self._who()})",
                               hint="wait for it, or pass --wait SECONDS (the lock is released when that "
                                    "process ends, even if it is killed)")
            if not waiting and self.notify:
                self.notify(f"waiting up to {self.wait:g}s for {self.path} (held by {self._who()})")
            waiting = True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        return self

    def _who(self) -> str:
        """Who holds the lock, as its file says; `another process` when it says nothing (a lock taken with
        `flock` by something other than carrytool, or written an instant ago)."""
        holder = self._holder()
        if not holder or not holder.get("pid"):
            return "another process"
        return f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}"

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        # unlink while still holding it: whoever opened this inode meanwhile sees it is gone and retries
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def _try_acquire(self) -> bool:
        """Open (or create) the lock file and take `flock` without blocking; True when we hold it."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot create {self.path}: {exc.strerror}",
                                     hint="carrytool needs write access to the repository (--repo DIR)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise EnvironmentProblem(f"cannot lock {self.path}: {exc.strerror}",
                                     hint="put the repository on a file system that supports flock") from None
        if not self._same_file(fd):      # released and unlinked between our open and our flock
            os.close(fd)
            return False
        previous = self._read(fd)
        self._record(fd)
        self._fd = fd
        if previous and self.notify:
            self.notify(f"removing a stale lock {self.path} left by pid {previous.get('pid')} on "
                        f"{previous.get('host')} (no longer running)")
        return True

    def _same_file(self, fd: int) -> bool:
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)

    @staticmethod
    def _read(fd: int) -> dict:
        try:
            data = load_json(os.pread(fd, 4096, 0) or b"{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _record(fd: int) -> None:
        pid = os.getpid()
        info = {"pid": pid, "host": hostname(), "started": _start_time(pid),
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)

    def _holder(self) -> dict:
        try:
            data = load_json(self.path.read_bytes() or b"{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
