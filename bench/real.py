"""A real corpus: a bare repository whose PRs are `refs/pull/N/head`; pick recent ones, write a manifest."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .generate import clean_env, git, write_manifest
from .runners import Inputs


def default_branch(repo: Path) -> str:
    """The branch HEAD names in a bare repository (main when HEAD is detached or dangling)."""
    proc = subprocess.run(["git", "symbolic-ref", "--short", "-q", "HEAD"], cwd=repo, capture_output=True,
                          env=clean_env())
    name = proc.stdout.decode().strip()
    return name if proc.returncode == 0 and name else "main"


def pr_numbers(repo: Path) -> list[int]:
    """Every N of refs/pull/N/head, newest (highest) first."""
    out = git("for-each-ref", "--format=%(refname)", "refs/pull/", cwd=repo)
    numbers = []
    for ref in out.splitlines():
        parts = ref.split("/")
        if len(parts) == 4 and parts[3] == "head" and parts[2].isdigit():
            numbers.append(int(parts[2]))
    return sorted(numbers, reverse=True)


def recent_prs(repo: Path, branch: str, count: int, within: int) -> list[int]:
    """The newest COUNT PRs that branch off one of the last WITHIN commits of BRANCH and are not in it.

    A PR whose head is already in the branch (merged) has nothing to carry; one that branches off far
    back is most likely stale. Returned oldest first: the order a fork would have added them.
    """
    recent = set(git("rev-list", f"--max-count={within}", f"refs/heads/{branch}", cwd=repo).split())
    chosen: list[int] = []
    for number in pr_numbers(repo):
        head = f"refs/pull/{number}/head"
        proc = subprocess.run(["git", "merge-base", f"refs/heads/{branch}", head], cwd=repo,
                              capture_output=True, env=clean_env())
        base = proc.stdout.decode().strip()
        if proc.returncode != 0 or base not in recent:
            continue
        if base == git("rev-parse", head, cwd=repo):
            continue
        chosen.append(number)
        if len(chosen) == count:
            break
    return sorted(chosen)


def real_inputs(repo: Path, out: Path, *, count: int, within: int) -> Inputs:
    """Inputs for the three runners from REPO; the manifest goes to OUT (nothing is written to REPO)."""
    repo = repo.resolve()
    branch = default_branch(repo)
    prs = recent_prs(repo, branch, count, within)
    if not prs:
        raise SystemExit(f"{repo}: no refs/pull/N/head branches off the last {within} commits of {branch}")
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.yaml"
    write_manifest(manifest, str(repo), prs, branch=branch)
    files = len(git("ls-tree", "-r", "--name-only", f"refs/heads/{branch}", cwd=repo).splitlines())
    return Inputs(f"real:{repo.parent.name if repo.name in ('repo', '.git') else repo.name}", repo, manifest,
                  tuple(prs), branch=branch, files=files)
