"""explain keeps each pair's decision on disk by what decides it (review.paircache): a second explain
of the same plan merges no pair, and reports exactly what the merges report."""

from __future__ import annotations

import json

import pytest

from carrytool.gitlayer.git import LaterMerges
from carrytool.review import paircache
from carrytool.review.overlap_pairs import PairMerger
from tests.conftest import Cli, Small
from tests.pipeline.test_structured_sync import POLICY, WITH_A, WITH_B, _two_prs
from tests.review.test_reduced_pairs import _corpus


def _pair_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of merges of each batch merge_trees_later answers (explain's pair merges: one per run)."""
    batches: list[int] = []
    real = LaterMerges.__call__

    def spy(self: LaterMerges):  # noqa: ANN202
        batches.append(len(self._pending) + sum(map(len, self._chunks)))
        return real(self)

    monkeypatch.setattr(LaterMerges, "__call__", spy)
    return batches


def _files(small: Small) -> list:
    return sorted((small.work.path / "carrytool" / "cache").glob("pairs-git*.json"))


def test_kept_decisions_give_the_report_the_merges_give(cli: Cli, small: Small,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    batches = _pair_batches(monkeypatch)
    from carrytool.review import overlap_pairs

    built: list[str] = []          # the reduced heads (and files-alone merges) the pair merges are made of
    for name in ("reduced_head", "files_alone"):
        real = getattr(overlap_pairs, name)
        monkeypatch.setattr(overlap_pairs, name,
                            lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    code, first = cli.json(*args)
    assert batches and batches[0] >= 15 and len(_files(small)) == 1 and built
    built.clear()
    kept = json.loads(_files(small)[0].read_text())["pairs"]
    assert len(kept) == batches[0]
    assert any(paths for paths, _ in kept.values())           # conflicts are kept too, not only clean pairs
    batches.clear()
    again_code, again = cli.json(*args)
    assert batches == []                                      # every pair from the file: no merge at all
    assert built == []            # nor the reduced heads those merges would take (helper-96: 1.6 s on polars)
    monkeypatch.setattr(PairMerger, "keep_decisions", False)
    merged_code, merged = cli.json(*args)
    assert batches and batches[0] >= 15
    assert (code, first) == (again_code, again) == (merged_code, merged)
    assert any(o["kind"] == "conflict" for o in again["overlaps"]) and again["plan"]["pairs_merged"] >= 15


def test_an_unreadable_file_only_costs_merges(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    code, first = cli.json(*args)
    path = _files(small)[0]
    keys = list(json.loads(path.read_text())["pairs"])
    batches = _pair_batches(monkeypatch)
    for broken in ("{not json", json.dumps({"pairs": {k: ["x", 3] for k in keys}})):
        path.write_text(broken)
        batches.clear()
        assert cli.json(*args) == (code, first)
        assert batches and batches[0] == len(keys)            # every pair merged again, and kept again
        assert len(json.loads(path.read_text())["pairs"]) == len(keys)


def test_the_structured_patterns_decide_too(cli: Cli, small: Small) -> None:
    """The same pair merge, kept without the structured policy, is not the answer once the manifest has it."""
    _two_prs(small, WITH_A, WITH_B)
    plain = small.manifest([{"pr": 1}, {"pr": 2}])
    cli.json("sync", "-m", plain, "--repo", small.work.path, "--dry-run")
    _code, before = cli.json("explain", "-m", plain, "--repo", small.work.path, "--offline")
    assert [(o["kind"], o.get("resolved")) for o in before["overlaps"]] == [("conflict", None)]
    structured = small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY)
    _code, after = cli.json("explain", "-m", structured, "--repo", small.work.path, "--offline")
    assert [(o["kind"], o.get("resolved")) for o in after["overlaps"]] == [("conflict", "structurally")]


def test_each_git_version_and_rule_keeps_its_own(tmp_path) -> None:
    old, new = paircache.PairDecisions(tmp_path, (2, 39, 5)), paircache.PairDecisions(tmp_path, (2, 47, 3))
    assert old.path != new.path
    line, alone = ("a" * 40, "b" * 40), ("c" * 40, "d" * 40)
    key = old.key(line, alone, [], (True,))
    assert key != new.key(line, alone, [], (True,))
    assert key != old.key(line, ("e" * 40, "d" * 40), [], (True,))     # the later entry's own merge decides
    assert key != old.key(line, alone, [], (False,))
    old.put(key, (["x.py"], False))
    old.save()
    assert paircache.PairDecisions(tmp_path, (2, 39, 5)).get(key) == (["x.py"], False)
    assert paircache.PairDecisions(tmp_path, (2, 47, 3)).get(key) is None
