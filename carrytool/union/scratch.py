"""The scratch tree a stopped fold is resolved in: written byte for byte from a git tree, read back as
git would store it, and removed file by file (only what carrytool wrote, as its marker file lists).

Writing: no attributes, filters, encodings or EOL conversion (the blobs are written as they are), a
symlink stays a symlink, the executable bit is kept. Reading: `lstat`/`readlink` only, from the scratch
root down, never following a link; a FIFO, device or socket is refused with its path.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from carrytool.errors import EnvironmentProblem, GitError, InputError
from carrytool.gitlayer.env import decode_path, encode_path
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import read_json
from carrytool.manifest.safefile import write_atomic

MARKER = ".carrytool-scratch"
_FORBIDDEN = {b"", b".", b"..", b".git"}

Snapshot = dict[str, tuple[str, bytes]]      # path -> (mode, content or link target)


class MissingBlob(GitError):
    """A blob TREE names at PATH that the repository lacks (a partial mirror, an interrupted fetch)."""

    def __init__(self, path: str, oid: str, tree: str) -> None:
        super().__init__(f"{path} (blob {oid}, in tree {tree}) is missing from the repository: the scratch tree "
                         "cannot be written", hint="fetch the missing object (the repository is incomplete), then "
                                                   "run the command again")
        self.path, self.oid, self.tree = path, oid, tree


@dataclass
class Scratch:
    root: Path
    union: str
    hint: str = ""

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    # -- what may be used -----------------------------------------------------------------------------
    def check_usable(self) -> None:
        """Refuse (exit 2) a scratch that is not missing, empty, or carrytool's own."""
        root = self.root
        if root.is_symlink() or (root.exists() and not root.is_dir()):
            raise InputError(f"--scratch {root} is not a directory carrytool can use (a file or a symlink)",
                             hint="pass --scratch with a missing or empty directory")
        if root.is_dir() and any(True for _ in root.iterdir()) and not self.is_marked():
            raise InputError(f"--scratch {root} is not empty and carrytool did not make it: nothing in it is "
                             "touched", hint="pass --scratch with a missing or empty directory")

    def is_marked(self) -> bool:
        return self.marker.is_file() and not self.marker.is_symlink()

    def listed(self) -> dict:
        """The marker's record: {"union", "created_root", "files"}; empty when unreadable."""
        try:
            doc = read_json(self.marker)
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) and isinstance(doc.get("files"), list) else {}

    def write_marker(self, files: list[str], created_root: bool) -> None:
        doc = {"carrytool": "scratch tree: carrytool removes the files listed here and nothing else",
               "union": self.union, "created_root": created_root, "files": sorted(files)}
        temp = self.root / (MARKER + ".tmp")
        temp.unlink(missing_ok=True)
        temp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(temp, self.marker)

    # -- writing --------------------------------------------------------------------------------------
    def write(self, git: Git, tree: str) -> None:
        """Check TREE out into the scratch root: exact bytes, modes and links (the marker first)."""
        try:
            self._write(git, tree)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot write the scratch tree {self.root}: {exc}",
                                     hint="free some space or fix the permissions, then run the command "
                                          "again") from None

    def _write(self, git: Git, tree: str) -> None:
        self.check_usable()
        created = not self.root.exists()
        previous = self.listed()
        if previous:
            created = bool(previous.get("created_root"))
            self.remove_files()
            left = [p for p in self.root.rglob("*") if p.name != MARKER]
            if left:
                raise InputError(f"the scratch tree {self.root} holds files carrytool did not write "
                                 f"(e.g. {left[0]}); nothing was removed",
                                 hint="move them away, then run the command again")
        self.root.mkdir(parents=True, exist_ok=True)
        entries = list(_walk(git, tree, b""))
        files = [decode_path(path) for _mode, _oid, path in entries]
        if MARKER in files:
            raise InputError(f"the tree has a file named {MARKER}: carrytool cannot use it as a scratch tree")
        self.write_marker(files, created)
        root = encode_path(str(self.root))
        for mode, oid, path in entries:
            target = root + b"/" + path
            if mode == "160000":
                os.makedirs(target, exist_ok=True)
                continue
            found = git.read_object(oid)
            if found is None:       # before its directory is made: remove_files leaves none behind
                raise MissingBlob(decode_path(path), oid, tree)
            data = found[1]
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if mode == "120000":
                os.symlink(data, target)
                continue
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o755 if mode == "100755" else 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)

    def rewrite(self, rel: str, data: bytes) -> None:
        """Replace the regular file REL (one the user left there) with DATA, whole (a new file renamed over
        it, its mode kept); never through a symlink or a linked directory."""
        path = self.root / rel
        if not _real_dirs(self.root, rel) or path.is_symlink() or not path.is_file():
            raise InputError(f"{path} is not a file of the scratch tree carrytool can write: nothing was recorded")
        write_atomic(path, data)

    # -- reading --------------------------------------------------------------------------------------
    def read(self) -> Snapshot:
        """Every file under the scratch root as git would store it; refuse what git cannot store."""
        if not self.root.is_dir() or self.root.is_symlink() or not self.is_marked():
            raise InputError(f"the scratch tree is gone: abort or compose again ({self.root} is missing or "
                             "is not the scratch tree carrytool wrote)",
                             hint=self.hint or None)
        out: Snapshot = {}
        try:
            self._read_dir(encode_path(str(self.root)), b"", out)
        except OSError as exc:
            raise InputError(f"cannot read the scratch tree {self.root}: {exc}") from None
        return out

    def _read_dir(self, root: bytes, prefix: bytes, out: Snapshot) -> None:
        with os.scandir(root + b"/" + prefix if prefix else root) as listing:
            names = sorted(entry.name for entry in listing)
        for name in names:
            rel = prefix + b"/" + name if prefix else name
            if not prefix and name == MARKER.encode():
                continue
            full = root + b"/" + rel
            info = os.lstat(full)
            where = decode_path(rel)
            if stat.S_ISDIR(info.st_mode):
                if name == b".git":
                    raise InputError(f"the scratch tree holds a .git directory at {where}: git cannot store it")
                self._read_dir(root, rel, out)
            elif stat.S_ISLNK(info.st_mode):
                out[where] = ("120000", os.readlink(full))
            elif stat.S_ISREG(info.st_mode):
                out[where] = ("100755" if info.st_mode & stat.S_IXUSR else "100644", _read_regular(full, where))
            else:
                raise InputError(f"the scratch tree holds {where}, which is not a file, a directory or a symlink "
                                 "(a FIFO, device or socket): git cannot store it",
                                 hint=f"remove {decode_path(full)}, then run the command again")

    # -- removing -------------------------------------------------------------------------------------
    def remove_files(self, also: list[str] = ()) -> list[str]:
        """Remove the files the marker lists (and ALSO), the directories they leave empty and the marker;
        the root too when carrytool created it. Return what was left (not carrytool's)."""
        doc = self.listed()
        if not doc:
            return []
        root = self.root
        dirs: set[Path] = set()
        for rel in [*doc["files"], *also]:
            if not isinstance(rel, str) or not _a_name(rel) or rel.startswith("/") or ".." in rel.split("/") \
                    or not _real_dirs(root, rel):
                continue
            path = root / rel
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                path.unlink()
            elif stat.S_ISDIR(info.st_mode) and not any(True for _ in path.iterdir()):
                path.rmdir()
            parent = path.parent
            while parent != root and root in parent.parents:
                dirs.add(parent)
                parent = parent.parent
        for folder in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()
            except OSError:
                pass
        self.marker.unlink(missing_ok=True)
        left = sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.is_dir() else []
        if not left and doc.get("created_root"):
            try:
                root.rmdir()
            except OSError:
                pass
        return left


def _a_name(rel: str) -> bool:
    """Whether REL can name a file: no NUL, no surrogate the file system's encoding refuses (a marker edited by
    hand: h246, `union abort` ended in UnicodeEncodeError)."""
    try:
        os.fsencode(rel)
    except UnicodeEncodeError:
        return False
    return "\x00" not in rel


def _real_dirs(root: Path, rel: str) -> bool:
    """Whether every directory on the way from ROOT to REL is a real directory (no symlink to elsewhere)."""
    current = root
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            return False
    return True


def _read_regular(path: bytes, where: str) -> bytes:
    """Read a regular file without following a link or blocking on a FIFO swapped in meanwhile."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"the scratch tree's {where} changed kind while being read")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _walk(git: Git, tree: str, prefix: bytes):  # noqa: ANN202 - yields (mode, oid, path bytes)
    for mode, kind, oid, name in git.read_tree(tree):
        if name in _FORBIDDEN or name.lower() == b".git" or b"/" in name or b"\0" in name:
            raise InputError(f"the tree has an entry named {decode_path(name)!r} under "
                             f"{decode_path(prefix) or '/'}: carrytool will not write it to disk")
        path = prefix + b"/" + name if prefix else name
        if kind == "tree":
            yield from _walk(git, oid, path)
        else:
            yield mode, oid, path
