"""Bisect's probes: is one tree good or bad for the given checks?

Cheapest first: the manifest's asserts run in process on the tree's files. Only when they hold does
`--run CMD` run, in one temporary directory per bisect outside the user's work tree, made to hold exactly
the probed tree at each run (a checkout of its own moved from tree to tree: no hooks, no filters, no
attributes, nothing the previous command made). Command verdicts are cached by (tree SHA, command) under
the repository's git dir, so a rerun of the same search runs nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from carrytool.asserts.spec import AssertOutcome, AssertSpec
from carrytool.errors import GitError
from carrytool.gitlayer.checkout import TreeCheckout
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import read_json
from carrytool.gitlayer.processes import mark_scratch, release_scratch, sweep_dead_scratch
from carrytool.pipeline.atomic import write_atomic

CACHE_VERSION = 1
TAIL_LINES = 20
TAIL_BYTES = 8192        # the most of a command's output read (its end): what the verdict and the cache keep


@dataclass(frozen=True)
class CommandVerdict:
    """What CMD did on one tree: its exit code (None when it timed out) and its last lines of output."""

    command: str
    exit_code: int | None
    output: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> dict[str, object]:
        return {"command": self.command, "exit_code": self.exit_code, "timed_out": self.timed_out,
                "output": self.output}


@dataclass
class Verdict:
    """One probe's answer: the failing asserts, or the command's verdict (run or cached)."""

    tree: str
    failed: list[AssertOutcome] = field(default_factory=list)
    command: CommandVerdict | None = None
    cached: bool = False

    @property
    def bad(self) -> bool:
        return bool(self.failed) or (self.command is not None and not self.command.ok)


@dataclass(frozen=True)
class Checks:
    """What makes a tree bad: any of ASSERTS failing, or COMMAND exiting non-zero (or timing out)."""

    asserts: tuple[AssertSpec, ...] = ()
    command: str | None = None
    timeout: float = 600.0


class Prober:
    """Judge trees, each at most once per run; count the probes and those answered from the cache."""

    def __init__(self, git: Git, checks: Checks, known: Mapping[str, Verdict] | None = None) -> None:
        self.git = git
        self.checks = checks
        # verdicts this run took on trees with more asserts (and no fewer): a tree there is not judged again
        # for some of them (bisect's search with each assert alone; h179: 24 probes of 8 trees)
        self.known = known if known is not None and not checks.command else {}
        self.cache = VerdictCache(git.common_dir / "carrytool" / "bisect-cache.json")
        self.seen: dict[str, Verdict] = {}
        self.probes = 0
        self.cached = 0
        self.trees = CommandTrees(git)      # where the command runs, tree after tree (removed at close)

    def __enter__(self) -> Prober:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the directory the command ran in."""
        self.trees.close()

    def judge(self, tree: str) -> Verdict:
        """Return the verdict on TREE (a tree SHA): asserts first, then the command (cached)."""
        known = self.seen.get(tree)
        if known is not None:
            return known
        wider = self.known.get(tree)
        if wider is not None:       # judged already in this run: not a probe
            names = {spec.name for spec in self.checks.asserts}
            self.seen[tree] = Verdict(tree, [o for o in wider.failed if o.name in names])
            return self.seen[tree]
        verdict = Verdict(tree)
        if self.checks.asserts:
            from carrytool.asserts import evaluate_all

            outcomes = evaluate_all(self.checks.asserts, lambda path: self.git.file_at(tree, path))
            verdict.failed = [o for o in outcomes if not o.ok]
        if not verdict.failed and self.checks.command is not None:
            verdict.command = self.cache.get(tree, self.checks.command)
            verdict.cached = verdict.command is not None
            if verdict.command is None:
                verdict.command = self.trees.run(tree, self.checks.command, self.checks.timeout)
                if not verdict.command.timed_out:      # a timeout depends on --timeout: never cached
                    self.cache.put(tree, verdict.command)
        self.probes += 1
        self.cached += verdict.cached
        self.seen[tree] = verdict
        return verdict

    def confirm(self, tree: str) -> bool | None:
        """Run the command on TREE once more when this run ran it there (a verdict from the cache was run
        before: a rerun of the search runs nothing): whether it gives the same verdict. None when there is
        nothing to confirm. A different verdict drops TREE's cached one, so the next run runs it again
        (a flaky command gave a confident wrong answer, and its failures stayed in the cache: an older note)."""
        known = self.seen.get(tree)
        if known is None or known.failed or known.command is None or known.cached or self.checks.command is None \
                or known.command.timed_out:
            return None
        again = self.trees.run(tree, self.checks.command, self.checks.timeout)
        if again.timed_out:            # slower this time: says nothing of flakiness (helper-95: "flaky")
            return None
        same = again.ok == known.command.ok
        if not same:
            self.cache.drop(tree, self.checks.command)
        return same


class VerdictCache:
    """Command verdicts by (tree SHA, command), in one JSON file written atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: dict[str, dict[str, object]] | None = None

    def _load(self) -> dict[str, dict[str, object]]:
        if self._data is None:
            try:
                doc = read_json(self.path)
                ok = isinstance(doc, dict) and doc.get("version") == CACHE_VERSION
                self._data = doc["verdicts"] if ok and isinstance(doc.get("verdicts"), dict) else {}
            except (OSError, ValueError):
                self._data = {}         # missing or damaged: a cache is only ever a shortcut
        return self._data

    @staticmethod
    def key(tree: str, command: str) -> str:
        return f"{tree} {hashlib.sha256(command.encode('utf-8', 'surrogateescape')).hexdigest()}"

    def get(self, tree: str, command: str) -> CommandVerdict | None:
        row = self._load().get(self.key(tree, command))
        if not isinstance(row, dict) or row.get("command") != command or not isinstance(row.get("exit_code"), int):
            return None
        return CommandVerdict(command, row["exit_code"], str(row.get("output", "")))  # type: ignore[arg-type]

    def drop(self, tree: str, command: str) -> None:
        """Forget the verdict of COMMAND on TREE (rewrite the cache file when it had one)."""
        data = self._load()
        if data.pop(self.key(tree, command), None) is not None:
            self._save(data)

    def put(self, tree: str, verdict: CommandVerdict) -> None:
        """Record VERDICT for TREE and rewrite the cache file (temp file beside it, then rename)."""
        data = self._load()
        data[self.key(tree, verdict.command)] = {"command": verdict.command, "exit_code": verdict.exit_code,
                                                 "output": verdict.output}
        self._save(data)

    def _save(self, data: dict[str, dict[str, object]]) -> None:
        """Rewrite the cache file with DATA (temp file beside it, then rename)."""
        write_atomic(self.path, json.dumps({"version": CACHE_VERSION, "verdicts": data}, sort_keys=True) + "\n")


def run_in_tree(git: Git, tree: str, command: str, timeout: float) -> CommandVerdict:
    """Run `sh -c COMMAND` on TREE in a temporary directory of its own, removed afterwards (CommandTrees.run)."""
    with CommandTrees(git) as trees:
        return trees.run(tree, command, timeout)


class CommandTrees:
    """Where one bisect runs its command: a temporary directory outside the user's work tree, made at the first
    run and removed at close, whose `tree/` holds exactly the probed tree at each run. It moves from tree to
    tree (gitlayer.checkout: only the files that differ are written; what the previous command made, changed
    or deleted is removed or written again), where a fresh directory per probe was written whole (h201:
    0.33 s of CPU a probe on sqlalchemy's 932 files). A tree git refuses to check out (a `.git` in it), or a
    directory the command left in a state that cannot be cleaned (no permission), gets a fresh directory,
    its blobs written one by one (`materialise`)."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self._root: Path | None = None
        self._owner: int | None = None      # the root's owner file, locked while the root lives (mark_scratch)
        self._checkout: TreeCheckout | None = None    # None: the directory was written whole, or is not made

    def __enter__(self) -> CommandTrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, tree: str, command: str, timeout: float) -> CommandVerdict:
        """Make the directory hold TREE and run `sh -c COMMAND` there, killed after TIMEOUT.

        The verdict is the shell's exit, as `git bisect run` takes it: its output goes to a file beside the
        tree, whose end is read (TAIL_BYTES at most), so a job it leaves in the background neither holds the
        answer until it closes the output nor makes it a timeout, and a command printing without end costs
        no memory (helper-108). When the shell is done, timed out or interrupted (Ctrl-C, which a command in
        a session of its own never sees), its process group is killed: nothing it started goes on in the
        tree, which the next run changes and close removes. git run by the command finds no repository
        above the tree (GIT_CEILING_DIRECTORIES), wherever TMPDIR is."""
        workdir = self._holding(tree)
        root = workdir.parent
        output = root / "output"
        proc: subprocess.Popen | None = None
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env["CARRYTOOL_BISECT_TREE"] = tree
            env["GIT_CEILING_DIRECTORIES"] = str(root)
            with open(output, "wb") as sink:
                proc = subprocess.Popen(["sh", "-c", command], cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                        stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = None
            return CommandVerdict(command, code, _tail(output), timed_out=code is None)
        finally:
            if proc is not None:
                _kill_group(proc)
                with contextlib.suppress(Exception):
                    proc.wait(timeout=10)        # reaped (killed: at once)

    def _holding(self, tree: str) -> Path:
        """The directory, made to hold exactly TREE: the checkout moved there, else a fresh one."""
        if self._checkout is not None:
            try:
                self._checkout.move_to(tree)
                return self._checkout.dir
            except (OSError, GitError):
                pass                # what the command left cannot be cleaned, or git refuses TREE: start again
        self.close()
        # marked as the run's scratch is (gitlayer.processes): a bisect killed (SIGKILL, a CI job's timeout: close
        # never runs) leaves a whole checkout, which the next carrytool run making one removes
        sweep_dead_scratch(Path(tempfile.gettempdir()))
        self._root = Path(tempfile.mkdtemp(prefix="carrytool-bisect-"))
        self._owner = mark_scratch(self._root)
        checkout = TreeCheckout(self.git, self._root)
        try:
            checkout.move_to(tree)
            self._checkout = checkout
        except GitError:            # a path git never checks out (`.git`): the blobs written one by one
            shutil.rmtree(checkout.dir)
            checkout.dir.mkdir()
            materialise(self.git, tree, checkout.dir)
        return checkout.dir

    def close(self) -> None:
        """Remove the directory (nothing the command started runs on: its group was killed)."""
        self._checkout = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        release_scratch(self._owner)        # after the removal: no sweep takes the directory meanwhile
        self._owner = None


def materialise(git: Git, tree: str, root: Path) -> None:
    """Write the files of TREE under ROOT: blobs as files (mode kept), symlinks as links, submodules as
    empty directories. Nothing of git runs but object reads: no hooks, filters or attributes apply."""
    files: list[tuple[Path, str, str]] = []
    _walk(git, tree, root, files)
    contents = git.read_blobs([oid for _, _, oid in files])
    for path, mode, oid in files:
        if mode == "120000":
            os.symlink(os.fsdecode(contents[oid]), path)
        else:
            path.write_bytes(contents[oid])
            if mode == "100755":
                path.chmod(0o755)


def _walk(git: Git, tree: str, root: Path, files: list[tuple[Path, str, str]]) -> None:
    """Make the directories of TREE under ROOT; collect (path, mode, blob) of its files."""
    for mode, kind, oid, name in git.read_tree(tree):
        if name in (b"", b".", b"..") or b"/" in name or name.lower() == b".git":
            continue        # never written by a checkout either: a path outside ROOT, or a repository's guts
        path = root / os.fsdecode(name)
        if kind in ("tree", "commit"):
            path.mkdir()
            if kind == "tree":
                _walk(git, oid, path, files)
        else:
            files.append((path, mode, oid))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:          # none left (ESRCH), or what is left is not ours to kill (EPERM): helper-109
        pass


def _tail(path: Path) -> str:
    """The last TAIL_LINES lines of the file at PATH, from its last TAIL_BYTES bytes (a line cut there
    starts with `...`)."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and lines:
        lines[0] = "..." + lines[0]
    return "\n".join(lines[-TAIL_LINES:])
