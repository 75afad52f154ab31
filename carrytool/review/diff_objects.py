"""The objects `carrytool diff` reads, all local: a lock naming one that is not here is refused with the
fetch that brings it."""

from __future__ import annotations

import shlex
from pathlib import Path

from carrytool.errors import EnvironmentProblem
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.urls import redact, resolve_local
from carrytool.manifest.model import Manifest
from carrytool.review.nights import Night

# -- missing objects --------------------------------------------------------------------------------------

class MissingObjects(EnvironmentProblem):
    """An object a lock names is not in the repository (exit 4): the message names the fetch that brings it."""


def require_objects(git: Git, old: Night, new: Night) -> dict[tuple[int, str], str]:
    """Refuse (exit 4) when a SHA either lock names is not here, naming the fetch that would bring each;
    what only part of the diff reads is returned instead, by (0 for OLD, 1 for NEW, what it is) -> that line:
    a PR's head or a carry's commit (`pr/N head`: a range-diff), a report's composed commit (`result`: the
    resolutions and the paths unions provide; a report has each entry's status itself). A SHA one night
    needs whole (its upstream) is refused even where a night names it as a head too (helper-81: that git
    error had no fetch)."""
    missing: list[str] = []
    absent: dict[tuple[int, str], str] = {}
    here: dict[str, bool] = {}
    for index, night in enumerate((old, new)):
        for sha, fetch, what, optional in _wanted(night, (new, old)[index].manifest):
            if not sha:
                continue
            if sha not in here:
                here[sha] = git.object_type(sha) is not None
            if here[sha]:
                continue
            line = f"{sha} ({what} in {night.label}): {fetch}"
            if optional:
                absent[(index, optional)] = line
            elif not any(known.startswith(sha) for known in missing):
                missing.append(line)
    if missing:
        raise MissingObjects("objects the locks name are not in this repository (diff reads local objects "
                             "only):\n  " + "\n  ".join(missing),
                             hint="run the fetches above in the repository (or `carrytool sync --dry-run`), "
                                  "then rerun carrytool diff")
    return absent


_THERE = "run diff in the repository that night's sync ran in"


def _wanted(night: Night, other: Manifest | None) -> list[tuple[str | None, str, str, str | None]]:
    """(SHA, the fetch that brings it, what it is, None where the whole diff needs it, else the key it is
    left out under) for NIGHT's objects. The fork's URL and branch are NIGHT's manifest's, else OTHER's
    (the other night's: a red night's report names no manifest, nor does a lock copied away from its own;
    h262: the fetch said `git fetch FORK_URL BRANCH`)."""
    lock, manifest = night.lock, night.manifest
    base = night.base or Path.cwd()
    url = redact(resolve_local(lock["upstream"]["url"], base))
    branch = lock["upstream"]["branch"]
    forks = manifest or other
    fork_url = redact(resolve_local(forks.fork.url, forks.base_dir)) if forks and forks.fork.url else None
    fork_branch = (lock.get("fork") or {}).get("branch") or (forks.fork.branch if forks else None)

    def pr_ref(number: int) -> str:
        return manifest.upstream.pr_ref_for(number) if manifest else f"refs/pull/{number}/head"

    def fetch(source: str, ref: str) -> str:
        return shlex.join(["git", "fetch", source, ref])

    result = lock.get("result")
    what = f"the composed {fork_branch}" if fork_branch else "the composed branch"
    wanted = [(lock["upstream"]["sha"], fetch(url, branch), f"upstream {branch}", None),
              (result, _brings_result(night, result, fork_url, fork_branch, forks is not None), what,
               "result" if night.run is not None else None)]
    for item in lock["entries"]:
        if item.get("head") and item["id"].startswith("pr/") and item["id"][3:].isascii() and item["id"][3:].isdigit():
            # the PR's ref has its head now: after a force-push that night's head is only had by its SHA
            # (where the server serves one: GitHub keeps them), else from a repository of that night's sync
            # (its refs/carrytool/) (helper-79: the ref alone looped)
            wanted.append((item["head"], fetch(url, pr_ref(int(item["id"][3:]))) + "; if the PR moved since: "
                           + fetch(url, item["head"]), f"{item['id']} head", f"{item['id']} head"))
        if item.get("commit") and item.get("patch"):      # made from the patch where that night's sync ran
            wanted.append((item["commit"], f"made by that night's sync from {item['patch']} (no remote has it): "
                           + _THERE.replace("that night's sync", "that sync"), f"{item['id']} commit",
                           f"{item['id']} commit"))
        elif item.get("commit"):
            brings = fetch(fork_url, item["commit"]) if fork_url else \
                f"{_no_fork(forks is not None)}: it is in the repository that night's sync ran in"
            wanted.append((item["commit"], brings, f"{item['id']} commit", f"{item['id']} commit"))
    return wanted


def _brings_result(night: Night, result: str | None, fork_url: str | None, fork_branch: str | None,
                   known: bool) -> str:
    """How NIGHT's composed commit RESULT is had: a fetch from the fork (a lock's night published it; a report's
    when it says `pushed`), else where that night's sync ran (h262: a red night publishes nothing)."""
    run = night.run
    if run is not None and not run.get("pushed"):
        why = "a red night publishes nothing" if not run["ok"] else "that night's sync pushed nothing (no " \
            "`--push`, or `--dry-run`)"
        return f"never pushed ({why}), so no fetch brings it; sync keeps it where it ran: {_THERE}"
    if not fork_url or not fork_branch:
        return f"{_no_fork(known)}: sync wrote its branch in the repository it ran in; {_THERE}"
    brings = shlex.join(["git", "fetch", fork_url, fork_branch])
    if result:      # a later night composed the branch again: that night's result is had by its SHA only
        # (helper-100: the branch alone could never bring it), where the fork serves one, or from the
        # repository its sync ran in
        brings += f"; if {fork_branch} was composed again since: {shlex.join(['git', 'fetch', fork_url, result])}, " \
                  f"or {_THERE}"
    return brings


def _no_fork(known: bool) -> str:
    return "the manifest names no fork url" if known else "the fork's url is not known (no manifest of either night)"
