"""explain's "upstream already has" of a PR that deletes a file upstream moved elsewhere (h226): upstream has no
file at the PR's path, yet it keeps the file's content under another name; that is not upstream making the PR's
deletion, and "likely merged upstream ... remove pr/1 from the manifest" would lose the PR's change."""

from __future__ import annotations

from tests.conftest import Cli, Small

OLD = "def legacy():\n    return compute_the_legacy_answer(42)\n\n\ndef other():\n    return helper_value(7)\n"


def test_a_deletion_of_a_file_upstream_renamed_is_not_had(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"legacy.py": OLD}, "add legacy", parent="main", ref="refs/heads/main")
    small.pr(1, {"legacy.py": None}, message="Remove legacy.py")
    small.up.commit({"legacy.py": None, "pkg/legacy.py": OLD + "\n\n# moved\n"}, "Move legacy.py into pkg",
                    parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1")
    assert code == 0, report
    assert "pr/1" in report["plan"]["upstream_conflicts"], report["plan"]
    assert "pr/1" not in report["plan"].get("upstream_has", {}), report["plan"]["upstream_has"]
    [story] = report["stories"]
    assert not any("likely merged upstream" in line for line in story["summary"]), story["summary"]


def test_a_deletion_upstream_made_too_is_still_had(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"legacy.py": OLD}, "add legacy", parent="main", ref="refs/heads/main")
    small.pr(1, {"legacy.py": None, "b.py": "x = 1\ny = 2\nz = 30\n"}, message="Remove legacy.py")
    small.up.commit({"legacy.py": None, "b.py": "x = 1\ny = 2\nz = 31\n"}, "Remove legacy.py too", parent="main",
                    ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1")
    assert code == 0, report
    has = report["plan"]["upstream_has"]["pr/1"]
    assert has["hunks_present"] == [{"file": "legacy.py", "lines": [0, 0]}], has
