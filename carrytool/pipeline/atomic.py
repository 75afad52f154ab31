"""Files that are either whole or absent: written beside their place, synced, then renamed over it."""

from __future__ import annotations

import json
import os
import signal
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from carrytool.errors import EnvironmentProblem
from carrytool.manifest.safefile import sync_directory


def stage(path: Path, data: bytes) -> Path:
    """Write DATA to a synced temporary file beside PATH (creating missing parent directories) and
    return it; on any failure nothing is left behind and EnvironmentProblem (exit 4) says why."""
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        tmp = Path(name)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode_of(path))
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"cannot write {path}: {exc.strerror or exc}") from None
    return tmp


def _mode_of(path: Path) -> int:
    """The permissions a file written at PATH gets: those of the regular file it replaces, else the umask's."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return 0o666 & ~_umask()
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o666 & ~_umask()


def publish(tmp: Path, path: Path) -> None:
    """Rename the staged TMP over PATH and sync the directory (the rename itself survives a crash)."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"cannot write {path}: {exc.strerror or exc}") from None
    sync_directory(path.parent)


def write_atomic(path: str | Path, text: str) -> None:
    """Write TEXT to PATH through a synced temporary file and a rename: readers never see half a file."""
    path = Path(path)
    publish(stage(path, text.encode("utf-8")), path)


def write_json_cache(folder: Path, prefix: str, data: object, final: Callable[[Path], Path]) -> bool:
    """Write DATA as compact JSON, a cache file, whole or not at all: to a temporary file in FOLDER (made if
    missing), then renamed to FINAL(that file). A cache may be lost, so no sync and no error: False when it
    was not written (nothing is left behind)."""
    name = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(data, separators=(",", ":")))
        os.replace(name, final(Path(name)))
        return True
    except (OSError, ValueError, TypeError):
        if name is not None:
            try:
                os.unlink(name)
            except OSError:
                pass
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def crash_point(name: str) -> None:
    """Die here, as `kill -9` would, when the environment says CARRYTOOL_CRASH_AT=NAME.

    A test hook: the reliability tests stop a run at each named point of its writes (instead of at
    timed moments that depend on the machine) and prove the repository and the lock are still sound.
    """
    if os.environ.get("CARRYTOOL_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    # CARRYTOOL_PAUSE_AT=NAME=FIFO: wait here until the test has opened FIFO and closed it again (a
    # rendezvous: the test knows this run is at NAME, holding what it holds there, for as long as it needs)
    point, _, fifo = os.environ.get("CARRYTOOL_PAUSE_AT", "").partition("=")
    if point == name and fifo:
        with open(fifo, "rb") as handle:
            handle.read()
