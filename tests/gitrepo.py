"""Real git repositories for tests: fixed identities and dates, so tests can assert exact SHAs."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar, Union

import pytest
import yaml

Content = Union[str, bytes, None]   # None deletes the file

BASE_TIME = 1_700_000_000
T = TypeVar("T")


def _env(when: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Committer", "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
    })
    if extra:
        env.update(extra)
    return env


class Repo:
    """A repository built with plumbing (works bare or not), one fixed timestamp per commit."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.clock = BASE_TIME
        # commit -> ({path: (mode, oid)}, {folder: its tree}) of the commits Repo.commit built on or read
        self._trees: dict[str, tuple[dict[str, tuple[str, str]], dict[str, str]]] = {}

    def git(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> str:
        # git looks for the repository at self.path and nowhere above it: a test whose repository was
        # removed (or a mutant that removes it) must never reach a repository that holds the tests
        ceiling = {"GIT_CEILING_DIRECTORIES": str(self.path.resolve().parent)}
        proc = subprocess.run(["git", *args], cwd=self.path, input=input, capture_output=True,
                              env=_env(self.clock, {**ceiling, **(env or {})}))
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def rev(self, name: str) -> str:
        return self.git("rev-parse", "--verify", name)

    def tick(self) -> int:
        self.clock += 60
        return self.clock

    def commit(self, files: dict[str, Content], message: str, *, parent: str | None = None,
               parents: list[str] | None = None, ref: str | None = None, modes: dict[str, str] | None = None) -> str:
        """Commit FILES on top of PARENT (a rev; None: a root commit) and point REF at it.

        The objects (loose, zlib, as git writes them) are written here, in process: every test builds its
        repositories with this, and six git processes a commit were a fifth of the suite's time. git runs only
        to name a PARENT given by name (`rev-parse`), to list a parent's files this Repo did not build
        (`ls-tree`) and to move REF (`update-ref`). As the index did, the folders FILES does not reach keep the
        parent's trees (an old git's modes in them too), and the ones it reaches are written in canonical modes. Anything out of the ordinary (a repository of another object
        format or layout, a path git would refuse) takes git's own plumbing (`_commit_plumbing`); both give the
        same SHAs (tests/test_gitrepo.py)."""
        objects = self._objects()
        names = [name for name in files if not _plain_path(name)]
        if objects is None or names:
            return self._commit_plumbing(files, message, parent=parent, parents=parents, ref=ref, modes=modes)
        self.tick()
        base = self._resolve(parent) if parent else None
        entries, folders = self._tree_of(base, whole=not files) if base else ({}, {})
        entries = dict(entries)
        for name, content in files.items():
            if content is None:
                entries.pop(name, None)                 # (a removal names a file: update-index mode 0)
                continue
            parts = name.split("/")
            for depth in range(1, len(parts)):          # a file replacing a folder, a folder a file: as
                entries.pop("/".join(parts[:depth]), None)      # update-index --index-info replaces them
            inside = name + "/"
            for other in [other for other in entries if other.startswith(inside)]:
                del entries[other]
            mode = _canonical((modes or {}).get(name, "100644"))
            entries[name] = (mode, str(content) if mode == "160000" else
                             _write_object(objects, b"blob", _bytes(content)))
        touched = {"/".join(name.split("/")[:depth]) for name in files for depth in range(name.count("/") + 1)}
        written: dict[str, str] = {}
        tree = _write_tree(objects, entries, {k: v for k, v in folders.items() if k not in touched}, written)
        heads = [self._resolve(p) for p in parents] if parents is not None else ([base] if base else [])
        text = _bytes(message)
        body = "".join([f"tree {tree}\n", *(f"parent {p}\n" for p in heads),
                        f"author Test Author <author@example.com> {self.clock} +0000\n",
                        f"committer Test Committer <committer@example.com> {self.clock} +0000\n", "\n"]).encode()
        sha = _write_object(objects, b"commit", body + text + (b"\n" if text and not text.endswith(b"\n") else b""))
        self._trees[sha] = (entries, written)
        if ref:
            self.git("update-ref", ref, sha)
        return sha

    def _objects(self) -> Path | None:
        """This repository's object folder, when it is a plain SHA-1 repository (bare or with a .git folder)."""
        git_dir = self.path / ".git" if (self.path / ".git").is_dir() else self.path
        config = git_dir / "config"
        if not (git_dir / "objects").is_dir() or not config.is_file() or not (git_dir / "HEAD").exists():
            return None
        if re.search(rb"(?im)^\s*(objectformat|worktree)\b", config.read_bytes()):
            return None
        return git_dir / "objects"

    def _resolve(self, rev: str) -> str:
        return rev if _SHA.fullmatch(rev) else self.git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}")

    def _tree_of(self, commit: str, *, whole: bool) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
        """COMMIT's files ({path: (mode, oid)}, modes as the index holds them) and its folders' trees ({path: oid};
        with WHOLE, the root's too, under ""), from what this Repo built or from `ls-tree` (and `rev-parse`)."""
        if commit not in self._trees or whole and "" not in self._trees[commit][1]:
            ceiling = {"GIT_CEILING_DIRECTORIES": str(self.path.resolve().parent)}
            out = subprocess.run(["git", "ls-tree", "-r", "-t", "-z", "--full-tree", commit], cwd=self.path,
                                 capture_output=True, env=_env(self.clock, ceiling), check=True).stdout
            files, folders = {}, {}
            for record in out.split(b"\0"):
                if record:
                    info, path = record.split(b"\t", 1)
                    mode, kind, oid = info.decode().split(" ")
                    if kind == "tree":
                        folders[os.fsdecode(path)] = oid
                    else:
                        files[os.fsdecode(path)] = (_canonical(mode), oid)
            if whole:
                folders[""] = self.git("rev-parse", f"{commit}^{{tree}}")
            self._trees[commit] = (files, folders)
        return self._trees[commit]

    def _commit_plumbing(self, files: dict[str, Content], message: str, *, parent: str | None = None,
               parents: list[str] | None = None, ref: str | None = None, modes: dict[str, str] | None = None) -> str:
        """Repo.commit with git's plumbing, in six git processes at most: one `hash-object` writes every blob, one
        `update-index --index-info` stages them all."""
        self.tick()
        index = (self.path / ".." / f".idx-{os.getpid()}-{self.path.name}").resolve()
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            index.unlink(missing_ok=True)           # no index file: an empty index (a root commit's)
            if parent:
                self.git("read-tree", parent, env=env)
            blobs = self._write_blobs([content for name, content in files.items() if content is not None
                                       and (modes or {}).get(name, "100644") != "160000"], index.parent)
            entries = []
            for name, content in files.items():
                if content is None:
                    entries.append(f"0 {'0' * 40}\t{name}")       # mode 0: the path leaves the index
                    continue
                mode = (modes or {}).get(name, "100644")
                blob = str(content) if mode == "160000" else blobs.pop(0)   # a submodule pointer names a commit
                entries.append(f"{mode} {blob}\t{name}")
            if entries:
                self.git("update-index", "--add", "-z", "--index-info", env=env,
                         input=b"".join(os.fsencode(e) + b"\0" for e in entries))
            tree = self.git("write-tree", env=env)
        finally:
            index.unlink(missing_ok=True)
        args = ["commit-tree", tree, "-m", message]
        for p in (parents if parents is not None else ([parent] if parent else [])):
            args += ["-p", p]
        sha = self.git(*args)
        if ref:
            self.git("update-ref", ref, sha)
        return sha

    def _write_blobs(self, contents: list[Content], beside: Path) -> list[str]:
        """Write CONTENTS as blobs (loose objects, no filters: as `hash-object -w --stdin` each), in one process;
        their files wait in a folder in BESIDE (where the index is: not $TMPDIR, which some tests shrink)."""
        if not contents:
            return []
        with tempfile.TemporaryDirectory(prefix=f".blobs-{os.getpid()}-", dir=beside) as tmp:
            paths = []
            for i, content in enumerate(contents):
                path = Path(tmp) / str(i)
                path.write_bytes(content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content)
                paths.append(str(path))
            out = self.git("hash-object", "-w", "--no-filters", "--stdin-paths", input="\n".join(paths).encode())
        return out.split("\n")

    def show(self, rev: str, path: str) -> str:
        return self.git("show", f"{rev}:{path}")

    def ref(self, name: str) -> str | None:
        out = self.git("rev-parse", "--verify", "-q", name, check=False)
        return out or None


_SHA = re.compile(r"[0-9a-f]{40}")


def _bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content


def _canonical(mode: str) -> str:
    """MODE as git's index holds it (a legacy `100664` of an old tree is `100644`): a commit through the index wrote
    every tree anew, in canonical modes."""
    number = int(mode, 8)
    return ("100755" if number & 0o100 else "100644") if number >> 12 == 0o10 else mode


def _plain_path(name: str) -> bool:
    """A path git stores as given (no empty, `.`, `..` or `.git` part, no NUL, no leading or trailing slash)."""
    parts = name.split("/")
    return bool(name) and "\0" not in name and all(p and p not in (".", "..") and p.lower() != ".git" for p in parts)


def _write_object(objects: Path, kind: bytes, data: bytes) -> str:
    """Write a loose object of KIND holding DATA, as git does (zlib, read-only, renamed into place); its name."""
    raw = b"%s %d\0" % (kind, len(data)) + data
    oid = hashlib.sha1(raw).hexdigest()
    path = objects / oid[:2] / oid[2:]
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(zlib.compress(raw))
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    return oid


def _write_tree(objects: Path, entries: dict[str, tuple[str, str]], kept: dict[str, str], written: dict[str, str]) -> str:
    """Write the trees holding ENTRIES ({path: (mode, oid)}); the root tree's name. KEPT: the trees of the folders (""
    the root) no path of the commit is in, taken as they are: an index read from the parent keeps their trees
    (`read-tree` primes its cached trees), an old git's modes in them too. WRITTEN: every folder's tree, filled."""
    root: dict = {}
    for path, entry in entries.items():
        *folders, name = path.split("/")
        node = root
        for folder in folders:
            node = node.setdefault(folder, {})
        node[name] = entry

    def write(node: dict, folder: str) -> str:
        if folder in kept:
            written[folder] = kept[folder]
            return kept[folder]
        items = []
        for name, value in node.items():
            raw = os.fsencode(name)
            if isinstance(value, dict):     # git sorts a folder as its name with a slash after it
                tree = write(value, f"{folder}/{name}" if folder else name)
                items.append((raw + b"/", b"40000 " + raw + b"\0" + bytes.fromhex(tree)))
            else:
                items.append((raw, value[0].encode() + b" " + raw + b"\0" + bytes.fromhex(value[1])))
        written[folder] = _write_object(objects, b"tree", b"".join(entry for _key, entry in sorted(items)))
        return written[folder]

    return write(root, "")


def init_repo(path: Path, *, bare: bool = False) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    args = ["init", "-q", "-b", "main"] + (["--bare"] if bare else [])
    subprocess.run(["git", *args, str(path)], check=True, env=_env(BASE_TIME))
    return Repo(path)


def write_manifest(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


_BUILT: dict[tuple[str, str | None], tuple[pytest.TempPathFactory, object]] = {}


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """BUILD(a new folder of FACTORY), once a session per NAME and per git on PATH (a test may put another git
    first): a template tests copy (`copy_built`) instead of building it each."""
    key = (name, shutil.which("git"))
    if key not in _BUILT or _BUILT[key][0] is not factory:
        _BUILT[key] = (factory, build(factory.mktemp(name)))
    return _BUILT[key][1]  # type: ignore[return-value]


def copy_built(template: T, source: Path, root: Path) -> T:
    """A copy of TEMPLATE, an object holding repositories (`Repo`s) and paths built in SOURCE, at ROOT (empty
    or absent): its Repos and paths in SOURCE moved to ROOT, their clocks kept, so the copy has the same SHAs
    and goes on as TEMPLATE would (the repositories name each other by relative paths). Set-up built once,
    each test working in its own copy."""
    shutil.copytree(source, root, symlinks=True, dirs_exist_ok=True)
    other = copy.copy(template)
    for name, value in vars(template).items():
        if isinstance(value, Repo) and value.path.is_relative_to(source):
            repo = Repo(root / value.path.relative_to(source))
            repo.clock = value.clock
            repo._trees = dict(value._trees)     # the files of the commits it built, in the copy as well
            setattr(other, name, repo)
        elif isinstance(value, Path) and value.is_relative_to(source):
            setattr(other, name, root / value.relative_to(source))
    return other


def many_prs(repo: Repo, count: int, *, files: int = 50) -> str:
    """An upstream `main` with FILES files and COUNT one-file PRs (refs/pull/N/head), via one fast-import."""
    lines: list[str] = []
    when = BASE_TIME

    def blob(mark: int, text: str) -> None:
        data = text.encode()
        lines.extend(["blob", f"mark :{mark}", f"data {len(data)}", text])

    def commit(ref: str, mark: int, parent: str | None, message: str, changes: list[tuple[str, int]]) -> None:
        nonlocal when
        when += 60
        lines.extend([f"commit {ref}", f"mark :{mark}", f"author Dev <dev@example.com> {when} +0000",
                      f"committer Dev <dev@example.com> {when} +0000", f"data {len(message)}", message])
        if parent:
            lines.append(f"from {parent}")
        lines.extend(f"M 100644 :{blob_mark} {path}" for path, blob_mark in changes)
        lines.append("")

    body = "".join(f"line {i}\n" for i in range(30))
    for i in range(files):
        blob(i + 1, f"# file {i}\n{body}")
    commit("refs/heads/main", 100000, None, "base", [(f"src/f{i:04d}.py", i + 1) for i in range(files)])
    for n in range(1, count + 1):
        target = n % files
        blob(200000 + n, f"# file {target} changed by PR {n}\n{body}".replace(f"line {n % 30}\n", f"line {n % 30} by pr {n}\n"))
        commit(f"refs/pull/{n}/head", 300000 + n, ":100000", f"PR {n}", [(f"src/f{target:04d}.py", 200000 + n)])
    repo.git("fast-import", "--quiet", input=("\n".join(lines) + "\n").encode())
    return repo.rev("refs/heads/main")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make PATH unwritable, even for root (an immutable flag), and undo it afterwards."""
    if os.geteuid() == 0:
        if not shutil.which("chattr") or subprocess.run(["chattr", "-R", "+i", str(path)],
                                                        capture_output=True).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a directory read-only")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-R", "-i", str(path)], check=True)
        return
    modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")]}
    for p in modes:
        p.chmod(modes[p] & ~0o222)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
