"""Merges reduced to the files that decide them (pipeline.reduce) decide exactly as whole merges do.

Checked on both gits in CI: explain's overlap map (pair merges reduced to the pair's shared files) and
sync's conflict culprits (merges reduced to the conflicted file), with and without the reduction.
"""

from __future__ import annotations

import pytest

from carrytool.pipeline.compose import Composer
from carrytool.review.overlap import _PairMerger
from tests.conftest import Cli, Small


def _body(name: str, edits: dict[int, str]) -> str:
    return "".join(f"{edits.get(i, f'{name} line {i}')}\n" for i in range(40))


def _corpus(small: Small) -> None:
    names = [f"pkg/m{i}.py" for i in range(4)]
    files = {n: _body(n, {}) for n in names} | {"pkg/moved.py": _body("moved", {})}
    base = small.up.commit(files, "files", parent="main", ref="refs/heads/main")
    upstream = {n: _body(n, {0: f"{n} upstream"}) for n in names} | {"pkg/moved.py": None,
                                                                     "pkg/renamed.py": _body("moved", {})}
    small.up.commit(upstream, "upstream edits every file and renames one", parent=base, ref="refs/heads/main")
    plan = {1: {"pkg/m0.py": 10, "pkg/m1.py": 10},
            2: {"pkg/m0.py": 10, "pkg/m2.py": 1},        # conflicts with pr/1 in m0 and with upstream in m2
            3: {"pkg/m1.py": 20, "pkg/m2.py": 5, "pkg/m3.py": 10},
            4: {"pkg/m2.py": 1, "pkg/m3.py": 10},        # upstream's conflict in m2, pr/3's in m3
            5: {"pkg/moved.py": 12, "pkg/m1.py": 30},    # upstream moved one of its files
            6: {"pkg/new.py": None, "pkg/m0.py": 30, "pkg/m3.py": 30},
            7: {"pkg/m1.py": 20, "pkg/m3.py": 36}}       # pr/3's line in m1, which pr/1 and pr/5 touch too
    for number, edits in plan.items():
        change = {n: (f"new in pr {number}\n" if line is None else
                      _body("moved" if n == "pkg/moved.py" else n, {line: f"pr {number} was here"}))
                  for n, line in edits.items()}
        small.up.commit(change, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in plan], policy={"on_conflict": "skip"})


def test_reduced_pair_merges_give_the_same_overlap_map(cli: Cli, small: Small,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    code, reduced = cli.json(*args)
    monkeypatch.setattr(_PairMerger, "shared_files_only", False)
    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    whole_code, whole = cli.json(*args)
    assert code == whole_code
    assert reduced["overlaps"] == whole["overlaps"] and reduced["entries"] == whole["entries"]
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in reduced["overlaps"] if o["kind"] == "conflict"}
    assert conflicts[("pr/1", "pr/2")] == ["pkg/m0.py"] and conflicts[("pr/3", "pr/4")] == ["pkg/m3.py"]
    statuses = {e["id"]: e["status"] for e in reduced["entries"]}
    assert statuses["pr/2"] == statuses["pr/4"] == "conflict" and statuses["pr/5"] == "applied"


def test_reduced_merges_name_the_same_culprits(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, reduced = cli.json(*args)
    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    whole_code, whole = cli.json(*args)
    assert code == whole_code and reduced == whole
    by_id = {e["id"]: e for e in reduced["entries"]}
    assert by_id["pr/4"]["conflicts"] and by_id["pr/2"]["conflicts"]
    assert by_id["pr/7"]["conflicts"] == [{"file": "pkg/m1.py", "with": ["pr/3"]}]
