"""Fetch what the manifest names into refs/carrytool/<fork-branch>/... and resolve it to full SHAs."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from carrytool.errors import FetchError, GitError, InputError, UnknownRef
from carrytool.gitlayer.git import Git, Signature, is_sha
from carrytool.gitlayer.urls import redact, resolve_local
from carrytool.manifest.model import Entry, Manifest

Progress = Callable[[str, int, int], None]
_MISSING_REF = re.compile(r"couldn't find remote ref (\S+)")
_BAD_OBJECT = re.compile(r"(?:not our ref|no such remote ref|unadvertised object|bad object) ([0-9a-f]{40})?")
RETRIES = 3


@dataclass
class Resolved:
    """Every input of a composition as a full SHA (what a lock records)."""

    upstream: str
    heads: dict[int, str] = field(default_factory=dict)          # PR number -> head commit
    commits: dict[str, str] = field(default_factory=dict)        # carry id -> carried commit
    patch_bases: dict[str, str] = field(default_factory=dict)    # carry id -> synthetic base of a patch
    messages: dict[str, str] = field(default_factory=dict)       # carry id -> its patch's message (commit_patch)
    missing: dict[int, str] = field(default_factory=dict)        # PR number -> why it could not be had
    passed_pins: dict[int, str] = field(default_factory=dict)    # pinned PR number -> its ref's head, not the pin
    fork_remote: str | None = None                               # the fork branch as last seen remotely
    fork_remote_known: bool = False


def namespace(manifest: Manifest) -> str:
    return f"refs/carrytool/{manifest.fork.branch}"


def wanted_prs(manifest: Manifest) -> list[int]:
    """PR numbers whose heads a sync needs: every PR entry, and superseded PRs with a folded head."""
    numbers: dict[int, None] = {}
    for entry in manifest.entries:
        if entry.kind == "pr":
            numbers[entry.number] = None  # type: ignore[index]
    for entry in manifest.entries:
        for sup in entry.supersedes:
            if sup.head or sup.pr in numbers:
                numbers[sup.pr] = None
    return list(numbers)


def resolve(manifest: Manifest, git: Git, *, offline: bool, progress: Progress | None = None,
            retry_delay: float = 1.0) -> Resolved:
    """Fetch (unless OFFLINE) and resolve upstream, PR heads and carried commits to full SHAs."""
    ns = namespace(manifest)
    prs = wanted_prs(manifest)
    upstream_url = resolve_local(manifest.upstream.url, manifest.base_dir)
    missing: dict[int, str] = {}
    if not offline:
        specs = {f"+refs/heads/{manifest.upstream.branch}": f"{ns}/upstream"}
        for number in prs:
            specs[f"+{manifest.upstream.pr_ref_for(number)}"] = f"{ns}/pr/{number}"
        if progress:
            progress("fetch", 0, 1)
        absent = _fetch(git, upstream_url, specs, retry_delay=retry_delay)
        upstream_ref = f"+refs/heads/{manifest.upstream.branch}"
        if upstream_ref in absent:
            raise UnknownRef(f"upstream has no branch '{manifest.upstream.branch}'",
                             where=f"upstream.branch in {manifest.path}",
                             hint=f"check `git ls-remote {redact(manifest.upstream.url)}`")
        for number in prs:
            if f"+{manifest.upstream.pr_ref_for(number)}" in absent:
                missing[number] = f"upstream has no {manifest.upstream.pr_ref_for(number)}"
                git.delete_ref(f"{ns}/pr/{number}")
        if progress:
            progress("fetch", 1, 1)
    values = git.refs_named([f"{ns}/upstream", *(f"{ns}/pr/{number}" for number in prs)])
    if values is None:
        raise GitError(f"cannot read the refs under {ns}")
    upstream = values.get(f"{ns}/upstream")
    if upstream is None:
        raise UnknownRef(f"no fetched upstream in {ns}/upstream",
                         hint="run once without --offline to fetch upstream")
    resolved = Resolved(upstream=upstream)
    fetched = {number: values[f"{ns}/pr/{number}"] for number in prs if f"{ns}/pr/{number}" in values}
    kinds = git.object_types(list(fetched.values()))
    for number in prs:
        head = fetched.get(number)
        if head:
            resolved.heads[number] = head if kinds[head] == "commit" else _peel_head(manifest, git, number, head)
        elif number not in missing:
            missing[number] = (f"no fetched head in {ns}/pr/{number}" if offline
                               else f"upstream has no {manifest.upstream.pr_ref_for(number)}")
    _apply_pins(manifest, git, resolved, missing, upstream_url, offline)
    resolved.missing = missing
    _resolve_carries(manifest, git, resolved, offline=offline, retry_delay=retry_delay)
    return resolved


def _peel_head(manifest: Manifest, git: Git, number: int, sha: str) -> str:
    """The commit a fetched PR ref names (an annotated tag peels to its commit); a ref that names a
    tree, a blob or a tag of either is bad input naming the entry (exit 2), never an empty change."""
    kind = git.object_type(sha)
    commit = sha if kind == "commit" else git.rev_parse(sha) if kind == "tag" else None
    if commit is not None:
        return commit
    entry = next((e for e in manifest.entries if e.kind == "pr" and e.number == number), None) or \
        next((e for e in manifest.entries if any(s.pr == number for s in e.supersedes)), None)
    if entry is not None and entry.kind == "pr" and entry.head:
        return sha          # its pinned `head:` wins over the ref (_apply_pins)
    who = f"pr/{number}" if entry is None or entry.kind == "pr" else f"pr/{number} (superseded by {entry.id})"
    ref = manifest.upstream.pr_ref_for(number)
    raise InputError(f"{who}: upstream's {ref} points at a {kind or 'missing object'} ({sha[:12]}), not a "
                     "commit", where=f"{manifest.path}:{entry.line}" if entry else str(manifest.path),
                     hint=f"check `git ls-remote {redact(manifest.upstream.url)} {ref}`; pin the PR's commit "
                          "with `head:`, or remove the entry")


def _apply_pins(manifest: Manifest, git: Git, resolved: Resolved, missing: dict[int, str], url: str,
                offline: bool) -> None:
    """A pinned `head:` wins over the PR ref; it must exist (fetched by SHA when it does not)."""
    for entry in manifest.entries:
        if entry.kind != "pr" or not entry.head:
            continue
        sha = _lookup_commit(git, entry.head)
        if sha is None and not offline and len(entry.head) == 40:
            _fetch(git, url, {entry.head: f"{namespace(manifest)}/pin/{entry.number}"}, retry_delay=0)
            sha = _lookup_commit(git, entry.head)
        if sha is None:
            raise UnknownRef(f"{entry.id}: pinned head {entry.head} {_not_a_commit(git, entry.head)}",
                             where=f"{manifest.path}:{entry.line}",
                             hint="pin a full 40-digit SHA that upstream still has, or fetch it into the repo")
        ref_head = resolved.heads.get(entry.number)  # type: ignore[arg-type]
        if ref_head is not None and ref_head != sha:     # the PR was pushed since the pin (sync_warnings.stale_pins)
            resolved.passed_pins[entry.number] = ref_head  # type: ignore[index]
        resolved.heads[entry.number] = sha  # type: ignore[index]
        missing.pop(entry.number, None)  # type: ignore[arg-type]


def _stopped_fold(git: Git, entry: Entry) -> str | None:
    """The hint for a union ENTRY whose fold is stopped on a conflict (`union new` or `compose`): it has
    written neither its patch nor its commit yet. None when no fold of it is under way in GIT."""
    if not entry.supersedes or not (git.git_dir / "carrytool" / "union" / str(entry.name) / "state.json").exists():
        return None
    name = shlex.quote(str(entry.name))
    return (f"its fold is stopped on a conflict and has written nothing yet: resolve it, then "
            f"`carrytool union continue {name}` (or `carrytool union abort {name}`)")


def _not_a_commit(git: Git, name: str | None) -> str:
    """Why NAME (a SHA or prefix that names no commit) cannot be composed: absent, or another object."""
    kind = git.object_type(name) if name and not name.startswith("-") else None
    return f"is a {kind}, not a commit" if kind else "is not in the repository"


def _lookup_commit(git: Git, name: str) -> str | None:
    sha = git.rev_parse(name)
    if sha is None or not sha.startswith(name.lower()):
        return None
    return sha


def _resolve_carries(manifest: Manifest, git: Git, resolved: Resolved, *, offline: bool,
                     retry_delay: float) -> None:
    ns = namespace(manifest)
    want_fetch: dict[str, str] = {}
    for entry in manifest.entries:
        if entry.kind != "carry" or not entry.commit:
            continue
        sha = _lookup_commit(git, entry.commit)
        if sha is None and not offline and manifest.fork.url and len(entry.commit) == 40:
            want_fetch[entry.commit] = f"{ns}/carry/{entry.name}"
    fork_url = resolve_local(manifest.fork.url, manifest.base_dir) if manifest.fork.url else None
    if fork_url and not offline:
        specs = dict(want_fetch)
        specs[f"+refs/heads/{manifest.fork.branch}"] = f"{ns}/fork"
        absent = _fetch(git, fork_url, specs, retry_delay=retry_delay)
        resolved.fork_remote_known = True
        if f"+refs/heads/{manifest.fork.branch}" in absent:
            git.delete_ref(f"{ns}/fork")
    resolved.fork_remote = git.ref_value(f"{ns}/fork") if fork_url else None
    for entry in manifest.entries:
        if entry.kind != "carry":
            continue
        if entry.patch:
            base, head, resolved.messages[entry.id] = commit_patch(manifest, git, entry, resolved.upstream)
            resolved.commits[entry.id], resolved.patch_bases[entry.id] = head, base
            continue
        sha = _lookup_commit(git, entry.commit)  # type: ignore[arg-type]
        if sha is None:
            hint = _stopped_fold(git, entry) or ("name it by its full 40-digit SHA so it can be fetched from fork.url"
                    if len(entry.commit or "") < 40 else
                    "set fork.url to a remote that has it, or fetch it into the repository" if not manifest.fork.url
                    else "push it to the fork, or run without --offline" if offline else
                    "check that fork.url has this commit")
            raise UnknownRef(f"{entry.id}: commit {entry.commit} {_not_a_commit(git, entry.commit)}", where=
                             f"{manifest.path}:{entry.line}", hint=hint)
        resolved.commits[entry.id] = sha
        if git.ref_value(f"{ns}/carry/{entry.name}") != sha:
            git.update_ref(f"{ns}/carry/{entry.name}", sha, git.ref_value(f"{ns}/carry/{entry.name}"),
                           "carrytool: keep carried commit")


def see_fork_branch(manifest: Manifest, git: Git, resolved: Resolved, *, offline: bool, retry_delay: float) -> None:
    """Record the fork branch as the fork has it now (fetched; with OFFLINE, as last fetched): the value
    a push's lease expects. `sync --locked` resolves nothing else from the network."""
    if not manifest.fork.url:
        return
    ns = namespace(manifest)
    if not offline:
        url = resolve_local(manifest.fork.url, manifest.base_dir)
        src = f"+refs/heads/{manifest.fork.branch}"
        if src in _fetch(git, url, {src: f"{ns}/fork"}, retry_delay=retry_delay):
            git.delete_ref(f"{ns}/fork")
        resolved.fork_remote_known = True
    resolved.fork_remote = git.ref_value(f"{ns}/fork")


def _fetch(git: Git, url: str, specs: dict[str, str], *, retry_delay: float) -> set[str]:
    """One `git fetch URL SRC:DST...` for all refs; return the sources the remote does not have.

    A missing ref makes git refuse the whole fetch, so it is dropped and the fetch retried; a
    transient failure is retried with backoff, then raised as FetchError (exit 4). Every update is forced
    (`+SRC`, whether SPECS say so or not): the refs are carrytool's own, and a carry amended or a head
    pinned anew is no fast-forward of the commit fetched before, which git refuses, silently under
    --quiet (helper-80: the night failed once with "cannot fetch", then passed).
    """
    present = git.fetch_present(url, specs)
    if present is not None:         # a local upstream whose objects are all here: no fetch needed
        return present
    absent: set[str] = set()
    attempt = 0
    while True:
        todo = {src: dst for src, dst in specs.items() if src not in absent}
        if not todo:
            return absent
        args = ["fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--quiet",
                "--no-auto-maintenance", "--no-auto-gc", "--end-of-options", url]
        args += [f"+{src.lstrip('+')}:{dst}" for src, dst in todo.items()]
        proc = git.run(*args, check=False)
        if proc.returncode == 0:
            return absent
        stderr = proc.stderr.decode("utf-8", "replace")
        gone = set(_MISSING_REF.findall(stderr))
        found = False
        for src in todo:
            bare = src.lstrip("+")
            if bare in gone or (is_sha(bare) and bare in stderr):
                absent.add(src)
                found = True
        if found:
            continue
        attempt += 1
        if attempt >= RETRIES or _permanent(stderr):
            raise FetchError(f"cannot fetch from {redact(url)}", stderr=redact(stderr),
                             hint="check the URL and your network/credentials; --offline uses what was "
                                  "fetched before")
        time.sleep(retry_delay * (2 ** (attempt - 1)))


def _permanent(stderr: str) -> bool:
    """Failures that a retry cannot fix (a path that is not a repository, authentication)."""
    text = stderr.lower()
    return any(s in text for s in ("does not appear to be a git repository", "not found", "authentication failed",
                                   "permission denied", "could not read username", "repository not found",
                                   "no such file or directory", "cannot lock ref"))


def commit_patch(manifest: Manifest, git: Git, entry: Entry, upstream: str) -> tuple[str, str, str]:
    """Turn a format-patch file into (base, head) commits, so it merges 3-way like a carried commit, and
    the patch's message (its head commit has the subject alone, as it always had: the same SHAs).

    The base is the patch's own preimage (`git apply --build-fake-ancestor`) when its blobs are known,
    else the upstream tree; the commits are deterministic (fixed identity, date 0).
    """
    path = (manifest.base_dir / entry.patch).resolve()  # type: ignore[operator]
    try:
        data = path.read_bytes()
    except OSError as exc:
        hint = None
        if isinstance(exc, FileNotFoundError) and entry.supersedes:
            hint = _stopped_fold(git, entry) or f"`carrytool union compose {shlex.quote(str(entry.name))}` writes it"
        raise InputError(f"{entry.id}: cannot read patch {entry.patch}: {exc.strerror}",
                         where=f"{manifest.path}:{entry.line}", hint=hint) from None
    tmp = git.tmpdir()
    patch_file = tmp / f"{entry.name}.patch"
    patch_file.write_bytes(data)
    sig = Signature(manifest.identity.name, manifest.identity.email, 0)
    base_tree = _fake_ancestor(git, patch_file, tmp)
    if base_tree is None:
        base_tree = git.commit_info(upstream)["tree"]  # type: ignore[assignment]
    head_tree = _apply_to_tree(git, patch_file, base_tree, tmp)  # type: ignore[arg-type]
    if head_tree is None:
        raise InputError(f"{entry.id}: patch {entry.patch} does not apply to its own base nor to upstream",
                         where=f"{manifest.path}:{entry.line}",
                         hint="regenerate it with `git format-patch` against upstream")
    base = git.write_commit(base_tree, [], sig, sig, f"carrytool: base of {entry.patch}\n")  # type: ignore[arg-type]
    subject = _patch_subject(data) or entry.title or entry.id
    head = git.write_commit(head_tree, [base], sig, sig, f"{subject}\n")
    git.keep(head)          # the report and the lock name both; nothing composed reaches them
    return base, head, patch_message(data)


def _fake_ancestor(git: Git, patch: Path, tmp: Path) -> str | None:
    index = tmp / "fake-ancestor.index"
    index.unlink(missing_ok=True)
    proc = git.run("apply", f"--build-fake-ancestor={index}", str(patch), check=False)
    if proc.returncode != 0 or not index.exists():
        return None
    tree = git.run("write-tree", check=False, env={"GIT_INDEX_FILE": str(index)})
    return tree.stdout.decode().strip() if tree.returncode == 0 else None


def _apply_to_tree(git: Git, patch: Path, tree: str, tmp: Path) -> str | None:
    index = tmp / "apply.index"
    index.unlink(missing_ok=True)
    env = {"GIT_INDEX_FILE": str(index)}
    git.run("read-tree", tree, env=env)
    if git.run("apply", "--cached", "--whitespace=nowarn", str(patch), check=False, env=env).returncode != 0:
        return None
    return git.run("write-tree", env=env).stdout.decode().strip()


def patch_message(data: bytes) -> str:
    """The message of a format-patch file: from its Subject to the `---` line or the diff."""
    match = re.search(rb"^Subject: (?:\[[^\]]*\] )?(.*?)^(?:---$|diff --git )", data, re.MULTILINE | re.DOTALL)
    return match.group(1).decode("utf-8", "replace") if match else ""


def _patch_subject(data: bytes) -> str | None:
    match = re.search(rb"^Subject: (?:\[[^\]]*\] )?(.+)$", data, re.MULTILINE)
    return match.group(1).decode("utf-8", "replace").strip() if match else None
