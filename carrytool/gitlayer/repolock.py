"""One writer per repository: an exclusive lock file in the git directory, stale locks recognised."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from carrytool.errors import LockHeld


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RepoLock:
    """`<git-dir>/carrytool.lock`, created with O_EXCL; holds pid, host and start time."""

    def __init__(self, git_dir: Path, *, wait: float = 0.0, notify: Callable[[str], None] | None = None) -> None:
        self.path = git_dir / "carrytool.lock"
        self.wait = wait
        self.notify = notify
        self.held = False

    def __enter__(self) -> RepoLock:
        deadline = time.monotonic() + self.wait
        while True:
            if self._try_acquire():
                return self
            holder = self._holder()
            if holder is not None and self._stale(holder):
                if self.notify:
                    self.notify(f"removing a stale lock {self.path} left by pid {holder.get('pid')} "
                                f"on {holder.get('host')} (no longer running)")
                self.path.unlink(missing_ok=True)
                continue
            if time.monotonic() >= deadline:
                who = (f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}"
                       if holder else "another process")
                raise LockHeld(f"another carrytool run holds {self.path} ({who})",
                               hint="wait for it, or pass --wait SECONDS; remove the file only if that "
                                    "process is gone")
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    def __exit__(self, *exc: object) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def _try_acquire(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        with os.fdopen(fd, "w") as handle:
            json.dump(info, handle)
        self.held = True
        return True

    def _holder(self) -> dict | None:
        try:
            data = json.loads(self.path.read_text())
            return data if isinstance(data, dict) else {}
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}

    def _stale(self, holder: dict) -> bool:
        if not holder:
            # unreadable: a writer died between create and write, or is writing right now
            try:
                return time.time() - self.path.stat().st_mtime > 5
            except FileNotFoundError:
                return False
        if holder.get("host") != socket.gethostname():
            return False
        pid = holder.get("pid")
        return isinstance(pid, int) and not _alive(pid)
