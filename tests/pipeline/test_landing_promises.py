"""The landing checks' own promises: a dropped hunk fails the sync, a whole-file replacement clobbers owned
lines, owned lines are renumbered exactly, redundant_with names providers only when they provide it all;
and the planner's superseded / precompiled decisions look at every path."""

from __future__ import annotations

import pytest

import carrytool.pipeline.sync as sync_module
from carrytool.gitlayer.objects import Signature
from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.landing import _shift
from tests.conftest import Cli, Small
from tests.pipeline.test_sync import by_id, sync

BIG = "".join(f"line {i}\n" for i in range(1, 41))


def landing(report: dict, entry: str) -> dict:
    return by_id(report)[entry]["landing"]


def lose(monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    """A composer bug: ENTRY's commit gets its parent's tree (every hunk of it is lost) before the landing checks."""
    original = sync_module.account

    def losing(git, steps, *tip):  # noqa: ANN001, ANN002, ANN202
        for step in steps:
            if step.id == entry:
                who = Signature("t", "t@example.com", 1700000000)
                step.commit = git.write_commit(git.tree_of(step.parent), [step.parent], who, who, "lost")
        return original(git, steps, *tip)

    monkeypatch.setattr(sync_module, "account", losing)


def test_a_dropped_hunk_fails_the_sync(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The composer loses pr/2 (its commit is its parent's tree): every one of its hunks is dropped, exit 1."""
    small.base = small.up.commit({"big.txt": BIG}, "more", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"big.txt": BIG.replace("line 5\n", "").replace("line 30\n", "line thirty\n")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    lose(monkeypatch, "pr/2")
    code, report = sync(cli, small)
    assert code == 1 and report["ok"] is False and small.branch() is None
    got = landing(report, "pr/2")
    assert (got["hunks"], got["landed"]) == (2, 0)
    assert [(d["file"], d["lines"]) for d in got["dropped"]] == [("big.txt", [4, 4]), ("big.txt", [29, 29])]
    assert "did not land: the composed result does not contain it" in got["dropped"][0]["message"]
    assert report["exit_code"] == 1
    assert landing(report, "pr/1")["dropped"] == []
    # the hint sends the reader to the entry's story, which says it (helper-110: only JSON and markdown did)
    hint = next(line for line in cli("sync", "--dry-run", "-m", small.manifest_path, "--repo",
                                      small.work.path).stdout.splitlines() if "shows the dropped hunk" in line)
    assert "carrytool explain pr/2 " in hint, hint
    story = cli("explain", "pr/2", "-m", small.manifest_path, "--repo", small.work.path, "--offline").stdout
    assert f"hunk did not land: {got['dropped'][0]['message']}" in story, story


@pytest.mark.parametrize("kind", ["binary", "symlink"])
def test_replacing_a_file_by_a_non_text_change_clobbers_owned_lines(cli: Cli, small: Small, kind: str) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    replacement = b"\x00\x01binary\x00" if kind == "binary" else "a.py"
    modes = {"b.py": "120000"} if kind == "symlink" else None
    small.up.commit({"b.py": replacement}, "pr 2", parent=small.base, ref="refs/pull/2/head", modes=modes)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None, report
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["file"]) == ("pr/2", "b.py")
    assert "replaced the whole file" in lost["message"]


def h(old_start: int, old_count: int, new_start: int, new_count: int) -> Hunk:
    return Hunk("f", old_start, old_count, new_start, new_count)


@pytest.mark.parametrize("hunks, owned, expected", [
    # a pure insertion after line 2 (`@@ -2,0 +3,2 @@`): line 2 stays, line 3 moves down by 2
    ([h(2, 0, 3, 2)], {2: "a", 3: "b"}, {2: "a", 5: "b"}),
    # a replacement of lines 3-4 by one line: lines after it move up by one
    ([h(3, 2, 3, 1)], {1: "a", 6: "b"}, {1: "a", 5: "b"}),
    # two hunks: the deltas add up
    ([h(1, 0, 2, 1), h(5, 1, 6, 3)], {1: "a", 4: "b", 9: "c"}, {1: "a", 5: "b", 12: "c"}),
    ([h(4, 0, 5, 1)], {4: "a", 5: "b"}, {4: "a", 6: "b"}),
])
def test_owned_lines_are_renumbered_exactly(hunks: list, owned: dict, expected: dict) -> None:
    assert _shift(owned, hunks) == expected


def test_redundant_with_only_when_every_hunk_is_provided(cli: Cli, small: Small) -> None:
    """pr/2 changes nothing once composed, but one of its hunks came from upstream, not from pr/1."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"})
    small.up.commit({"docs/c.txt": "c2\n"}, "upstream took c2", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0, report
    e = by_id(report)["pr/2"]
    assert e["reason"] == "redundant"
    # it touches pr/1's file, but pr/1 does not carry every hunk of it: no "every hunk" claim
    assert e["detail"] == "nothing left to apply after pr/1", e
    # with pr/1 carrying both hunks, it does provide pr/2 whole
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"})
    small.up.commit({"docs/c.txt": "c\n"}, "upstream back", parent="main", ref="refs/heads/main")
    code, report = sync(cli, small)
    e = by_id(report)["pr/2"]
    assert code == 0 and e["redundant_with"] == ["pr/1"], e
    assert e["detail"] == "every hunk it carries is already applied by pr/1"


def test_a_pr_whose_every_path_a_union_provides_is_superseded(cli: Cli, small: Small) -> None:
    files = {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"}
    union = small.up.commit(files, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.pr(1, files)
    small.pr(2, {**files, "a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    sup = [{"pr": 1, "paths": ["b.py", "docs/*"]}, {"pr": 2, "paths": ["b.py", "docs/*"]}]
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": union, "supersedes": sup}])
    code, report = sync(cli, small)
    assert code == 0, report
    e = by_id(report)
    assert (e["pr/1"]["status"], e["pr/1"]["reason"]) == ("skipped", "superseded")
    assert "every path it changes is provided by carry/union" in e["pr/1"]["detail"]
    assert e["pr/1"]["superseded_by"] == "carry/union"
    assert e["pr/2"]["status"] == "applied"


def test_precompiled_looks_at_every_file_of_a_pr(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n", "csrc/k.cu": "// k2\n"})
    small.manifest([{"pr": 1}], policy={"precompiled": {"paths": ["csrc/**"]}})
    code, report = sync(cli, small)
    assert code == 0
    e = by_id(report)["pr/1"]
    assert (e["status"], e["reason"]) == ("skipped", "precompiled") and "csrc/k.cu" in e["detail"]


def test_a_dropped_hunk_in_python_names_its_function(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dropped record and its message name the scope the lost hunk was in (read from the PR's blob)."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    lose(monkeypatch, "pr/2")
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None
    [lost] = landing(report, "pr/2")["dropped"]
    assert (lost["file"], lost["lines"], lost["scope"]) == ("a.py", [6, 6], "g")
    assert "pr/2's hunk" in lost["message"] and " (g) did not land" in lost["message"], lost["message"]
