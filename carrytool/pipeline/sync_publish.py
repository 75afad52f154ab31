"""Publishing what sync composed: the push to the fork with its lease (and the tip it replaces), the
lock renamed into place, and what an interrupt while publishing leaves, in words."""

from __future__ import annotations

import time

from carrytool.errors import EnvironmentProblem, PushError
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.urls import redact, resolve_local
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import StagedLock
from carrytool.pipeline.resolve import Resolved
from carrytool.pipeline.sync_records import SyncOptions
from carrytool.pipeline.sync_replaced import replaced_ref


def _moved_so_far(manifest: Manifest, result: dict, pushing: bool) -> str | None:
    """What an interrupt of _finish leaves, in words; None when nothing moved (the usual sentence holds)."""
    branch, sha = manifest.fork.branch, str(result.get("sha"))[:12]
    if result.get("updated"):
        pushed = " and pushed to the fork" if result.get("pushed") else ""
        return f"{branch} was moved to {sha}{pushed}, but the lock was not written: run sync again, which writes it"
    if result.get("pushed"):
        return f"the fork's {branch} was pushed ({sha}), but the local branch and the lock were not written: run " \
               "sync again"
    if pushing:
        return f"interrupted while pushing: the fork's {branch} may have moved to {sha}; the local branch and the " \
               "lock were not written: run sync again"
    return None


def _publish_lock(staged: StagedLock, result: dict) -> bool:
    try:
        return staged.commit()
    except EnvironmentProblem as exc:
        moved = (f"{result['branch']} moved to {result['sha']}" if result.get("updated")
                 else f"{result['branch']} was already at {result['sha']}")
        raise EnvironmentProblem(f"{exc.message}; {moved}, but the lock was not updated",
                                 hint="fix the file system and run sync again: it rewrites the lock") from None


def _refused_as_moved(porcelain: str) -> bool:
    """Whether `git push --porcelain` refused the update itself (`[rejected] (stale info)`: the lease; or
    a branch that moved on): its status line, not what a remote hook printed. A `[remote rejected]` (a
    hook, the remote failing to unpack, a checked-out branch) is not a moved branch."""
    return any(line.startswith("!\t") and "\t[rejected] " in line for line in porcelain.splitlines())


def push(manifest: Manifest, git: Git, sha: str, resolved: Resolved, options: SyncOptions,
         keep: str | None = None) -> bool:
    """Push SHA to the fork branch with a lease on the value seen at fetch time; False when already there.
    KEEP: the fork branch's tip when it has commits sync did not make (`replaced-commits`), pushed in the same
    atomic push to refs/carrytool/<branch>/replaced/<tip> on the fork: the branch moves only if that ref is
    made too, so what was pushed there by hand stays in the fork (a CI runner's clone is thrown away)."""
    url = resolve_local(manifest.fork.url, manifest.base_dir)  # type: ignore[arg-type]
    expected = resolved.fork_remote
    if expected == sha:
        return False
    dest = f"refs/heads/{manifest.fork.branch}"
    lease = f"--force-with-lease={dest}:{expected or ''}"
    extra = ["--atomic"] if keep else []
    refspecs = [f"{sha}:{dest}"] + ([f"{keep}:{replaced_ref(manifest, keep)}"] if keep else [])
    git.keep(sha)                     # what a push sends is in the store before it runs (see Git.run)
    attempts = 0
    while True:
        proc = git.run("push", "--porcelain", "--no-verify", *extra, lease, "--end-of-options", url, *refspecs,
                       check=False)
        if proc.returncode == 0:
            return True
        stderr = redact(proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace"))
        if _refused_as_moved(proc.stdout.decode("utf-8", "replace")):
            raise PushError(f"the fork's {manifest.fork.branch} moved since it was fetched; nothing was "
                            "overwritten", stderr=stderr, hint="run sync again")
        attempts += 1
        if attempts >= 3:
            raise PushError(f"cannot push to {redact(manifest.fork.url or '')}", stderr=stderr)
        time.sleep(options.retry_delay * (2 ** (attempts - 1)))
