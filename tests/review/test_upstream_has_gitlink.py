"""explain's "upstream already has" where upstream's file at a PR's path is, or once was, a submodule (h236): the
submodule's commit is no blob of lines, and was handed to git's diff as one (`git diff-tree -r -p` failed, "unable
to read <commit>", exit 4: no report at all)."""

from __future__ import annotations

from tests.conftest import Cli, Small

OLD = "def legacy():\n    first_call(1)\n    removed_call(2)\n    last_call(3)\n"
GITLINK = "1234567890123456789012345678901234567890"


def _explain(cli: Cli, small: Small) -> dict:
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1")
    assert code == 0, report
    assert "pr/1" in report["plan"]["upstream_conflicts"], report["plan"]
    return report


def test_a_pr_emptying_a_file_upstream_made_a_submodule_is_explained(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"sub": OLD}, "add sub", parent="main", ref="refs/heads/main")
    small.pr(1, {"sub": ""}, message="empty sub")
    small.up.commit({"sub": GITLINK}, "sub is a submodule", parent="main", ref="refs/heads/main",
                    modes={"sub": "160000"})
    assert "pr/1" not in _explain(cli, small)["plan"].get("upstream_has", {})


def test_the_commit_named_is_no_version_of_the_file_that_was_a_submodule(cli: Cli, small: Small) -> None:
    """Upstream made sub a submodule, then a file again, without the line pr/1 removes: the hunk is had, and the
    commit that made it a submodule (`git log -S` lists it: the line went) is no version of the file to place it in."""
    small.base = small.up.commit({"sub": OLD}, "add sub", parent="main", ref="refs/heads/main")
    small.pr(1, {"sub": OLD.replace("    removed_call(2)\n", ""), "b.py": "x = 1\ny = 2\nz = 30\n"})
    small.up.commit({"sub": GITLINK}, "sub is a submodule", parent="main", ref="refs/heads/main",
                    modes={"sub": "160000"})
    small.up.commit({"sub": OLD.replace("    removed_call(2)\n", ""), "b.py": "x = 1\ny = 2\nz = 31\n"},
                    "sub is a file again", parent="main", ref="refs/heads/main")
    has = _explain(cli, small)["plan"]["upstream_has"]["pr/1"]
    assert has["hunks_present"] == [{"file": "sub", "lines": [2, 2]}], has
    assert has["subject"] is None, has
