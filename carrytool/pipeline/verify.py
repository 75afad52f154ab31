"""`carrytool verify`: the manifest's asserts on a commit's tree or on files on disk."""

from __future__ import annotations

from pathlib import Path

from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import UnknownRef
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.report import Report


def _outcomes(manifest: Manifest, read) -> list[AssertOutcome]:  # noqa: ANN001
    from carrytool.asserts import evaluate_all

    return evaluate_all(manifest.asserts, read)


def verify_rev(manifest: Manifest, git: Git, rev: str) -> Report:
    """Evaluate every assert on the tree of REV in the repository."""
    sha = git.rev_parse(rev)
    if sha is None:
        raise UnknownRef(f"no commit '{rev}' in {git.repo}", hint="pass a branch, tag or SHA that exists")
    report = Report("verify", asserts=_outcomes(manifest, lambda path: git.file_at(sha, path)))
    report.extra["target"] = {"rev": rev, "sha": sha}
    return report


def verify_path(manifest: Manifest, root: Path) -> Report:
    """Evaluate every assert on the files under ROOT (a checkout); nothing outside ROOT is read."""
    root = root.resolve()

    def read(path: str) -> bytes | None:
        target = (root / path).resolve()
        if root != target and root not in target.parents:
            return None
        try:
            return target.read_bytes() if target.is_file() else None
        except OSError:
            return None

    report = Report("verify", asserts=_outcomes(manifest, read))
    report.extra["target"] = {"path": str(root)}
    return report


def verify_rebuild(manifest: Manifest, git: Git, rev: str | None, *, offline: bool) -> Report:
    """Recompose from manifest and lock in memory; fail unless REV (default: the fork branch) is that SHA."""
    from carrytool.errors import VerificationFailed
    from carrytool.pipeline.sync import SyncOptions, plan_and_compose

    target = rev or f"refs/heads/{manifest.fork.branch}"
    actual = git.rev_parse(target)
    if actual is None:
        raise UnknownRef(f"no commit '{target}' in {git.repo}", hint="pass --rev with the published fork branch")
    planned = plan_and_compose(manifest, git, SyncOptions(locked=True, dry_run=True, offline=offline),
                               command="verify")
    expected = planned.composition.result  # type: ignore[union-attr]
    report = verify_rev(manifest, git, target)
    report.steps = planned.steps
    report.upstream = planned.report.upstream
    report.warnings = planned.report.warnings
    matches = expected == actual
    report.extra["rebuild"] = {"rev": target, "expected": expected, "actual": actual, "ok": matches}
    if not matches:
        error = VerificationFailed(
            f"{target} is {actual[:12]}, but manifest + lock compose {expected[:12]}: the published branch is "
            "not what the manifest says", hint="run `carrytool sync --locked` to publish exactly the lock, "
            "or inspect with `git range-diff`")
        report.error = {"exit_code": error.exit_code, "kind": "VerificationFailed", "message": str(error)}
    return report
