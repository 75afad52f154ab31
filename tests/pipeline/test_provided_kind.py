"""A union whose tree has a link or a submodule where a PR it folds changes the file's lines (h236): a submodule
there read as the union's own words for the PR's lines ("re-expressed", no warning), a link as lines dropped in
no region. The union settled a conflict for another PR's side where that PR makes the file a link or submodule
(reconciled, as a file another PR deletes); where none does, the PR's change is left out whole (provided-absent).
CI runs this file on git 2.39 and a current git."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small

GITLINK = "1234567890123456789012345678901234567890"
TEXT = "alpha = compute(1)\nbeta = compute(2)\ngamma = compute(3)\n"
KINDS = {"160000": (GITLINK, "submodule"), "120000": ("elsewhere", "link")}


def _corpus(small: Small, mode: str, by_pr: bool) -> None:
    """pr/1 edits sub's second line; pr/2 changes m.py (and, BY_PR, makes sub a link or submodule); carry/u
    folds both and has the link or submodule at sub."""
    target = KINDS[mode][0]
    start = small.up.commit({"sub": TEXT, "m.py": "a = 1\n"}, "start", parent="main", ref="refs/heads/main")
    small.pr(1, {"sub": TEXT.replace("compute(2)", "compute(20)")}, parent=start)
    small.up.commit({"m.py": "a = 2\n", **({"sub": target} if by_pr else {})}, "pr 2", parent=start,
                    ref="refs/pull/2/head", modes={"sub": mode} if by_pr else {})
    union = small.up.commit({"sub": target, "m.py": "a = 2\n"}, "union", parent=start, ref="refs/heads/union",
                            modes={"sub": mode})
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}])


@pytest.mark.parametrize("mode", sorted(KINDS))
def test_another_prs_link_or_submodule_taken_over_a_prs_lines_is_reconciled(cli: Cli, small: Small,
                                                                           mode: str) -> None:
    _corpus(small, mode, by_pr=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report.get("error", report)
    assert [w for w in report["warnings"] if w["kind"] == "provided-absent"] == []
    code, explained = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, explained.get("error", explained)
    statuses = {(c["pr"], h["file"]): h["status"] for c in explained["coverage"] for h in c["hunks"]}
    assert statuses[("pr/1", "sub")] == "reconciled", statuses      # was re-expressed (submodule), absent (link)


@pytest.mark.parametrize("mode", sorted(KINDS))
def test_a_link_or_submodule_of_the_unions_own_over_a_prs_lines_is_warned(cli: Cli, small: Small, mode: str) -> None:
    _corpus(small, mode, by_pr=False)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report.get("error", report)
    absent = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert [(w["entry"], w["file"]) for w in absent] == [("pr/1", "sub")], report["warnings"]   # was none: submodule
    assert f"has a {KINDS[mode][1]} at sub, whose lines pr/1 changes" in absent[0]["message"], absent[0]["message"]
    assert f"no other PR it folds makes that file a {KINDS[mode][1]}" in absent[0]["message"], absent[0]["message"]


BINARY = b"\x89PNG\x00\x01" + bytes(range(64))


@pytest.mark.parametrize("mode", sorted(KINDS))
def test_a_link_or_submodule_of_the_unions_own_over_a_prs_binary_file_is_warned(cli: Cli, small: Small,
                                                                                mode: str) -> None:
    """h246: a PR changing a binary file (no lines) where the union's tree has a link or submodule of its own was
    silent, exit 0, the PR's change gone; a text file there was warned."""
    target = KINDS[mode][0]
    start = small.up.commit({"logo.png": BINARY, "m.py": "a = 1\n"}, "start", parent="main", ref="refs/heads/main")
    small.pr(1, {"logo.png": BINARY + b"\x00new"}, parent=start)
    small.up.commit({"m.py": "a = 2\n"}, "pr 2", parent=start, ref="refs/pull/2/head")
    union = small.up.commit({"logo.png": target, "m.py": "a = 2\n"}, "union", parent=start, ref="refs/heads/union",
                            modes={"logo.png": mode})
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report.get("error", report)
    absent = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert [(w["entry"], w["file"]) for w in absent] == [("pr/1", "logo.png")], report["warnings"]
    assert f"has a {KINDS[mode][1]} at logo.png, which pr/1 changes (a binary file)" in absent[0]["message"], \
        absent[0]["message"]
