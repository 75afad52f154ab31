"""A carry given as a patch file: its commit is titled by the patch's Subject, and a patch that applies
nowhere is an input error (exit 2) that says how to regenerate it."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_sync import B_TEN, sync


def _patch(small: Small, files: dict, subject: str) -> None:
    small.up.commit(files, subject, parent="main", ref="refs/heads/p")
    patch = small.up.git("format-patch", "--stdout", "-1", "refs/heads/p")
    small.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    (small.manifest_path.parent / "fix.patch").write_text(patch + "\n")


def test_the_patch_commit_is_titled_by_the_patch_subject(cli: Cli, small: Small) -> None:
    _patch(small, B_TEN, "Fix the frobnicator")
    small.manifest([{"carry": "fix", "patch": "fix.patch"}])
    code, report = sync(cli, small)
    assert code == 0, report
    [entry] = report["entries"]
    subjects = small.work.git("log", "--format=%s", entry["head"]).splitlines()
    assert subjects[0] == "Fix the frobnicator", subjects


def test_a_patch_that_applies_nowhere_is_exit_2_with_a_hint(cli: Cli, small: Small) -> None:
    _patch(small, B_TEN, "Fix b")
    text = (small.manifest_path.parent / "fix.patch").read_text()
    # the context no longer matches anything: neither its own recorded base nor upstream has these lines
    (small.manifest_path.parent / "fix.patch").write_text(text.replace("-x = 1\n", "-x = 7\n")
                                                          .replace(" y = 2\n", " y = 9\n"))
    small.manifest([{"carry": "fix", "patch": "fix.patch"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2, result.stderr
    text = " ".join(result.stderr.split())
    assert "carry/fix: patch fix.patch does not apply to its own base nor to upstream" in text, text
    assert "hint: regenerate it with `git format-patch` against upstream" in text, text
    assert small.branch() is None
