"""How carrytool runs git: the scrubbed environment, pinned configuration, version check, SHAs and paths."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess

from carrytool.errors import EnvironmentProblem

MIN_GIT = (2, 38)
ZERO = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")

# Variables a transport may legitimately need (credentials, proxies, ssh); every other GIT_* is dropped.
_KEEP_ENV = re.compile(
    r"^GIT_(SSH|SSH_COMMAND|SSH_VARIANT|ASKPASS|TERMINAL_PROMPT|SSL_NO_VERIFY|SSL_CAINFO|SSL_CAPATH|"
    r"HTTP_PROXY_AUTHMETHOD|PROXY_COMMAND|PROXY_SSL_CERT|PROXY_SSL_KEY|PROXY_SSL_CAINFO|HTTP_USER_AGENT|"
    r"CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_NOSYSTEM|EXEC_PATH|CEILING_DIRECTORIES)$"
)

# Configuration that changes merge results or runs code is pinned on every call. (Composing commands
# also run in a private git dir that reads no configuration or attributes of the user: see isolated_env.)
PINNED_CONFIG: tuple[str, ...] = (
    "core.bigFileThreshold=512m",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.attributesFile=/dev/null",
    # merges never read .gitattributes: git 2.39 looks only at a work tree (carrytool runs none), and newer
    # git would read HEAD's tree in a bare repository unless attr.tree says otherwise (the empty tree)
    "attr.tree=4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "core.quotePath=false",
    "merge.renames=true",
    "merge.directoryRenames=false",
    "merge.renameLimit=7000",
    "merge.renormalize=false",
    "merge.conflictStyle=merge",
    "merge.verbosity=2",
    "diff.renames=true",
    "diff.renameLimit=7000",
    "diff.algorithm=myers",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.external=",
    "rerere.enabled=false",
    "commit.gpgSign=false",
    "i18n.commitEncoding=UTF-8",
    "gc.auto=0",
    "maintenance.auto=false",
    "fetch.recurseSubmodules=false",
    "fetch.writeCommitGraph=false",
    "protocol.ext.allow=never",
    "transfer.fsckObjects=false",
)


# glibc's malloc in every git child (where git runs on glibc; elsewhere the variable means nothing): blocks
# of up to 16 MiB come from the heap, and freed memory stays there until 32 MiB of it is free. With
# glibc's defaults a long-lived merge-tree gives the top of its heap back after a merge (and maps large
# blocks afresh), so every merge of a large file faults its buffers in again: 66,000 page faults in 100
# merges of xarray's 480 KB doc/whats-new.rst, 4,400 with these (system time 0.21 s -> 0.02 s).
# Cold explain of 60 xarray PRs, git 2.39: 3.28 s -> 2.88 s; cold sync 1.55 s -> 1.31 s; peak RSS the same
# within 1 MB (an idle long-lived process may keep up to 32 MiB it freed). What git computes does not
# change: only where its memory comes from. The user's own malloc settings win (malloc_env).
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=16777216:glibc.malloc.trim_threshold=33554432"
_MALLOC_NAMES = ("glibc.malloc.mmap_threshold", "glibc.malloc.trim_threshold")
_MALLOC_OLD_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def malloc_env(env: dict[str, str]) -> None:
    """Add MALLOC_TUNABLES to ENV's GLIBC_TUNABLES, unless the user tuned those thresholds already (in
    GLIBC_TUNABLES, or with glibc's older MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_, which
    GLIBC_TUNABLES would override) or set GLIBC_TUNABLES empty (no tuning). Other tunables of theirs stay."""
    if any(name in env for name in _MALLOC_OLD_VARS):
        return
    theirs = env.get("GLIBC_TUNABLES")
    if theirs is None:
        env["GLIBC_TUNABLES"] = MALLOC_TUNABLES
    elif theirs and not any(item.split("=", 1)[0].strip() in _MALLOC_NAMES for item in theirs.split(":")):
        env["GLIBC_TUNABLES"] = f"{theirs}:{MALLOC_TUNABLES}"


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Return the environment for a git child: the caller's, minus GIT_* that could change results (and
    glibc's malloc tuned for big files: MALLOC_TUNABLES)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or _KEEP_ENV.match(k)}
    malloc_env(env)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    env["GIT_TERMINAL_PROMPT"] = env.get("GIT_TERMINAL_PROMPT", "0")
    env.pop("GIT_CONFIG_PARAMETERS", None)
    if extra:
        env.update(extra)
    return env


def isolated_env(git_dir: str, object_dir: str, extra: dict[str, str] | None = None, *,
                 alternates: str | None = None) -> dict[str, str]:
    """Return the environment of a composing git child: a private GIT_DIR sharing the user's object store.

    With ALTERNATES, new objects go to OBJECT_DIR (a quarantine, see `Git.migrate_objects`) and the
    user's store is read as an alternate.

    No system or global configuration, no system attributes and no replace refs are read, so neither the
    user's configuration nor their attributes (`info/attributes` lives in the user's git dir, which this
    child never sees) can change a merge or a diff, and none of their drivers, filters or textconvs runs.
    The user's `objects/info/alternates` is still honoured: it lives in the shared object directory.
    """
    env = scrubbed_env()
    env.update({"GIT_DIR": git_dir, "GIT_OBJECT_DIRECTORY": object_dir, "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
                "GIT_NO_REPLACE_OBJECTS": "1"})
    if alternates:
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = alternate_path(alternates)
    if extra:
        env.update(extra)
    return env


def alternate_path(path: str) -> str:
    """PATH as one entry of GIT_ALTERNATE_OBJECT_DIRECTORIES (C-quoted when it holds a colon or a quote)."""
    if ":" not in path and not path.startswith('"'):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hostname() -> str:
    """This machine's name as `socket.gethostname()` gives it (on POSIX the node name `uname` gives, which
    is what gethostname reads), without importing socket: 3 ms of every command's start-up."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return uname().nodename
    import socket

    return socket.gethostname()


def fast_tmp_base() -> str | None:
    """Where carrytool's scratch directory goes: TMPDIR when the user set one, else a memory-backed
    directory when there is one with room ($XDG_RUNTIME_DIR, /dev/shm: at least MIN_SCRATCH_FREE free),
    else the system default.

    The scratch directory holds the object quarantine (every object a run writes, as loose files until
    they are packed) and merge inputs: file creation on a journaled disk costs a hundred times more."""
    if os.environ.get("TMPDIR"):
        return None
    for candidate in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK) \
                and free_bytes(candidate) >= MIN_SCRATCH_FREE:
            return candidate
    return None


# A memory-backed directory with less room than this is passed over (Docker's /dev/shm is 64 MB; a
# run's quarantine holds every object it writes, loose, until close)
MIN_SCRATCH_FREE = 512 << 20


def free_bytes(path: str) -> int:
    """The bytes an unprivileged process can still write under PATH (0 when it cannot tell)."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return 0
    return stat.f_bavail * stat.f_frsize


def git_argv(*args: str) -> list[str]:
    argv = ["git", "--no-pager"]
    for item in PINNED_CONFIG:
        argv += ["-c", item]
    return argv + list(args)


def parse_version(text: str) -> tuple[int, int, int]:
    """Return (major, minor, patch) from `git version 2.39.5` (vendor suffixes ignored)."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        raise EnvironmentProblem(f"cannot read the git version from {text.strip()!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


_version_cache: dict[str, tuple[int, int, int]] = {}


def git_version() -> tuple[int, int, int]:
    """Return the installed git's version, or raise if git is missing or older than 2.38."""
    exe = shutil.which("git")
    if exe is None:
        raise EnvironmentProblem("git is not installed (carrytool needs git >= 2.38)",
                                 hint="install git 2.38 or newer and put it on PATH")
    if exe not in _version_cache:
        out = subprocess.run(["git", "--version"], capture_output=True, text=True, env=scrubbed_env())
        _version_cache[exe] = parse_version(out.stdout)
    version = _version_cache[exe]
    if version[:2] < MIN_GIT:
        raise EnvironmentProblem(
            f"git {'.'.join(map(str, version))} is too old: carrytool needs git >= 2.38 "
            "(for `git merge-tree --write-tree`)",
            hint="upgrade git (e.g. from your distribution's backports or git-scm.com)")
    return version


def is_sha(text: str) -> bool:
    return bool(_HEX40.match(text))


def decode_path(raw: bytes) -> str:
    """Decode a path from git as text; undecodable bytes survive as surrogates (os.fsdecode)."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def wait_exit(proc: subprocess.Popen, timeout: float) -> None:
    """`proc.wait(timeout=TIMEOUT)` without its polling: Popen waits with a timeout by sleeping in growing
    steps (up to twice the time the process takes to end: 16 ms a sync, stopping its git processes). On
    Linux a pidfd wakes the wait the moment the process ends. Raises subprocess.TimeoutExpired as wait."""
    if proc.returncode is None and hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:                  # (not supported here; or gone): Popen's own wait decides
            fd = None
        if fd is not None:
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
            finally:
                os.close(fd)
            if not ready:
                raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait(timeout=timeout)
