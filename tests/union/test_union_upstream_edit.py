"""A recorded edit that removes a PR's line, replayed after upstream merged that PR: it now removes upstream's
line, and the fold stops on it (helper-147)."""

from __future__ import annotations

from pathlib import Path

import pytest

from carrytool.union.upstream_edit import newly_removed, show_both, upstream_removed
from tests.conftest import Cli
from tests.gitrepo import init_repo
from tests.union.fold_scenario import LINES, edited, resolve_both

MANIFEST = """\
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev}
entries:
  - pr: 1
  - pr: 2
  - carry: u
    patch: unions/u.patch
    supersedes: [1, 2]
"""
ONES = "one's new line\n"       # pr/1's line outside the conflict, which the maintainer deleted at the stop


def _fold(root: Path, cli: Cli) -> tuple:
    """pr/1 and pr/2 conflict at a.py line 3; pr/1 also adds a line after line 20. Folded, the maintainer
    resolves the conflict and deletes pr/1's added line (an edit outside the hunks); then upstream merges
    pr/1 (--no-ff) and the maintainer drops it from supersedes, as `union status` tells."""
    up = init_repo(root / "up")
    base = up.commit({"a.py": "".join(LINES)}, "base", ref="refs/heads/main")
    one = edited({3: "line 3 by one\n", 20: "line 20\n" + ONES})
    pr1 = up.commit({"a.py": one}, "one", parent=base, ref="refs/pull/1/head")
    up.commit({"a.py": edited({3: "line 3 by two\n"})}, "two", parent=base, ref="refs/pull/2/head")
    work = init_repo(root / "work", bare=True).path
    manifest = root / "carries" / "manifest.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(MANIFEST)
    args = ["-m", str(manifest), "--repo", str(work)]
    scratch = work / "carrytool" / "union" / "u" / "tree"
    assert cli("union", "compose", "u", *args).exit_code == 3
    resolve_both(scratch / "a.py")
    (scratch / "a.py").write_bytes((scratch / "a.py").read_bytes().replace(ONES.encode(), b""))
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    up.commit({}, "Merge pr/1", parent=pr1, parents=[base, pr1], ref="refs/heads/main")
    manifest.write_text(MANIFEST.replace("supersedes: [1, 2]", "supersedes: [2]"))
    return args, scratch, manifest.parent / "unions" / "u.patch"


def test_a_recorded_edit_that_now_removes_upstreams_line_stops_the_fold(cli: Cli, tmp_path: Path) -> None:
    args, scratch, patch = _fold(tmp_path, cli)
    result = cli("union", "compose", "u", *args)
    assert result.exit_code == 3, result.stdout + result.stderr          # was 0: upstream's line deleted, silently
    assert f"-{ONES}" not in patch.read_text()
    out = result.stdout + result.stderr
    assert "a.py: your recorded edit outside the conflict hunks (pr/2) removes line(s) 21 upstream main has now" in out
    assert f"-{ONES}" in out                                           # the edit, shown
    assert "(your recorded edit removes upstream's line(s) 21: both versions are shown)" in out
    shown = (scratch / "a.py").read_text()
    assert f"<<<<<<< upstream main now\n{ONES}=======\n>>>>>>> your recorded edit (pr/2)\n" in shown
    # keep upstream's line: the union no longer deletes it, and the next refold asks nothing
    (scratch / "a.py").write_text(shown.replace(f"<<<<<<< upstream main now\n{ONES}=======\n"
                                                ">>>>>>> your recorded edit (pr/2)\n", ONES))
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ONES not in patch.read_text()
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "removes" not in again.stdout + again.stderr


def test_an_edit_kept_over_upstreams_line_is_asked_once(cli: Cli, tmp_path: Path) -> None:
    """The maintainer keeps the deletion at the stop: recorded with upstream's line, the next refold asks
    nothing (a deliberate edit of upstream's lines never stops a refold)."""
    args, scratch, patch = _fold(tmp_path, cli)
    assert cli("union", "compose", "u", *args).exit_code == 3
    shown = (scratch / "a.py").read_text()
    (scratch / "a.py").write_text(shown.replace(f"<<<<<<< upstream main now\n{ONES}=======\n"
                                                ">>>>>>> your recorded edit (pr/2)\n", ""))
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"-{ONES}" in patch.read_text()
    status = cli("union", "status", "u", *args)
    assert "a refold would ask nothing" in status.stdout, status.stdout
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0, again.stdout + again.stderr
    assert f"-{ONES}" in patch.read_text()


@pytest.mark.parametrize("upstream,before,after,removed", [
    (b"a\nb\nc\n", b"a\nb\nc\n", b"a\nc\n", [(2, b"b")]),                    # upstream's line deleted
    (b"a\nc\n", b"a\nb\nc\n", b"a\nc\n", []),                                # a PR's line deleted
    (b"a\nb\nc\n", b"a\nb\nc\n", b"a\nB\nc\n", [(2, b"b")]),                 # replaced
    (b"a\n\nc\n", b"a\n\nc\n", b"a\nc\n", []),                               # a blank line says nothing
    (None, b"a\nb\n", b"a\n", []),                                           # upstream has no such file
])
def test_the_lines_of_upstreams_an_edit_removes(upstream, before, after, removed) -> None:
    assert upstream_removed(upstream, before, after) == removed


def test_only_lines_the_record_did_not_remove_as_upstreams_are_new() -> None:
    removed = [(2, b"x"), (5, b"x"), (7, b"y")]
    assert newly_removed(removed, (b"x",)) == [(5, b"x"), (7, b"y")]
    assert newly_removed(removed, None) == removed                   # a record that does not say: all
    assert newly_removed(removed, (b"x", b"x", b"y")) == []
    shown = show_both(b"a\nb\nc\nd\n", b"a\nc\n", {2}, ours="up", theirs="edit")
    assert shown == b"a\n<<<<<<< up\nb\n=======\n>>>>>>> edit\nc\n"          # d's removal is not upstream's: applied
