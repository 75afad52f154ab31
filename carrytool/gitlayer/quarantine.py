"""What a run wrote into its quarantine, moved into the user's store: the objects it keeps, migrated as
one pack that `index-pack` checks and keeps (.keep files, released at close), checked again after a ref
write (a concurrent gc or prune), and the .keep files a killed run left swept."""

from __future__ import annotations

import os
import re
import subprocess
import zlib
from collections.abc import Iterable, Sequence

from carrytool.errors import EnvironmentProblem, GitError
from carrytool.gitlayer.env import git_argv
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.objects import loose_object, pack_entry, pack_of_objects
from carrytool.gitlayer.processes import _owner_dead, _owner_tag
from carrytool.gitlayer.storeindex import store_lacks

# a run of hex digits: the whole runs of 40 (SHA-1) or 64 (SHA-256) are object names (`keep_named`). Runs,
# not a match bounded by look-arounds: the same names, three times as fast (0.70 -> 0.23 s on a 19 MB explain)
_HEX_RUN = re.compile(r"[0-9a-f]{40,}")
_KEEP_PREFIX = "carrytool"


def object_names(text: str) -> list[str]:
    """Every object TEXT names by its full SHA (the whole runs of 40 or 64 hex digits), once each, in order."""
    return list(dict.fromkeys(run for run in _HEX_RUN.findall(text) if len(run) in (40, 64)))


def _keep_message() -> str:
    return _owner_tag(_KEEP_PREFIX)


class Quarantine:
    """Keeping objects and migrating them from the quarantine into the user's store."""

    # Git's state this reads or updates (all of it made in Git.__init__): object_format, object_dir, _stage_objects,
    # _trees, _links, _quarantine, _written, _packed, _copies, _settled, _idx_lookups, _kept, keep_unreferenced,
    # _keep_files, _migrating

    def keep(self, commit: str) -> None:
        """Make sure COMMIT and every object it reaches end up in the user's store (see migrate_objects);
        `update_ref` keeps the commit it writes by itself."""
        self._kept.append(commit)

    def keep_named(self, text: str) -> None:
        """Keep every object TEXT (a report, a lock) names by its full SHA: what a user is shown must
        outlive the run (`git show SHA`, `carrytool diff OLD.lock NEW.lock`)."""
        self._kept.extend(object_names(text))

    def migrate_objects(self, *, later: bool = False, again: Sequence[str] | None = None) -> None:
        """Move the objects written so far that must persist from the quarantine into the user's store,
        as one pack (made in process from their loose files: fast compression, a composed tree as a
        delta of the last tree of its size, no delta search) that `index-pack` checks and indexes with a .keep; their loose copies stay in the quarantine until close
        (recheck_kept writes again what a concurrent prune removes). What must persist: everything a kept
        commit reaches and, with `keep_unreferenced`, everything.

        Composing writes its objects (merge results, trees, commits) into a quarantine in the scratch
        directory, as git's own receive-pack does: a few hundred loose files per run cost little there,
        and the user's repository gets one pack instead of a file per object. Runs before anything
        writes to the user's repository (a ref must never name an object only the quarantine has) and
        on close; what a crash leaves in the quarantine no ref names.

        LATER: only what the kept commits reach (whatever `keep_unreferenced` says), packed and indexed in a
        thread while the caller goes on (sync's landing checks, which only read); the next call, and close,
        wait for it first, and the next call raises what it failed with. The fetched refs have landed
        first, as before anything that writes to the store (settle_refs).

        AGAIN: exactly these objects (of the quarantine), whatever reaches them: recheck_kept's, which a
        concurrent repack or prune took from the store after they were settled (a kept commit still there
        may name them: a walk from it would stop at it)."""
        self._await_migration()
        self.settle_refs()
        self.flush_objects()
        if self._quarantine is None:
            return
        # oid -> its loose file ("" when in one of the quarantine's packs): the run's own objects in the
        # order they were written, then those git wrote, by name (the pack is the same on any file system)
        quarantine, packed = str(self._quarantine), self._packed
        present: dict[str, str] = {oid: "" if oid in packed else f"{quarantine}/{oid[:2]}/{oid[2:]}"
                                   for oid in self._written}
        for fan in sorted(os.scandir(quarantine), key=lambda entry: entry.name):
            if len(fan.name) == 2 and fan.is_dir():
                for oid, path in sorted((fan.name + f.name, f.path) for f in os.scandir(fan.path)
                                        if len(f.name) in (38, 62)):
                    present.setdefault(oid, path)
        if not present:
            return
        settled = self._settled
        paths: dict[str, bytes] = {}        # blob -> its path, for the pack's deltas between a file's versions
        if again is not None:
            wanted = [oid for oid in again if oid in present and oid not in settled]
        elif (self.keep_unreferenced and not later) or not self._stage_objects:
            wanted = [oid for oid in present if oid not in settled]
        else:
            wanted = self._new_reachable(self._kept, {k: v for k, v in present.items() if k not in settled}, paths)
        if not wanted:
            return
        missing = self._not_in_store(wanted)
        self._freshen(set(wanted) - set(missing))
        settled.update(wanted)
        wanted = missing
        if not wanted:
            return
        try:
            (self.object_dir / "pack").mkdir(exist_ok=True)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot write into {self.object_dir / 'pack'}: {exc.strerror}",
                                     hint="check that the repository's object store is writable") from None
        # packed here from the quarantine's loose files (no pack-objects process, no delta search),
        # indexed into the user's store by index-pack, which checks every object, with a .keep that exists
        # before the pack does, as receive-pack does: a concurrent `git repack -a -d` or gc cannot delete
        # the pack while no ref names its objects yet. The .keep goes at close.
        args = ("index-pack", "--stdin", f"--keep={_keep_message()}")
        argv = git_argv(*args)
        cwd, env = self._placement(args, {"GIT_OBJECT_DIRECTORY": str(self.object_dir),
                                          "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""})
        copies, stored, names = self._copies, self._packed, [paths.get(oid) for oid in wanted]

        def read(oid: str) -> tuple[bytes, bytes]:
            spot = stored.get(oid)
            if spot is not None:
                return pack_entry(_read_file(*spot))
            return loose_object(_read_file(present[oid]))

        def index() -> subprocess.CompletedProcess:    # reads only files the run already wrote, and the copies
            try:
                packed = pack_of_objects((copies.get(oid) or read(oid) for oid in wanted), self.object_format, names)
            except (OSError, zlib.error, ValueError, KeyError, IndexError) as exc:
                raise GitError(f"cannot read the quarantine's objects: {exc}") from None
            return subprocess.run(argv, cwd=cwd, input=packed, capture_output=True, env=env)

        if later:
            self._migrating = (args, Later(index))
        else:
            self._indexed(args, index())

    def _await_migration(self) -> None:
        """Wait for a migration started with `later` (see migrate_objects), and raise what it failed with."""
        if self._migrating is None:
            return
        args, job = self._migrating
        job.join()                         # interrupted: still known, close waits for it again
        self._migrating = None
        self._indexed(args, job.result())

    def _indexed(self, args: tuple[str, ...], proc: subprocess.CompletedProcess) -> None:
        """The pack ARGS indexed into the store by PROC: its .keep is released at close. The quarantine's
        loose copies stay until close too: what a concurrent prune removes from the store after all can be
        written again (see recheck_kept)."""
        if proc.returncode != 0:
            raise self.scratch_problem(proc.stderr) or GitError(
                f"`git {' '.join(args[:3])}` failed (exit {proc.returncode})",
                stderr=proc.stderr.decode("utf-8", "replace"))
        kind, _, name = proc.stdout.decode().strip().partition("\t")
        if kind == "keep":
            self._keep_files.append(self.object_dir / "pack" / f"pack-{name}.keep")

    def recheck_kept(self) -> None:
        """After a ref was written: the objects of the run that must persist are all in the store (a
        concurrent gc or prune could have removed any of them, e.g. one found there and not written);
        whatever is missing is packed again from the quarantine's copies, those exactly (a kept commit
        still in the store may name them). Also before a push, which reads the store alone (see run)."""
        if self._quarantine is None or not self._settled:
            return
        gone = self._not_in_store(sorted(self._settled))
        if gone:
            self._settled.difference_update(gone)
            self.migrate_objects(again=gone)

    def _release_keeps(self) -> None:
        for keep in self._keep_files:
            keep.unlink(missing_ok=True)
        self._keep_files.clear()

    def _sweep_stale_keeps(self) -> None:
        """Remove the .keep files of carrytool runs whose process is gone (a kill -9 between migrating
        and closing): only carrytool's, known by their message, and only of dead processes on this host."""
        pack = self.object_dir / "pack"
        try:
            keeps = [p for p in pack.iterdir() if p.name.endswith(".keep")]
        except OSError:
            return
        for keep in keeps:
            try:
                text = keep.read_text("utf-8", "replace").strip()
            except OSError:
                continue
            if _owner_dead(text, _KEEP_PREFIX):
                keep.unlink(missing_ok=True)

    def _freshen(self, oids: Iterable[str]) -> None:
        """Touch the loose files of OIDS in the user's store (objects the run needs that the store
        already had), as git does when it is asked to write an object it has: an expiring prune then
        leaves them. Packed ones are not touched (their pack is shared with everything else); for them,
        and for `prune --expire=now`, the kept objects are checked again after update-ref and at close
        (see recheck_kept) and written again from the quarantine's copies."""
        store = str(self.object_dir)
        for oid in oids:
            try:
                os.utime(f"{store}/{oid[:2]}/{oid[2:]}")
            except OSError:
                pass                        # packed (or gone: recheck_kept writes it again)

    def store_lacks(self, oids: Sequence[str]) -> list[str]:
        """Those of OIDS (full object names) the user's store lacks: what only this run's quarantine holds
        counts as lacking, as does a name no object has."""
        return self._not_in_store(list(oids)) if oids else []

    def _not_in_store(self, oids: list[str]) -> list[str]:
        """Those of OIDS the user's store lacks (carrytool writes objects it computed without asking
        whether the store has them): read from its loose files and pack indexes in process (see
        storeindex), or, where that reader cannot tell, one `cat-file --batch-check` in the store alone."""
        if self.object_format == "sha1":
            lacks = store_lacks(str(self.object_dir), oids, self._idx_lookups)
            if lacks is not None:
                return lacks
        where = {"GIT_ALTERNATE_OBJECT_DIRECTORIES": ""}
        out = self.run("cat-file", "--batch-check=%(objectname)", env=where,
                       input="".join(f"{oid}\n" for oid in oids).encode()).stdout.decode()
        have = {line for line in out.splitlines() if not line.endswith(" missing")}
        return [oid for oid in oids if oid not in have]

    def _new_reachable(self, roots: Sequence[str], present: dict[str, str],
                       paths: dict[str, bytes] | None = None) -> list[str]:
        """The objects in PRESENT (the quarantine) that ROOTS reach: a walk that stops at every object
        already in the user's store (which, like any object there, has everything it names). Blobs are
        known by their tree entries and never read; trees come from the tree cache where they can.
        PATHS, when given, gets the path each blob was found at (commits' trees are walked oldest first,
        so a file's versions come in the order they were composed)."""
        out: list[str] = []
        stack = list(dict.fromkeys(r for r in roots if r in present))
        seen: set[str] = set(stack)
        where: dict[str, bytes] = {}        # tree -> the path it was found at, with a trailing slash
        while stack:
            oid = stack.pop()
            out.append(oid)
            if oid in self._trees:
                named = [(e[2], e[1], e[3]) for e in self._trees[oid]]
            elif oid in self._links:
                named = [(link, "commit", b"") for link in self._links[oid]]
            else:
                obj = self.read_object(oid)
                if obj is None or obj[0] not in ("commit", "tree"):
                    continue
                if obj[0] == "tree":
                    named = [(e[2], e[1], e[3]) for e in self.read_tree(oid)]
                else:
                    head = obj[1].split(b"\n\n", 1)[0]
                    named = [(line.split()[1].decode(), "commit", b"") for line in head.split(b"\n")
                             if line.startswith((b"tree ", b"parent "))]
            prefix = where.get(oid, b"")
            for name, kind, entry in named:
                if name in present and name not in seen:
                    seen.add(name)
                    if kind == "blob":
                        out.append(name)
                        if paths is not None:
                            paths[name] = prefix + entry
                    else:
                        stack.append(name)        # a tree or a commit (submodule links are never here)
                        if kind == "tree":
                            where[name] = prefix + entry + b"/"
        return out


def _read_file(path: str, at: int = 0, length: int = -1) -> bytes:
    """The bytes of the file at PATH, or LENGTH of them from offset AT."""
    with open(path, "rb") as f:
        if at:
            f.seek(at)
        return f.read(length)
