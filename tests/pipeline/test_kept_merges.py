"""Clean chained merges kept across runs (pipeline.keptmerges): a run that finds one merges it no more, and
gives exactly the report and the SHAs that merging it again gives. Differential: every report below is
compared with the same run whose kept merges are all ignored (KeptMerges.get answers nothing).
CI runs this file on git 2.39 and on a current git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.pipeline import kept as kept_module
from carrytool.pipeline import keptmerges
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.keptmerges import KeptMerges
from tests.conftest import Cli, Small
from tests.pipeline.test_structured_sync import POLICY, WITH_A, WITH_B, _two_prs
from tests.review.test_reduced_pairs import _corpus


def _merges(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """Entry id -> whether its chained merge (of this run, the last one made for it) was clean."""
    made: dict[str, bool] = {}
    for name in ("_merge_chained", "_merge_onto"):
        real = getattr(Composer, name)

        def spy(self, step, *args, _real=real):  # noqa: ANN001, ANN202
            result = _real(self, step, *args)
            made[step.id] = result.clean
            return result

        monkeypatch.setattr(Composer, name, spy)
    return made


def _kept_file(small: Small) -> list[Path]:
    return sorted((small.work.path / "carrytool" / "cache").glob("merges-git*.json"))


def _kept(small: Small) -> dict[str, str]:
    return json.loads(_kept_file(small)[0].read_text())["merges"]


def _fresh(cli: Cli, monkeypatch: pytest.MonkeyPatch, *args: object) -> tuple[int, dict]:
    """ARGS run with every kept merge ignored: each chained merge made again."""
    with monkeypatch.context() as m:
        m.setattr(KeptMerges, "get", lambda self, key: None)
        return cli.json(*args)


def _dry_both_ways(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch,
                   made: dict[str, bool]) -> tuple[dict[str, bool], tuple[int, dict], tuple[int, dict]]:
    """`sync --dry-run` with what is kept, then with nothing kept: (the merges the first made, its (code,
    report), the second's (code, report)); MADE then holds the second's merges."""
    dry = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    made.clear()
    with_kept = cli.json(*dry)
    merged = dict(made)
    made.clear()
    return merged, with_kept, _fresh(cli, monkeypatch, *dry)


def test_sync_keeps_its_clean_chained_merges_and_explain_merges_them_no_more(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    made = _merges(monkeypatch)
    code, synced = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and synced["result"]["sha"] == small.branch()
    clean = {entry for entry, ok in made.items() if ok}
    conflicted = {entry for entry, ok in made.items() if not ok}
    assert len(clean) >= 3 and conflicted          # the corpus has both
    assert len(_kept(small)) == len(clean)         # a conflict is never kept

    explain = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    made.clear()
    code, explained = cli.json(*explain)
    assert set(made) == conflicted                 # the clean ones came from the file
    made.clear()
    fresh_code, fresh = _fresh(cli, monkeypatch, *explain)
    assert set(made) == clean | conflicted
    assert (code, explained) == (fresh_code, fresh)
    made.clear()
    monkeypatch.setattr(Composer, "explicit_bases", False)   # another way of composing: its own keys
    assert cli.json(*explain) == (code, explained)
    assert set(made) == clean | conflicted


def test_a_second_sync_composes_the_same_commits_and_report(cli: Cli, small: Small,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    first = small.branch()
    made = _merges(monkeypatch)
    merged, (code, kept), (fresh_code, fresh) = _dry_both_ways(cli, small, monkeypatch, made)
    assert len(merged) < len(made)
    assert kept["result"]["sha"] == fresh["result"]["sha"] == first
    assert (code, kept) == (fresh_code, fresh)


def test_a_moved_pr_and_what_follows_it_are_merged_again(cli: Cli, small: Small,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A PR that moved changes its own merge's key and the result so far of every later entry: those are
    merged again, and the report is the one fresh merges give."""
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    head = small.up.rev("refs/pull/3/head")
    small.up.commit({"pkg/m3.py": "moved on\n"}, "pr 3 moves on", parent=head, ref="refs/pull/3/head")
    made = _merges(monkeypatch)
    merged_again, (code, kept), (fresh_code, fresh) = _dry_both_ways(cli, small, monkeypatch, made)
    assert (code, kept) == (fresh_code, fresh)
    order = [e["id"] for e in fresh["entries"]]
    later = {entry for entry in made if order.index(entry) > order.index("pr/3")}
    assert later and later <= set(merged_again)    # nothing after the moved PR came from the file


@pytest.mark.parametrize("broken", ["missing", "blob", "garbage", "not json"])
def test_a_kept_answer_that_is_not_a_tree_in_the_store_is_merged_again(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    path = _kept_file(small)[0]
    keys = list(_kept(small))
    blob = small.work.git("rev-parse", f"{small.branch()}:pkg/m0.py").strip()
    value = {"missing": "1" * 40, "blob": blob, "garbage": ["x"], "not json": None}[broken]
    path.write_text("{not json" if broken == "not json" else json.dumps({"merges": {k: value for k in keys}}))
    made = _merges(monkeypatch)
    merged, (code, kept), (fresh_code, fresh) = _dry_both_ways(cli, small, monkeypatch, made)
    assert sum(merged.values()) == len(keys)       # every clean one merged again
    assert (code, kept) == (fresh_code, fresh)
    assert kept["result"]["sha"] == small.branch()


def test_a_dry_run_writes_no_file_and_verify_merges_everything(cli: Cli, small: Small,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    made = _merges(monkeypatch)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert _kept_file(small) == []                 # --dry-run writes nothing
    made.clear()
    code, _report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and _kept_file(small)
    synced = dict(made)
    made.clear()
    code, report = cli.json("verify", "-m", small.manifest_path, "--repo", small.work.path, "--offline",
                            "--rebuild")
    assert code == 0, report
    assert made == synced                          # verify is a check of its own: it uses nothing kept


def test_a_structured_resolution_is_never_kept(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a merge that was clean before any resolution is kept: a resolved conflict is merged and checked
    again each run."""
    _two_prs(small, WITH_A, WITH_B)
    manifest = small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY)
    code, first = cli.json("sync", "-m", manifest, "--repo", small.work.path)
    assert code == 0 and [e["status"] for e in first["entries"]] == ["applied", "applied"]
    assert not _kept_file(small) or _kept(small) == {}
    made = _merges(monkeypatch)
    code, again = cli.json("sync", "-m", manifest, "--repo", small.work.path, "--dry-run")
    assert made == {"pr/2": False}
    assert again["result"]["sha"] == first["result"]["sha"]


def test_kept_merges_are_the_answers_of_this_code_only(cli: Cli, small: Small,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The key names the source that asks the merge (keptmerges.CODE), not only the version number, which
    stays the same from one commit to the next: other code merges again, unreadable code keeps nothing."""
    _corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    kept = len(_kept(small))
    made = _merges(monkeypatch)
    dry = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    cli.json(*dry)
    assert not any(made.values())                  # this code: every clean merge came from the file
    monkeypatch.setattr(keptmerges, "CODE", keptmerges.CODE + ("pipeline/kept.py",))
    made.clear()
    cli.json(*dry)
    assert sum(made.values()) == kept              # other code: each merged again
    monkeypatch.setattr(keptmerges, "CODE", ("pipeline/no-such-file.py",))
    assert KeptMerges(small.work.path / "carrytool" / "cache", (2, 39, 5)).path is None


def test_the_code_digest_follows_every_byte_of_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_module, "PACKAGE", tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    kept_module.code_digest.cache_clear()
    first = kept_module.code_digest("a.py", "b.py")
    (tmp_path / "b.py").write_text("y = 2\n")
    kept_module.code_digest.cache_clear()
    assert first and kept_module.code_digest("a.py", "b.py") not in (first, None)
    assert kept_module.code_digest("a.py", "missing.py") is None
    kept_module.code_digest.cache_clear()
