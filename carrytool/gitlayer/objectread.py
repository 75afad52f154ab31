"""Reading objects: the long-lived `cat-file --batch`, batches of blobs (also in another thread), commits
parsed and kept, a commit's tree."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Sequence

from carrytool.errors import GitError
from carrytool.gitlayer.env import EMPTY_TREE, git_argv

_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


class ObjectReads:
    """Reading objects: `cat-file --batch`, one object or many, commits and their trees."""

    # Git's state this reads or updates (all of it made in Git.__init__): _pending, _trees, _tree_of, _commits

    # -- reading objects ----------------------------------------------------------------------------
    def read_object(self, name: str) -> tuple[str, bytes] | None:
        """`cat-file --batch`: return (type, content) of an object, or None when it does not exist."""
        staged = self._pending.get(name)
        if staged is not None:
            return staged
        if not _OID.match(name):
            # a ref or an expression: the user's refs are resolved in the user's repository
            resolved = self.ref_value(name) if name and not name.startswith("-") else None
            if resolved is None:
                return None
            name = resolved
        pipe = self._pipe("cat-file", ["cat-file", "--batch"])
        with pipe.lock:
            pipe.stdin.write(name.encode() + b"\n")
            pipe.stdin.flush()
            header = pipe.stdout.readline()
            if header.endswith(b" missing\n") or header.endswith(b" ambiguous\n") or not header:
                return None
            _oid, kind, size = header.split()
            data = pipe.stdout.read(int(size))
            pipe.stdout.read(1)
        return kind.decode(), data

    def read_blob(self, oid: str) -> bytes:
        obj = self.read_object(oid)
        if obj is None:
            raise GitError(f"object {oid} is missing from the repository")
        return obj[1]

    def read_blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """`cat-file --batch` fed every name at once (in chunks, to the long-lived process): oid -> content; missing
        objects, and objects that are not blobs, are left out. Many blobs at a time, without a round trip
        per object."""
        return _blobs(self._read_batch(oids))

    def read_blobs_later(self, oids: Sequence[str]) -> Callable[[], dict[str, bytes]]:
        """read_blobs in two halves, for another thread: what its process needs is settled now (every
        staged object written, its directory and environment), and the function returned runs it, in any
        thread: it touches nothing of this Git's state. It raises GitError as read_blobs would."""
        read = self.blob_reader_later()
        return lambda: read(oids)

    def blob_reader_later(self) -> Callable[[Sequence[str]], dict[str, bytes]]:
        """read_blobs_later for blobs known only later: the function returned reads the OIDS it is given, in
        any thread (explain's thread lists them once it has the entries' hunks)."""
        self.flush_objects()
        args = ("cat-file", "--batch")
        argv, (cwd, env) = git_argv(*args), self._placement(args)

        def ask(names: bytes) -> bytes:
            try:
                proc = subprocess.run(argv, cwd=cwd, input=names, capture_output=True, env=env)
            except OSError as exc:        # the repository went away meanwhile
                raise GitError(f"`git cat-file --batch` could not start in {cwd}: {exc}") from exc
            if proc.returncode != 0:
                raise GitError(f"`git cat-file --batch` failed (exit {proc.returncode})",
                               stderr=proc.stderr.decode("utf-8", "replace"))
            return proc.stdout

        return lambda oids: _blobs(_read_batches(oids, ask))

    def _read_batch(self, oids: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """Through the long-lived `cat-file --batch` (read_object's): composing starts it anyway, and a
        process of its own per batch cost a start-up each (two of the synthetic sync's 28 git processes)."""
        self.flush_objects()            # (as run does: every staged object is in the store first)
        return _read_batches(oids, self._ask_pipe)

    def _ask_pipe(self, names: bytes) -> bytes:
        """What `cat-file --batch` answers to NAMES (one a line), asked of the long-lived process (`exchange`)."""
        pipe = self._pipe("cat-file", ["cat-file", "--batch"])
        with pipe.lock:
            answers = exchange(pipe, names.splitlines())
        return b"".join(header + (b"" if data is None else data + b"\n") for header, data in answers)

    def load_commits(self, shas: Iterable[str]) -> None:
        """Read the commits SHAS (full SHAs) not read before in one `cat-file --batch` process, for
        `commit_info` and `tree_of` to answer without a round trip each."""
        wanted = [sha for sha in dict.fromkeys(shas)
                  if sha not in self._commits and sha not in self._pending and _OID.match(sha)]
        if len(wanted) < 16:
            return                      # fewer than a process is worth
        if len(self._commits) + len(wanted) > 20000:
            self._commits.clear()
        for sha, (kind, data) in self._read_batch(wanted).items():
            if kind == "commit":
                info = _parse_commit(data)
                self._commits[sha] = info
                self._tree_of[sha] = info["tree"]  # type: ignore[assignment]

    def object_types(self, oids: Sequence[str]) -> dict[str, str | None]:
        """The type of each object of OIDS (full SHAs; None: missing). Commits among them are read in one
        process (load_commits), for commit_info and tree_of too."""
        self.load_commits(oids)
        return {oid: "commit" if oid in self._commits else self.object_type(oid) for oid in oids}

    def object_type(self, name: str) -> str | None:
        obj = self.read_object(name)
        return obj[0] if obj else None

    def commit_info(self, sha: str) -> dict[str, object]:
        """Parse a commit object: tree, parents, author/committer timestamps, message (kept by full SHA:
        objects never change; each call gets its own copy)."""
        cached = self._commits.get(sha)
        if cached is None:
            cached = self._commit_info(sha)
            if _OID.match(sha):
                if len(self._commits) > 20000:
                    self._commits.clear()
                self._commits[sha] = cached
        return {**cached, "parents": list(cached["parents"])}  # type: ignore[call-overload]

    def _commit_info(self, sha: str) -> dict[str, object]:
        obj = self.read_object(sha)
        if obj is None or obj[0] != "commit":
            raise GitError(f"{sha} is not a commit in this repository")
        return _parse_commit(obj[1])

    def tree_of(self, name: str) -> str:
        """The tree of a commit (or the tree itself)."""
        if name == EMPTY_TREE or name in self._trees:
            return name
        tree = self._tree_of.get(name)
        if tree is not None:
            return tree
        obj = self.read_object(name)
        if obj is None:
            raise GitError(f"object {name} is missing from the repository")
        if obj[0] == "tree":
            return name
        if obj[0] != "commit":
            raise GitError(f"{name} is a {obj[0]}, not a commit or tree")
        tree = obj[1][5:5 + len(name)].decode() if _OID.match(name) else obj[1][5:45].decode()
        if _OID.match(name):
            if len(self._tree_of) > 20000:
                self._tree_of.clear()
            self._tree_of[name] = tree
        return tree

    def blob_at_rev(self, rev: str, path: str) -> bytes | None:
        """`rev-parse REV:PATH` in the user's repository, then the blob; None when either is missing."""
        if rev.startswith("-"):
            return None
        oid = self.ref_value(f"{rev}:{path}")
        obj = self.read_object(oid) if oid else None
        return obj[1] if obj and obj[0] == "blob" else None


def exchange(pipe, names: Sequence[bytes]) -> list[tuple[bytes, bytes | None]]:  # noqa: ANN001 - a processes._Pipe
    """(header line, content) of each of NAMES (no line ends) from PIPE, a long-lived `cat-file --batch` whose lock
    the caller holds, in one pipelined exchange of bounded chunks (256 names, 16 KiB): what is written before
    reading must fit the pipe's buffer, else git, blocked writing answers no one reads yet, stops reading the names
    (a deadlock). The content is None for a name git calls missing or ambiguous."""
    chunks: list[list[bytes]] = [[]]
    written = 0
    for name in names:
        if chunks[-1] and (len(chunks[-1]) >= 256 or written + len(name) + 1 > 16384):
            chunks.append([])
            written = 0
        chunks[-1].append(name)
        written += len(name) + 1
    out: list[tuple[bytes, bytes | None]] = []
    for chunk in chunks:
        pipe.stdin.write(b"".join(name + b"\n" for name in chunk))
        pipe.stdin.flush()
        for _name in chunk:
            header = pipe.stdout.readline()
            if not header.endswith(b"\n"):
                raise GitError("git cat-file --batch stopped answering")
            if header.endswith((b" missing\n", b" ambiguous\n")):
                out.append((header, None))
                continue
            data = pipe.stdout.read(int(header.split()[2]))
            pipe.stdout.read(1)
            out.append((header, data))
    return out


def _read_batches(oids: Sequence[str], ask: Callable[[bytes], bytes]) -> dict[str, tuple[str, bytes]]:
    """oid -> (type, content) of OIDS from `cat-file --batch`, which ASK runs on each batch of names (4096
    a process); missing objects are left out."""
    out: dict[str, tuple[str, bytes]] = {}
    unique = list(dict.fromkeys(oids))
    for start in range(0, len(unique), 4096):
        data, i = ask("".join(f"{oid}\n" for oid in unique[start:start + 4096]).encode()), 0
        while i < len(data):
            end = data.index(b"\n", i)
            header, i = data[i:end].split(), end + 1
            if len(header) != 3:
                continue            # `<name> missing` (or ambiguous)
            size = int(header[2])
            out[header[0].decode()] = (header[1].decode(), data[i:i + size])
            i += size + 1
    return out


def _blobs(batch: dict[str, tuple[str, bytes]]) -> dict[str, bytes]:
    return {oid: data for oid, (kind, data) in batch.items() if kind == "blob"}


def _parse_commit(data: bytes) -> dict[str, object]:
    """A commit object's tree, parents, author/committer timestamps and message."""
    head, _, message = data.partition(b"\n\n")
    info: dict[str, object] = {"parents": [], "message": message.decode("utf-8", "replace")}
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            info["tree"] = value.decode()
        elif key == b"parent":
            info["parents"].append(value.decode())  # type: ignore[union-attr]
        elif key in (b"author", b"committer"):
            stamp = value.rsplit(b" ", 2)
            if key == b"author":        # who and when: what a rebase or an amend keeps of a commit
                info["author"] = value.decode("utf-8", "replace")
            info[key.decode() + "_time"] = int(stamp[1]) if len(stamp) == 3 and stamp[1].isdigit() else 0
    return info
