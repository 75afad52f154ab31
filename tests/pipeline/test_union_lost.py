"""What sync says of a PR whose union was not applied, with several unions standing for parts of it, or one
disabled (helper-144)."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_sync import sync

A = "x = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"


def _two_unions(small: Small, *, first_enabled: bool = True) -> None:
    small.base = small.up.commit({"a.py": A, "b.py": "y = 2\n", "c.txt": "c\n"}, "base", parent="main",
                                 ref="refs/heads/main")
    small.pr(2, {"a.py": A.replace("x = 1", "x = 2")})
    small.pr(1, {"a.py": A.replace("e = 5", "e = 50"), "b.py": "y = 20\n", "c.txt": "c1\n"})
    u1 = small.up.commit({"a.py": A.replace("x = 1", "x = 3").replace("e = 5", "e = 50")}, "u1: a.py of pr/1",
                         parent=small.base, ref="refs/heads/u1")
    u2 = small.up.commit({"b.py": "y = 20\n"}, "u2: b.py of pr/1", parent=small.base, ref="refs/heads/u2")
    for ref in ("u1", "u2"):
        small.work.git("fetch", "-q", str(small.up.path), f"refs/heads/{ref}:refs/heads/{ref}")
    small.manifest([{"pr": 2}, {"pr": 1},
                    {"carry": "u1", "commit": u1, "supersedes": [{"pr": 1, "paths": ["a.py"]}],
                     **({} if first_enabled else {"enabled": False})},
                    {"carry": "u2", "commit": u2, "supersedes": [{"pr": 1, "paths": ["b.py"]}]}],
                   policy={"on_conflict": "skip"})


def test_a_pr_two_unions_stand_for_names_only_what_the_one_not_applied_held(cli: Cli, small: Small) -> None:
    """pr/1's a.py comes from carry/u1, which conflicts with pr/2 and is skipped; its b.py from carry/u2, which
    applies. pr/1's detail named both files as lost ("its change to a.py, b.py"): b.py is in the result."""
    _two_unions(small)
    code, report = sync(cli, small)
    entries = {e["id"]: e for e in report["entries"]}
    assert code == 0 and entries["carry/u1"]["status"] == "conflict" and entries["carry/u2"]["status"] == "applied"
    assert entries["pr/1"]["detail"].endswith(
        "superseded by carry/u1, which was not applied (conflict): its change to a.py is not in the result (a.py)"), \
        entries["pr/1"]
    assert "b.py is not" not in entries["pr/1"]["detail"] and "a.py, b.py" not in entries["pr/1"]["detail"]


def test_a_disabled_union_is_no_lost_union(cli: Cli, small: Small) -> None:
    """A disabled union supersedes nothing: pr/1 applies its a.py itself. The outcome said "but carry/u1 was
    not applied (disabled)", and pr/1's row that its change was lost."""
    _two_unions(small, first_enabled=False)
    code, report = sync(cli, small)
    entries = {e["id"]: e for e in report["entries"]}
    assert code == 0, report
    assert "carry/u1" not in (entries["pr/1"].get("detail") or ""), entries["pr/1"]
    text = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "carry/u1 was not applied" not in text, text
