"""Pair decisions on the line shapes a shortcut would have to get right, the way explain makes them (pair
merges of the shared files alone, reduced heads, kept decisions) and the way they are made whole (every
shortcut off, every pair merged whole): the same overlap map, to the byte.

Issue 17 measured a cold explain's pair merges (h233: on 60 xarray PRs, 199 merges, 169 of them of one
488 KB changelog, 1.3-1.7 s of git's CPU) and weighed deciding pairs whose hunks lie far apart with no
merge; these are the shapes such a shortcut meets: hunks one unchanged line apart and touching, the same
line, the same edit on both sides, edits at the first and last line, a last line without its newline,
CRLF files, a deleted file, a renamed one, a mode change, a pure insertion beside an edit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.review.overlap_pairs import PairMerger
from tests.conftest import Cli, Small

LINES = 30


def _body(name: str, edits: dict[int, str] | None = None, *, eol: str = "\n", last_eol: bool = True,
          inserted: dict[int, list[str]] | None = None) -> str:
    out = []
    for i in range(LINES):
        out.extend(f"{line}{eol}" for line in (inserted or {}).get(i, []))
        out.append(f"{(edits or {}).get(i, f'{name} line {i}')}{eol}")
    text = "".join(out)
    return text if last_eol else text[:-len(eol)]


# path -> its text at the base; each PR below edits the base version of some of them
FILES = {"gap.py": _body("gap"), "same.py": _body("same"), "ends.py": _body("ends"),
         "noeol.py": _body("noeol", last_eol=False), "crlf.py": _body("crlf", eol="\r\n"),
         "gone.py": _body("gone"), "moved.py": _body("moved"), "mode.sh": _body("mode"), "ins.py": _body("ins")}

# pr -> (path -> new text, or None to delete); pairs of them meet in one shape each
PRS: dict[int, dict[str, str | None]] = {
    1: {"gap.py": _body("gap", {10: "pr 1"})},
    2: {"gap.py": _body("gap", {12: "pr 2"})},                    # one unchanged line between: clean
    3: {"gap.py": _body("gap", {11: "pr 3"})},                    # touches both: conflicts
    4: {"same.py": _body("same", {5: "pr 4"})},
    5: {"same.py": _body("same", {5: "pr 5"})},                   # the same line, other text: conflicts
    6: {"same.py": _body("same", {5: "pr 4"})},                   # the same edit as pr/4: clean
    7: {"ends.py": _body("ends", {0: "pr 7"})},
    8: {"ends.py": _body("ends", {LINES - 1: "pr 8"})},           # first and last line: clean
    9: {"noeol.py": _body("noeol", {LINES - 1: "pr 9"}, last_eol=False)},
    10: {"noeol.py": _body("noeol", last_eol=True)},              # adds the last newline: conflicts
    11: {"noeol.py": _body("noeol", {3: "pr 11"}, last_eol=False)},   # far from pr/9's last line: clean
    12: {"crlf.py": _body("crlf", {8: "pr 12"}, eol="\r\n")},
    13: {"crlf.py": _body("crlf", {20: "pr 13"}, eol="\r\n")},    # far apart: clean
    14: {"crlf.py": _body("crlf", {9: "pr 14"}, eol="\r\n")},     # touches pr/12's: conflicts
    15: {"crlf.py": _body("crlf", eol="\n")},                     # every line end: conflicts with all
    16: {"gone.py": _body("gone", {7: "pr 16"}), "ins.py": _body("ins", {4: "pr 16"})},    # line 4
    17: {"gone.py": None, "ins.py": _body("ins", inserted={20: ["pr 17 adds"]})},   # deletes: conflicts
    18: {"moved.py": _body("moved", {3: "pr 18"}), "ins.py": _body("ins", inserted={5: ["pr 18 adds"]})},
    19: {"moved.py": None, "elsewhere.py": _body("moved", {25: "pr 19"})},   # renames and edits far away
    20: {"moved.py": _body("moved", {3: "pr 20"}), "mode.sh": _body("mode", {1: "pr 20"})},
    21: {"mode.sh": _body("mode", {20: "pr 21"}), "ins.py": _body("ins", inserted={4: ["pr 21 adds"]})},
}
MODES = {21: {"mode.sh": "100755"}}


def _corpus(small: Small) -> None:
    base = small.up.commit(FILES, "the shapes' files", parent="main", ref="refs/heads/main")
    for number, files in PRS.items():
        small.up.commit(files, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head", modes=MODES.get(number))
    small.manifest([{"pr": n} for n in PRS], policy={"on_conflict": "skip"})


def _explain(cli: Cli, small: Small) -> tuple[int, dict]:
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache", ignore_errors=True)    # every pair merged
    return cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")


def test_pairs_of_every_line_shape_decide_as_their_whole_merges(cli: Cli, small: Small,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    merged: list[int] = []
    real = Git.merge_trees_later

    def counted(self, pairs=()):  # noqa: ANN001, ANN202
        later = real(self, pairs)
        add = later.add
        later.add = lambda more: (merged.append(len(more)), add(more))[1]   # type: ignore[method-assign]
        return later

    monkeypatch.setattr(Git, "merge_trees_later", counted)
    code, fast = _explain(cli, small)
    assert sum(merged) >= 15                       # the pairs were merged, not known from before
    warm_code, warm = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert (warm_code, warm) == (code, fast)
    for switch in ("shared_files_only", "shared_files_alone", "alike_once", "settle_unchanged", "alone_directly",
                   "regions_from_merges", "share_with_compose", "concurrently", "files_from_upstream"):
        monkeypatch.setattr(PairMerger, switch, False)
    whole_code, whole = _explain(cli, small)
    assert (code, fast["overlaps"], fast["plan"]) == (whole_code, whole["overlaps"], whole["plan"])
    conflicts = {tuple(o["entries"]): o.get("conflict_files", []) for o in fast["overlaps"]}
    # what each shape decides (git's merge says so; pinned so that a shape that stopped reaching its merge shows)
    assert conflicts[("pr/1", "pr/2")] == [] and conflicts[("pr/1", "pr/3")] == ["gap.py"]
    assert conflicts[("pr/2", "pr/3")] == ["gap.py"]
    assert conflicts[("pr/4", "pr/5")] == ["same.py"] and conflicts[("pr/4", "pr/6")] == []
    assert conflicts[("pr/7", "pr/8")] == []
    assert conflicts[("pr/9", "pr/10")] == ["noeol.py"] and conflicts[("pr/9", "pr/11")] == []
    assert conflicts[("pr/12", "pr/13")] == [] and conflicts[("pr/12", "pr/14")] == ["crlf.py"]
    assert conflicts[("pr/12", "pr/15")] == conflicts[("pr/13", "pr/15")] == ["crlf.py"]
    assert conflicts[("pr/16", "pr/17")] == ["gone.py"] and conflicts[("pr/17", "pr/18")] == []
    # a line inserted right below (pr/18) or above (pr/21) an edited line touches it: git conflicts
    assert conflicts[("pr/16", "pr/18")] == conflicts[("pr/16", "pr/21")] == ["ins.py"]
    assert conflicts[("pr/18", "pr/21")] == []               # two insertions one unchanged line apart
    assert conflicts[("pr/18", "pr/19")] == conflicts[("pr/19", "pr/20")] == []    # renamed, edited far away
    assert conflicts[("pr/18", "pr/20")] == ["moved.py"] and conflicts[("pr/20", "pr/21")] == []
