"""Refs: resolving names, moving a ref (compare and swap), fetching from a local repository without
fetch's cost (its ref write in the background), listing refs, the branches work trees have."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from carrytool.errors import EnvironmentProblem, GitError
from carrytool.gitlayer.env import ZERO, git_argv

# the names git tries for a short ref name, in order (refs.c ref_rev_parse_rules; the first is the name)
_REF_RULES = ("refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD")
_REF_CLASH = re.compile(r"'([^']+)' exists; cannot create '")     # update-ref's directory/file clash


@dataclass
class _RefWrite:
    """fetch_present's `update-ref --stdin`, running while the caller goes on: VALUES is what each ref of
    its fetch holds once it lands (a source the remote did not advertise: the value the ref had)."""

    proc: subprocess.Popen
    values: dict[str, str]
    scope: frozenset[str]

    def wait(self) -> bytes:
        """Wait for it to end; its stderr."""
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        self.proc.wait()
        return err


class Refs:
    """Refs: reading, writing, fetching into and listing them; the work trees' branches."""

    # Git's state this reads or updates (all of it made in Git.__init__): git_dir, bare, common_dir, before_ref_write,
    # _ref_write, _refs_later, _abbreviations

    def rev_parse(self, rev: str) -> str | None:
        """`rev-parse --verify -q REV^{commit}`: the full SHA of a commit, or None."""
        if rev.startswith("-"):
            return None
        proc = self.run("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def commit_by_abbreviation(self, name: str) -> str | None:
        """The full SHA of the commit NAME (7 to 40 hex digits: a union's folded head) abbreviates, or None
        (no such commit, or ambiguous); asked once a run, so every reader of the run gets one answer, and a kept
        plan records the answers it was composed with (`abbreviations_asked`)."""
        if name not in self._abbreviations:
            found = self.rev_parse(name)
            self._abbreviations[name] = found if found and found.startswith(name.lower()) else None
        return self._abbreviations[name]

    def abbreviations_asked(self) -> dict[str, str | None]:
        """Every answer `commit_by_abbreviation` gave this run, by name."""
        return dict(self._abbreviations)

    def ref_value(self, ref: str) -> str | None:
        """The object a full ref name points at, or None when the ref does not exist."""
        proc = self.run("rev-parse", "--verify", "-q", "--end-of-options", ref, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    # -- refs ---------------------------------------------------------------------------------------
    def update_ref(self, ref: str, new: str, old: str | None, message: str) -> bool:
        """`update-ref REF NEW OLD`: move REF only if it still holds OLD (None: must not exist).

        False when REF no longer holds OLD (someone moved it); any other failure (a read-only ref
        store, a name that clashes with an existing ref, a full disk) raises GitError with git's reason.
        """
        self.keep(new)
        self.migrate_objects()
        if self.before_ref_write is not None:
            self.before_ref_write()
        self.recheck_kept()        # what a concurrent repack dropped since it was settled: the ref never names it missing
        proc = self.run("update-ref", "-m", message, "--no-deref", ref, new, old or ZERO, check=False, migrate=False)
        if proc.returncode == 0:
            # the ref moved: what a repack dropped in the meantime is written again, here or at close, which
            # checks again; failing to here (a concurrent prune deleting index-pack's file) is not "not moved"
            with contextlib.suppress(GitError, EnvironmentProblem):
                self.recheck_kept()
            return True
        if self.ref_value(ref) != old:
            return False
        raise GitError(f"cannot write {ref}", stderr=proc.stderr.decode("utf-8", "replace"),
                       hint="check that the repository and its refs are writable and that no other ref "
                            f"clashes with {ref}")

    def fetch_present(self, url: str, specs: dict[str, str]) -> set[str] | None:
        """`git fetch URL +SRC:DST...` from a local repository whose objects this one already has, without
        fetch's own cost (a few hundred refs: its ref matching and per-ref updates take most of 0.2 s):
        `ls-remote URL` (the same transport, so the same advertised refs), fetch's connectivity check
        (`rev-list --objects --stdin --not --all`) on the new tips, then one atomic `update-ref --stdin`
        of the refs whose value changes. Returns the sources URL does not advertise (fetch's "couldn't find
        remote ref"; their DSTs are left as they were). None when this shortcut does not apply and nothing
        was written: a remote URL, a SHA or unforced source, a shallow repository, an object or its history
        missing here (fetch downloads it), a partial clone (its promisor remote would be asked for missing
        objects), any git failure (fetch then says why).

        Within `refs_in_background` the refs are written by an `update-ref` that runs while the caller
        goes on (see there)."""
        if not (os.path.isabs(url) and os.path.isdir(url)) or (self.common_dir / "shallow").exists() or \
                not all(src.startswith("+refs/") and dst.startswith("refs/") for src, dst in specs.items()):
            return None
        # a partial clone fetches a missing object on demand from its promisor remote, which the manifest
        # never names: the connectivity check below would read from it, so fetch (from URL) does the work;
        # so does config that makes fetch read elsewhere or see fewer refs here: a URL rewritten
        # (`url.<base>.insteadOf`), refs hidden from fetch's own connectivity check (`hideRefs`)
        promisor = self.run("config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor|"
                            r"url\..*\.insteadof|(fetch|transfer)\.hiderefs)$", check=False)
        if promisor.returncode != 1:
            return None
        listed = self.run("ls-remote", "--end-of-options", url, check=False)
        if listed.returncode != 0:
            return None
        advertised: dict[str, str] = {}
        for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
            oid, _, name = line.partition("\t")
            advertised.setdefault(name, oid)
        for src in specs:
            name = src[1:]
            # fetch takes a source it does not find by git's ref-name rules (`refs/tags/NAME`, ...)
            if name not in advertised and any(rule % name in advertised for rule in _REF_RULES):
                return None
        current = self.refs_named(list(specs.values()))
        if current is None:
            return None
        updates = {dst: advertised[src[1:]] for src, dst in specs.items()
                   if src[1:] in advertised and current.get(dst) != advertised[src[1:]]}
        if updates:
            self.settle_refs()
            tips = "".join(f"{oid}\n" for oid in dict.fromkeys(updates.values())).encode()
            check = subprocess.run(git_argv("rev-list", "--objects", "--stdin", "--not", "--all", "--quiet",
                                            "--alternate-refs"), cwd=self.git_dir, input=tips, capture_output=True,
                                   env=self.env({"GIT_ALTERNATE_OBJECT_DIRECTORIES": ""}, in_repo=True))
            if check.returncode != 0:
                return None
            commands = "".join(f"update {dst} {oid}\n" for dst, oid in updates.items()).encode()
            if self._refs_later:
                self._start_ref_write(commands, {**current, **updates}, frozenset(specs.values()))
            elif self.run("update-ref", "-m", "carrytool: fetch", "--stdin", input=commands,
                          check=False).returncode != 0:
                return None
        return {src for src in specs if src[1:] not in advertised}

    def _start_ref_write(self, commands: bytes, values: dict[str, str], scope: frozenset[str]) -> None:
        self.flush_objects()
        proc = subprocess.Popen(git_argv("update-ref", "-m", "carrytool: fetch", "--stdin"), cwd=self.git_dir,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=self.env(in_repo=True))
        self._ref_write = _RefWrite(proc, values, scope)
        try:
            proc.stdin.write(commands)      # update-ref reads all of it before it writes a ref
        except OSError:
            pass                            # it exited early: settle_refs says why
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    @contextlib.contextmanager
    def refs_in_background(self) -> Iterator[None]:
        """Within this block fetch_present's ref update runs in the background, beside the caller's work
        (a few hundred new refs cost a file each: 0.15-0.25 s of a cold sync of 300 PRs on a slow disk).
        `refs_named` answers for its refs at once; every other reader or writer of refs, and of the
        object store, waits for it first (settle_refs). The refs have landed when the block ends (it ends
        inside the repository's lock); a failed write is raised then, unless the block raised first."""
        self._refs_later = True
        try:
            yield
        except BaseException:
            self._reap_ref_write()          # the block's error stands
            raise
        finally:
            self._refs_later = False
        self.settle_refs()

    def _reap_ref_write(self) -> tuple[int, bytes] | None:
        """Wait for a background ref write, if one runs: its exit code and stderr."""
        write, self._ref_write = self._ref_write, None
        if write is None:
            return None
        err = write.wait()
        return write.proc.returncode, err

    def settle_refs(self) -> None:
        """Wait for fetch_present's background ref write; GitError when it failed (the refs it names
        are then as they were: update-ref's transaction is all or nothing)."""
        ended = self._reap_ref_write()
        if ended is not None and ended[0] != 0:
            stderr = ended[1].decode("utf-8", "replace")
            clash = _REF_CLASH.search(stderr)
            hint = (f"the ref {clash.group(1)} is in the way: remove it (`git update-ref -d {clash.group(1)}`) "
                    "or move it elsewhere, then run again") if clash else \
                "check that the repository and its refs are writable and that no other ref clashes with them"
            raise GitError("cannot write the fetched refs", stderr=stderr, hint=hint)

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", ref, check=False)

    def refs(self, prefix: str) -> dict[str, str]:
        """`for-each-ref`: ref name -> object under PREFIX."""
        values = self._ref_values([prefix], check=True)
        assert values is not None
        return values

    def refs_named(self, names: Sequence[str]) -> dict[str, str] | None:
        """The value of each ref of NAMES that exists (an exact name, never one below it); None when git fails."""
        wanted = set(names)
        write = self._ref_write
        if write is not None and wanted <= write.scope:     # what a background fetch writes: known now
            return {name: write.values[name] for name in wanted if name in write.values}
        values = self._ref_values(sorted(wanted), check=False) if wanted else {}
        return None if values is None else {name: oid for name, oid in values.items() if name in wanted}

    def _ref_values(self, patterns: Sequence[str], check: bool) -> dict[str, str] | None:
        """`for-each-ref PATTERN...`: ref name -> object; None when git fails and CHECK is off."""
        proc = self.run("for-each-ref", "--format=%(refname) %(objectname)", "--end-of-options", *patterns,
                        check=check)
        if proc.returncode != 0:
            return None
        out = proc.stdout.decode("utf-8", "surrogateescape")
        pairs = (line.split(" ", 1) for line in out.splitlines() if line)
        return {name: oid for name, oid in pairs}

    def checked_out_branches(self) -> dict[str, str]:
        """Branch ref -> work tree path for every work tree of the repository (`branch_states`)."""
        return {ref: where for ref, (where, _state) in self.branch_states().items()}

    def branch_states(self) -> dict[str, tuple[str, str | None]]:
        """Branch ref -> (work tree path, None when checked out there, else "rebase" or "bisect" under way on
        it) for every work tree of the repository. A bare repository without linked work trees (no
        `worktrees` directory, where git lists them) has none: no process asked."""
        if self.bare and not (self.common_dir / "worktrees").is_dir():
            return {}
        out = self.run("worktree", "list", "--porcelain").stdout.decode("utf-8", "surrogateescape")
        result: dict[str, tuple[str, str | None]] = {}
        path, main = "", None
        for line in out.splitlines():
            if line.startswith("worktree "):
                path = line[len("worktree "):]
                main = path if main is None else main
            elif line.startswith("branch "):
                result[line[len("branch "):]] = (path, None)
        # a work tree in the middle of a rebase or a bisect is detached, but the branch is still its own: git
        # puts it back at the end (`rebase --abort` would undo a sync), and `git branch -f` refuses it too
        dirs = [(self.common_dir, main)] if main is not None else []
        for linked in sorted((self.common_dir / "worktrees").glob("*/gitdir")):
            dirs.append((linked.parent, str(Path(_read_text(linked)).parent)))
        for gitdir, where in dirs:
            for state in ("rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START"):
                name = _read_text(gitdir / state)
                if name and where is not None:
                    ref = name if name.startswith("refs/") else f"refs/heads/{name}"
                    result.setdefault(ref, (where, "bisect" if state == "BISECT_START" else "rebase"))
        return result


def _read_text(path: Path) -> str:
    """A small state file of git's, stripped; "" when it is not there."""
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape").strip()
    except OSError:
        return ""
