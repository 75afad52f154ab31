"""Two PRs built on a newer upstream than the one synced (h227, on trl with upstream at main~12: "pr/6507 and
pr/6024 carry the same 92 hunks in 34 files", and no word of why): each carries upstream's newer commits as its
own change, and the identical-hunk warnings say that both hold commits upstream's branch does not have yet."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, Small

NEWER = {f"up/f{n}.txt": f"upstream {n}\n" for n in range(5)}
NOTE = ("; both PRs hold {n} commits that upstream main does not have (through {sha}): both built on a newer upstream "
        "than the one synced, or stacked on one branch the manifest does not carry, so each carries those commits' "
        "changes as its own")


def _sync(cli: Cli, small: Small, tmp_path: Path) -> tuple[list[str], list[dict]]:
    saved = tmp_path / "sync.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", saved)
    assert result.exit_code == 0, result.stdout
    warnings = [w for w in json.loads(saved.read_text())["warnings"] if w["kind"] == "identical-hunk"]
    return [line for line in result.stdout.splitlines() if "pr/2 and pr/1" in line], warnings


def test_prs_on_a_newer_upstream_say_why_they_carry_the_same_hunks(cli: Cli, small: Small, tmp_path: Path) -> None:
    one = small.up.commit(dict(list(NEWER.items())[:2]), "upstream one", parent=small.base, ref="refs/heads/main")
    two = small.up.commit(dict(list(NEWER.items())[2:]), "upstream two", parent=one, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"}, parent=two)
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"}, parent=two)
    small.up.git("update-ref", "refs/heads/main", small.base)        # synced two commits behind the PRs' base
    small.manifest([{"pr": 1}, {"pr": 2}])
    said, warnings = _sync(cli, small, tmp_path)
    note = NOTE.format(n=2, sha=two[:12])
    assert said == ["warning: pr/2 and pr/1 carry the same 5 hunks in 5 files (up/f0.txt:1, up/f1.txt:1, "
                    "up/f2.txt:1 and 2 more): each is applied once" + note], said
    assert sorted(w["file"] for w in warnings) == sorted(NEWER)
    assert {w["message"] for w in warnings} == {f"pr/2 and pr/1 carry the same hunk in {path}:1: it is applied once{note}"
                                                for path in NEWER}


def test_prs_sharing_no_commit_beyond_upstream_say_nothing_more(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, NEWER)
    small.pr(2, {**NEWER, "docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    said, warnings = _sync(cli, small, tmp_path)
    assert said == ["warning: pr/2 and pr/1 carry the same 5 hunks in 5 files (up/f0.txt:1, up/f1.txt:1, "
                    "up/f2.txt:1 and 2 more): each is applied once"], said
    assert all("both PRs hold" not in w["message"] for w in warnings)


def test_prs_stacked_on_a_branch_no_entry_carries_are_not_said_only_newer_upstream(cli: Cli, small: Small,
                                                                                    tmp_path: Path) -> None:
    """h236: both PRs built on a feature branch (two commits no entry carries, never upstream's) got "likely built
    on a newer upstream than the one synced": the note names the stack as well."""
    one = small.up.commit(dict(list(NEWER.items())[:2]), "feature one", parent=small.base, ref="refs/heads/feature")
    two = small.up.commit(dict(list(NEWER.items())[2:]), "feature two", parent=one, ref="refs/heads/feature")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"}, parent=two)
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"}, parent=two)
    small.manifest([{"pr": 1}, {"pr": 2}])
    said, warnings = _sync(cli, small, tmp_path)
    note = NOTE.format(n=2, sha=two[:12])
    assert said == ["warning: pr/2 and pr/1 carry the same 5 hunks in 5 files (up/f0.txt:1, up/f1.txt:1, "
                    "up/f2.txt:1 and 2 more): each is applied once" + note], said
    assert all(w["message"].endswith(note) for w in warnings)
