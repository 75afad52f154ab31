"""A PR's line whose text the file holds elsewhere (helper-166's review of helper-164's line-by-line
judgement of a hunk partly there).

A line of a hunk stood in the union when its text stood anywhere in the def: a statement the union deleted
whose text the def already had (`req.on_failure(None)`) passed silently."""

from __future__ import annotations

from tests.conftest import Cli, Small

BASE = ("def compute(a):\n    return a\n\n\ndef f(a):\n    x = compute(a)\n    return x\n\n\n"
        "def g(a, req):\n    req.on_failure(None)\n    return a\n")


def _run(cli: Cli, small: Small, one: str, two: str, union: str, *, command: str = "sync") -> dict:
    """pr/1 and pr/2 from BASE (m.py: ONE, TWO), a union of both holding UNION: the JSON report of COMMAND."""
    b = small.base = small.up.commit({"m.py": BASE}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": one}, parent=b)
    small.pr(2, {"m.py": two}, parent=b)
    commit = small.up.commit({"m.py": union}, "union", parent=b, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}])
    code, report = cli.json(command, "-m", small.manifest_path, "--repo", small.work.path,
                            *(["--dry-run"] if command == "sync" else []))
    assert code == 0, report
    return report


def _absent(report: dict) -> list[tuple[str, list[int] | None, str]]:
    return [(w["entry"], w.get("lines"), w["message"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


# pr/1 adds three statements to g, the second the text of a line g already has
THREE = "    req.task.acks_late = True\n    req.on_failure(None)\n    req.task.seen = []\n"
ONE = BASE.replace("def g(a, req):\n", "def g(a, req):\n" + THREE)
TWO = BASE.replace("    return a\n\n\ndef f", "    return a + 0\n\n\ndef f")


def test_a_deleted_statement_whose_text_the_def_has_elsewhere_is_warned(cli: Cli, small: Small) -> None:
    union = ONE.replace("    req.on_failure(None)\n    req.task.seen", "    req.task.seen").replace(
        "    return a\n\n\ndef f", "    return a + 0\n\n\ndef f")
    assert union.count("req.on_failure(None)") == 1
    [(entry, lines, message)] = _absent(_run(cli, small, ONE, TWO, union))
    assert (entry, lines) == ("pr/1", [11, 13])
    assert "lacks line 12 of its hunk m.py:11-13 (g)" in message, message


def test_a_one_line_hunk_whose_text_the_def_has_elsewhere_is_warned(cli: Cli, small: Small) -> None:
    one = BASE.replace("    return a\n", "    req.on_failure(None)\n    return a\n").replace(
        "def compute(a):\n    req.on_failure(None)\n", "def compute(a):\n")
    assert one.count("req.on_failure(None)") == 2
    union = BASE.replace("    return a\n\n\ndef f", "    return a + 0\n\n\ndef f")
    assert [(e, lines) for e, lines, _m in _absent(_run(cli, small, one, TWO, union))] == [("pr/1", [11, 11])]


def test_a_statement_kept_beside_the_same_text_is_no_loss(cli: Cli, small: Small) -> None:
    union = ONE.replace("    return a\n\n\ndef f", "    return a + 0\n\n\ndef f")
    assert _absent(_run(cli, small, ONE, TWO, union)) == []
