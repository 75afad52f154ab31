"""Changes that are not lines: an executable bit, a submodule, a link, a binary, a file made a directory.

Each is accounted as the lines are (landed, or said), and an entry resolved `on_conflict: theirs` keeps
what git's `-X theirs` keeps and says what it replaced (helper-124's hunt through file kinds).
"""

from __future__ import annotations

import subprocess

from tests.conftest import Cli, Small

BODY = "".join(f"line {i}\n" for i in range(20))


def _sync(cli: Cli, small: Small, entries: list) -> tuple[int, dict]:
    small.manifest(entries)
    return cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")


def _entry(report: dict, name: str) -> dict:
    return next(e for e in report["entries"] if e["id"] == name)


def _mode(small: Small, report: dict, path: str) -> str:
    return subprocess.run(["git", "ls-tree", report["result"]["sha"], "--", path], cwd=small.work.path,
                          capture_output=True, text=True, check=True).stdout.split()[0]


def test_a_pr_that_only_makes_a_script_executable_lands_where_upstream_edited_it(cli: Cli, small: Small) -> None:
    """helper-124: the bit was there (the same tree as the plain chain), yet "run.sh (mode change) did not
    land", exit 1, every night: its blob is the base's content, which upstream has edited since."""
    start = small.up.commit({"run.sh": BODY}, "script", parent="main", ref="refs/heads/main")
    small.up.commit({"run.sh": BODY.replace("line 3\n", "UP\n")}, "upstream edits", parent="main",
                    ref="refs/heads/main")
    small.up.commit({"run.sh": BODY}, "pr 1", parent=start, ref="refs/pull/1/head", modes={"run.sh": "100755"})
    code, report = _sync(cli, small, [{"pr": 1}])
    assert code == 0, _entry(report, "pr/1")
    assert _entry(report, "pr/1")["landing"]["dropped"] == [] and _mode(small, report, "run.sh") == "100755"


def test_an_executable_bit_beside_edits_is_accounted_as_a_change_of_its_own(cli: Cli, small: Small) -> None:
    """A PR that edits a file and makes it executable lands two changes; a later entry that sets the mode
    back (a fork commit made on the PR's head) clobbers the bit, which no line of it says."""
    small.up.commit({"run.sh": BODY}, "script", parent="main", ref="refs/heads/main")
    head = small.up.commit({"run.sh": BODY.replace("line 5\n", "PR\n")}, "pr 1", parent="main",
                           ref="refs/pull/1/head", modes={"run.sh": "100755"})
    back = small.up.commit({"run.sh": BODY.replace("line 5\n", "PR\n"), "k.txt": "k\n"}, "fork: not executable",
                           parent=head, ref="refs/heads/back")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/back:refs/heads/back")
    code, report = _sync(cli, small, [{"pr": 1}])
    assert code == 0 and _entry(report, "pr/1")["landing"]["hunks"] == 2, _entry(report, "pr/1")["landing"]
    code, report = _sync(cli, small, [{"pr": 1}, {"carry": "back", "commit": back}])
    assert code == 1 and _mode(small, report, "run.sh") == "100644"
    [clobbered] = _entry(report, "pr/1")["landing"]["clobbered"]
    assert (clobbered["file"], clobbered["by"]) == ("run.sh", "carry/back")
    assert clobbered["message"] == "pr/1's change to run.sh was clobbered: carry/back set its mode to 100644 again"


def test_theirs_keeps_the_executable_bit_the_other_side_set(cli: Cli, small: Small) -> None:
    """helper-124: a `theirs` entry took its own side's mode with its lines, and an executable bit upstream
    or an earlier PR had set was gone, every hunk landed, exit 0. git merges the mode apart from the lines:
    the side that changed it wins."""
    start = small.up.commit({"run.sh": BODY, "up.sh": BODY}, "scripts", parent="main", ref="refs/heads/main")
    small.up.commit({"run.sh": BODY.replace("line 10\n", "UP\n"), "up.sh": BODY.replace("line 10\n", "UP\n")},
                    "upstream edits, and makes up.sh executable", parent="main", ref="refs/heads/main",
                    modes={"up.sh": "100755"})
    small.up.commit({"run.sh": BODY.replace("line 10\n", "UP\n").replace("line 15\n", "ONE\n")},
                    "pr 1", parent="main", ref="refs/pull/1/head", modes={"run.sh": "100755"})
    small.up.commit({"run.sh": BODY.replace("line 10\n", "TWO\n"), "up.sh": BODY.replace("line 10\n", "TWO\n")},
                    "pr 2", parent=start, ref="refs/pull/2/head")
    code, report = _sync(cli, small, [{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    assert code == 0 and _entry(report, "pr/2")["resolution"]["files"] == ["run.sh", "up.sh"], report["entries"]
    assert (_mode(small, report, "run.sh"), _mode(small, report, "up.sh")) == ("100755", "100755")


def test_theirs_replacing_upstreams_binary_or_link_says_upstream_loss(cli: Cli, small: Small) -> None:
    """helper-124: where `theirs` takes the entry's version whole (a binary, a link, a file of another type),
    upstream's version since the entry's base was gone with nothing said, where a line conflict says
    `upstream-loss`."""
    start = small.up.commit({"logo.bin": b"\0one", "f": "f\n"}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"logo.bin": b"\0upstream", "f": "target"}, "upstream", parent="main", ref="refs/heads/main",
                    modes={"f": "120000"})
    small.pr(1, {"logo.bin": b"\0pr", "f": "f\nedited\n"}, parent=start)
    code, report = _sync(cli, small, [{"pr": 1, "on_conflict": "theirs"}])
    assert code == 0, report
    losses = sorted((w["file"], w["message"]) for w in report["warnings"] if w["kind"] == "upstream-loss")
    assert [file for file, _message in losses] == ["f", "logo.bin"], report["warnings"]
    assert losses[1][1] == ("pr/1 (on_conflict: theirs) replaced logo.bin whole with its own version: the version "
                            "upstream had there since the entry's base is gone: possible upstream content loss")


def test_theirs_replacing_a_submodule_an_earlier_pr_bumped_is_that_prs_clobber(cli: Cli, small: Small) -> None:
    """helper-124: the submodule's commit, never in the superproject, was read as a blob to merge: exit 4,
    "object ... is missing from the repository", no entry named. The entry's file wins whole; the PR
    that bumped the submodule is clobbered."""
    start = small.up.commit({"sub": "1" * 40}, "submodule", parent="main", ref="refs/heads/main",
                            modes={"sub": "160000"})
    small.up.commit({"sub": "2" * 40}, "pr 1", parent=start, ref="refs/pull/1/head", modes={"sub": "160000"})
    small.pr(2, {"sub": "a file now\n"}, parent=start)
    code, report = _sync(cli, small, [{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    assert code == 1, report
    [clobbered] = _entry(report, "pr/1")["landing"]["clobbered"]
    assert (clobbered["file"], clobbered["by"]) == ("sub", "pr/2") and _mode(small, report, "sub") == "100644"


def test_theirs_making_a_submodule_a_directory_lands_its_deletion(cli: Cli, small: Small) -> None:
    """helper-124: the result had sub/x and no submodule, yet the entry's deletion of `sub` "did not land"
    (a directory is there now, which is no file at that path)."""
    start = small.up.commit({"sub": "1" * 40}, "submodule", parent="main", ref="refs/heads/main",
                            modes={"sub": "160000"})
    small.up.commit({"sub": "3" * 40}, "upstream bumps", parent="main", ref="refs/heads/main",
                    modes={"sub": "160000"})
    small.pr(1, {"sub": None, "sub/x": "x\n"}, parent=start)
    code, report = _sync(cli, small, [{"pr": 1, "on_conflict": "theirs"}])
    assert code == 0 and _entry(report, "pr/1")["landing"]["dropped"] == [], _entry(report, "pr/1")


def test_an_executable_bit_on_a_file_upstream_moved_lands_where_the_merge_put_it(cli: Cli, small: Small) -> None:
    """helper-127: upstream moved run.sh to bin/run.sh since the PR's base; the merge follows the move, and
    bin/run.sh has the PR's edit and its bit, yet the bit "did not land" (it was looked for at run.sh)."""
    start = small.up.commit({"run.sh": BODY, "tool.sh": BODY}, "scripts", parent="main", ref="refs/heads/main")
    small.up.commit({"run.sh": None, "bin/run.sh": BODY, "tool.sh": None, "bin/tool.sh": BODY}, "upstream moves them",
                    parent="main", ref="refs/heads/main")
    small.up.commit({"run.sh": BODY.replace("line 5\n", "PR\n"), "tool.sh": BODY}, "pr 1", parent=start,
                    ref="refs/pull/1/head", modes={"run.sh": "100755", "tool.sh": "100755"})
    code, report = _sync(cli, small, [{"pr": 1}])
    assert code == 0, _entry(report, "pr/1")["landing"]
    assert (_mode(small, report, "bin/run.sh"), _mode(small, report, "bin/tool.sh")) == ("100755", "100755")


def test_theirs_on_a_file_both_added_takes_the_entrys_mode_and_says_upstreams_loss(cli: Cli, small: Small) -> None:
    """helper-136: upstream and the PR both add new.sh with different modes, which git calls a conflict (and
    leaves ours' mode). Under `theirs` the entry's side wins it, as its lines do: its mode is in the result,
    and the executable bit upstream set is said gone, as `upstream-loss` says other replacements."""
    small.up.commit({"new.sh": "same\n"}, "upstream adds", parent="main", ref="refs/heads/main",
                    modes={"new.sh": "100755"})
    small.pr(1, {"new.sh": "same\n"})
    code, report = _sync(cli, small, [{"pr": 1, "on_conflict": "theirs"}])
    assert code == 0 and _entry(report, "pr/1")["resolution"]["files"] == ["new.sh"], report
    assert _mode(small, report, "new.sh") == "100644"
    [loss] = [w for w in report["warnings"] if w["kind"] == "upstream-loss"]
    assert (loss["entry"], loss["file"]) == ("pr/1", "new.sh"), report["warnings"]
    assert loss["message"] == ("pr/1 (on_conflict: theirs) set the mode of new.sh to 100644 over 100755, the mode "
                               "upstream gave it since the entry's base: possible upstream content loss")


def test_theirs_on_a_file_both_added_lands_the_entrys_executable_bit(cli: Cli, small: Small) -> None:
    """helper-136: the PR adds run.sh executable, upstream adds it not: ours' mode was kept under `theirs`,
    the PR's bit gone and every hunk "landed". The bit of a file an entry adds is accounted as a change of
    its own; an earlier entry's bit that a later one's `theirs` replaces is that entry's clobber."""
    small.up.commit({"run.sh": "up\n"}, "upstream adds", parent="main", ref="refs/heads/main")
    small.up.commit({"run.sh": "pr\n"}, "pr 1", parent=small.base, ref="refs/pull/1/head", modes={"run.sh": "100755"})
    code, report = _sync(cli, small, [{"pr": 1, "on_conflict": "theirs"}])
    assert code == 0 and _mode(small, report, "run.sh") == "100755", report
    assert _entry(report, "pr/1")["landing"] == {"hunks": 2, "landed": 2, "dropped": [], "clobbered": [], "survived": 2}
    losses = sorted(w["lines"] for w in report["warnings"] if w["kind"] == "upstream-loss")
    assert losses == [[0, 0], [1, 1]], report["warnings"]      # upstream's mode, and its line
    small.up.commit({"tool.sh": "two\n"}, "pr 2", parent=small.base, ref="refs/pull/2/head",
                    modes={"tool.sh": "100755"})
    small.pr(3, {"tool.sh": "three\n"})
    code, report = _sync(cli, small, [{"pr": 2}, {"pr": 3, "on_conflict": "theirs"}])
    assert code == 1 and _mode(small, report, "tool.sh") == "100644", report
    clobbers = [c["message"] for c in _entry(report, "pr/2")["landing"]["clobbered"]]
    assert "pr/2's change to tool.sh was clobbered: pr/3 set its mode to 100644 again (on_conflict: theirs)" \
        in clobbers, clobbers
