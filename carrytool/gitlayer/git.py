"""The only module that talks to git: argv lists, plumbing, long-lived batch processes.

Every call runs with a scrubbed environment (no inherited GIT_* that could change results), hooks
disabled, and the merge/diff configuration pinned. Two places to run:

- the user's repository, for what reads or writes refs or talks to a remote (`IN_REPO`): fetch and
  push honour the user's transport settings (insteadOf, credential helpers, proxies, http headers);
- everything else (merging, diffing, reading and writing objects) in a private git dir made per `Git`,
  which shares the user's object store but has no config, no `info/` and no refs of its own, and reads
  no global or system config: the same inputs give the same objects on any machine, whatever the
  user's configuration and attributes, and none of their drivers or filters runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from carrytool.errors import EnvironmentProblem, GitError
from carrytool.gitlayer import markers
from carrytool.gitlayer.env import (
    EMPTY_TREE,
    MIN_GIT,
    PINNED_CONFIG,
    ZERO,
    alternate_path,
    decode_path,
    encode_path,
    fast_tmp_base,
    git_argv,
    git_version,
    hostname,
    is_sha,
    isolated_env,
    parse_version,
    scrubbed_env,
    wait_exit,
)
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.mergepipe import MergePipe, merge_contents_many
from carrytool.gitlayer.objects import (
    REGULAR_MODES,
    Change,
    ConflictStage,
    MergeResult,
    Signature,
    _is_echo,
    _parse_diff_stdin,
    loose_object,
    pack_entry,
    pack_of_objects,
    paths_of,
    stored_pack,
    stored_zlib,
)
from carrytool.gitlayer.storeindex import store_lacks

__all__ = ["Git", "Change", "ConflictStage", "MergeResult", "Signature", "paths_of", "EMPTY_TREE", "MIN_GIT",
           "REGULAR_MODES",
           "PINNED_CONFIG", "ZERO", "decode_path", "encode_path", "git_argv", "git_version", "is_sha",
           "parse_version", "scrubbed_env", "IN_REPO", "work_tree_top"]

# Subcommands that read or write the user's refs or talk to a remote: they run in the user's repository
# (with its configuration: their results do not depend on merge or diff settings). The rest runs isolated.
IN_REPO = frozenset({"fetch", "push", "ls-remote", "rev-parse", "update-ref", "for-each-ref", "show-ref",
                     "symbolic-ref", "worktree", "cat-file", "config", "remote"})
# Of those, the ones that write to the user's repository: objects a run wrote are migrated first.
# the names git tries for a short ref name, in order (refs.c ref_rev_parse_rules; the first is the name)
_REF_RULES = ("refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD")
_WRITES_REPO = frozenset({"fetch", "push", "update-ref", "remote", "config"})
# Of those, the ones that read or write refs (the private git dir has none): they wait for a background
# ref write (Git.settle_refs). cat-file is only given object names here (read_object resolves the rest).
_READS_REFS = IN_REPO - {"cat-file", "config", "ls-remote"}
SIDE_BY_SIDE = 8           # `git merge-base` processes at a time (Git.merge_base_many)
COPIES_BUDGET = 64 << 20   # bytes of staged objects kept in memory for migrating (see Git._copies)
# a flush of at least this many objects is written into the quarantine as one pack, fewer as loose files
# (a pack's fixed cost, two files and their checksums, is about that of two loose objects); at most this
# many packs (every object lookup a git process misses goes through each) and bytes in one
QUARANTINE_PACK_MIN = 3
QUARANTINE_PACKS_MAX = 256
QUARANTINE_PACK_BYTES = 1 << 30
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF_CLASH = re.compile(r"'([^']+)' exists; cannot create '")     # update-ref's directory/file clash
# a run of hex digits: the whole runs of 40 (SHA-1) or 64 (SHA-256) are object names (`keep_named`). Runs,
# not a match bounded by look-arounds: the same names, three times as fast (0.70 -> 0.23 s on a 19 MB explain)
_HEX_RUN = re.compile(r"[0-9a-f]{40,}")


_KEEP_PREFIX = "carrytool"
# the modes git writes (and `mktree` writes as given): a tree that has only these, in git's order, is the
# tree `mktree` writes for its entries, so `splice_tree` may edit its bytes
_MODES = {b"40000": ("040000", "tree"), b"100644": ("100644", "blob"), b"100755": ("100755", "blob"),
          b"120000": ("120000", "blob"), b"160000": ("160000", "commit")}     # a canonical mode's entry
_CANONICAL_MODES = frozenset(_MODES)
_TREE_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.DOTALL)       # mode, name, binary object name


def _owner_tag(prefix: str) -> str:
    """PREFIX pid PID host HOST: who made a .keep file or a scratch directory."""
    return f"{prefix} pid {os.getpid()} host {hostname()}"


def _keep_message() -> str:
    return _owner_tag(_KEEP_PREFIX)


def _owner_dead(text: str, prefix: str) -> bool:
    """Whether TEXT is an owner tag of PREFIX naming a process of this host that no longer runs."""
    match = re.fullmatch(re.escape(prefix) + r" pid (\d+) host (\S+)", text.strip())
    if not match or match.group(2) != hostname():
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False                    # alive (another user's): not ours to judge
    return False


_SCRATCH_OWNER = ".carrytool-owner"
_SCRATCH_PREFIX = "carrytool-scratch"


def _sweep_dead_scratch(base: Path) -> None:
    """Remove the scratch directories in BASE that carrytool runs killed before their close left behind
    (a quarantine in memory-backed scratch holds RAM until reboot): only `carrytool-*` directories of
    this user holding carrytool's owner file, whose process is gone on this host."""
    try:
        found = [p for p in base.iterdir() if p.name.startswith("carrytool-")]
    except OSError:
        return
    for path in found:
        try:
            if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
                continue
            text = (path / _SCRATCH_OWNER).read_text("utf-8", "replace")
        except OSError:
            continue
        if _owner_dead(text, _SCRATCH_PREFIX):
            shutil.rmtree(path, ignore_errors=True)


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


class _Pipe:
    """A long-lived git process spoken to line by line (cat-file, hash-object, mktree)."""

    def __init__(self, git: Git, args: Sequence[str]) -> None:
        self._proc = subprocess.Popen(
            git_argv(*args), cwd=git.private_dir(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=git.env())
        self.lock = threading.Lock()

    @property
    def stdin(self):  # noqa: ANN201 - a binary file object
        return self._proc.stdin

    @property
    def stdout(self):  # noqa: ANN201
        return self._proc.stdout

    def hang_up(self) -> None:
        """Close its stdin: git ends (`close` waits for it)."""
        try:
            self._proc.stdin.close()      # also when git already exited (it could not write an object)
        except OSError:
            pass

    def close(self) -> None:
        self.hang_up()
        if self._proc.poll() is None:
            try:
                wait_exit(self._proc, 10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc.stdout.close()



# zero-context patches with full blob names, for the landing checks and explain's evidence
_PATCH_ARGS = ("diff-tree", "-r", "-p", "-U0", "--stdin", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
               "--full-index", "--ignore-submodules=none")
SPLIT_MERGES_AT = 8       # a batch of this many independent merges is shared by two merge-tree processes
LATER_CHUNK = 8           # merge_trees_later's merges per chunk (each one costs a flush merge)


def _halves(weights: Sequence[int]) -> tuple[list[int], list[int]]:
    """The indices of WEIGHTS in two groups of about equal total weight, each in index order: the
    heaviest first, each to the lighter group so far (ties: the first group). Equal weights alternate."""
    loads, groups = [0, 0], ([], [])  # type: tuple[list[int], tuple[list[int], list[int]]]
    for n in sorted(range(len(weights)), key=lambda n: (-weights[n], n)):
        side = 0 if loads[0] <= loads[1] else 1
        loads[side] += max(weights[n], 1)
        groups[side].append(n)
    return sorted(groups[0]), sorted(groups[1])


def _answers(cache: dict, keys: Sequence, ask: Callable[[list], Sequence], *,
             full: Callable[[int], bool]) -> list:
    """The answer to each of KEYS: from CACHE, the others asked once each, in one call of ASK (in first-seen
    order) and then kept. A CACHE that FULL(how many are added) says is full is emptied first; this call's
    answers never come from it after that (a caller's earlier answer cannot go missing)."""
    found = {key: cache[key] for key in keys if key in cache}
    missing = list(dict.fromkeys(key for key in keys if key not in found))
    if missing:
        found.update(zip(missing, ask(missing)))
        if full(len(missing)):
            cache.clear()
        cache.update(found)
    return [found[key] for key in keys]


class LaterMerges:
    """Merges sent to a merge-tree process of their own as they come (Git.merge_trees_later), in chunks of
    LATER_CHUNK; calling it returns every answer, in order."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._pipe: MergePipe | None = None
        self._chunks: list[list[str]] = []      # sent
        self._pending: list[str] = []           # not a whole chunk yet
        self._answered = False

    def add(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Merge PAIRS (commits) too: each whole chunk is sent to git now."""
        self._pending += [f"{a} {b}" for a, b in pairs]
        whole = len(self._pending) - len(self._pending) % LATER_CHUNK
        if whole:
            self._send([self._pending[n:n + LATER_CHUNK] for n in range(0, whole, LATER_CHUNK)])
            del self._pending[:whole]

    def send_rest(self) -> None:
        """Send what is not a whole chunk too: nothing more will be added."""
        if self._pending:
            self._send([self._pending])
            self._pending = []

    def _send(self, chunks: list[list[str]]) -> None:
        if self._pipe is None:
            self._pipe = self._git._new_merge_pipe()
            self._git._later_pipes.append(self._pipe)
        self._pipe.send_chunks(chunks)
        self._chunks += chunks

    def __call__(self) -> list[MergeResult]:
        if self._answered:
            raise RuntimeError("merge_trees_later's answers were taken already")
        self._answered = True
        self.send_rest()
        pipe = self._pipe
        if pipe is None:
            return []
        try:
            return [result for chunk in self._git._meet(pipe, self._chunks) for result in chunk]
        finally:
            pipe.close(stop=True)
            self._git._later_pipes.remove(pipe)
            self._pipe = None


def merge_line(ours: str, theirs: str, base: str | None = None) -> str:
    """A `merge-tree --stdin` line: `OURS THEIRS`, or with BASE (git that takes it) `BASE -- OURS THEIRS`."""
    return f"{base} -- {ours} {theirs}" if base else f"{ours} {theirs}"


class AsideMerges:
    """Merges sent one at a time to a merge-tree process of their own (Git.merges_aside), each as soon as
    it is known, and answered in the order sent: the caller goes on meanwhile (composing, in the run's
    own merge-tree) and git merges on another core. `take` waits for an answer; `close` ends the process
    (what it was still merging is not needed)."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._pipe: MergePipe | None = None
        self._flushes: list[int] = []           # per merge sent: the flush merges after it (MergePipe.ready)
        self._answers: list[MergeResult] = []

    def send(self, ours: str, theirs: str, *, base: str | None = None) -> int:
        """Merge as Git.merge_one would (BASE only where git takes it); its ticket for `take`."""
        if self._pipe is None:
            self._pipe = self._git._new_merge_pipe()
            self._git._later_pipes.append(self._pipe)
        self._pipe.send_chunks([[merge_line(ours, theirs, base)]])
        self._flushes.append(1)
        return len(self._flushes) - 1

    def take(self, ticket: int) -> MergeResult:
        """The answer to merge TICKET (waiting for it, and for those sent before it)."""
        pipe = self._pipe
        assert pipe is not None and ticket < len(self._flushes)
        while True:
            with pipe.condition:        # held from the look to the wait: no answer arrives unseen between
                self._collect(pipe)
                if len(self._answers) > ticket:
                    return self._answers[ticket]
                if pipe.wait(0.05):
                    continue
            # no answer for a while: should a platform's stdio buffer be larger than expected, one more
            # flush merge after everything sent pushes what it holds out (its answer follows the last
            # merge sent: `ready` drops it with that merge's own)
            pipe.push()
            self._flushes[-1] += 1

    def first_clean(self) -> int | None:
        """The first merge answered clean so far, if any: what git has answered is taken, without waiting."""
        if self._pipe is not None:
            self._collect(self._pipe)
        return next((n for n, answer in enumerate(self._answers) if answer.clean), None)

    def _collect(self, pipe: MergePipe) -> None:
        """Take every answer git has given so far, in order, without waiting."""
        while len(self._answers) < len(self._flushes):
            got = pipe.ready(1, self._flushes[len(self._answers)])
            if got is None:
                return
            self._answers += got

    def close(self) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.close(stop=True)
            if pipe in self._git._later_pipes:      # (an interrupt may have come before it was listed)
                self._git._later_pipes.remove(pipe)


def _cores() -> int:
    """CPUs this process may run on (its affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

class Git:
    """A repository and the git commands carrytool runs in it."""

    def __init__(self, repo: Path | str, *, quarantine: bool = False, exact: bool = False) -> None:
        """QUARANTINE: objects this run writes go to a quarantine first (see migrate_objects): for
        commands that write many objects and name few (sync, explain). Without it every object is
        written into the repository's store at once (what a command that must survive a kill -9
        between writing an object and naming it in a file needs). EXACT: REPO must be a repository (its
        work tree's top or its git dir), not a folder inside one (a `--repo` the user named)."""
        self.version = git_version()
        repo = Path(repo)
        if not repo.exists():
            raise EnvironmentProblem(f"{repo} does not exist", hint="pass --repo DIR of a git repository")
        if not repo.is_dir():           # (helper-103: a file was a NotADirectoryError traceback)
            raise EnvironmentProblem(f"{repo} is not a directory", hint="pass --repo DIR of a git repository")
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--is-bare-repository",
                               "--show-object-format", "--git-common-dir", "--git-path", "objects"],
                              cwd=repo, capture_output=True, env=scrubbed_env())
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if proc.returncode != 0 or len(lines) != 5:
            raise EnvironmentProblem(f"{repo} is not a git repository",
                                     hint="run inside the fork's clone, or pass --repo DIR")
        self.git_dir = Path(lines[0])
        self.bare = lines[1] == "true"
        if exact:
            _refuse_inside(repo, self.git_dir, (repo / lines[3]).resolve(), self.bare)
        self.object_format = lines[2]
        if self.object_format != "sha1":
            raise EnvironmentProblem(
                f"{repo} is a {self.object_format} repository: carrytool reads and writes SHA-1 object names only "
                "(tree parsing, the quarantine's pack, the lock)", hint="run carrytool in a SHA-1 clone of the fork")
        # a linked work tree has its own git dir; refs, objects and the repository lock live in the common dir
        self.common_dir = (repo / lines[3]).resolve()
        self.object_dir = (repo / lines[4]).resolve()
        # sha1 repositories get objects hashed here and written in batches; others one by one
        self._stage_objects = self.object_format == "sha1"
        self._private: Path | None = None
        self._pending: dict[str, tuple[str, bytes]] = {}
        self.repo = repo.resolve()
        self._pipes: dict[str, _Pipe] = {}
        self._tmp: Path | None = None
        self._trees: dict[str, list[tuple[str, str, str, bytes]]] = {}
        self._layouts: dict[str, tuple[bytes, list[int]]] = {}   # canonical tree -> its bytes, entry offsets
        self._tree_of: dict[str, str] = {}              # commit -> its tree (objects never change)
        self._links: dict[str, list[str]] = {}         # commit this run wrote -> its tree and parents
        self._commits: dict[str, dict[str, object]] = {}  # commit -> commit_info
        self._merge_pipe: MergePipe | None = None
        self._side_pipe: MergePipe | None = None    # a second merge-tree for large batches (see merge_trees)
        self._diff3_pipe: MergePipe | None = None   # the merge-tree that writes diff3 conflicts (merge_diff3)
        self._patches: dict[tuple[str, str], bytes] = {}
        self._prefetch: tuple[list[tuple[str, str]], Later[subprocess.CompletedProcess | None]] | None = None
        self._threads: list[threading.Thread] = []      # callers' threads that run git in the scratch
        self._later_pipes: list[MergePipe] = []     # merge_trees_later's, until they answered
        self._diffs: dict[tuple[str, str, bool], list[Change]] = {}
        self._bases: dict[str, dict[str, str | None]] = {}     # upstream -> head -> merge base
        self._sole: set[tuple[str, str]] = set()      # (upstream, head) whose merge base is their only one
        self._outside: dict[str, dict[str, list[str]]] = {}   # upstream -> the parents of heads' commits not in it
        self._outside_of: dict[tuple[str, str], frozenset[str]] = {}   # (upstream, head) -> `outside`
        self._merged: dict[str, MergeResult] = {}     # merge_trees' answers by stdin line
        self._explicit_bases: bool | None = None
        self._quarantine: Path | None = None
        self._fans: set[str] = set()       # the quarantine's fan-out directories made so far
        self._written: dict[str, None] = {}    # the objects this run wrote into the quarantine, in order
        self._packed: dict[str, tuple[str, int, int]] = {}   # object in a quarantine pack -> pack, offset, length
        self._pack_count = 0               # the packs written into the quarantine
        # what this run wrote into the quarantine, kept (up to COPIES_BUDGET bytes) so that migrating packs
        # it from memory, not from the loose files read back; merge-tree's own objects are read from disk
        self._copies: dict[str, tuple[bytes, bytes]] = {}
        self._copies_size = 0
        self._use_quarantine = quarantine
        self._contents: dict[tuple[str | None, str | None, str | None], tuple[bool, bytes] | None] = {}
        self._settled: set[str] = set()    # quarantined objects found in the store or migrated there
        self._kept: list[str] = []         # commits whose new objects the user's store must get
        # False: objects no kept commit reaches (stand-ins, merges whose result was not used) are left
        # in the quarantine and vanish with it; True: every object written persists
        self.keep_unreferenced = True
        self.before_ref_write: Callable[[], None] | None = None   # a test hook: runs after migrating
        self._keep_files: list[Path] = []  # .keep files of the packs this run wrote into the store
        self._migrating: tuple[tuple[str, ...], Later[subprocess.CompletedProcess]] | None = None   # later
        self._ref_write: _RefWrite | None = None   # fetch_present's update-ref, while it runs (see settle_refs)
        self._refs_later = False                   # within refs_in_background
        if quarantine:
            self._sweep_stale_keeps()

    # -- process plumbing -------------------------------------------------------------------------
    def env(self, extra: dict[str, str] | None = None, *, in_repo: bool = False) -> dict[str, str]:
        """The environment of a git child: isolated in the private git dir (objects it writes go to the
        quarantine, the user's store is read as an alternate), or IN_REPO the user's (reading the
        quarantine too, so that every object the run wrote is visible)."""
        if not in_repo:
            private = str(self.private_dir())
            if self._quarantine is None:
                return isolated_env(private, str(self.object_dir), extra)
            return isolated_env(private, str(self._quarantine), extra, alternates=str(self.object_dir))
        env = scrubbed_env(extra)
        env["GIT_DIR"] = str(self.git_dir)
        env["GIT_NO_REPLACE_OBJECTS"] = "1"
        if self._quarantine is not None and not (extra and "GIT_ALTERNATE_OBJECT_DIRECTORIES" in extra):
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = alternate_path(str(self._quarantine))
        return env

    def private_dir(self) -> Path:
        """Create (once) the private git dir composing commands run in: HEAD, empty refs/, a config that
        says only what the object store needs (format, shared permissions), the user's shallow list."""
        if self._private is None:
            private = self.tmpdir() / "git"
            (private / "refs").mkdir(parents=True)
            if self._use_quarantine:
                quarantine = self.tmpdir() / "objects"
                (quarantine / "pack").mkdir(parents=True)
                (quarantine / "info").mkdir()
                self._quarantine = quarantine
            (private / "HEAD").write_text("ref: refs/heads/carrytool\n")
            config = "[core]\n\tbare = true\n"
            if self.object_format != "sha1":
                config = ("[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
                          f"[extensions]\n\tobjectFormat = {self.object_format}\n")
            shared = self._user_config("core.sharedRepository")
            if shared:
                config += f"[core]\n\tsharedRepository = {shared}\n"
            (private / "config").write_text(config)
            # a shallow clone's history ends where its shallow file says; a link follows later fetches
            os.symlink(self.common_dir / "shallow", private / "shallow")
            self._private = private
        return self._private

    def _user_config(self, key: str) -> str | None:
        proc = subprocess.run(["git", "config", "--get", key], cwd=self.git_dir, capture_output=True,
                              env=self.env(in_repo=True))
        value = proc.stdout.decode("utf-8", "replace").strip()
        return value if proc.returncode == 0 and re.fullmatch(r"[A-Za-z0-9]+", value) else None

    def run(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None, cwd: Path | None = None,
            migrate: bool = True) -> subprocess.CompletedProcess:
        """Run `git ARGS` and return the completed process (bytes): in the user's repository when the
        subcommand is one of IN_REPO, else isolated in the private git dir.

        Objects still staged in memory are written first: every git process sees every object.
        """
        self.flush_objects()
        subcommand = _subcommand(args)
        if subcommand in _READS_REFS:
            self.settle_refs()
        if subcommand in _WRITES_REPO and migrate:
            self.migrate_objects()
        if subcommand == "push" and self._quarantine is not None:
            # a push sends from the user's store alone: pack-objects copies a pack's entry as it stands,
            # and the quarantine's are stored (uncompressed); once it found one object in a quarantine
            # pack it looks there first for every other. What it sends, a kept commit reaches, and every
            # kept object is checked to be in the store first (a repack may have dropped one the store
            # had, which the run then did not pack again): see recheck_kept
            if migrate:
                self.recheck_kept()
            env = {**(env or {}), "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""}
        where, child_env = self._placement(args, env)
        proc = subprocess.run(git_argv(*args), cwd=cwd or where, input=input, capture_output=True, env=child_env)
        if check and proc.returncode != 0:
            problem = self.scratch_problem(proc.stderr)
            if problem is not None:
                raise problem
            raise GitError(f"`git {' '.join(args[:3])}` failed (exit {proc.returncode})",
                           stderr=proc.stderr.decode("utf-8", "replace"))
        return proc

    def _placement(self, args: Sequence[str], env: dict[str, str] | None = None) -> tuple[Path, dict[str, str]]:
        """Where `git ARGS` runs and its environment (with ENV): the user's repository for IN_REPO
        subcommands, else the private git dir. For run, and for the processes other threads run."""
        in_repo = _subcommand(args) in IN_REPO
        return (self.git_dir if in_repo else self.private_dir()), self.env(env, in_repo=in_repo)

    def out(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).stdout.decode("utf-8", "surrogateescape").strip()

    def _pipe(self, name: str, args: Sequence[str]) -> _Pipe:
        pipe = self._pipes.get(name)
        if pipe is None:
            pipe = self._pipes[name] = _Pipe(self, args)
        return pipe

    def tmpdir(self) -> Path:
        """The run's scratch directory (the quarantine, the private git dir, merge inputs), made once and
        marked with its owner (pid, host): a later run removes it should this one be killed."""
        if self._tmp is None:
            base = fast_tmp_base()
            _sweep_dead_scratch(Path(base or tempfile.gettempdir()))
            tmp = Path(tempfile.mkdtemp(prefix="carrytool-", dir=base))
            (tmp / _SCRATCH_OWNER).write_text(_owner_tag(_SCRATCH_PREFIX) + "\n")
            self._tmp = tmp
        return self._tmp

    def scratch_problem(self, stderr: bytes) -> EnvironmentProblem | None:
        """The error to give when a git child failed because the scratch directory (the quarantine) is
        full: a memory-backed one can be small (Docker's /dev/shm is 64 MB). None for any other failure."""
        if self._tmp is None or b"No space left on device" not in stderr:
            return None
        last = " ".join(stderr.decode("utf-8", "replace").strip().splitlines()[-1:])
        return EnvironmentProblem(
            f"the scratch directory {self._tmp} ran out of space ({last})",
            hint="set TMPDIR to a directory on a file system with room (e.g. TMPDIR=/var/tmp): carrytool "
                 "then keeps its scratch there")

    def keep(self, commit: str) -> None:
        """Make sure COMMIT and every object it reaches end up in the user's store (see migrate_objects);
        `update_ref` keeps the commit it writes by itself."""
        self._kept.append(commit)

    def keep_named(self, text: str) -> None:
        """Keep every object TEXT (a report, a lock) names by its full SHA: what a user is shown must
        outlive the run (`git show SHA`, `carrytool diff OLD.lock NEW.lock`)."""
        self._kept.extend(dict.fromkeys(run for run in _HEX_RUN.findall(text) if len(run) in (40, 64)))

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

    def _not_in_store(self, oids: list[str]) -> list[str]:
        """Those of OIDS the user's store lacks (carrytool writes objects it computed without asking
        whether the store has them): read from its loose files and pack indexes in process (see
        storeindex), or, where that reader cannot tell, one `cat-file --batch-check` in the store alone."""
        if self.object_format == "sha1":
            lacks = store_lacks(str(self.object_dir), oids)
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

    def close(self) -> None:
        """Migrate what must persist (checking it arrived), release the packs' .keep files, stop the
        processes and remove the scratch directory, even when migrating failed."""
        try:
            self.migrate_objects()          # waits for a background ref write first (settle_refs)
            self.recheck_kept()
        finally:
            try:
                self._close_processes()     # a migration still running ends here, its .keep known
            finally:
                self._release_keeps()
                if self._tmp is not None:
                    shutil.rmtree(self._tmp, ignore_errors=True)
                    self._tmp = None
                    self._private = None
                    self._quarantine = None
                    self._fans.clear()
                    self._packed.clear()
                    self._written.clear()
                    self._pack_count = 0

    def _close_processes(self) -> None:
        self._reap_ref_write()             # close() is unwinding from an error: the error stands
        # (a second Ctrl-C) a migration's thread reads the quarantine: it ends first, and the .keep of a
        # pack it made is known for close to release; close is unwinding from an error: that error stands
        with contextlib.suppress(Exception):
            self._await_migration()
        if self._prefetch is not None:
            self._prefetch[1].join()
            self._prefetch = None
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        pipes = [p for p in (self._merge_pipe, self._side_pipe, self._diff3_pipe) if p is not None]
        for pipe in (*pipes, *self._pipes.values()):      # every process ends at once, then each is waited for
            pipe.hang_up()
        for merges in pipes:
            merges.close()
        self._merge_pipe = self._side_pipe = self._diff3_pipe = None
        for later in self._later_pipes:
            later.close(stop=True)          # answers nobody asked for (an error came first): not needed
        self._later_pipes.clear()
        for pipe in self._pipes.values():
            pipe.close()
        self._pipes.clear()

    def __enter__(self) -> Git:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        """`cat-file --batch` fed every name at once (one process per 4096): oid -> content; missing
        objects, and objects that are not blobs, are left out. Many blobs at a time, without a round trip
        per object."""
        return _blobs(self._read_batch(oids))

    def join_at_close(self, thread: threading.Thread) -> None:
        """A caller's THREAD that may run git in this run's scratch (read_blobs_later's function, say):
        close waits for it before the scratch goes, even when the caller could not (a second Ctrl-C)."""
        self._threads = [known for known in self._threads if known.is_alive()] + [thread]

    def patch_ids_later(self, commits: Sequence[str]) -> Callable[[], dict[str, str]]:
        """commit -> `git patch-id --stable` of its change without context lines (`-U0`: the same change made
        where the lines around it differ, a rebase onto a moved upstream, has the same id; merges and empty
        commits have none), for each of COMMITS: `log -p` piped into `patch-id`, started now in a thread (it
        touches nothing of this Git's state: a run reads them while it composes); the function returned
        waits for them."""
        if not commits:
            return dict
        self.flush_objects()
        log = ("log", "-p", "-U0", "--no-walk=unsorted", "--no-merges", "--no-color", "--no-ext-diff",
               "--format=commit %H", "--stdin")
        argv, (cwd, env) = git_argv(*log), self._placement(log)
        ids = git_argv("patch-id", "--stable")
        names = "".join(f"{sha}\n" for sha in commits).encode()

        def read() -> bytes:
            with subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL) as diff, \
                    subprocess.Popen(ids, cwd=cwd, env=env, stdin=diff.stdout, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL) as patch:
                assert diff.stdin is not None and diff.stdout is not None
                diff.stdout.close()               # patch-id holds it: log sees a closed pipe if patch-id ends
                try:
                    diff.stdin.write(names)
                    diff.stdin.close()
                except BrokenPipeError:
                    pass
                return patch.communicate()[0]

        job = Later(read, name="carrytool-patch-ids")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it

        def answer() -> dict[str, str]:
            out = job.result().decode("ascii", "replace")
            return {commit: patch for patch, commit in (line.split() for line in out.splitlines()
                                                        if len(line.split()) == 2)}

        return answer

    def read_blobs_later(self, oids: Sequence[str]) -> Callable[[], dict[str, bytes]]:
        """read_blobs in two halves, for another thread: what its process needs is settled now (every
        staged object written, its directory and environment), and the function returned runs it, in any
        thread: it touches nothing of this Git's state. It raises GitError as read_blobs would."""
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

        return lambda: _blobs(_read_batches(oids, ask))

    def _read_batch(self, oids: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        return _read_batches(oids, lambda names: self.run("cat-file", "--batch", input=names).stdout)

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

    def rev_parse(self, rev: str) -> str | None:
        """`rev-parse --verify -q REV^{commit}`: the full SHA of a commit, or None."""
        if rev.startswith("-"):
            return None
        proc = self.run("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def ref_value(self, ref: str) -> str | None:
        """The object a full ref name points at, or None when the ref does not exist."""
        proc = self.run("rev-parse", "--verify", "-q", "--end-of-options", ref, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

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

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """`merge-base --is-ancestor`."""
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0

    def merge_bases(self, upstream: str, heads: Sequence[str]) -> dict[str, str | None]:
        """The merge base of each head with UPSTREAM, from one `rev-list --boundary --parents` walk.

        A head whose walk reaches exactly one boundary commit has that as its base (the common case);
        heads reachable from upstream are their own base; anything else asks `git merge-base`.
        """
        known = self._bases.setdefault(upstream, {})     # kept: explain asks for them before composing does
        unique = [head for head in dict.fromkeys(heads) if head not in known]
        if unique:
            known.update(self._merge_bases(upstream, unique))
        return {head: known[head] for head in dict.fromkeys(heads)}

    def _merge_bases(self, upstream: str, unique: list[str]) -> dict[str, str | None]:
        out = self.run("rev-list", "--boundary", "--parents", *unique, f"^{upstream}").stdout.decode()
        parents: dict[str, list[str]] = {}
        boundary: set[str] = set()
        for line in out.splitlines():
            fields = line.split()
            if not fields:
                continue
            if fields[0].startswith("-"):
                boundary.add(fields[0][1:])
            else:
                parents[fields[0]] = fields[1:]
        self._outside.setdefault(upstream, {}).update(parents)
        result: dict[str, str | None] = {}
        ask: list[str] = []                  # heads whose walk reached several upstream commits
        for head in unique:
            if head not in parents:          # reachable from upstream: merged, its own base
                result[head] = head
                self._sole.add((upstream, head))
                continue
            reached, stack, seen = set(), [head], set()
            while stack:
                commit = stack.pop()
                if commit in seen:
                    continue
                seen.add(commit)
                for parent in parents.get(commit, []):
                    if parent in parents:
                        stack.append(parent)
                    else:
                        reached.add(parent)
            if len(reached) == 1:            # every common ancestor is one of that commit's: the only base
                self._sole.add((upstream, head))
                result[head] = reached.pop()
            else:                            # (a PR that merged upstream into itself, most often)
                ask.append(head)
        result.update(zip(ask, self.merge_base_many(upstream, ask)))
        return result

    def is_shallow(self) -> bool:
        """Whether the repository is a shallow clone (its history cut where its `shallow` file says)."""
        return (self.common_dir / "shallow").exists()

    def outside(self, upstream: str, head: str) -> frozenset[str]:
        """The commits of HEAD's history that are not in UPSTREAM's: read from the walk `merge_bases` made of
        the heads it was asked about (no process)."""
        known = self._outside_of.get((upstream, head))       # (facts and the stale-stack check both ask)
        if known is not None:
            return known
        parents = self._outside.get(upstream, {})
        stack, seen = [head], set()
        while stack:
            found = stack.pop()
            if found not in seen and found in parents:
                seen.add(found)
                stack.extend(parents[found])
        if not seen:         # (a head not walked yet, or in upstream: nothing kept, asked again later)
            return frozenset()
        self._outside_of[(upstream, head)] = frozenset(seen)
        return self._outside_of[(upstream, head)]

    def sole_merge_base(self, upstream: str, head: str) -> bool:
        """Whether merge_bases found HEAD's base with UPSTREAM as their only merge base: then git merges
        HEAD onto UPSTREAM from that base alone, as it merges HEAD onto any commit whose only parent it is."""
        return (upstream, head) in self._sole

    def merged_in(self, upstream: str, head: str) -> tuple[str, str] | None:
        """For HEAD in UPSTREAM's history: the commit of upstream's first-parent line that merged it, and the
        base HEAD's change was made from (HEAD's merge base with that merge's first parent). None when HEAD
        came in on the first-parent line itself (a fast-forward, a rebase): its own change is then not told
        apart from upstream's. The merge is the oldest commit of upstream's first-parent line whose history
        holds HEAD: from UPSTREAM, first parents while the commit descends from HEAD (`--ancestry-path`
        with `--first-parent` found nothing when HEAD was below the merge's second parent: a pinned head
        the PR's branch moved on from before upstream merged it)."""
        proc = self.run("rev-list", "--ancestry-path", "--parents", f"{head}..{upstream}", check=False)
        if proc.returncode != 0:
            return None
        descends = {line.split(" ", 1)[0]: line.split()[1:]
                    for line in proc.stdout.decode("ascii", "replace").splitlines()}
        merge, parents = None, []
        found: str | None = upstream                  # (a full SHA, as the run's upstream always is)
        while found in descends:
            merge, parents = found, descends[found]
            found = parents[0] if parents else None
        if merge is None or len(parents) < 2 or parents[0] == head:
            return None
        fork = self.merge_base(parents[0], head)
        return (merge, fork) if fork and fork != head else None

    def revert_suspects(self, upstream: str, heads: Sequence[str]) -> set[str]:
        """Of HEADS (commits of UPSTREAM's history), those a commit of upstream's since may revert: a "This
        reverts commit <sha>" names the head, or a merge whose history beyond its first parent holds the head.
        `merged_in` and `reverted_in` decide, for these alone: each costs a kept merged PR a walk of upstream's
        history since it, every night (0.04 s for each of ten old pytest PRs), where this is one `git log` of
        what upstream has beyond all the heads' common history, for all of them, and one walk per merge a
        revert names. A name git finds ambiguous makes every head a suspect. A name is a commit's object name
        only: git takes a branch or tag named like an abbreviated one first, so such a name is looked up
        among the objects it abbreviates (`_commit_abbreviated`)."""
        heads = list(dict.fromkeys(heads))
        if not heads:
            return set()
        proc = self.run("merge-base", "--octopus", "--all", *heads, check=False)
        common = proc.stdout.decode().split() if proc.returncode == 0 else []   # (none: upstream's whole history)
        proc = self.run("log", "--fixed-strings", "--grep=This reverts commit", "--format=%B", upstream,
                        "--not", *common, check=False)
        if proc.returncode != 0:
            return set(heads)
        named = sorted(set(_REVERTS.findall(proc.stdout.decode("utf-8", "replace"))))
        suspects = {head for head in heads if any(head.startswith(name) for name in named)}
        rest = [head for head in heads if head not in suspects]
        if not rest or not named:
            return suspects
        data = self.run("cat-file", "--batch", input="".join(f"{name}\n" for name in named).encode()).stdout
        merges, shadowed, i = [], [], 0
        for name in named:                        # (one answer each, in order)
            end = data.index(b"\n", i)
            header, i = data[i:end].split(), end + 1
            if header[-1] == b"ambiguous":        # (a short name: a head it may be is not told apart)
                return set(heads)
            if len(header) != 3:
                continue                          # missing: neither a head nor the merge of one
            size = int(header[2])
            if not header[0].decode().startswith(name):
                shadowed.append(name)             # a branch or tag of that name (helper-136): not the commit
            elif header[1] == b"commit":
                parents = [line[7:].decode() for line in data[i:i + size].split(b"\n\n", 1)[0].split(b"\n")
                           if line.startswith(b"parent ")]
                if len(parents) > 1:
                    merges.append((header[0].decode(), parents[0]))
            i += size + 1
        for name in shadowed:
            commit = self._commit_abbreviated(name)
            if commit == "ambiguous":
                return set(heads)
            parents = self.commit_info(commit)["parents"] if commit else []
            if len(parents) > 1:                  # type: ignore[arg-type]
                merges.append((commit, parents[0]))  # type: ignore[index]
        for merge, first in merges:
            if not rest:
                break
            proc = self.run("rev-list", merge, "--not", first, check=False)
            if proc.returncode != 0:              # (a shallow clone cut at the merge: merged_in decides)
                return suspects | set(rest)
            beyond = set(proc.stdout.decode().split())
            suspects.update(head for head in rest if head in beyond)
            rest = [head for head in rest if head not in beyond]
        return suspects

    def _commit_abbreviated(self, prefix: str) -> str | None:
        """The commit whose object name PREFIX (hex) abbreviates, whatever refs are named PREFIX
        (`rev-parse --disambiguate`): None when there is none, "ambiguous" when there are several."""
        proc = self.run("rev-parse", f"--disambiguate={prefix}", check=False)
        names = [oid for oid in proc.stdout.decode().split() if oid.startswith(prefix)] if proc.returncode == 0 else []
        commits = [oid for oid, kind in self.object_types(names).items() if kind == "commit"]
        return commits[0] if len(commits) == 1 else "ambiguous" if commits else None

    def reverted_in(self, merge: str, head: str, upstream: str) -> str | None:
        """The commit of UPSTREAM's history since MERGE that reverts MERGE or HEAD (`git revert` writes "This
        reverts commit <sha>", the forge's revert button too) and that no later commit reverts in turn;
        None when there is none."""
        proc = self.run("log", "--reverse", "--fixed-strings", "--grep=This reverts commit", "--format=%H%x00%B%x00",
                        f"{merge}..{upstream}", check=False)
        fields = proc.stdout.decode("utf-8", "replace").split("\0") if proc.returncode == 0 else []
        reverts = [(sha.strip(), target) for sha, body in zip(fields[0::2], fields[1::2])
                   for target in _REVERTS.findall(body)]          # (the revert, the commit it names), oldest first

        def standing(commit: str) -> str | None:
            """The latest revert naming COMMIT that no later one undoes in turn (a revert of a revert of a
            revert reverts again: helper-127's third revert was taken for none)."""
            return next((sha for sha, target in reversed(reverts) if commit.startswith(target)
                         and standing(sha) is None), None)

        return standing(merge) or standing(head)

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def merge_base_many(self, a: str, others: Sequence[str]) -> list[str | None]:
        """merge_base(A, B) for each B of OTHERS, the `git merge-base` processes side by side
        (SIDE_BY_SIDE at a time): each is a walk of its own, and they answer together in about the time
        of one. What each prints is what it prints alone."""
        if len(others) < 2:
            return [self.merge_base(a, b) for b in others]
        self.flush_objects()
        where, env = self._placement(("merge-base",))
        out: list[str | None] = []
        for start in range(0, len(others), SIDE_BY_SIDE):
            procs: list[subprocess.Popen] = []
            try:
                for b in others[start:start + SIDE_BY_SIDE]:
                    procs.append(subprocess.Popen(git_argv("merge-base", a, b), cwd=where, env=env,
                                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                  stderr=subprocess.DEVNULL))
                answers = [proc.communicate()[0] for proc in procs]
            except BaseException:             # as subprocess.run does: none is left running, nor unreaped
                for proc in procs:
                    proc.kill()
                    proc.wait()               # reaped (helper-103: communicate() again, after an interrupt in
                    if proc.stdout is not None:     # the first, raised on its closed pipe: a traceback)
                        proc.stdout.close()
                raise
            out += [answer.decode().strip() or None if proc.returncode == 0 else None
                    for proc, answer in zip(procs, answers)]
        return out

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

    def read_tree(self, tree: str) -> list[tuple[str, str, str, bytes]]:
        """Entries of one tree object: (mode, type, oid, name) in git order (cached: objects never change)."""
        cached = self._trees.get(tree)
        if cached is not None:
            return cached
        entries = self._read_tree(tree)
        if len(self._trees) > 20000:
            self._trees.clear()
        self._trees[tree] = entries
        return entries

    def preread_trees(self, root: str, directories: Iterable[str]) -> None:
        """Put the trees at DIRECTORIES (paths) of tree ROOT into the tree cache in one pipelined exchange
        with cat-file (`ROOT:DIR`, in chunks), not a round trip each as editing them one by one would:
        composing edits a few hundred directories. A directory ROOT lacks is passed over. The cache is keyed
        by object name, so what it holds is what read_tree would read."""
        names = [f"{root}:{d}".encode("utf-8", "surrogateescape") for d in dict.fromkeys(directories)
                 if d and "\n" not in d]
        # bounded chunks (256 names, 16 KiB): what is written before reading must fit the pipe's buffer,
        # else git, blocked writing answers no one reads yet, stops reading the names (a deadlock)
        chunks: list[list[bytes]] = [[]]
        written = 0
        for name in names:
            if chunks[-1] and (len(chunks[-1]) >= 256 or written + len(name) + 1 > 16384):
                chunks.append([])
                written = 0
            chunks[-1].append(name)
            written += len(name) + 1
        pipe = self._pipe("cat-file", ["cat-file", "--batch"])
        with pipe.lock:
            for chunk in chunks:
                pipe.stdin.write(b"".join(name + b"\n" for name in chunk))
                pipe.stdin.flush()
                found = []
                for _name in chunk:
                    header = pipe.stdout.readline()
                    if not header:
                        raise GitError("git cat-file --batch stopped answering")
                    if header.endswith((b" missing\n", b" ambiguous\n")):
                        continue
                    oid, kind, size = header.split()
                    data = pipe.stdout.read(int(size))
                    pipe.stdout.read(1)
                    if kind == b"tree":
                        found.append((oid.decode(), data))
                for oid, data in found:
                    if oid not in self._trees and len(self._trees) < 20000:
                        self._trees[oid] = self._parse_tree(oid, data)

    def changes_exactly(self, old: str, new: str, changes: Sequence[Change]) -> bool:
        """Whether tree NEW differs from tree OLD by exactly CHANGES (no renames), each path from its old
        (mode, oid) to its new: both trees read and compared level by level down the changed paths (every
        other entry by mode and object), as diff-tree would find them. False for anything it does not
        decide (a rename or copy, a path under another changed path): the caller then asks diff-tree."""
        nested: dict = {}
        for change in changes:
            if change.status not in ("A", "M", "D", "T"):
                return False
            parts = encode_path(change.path).split(b"/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    return False
            if parts[-1] in node:
                return False
            node[parts[-1]] = (None if change.status == "A" else (change.old_mode, change.old_oid),
                               None if change.status == "D" else (change.new_mode, change.new_oid))
        return bool(nested) and self._differs_only(old, new, nested)

    def _differs_only(self, old: str | None, new: str | None, edits: dict) -> bool:
        old_entries = self.read_tree(old) if old else []
        new_entries = self.read_tree(new) if new else []
        # every entry not edited the same in both, in the same (git's) order: one comparison of two lists
        # (a large directory's entries are not each looked up; trees out of order are left to diff-tree)
        if [e for e in old_entries if e[3] not in edits] != [e for e in new_entries if e[3] not in edits]:
            return False
        before = {e[3]: e for e in old_entries if e[3] in edits}
        after = {e[3]: e for e in new_entries if e[3] in edits}
        for name, edit in edits.items():
            a, b = before.get(name), after.get(name)
            if isinstance(edit, dict):
                if (a is not None and a[1] != "tree") or (b is not None and b[1] != "tree") or (a is b is None):
                    return False
                if not self._differs_only(a[2] if a else None, b[2] if b else None, edit):
                    return False
            elif any(entry is not None and (entry[1] == "tree" or (entry[0], entry[2]) != side)
                     or (entry is None) != (side is None) for entry, side in ((a, edit[0]), (b, edit[1]))):
                return False
        return True

    def changed_paths(self, old: str, new: str) -> list[str]:
        """The paths where tree NEW differs from tree OLD (no renames): files, and a directory's own path
        where one side has a directory and the other not. Read level by level down the subtrees that
        differ (the rest are equal by object name), from the tree cache where it can."""
        out: list[str] = []
        stack = [(old, new, b"")]
        while stack:
            a, b, prefix = stack.pop()
            before = {e[3]: e for e in self.read_tree(a)}
            after = {e[3]: e for e in self.read_tree(b)}
            for name in before.keys() | after.keys():
                x, y = before.get(name), after.get(name)
                if x == y:
                    continue
                if x is not None and y is not None and x[1] == y[1] == "tree":
                    stack.append((x[2], y[2], prefix + name + b"/"))
                else:
                    out.append(decode_path(prefix + name))
        return sorted(out)

    def _read_tree(self, tree: str) -> list[tuple[str, str, str, bytes]]:
        obj = self.read_object(tree)
        if obj is None or obj[0] != "tree":
            raise GitError(f"{tree} is not a tree")
        return self._parse_tree(tree, obj[1])

    def _parse_tree(self, tree: str, data: bytes) -> list[tuple[str, str, str, bytes]]:
        entries: list[tuple[str, str, str, bytes]] = []
        offsets: list[int] = []
        canonical, last, at = True, b"", 0
        for match in _TREE_ENTRY.finditer(data):     # one regex match an entry; anything odd: the loop below
            if match.start() != at:
                break
            raw_mode, name, raw_oid = match.groups()
            known = _MODES.get(raw_mode)
            if known is None:
                break
            mode, kind = known
            entries.append((mode, kind, raw_oid.hex(), name))
            offsets.append(at)
            key = name + b"/" if kind == "tree" else name
            canonical = canonical and key > last
            last, at = key, match.end()
        if at == len(data):
            if canonical and self._stage_objects:
                offsets.append(at)
                self._remember_layout(tree, data, offsets)
            return entries
        return self._parse_tree_entries(tree, data)

    def _parse_tree_entries(self, tree: str, data: bytes) -> list[tuple[str, str, str, bytes]]:
        """_parse_tree entry by entry: modes git does not write (100664 and the like), a corrupt tree."""
        entries, i = [], 0
        offsets, canonical, last = [], True, b""
        while i < len(data):
            offsets.append(i)
            space = data.index(b" ", i)
            nul = data.index(b"\0", space)
            raw_mode, name = data[i:space], data[space + 1:nul]
            mode = raw_mode.decode() if raw_mode in _CANONICAL_MODES else _canonical_mode(raw_mode)
            oid = data[nul + 1:nul + 21].hex()
            kind = "tree" if mode == "40000" else ("commit" if mode == "160000" else "blob")
            entries.append((mode.rjust(6, "0"), kind, oid, name))
            key = name + b"/" if kind == "tree" else name
            canonical = canonical and raw_mode in _CANONICAL_MODES and key > last
            last = key
            i = nul + 21
        if canonical and self._stage_objects:
            offsets.append(len(data))
            self._remember_layout(tree, data, offsets)
        return entries

    def _remember_layout(self, tree: str, data: bytes, offsets: list[int]) -> None:
        """Keep a canonical tree's bytes and where each entry starts: `splice_tree` edits it in place."""
        if len(self._layouts) > 4096:
            self._layouts.clear()
        self._layouts[tree] = (data, offsets)

    def mktree(self, entries: Iterable[tuple[str, str, str, bytes]]) -> str:
        """Write a tree from (mode, type, oid, name) entries, in git's order; return its SHA."""
        def order(entry: tuple[str, str, str, bytes]) -> bytes:
            return entry[3] + (b"/" if entry[1] == "tree" else b"")

        ordered = sorted(entries, key=order)
        encoded = [(b"40000" if kind == "tree" else mode.encode()) + b" " + name + b"\0" + bytes.fromhex(oid)
                   for mode, kind, oid, name in ordered]
        data = b"".join(encoded)
        sha = self.write_object("tree", data)
        if self._stage_objects and sha not in self._trees and len(self._trees) <= 20000:
            self._trees[sha] = [("040000" if kind == "tree" else mode.rjust(6, "0"), kind, oid, name)
                                for mode, kind, oid, name in ordered]
            keys = [order(entry) for entry in ordered]
            if all(e[:e.index(b" ")] in _CANONICAL_MODES for e in encoded) and \
                    all(a < b for a, b in zip(keys, keys[1:])):
                self._remember_layout(sha, data, [0, *itertools.accumulate(len(e) for e in encoded)])
        return sha

    def splice_tree(self, tree: str, changes: dict[bytes, tuple[str, str, str, bytes]]) -> str | None:
        """TREE with the entries CHANGES names replaced by (mode, type, oid, name) entries of the same type
        and size, written by splicing TREE's bytes: the very tree `mktree` writes for those entries, without
        sorting or encoding the others. None when TREE's layout is not known or a change cannot be spliced
        (a new name, another type or size): the caller then writes the tree with `mktree`."""
        layout, entries = self._layouts.get(tree), self._trees.get(tree)
        if layout is None or entries is None:
            return None
        data, offsets = layout
        index = {entry[3]: n for n, entry in enumerate(entries)}
        spliced: list[tuple[int, bytes, tuple[str, str, str, bytes]]] = []
        for name, (mode, kind, oid, _name) in changes.items():
            n = index.get(name)
            if n is None or entries[n][1] != kind:
                return None
            raw_mode = b"40000" if kind == "tree" else mode.encode()
            encoded = raw_mode + b" " + name + b"\0" + bytes.fromhex(oid)
            if raw_mode not in _CANONICAL_MODES or len(encoded) != offsets[n + 1] - offsets[n]:
                return None
            spliced.append((n, encoded, ("040000" if kind == "tree" else mode.rjust(6, "0"), kind, oid, name)))
        parts, at, new_entries = [], 0, list(entries)
        for n, encoded, entry in sorted(spliced, key=lambda item: item[0]):
            parts += (data[at:offsets[n]], encoded)
            at = offsets[n + 1]
            new_entries[n] = entry
        parts.append(data[at:])
        new_data = b"".join(parts)
        sha = self.write_object("tree", new_data)
        if sha not in self._trees and len(self._trees) <= 20000:
            self._trees[sha] = new_entries
            self._remember_layout(sha, new_data, offsets)
        return sha

    def edit_tree(self, tree: str, edits: dict[str, tuple[str, str] | None]) -> str:
        """Return a tree like TREE with paths replaced by (mode, oid) or deleted (None)."""
        return _TreeEditor(self).apply(tree, edits)

    def file_at(self, tree_or_commit: str, path: str) -> bytes | None:
        """The content of the file at PATH (a blob or symlink; not a directory or submodule), or None."""
        found = self.blob_at(self.tree_of(tree_or_commit), path)
        if found is None or found[0] in ("040000", "160000"):
            return None
        return self.read_blob(found[1])

    def merge_theirs(self, ours: str | None, base: str | None, theirs: str | None) -> bytes | None:
        """The content merge of three blobs (None: empty) with each conflicting hunk resolved in THEIRS'
        favour, as git's `-X theirs` resolves it (gitlayer.markers): asked of the long-lived merge-tree
        (merge_contents), no process and no temporary file. None for a binary (git takes THEIRS whole)."""
        oids: Sequence[str | None] = [ours, base, theirs]
        blobs = [self.read_blob(oid) if oid else b"" for oid in oids]
        if any(b"\0" in blob[:8000] or len(blob) > markers.MAX_XDIFF_SIZE for blob in blobs):
            return None                     # git merges binaries (-X theirs: takes theirs whole)
        escaped, prefix = markers.escape(blobs)
        if prefix:      # a line that looks like a marker: merged as one that does not, taken back after
            if any(len(blob) > markers.MAX_XDIFF_SIZE for blob in escaped):
                raise GitError(f"{theirs}: within a few bytes of the largest file git merges as text, and "
                               "holding lines that look like conflict markers: carrytool cannot resolve "
                               "it in the entry's favour as git would", hint="resolve the file in a union")
            oids = [self.write_blob(blob) for blob in escaped]
        merged = self.merge_contents(*oids)
        if merged is None:
            return None
        resolved = merged[1] if merged[0] else markers.favour_theirs(merged[1], escaped[2])
        if resolved is None:
            raise GitError("`git merge-tree` wrote conflict markers carrytool cannot read back "
                           f"(merging {theirs or 'an empty file'} onto {ours or 'an empty file'})",
                           hint="report it to carrytool's maintainers with the blobs named")
        return markers.unescape(resolved, prefix)

    def merge_contents(self, ours: str | None, base: str | None, theirs: str | None) -> tuple[bool, bytes] | None:
        """merge-tree's content merge of three blobs in the long-lived merge process (no process, no
        temporary file): (clean, merged), or None for a binary. See gitlayer.mergepipe.merge_contents_many.
        Kept by blob triple: blame asks the same merge for every earlier entry it weighs."""
        return self.merge_contents_many([(ours, base, theirs)])[0]

    def merge_contents_many(self, triples: Sequence[tuple[str | None, str | None, str | None]]) -> list[tuple[bool, bytes] | None]:
        """merge_contents of each (ours, base, theirs), the ones not known yet asked as one batch."""
        return _answers(self._contents, triples, lambda missing: merge_contents_many(self, missing),
                        full=lambda added: len(self._contents) + added > 256)

    def merge_texts(self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]) -> tuple[bool, bytes] | None:
        """The content merge of three texts as merge-tree makes it, its conflicts' markers labelled LABELS
        (ours, base, theirs: what `git merge-file -L` would write): (clean, merged), or None for a binary.
        In the run's long-lived merge-tree: no process, no temporary file."""
        return self._merge_texts((ours, base, theirs), labels, markers.SIZE, diff3=False)

    def merge_diff3(self, ours: bytes, base: bytes, theirs: bytes, marker_size: int) -> tuple[bool, bytes] | None:
        """merge_texts with each conflict's base part shown (`diff3` style) and markers of MARKER_SIZE,
        labelled ours, base, theirs: what `git merge-file --diff3 --marker-size=N` writes, from merge-tree's
        content merge, in a long-lived merge-tree of its own (the only one of a run that writes diff3)."""
        return self._merge_texts((ours, base, theirs), ("ours", "base", "theirs"), marker_size, diff3=True)

    def _merge_texts(self, blobs: tuple[bytes, bytes, bytes], labels: tuple[str, str, str], marker_size: int, *,
                     diff3: bool) -> tuple[bool, bytes] | None:
        """BLOBS (ours, base, theirs) merged by merge-tree, lines that look like markers escaped for the merge
        (gitlayer.markers), the markers rewritten to MARKER_SIZE and LABELS: (clean, merged), or None for a
        merge git makes of binaries (a NUL in the first 8000 bytes, a side too large to diff)."""
        if any(b"\0" in blob[:8000] or len(blob) > markers.MAX_XDIFF_SIZE for blob in blobs):
            return None
        escaped, prefix = markers.escape(blobs)
        if any(len(blob) > markers.MAX_XDIFF_SIZE for blob in escaped):
            return None
        merged = merge_contents_many(self, [tuple(self.write_blob(blob) for blob in escaped)],  # type: ignore[list-item]
                                     diff3=diff3)[0] if diff3 else \
            self.merge_contents(*(self.write_blob(blob) for blob in escaped))
        if merged is None:
            return None
        clean, text = merged
        if not clean:
            relabelled = markers.relabel(text, marker_size, labels)
            if relabelled is None:          # a conflict without markers: git merged binaries
                return None
            text = relabelled
        return clean, markers.unescape(text, prefix)

    def blob_at(self, tree: str, path: str) -> tuple[str, str] | None:
        """(mode, oid) of PATH in TREE, or None."""
        parts = encode_path(path).split(b"/")
        current = tree
        for depth, part in enumerate(parts):
            match = next((e for e in self.read_tree(current) if e[3] == part), None)
            if match is None:
                return None
            if depth == len(parts) - 1:
                return match[0], match[2]
            if match[1] != "tree":
                return None
            current = match[2]
        return None

    # -- merging and diffing ------------------------------------------------------------------------
    def merge_trees(self, pairs: Sequence[tuple[str, str]], *, weights: Sequence[int] | None = None,
                    bases: Sequence[str] | None = None) -> list[MergeResult]:
        """`merge-tree --write-tree --stdin`: merge each (ours, theirs) commit pair; no work tree.

        All pairs go at once to the run's long-lived merge-tree (see merge_one): no process of their own,
        and its caches of inflated blobs are warm for the chained merges. git computes each merge base
        from history (git 2.39 has no `--merge-base`), so callers shape history (see compose.py).
        WEIGHTS (one per pair, e.g. the files both sides changed) say which merges cost the most: a batch
        shared by two processes is shared by weight (see _merge_batch); the answers do not depend on it.
        BASES (one per pair; only when `takes_merge_base()`): merge each pair of trees from that base.
        """
        if not pairs:
            return []
        lines = [f"{a} {b}" for a, b in pairs] if bases is None else \
            [merge_line(a, b, base) for (a, b), base in zip(pairs, bases, strict=True)]
        weight_of: dict[str, int] = {}
        for line, weight in zip(lines, weights if weights is not None else [1] * len(lines)):
            weight_of[line] = max(weight, weight_of.get(line, 0))
        # kept by line (commits never change): explain merges alone what composing merges again
        return _answers(self._merged, lines,
                        lambda missing: self._merge_batch(missing, [weight_of[line] for line in missing]),
                        full=lambda added: len(self._merged) + added > 20000)

    def _merge_batch(self, lines: list[str], weights: Sequence[int] | None = None) -> list[MergeResult]:
        """Independent merges, in order. A batch of at least SPLIT_MERGES_AT is shared by the run's
        merge-tree and a second one, at the same time, when the machine has two cores for it: the work
        is git's, so the two processes run side by side. Each takes about half the WEIGHTS (`_halves`;
        every other line without them). Each answer depends only on its own line, so the results are
        the same either way."""
        if len(lines) < SPLIT_MERGES_AT or _cores() < 2:
            return self._merges().merge_many(lines)
        own, other = _halves(weights if weights is not None else [1] * len(lines))
        first = self._merges()
        if self._side_pipe is None:
            self._side_pipe = self._new_merge_pipe()
        side = self._side_pipe
        self.flush_objects()                  # here, not in two threads at once: the merges write none
        other_half = Later(lambda: side.merge_many([lines[n] for n in other]), name="carrytool-other-half")
        self.join_at_close(other_half.thread)      # a second Ctrl-C in the join below: close waits for it
        failure: list[BaseException] = []
        mine: list[MergeResult] = []
        theirs: list[MergeResult] = []
        try:
            mine = first.merge_many([lines[n] for n in own])
        except BaseException as exc:  # noqa: BLE001 - raised below, after the other half stopped
            failure.append(exc)
        finally:
            other_half.join()
        try:
            theirs = other_half.result()
        except BaseException as exc:  # noqa: BLE001 - raised below, with this half's
            failure.append(exc)
        if failure:   # the more telling error first: a Ctrl-C (git, in the same process group, died of it
            # too), then a full scratch directory, which names itself and TMPDIR
            raise next((e for e in failure if isinstance(e, KeyboardInterrupt)),
                       next((e for e in failure if isinstance(e, EnvironmentProblem)), failure[0]))
        out: list[MergeResult] = [None] * len(lines)  # type: ignore[list-item]
        for indices, results in ((own, mine), (other, theirs)):
            for n, result in zip(indices, results):
                out[n] = result
        return out

    def merge_trees_later(self, pairs: Sequence[tuple[str, str]] = ()) -> LaterMerges:
        """merge_trees in a second long-lived merge-tree process that starts on PAIRS now (and on those
        `add`ed later, as they come) and answers when the returned LaterMerges is called: the run goes on
        meanwhile (e.g. composing in the first one), and git merges on another core. The process ends
        once it answered (or at close). Its objects are stored uncompressed in the quarantine (what
        persists is packed from there, compressed).

        The pairs go in chunks (LATER_CHUNK merges each), whose answers can be taken one by one: when
        the caller asks for the answers before git is done, a third merge-tree takes the chunks not
        merged yet from the end while the second goes on from the front (`_meet`); the caller waits on
        both cores instead of one. Each answer depends only on its own line: the results are the same."""
        later = LaterMerges(self)
        later.add(pairs)
        if pairs:
            later.send_rest()
        return later

    def _meet(self, pipe: MergePipe, chunks: list[list[str]]) -> list[list[MergeResult]]:
        """The answers to CHUNKS, which PIPE was sent in order: what it answered so far, and the rest
        from whichever gets there first, PIPE from the front or (when two chunks or more are left and
        the machine has two cores) a helper merge-tree, sent the rest from the end now. The helper only
        saves time: should it fail, PIPE answers everything."""
        done: list[list[MergeResult] | None] = [None] * len(chunks)
        queues: list[tuple[MergePipe, list[int]]] = [(pipe, list(range(len(chunks))))]
        taken = [0]                    # of each queue's chunks, answered so far
        self._take(queues, taken, chunks, done)
        helper: MergePipe | None = None
        try:
            if len(chunks) - taken[0] >= 2 and _cores() >= 2:
                back = list(range(len(chunks) - 1, taken[0], -1))     # from the end; the next one stays PIPE's
                helper = self._helper(pipe, [chunks[n] for n in back])
                if helper is not None:
                    queues.append((helper, back))
                    taken.append(0)
            while None in done:
                with pipe.condition:
                    moved = self._take(queues, taken, chunks, done)
                    if moved or None not in done:
                        continue
                    if all(taken[q] == len(order) for q, (_m, order) in enumerate(queues)):
                        raise GitError("`git merge-tree --stdin` gave fewer answers than merges")
                    if pipe.wait(0.05):
                        continue
                # no answer for a while: should a platform's stdio buffer be larger than expected, one more
                # flush merge after everything each pipe was sent pushes what it holds out (`ready` never
                # reads beyond the chunks), written with the condition released (the readers go on)
                for q, (merges, order) in enumerate(queues):
                    try:
                        if taken[q] < len(order):
                            merges.push()
                    except GitError:
                        if q == 0:
                            raise
                        taken[q] = len(order)      # the helper stopped: the first pipe answers its chunks
        finally:
            if helper is not None:
                helper.close(stop=True)
                self._later_pipes.remove(helper)
        return done  # type: ignore[return-value]

    def _helper(self, pipe: MergePipe, chunks: list[list[str]]) -> MergePipe | None:
        """A merge-tree that shares PIPE's flush merge and condition, sent CHUNKS; None when it cannot start."""
        helper = None
        try:
            helper = MergePipe(self, stored=self._use_quarantine, like=pipe, cond=pipe.condition)
            self._later_pipes.append(helper)
            helper.send_chunks(chunks)
        except (GitError, OSError):
            if helper is not None:
                helper.close(stop=True)
                self._later_pipes.remove(helper)
            return None
        return helper

    @staticmethod
    def _take(queues: list[tuple[MergePipe, list[int]]], taken: list[int], chunks: list[list[str]],
              done: list[list[MergeResult] | None]) -> bool:
        """Take every chunk's answers the pipes of QUEUES have given (a helper that stopped answering is
        dropped: the first pipe answers its chunks too); whether any came."""
        moved = False
        for q, (merges, order) in enumerate(queues):
            try:
                while taken[q] < len(order) and None in done and \
                        (got := merges.ready(len(chunks[order[taken[q]]]))) is not None:
                    if done[order[taken[q]]] is None:        # else the other's: the same answers
                        done[order[taken[q]]] = got
                    taken[q] += 1
                    moved = True
            except GitError:
                if q == 0:
                    raise
                taken[q] = len(order)      # the helper failed: nothing more from it
        return moved

    def merges_aside(self) -> AsideMerges:
        """Merges to send one by one to a merge-tree of their own, beside the run's (see AsideMerges)."""
        return AsideMerges(self)

    def merge_trees_diff3(self, pairs: Sequence[tuple[str, str]], *, bases: Sequence[str] | None = None) -> list[MergeResult]:
        """merge_trees in the run's merge-tree that writes `diff3` style conflicts (started when first
        asked), one batch at a time, not kept: only the structured rule asks it (merge_diff3)."""
        if not pairs:
            return []
        if self._diff3_pipe is None:
            like = self._merge_pipe or self._side_pipe or next(iter(self._later_pipes), None)
            self._diff3_pipe = MergePipe(self, stored=self._use_quarantine, like=like, style="diff3")
        lines = [f"{a} {b}" for a, b in pairs] if bases is None else \
            [merge_line(a, b, base) for (a, b), base in zip(pairs, bases, strict=True)]
        return self._diff3_pipe.merge_many(lines)

    def merge_one(self, ours: str, theirs: str, *, base: str | None = None) -> MergeResult:
        """One merge in the long-lived `merge-tree --write-tree --stdin` (see gitlayer.mergepipe): of two
        commits, their merge base found by git; or, with BASE (only when `takes_merge_base()`), of two
        trees or commits from that base, with no history walked."""
        return self._merges().merge(merge_line(ours, theirs, base))

    def _merges(self) -> MergePipe:
        if self._merge_pipe is None:
            self._merge_pipe = self._new_merge_pipe()
        return self._merge_pipe

    def _new_merge_pipe(self) -> MergePipe:
        """A long-lived merge-tree of this run. With a quarantine it writes stored (uncompressed) objects:
        most of what merges write is never kept, and the quarantine's pack compresses what is. It shares
        the flush merge of a pipe the run already has (the same git, the same answer): no process of its
        own to learn that answer."""
        like = self._merge_pipe or self._side_pipe or next(iter(self._later_pipes), None)
        return MergePipe(self, stored=self._use_quarantine, like=like)

    def takes_merge_base(self) -> bool:
        """Whether this git's `merge-tree --stdin` takes `BASE -- OURS THEIRS` lines of trees (git >= 2.45
        or so): asked once, by merging three empty trees."""
        if self._explicit_bases is None:
            line = f"{EMPTY_TREE} -- {EMPTY_TREE} {EMPTY_TREE}\n".encode()
            proc = self.run("merge-tree", "--write-tree", "--stdin", input=line, check=False)
            self._explicit_bases = proc.returncode == 0 and proc.stdout.startswith(b"1\0" + EMPTY_TREE.encode())
        return self._explicit_bases

    def diff_trees(self, pairs: Sequence[tuple[str, str]], *, renames: bool = True) -> list[list[Change]]:
        """`diff-tree -r -z --raw --stdin`: changes from each old to new tree or commit, one process."""
        if not pairs:
            return []
        args = ["diff-tree", "-r", "-z", "--raw", "--stdin", "--no-ext-diff", "--no-textconv",
                "--ignore-submodules=none", "-M" if renames else "--no-renames"]
        wanted = [(self.tree_of(old), self.tree_of(new), renames) for old, new in pairs]
        def ask(missing: list[tuple[str, str, bool]]) -> list[list[Change]]:
            out = self.run(*args, input=self._pair_lines([(old, new) for old, new, _ in missing])).stdout
            return _parse_diff_stdin(out, len(missing))

        # kept by tree pair, as patches are: explain and composing diff the same entries
        return [list(changes) for changes in
                _answers(self._diffs, wanted, ask, full=lambda added: len(self._diffs) + added > 20000)]

    def reencoded_dirs(self, pairs: Sequence[tuple[str, str]]) -> Callable[[], list[set[str]]]:
        """For each (old, new) tree or commit pair, the directories whose tree object differs with no file
        changed below them: the same files, encoded otherwise (a mode git no longer writes, `100664` or a
        zero-padded `040000`, in old, rewritten canonical in new). diff-tree reads modes canonical and
        lists no file there; merge-tree takes such a side's tree object whole. One `diff-tree -r -t`
        process, started now in a thread (it touches nothing of this Git's state); the function returned
        waits for it and answers."""
        if not pairs:
            return list
        self.flush_objects()
        args = ("diff-tree", "-r", "-t", "-z", "--raw", "--stdin", "--no-renames", "--ignore-submodules=none")
        argv, (cwd, env) = git_argv(*args), self._placement(args)
        lines = self._pair_lines([(self.tree_of(old), self.tree_of(new)) for old, new in pairs])
        job = Later(lambda: subprocess.run(argv, cwd=cwd, input=lines, capture_output=True, env=env),
                    name="carrytool-reencoded")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it

        def answer() -> list[set[str]]:
            proc = job.result()
            if proc.returncode != 0:
                raise GitError(f"`git diff-tree -t` failed (exit {proc.returncode})",
                               stderr=proc.stderr.decode("utf-8", "replace"))
            out = []
            for changes in _parse_diff_stdin(proc.stdout, len(pairs)):
                dirs = {c.path for c in changes if c.status == "M" and c.old_mode == c.new_mode == "040000"}
                for change in changes:
                    if change.new_mode != "040000" or change.old_mode != "040000":   # a file, or a kind change
                        parts = change.path.split("/")
                        dirs.difference_update("/".join(parts[:n]) for n in range(1, len(parts)))
                out.append(dirs)
            return out
        return answer

    def diff_patches(self, pairs: Sequence[tuple[str, str]]) -> list[bytes]:
        """`diff-tree -p -U0 --stdin`: the zero-context patch from each old to new tree, one process for
        the pairs not read before (patches are kept by tree pair: explain's evidence and the landing
        checks ask for the same entries' diffs)."""
        if not pairs:
            return []
        self._await_prefetch()
        wanted = [(self.tree_of(old), self.tree_of(new)) for old, new in pairs]
        return _answers(self._patches, wanted, self._read_patches,     # bounded: a cache, not an object store
                        full=lambda added: sum(len(p) for p in self._patches.values()) > 64 << 20)

    def prefetch_patches(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Start reading the patches of PAIRS (as diff_patches would) in the background: one `diff-tree`
        process that runs beside the caller's work (composing) on a second core; diff_patches takes its
        answer when it is asked for them. Only for objects already in the store (a PR's own commits): the
        process is started now and the caller may write objects meanwhile."""
        self._await_prefetch()
        wanted = list(dict.fromkeys((self.tree_of(old), self.tree_of(new)) for old, new in pairs))
        missing = [pair for pair in wanted if pair not in self._patches]
        if not missing:
            return
        self.flush_objects()
        argv, payload = git_argv(*_PATCH_ARGS), self._pair_lines(missing)
        cwd, env = self._placement(_PATCH_ARGS)

        def read() -> subprocess.CompletedProcess | None:
            try:
                return subprocess.run(argv, cwd=cwd, input=payload, capture_output=True, env=env)
            except Exception:  # noqa: BLE001 - git not started, memory: diff_patches reads them itself,
                return None    # and says what failed

        self._prefetch = (missing, Later(read))

    def _await_prefetch(self) -> None:
        """Take a prefetch's patches into the cache (a failed one is dropped: asked again, with its error)."""
        if self._prefetch is None:
            return
        trees, job = self._prefetch
        job.join()                         # interrupted: still known, close waits for it
        self._prefetch = None
        proc = job.result()
        if proc is None or proc.returncode != 0:
            return
        try:
            self._patches.update(zip(trees, self._split_patches(proc.stdout, trees)))
        except GitError:
            pass

    @staticmethod
    def _pair_lines(trees: Sequence[tuple[str, str]]) -> bytes:
        """`OLD NEW` lines, the `--stdin` input of diff-tree."""
        return "".join(f"{old} {new}\n" for old, new in trees).encode()

    def _read_patches(self, trees: Sequence[tuple[str, str]]) -> list[bytes]:
        return self._split_patches(self.run(*_PATCH_ARGS, input=self._pair_lines(trees)).stdout, trees)

    @staticmethod
    def _split_patches(out: bytes, trees: Sequence[tuple[str, str]]) -> list[bytes]:
        echoes = {f"{old} {new}".encode() for old, new in trees}
        chunks: list[list[bytes]] = []
        # every patch without its last newline, the last one too: a patch is the same bytes wherever in a
        # batch it was read
        for line in (out[:-1] if out.endswith(b"\n") else out).split(b"\n"):
            if line in echoes and (not chunks or len(chunks) < len(trees)) and _is_echo(line):
                chunks.append([])
            elif chunks:
                chunks[-1].append(line)
        if len(chunks) != len(trees):
            raise GitError("`git diff-tree -p --stdin` gave an unexpected answer")
        return [b"\n".join(chunk) for chunk in chunks]

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

    def diff_patch(self, old: str, new: str, paths: Sequence[str] = (), *, context: int = 0,
                   renames: bool = True) -> bytes:
        """`diff-tree -p`: the unified diff from OLD to NEW (trees or commits), optionally for PATHS."""
        args = ["diff-tree", "-r", "-p", f"-U{context}", "--no-color", "--no-ext-diff", "--no-textconv",
                "--full-index", "-M" if renames else "--no-renames", old, new]
        if paths:
            args += ["--", *(":(literal)" + p for p in paths)]
        return self.run(*args).stdout

    def range_diff(self, old: tuple[str, str], new: tuple[str, str]) -> list[str]:
        """`range-diff --no-color -s OLD_BASE..OLD_TIP NEW_BASE..NEW_TIP`: the commit pairing, one line each.

        A range with no commit (a PR whose head upstream merged by fast-forward: its base is its head), which
        git refuses ("need two commit ranges"), pairs nothing: each commit of the other range is listed as
        range-diff lists one only that range has (`N:  <sha> < -:  ----`, or `-:  ---- > N:  <sha>`)."""
        args = ("-c", "core.abbrev=12", "range-diff", "--no-color", "-s", f"{old[0]}..{old[1]}", f"{new[0]}..{new[1]}")
        proc = self.run(*args, check=False)
        sides = [self._range_commits(*old), self._range_commits(*new)] if proc.returncode else []
        if all(sides):                       # answered, or refused for another reason than an empty range
            proc = self.run(*args) if proc.returncode else proc      # that reason raised as git says it
            return [line.rstrip() for line in proc.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
        none = "-" * 12
        return [f"{n}:  {sha[:12]} < -:  {none} {subject}".rstrip() if sides[0] else
                f"-:  {none} > {n}:  {sha[:12]} {subject}".rstrip()
                for n, (sha, subject) in enumerate(sides[0] or sides[1], 1)]

    def _range_commits(self, base: str, tip: str) -> list[tuple[str, str]]:
        """The commits range-diff takes from BASE..TIP (no merges), oldest first: (full SHA, subject)."""
        out = self.run("log", "--no-color", "--no-merges", "--topo-order", "--reverse", "--format=%H %s",
                       "--end-of-options", f"{base}..{tip}").stdout.decode("utf-8", "replace")
        return [(line[:40], line[41:]) for line in out.splitlines() if len(line) >= 40]

    def commits_between(self, base: str, tip: str) -> list[str]:
        """`rev-list BASE..TIP`: the full SHAs of the commits in TIP not in BASE, newest first."""
        out = self.run("rev-list", "--end-of-options", tip, f"^{base}").stdout.decode()
        return out.split()

    def count_commits(self, base: str, tip: str) -> int:
        """`rev-list --count BASE..TIP`."""
        return int(self.out("rev-list", "--count", "--end-of-options", tip, f"^{base}") or 0)

    def blob_at_rev(self, rev: str, path: str) -> bytes | None:
        """`rev-parse REV:PATH` in the user's repository, then the blob; None when either is missing."""
        if rev.startswith("-"):
            return None
        oid = self.ref_value(f"{rev}:{path}")
        obj = self.read_object(oid) if oid else None
        return obj[1] if obj and obj[0] == "blob" else None

    def log_paths(self, since: str, until: str, pathspecs: Sequence[str]) -> list[tuple[str, str]]:
        """`log SINCE..UNTIL -- PATHSPECS`: (full SHA, subject) of each commit touching them, newest first."""
        if not pathspecs:
            return []
        proc = self.run("log", "--no-color", "--format=%H %s", "--end-of-options", f"{since}..{until}",
                        "--", *pathspecs)
        out = proc.stdout.decode("utf-8", "replace").splitlines()
        return [(line[:40], line[41:]) for line in out if len(line) >= 40]

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


_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


def _refuse_inside(repo: Path, git_dir: Path, common_dir: Path, bare: bool) -> None:
    """Raise when REPO is a folder inside a repository rather than the repository (helper-113: `--repo
    outer/plain-dir` wrote the fork branch and every fetched object into `outer/.git`, a repository the user
    never named)."""
    where = repo.resolve()
    if where in (git_dir.resolve(), common_dir):
        return
    top = None
    if not bare and not where.is_relative_to(git_dir.resolve()):
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True,
                              env=scrubbed_env())
        top = proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n") if proc.returncode == 0 else None
        if top is not None and Path(top).resolve() == where:
            return
    found = top or str(common_dir)
    raise EnvironmentProblem(f"{repo} is not a git repository: it is a folder inside the repository {found}",
                             hint=f"pass --repo {shlex.quote(found)} to use that one, or make {repo} a repository "
                                  f"of its own (`git init`, `git clone`)")


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


def _read_file(path: str, at: int = 0, length: int = -1) -> bytes:
    """The bytes of the file at PATH, or LENGTH of them from offset AT."""
    with open(path, "rb") as f:
        if at:
            f.seek(at)
        return f.read(length)


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


def work_tree_top(path: Path) -> Path | None:
    """`rev-parse --show-toplevel` run from PATH (a directory): the work tree holding it, or None."""
    if not path.is_dir():           # (helper-98: a traceback for a manifest folder that is not there)
        return None
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, env=scrubbed_env())
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(top) if proc.returncode == 0 and top else None


def _subcommand(args: Sequence[str]) -> str:
    """The git subcommand of ARGS, past global options such as `-c KEY=VALUE`."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return args[i] if i < len(args) else ""


_FRESH = b""      # in a _TreeEditor edit: this subtree starts empty (a name git never gives an entry)


def _canonical_mode(raw: bytes) -> str:
    """The mode git reads a tree entry's RAW mode as (cache.h canon_mode): 100664 is 100644, and so on.
    git writes every tree it builds (a directory merge-tree merges, an index's) with these modes."""
    if not re.fullmatch(rb"[0-7]+", raw):
        raise GitError(f"a tree entry has the mode {raw!r}, which git does not read: the tree is corrupt",
                       hint="run `git fsck` in the repository")
    mode = int(raw, 8)
    kind = mode & 0o170000
    if kind == 0o100000:
        return "100755" if mode & 0o100 else "100644"
    return {0o120000: "120000", 0o040000: "40000"}.get(kind, "160000")


class _TreeEditor:
    """Rewrite a tree at some paths, writing only the subtrees on the way (mktree --batch)."""

    def __init__(self, git: Git) -> None:
        self.git = git

    def apply(self, tree: str, edits: dict[str, tuple[str, str] | None]) -> str:
        """TREE with EDITS (path -> (mode, oid), None: deleted). A file that goes while a directory of the
        same name comes (or the reverse), in either order, is a file<->directory swap, as diff-tree lists it.
        No edit: TREE itself (not the tree git would write for it, when its modes are not those git writes)."""
        if not edits:
            return tree
        nested: dict = {}
        for path, value in edits.items():
            node: dict | None = nested
            parts = encode_path(path).split(b"/")
            for part in parts[:-1]:
                child = node.get(part)               # type: ignore[union-attr]
                if child is None or isinstance(child, dict):
                    node = node.setdefault(part, {})  # type: ignore[union-attr]
                elif child[1] is None:               # the file there goes: a directory takes its place
                    node[part] = {_FRESH: True}      # type: ignore[index]
                    node = node[part]                # type: ignore[index]
                elif value is None:                  # a file takes the directory's place: under it all goes
                    node = None
                    break
                else:
                    raise GitError(f"cannot edit {path}: a parent is a file")
            if node is None:
                continue
            existing = node.get(parts[-1])
            if isinstance(existing, dict) and value is None:
                existing[_FRESH] = True              # the file goes, a directory with these entries comes
                continue
            node[parts[-1]] = ("leaf", value)        # (over a directory's edits: the file replaces it)
        return self._write(tree, nested) or EMPTY_TREE

    def _write(self, tree: str | None, edits: dict) -> str | None:
        base = self.git.read_tree(tree) if tree else []
        entries = {e[3]: e for e in base}
        for name, edit in edits.items():
            if name == _FRESH:
                continue
            if isinstance(edit, dict):
                current = entries.get(name)
                sub = current[2] if current and current[1] == "tree" and not edit.get(_FRESH) else None
                new_sub = self._write(sub, edit)
                if new_sub is None:
                    entries.pop(name, None)
                else:
                    entries[name] = ("040000", "tree", new_sub, name)
            else:
                value = edit[1]
                if value is None:
                    entries.pop(name, None)
                else:
                    mode, oid = value
                    kind = "tree" if mode in ("40000", "040000") else ("commit" if mode == "160000" else "blob")
                    entries[name] = (mode, kind, oid, name)
        if not entries:
            return None
        if tree and len(entries) == len(base):     # only replacements (or a new name for a deleted one)
            spliced = self.git.splice_tree(tree, {name: entries[name] for name in edits
                                                  if name != _FRESH and name in entries})
            if spliced is not None:
                return spliced
        return self.git.mktree(entries.values())
