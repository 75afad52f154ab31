"""Generate a synthetic upstream: one `git fast-import` per repository, deterministic to the byte.

The upstream is a bare repository: `refs/heads/main` is its head, `refs/pull/N/head` its open PRs.
Upstream history is an import commit and a few later commits; each PR branches off a commit in the
older half of that history, so merging it onto main is a real 3-way merge. Files are split into
slots of lines (slot 0 is upstream's, the others are PRs'), which is what makes two PRs touching
one file either compose cleanly (different slots) or conflict (the same slot).
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .workloads import Workload

T0 = 1_700_000_000
UPSTREAM_IDENT = "Bench Upstream <upstream@bench.invalid>"
FIRST_PR = 1001
FORK_BRANCH = "bench"


@dataclass
class Edit:
    """One file a PR changes: which slot it rewrites, and where it moves the file if it renames it."""

    path: str
    slot: int
    new_path: str | None = None


@dataclass
class PrPlan:
    number: int
    base: int                  # index of the upstream commit it branches off (0 = the import)
    edits: list[Edit]
    commits: int


@dataclass
class Plan:
    """Everything random about a workload, decided up front from its seed."""

    paths: list[str]
    prs: list[PrPlan]
    upstream: list[list[str]]                                     # paths each later upstream commit edits
    history: dict[str, list[int]] = field(default_factory=dict)  # path -> upstream commits that edit it

    def upstream_tag(self, path: str, commit: int) -> str:
        """The text of slot 0 of PATH as of upstream commit COMMIT."""
        seen = [k for k in self.history.get(path, ()) if k <= commit]
        return f"up{seen[-1]}" if seen else "base"


@dataclass(frozen=True)
class Generated:
    """Where a generated workload lives."""

    root: Path
    upstream: Path
    manifest: Path
    head: str
    prs: tuple[int, ...]


def all_paths(w: Workload) -> list[str]:
    """The upstream tree's file paths: two levels of directories of FILES_PER_DIR files."""
    per = w.files_per_dir
    return [f"pkg{i // (per * per):02d}/mod{(i // per) % per:02d}/f{i % per:03d}.py" for i in range(w.files)]


def plan_workload(w: Workload) -> Plan:
    """Decide (from the seed alone) which files each PR and each upstream commit edits."""
    rng = random.Random(w.seed)
    paths = all_paths(w)
    pool = list(paths)
    rng.shuffle(pool)
    used: dict[str, set[int]] = {}
    earlier: list[Edit] = []
    prs = []
    for i in range(w.prs):
        edits = _pr_edits(w, rng, pool, paths, used, earlier if i else [])
        earlier += edits
        commits = rng.choice((2, 3)) if rng.random() < w.multi_commit else 1
        prs.append(PrPlan(FIRST_PR + i, rng.randrange(0, w.upstream_commits // 2 + 1), edits, commits))
    plan = Plan(paths, prs, [])
    pr_paths = sorted({e.path for e in earlier})
    for k in range(1, w.upstream_commits + 1):
        chosen = {rng.choice(pr_paths) if pr_paths and rng.random() < 0.5 else rng.choice(paths)
                  for _ in range(w.upstream_touch)}
        plan.upstream.append(sorted(chosen))
        for path in chosen:
            plan.history.setdefault(path, []).append(k)
    return plan


def _pr_edits(w: Workload, rng: random.Random, pool: list[str], paths: list[str],
              used: dict[str, set[int]], earlier: list[Edit]) -> list[Edit]:
    count = 1 if w.pr_files <= 1 else rng.randint(1, 2 * w.pr_files - 1)
    edits: list[Edit] = []
    if earlier and rng.random() < w.overlap:
        other = rng.choice(earlier)
        free = sorted(set(range(1, w.slots)) - used[other.path])
        slot = other.slot if rng.random() < w.conflict or not free else rng.choice(free)
        edits.append(Edit(other.path, slot))
    while len(edits) < count:
        path = pool.pop() if pool else rng.choice(paths)
        if any(e.path == path for e in edits):
            continue
        edits.append(Edit(path, rng.randrange(1, w.slots)))
    for edit in edits:
        used.setdefault(edit.path, set()).add(edit.slot)
    fresh = [e for e in edits if len(used[e.path]) == 1]
    if fresh and rng.random() < w.renames:
        target = fresh[-1]
        head, _, name = target.path.rpartition("/")
        target.new_path = f"{head}/renamed_{name}"
    return edits


def render(w: Workload, path: str, tags: dict[int, str]) -> bytes:
    """A file's text: a header, then each slot's lines and a separator line that no one edits."""
    lines = [f"# {path}: synthetic module\n"]
    for slot in range(w.slots):
        tag = tags.get(slot, "base")
        lines += [f"s{slot}_{j} = '{tag}'\n" for j in range(w.change_lines)]
        lines.append(f"# end of slot {slot}\n")
    return "".join(lines).encode()


def _commit(ref: str, mark: int, ident: str, when: int, message: str, parent: int | None) -> bytes:
    msg = message.encode()
    head = (f"commit {ref}\nmark :{mark}\nauthor {ident} {when} +0000\ncommitter {ident} {when} +0000\n"
            f"data {len(msg)}\n").encode() + msg + b"\n"
    return head + (f"from :{parent}\n".encode() if parent else b"")


def _modify(path: str, data: bytes) -> bytes:
    return f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"


def iter_stream(w: Workload, plan: Plan) -> Iterator[bytes]:
    """The fast-import stream: upstream's history on main (marks 1..), then every PR's commits."""
    yield _commit("refs/heads/main", 1, UPSTREAM_IDENT, T0, "Import the synthetic upstream", None)
    for path in plan.paths:
        yield _modify(path, render(w, path, {}))
    for k, touched in enumerate(plan.upstream, 1):
        yield _commit("refs/heads/main", k + 1, UPSTREAM_IDENT, T0 + 3600 * k,
                      f"upstream: change {len(touched)} files", None)
        for path in touched:
            yield _modify(path, render(w, path, {0: plan.upstream_tag(path, k)}))
    mark = len(plan.upstream) + 1
    for pr in plan.prs:
        ident = f"contributor-{pr.number} <contributor-{pr.number}@bench.invalid>"
        for j in range(1, pr.commits + 1):
            mark += 1
            when = T0 + 3600 * pr.base + 60 * j + pr.number % 600
            yield _commit(f"refs/pull/{pr.number}/head", mark, ident, when,
                          f"PR #{pr.number}: part {j} of {pr.commits}", pr.base + 1 if j == 1 else None)
            for edit in pr.edits:
                tags = {0: plan.upstream_tag(edit.path, pr.base), edit.slot: f"pr{pr.number}v{j}"}
                if edit.new_path and j == 1:
                    yield f"D {edit.path}\n".encode()
                yield _modify(edit.new_path or edit.path, render(w, edit.path, tags))
    yield b"done\n"


def git(*args: str, cwd: Path, input: bytes | None = None) -> str:
    """Run a git command with config that cannot change the result; return its stdout."""
    argv = ["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args]
    proc = subprocess.run(argv, cwd=cwd, input=input, capture_output=True, check=False, env=clean_env())
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().strip()


def clean_env() -> dict[str, str]:
    """The caller's environment without GIT_* and user config, with a fixed identity."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
                "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@bench.invalid",
                "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@bench.invalid",
                "GIT_AUTHOR_DATE": f"{T0} +0000", "GIT_COMMITTER_DATE": f"{T0} +0000"})
    return env


def fast_import(repo: Path, chunks: Iterator[bytes]) -> None:
    """Feed CHUNKS to one `git fast-import` process in REPO."""
    import tempfile

    argv = ["git", "-c", "gc.auto=0", "fast-import", "--quiet", "--done", "--date-format=raw"]
    with tempfile.TemporaryFile() as errors:   # a file, not a pipe: a chatty git cannot block us
        with subprocess.Popen(argv, cwd=repo, stdin=subprocess.PIPE, stderr=errors, env=clean_env()) as proc:
            assert proc.stdin is not None
            try:
                for chunk in chunks:
                    proc.stdin.write(chunk)
            finally:
                proc.stdin.close()
        if proc.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"git fast-import failed: {errors.read().decode(errors='replace')}")


def write_manifest(path: Path, upstream_url: str, prs: list[int], *, branch: str = "main") -> None:
    """A v1 manifest carrying PRS in order; conflicts are skipped, not fatal."""
    lines = ["# generated by `python -m bench`: do not edit", "version: 1", "upstream:",
             f"  url: {upstream_url}", f"  branch: {branch}", "fork:", f"  branch: {FORK_BRANCH}",
             "identity: {name: carrytool-bench, email: bench@bench.invalid}",
             "policy:", "  on_conflict: skip", "entries:"]
    lines += [f"  - pr: {n}" for n in prs]
    path.write_text("\n".join(lines) + "\n")


def generate(w: Workload, root: Path) -> Generated:
    """Build W's upstream (bare, packed) and manifest under ROOT, which must not exist yet."""
    upstream = root / "upstream.git"
    root.mkdir(parents=True)
    git("init", "-q", "--bare", "-b", "main", str(upstream), cwd=root)
    plan = plan_workload(w)
    fast_import(upstream, iter_stream(w, plan))
    git("pack-refs", "--all", cwd=upstream)
    git("repack", "-a", "-d", "-q", cwd=upstream)
    prs = [pr.number for pr in plan.prs]
    manifest = root / "manifest.yaml"
    write_manifest(manifest, "upstream.git", prs)
    return Generated(root, upstream, manifest, git("rev-parse", "refs/heads/main", cwd=upstream), tuple(prs))


def load_or_generate(w: Workload, cache: Path, *, fresh: bool = False) -> Generated:
    """Reuse the workload generated before under CACHE (keyed by its parameters), else generate it."""
    import shutil

    root = cache / f"{w.name}-{w.digest()}"
    done = root / "DONE"
    if root.exists() and (fresh or not done.exists()):
        shutil.rmtree(root)
    if not root.exists():
        generated = generate(w, root)
        done.write_text(generated.head + "\n")
        return generated
    upstream = root / "upstream.git"
    prs = tuple(FIRST_PR + i for i in range(w.prs))
    return Generated(root, upstream, root / "manifest.yaml", git("rev-parse", "refs/heads/main", cwd=upstream), prs)
