"""Writing objects: hashed in process and staged, then flushed before the next git process needs them,
into the quarantine (a pack, or a few loose files) or through `hash-object -w`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from carrytool.errors import GitError
from carrytool.gitlayer.env import is_sha
from carrytool.gitlayer.objectread import _OID
from carrytool.gitlayer.objects import Signature, stored_pack, stored_zlib

COPIES_BUDGET = 64 << 20   # bytes of staged objects kept in memory for migrating (see Git._copies)
# a flush of at least this many objects is written into the quarantine as one pack, fewer as loose files
# (a pack's fixed cost, two files and their checksums, is about that of two loose objects); at most this
# many packs (every object lookup a git process misses goes through each) and bytes in one
QUARANTINE_PACK_MIN = 3
QUARANTINE_PACKS_MAX = 256
QUARANTINE_PACK_BYTES = 1 << 30


class ObjectWrites:
    """Writing objects: commits, blobs, staged objects flushed as a pack, loose files or `hash-object`."""

    # Git's state this reads or updates (all of it made in Git.__init__): _stage_objects, _pending, _tree_of, _links,
    # _quarantine, _fans, _written, _packed, _pack_count, _copies, _copies_size, _use_quarantine

    # -- writing objects ----------------------------------------------------------------------------
    def write_commit(self, tree: str, parents: Sequence[str], author: Signature, committer: Signature,
                     message: str) -> str:
        """Write a commit object with exactly these fields (`hash-object -w -t commit`); return its SHA."""
        lines = [f"tree {tree}"] + [f"parent {p}" for p in parents]
        lines += [f"author {author.line()}", f"committer {committer.line()}", "", message]
        body = "\n".join(lines)
        if not body.endswith("\n"):
            body += "\n"
        sha = self.write_object("commit", body.encode("utf-8", "surrogateescape"))
        if _OID.match(tree) and len(self._links) <= 20000:
            self._tree_of[sha] = tree
            self._links[sha] = [tree, *parents]
        return sha

    def write_object(self, kind: str, data: bytes) -> str:
        """Write one object and return its SHA: hashed here and staged (written in a batch before the next
        git process needs it), or, outside sha1 repositories, through `hash-object -w --stdin-paths`."""
        if self._stage_objects:
            sha = hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()
            self._pending.setdefault(sha, (kind, data))
            return sha
        return self._hash_objects(kind, [data])[0]

    def flush_objects(self) -> None:
        """Write every staged object: into the quarantine, in process, as one pack (and its index) or, for
        a few objects, as loose files; or without a quarantine through `hash-object --stdin-paths` (one
        batch per kind; SHAs checked)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        if self._stage_objects and self._use_quarantine:
            self.private_dir()
            try:
                fresh = [(sha, kind, data) for sha, (kind, data) in pending.items() if sha not in self._packed]
                if (len(fresh) >= QUARANTINE_PACK_MIN and self._pack_count < QUARANTINE_PACKS_MAX
                        and sum(len(data) for _sha, _kind, data in fresh) < QUARANTINE_PACK_BYTES):
                    self._write_pack(fresh)
                else:
                    for sha, kind, data in fresh:
                        self._write_loose(sha, kind, data)
                self._written.update(dict.fromkeys(pending))
                for sha, (kind, data) in pending.items():
                    if self._copies_size < COPIES_BUDGET:
                        self._copies[sha] = (kind.encode(), data)
                        self._copies_size += len(data)
            except OSError as exc:
                problem = self.scratch_problem(f"{exc.strerror}".encode())
                if problem is None:
                    raise
                raise problem from None
            return
        by_kind: dict[str, list[tuple[str, bytes]]] = {}
        for sha, (kind, data) in pending.items():
            by_kind.setdefault(kind, []).append((sha, data))
        for kind, items in by_kind.items():
            written = self._hash_objects(kind, [data for _sha, data in items])
            if written != [sha for sha, _data in items]:
                raise GitError(f"git wrote {kind} objects with other names than carrytool computed")

    def _write_pack(self, objects: list[tuple[str, str, bytes]]) -> None:
        """OBJECTS as one pack in the quarantine: the pack, then its .idx, each written beside and renamed
        into place. A git process finds a pack by its .idx (a long-lived one looks again when an object
        is not where it looked), so it never meets half of one; removing a few packs at close costs far
        less than a file per object."""
        assert self._quarantine is not None
        pack, idx, spans = stored_pack((sha, kind.encode(), data) for sha, kind, data in objects)
        stem = f"{self._quarantine}/pack/pack-{pack[-20:].hex()}"
        for suffix, data in ((".pack", pack), (".idx", idx)):
            temp = f"{self._quarantine}/pack/tmp_{suffix[1:]}_{pack[-20:].hex()}"
            _write_whole(temp, data)
            os.replace(temp, stem + suffix)
        self._pack_count += 1
        for (sha, _kind, _data), (at, length) in zip(objects, spans):
            self._packed[sha] = (stem + ".pack", at, length)

    def _write_loose(self, sha: str, kind: str, data: bytes) -> None:
        """One loose object in the quarantine: written beside, then renamed (readers never see half)."""
        assert self._quarantine is not None
        folder = f"{self._quarantine}/{sha[:2]}"      # strings and os calls: a few hundred per run
        target = f"{folder}/{sha[2:]}"
        if os.path.exists(target):
            return
        if sha[:2] not in self._fans:
            os.makedirs(folder, exist_ok=True)
            self._fans.add(sha[:2])
        temp = f"{folder}/tmp_obj_{sha[2:]}"
        # stored, not compressed (core.looseCompression=0): the scratch is private; the pack compresses
        _write_whole(temp, stored_zlib(f"{kind} {len(data)}\0".encode() + data))
        os.replace(temp, target)

    def _hash_objects(self, kind: str, blobs: list[bytes]) -> list[str]:
        pipe = self._pipe(f"hash-{kind}", ["hash-object", "-w", "-t", kind, "--stdin-paths", "--no-filters"])
        folder = self.tmpdir() / "objects"
        folder.mkdir(exist_ok=True)
        paths = []
        for n, data in enumerate(blobs):
            path = folder / f"{kind}.{n}"
            path.write_bytes(data)
            paths.append(str(path).encode() + b"\n")
        out: list[str] = []
        with pipe.lock:
            for start in range(0, len(paths), 256):      # bounded batches: pipes have finite buffers
                chunk = paths[start:start + 256]
                pipe.stdin.write(b"".join(chunk))
                pipe.stdin.flush()
                out += [pipe.stdout.readline().decode().strip() for _ in chunk]
        if not all(is_sha(sha) for sha in out):
            raise GitError(f"git could not write {kind} objects")
        return out

    def write_blob(self, data: bytes) -> str:
        return self.write_object("blob", data)


def _write_whole(path: str, data: bytes) -> None:
    """A new file at PATH holding DATA. os.open/os.write: no buffered file object per file (~40% of
    writing a thousand small files)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
