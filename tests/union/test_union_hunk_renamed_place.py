"""A place named by the line before it, that line edited upstream (h186's review): outside a def (a config
file, a module's top level) a place of a key resolved differently at its places is named by the nearest line
before it that says something, and a refold needed every name met as recorded, so a harmless upstream edit
of that line (`name = a` -> `name = alpha`, a version bump, a header above the file's first line) stopped the
fold (exit 3, `not_placed`) saying "a hunk of it stopped conflicting, or a new one came". Where the file has
as many hunks of the key as recorded and a place's recorded line is gone from the file, its name now none
recorded, and the key's hunks beside it are met at their recorded places, it is that place (by order); a
name met elsewhere in the file (the hunk moved) still stops, and so do two changed names side by side (only
their order would tell them apart): the stop says which lines changed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from carrytool.union.recorded_upstream import HunkUpstream, Place, RecordedUpstream
from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_each_place import _composed, _resolve_each

STOPPED = "not met at the places recorded"


def _sections(names: str, values: dict[str, int] | None = None, renamed: dict[str, str] | None = None) -> str:
    """A config file with a section for each of NAMES (`[a]`, `name = a`, a blank line, `timeout = 5`), its
    timeout set as VALUES say, its `name` line as RENAMED says."""
    values, renamed = values or {}, renamed or {}
    return "".join(f"[{n}]\nname = {renamed.get(n, n)}\n\ntimeout = {values.get(n, 5)}\n\n" for n in names)


def _show(prs: TwoPrs, commit: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=prs.work, capture_output=True, text=True,
                          check=True).stdout


def _folded(cli: Cli, tmp_path: Path, names: str, one: dict, two: dict, resolved: list[int]) -> tuple[TwoPrs, str]:
    """pr/1 and pr/2 setting c.cfg's timeouts (ONE, TWO), the union's hunks resolved in order to RESOLVED."""
    prs = TwoPrs(tmp_path, {"c.cfg": _sections(names)}, {"c.cfg": _sections(names, one)},
                 {"c.cfg": _sections(names, two)})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "c.cfg", *(f"timeout = {v}\n" for v in resolved))
    first = _composed(cli("union", "continue", "u", *args))
    again = cli("union", "compose", "u", *args)
    assert _composed(again) == first
    return prs, first


def test_the_line_naming_a_place_edited_upstream_replays_each_place(cli: Cli, tmp_path: Path) -> None:
    # h186's repro: [a] resolved to pr/1's timeout, [b] to pr/2's; upstream then renames only `name = a`
    prs, _first = _folded(cli, tmp_path, "ab", {"a": 10, "b": 10}, {"a": 20, "b": 20}, [10, 20])
    prs.up.commit({"c.cfg": _sections("ab", renamed={"a": "alpha"})}, "rename a", parent=prs.base,
                  ref="refs/heads/main")
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    # was exit 3: "not met at the places recorded (a hunk of it stopped conflicting, or a new one came)"
    assert result.exit_code == 0 and "not replayed" not in out, out
    assert _show(prs, _composed(result), "c.cfg") == _sections("ab", {"a": 10, "b": 20}, {"a": "alpha"})


def test_a_header_above_a_conflict_at_line_one_replays_each_place(cli: Cli, tmp_path: Path) -> None:
    # the first place has no line before it (scope null); upstream adds a header above it
    base = "\ntimeout = 5\n\n[b]\nname = b\nkeep = 1\n\ntimeout = 5\n"
    prs = TwoPrs(tmp_path, {"c.cfg": base}, {"c.cfg": base.replace("5", "10")}, {"c.cfg": base.replace("5", "20")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "c.cfg", "timeout = 20\n", "timeout = 10\n")
    assert cli("union", "continue", "u", *args).exit_code == 0
    prs.up.commit({"c.cfg": "# settings\n" + base}, "a header", parent=prs.base, ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0 and "not replayed" not in out, out          # was exit 3
    assert _show(prs, _composed(result), "c.cfg") == "# settings\n" + base.replace("5", "20", 1).replace("5", "10")


def test_two_names_changed_side_by_side_stop_and_say_so(cli: Cli, tmp_path: Path) -> None:
    # decided: only their order tells `name = alpha` and `name = beta` apart, and order alone is what
    # replayed one place's resolution at another (h183's review): the fold asks, saying which lines changed
    prs, _first = _folded(cli, tmp_path, "ab", {"a": 10, "b": 10}, {"a": 20, "b": 20}, [10, 20])
    prs.up.commit({"c.cfg": _sections("ab", renamed={"a": "alpha", "b": "beta"})}, "rename both",
                  parent=prs.base, ref="refs/heads/main")
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    assert result.exit_code == 3 and STOPPED in out, out
    assert ("c.cfg: your recorded resolutions of a conflict you met at 2 places differ by place, and the lines that "
            "named its places changed (`name = a` -> `name = alpha`, `name = b` -> `name = beta`), side by side: only "
            "their order would tell which place is which, so they are not replayed; the scratch file shows its hunks "
            "as the merge made them. You resolved it:\n  at c.cfg's hunk 1 of it (after `name = a`):\n    timeout = 10\n"
            "  at c.cfg's hunk 2 of it (after `name = b`):\n    timeout = 20\n") in out, out
    assert "a hunk of it stopped conflicting" not in out, out


def test_a_name_met_at_another_place_still_stops(cli: Cli, tmp_path: Path) -> None:
    # recorded at a, b, c; pr/2 then moves from a to x (before a): as many hunks, b and c met as recorded, and
    # x's name is none recorded, but a's line is still in the file: a's hunk stopped conflicting, x's is new
    prs, _first = _folded(cli, tmp_path, "xabc", {n: 10 for n in "xabc"}, {n: 20 for n in "abc"}, [10, 20, 10])
    prs.up.commit({"c.cfg": _sections("xabc", {n: 20 for n in "xbc"})}, "two: x, not a", parent=prs.base,
                  ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    assert result.exit_code == 3 and STOPPED in out, out
    assert "(a hunk of it stopped conflicting, or a new one came)" in out, out


def test_a_def_scoped_place_is_named_by_its_def_alone(cli: Cli, tmp_path: Path) -> None:
    # a line before a hunk in a def names no place: upstream edits it, each place is replayed; a def renamed is
    # not matched by order (its name is no line of the file to find), the fold asks as before
    body = "    y = 0\n    w = 0\n    x = 1\n    return x\n"
    two = f"def f():\n{body}\n\ndef g():\n{body}"
    prs = TwoPrs(tmp_path, {"m.py": two}, {"m.py": two.replace("x = 1", "x = 2")}, {"m.py": two.replace("x = 1", "x = 3")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n")
    assert cli("union", "continue", "u", *args).exit_code == 0
    main = prs.up.commit({"m.py": two.replace("y = 0", "y = -1")}, "y", parent=prs.base, ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _show(prs, _composed(result), "m.py") == two.replace("y = 0", "y = -1").replace("x = 1", "x = 3", 1) \
        .replace("x = 1", "x = 2")
    prs.up.commit({"m.py": two.replace("def g", "def g2")}, "g2", parent=main, ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3 and "(a hunk of it stopped conflicting, or a new one came)" in out, out


def _recorded(*names: str | None) -> RecordedUpstream:
    at = {("c.cfg", n): HunkUpstream((), ()) for n in range(len(names))}
    return RecordedUpstream(HunkUpstream(), at, {("c.cfg", n): (name, 0) for n, name in enumerate(names)},
                            {("c.cfg", n): b"%d" % n for n in range(len(names))})


def _now(*names: str | None) -> list[Place]:
    return [Place("c.cfg", n, len(names), name, 0, 1) for n, name in enumerate(names)]


@pytest.mark.parametrize(("then", "now", "lines", "placed", "renamed"), [
    (("@ a", "@ b"), ("@ a", "@ b"), {"@ a", "@ b"}, [0, 1], []),                  # met as recorded
    (("@ a", "@ b"), ("@ A", "@ b"), {"@ A", "@ b"}, [0, 1], []),                  # a's line edited
    ((None, "@ b"), ("@ h", "@ b"), {"@ h", "@ b"}, [0, 1], []),                   # a header above line 1
    (("@ a", "@ b", "@ c"), ("@ A", "@ b", "@ C"), {"@ A", "@ b", "@ C"}, [0, 1, 2], []),  # b between them
    (("@ a", "@ b"), ("@ A", "@ B"), {"@ A", "@ B"}, [None, None], [("@ a", "@ A"), ("@ b", "@ B")]),
    (("@ a", "@ b"), ("@ x", "@ b"), {"@ x", "@ a", "@ b"}, [None, 1], []),        # a's line still there
    (("@ a", "@ b"), ("@ b", "@ B"), {"@ b", "@ B"}, [1, None], []),               # b's name one place before
    (("@ a", "@ b"), ("@ A",), {"@ A", "@ b"}, [None], []),                        # fewer hunks of the key
    (("@ a", "f"), ("@ a", "g"), {"@ a"}, [0, None], []),                         # a def renamed
    (("@ a", "@ b"), ("@ A", "f"), {"@ A"}, [None, None], []),                      # b now in a def
])
def test_places_renamed_are_matched_only_when_sure(then: tuple, now: tuple, lines: set, placed: list,
                                                   renamed: list) -> None:
    found = _recorded(*then).placed(_now(*now), lines)
    assert [None if at is None else at[1] for at in found.at] == placed
    assert found.renamed == renamed
