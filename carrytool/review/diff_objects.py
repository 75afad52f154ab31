"""The objects `carrytool diff` reads, all local: a lock naming one that is not here is refused with the
fetch that brings it."""

from __future__ import annotations

import shlex
from pathlib import Path

from carrytool.errors import EnvironmentProblem
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.urls import redact, resolve_local
from carrytool.review.nights import Night

# -- missing objects --------------------------------------------------------------------------------------

class MissingObjects(EnvironmentProblem):
    """An object a lock names is not in the repository (exit 4): the message names the fetch that brings it."""


def require_objects(git: Git, old: Night, new: Night) -> dict[tuple[int, str], str]:
    """Refuse (exit 4) when a SHA either lock names is not here, naming the fetch that would bring each;
    a PR's head or a carry's commit (only a range-diff reads them) is returned instead, by (0 for OLD, 1
    for NEW, what it is: `pr/N head`) -> that line. A SHA one night needs whole (its upstream) is
    refused even where a night names it as a head too (helper-81: that git error had no fetch)."""
    missing: list[str] = []
    absent: dict[tuple[int, str], str] = {}
    here: dict[str, bool] = {}
    for index, night in enumerate((old, new)):
        for sha, fetch, what, range_only in _wanted(night):
            if not sha:
                continue
            if sha not in here:
                here[sha] = git.object_type(sha) is not None
            if here[sha]:
                continue
            line = f"{sha} ({what} in {night.label}): {fetch}"
            if range_only:
                absent[(index, what)] = line
            elif not any(known.startswith(sha) for known in missing):
                missing.append(line)
    if missing:
        raise MissingObjects("objects the locks name are not in this repository (diff reads local objects "
                             "only):\n  " + "\n  ".join(missing),
                             hint="run the fetches above in the repository (or `carrytool sync --dry-run`), "
                                  "then rerun carrytool diff")
    return absent


def _wanted(night: Night) -> list[tuple[str | None, str, str, bool]]:
    """(SHA, the fetch that brings it, what it is, whether only a range-diff reads it) for NIGHT's objects."""
    lock, manifest = night.lock, night.manifest
    base = night.base or Path.cwd()
    url = redact(resolve_local(lock["upstream"]["url"], base))
    branch = lock["upstream"]["branch"]
    fork_url = redact(resolve_local(manifest.fork.url, base)) if manifest and manifest.fork.url else "FORK_URL"
    fork_branch = (lock.get("fork") or {}).get("branch") or (manifest.fork.branch if manifest else "BRANCH")

    def pr_ref(number: int) -> str:
        return manifest.upstream.pr_ref_for(number) if manifest else f"refs/pull/{number}/head"

    def fetch(source: str, ref: str) -> str:
        return shlex.join(["git", "fetch", source, ref])

    result = lock.get("result")
    brings_result = fetch(fork_url, fork_branch)
    if result:      # a later night composed the branch again: that night's result is had by its SHA only
        # (helper-100: the branch alone could never bring it), where the fork serves one, or from the
        # repository its sync ran in
        brings_result += f"; if {fork_branch} was composed again since: {fetch(fork_url, result)}, or run diff " \
                         "in the repository that night's sync ran in"
    wanted = [(lock["upstream"]["sha"], fetch(url, branch), f"upstream {branch}", False),
              (result, brings_result, f"the composed {fork_branch}", False)]
    for item in lock["entries"]:
        if item.get("head") and item["id"].startswith("pr/") and item["id"][3:].isascii() and item["id"][3:].isdigit():
            # the PR's ref has its head now: after a force-push that night's head is only had by its SHA
            # (where the server serves one: GitHub keeps them), else from a repository of that night's sync
            # (its refs/carrytool/) (helper-79: the ref alone looped)
            wanted.append((item["head"], fetch(url, pr_ref(int(item["id"][3:]))) + "; if the PR moved since: "
                           + fetch(url, item["head"]), f"{item['id']} head", True))
        if item.get("commit") and item.get("patch"):      # made from the patch where that night's sync ran
            wanted.append((item["commit"], f"made by that night's sync from {item['patch']} (no remote has it): "
                           "run diff in the repository that sync ran in", f"{item['id']} commit", True))
        elif item.get("commit"):
            wanted.append((item["commit"], fetch(fork_url, item["commit"]), f"{item['id']} commit", True))
    return wanted
