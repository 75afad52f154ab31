"""explain's pair merges run in a merge-tree process of their own while sync's plan is composed: the
report is the one the merges give when they run after composing, in the run's own merge-tree."""

from __future__ import annotations

import pytest

from carrytool.gitlayer.git import Git
from carrytool.gitlayer.mergepipe import MergePipe
from carrytool.review.overlap import _PairMerger
from tests.conftest import Cli, Small
from tests.review.test_reduced_pairs import _corpus


def test_pair_merges_beside_composing_give_the_same_report(cli: Cli, small: Small,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    started: list[int] = []
    real = Git.merge_trees_later

    def spy(self: Git, pairs):  # noqa: ANN001, ANN202
        started.append(len(pairs))
        assert self._merge_pipe is not None and not started[1:]   # composing has its own; one batch
        return real(self, pairs)

    events: list[str] = []
    real_patches = Git.diff_patches

    def patches(self: Git, pairs):  # noqa: ANN001, ANN202
        events.append(f"patches {len(pairs)}")
        return real_patches(self, pairs)

    def spy_later(self: Git, pairs):  # noqa: ANN001, ANN202
        events.append("pairs")
        return spy(self, pairs)

    monkeypatch.setattr(Git, "merge_trees_later", spy_later)
    monkeypatch.setattr(Git, "diff_patches", patches)
    code, beside = cli.json(*args)
    assert started and started[0] >= 15              # every decidable pair of the corpus, in one batch
    assert events[:2] == ["pairs", "patches 9"]      # the pairs first, then every entry's hunks, then landing's
    monkeypatch.setattr(_PairMerger, "concurrently", False)
    started.clear()
    after_code, after = cli.json(*args)
    assert not started
    assert (code, beside) == (after_code, after)
    assert any(o["kind"] == "conflict" for o in beside["overlaps"]) and beside["plan"]["pairs_merged"] >= 15


def test_blame_reads_regions_from_the_merges_made_and_decides_the_same(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the later entry of a pair conflicts with upstream alone, explain weighs the earlier one by
    blame's rule from the conflict regions of the two merges it already made, not from two more merges."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    merged: list[tuple] = []
    real = Git.merge_contents

    def spy(self: Git, *blobs):  # noqa: ANN001, ANN202
        merged.append(blobs)
        return real(self, *blobs)

    monkeypatch.setattr(Git, "merge_contents", spy)
    monkeypatch.setattr("carrytool.pipeline.compose.meets_conflict", lambda *a, **k: False)  # sync's own asks
    monkeypatch.setattr("carrytool.pipeline.compose.regions_differ", lambda *a, **k: False)
    code, read = cli.json(*args)
    assert merged == []
    monkeypatch.setattr(_PairMerger, "regions_from_merges", False)
    again_code, again = cli.json(*args)
    assert len(merged) >= 2                     # the pairs in question: pr/2 and pr/4, pr/9 beside others
    assert (code, read["overlaps"]) == (again_code, again["overlaps"])


def test_prs_merged_alone_as_composing_merges_them_give_the_same_report(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """explain merges each PR alone onto upstream in the form composing uses (a stand-in with upstream's
    tree whose only parent is the PR's sole merge base): composing then finds those answers kept and
    sends git none of them again; the report is the one of merging onto upstream itself."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    sent: list[int] = []
    real = MergePipe.send_many

    def spy(self: MergePipe, lines):  # noqa: ANN001, ANN202
        sent.append(len(lines))
        return real(self, lines)

    monkeypatch.setattr(MergePipe, "send_many", spy)
    monkeypatch.setattr("carrytool.gitlayer.git._cores", lambda: 1)    # one process per batch: countable
    code, shared = cli.json(*args)
    shared_sent = list(sent)
    monkeypatch.setattr(_PairMerger, "share_with_compose", False)
    sent.clear()
    own_code, own = cli.json(*args)
    # explain's nine and the pairs', then composing asks again those of the nine it cannot write directly
    # into upstream's tree (see Composer._onto_upstream_directly) ... which it no longer sends when shared
    assert sent[0] == 9 and shared_sent[:2] == sent[:2] and 0 < sent[2] <= 9
    assert shared_sent[2:] == sent[3:]
    assert (code, shared) == (own_code, own)
