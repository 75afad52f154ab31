"""The runners: three ways to compose the same PRs onto the same upstream, each timed on its loop only.

- naive: the status quo, a work tree and `git cherry-pick -X theirs base..head` per PR.
- chain: the floor for one-process-per-step plumbing, `merge-tree --write-tree` + `commit-tree` per PR.
- carrytool: the whole `carrytool sync` process, on a fresh bare repository (its fetch included).
- startup: `carrytool --version` and `carrytool sync --help` (CLI start-up; the workload does not matter).

Set-up (clones, ref fetches) is never timed; every runner gets its own scratch copy.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .generate import clean_env, git

# Configuration that keeps the status quo honest: no hooks, no rerere, no background maintenance.
NAIVE_CONFIG = ("core.hooksPath=/dev/null", "rerere.enabled=false", "gc.auto=0", "maintenance.auto=false",
                "commit.gpgSign=false", "advice.detachedHead=false")


@dataclass(frozen=True)
class Inputs:
    """What every runner composes: upstream's branch + these PRs, in this order."""

    name: str
    upstream: Path                  # a bare repository with the branch and the PR refs
    manifest: Path                  # the carrytool manifest naming the same PRs
    prs: tuple[int, ...]
    branch: str = "main"
    pr_ref: str = "refs/pull/{number}/head"
    files: int | None = None        # tree size, for the tables
    explain: bool = False           # the carrytool runner also times `explain --offline` (cold and warm)

    def ref(self, number: int) -> str:
        return self.pr_ref.format(number=number)


@dataclass
class Measurement:
    """One timed run of one runner."""

    runner: str
    seconds: float
    applied: int                    # PRs applied (naive, carrytool) or merged clean (chain)
    rss_mb: float | None = None     # peak RSS of the largest process of the runner's tree
    cpu_seconds: float | None = None  # user + sys of every process it ran: steadier than wall time
    extra: dict[str, float] = field(default_factory=dict)
    tree: str | None = None         # the composed tree (chain, carrytool): equal when both took the same PRs


Runner = Callable[[Inputs, Path], Measurement]


class Stopwatch:
    """Wall time of a block, and the CPU time (user + sys) of the child processes it waited for."""

    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._cpu = _children_cpu()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
        self.cpu_seconds = _children_cpu() - self._cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _git_in(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run git in REPO with the pinned config and a clean, fixed-identity environment."""
    argv = ["git"]
    for item in NAIVE_CONFIG:
        argv += ["-c", item]
    proc = subprocess.run(argv + list(args), cwd=repo, capture_output=True, env=clean_env())
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {proc.stderr.decode(errors='replace')}")
    return proc


def run_naive(inputs: Inputs, scratch: Path) -> Measurement:
    """Clone a work tree (untimed), then time the cherry-pick loop; count the PRs that went in."""
    work = scratch / "naive"
    git("clone", "-q", "--branch", inputs.branch, str(inputs.upstream), str(work), cwd=scratch)
    specs = [f"+{inputs.ref(n)}:{inputs.ref(n)}" for n in inputs.prs]
    _git_in(work, "fetch", "-q", "--no-tags", "origin", *specs)
    main = f"refs/remotes/origin/{inputs.branch}"
    applied = 0
    with Stopwatch() as watch:
        for number in inputs.prs:
            head = inputs.ref(number)
            base = _git_in(work, "merge-base", main, head).stdout.decode().strip()
            if _git_in(work, "cherry-pick", "-X", "theirs", f"{base}..{head}", check=False).returncode == 0:
                applied += 1
            else:
                _git_in(work, "cherry-pick", "--abort", check=False)
    shutil.rmtree(work, ignore_errors=True)
    return Measurement("naive", watch.seconds, applied, cpu_seconds=watch.cpu_seconds)


def run_chain(inputs: Inputs, scratch: Path) -> Measurement:
    """In a mirror (untimed), time `merge-tree --write-tree` + `commit-tree` per PR; count the clean merges
    that changed the tree (a PR already in upstream merges cleanly but applies nothing)."""
    repo = scratch / "chain.git"
    git("clone", "-q", "--mirror", str(inputs.upstream), str(repo), cwd=scratch)
    tip = git("rev-parse", f"refs/heads/{inputs.branch}", cwd=repo)
    heads = [git("rev-parse", inputs.ref(n), cwd=repo) for n in inputs.prs]
    last_tree = git("rev-parse", f"{tip}^{{tree}}", cwd=repo)
    clean = 0
    with Stopwatch() as watch:
        for number, head in zip(inputs.prs, heads):
            merge = _git_in(repo, "merge-tree", "--write-tree", tip, head, check=False)
            if merge.returncode != 0:
                continue
            tree = merge.stdout.split(b"\n", 1)[0].decode()
            tip = _git_in(repo, "commit-tree", tree, "-p", tip, "-m", f"carry pr/{number}").stdout.decode().strip()
            if tree != last_tree:          # a clean merge that changes nothing applied nothing
                clean += 1
            last_tree = tree
    shutil.rmtree(repo, ignore_errors=True)
    return Measurement("chain", watch.seconds, clean, cpu_seconds=watch.cpu_seconds, tree=last_tree)


def carrytool_argv() -> list[str]:
    """The installed console script beside this interpreter, else `python -m carrytool`."""
    script = Path(sys.executable).parent / "carrytool"
    return [str(script)] if script.exists() else [sys.executable, "-m", "carrytool"]


@dataclass(frozen=True)
class Timed:
    seconds: float
    rss_mb: float
    cpu_seconds: float
    returncode: int
    stdout: bytes
    stderr: bytes


def time_process(argv: list[str], scratch: Path, env: dict[str, str] | None = None) -> Timed:
    """Run ARGV to completion; wall time, and from `wait4` its tree's peak RSS and CPU time."""
    out, err = scratch / "stdout", scratch / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    return Timed(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, proc.returncode,
                 out.read_bytes(), err.read_bytes())


def sync_once(inputs: Inputs, repo: Path, scratch: Path) -> tuple[Timed, int, str | None]:
    """Time one `carrytool sync --format json` into REPO; return it, the number of applied entries and the
    composed commit."""
    argv = carrytool_argv() + ["sync", "-m", str(inputs.manifest), "--repo", str(repo), "--format", "json"]
    timed = time_process(argv, scratch)
    try:
        report = json.loads(timed.stdout)
    except ValueError:
        raise RuntimeError(f"carrytool sync exited {timed.returncode} without a JSON report:\n"
                           f"{timed.stderr.decode(errors='replace')}") from None
    return (timed, sum(1 for e in report.get("entries", ()) if e.get("status") == "applied"),
            (report.get("result") or {}).get("sha"))


def run_carrytool(inputs: Inputs, scratch: Path) -> Measurement:
    """Time `carrytool sync` in a clone that has upstream's objects, as the other runners' clones do
    (its fetch of the local refs is timed), then again warm (nothing to fetch)."""
    repo = scratch / "carrytool.git"
    git("init", "-q", "--bare", str(repo), cwd=scratch)
    git("fetch", "-q", str(inputs.upstream), f"refs/heads/{inputs.branch}:refs/heads/upstream-{inputs.branch}",
        *(f"+{inputs.ref(n)}:refs/remotes/pull/{n}" for n in inputs.prs),
        cwd=repo)   # the objects the other runners' clones have
    cold, applied, commit = sync_once(inputs, repo, scratch)
    warm, _, _ = sync_once(inputs, repo, scratch)
    tree = git("rev-parse", f"{commit}^{{tree}}", cwd=repo) if commit else None
    extra = {"warm_seconds": warm.seconds, "warm_cpu_seconds": warm.cpu_seconds, "exit_code": float(cold.returncode)}
    if inputs.explain:
        extra.update(explain_twice(inputs, repo, scratch))
    shutil.rmtree(repo, ignore_errors=True)
    return Measurement("carrytool", cold.seconds, applied, cold.rss_mb, cold.cpu_seconds, extra, tree)


SYNC_KEEPS = ("merges-git", "findings-git", "patchids-git", "yaml-git", "plans-git")   # the files of <git dir>/carrytool/cache a sync writes


def explain_twice(inputs: Inputs, repo: Path, scratch: Path) -> dict[str, float]:
    """Time `explain --offline` in REPO after its syncs: cold (nothing an explain keeps: no scope cache, so
    every Python blob it needs is parsed, and no pair decisions, so every pair is merged) and then warm
    (what the cold run kept), as a reviewer runs it after a sync. What the syncs kept stays (the clean
    chained merges, pipeline.keptmerges, what their landing checks found parsing the composed modules,
    pipeline.keptfindings, and the stale-stack check's patch ids, pipeline.keptpatchids): a reviewer's explain
    after the nightly sync finds them too."""
    for kept in sorted((repo / "carrytool" / "cache").glob("*")):
        if not kept.name.startswith(SYNC_KEEPS):
            shutil.rmtree(kept, ignore_errors=True) if kept.is_dir() else kept.unlink()
    argv = carrytool_argv() + ["explain", "--offline", "-m", str(inputs.manifest), "--repo", str(repo),
                               "--format", "json"]
    out: dict[str, float] = {}
    for key in ("explain", "explain_warm"):
        timed = time_process(argv, scratch)
        if timed.returncode not in (0, 1, 3):
            raise RuntimeError(f"carrytool explain exited {timed.returncode}:\n"
                               f"{timed.stderr.decode(errors='replace')}")
        out |= {f"{key}_seconds": timed.seconds, f"{key}_cpu_seconds": timed.cpu_seconds,
                f"{key}_rss_mb": timed.rss_mb}
    return out


STARTUP_RUNS = 5      # of each command, interleaved, per run of the runner


def run_startup(inputs: Inputs, scratch: Path) -> Measurement:
    """CLI start-up: the median wall time of `carrytool --version` and of `carrytool sync --help`, each
    run STARTUP_RUNS times, interleaved (the workload does not matter; its row carries the figures)."""
    argv = carrytool_argv()
    times: dict[str, list[float]] = {"version": [], "help": []}
    cpu: dict[str, list[float]] = {"version": [], "help": []}
    for _ in range(STARTUP_RUNS):
        for key, extra in (("version", ["--version"]), ("help", ["sync", "--help"])):
            timed = time_process(argv + extra, scratch)
            if timed.returncode != 0:
                raise RuntimeError(f"carrytool {' '.join(extra)} exited {timed.returncode}:\n"
                                   f"{timed.stderr.decode(errors='replace')}")
            times[key].append(timed.seconds)
            cpu[key].append(timed.cpu_seconds)
    median = statistics.median
    return Measurement("startup", median(times["version"]), 0, cpu_seconds=median(cpu["version"]),
                       extra={"help_seconds": median(times["help"]), "help_cpu_seconds": median(cpu["help"])})


RUNNERS: dict[str, Runner] = {
    "naive": run_naive,
    "chain": run_chain,
    "carrytool": run_carrytool,
    "startup": run_startup,
    # `explain --offline` is timed by the carrytool runner, in its repository after the syncs (Inputs.explain)
}
