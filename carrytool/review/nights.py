"""The two nights `carrytool diff` compares: a lock, or the report a red night leaves, read from a file or
REV:PATH, with the manifest that night ran with when one is found."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from carrytool.errors import CarryError, InputError
from carrytool.gitlayer.git import Git, work_tree_top
from carrytool.gitlayer.jsonread import load_json, read_utf8
from carrytool.manifest.load import parse_manifest
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import parse_lock
from carrytool.review.night_hint import night_before_hint


@dataclass(frozen=True)
class Night:
    """One side of the diff: a lock (as parsed), where it came from, and its manifest when one was found."""

    label: str
    lock: dict[str, Any]
    manifest: Manifest | None = None
    statuses: dict[str, dict[str, str]] | None = None    # a sync report's own statuses (with reasons)
    # where a relative `url:` of the lock is read from, as sync read it: its own manifest's directory, else
    # that of the manifest diff was given (-m) (helper-97: the hint `git fetch ../../up.git` failed in --repo)
    base: Path | None = None
    # a sync report's outcome: {"ok", "exit_code", "asserts": [{"name", "ok", "message"}]}; None for a lock,
    # which only a run that published writes (every assert of its manifest held)
    run: dict[str, Any] | None = None
    # a REV:PATH night: the commit REV names, in the repository TOP (the manifest's) (diff_order: which is older)
    commit: str | None = None
    top: Path | None = None
    # a night record (REV:<composed SHA>.lock, as sync keeps them under refs/carrytool/<branch>/nights), which has
    # no manifest beside it: (the lock's path from TOP, the commit whose committed lock is this night's, or None)
    recorded: tuple[str, str | None] | None = None


# -- reading the two nights ---------------------------------------------------------------------------

def load_nights(old: str | None, new: str | None, *, manifest: Path, repo: Path) -> tuple[Night, Night]:
    """The two locks to compare: files or REV:PATH; by default the last committed night before the lock on
    disk (`_last_night`) and the lock on disk."""
    lock_file = manifest.with_name(manifest.name + ".lock")
    both = "name both locks: `carrytool diff OLD.lock NEW.lock` (or REV:PATH)"
    if old is None and manifest.is_dir():
        raise InputError(f"cannot read the manifest {manifest}: Is a directory", hint="pass -m FILE")
    if old is None and not manifest.exists():      # (helper-102: "not in a git work tree", or "no night before")
        raise InputError(f"no manifest at {manifest}", hint="pass -m FILE, set CARRYTOOL_MANIFEST, or " + both)
    if new is None and not lock_file.exists():
        raise InputError(f"no lock at {lock_file}: no night was synced beside this manifest",
                         hint=f"`carrytool sync -m {shlex.quote(str(manifest))} --repo {shlex.quote(str(repo))}` "
                              f"writes it; or {both}")
    if old is None:
        old = _last_night(manifest, lock_file, repo)
    return load_night(old, manifest=manifest, repo=repo), load_night(new or str(lock_file), manifest=manifest,
                                                                    repo=repo, newest=True)


def _last_night(manifest: Path, lock_file: Path, repo: Path) -> str:
    """REV:PATH of the night before the lock on disk: the newest commit that changed the lock, or, when the
    lock on disk is that commit's (the night committed it), the one that changed it before. Its manifest is
    read at the same commit: the one that night ran with. (HEAD~1 it was: after a night, a commit of the
    manifest alone, then a night, HEAD~1 held the older night's lock beside the newer manifest, and the
    asserts changed in between were never said: helper-97.)"""
    both = "name both locks: `carrytool diff OLD.lock NEW.lock` (or REV:PATH)"
    top = work_tree_top(manifest.resolve().parent)
    if top is None:             # sync's record of the night before, in --repo, when it has one (h245)
        said, hint = night_before_hint(manifest, lock_file, repo, both, top=None)
        raise InputError(f"{manifest} is not in a git work tree, so there is no committed night to compare with"
                         + said, hint=hint)
    inner = path_in(top, lock_file)
    if inner is None:           # a manifest linked in from elsewhere: its lock is not in this work tree
        raise InputError(f"{lock_file} is not in the work tree {top}, so there is no committed night to compare "
                         "with", hint=both)
    on_disk = _lock_text(lock_file)
    with Git(top) as git:
        head = git.rev_parse("HEAD")
        changed = commits_changing(git, head, inner)
        shallow = _shallow_ends(git)
        picked, newest = None, True
        for commit in changed:
            if commit in shallow and _has_parents(git, commit):
                break              # the history is cut here: git says this commit made the lock it has
            text = git.blob_at_rev(commit, inner)
            if text is None:
                continue           # it deleted the lock (helper-98: that commit was picked, and had none)
            if newest and on_disk is not None and _same_lock(text, on_disk):
                newest = False
                continue           # the lock on disk is the newest commit's: the night committed it
            picked = commit
            break
        if picked is None:
            if shallow:
                raise InputError(f"this is a shallow clone of {top}: its history stops before the night before "
                                 f"the lock on disk", hint="fetch more history (`git fetch --deepen=50`, or "
                                 "`fetch-depth: 0` in actions/checkout), or " + both)
            said, hint = night_before_hint(manifest, lock_file, repo, both, top=top)
            raise InputError(f"no committed night before the lock on disk: no earlier commit of {top} holds "
                             f"another {inner}{said}", hint=hint)
        # said as HEAD or HEAD~1 when it is one of them (the usual nights), else by its SHA
        name = "HEAD" if picked == head else "HEAD~1" if picked == git.rev_parse("HEAD~1") else picked
    return f"{name}:{inner}"


def path_in(top: Path, path: Path) -> str | None:
    """PATH as the work tree TOP names it; None when it lies outside (a file linked in from elsewhere)."""
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return None


def commits_changing(git: Git, head: str | None, inner: str, limit: int = 50) -> list[str]:
    """The newest LIMIT commits of HEAD's history (a SHA: git runs log away from the user's refs) that changed
    the file INNER, newest first; none without a HEAD or when git cannot tell."""
    proc = git.run("log", "--no-color", "--format=%H", "-n", str(limit), "--end-of-options", head, "--",
                   f":(literal){inner}", check=False) if head else None
    return proc.stdout.decode("ascii", "replace").split() if proc and proc.returncode == 0 else []


def _lock_text(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (OSError, MemoryError):  # too large to hold: load_night names it (h257: a MemoryError traceback)
        return None


def _same_lock(committed: bytes, on_disk: bytes) -> bool:
    """Whether the lock on disk is the committed one: the same JSON (a checkout may have changed its line
    ends: core.autocrlf, an eol attribute; helper-98), else the same bytes."""
    try:
        return load_json(committed) == load_json(on_disk)
    except ValueError:
        return committed == on_disk


def _has_parents(git: Git, commit: str) -> bool:
    """Whether COMMIT names a parent (a shallow clone's cut end may be the first commit of all)."""
    obj = git.read_object(commit)
    return obj is None or b"\nparent " in obj[1].split(b"\n\n", 1)[0]


def _shallow_ends(git: Git) -> set[str]:
    """The commits where a shallow clone's history is cut (`<git dir>/shallow`); none in a whole clone."""
    try:
        return set((git.common_dir / "shallow").read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError):
        return set()


def load_night(spec: str, *, manifest: Path, repo: Path, newest: bool = False) -> Night:
    """Read one lock: an existing file, else REV:PATH in the repository holding the manifest. NEWEST: the
    newer of the two nights, whose sync report (a red night's) is read with MANIFEST, the one diff is given:
    the older night's manifest may have changed since (helper-101: its asserts were then compared with
    today's)."""
    path = Path(spec)
    if path.is_file() or ":" not in spec:
        try:
            text = read_utf8(path)
        except FileNotFoundError:
            raise InputError(f"no lock at {spec}", hint="name a lock file or REV:PATH (e.g. HEAD~1:"
                                                        "carries/manifest.yaml.lock)") from None
        except (OSError, ValueError) as exc:        # not UTF-8, too large to hold (h256)
            raise InputError(f"cannot read the lock {spec}: {exc}") from None
        return _night(spec, text, _manifest_beside(path), manifest.resolve().parent,
                      given=manifest if newest else None)
    rev, _, inner = spec.partition(":")
    top = work_tree_top(manifest.resolve().parent) or repo
    with Git(top) as git:
        data = git.blob_at_rev(rev, inner)
        if data is None and git.rev_parse(rev) is None:
            raise InputError(f"no lock at {spec}: {top} has no commit `{rev}`", hint=_no_commit_hint(rev, spec, top,
                                                                                                      repo))
        if data is None:
            raise InputError(f"no lock at {spec}: `{rev}` has no `{inner}` (in {top})",
                             hint="REV:PATH takes PATH from the repository's top (e.g. HEAD~1:carries/"
                                  "manifest.yaml.lock)")
        side = git.blob_at_rev(rev, inner[: -len(".lock")]) if inner.endswith(".lock") else None
        commit = git.rev_parse(rev)
        night = _night(spec, data.decode("utf-8", "replace"),
                       _parse_quietly(side, top / inner[: -len(".lock")]) if side is not None else None,
                       manifest.resolve().parent)
        recorded = _committed_as(git, manifest, top, night) if side is None and _RECORD.match(inner) else None
    return replace(night, commit=commit, top=top, recorded=recorded)


_RECORD = re.compile(r"[0-9a-f]{40}\.lock\Z")


def _committed_as(git: Git, manifest: Path, top: Path, night: Night) -> tuple[str, str | None] | None:
    """Of a night record (no manifest beside it, h248): the path of the manifest's lock from TOP, and the
    oldest commit of HEAD's history whose lock there names the night's composed commit (one path-limited
    `git log -S`), whose manifest is then beside it; None when the manifest is not in TOP."""
    try:
        path = (manifest.resolve().parent / (manifest.name + ".lock")).relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        return None
    result, head = night.lock.get("result"), git.rev_parse("HEAD")
    if not isinstance(result, str) or head is None:
        return path, None
    proc = git.run("log", "--reverse", "--format=%H", f"-S{result}", head, "--", f":(literal){path}", check=False)
    found = proc.stdout.decode("ascii", "replace").split() if proc.returncode == 0 else []
    return path, found[0] if found else None


def _no_commit_hint(rev: str, spec: str, top: Path, repo: Path) -> str:
    """What to do about REV, which the manifest's repository TOP lacks: read from --repo REPO when that has it
    (the nights sync records there, `refs/carrytool/<branch>/nights:<sha>.lock`, as docs/ci.md shows them;
    h239: the hint said "a repository whose history is one commit has no HEAD~1" of that ref)."""
    if Path(repo).resolve() != Path(top).resolve():
        try:
            with Git(repo) as there:
                found = there.rev_parse(rev)
        except CarryError:
            found = None
        if found is not None:
            return (f"`{rev}` is a commit of --repo {repo}, not of {top}, where REV:PATH is read: write the lock "
                    f"out with `git -C {shlex.quote(str(repo))} show {shlex.quote(spec)} > night.lock`, then name "
                    "night.lock")
    return "a repository whose history is one commit has no HEAD~1: name two lock files, or a commit that holds " \
           "the older lock"


def _night(label: str, text: str, manifest: Manifest | None, base: Path | None = None,
           given: Path | None = None) -> Night:
    """A lock; or a sync report (`--report FILE`), which a red night leaves where no lock is written."""
    try:
        doc = load_json(text)
    except ValueError:                  # parse_lock says it cannot read it
        doc = None
    if isinstance(doc, dict) and "lock" not in doc and isinstance(doc.get("entries"), list) \
            and isinstance(doc.get("upstream"), dict) and doc["upstream"].get("sha"):
        if manifest is None and given is not None:
            # a red night's report (`sync --report FILE`) has no manifest beside it: it was made from the one
            # diff is given, on disk, as the nightly job runs it (helper-100: asserts were never compared)
            manifest = _read_quietly(given)
        return _report_night(label, doc, manifest, manifest.base_dir if manifest else base)
    if isinstance(doc, dict) and "lock" not in doc and doc.get("ok") is False and "entries" not in doc:
        # a run that stopped before it had a plan (a PR gone, a fetch failed): its report has no entries
        # (helper-82: "is not a carrytool lock", on the very night one wants to know what went)
        error = doc.get("error") if isinstance(doc.get("error"), dict) else {}
        said = str(error.get("message") or "no error recorded").strip()
        raise InputError(f"{label} is the report of a sync that stopped before it composed anything (exit "
                         f"{doc.get('exit_code', '?')}), so it has no entries to compare; it stopped on:\n  "
                         + said.replace("\n", "\n  "),
                         hint="fix what it names and sync again (the lock is still the last night that composed)")
    return Night(label, parse_lock(text, label), manifest, base=manifest.base_dir if manifest else base)


def _report_night(label: str, report: dict[str, Any], manifest: Manifest | None, base: Path | None) -> Night:
    """A sync report read as a lock: its upstream, each entry's head (a carry's head is its commit), its result."""
    entries, statuses = [], {}
    up, result, asserts = report["upstream"], report.get("result") or {}, report.get("asserts") or []
    # each field of the type sync writes (h246: a number for a SHA, a string for `result`, were tracebacks)
    if not _sha(up["sha"]) or not all(isinstance(up.get(k, ""), str) for k in ("url", "branch")) \
            or not isinstance(result, dict) or not (result.get("sha") is None or _sha(result["sha"])) \
            or not isinstance(asserts, list):
        raise InputError(f"{label} is neither a lock nor a carrytool report")
    for item in report["entries"]:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) \
                or not (item.get("head") in (None, "") or _sha(item["head"])) \
                or (item["id"].startswith("pr/") and not _number(item["id"][3:])):
            raise InputError(f"{label} is neither a lock nor a carrytool report")
        key = "head" if item["id"].startswith("pr/") else "commit"
        entries.append({"id": item["id"], **({key: item["head"]} if item.get("head") else {})})
        statuses[item["id"]] = {k: item[k] for k in ("status", "reason") if item.get(k)}
    lock = {"upstream": {"url": up.get("url", ""), "branch": up.get("branch", ""), "sha": up["sha"]},
            "entries": entries, "result": result.get("sha")}
    if isinstance(result.get("branch"), str) and result["branch"]:
        lock["fork"] = {"branch": result["branch"]}     # the branch it composed (h262: a fetch said BRANCH)
    checks = [{"name": str(a.get("name")), "ok": a.get("ok") is not False, "message": str(a.get("message") or "")}
              for a in asserts if isinstance(a, dict) and a.get("name")]
    # `pushed`: its composed commit went to the fork (a red night's never does: no fetch brings it, h262)
    run = {"ok": report.get("ok") is not False, "exit_code": report.get("exit_code"), "asserts": checks,
           "pushed": result.get("pushed") is True}
    return Night(label, lock, manifest, statuses, base, run)


def _sha(value: object) -> bool:
    return isinstance(value, str) and bool(_OID.fullmatch(value))


def _number(text: str) -> bool:
    return text.isascii() and text.isdigit()


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _manifest_beside(lock: Path) -> Manifest | None:
    return _read_quietly(lock.with_suffix("")) if lock.suffix == ".lock" else None


def _read_quietly(path: Path) -> Manifest | None:
    try:
        return _parse_quietly(path.read_bytes(), path)
    except OSError:
        return None


def _parse_quietly(data: bytes, path: Path) -> Manifest | None:
    """The manifest at that night, or None when it does not parse (an older format, a broken commit)."""
    try:
        return parse_manifest(data.decode("utf-8"), path)
    except (CarryError, UnicodeDecodeError):
        return None
