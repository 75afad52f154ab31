"""`carrytool verify`: the manifest's asserts on a commit's tree or on files on disk."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import InputError, UnknownRef
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.report import Report


def _outcomes(manifest: Manifest, read, *, missing: str | None = None) -> list[AssertOutcome]:  # noqa: ANN001
    """The asserts judged on what READ reads; MISSING: what a file it does not have is said to do."""
    from carrytool.asserts.engine import MISSING, evaluate_all

    return evaluate_all(manifest.asserts, read, missing=missing or MISSING)


def verify_rev(manifest: Manifest, git: Git, rev: str) -> Report:
    """Evaluate every assert on the tree of REV in the repository."""
    sha = git.rev_parse(rev)
    if sha is None:
        raise UnknownRef(f"no commit '{rev}' in {git.repo}", hint="pass a branch, tag or SHA that exists")
    report = Report("verify", asserts=_outcomes(manifest, lambda path: git.file_at(sha, path)))
    message = str(git.commit_info(sha)["message"])
    # whether `bisect --rev` can read a chain from it: the next step of a failure depends on it (helper-115)
    composed = any(line.startswith("Carry-Entry: ") for line in message.splitlines())
    report.extra["target"] = {"rev": rev, "sha": sha, "composed": composed}
    return report


def _disk_reader(root: Path) -> Callable[[str], bytes | None]:
    """Return a reader of the files under ROOT (resolved); nothing outside ROOT is read."""
    def read(path: str) -> bytes | None:
        target = (root / path).resolve()
        if root != target and root not in target.parents:
            return None
        try:
            return target.read_bytes() if target.is_file() else None
        except OSError:
            return None
    return read


def _directory(root: Path) -> Path:
    """ROOT resolved; InputError (exit 2) when it is no directory: every assert would fail on a typo."""
    resolved = root.resolve()
    if not resolved.is_dir():
        raise InputError(f"--path {root}: {'not a directory' if resolved.exists() else 'no such directory'}",
                         hint="pass the top of a checkout of the fork branch, or --rev REV")
    return resolved


def verify_path(manifest: Manifest, root: Path) -> Report:
    """Evaluate every assert on the files under ROOT (a checkout); nothing outside ROOT is read."""
    root = _directory(root)
    read = _disk_reader(root)
    # (helper-108: "does not exist in the composed tree", of a checkout's link to outside it)
    outcomes = _outcomes(manifest, read, missing=f"is not a file in {root} (missing, a directory, or a link to "
                                                 "outside it: nothing outside the checkout is read)")
    report = Report("verify", asserts=outcomes)
    report.extra["target"] = {"path": str(root)}
    return report


def verify_rebuild(manifest: Manifest, git: Git, rev: str | None, *, offline: bool) -> Report:
    """Recompose from manifest and lock in memory; fail unless REV (default: the fork branch) is that SHA."""
    from carrytool.errors import VerificationFailed
    from carrytool.pipeline.sync import last_result, plan_and_compose
    from carrytool.pipeline.sync_records import SyncOptions
    from carrytool.pipeline.sync_warnings import lock_result_warning

    target = rev or f"refs/heads/{manifest.fork.branch}"
    actual = git.rev_parse(target)
    if actual is None:
        raise UnknownRef(f"no commit '{target}' in {git.repo}", hint="pass --rev with the published fork branch")
    # the hints of a lock that does not match name the command the user ran (helper-136: "without --locked")
    ran = shlex.join(["verify", "--rebuild", *(["--rev", rev] if rev else []), *(["--offline"] if offline else [])])
    planned = plan_and_compose(manifest, git, SyncOptions(locked=True, dry_run=True, offline=offline, locked_as=ran),
                               command="verify")
    expected = planned.composition.result  # type: ignore[union-attr]
    report = verify_rev(manifest, git, target)
    # what fails sync fails the rebuild alike: the branch is CI's proof that the manifest builds it
    report.steps = planned.steps
    report.upstream = planned.report.upstream
    report.warnings = planned.report.warnings
    locked = last_result(manifest)
    if locked and locked != expected:           # as sync --locked says it (helper-103: nothing was said)
        report.warnings.append(lock_result_warning(locked, expected, ran))
    report.violations = planned.report.violations
    report.failed_conflicts = planned.report.failed_conflicts
    report.dropped = planned.report.dropped
    matches = expected == actual
    report.extra["rebuild"] = {"rev": target, "expected": expected, "actual": actual, "ok": matches}
    if not matches:
        error = VerificationFailed(
            f"{target} is {actual[:12]}, but manifest + lock compose {expected[:12]}: the published branch is "
            "not what the manifest says", hint="when a nightly sync published the branch but its lock was not "
            "committed (the lock's push lost a race), the next nightly sync puts both right: leave the branch; "
            "otherwise `carrytool sync --locked" + (" --push" if manifest.fork.url else "") + "` publishes exactly "
            "the lock (it replaces the branch), or inspect with `git range-diff`")
        # (helper-100: the hint named that command alone, and after such a race it put yesterday's branch back)
        report.error = {"exit_code": error.exit_code, "kind": "VerificationFailed", "message": str(error)}
    return report


@dataclass
class MutantsReport:
    """`verify --mutants`: how many broken variants of the tree's guarded code the asserts catch."""

    manifest: str
    target: dict[str, str]
    judged: Any                      # asserts.mutants.Judged
    failing: list[AssertOutcome] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 whatever the score (it is a report); 1 when an assert already fails on the unmutated tree."""
        return 1 if self.failing else 0

    def to_json(self) -> dict[str, object]:
        from carrytool import __version__

        data: dict[str, object] = {"carrytool": __version__, "command": "verify --mutants"}
        data.update(self.judged.to_json())
        data["failing"] = [outcome.to_json() for outcome in self.failing]
        data["target"] = self.target
        data["manifest"] = self.manifest
        return data


def mutants_rev(manifest: Manifest, git: Git, rev: str) -> MutantsReport:
    """Judge the mutants of the asserts' guarded code in the tree of REV (built in memory, never written)."""
    sha = git.rev_parse(rev)
    if sha is None:
        raise UnknownRef(f"no commit '{rev}' in {git.repo}", hint="pass a branch, tag or SHA that exists")
    return _mutants(manifest, lambda path: git.file_at(sha, path), {"rev": rev, "sha": sha})


def mutants_path(manifest: Manifest, root: Path) -> MutantsReport:
    """Judge the mutants of the asserts' guarded code in the files under ROOT; the files are only read."""
    root = _directory(root)
    return _mutants(manifest, _disk_reader(root), {"path": str(root)})


def _mutants(manifest: Manifest, read: Callable[[str], bytes | None], target: dict[str, str]) -> MutantsReport:
    from carrytool.asserts.mutants import judge_mutants

    judged = judge_mutants(manifest.asserts, read)
    failing = [outcome for outcome in judged.baseline if not outcome.ok]
    return MutantsReport(str(manifest.path), target, judged, failing)
