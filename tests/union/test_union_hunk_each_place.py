"""One conflict met at two places and resolved differently at each (helper-174): the store kept one
resolution a key (the last), and the other place's went into a fixup of the PR folded last, so a refold that
folded the PRs in another order replayed the one resolution at both places and lost the other without a
word (exit 0). Each place keeps its own resolution where they differ; a hunk of such a key at a place the
record does not name surely is not replayed: the fold asks."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SECOND_GIT, Cli
from tests.union.fold_scenario import PATCH_UNION, TwoPrs
from tests.union.test_union_hunk_places import HUNK

TWO = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
GITS = ["system"] + (["2.47"] if SECOND_GIT else [])


def _resolve_each(path: Path, *lines: str) -> None:
    """PATH's hunks resolved in order to LINES."""
    text = path.read_text()
    hunks = HUNK.findall(text)
    assert len(hunks) == len(lines), text
    for hunk, line in zip(hunks, lines):
        text = text.replace(hunk, line, 1)
    path.write_text(text)


def _composed(result) -> str:  # noqa: ANN001
    found = re.search(r"composed ([0-9a-f]{40})", result.stdout)
    assert found and result.exit_code == 0, result.stdout + result.stderr
    return found.group(1)


def _tree(prs: TwoPrs, commit: str) -> str:
    return subprocess.run(["git", "rev-parse", f"{commit}^{{tree}}"], cwd=prs.work, capture_output=True, text=True,
                          check=True).stdout.strip()


def _stored(prs: TwoPrs) -> tuple[list[dict], list[Path]]:
    folder = prs.manifest.parent / "resolutions" / "u"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))], sorted(folder.glob("fixups/*.json"))


@pytest.mark.parametrize("git", GITS)
def test_a_key_resolved_differently_at_two_places_is_refolded_as_left(cli: Cli, tmp_path: Path, git: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if git != "system":
        monkeypatch.setenv("PATH", f"{SECOND_GIT}:{os.environ['PATH']}")
    prs = TwoPrs(tmp_path, {"m.py": TWO}, {"m.py": TWO.replace("x = 1", "x = 2")},
                 {"m.py": TWO.replace("x = 1", "x = 3")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n")      # f: pr/2's, g: pr/1's
    first = _composed(cli("union", "continue", "u", *args))
    assert first == "06d823b34e8c96ab63c703de50c8f3b87157e77b"               # git 2.39 and 2.47 alike
    [record], fixups = _stored(prs)
    assert fixups == []                                                     # was a fixup of pr/2: f's x = 3
    assert [(p["scope"], p["resolution"], p["lines"]) for p in record["upstream_at"]] == \
        [("f", "    x = 3", 1), ("g", "    x = 2", 1)]
    again = cli("union", "compose", "u", *args)                             # same inputs: same commit
    assert _composed(again) == first and "not replayed" not in again.stdout + again.stderr
    # the PRs folded in the other order (pr/2, then pr/1): was exit 0 with x = 2 in f, the user's x = 3 lost
    prs.manifest.write_text(PATCH_UNION.replace("  - pr: 1\n  - pr: 2\n", "  - pr: 2\n  - pr: 1\n"))
    swapped = cli("union", "compose", "u", *args)
    assert _tree(prs, _composed(swapped)) == _tree(prs, first), swapped.stdout + swapped.stderr
    assert "not replayed" not in swapped.stdout + swapped.stderr


def test_a_key_resolved_differently_in_two_files_keeps_each(cli: Cli, tmp_path: Path) -> None:
    one = "def f():\n    x = 1\n    return x\n"
    prs = TwoPrs(tmp_path, {"m.py": one, "n.py": one}, {"m.py": one.replace("1", "2"), "n.py": one.replace("1", "2")},
                 {"m.py": one.replace("1", "3"), "n.py": one.replace("1", "3")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n")
    _resolve_each(prs.scratch / "n.py", "    x = 2\n")
    first = _composed(cli("union", "continue", "u", *args))
    [record], fixups = _stored(prs)
    assert fixups == [] and [(p["file"], p["resolution"]) for p in record["upstream_at"]] == \
        [("m.py", "    x = 3"), ("n.py", "    x = 2")]
    # was m.py's x = 2 (n.py's resolution, recorded last, replaced m.py's: no fixup kept it), exit 0
    again = cli("union", "compose", "u", *args)
    assert _composed(again) == first and "not replayed" not in again.stdout + again.stderr


def test_a_key_resolved_differently_met_at_a_new_place_asks(cli: Cli, tmp_path: Path) -> None:
    three = TWO + "\n\ndef h():\n    x = 1\n    return x\n"
    prs = TwoPrs(tmp_path, {"m.py": three}, {"m.py": three.replace("x = 1", "x = 2")},
                 {"m.py": three.replace("x = 1", "x = 3", 2)})             # h: pr/1's, cleanly
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n")
    assert cli("union", "continue", "u", *args).exit_code == 0
    # pr/2 moves: h's x to 3 too, the same two sides as f's and g's: which resolution is h's is unknown
    prs.up.commit({"m.py": three.replace("x = 1", "x = 3")}, "two: h too", parent=prs.pr2, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    assert "m.py  pr/1, pr/2  (3 hunks whose recorded resolutions differ by place, not met at the places " \
        "recorded)" in out, out
    assert ("m.py: your recorded resolutions of a conflict you met at 2 places differ by place, and this fold does "
            "not meet it at the places recorded (a hunk of it stopped conflicting, or a new one came): m.py's hunk 3 "
            "of it (in h) is at no place recorded, so they are not replayed; the scratch file shows its hunks as the merge made them. You resolved it:\n"
            "  at m.py's hunk 1 of it (in f):\n        x = 3\n  at m.py's hunk 2 of it (in g):\n        x = 2\n"
            "resolve its hunks again; `union continue` records them") in out, out
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n", "    x = 3\n")
    first = _composed(cli("union", "continue", "u", *args))
    again = cli("union", "compose", "u", *args)
    assert _composed(again) == first and "not replayed" not in again.stdout + again.stderr
    assert "-    x = 1\n+    x = 3\n     return x\n" in (prs.manifest.parent / "unions" / "u.patch").read_text()


def test_a_typo_at_one_place_names_the_places_resolution(cli: Cli, tmp_path: Path) -> None:
    base = "".join(f"def {name}(values, density):\n    out = []\n    for v in values:\n        out.append(v / density)\n"
                   "    return out\n\n\n" for name in ("scale", "shrink"))
    prs = TwoPrs(tmp_path, {"m.py": base}, {"m.py": base.replace("v / density)", "v / density if density else 0.0)")},
                 {"m.py": base.replace("v / density)", "float(v) / density)")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "        out.append(float(v) / densty if density else 0.0)\n",
                  "        out.append(float(v) / density)\n")
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    [record] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    # was "(its `resolution`)", the other place's: corrected there, the refold still replayed the typo
    assert (f"the line is your recorded resolution {record}: correct it there (the `resolution` of its place in "
            "`upstream_at`), then carrytool union compose u") in out, out
    doc = json.loads(record.read_text())
    doc["upstream_at"][0]["resolution"] = doc["upstream_at"][0]["resolution"].replace("densty", "density")
    record.write_text(json.dumps(doc))
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "densty" not in again.stdout + again.stderr, again.stdout + again.stderr
    patch = (prs.manifest.parent / "unions" / "u.patch").read_text()
    assert "float(v) / density if density else 0.0)" in patch and "densty" not in patch


def test_a_stop_that_does_not_meet_the_conflict_shows_each_places_resolution(cli: Cli, tmp_path: Path) -> None:
    prs = TwoPrs(tmp_path, {"m.py": TWO}, {"m.py": TWO.replace("x = 1", "x = 2")},
                 {"m.py": TWO.replace("x = 1", "x = 3")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n")
    assert cli("union", "continue", "u", *args).exit_code == 0
    # pr/2 moves: f's return too, and git makes one hunk of f's and g's: the conflict is not met as recorded
    prs.up.commit({"m.py": TWO.replace("x = 1", "x = 3").replace("return x", "return x  # f", 1)}, "two more",
                  parent=prs.pr2, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    said = "m.py: you resolved a conflict there before (pr/1, pr/2) that this fold does not meet as recorded (a PR " \
        "moved); your resolution was:\n"
    # was g's `x = 2` only, and f's `x = 3` shown as "your recorded edit outside the conflict hunks"
    assert said + "        x = 3\n" in out and said + "        x = 2\n" in out, out
    assert "outside the conflict hunks" not in out, out


SECTIONS = "".join(f"[{n}]\nx = 1\nend\na = 1\nb = 2\nc = 3\nd = 4\n\n" for n in ("f", "g", "h"))


def _sections_set(values: list[int | None]) -> str:
    """SECTIONS with each section's x set to VALUES' (None: left as it is)."""
    parts = SECTIONS.split("\n\n")
    return "\n\n".join(p.replace("x = 1", f"x = {v}") if v else p for p, v in zip(parts, [*values, None]))


def test_a_key_resolved_differently_outside_python_is_named_by_the_line_before(cli: Cli, tmp_path: Path) -> None:
    # h183's review: in a file with no def (m.cfg; or at a Python module's top level) every place had no name,
    # and a refold matched them by position: pr/2 moved from f and g to g and h, and g's hunk took f's resolution
    # (x = 3), h's g's (x = 2), exit 0. A place there is named by the line before it that says something
    prs = TwoPrs(tmp_path, {"m.cfg": SECTIONS}, {"m.cfg": _sections_set([2, 2, 2])},
                 {"m.cfg": _sections_set([3, 3, None])})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.cfg", "x = 3\n", "x = 2\n")           # f: pr/2's, g: pr/1's
    assert cli("union", "continue", "u", *args).exit_code == 0
    prs.up.commit({"m.cfg": _sections_set([None, 3, 3])}, "two: g and h", parent=prs.base, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    assert "not met at the places recorded" in out, out
    # neither is replayed at a place it was not made for; both are shown, each at its own place
    assert ("at m.cfg's hunk 1 of it (after `[f]`):\n    x = 3\n  at m.cfg's hunk 2 of it (after `[g]`):\n"
            "    x = 2\n") in out, out


def test_a_binding_dropped_at_one_place_names_the_places_resolution(cli: Cli, tmp_path: Path) -> None:
    """h187: a conflict met at two places, its sides binding `y`, resolved to keep the binding in f() and to drop
    it in g(): the warning compared the sides with both resolutions joined (f's has `y`), said no resolution
    dropped the name, and where it did say so it named the record's `resolution`, not g's place."""
    two = "def f():\n    y = 1\n    return y\n\n\ndef g():\n    y = 1\n    return y\n"
    prs = TwoPrs(tmp_path, {"m.py": two}, {"m.py": two.replace("y = 1", "y = 2")},
                 {"m.py": two.replace("y = 1", "y = 3")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    y = 3\n", "    pass\n")
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    [record] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    assert "the union loads `y`, which nothing binds in the file" in out, out
    assert ("a conflict you resolved there had `y` and your resolution at m.py's hunk 2 of it (in g) has not (the "
            f"binding dropped?): correct it in {record} (the `resolution` of its place in `upstream_at`), then "
            "carrytool union compose u") in out, out
