"""Naming a conflict reads what a merge already made says instead of merging again: the report is the one
of merging again (the shortcut turned off), the merges asked are fewer.

The result so far's conflict regions (who a conflict with upstream is with when no earlier entry meets it
alone: compose_conflicts._meeting) are read from the entry's chained merge, which merged the same three
blobs at that path, not asked again as a content merge.
"""

from __future__ import annotations

import pytest

from carrytool.gitlayer import contentmerge
from carrytool.pipeline.compose import Composer
from tests.conftest import Cli, Small
from tests.pipeline.test_fail_closed import _blame_repo, by_id, nine


def _content_merges(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The content merges asked of git (not those answered from memory), as they are asked."""
    asked: list[tuple] = []
    real = contentmerge.merge_contents_many

    def spy(git, triples, **options):  # noqa: ANN001, ANN003, ANN202 - (diff3: the structured rule's merges)
        asked.extend(triples)
        return real(git, triples, **options)

    monkeypatch.setattr(contentmerge, "merge_contents_many", spy)
    return asked


def _both_ways(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, int, int]:
    """The report with the chained merge read and without (asserted equal), and the content merges each asked."""
    asked = _content_merges(monkeypatch)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, read = cli.json(*args)
    with_reading = len(asked)
    asked.clear()
    monkeypatch.setattr(Composer, "regions_from_chain", False)
    again_code, again = cli.json(*args)
    assert (code, read) == (again_code, again), "reading the chained merge's regions changed the report"
    return read, with_reading, len(asked)


def test_the_result_so_fars_regions_are_read_from_the_chained_merge(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/3 conflicts with upstream alone in n.py; neither earlier entry meets it alone, so the result so
    far (both) is weighed: its regions come from pr/3's chained merge, the same three blobs."""
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    read, with_reading, merged_again = _both_ways(cli, small, monkeypatch)
    e = by_id(read)
    assert e["pr/3"]["conflicts"] == [{"file": "n.py", "with": [], "upstream": True}]
    assert e["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}]
    assert (with_reading, merged_again) == (4, 5)


def test_the_result_so_fars_regions_read_beside_edits_next_to_the_conflict(cli: Cli, small: Small,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1 and pr/4 edit the lines right after v1, which upstream and pr/3 both change: the result so far is
    weighed (its regions read from pr/3's chained merge); the report is the one of merging it again."""
    base = small.up.commit(nine(), "nine", parent="main", ref="refs/heads/main")
    small.up.commit(nine(v1="'upstream'"), "upstream moves v1", parent=base, ref="refs/heads/main")
    small.pr(5, nine(v6="'five'"), parent=base)
    small.pr(1, nine(v3="'one'"), parent=base)
    small.pr(4, nine(v2="'four'"), parent=base)
    small.pr(3, nine(v1="'three'"), parent=base)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 4}, {"pr": 3, "on_conflict": "skip"}])
    read, with_reading, merged_again = _both_ways(cli, small, monkeypatch)
    assert by_id(read)["pr/3"]["conflicts"] == [{"file": "n.py", "with": [], "upstream": True}]
    assert with_reading == merged_again - 1
