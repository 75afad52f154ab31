"""Files carrytool writes beside the manifest (the manifest, union patches, resolution records): never
through a symlink, and atomically (a temporary file beside the target, then a rename), so a crash or a
full disk leaves the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from carrytool.errors import EnvironmentProblem, InputError


def refuse_symlink(path: Path) -> None:
    """Raise InputError when PATH is a symlink: carrytool writes no file through a link."""
    if path.is_symlink():
        raise InputError(f"{path} is a symlink (to {os.readlink(path)}); carrytool does not write through links",
                         hint=f"replace it with a regular file (or remove it): rm {path}")


def write_atomic(path: Path, data: bytes) -> None:
    """Write DATA to PATH: a new file beside it, fsynced, renamed over it. Refuse a symlink target."""
    refuse_symlink(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists() and not path.is_symlink():
            os.chmod(temp, path.stat().st_mode & 0o777)
        else:
            os.chmod(temp, 0o644)
        os.replace(temp, path)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise EnvironmentProblem(f"cannot write {path}: {exc.strerror}; it was left as it was") from None
    sync_directory(path.parent)


def sync_directory(folder: Path) -> None:
    """fsync FOLDER, so that a rename in it survives a crash (every atomic write here and in pipeline.atomic)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
