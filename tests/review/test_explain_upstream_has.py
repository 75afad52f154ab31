"""explain of an entry that conflicts with upstream alone because upstream merged it as another commit (h185:
sqlalchemy PR #13487, its session.py hunk taken byte for byte, its test rewritten): the story says which of
its hunks upstream already has, the upstream commit that made them, and what to do next."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from carrytool.review import upstream_has as upstream_has_module
from tests.conftest import Cli, Small

A = "def f():\n    a = 1\n    return a\n\n\ndef g():\n    return 2\n"
A_PR = "def f():\n    a = 1\n    reset_flushing_state(a)\n    return a\n\n\ndef g():\n    return 2\n"
# upstream took the PR's line as it is, with a change of its own beside it (which conflicts with nothing the PR
# changed, but puts the line at another place than the PR's)
A_UP = "import os\n\n\ndef f():\n    a = 1\n    reset_flushing_state(a)\n    return a\n\n\ndef g():\n    return 2\n"
T = "def test_f():\n    assert f() == 1\n"
T_PR = T + "\n\ndef test_reset():\n    assert f() == 1\n    assert flushing() is False\n"
T_UP = T + "\n\ndef test_reset_after_failed_begin():\n    assert f() == 1\n    assert not flushing()\n"


def build(small: Small) -> tuple[str, str]:
    """The base, a PR changing a.py and test_a.py, upstream merging it as its own commit (the test rewritten)
    and a later unrelated commit; returns (upstream's merge commit, the PR's head)."""
    small.base = small.up.commit({"a.py": A, "test_a.py": T}, "base", parent="main", ref="refs/heads/main")
    head = small.pr(1, {"a.py": A_PR, "test_a.py": T_PR}, message="Reset the flushing state")
    merged = small.up.commit({"a.py": A_UP, "test_a.py": T_UP}, "Reset the flushing state (#1)", parent="main",
                             ref="refs/heads/main")
    small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "unrelated", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    return merged, head


def explain(cli: Cli, small: Small, *args: str) -> tuple[int, dict]:
    return cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, *args)


def test_a_pr_upstream_merged_as_another_commit_says_upstream_has_its_hunk(cli: Cli, small: Small,
                                                                          report_schema: dict) -> None:
    merged, _ = build(small)
    code, report = explain(cli, small, "pr/1")
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["test_a.py"]}
    has = report["plan"]["upstream_has"]["pr/1"]
    assert has == {"hunks": 2, "present": 1, "likely_merged": True, "hunks_trivial": 0,
                   "hunks_present": [{"file": "a.py", "lines": [6, 6]}],       # where upstream's a.py has it
                   "hunks_missing": [{"file": "test_a.py", "lines": [3, 7]}],  # where the PR's head has it
                   "commit": merged, "subject": "Reset the flushing state (#1)"}
    [story] = report["stories"]
    assert story["upstream_has"] == has
    assert (f"conflicts with upstream alone in test_a.py, and upstream already has 1 of its 2 hunks (a.py: 1 of 1, "
            f"line 6): likely merged upstream as {merged[:10]} \"Reset the flushing state (#1)\"") in story["summary"]
    assert ("next: if upstream's version of it is what you carry it for (`carrytool status` shows whether upstream "
            "merged pr/1), remove pr/1 from the manifest; else rebase it onto upstream main, which lacks its hunks "
            "in test_a.py (1 hunk)") in story["summary"]
    assert not any("rebase needed" in line for line in story["summary"])
    # the command the story gives finds the commit again, in the repository explain ran in
    [found] = [c for c in story["commands"] if "git log -S" in c["purpose"]]
    assert found["purpose"].endswith(f"the first that added it: {merged} Reset the flushing state (#1)")
    out = subprocess.run(shlex.split(found["command"]), cwd=small.work.path, capture_output=True, text=True,
                         check=True).stdout
    assert out == f"{merged} Reset the flushing state (#1)\n"


def test_text_and_markdown_say_what_upstream_has(cli: Cli, small: Small) -> None:
    merged, _ = build(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    text = cli(*args).stdout
    assert (f"  pr/1 conflicts with upstream alone in test_a.py, and upstream already has 1 of its 2 hunks (a.py: "
            f"1 of 1, line 6): likely merged upstream as {merged[:10]} \"Reset the flushing state (#1)\" "
            "(`carrytool explain pr/1` says what next)") in text, text
    markdown = cli(*args, "--format", "markdown").stdout
    assert "<summary>What upstream already has</summary>" in markdown
    assert "- `pr/1` conflicts with upstream alone, and upstream already has 1 of its 2 hunks" in markdown
    story = cli(*args, "pr/1").stdout
    assert "upstream already has 1 of its 2 hunks" in story and "rebase needed" not in story


def test_a_conflict_with_upstream_that_has_none_of_it_still_needs_a_rebase(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"a.py": A, "test_a.py": T}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": A_PR})
    small.up.commit({"a.py": A.replace("    a = 1\n", "    a = 2\n")}, "upstream moved", parent="main",
                    ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = explain(cli, small, "pr/1")
    assert code == 0 and report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]}
    assert "upstream_has" not in report["plan"] and "upstream_has" not in report["stories"][0]
    assert "conflicts with upstream alone in a.py: rebase needed" in report["stories"][0]["summary"]


def test_lines_upstream_had_before_are_no_evidence(cli: Cli, small: Small) -> None:
    """The PR adds a line its base already holds elsewhere, and upstream has it no more often than the base:
    upstream did not make that change, wherever the line stands."""
    base = A + "\n\ndef h():\n    reset_flushing_state(1)\n"
    small.base = small.up.commit({"a.py": base, "test_a.py": T}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": base.replace("    a = 1\n    return a", "    a = 1\n    reset_flushing_state(1)\n    return a"),
                 "test_a.py": T_PR})
    small.up.commit({"test_a.py": T_UP}, "a test of its own", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = explain(cli, small, "pr/1")
    assert code == 0 and report["plan"]["upstream_conflicts"] == {"pr/1": ["test_a.py"]}
    assert "upstream_has" not in report["plan"]


def test_stacked_prs_weigh_a_hunk_they_share_once_and_say_the_same(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """PRs stacked on one branch carry the same hunks: what upstream has of a hunk follows from the hunk and its
    blobs, found once for all of them (60 polars PRs: 20,804 hunks weighed, 3,010 distinct), and every entry
    is told what it is told when each is weighed on its own."""
    merged, first = build(small)
    small.pr(2, {"test_a.py": T_PR + "\n\ndef test_more():\n    assert True\n"}, parent=first)
    small.pr(3, {"test_a.py": T_PR + "\n\ndef test_other():\n    assert False\n"}, parent=first)
    small.manifest([{"pr": n, "on_conflict": "skip"} for n in (1, 2, 3)])
    calls: list[int] = []
    real_places, real_at = upstream_has_module._places, upstream_has_module._at_place
    monkeypatch.setattr(upstream_has_module, "_places", lambda *a: (calls.append(1), real_places(*a))[1])
    monkeypatch.setattr(upstream_has_module, "_at_place", lambda *a: (calls.append(2), real_at(*a))[1])
    code, shared = explain(cli, small)
    has = shared["plan"]["upstream_has"]
    assert code == 0 and sorted(has) == ["pr/1", "pr/2", "pr/3"]
    assert has["pr/2"]["hunks_present"] == has["pr/1"]["hunks_present"] == [{"file": "a.py", "lines": [6, 6]}]
    assert has["pr/3"]["commit"] == merged
    # a.py's hunk, the one the three share, weighed and placed once; each one's own test_a.py hunk weighed
    assert (calls.count(1), calls.count(2)) == (1 + 3, 1)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # nothing kept: weighed again
    monkeypatch.setattr(upstream_has_module._Alike, "switched_on", False)
    calls.clear()
    assert explain(cli, small) == (code, shared) and (calls.count(1), calls.count(2)) == (3 + 3, 3)


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("unchanged", [True, False])
def test_a_hunk_weighed_once_for_every_entry_says_what_each_weighed_alone_says(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, batched: bool, unchanged: bool) -> None:
    """h272's review: stacked PRs, one with its own change of a shared file, and an unstacked one carrying the
    same change as the first: the same report with and without _Alike, batched or not, unchanged files read or not."""
    _merged, first = build(small)
    small.pr(2, {"test_a.py": T_PR + "\n\ndef test_more():\n    assert True\n"}, parent=first)
    small.pr(3, {"a.py": A_PR.replace("return 2", "return 5")}, parent=first)
    small.pr(4, {"a.py": A_PR, "test_a.py": T_PR}, parent=small.base)
    small.manifest([{"pr": n, "on_conflict": "skip"} for n in (1, 2, 3, 4)])
    monkeypatch.setattr(upstream_has_module.HasFinder, "batched", batched)
    monkeypatch.setattr(upstream_has_module.HasFinder, "skip_unchanged", unchanged)
    shared = explain(cli, small)
    assert shared[1]["plan"]["upstream_has"]
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    monkeypatch.setattr(upstream_has_module._Alike, "switched_on", False)
    assert explain(cli, small) == shared
