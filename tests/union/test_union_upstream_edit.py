"""A recorded edit that removes a PR's line, replayed after upstream merged that PR: it now removes upstream's
line, and the fold stops on it (helper-147)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from carrytool.union.upstream_edit import keep_lines, newly_removed, quote, show_both, upstream_removed
from tests.conftest import Cli
from tests.gitrepo import Repo
from tests.union.fold_scenario import LINES, TwoPrs, edited
from tests.union.fold_scenario import PATCH_UNION as MANIFEST

ONES = "one's new line\n"       # pr/1's line outside the conflict, which the maintainer deleted at the stop


def _fold(root: Path, cli: Cli, *, also: tuple[bytes, bytes] = (b"", b"")) -> tuple:
    """pr/1 and pr/2 conflict at a.py line 3; pr/1 also adds a line after line 20. Folded, the maintainer
    resolves the conflict and deletes pr/1's added line (an edit outside the hunks); then upstream merges
    pr/1 (--no-ff) and the maintainer drops it from supersedes, as `union status` tells."""
    def delete_ones(scratch: Path) -> None:
        (scratch / "a.py").write_bytes((scratch / "a.py").read_bytes().replace(ONES.encode(), b"").replace(*also))

    return _merged_after_fold(root, cli, {"a.py": edited({3: "line 3 by one\n", 20: "line 20\n" + ONES})},
                              delete_ones)


def _merged_after_fold(root: Path, cli: Cli, pr1: dict, at_stop: Callable[[Path], None]) -> tuple:
    """pr/1 (PR1's files) and pr/2 conflict at a.py line 3; folded, the maintainer resolves a.py keeping both
    sides' lines and makes AT_STOP's edit in the scratch tree; then upstream merges pr/1 (--no-ff) and the
    manifest drops it from supersedes. (args, the scratch tree, the union's patch). The hunk's resolution keeps
    pr/1's line, upstream's once merged, so its replay asks nothing (a resolution that drops it stops the
    fold: test_union_hunk_upstream)."""
    prs = TwoPrs(root, {"a.py": "".join(LINES)}, pr1, {"a.py": edited({3: "line 3 by two\n"})})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    (prs.scratch / "a.py").write_bytes(_keep_both((prs.scratch / "a.py").read_bytes()))
    at_stop(prs.scratch)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    prs.up.commit({}, "Merge pr/1", parent=prs.pr1, parents=[prs.base, prs.pr1], ref="refs/heads/main")
    prs.manifest.write_text(MANIFEST.replace("supersedes: [1, 2]", "supersedes: [2]"))
    return args, prs.scratch, prs.manifest.parent / "unions" / "u.patch"


def test_a_recorded_edit_that_now_removes_upstreams_line_stops_the_fold(cli: Cli, tmp_path: Path) -> None:
    args, scratch, patch = _fold(tmp_path, cli)
    result = cli("union", "compose", "u", *args)
    assert result.exit_code == 3, result.stdout + result.stderr          # was 0: upstream's line deleted, silently
    assert f"-{ONES}" not in patch.read_text()
    out = result.stdout + result.stderr
    assert "a.py: your recorded edit outside the conflict hunks (pr/2) removes 1 line upstream main has now" in out
    assert f"-{ONES}" in out                                           # the edit, shown
    # numbered as the scratch file shows them (helper-153: "line(s) 21", the fold's file before the edit, where
    # the scratch file has a marker line; the line is its 22nd, 23rd with line 3 resolved to two lines)
    _numbered(out, scratch / "a.py", ONES)
    assert "(your recorded edit removes upstream's line 23 of the file as shown: both versions are shown)" in out
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
    assert shown == (b"a\n<<<<<<< up\nb\n=======\n>>>>>>> edit\nc\n", [(3, b"b")])   # d's removal is not upstream's
    # kept instead of shown both ways (an edit beside new conflict hunks), numbered as the result has them
    assert keep_lines(b"a\nb\nc\nd\ne\n", b"a\nc\nd\nE\n", {2}) == (b"a\nb\nc\nd\nE\n", [(2, b"b")])
    assert keep_lines(b"a\nb\nc\n", b"B\nc\n", {2}) == (b"a\nb\nc\n", [(2, b"b")])    # a replacement: the edit's
                                                                                        # lines there are left out
    assert quote([(2, b"b\r"), (4, b"d")]) == "    2: b\n    4: d\n"


NEWPY = "def helper():\n    return 1\n"


def _fold_deleting(root: Path, cli: Cli) -> tuple:
    """pr/1 adds new.py and conflicts with pr/2 in a.py; at the stop the maintainer resolves a.py and deletes
    new.py (an edit recorded for pr/2); then upstream merges pr/1 (--no-ff) and supersedes drops it
    (helper-153)."""
    return _merged_after_fold(root, cli, {"a.py": edited({3: "line 3 by one\n"}), "new.py": NEWPY},
                              lambda scratch: (scratch / "new.py").unlink())


@pytest.mark.parametrize("choice", ["keep", "delete"])
def test_a_recorded_deletion_of_a_file_upstream_now_has_stops_the_fold(cli: Cli, tmp_path: Path, choice: str) -> None:
    """helper-153: the refold deleted upstream's new.py (exit 0, nothing said). It stops on the file, which
    the scratch tree holds as the fold made it; kept, the edit goes; deleted, the deletion is recorded with
    upstream's lines, and asked about once."""
    args, scratch, patch = _fold_deleting(tmp_path, cli)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out                               # was 0: upstream's file deleted, silently
    assert "deleted file mode" not in patch.read_text()
    assert "new.py: your recorded edit (pr/2) deletes the file, which upstream main has now" in out, out
    assert "    1: def helper():\n    2:     return 1\n" in out         # upstream's lines, numbered as shown
    assert "rm new.py" in out and "union continue" in out
    assert "(your recorded edit deletes upstream's file: it is shown as the fold made it)" in out
    assert (scratch / "new.py").read_text() == NEWPY
    code, status = cli.json("union", "status", "u", *args)
    asked = [c for c in status[0]["fold"]["files"]]
    assert [c["file"] for c in asked] == ["new.py"]
    if choice == "delete":
        (scratch / "new.py").unlink()
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ("deleted file mode" in patch.read_text()) == (choice == "delete")
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "deletes" not in again.stdout + again.stderr, again.stdout + again.stderr
    assert ("deleted file mode" in patch.read_text()) == (choice == "delete")


def test_union_status_json_names_a_deletion_of_upstreams_file(cli: Cli, tmp_path: Path) -> None:
    args, _scratch, _patch = _fold_deleting(tmp_path, cli)
    code, status = cli.json("union", "status", "u", *args)
    assert code == 0
    assert status[0]["refold"]["needs_resolution"] == [
        {"file": "new.py", "entries": ["pr/2"], "kind": "fixup", "hunks": 0, "upstream": "main",
         "removes_upstream": [1, 2], "deletes_file": True}]


def _keep_both(data: bytes) -> bytes:
    """DATA with each conflict hunk resolved to both its sides' lines, in order."""
    return re.sub(rb"<<<<<<< [^\n]*\n(.*?)=======\n(.*?)>>>>>>> [^\n]*\n", rb"\1\2", data, flags=re.S)


def _take_theirs(data: bytes) -> bytes:
    """DATA with each conflict hunk resolved to its second side (the PR's)."""
    return re.sub(rb"<<<<<<< [^\n]*\n.*?=======\n(.*?)>>>>>>> [^\n]*\n", rb"\1", data, flags=re.S)


def _numbered(message: str, scratch_file: Path, text: str) -> None:
    """MESSAGE numbers TEXT's line as the scratch file shows it, and quotes it."""
    lines = scratch_file.read_text().splitlines(keepends=True)
    assert lines.count(text) == 1, lines
    number = lines.index(text) + 1
    assert f"    {number}: {text}" in message, (number, message)


@pytest.mark.parametrize("choice", ["keep", "delete"])
def test_an_edit_applied_beside_new_hunks_keeps_upstreams_line_and_says_so(cli: Cli, tmp_path: Path,
                                                                           choice: str) -> None:
    """helper-153: upstream changed line 3 again, so the refold met a new hunk there, and the recorded edit
    went in beside it, deleting upstream's line without a word (`continue` then recorded the deletion as
    deliberate). The line is kept in the scratch tree and the stop names it, as the scratch file numbers
    it; what the user leaves is recorded."""
    args, scratch, patch = _fold(tmp_path, cli)
    up = Repo(tmp_path / "up")
    up.commit({"a.py": edited({3: "line 3 by one, tweaked\n", 20: "line 20\n" + ONES})}, "tweak",
              parent=up.rev("refs/heads/main"), ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    shown = (scratch / "a.py").read_bytes()
    assert ONES.encode() in shown and shown.count(b"<<<<<<< ") == 1      # was gone: upstream's line deleted
    assert ("a.py: your recorded edit outside the conflict hunks (pr/2) is applied in the scratch tree beside the "
            "new hunks, except where it removes 1 line upstream main has now") in out, out
    _numbered(out, scratch / "a.py", ONES)
    assert "your recorded edit would remove upstream's line" in out          # the conflict's line
    resolved = _take_theirs(shown)
    if choice == "delete":
        resolved = resolved.replace(ONES.encode(), b"")
    (scratch / "a.py").write_bytes(resolved)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (f"-{ONES}" in patch.read_text()) == (choice == "delete")
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "removes" not in again.stdout + again.stderr, again.stdout + again.stderr


@pytest.mark.parametrize("choice", ["keep", "delete"])
def test_a_waiting_edit_that_removes_upstreams_line_is_asked_at_continue(cli: Cli, tmp_path: Path,
                                                                         choice: str) -> None:
    """helper-153: an edit that waited at the stop (its line 18 met a new hunk) was applied at `continue` to
    the file as the user left it (line 18 redone, as the stop asks), deleting upstream's line beside it, and
    recorded as deliberate. `continue` shows both versions there and refuses until the user decides."""
    args, scratch, patch = _fold(tmp_path, cli, also=(b"line 18\n", b"line 18 by hand\n"))
    up = Repo(tmp_path / "up")
    up.commit({"a.py": edited({3: "line 3 by one\n", 18: "line 18 up\n", 20: "line 20\n" + ONES})},
              "tweak", parent=up.rev("refs/heads/main"), ref="refs/heads/main")
    up.commit({"a.py": edited({3: "line 3 by two\n", 18: "line 18 by two\n"})}, "two: v2",
              parent=up.rev("refs/pull/2/head"), ref="refs/pull/2/head")
    stop = cli("union", "compose", "u", *args)
    assert stop.exit_code == 3 and "does not apply beside the new hunks" in stop.stdout + stop.stderr, stop.stdout
    redone = _take_theirs((scratch / "a.py").read_bytes()).replace(b"line 18 by two\n", b"line 18 by hand\n")
    assert ONES.encode() in redone
    (scratch / "a.py").write_bytes(redone)
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out                       # was 0: upstream's line deleted, recorded as deliberate
    assert f"-{ONES}" not in patch.read_text()
    assert "a.py: your recorded edit outside the conflict hunks (pr/2), applied after your resolution, would " \
           "remove 1 line upstream main has now" in out, out
    _numbered(out, scratch / "a.py", ONES)
    shown = (scratch / "a.py").read_text()
    assert f"<<<<<<< upstream main now\n{ONES}=======\n>>>>>>> your recorded edit (pr/2)\n" in shown
    assert cli("union", "continue", "u", *args).exit_code == 3           # markers left: refused
    keep = ONES if choice == "keep" else ""
    (scratch / "a.py").write_text(shown.replace(f"<<<<<<< upstream main now\n{ONES}=======\n"
                                                ">>>>>>> your recorded edit (pr/2)\n", keep))
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    text = patch.read_text()
    assert (f"-{ONES}" in text) == (choice == "delete") and "+line 18 by hand\n" in text
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "removes" not in again.stdout + again.stderr, again.stdout + again.stderr
