"""status's `drop` of a PR that conflicts with upstream alone (review.status_has): `status --write` removes the
entry, so `drop` is said only where upstream has the PR's whole change (h253's review: a hunk of lines that say
nothing on their own, left uncounted, and a removed line upstream still holds, were dropped with the rest)."""

from __future__ import annotations

from tests.conftest import Cli, Small

A = "def f(x):\n    check(x)\n    y = x + 1\n    return y\n\n\ndef g():\n    return 2\n"


def _status(cli: Cli, small: Small) -> dict[str, dict]:
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    return {e["id"]: e for e in out["entries"]}


def _synced(cli: Cli, small: Small) -> None:
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["entries"][0]["status"] == "conflict", report


def _base(small: Small) -> str:
    return small.up.commit({"a.py": A}, "a.py with f", parent="main", ref="refs/heads/main")


def test_a_pr_whose_other_hunk_is_an_import_upstream_lacks_is_no_drop(cli: Cli, small: Small) -> None:
    """The PR re-exports `g` in a new pkg.py (one line, an import: a hunk that says nothing on its own, counted
    neither way), and changes g; upstream made g's change as its own commit, not the re-export. `drop` would
    have `status --write` remove the entry, and the fork lose pkg.py."""
    base = _base(small)
    small.pr(1, {"a.py": A.replace("return 2", "return 3"), "pkg.py": "from a import g\n"}, parent=base)
    small.up.commit({"a.py": A.replace("return 2", "return 3") + "\n\ndef h():\n    return 5\n"},
                    "Make g three, add h", parent="main", ref="refs/heads/main")
    _synced(cli, small)
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "investigate", item
    assert item["why"].endswith(
        "1 more hunk, of lines that say nothing on their own, is not counted): likely merged upstream as "
        f"{small.up.rev('main')[:10]} \"Make g three, add h\"; not `drop`: 1 hunk that says nothing on its own "
        "stands in a file upstream has otherwise than the PR's head, so upstream may lack it; run `carrytool explain "
        "pr/1`"), item["why"]
    written = cli("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline", "--write")
    assert written.exit_code == 0 and "removed" not in written.stdout, written.output
    assert "pr: 1" in small.manifest_path.read_text()


def test_a_flipped_return_upstream_lacks_is_no_drop(cli: Cli, small: Small) -> None:
    """`return False` -> `return True` says nothing on its own (counted neither way), yet it is the PR's change."""
    a = A + "\n\ndef enabled():\n    return False\n"
    base = small.up.commit({"a.py": a}, "a.py with f", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": a.replace("return 2", "return 3").replace("return False", "return True")}, parent=base)
    small.up.commit({"a.py": a.replace("return 2", "return 3\n    # three")}, "Make g three", parent="main",
                    ref="refs/heads/main")
    _synced(cli, small)
    assert _status(cli, small)["pr/1"]["suggestion"] == "investigate"


def test_a_pr_whose_import_upstream_made_too_is_still_a_drop(cli: Cli, small: Small) -> None:
    """The guard: a hunk that says nothing on its own, in a file upstream has as the PR's head has it, leaves
    `drop` (upstream made g's change with a comment of its own, and b.py's import as the PR did)."""
    base = _base(small)
    small.pr(1, {"a.py": A.replace("return 2", "return 3"), "b.py": "import os\nx = 1\ny = 2\nz = 3\n"},
             parent=base)
    small.up.commit({"a.py": A.replace("return 2", "return 3\n    # three"),
                     "b.py": "import os\nx = 1\ny = 2\nz = 3\n"}, "Make g three", parent="main", ref="refs/heads/main")
    _synced(cli, small)
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] == "drop", item


def test_a_pr_removing_a_call_upstream_still_makes_is_no_drop(cli: Cli, small: Small) -> None:
    """The PR removes `check(x)` and changes the line after it (one hunk); upstream changed that line alone and
    still calls `check(x)`: upstream does not have the hunk, whose added line it holds at its place."""
    base = _base(small)
    small.pr(1, {"a.py": A.replace("    check(x)\n    y = x + 1\n", "    y = x + 2\n")}, parent=base)
    small.up.commit({"a.py": A.replace("y = x + 1", "y = x + 2")}, "Add two", parent="main", ref="refs/heads/main")
    _synced(cli, small)
    item = _status(cli, small)["pr/1"]
    assert item["suggestion"] != "drop", item
