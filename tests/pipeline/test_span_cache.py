"""Scopes come from a cache keyed by blob SHA: each distinct blob is parsed once, and once ever on disk."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from carrytool.pipeline import scopes, spancache
from carrytool.pipeline.scopes import scope_at, scope_in
from carrytool.pipeline.spancache import SpanCache

SOURCE = b"class A:\n    def f(self):\n        return 1\n\n\n@dec\ndef g():\n    pass\n"


def test_each_blob_parsed_once_and_answers_like_scope_at(tmp_path: Path) -> None:
    cache = SpanCache(tmp_path / "cache")
    reads: list[str] = []

    def read(oid: str):  # noqa: ANN202
        reads.append(oid)
        return SOURCE if oid == "a" * 40 else None

    for _ in range(3):
        spans = cache.spans("a" * 40, lambda: read("a" * 40))
        assert [scope_in(spans, n) for n in range(1, 9)] == [scope_at(SOURCE, n) for n in range(1, 9)]
        assert cache.spans("b" * 40, lambda: read("b" * 40)) == ()
    assert reads == ["a" * 40, "b" * 40] and cache.parsed == 1
    assert scope_in(spans, 3) == "A.f" and scope_in(spans, 6) == "g" and scope_in(spans, 4) is None
    cache.save()

    again = SpanCache(tmp_path / "cache")                     # a later run: read from disk, never parsed
    assert again.spans("a" * 40, lambda: read("a" * 40)) == spans
    assert again.parsed == 0 and reads == ["a" * 40, "b" * 40]


def test_a_broken_or_unwritable_cache_only_costs_a_parse(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    cache = SpanCache(folder)
    spans = cache.spans("c" * 40, lambda: SOURCE)
    cache.save()
    path = next(folder.rglob("*.json"))
    for broken in ("{not json", '{"spans": ' + "[" * 200_000 + "]" * 200_000 + "}"):   # h219: RecursionError
        path.write_text(broken)
        fresh = SpanCache(folder)
        assert fresh.spans("c" * 40, lambda: SOURCE) == spans and fresh.parsed == 1
    blocked = tmp_path / "file"
    blocked.write_text("x")
    unwritable = SpanCache(blocked)
    assert unwritable.spans("d" * 40, lambda: SOURCE) == spans      # cannot write: still answers
    unwritable.save()


def test_scope_in_answers_like_scope_at_on_every_line() -> None:
    source = b"".join([
        b"import x\n\n\n@deco(\n    1)\nclass A:\n    x = 1\n\n    def f(self):\n        def inner():\n",
        b"            return 2\n        return inner\n\n    if x:\n        def g(self):\n            pass\n",
        b"    else:\n        class B:\n            def h(self):\n                pass\n\n",
        b"    try:\n        pass\n    except E:\n        def k(self):\n            pass\n    y = 2\n\n\n",
        b"async def top():\n    pass\n# end\n"])
    from carrytool.pipeline.scopes import _spans
    spans = _spans(source)
    lines = source.count(b"\n") + 2
    assert [scope_in(spans, n) for n in range(0, lines)] == [scope_at(source, n) for n in range(0, lines)]
    assert {scope_in(spans, n) for n in range(lines)} >= {"A", "A.f", "A.f.inner", "A.g", "A.B.h", "A.k", "top"}


def _pack_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("pack-*.json"))


def test_a_run_writes_one_pack_of_every_blob_it_parsed(tmp_path: Path) -> None:
    cache = SpanCache(tmp_path)
    oids = [f"{n:040x}" for n in range(5)]
    for oid in oids:
        cache.spans(oid, lambda: SOURCE)
    cache.save()
    cache.save()                                   # nothing new: no second pack
    packs = _pack_files(tmp_path)
    tag = f"scopes-{spancache.SCOPES_RULE}-py{sys.version_info[0]}.{sys.version_info[1]}"
    assert len(packs) == 1 and packs[0].parent == tmp_path / tag
    data = json.loads(packs[0].read_bytes())
    assert sorted(data["spans"]) == oids
    assert data["spans"][oids[0]] == [list(s) for s in cache.spans(oids[0], lambda: None)]
    assert not list(tmp_path.rglob("*.tmp"))
    warm = SpanCache(tmp_path)
    assert all(warm.spans(oid, lambda: None) == cache.spans(oid, lambda: None) for oid in oids)
    warm.save()
    assert warm.parsed == 0 and _pack_files(tmp_path) == packs      # read it, parsed nothing, wrote nothing


def test_a_bad_entry_in_a_pack_is_parsed_again_and_a_failed_write_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = SpanCache(tmp_path)
    spans = cache.spans("a" * 40, lambda: SOURCE)
    cache.spans("b" * 40, lambda: SOURCE)
    cache.save()
    pack = _pack_files(tmp_path)[0]
    data = json.loads(pack.read_bytes())
    data["spans"]["a" * 40] = [["x", 1]]
    pack.write_text(json.dumps(data))
    again = SpanCache(tmp_path)
    assert again.spans("a" * 40, lambda: SOURCE) == spans and again.parsed == 1
    assert again.spans("b" * 40, lambda: None) == spans and again.parsed == 1

    def refuse(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    fresh = SpanCache(tmp_path / "other")
    fresh.spans("c" * 40, lambda: SOURCE)
    fresh.save()                                   # whole or not at all: no pack, no temporary file
    assert not list((tmp_path / "other").rglob("*.json")) and not list((tmp_path / "other").rglob("*.tmp"))


def test_concurrent_runs_keep_each_others_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs that read the same packs and both save (both merging them) lose nothing of either."""
    monkeypatch.setattr(spancache, "PACKS_MAX", 3)
    for n in range(2):                             # two earlier runs: two packs
        earlier = SpanCache(tmp_path)
        earlier.spans(f"{n:040x}", lambda: SOURCE)
        earlier.save()
    first, second = SpanCache(tmp_path), SpanCache(tmp_path)
    for run, oid in ((first, "e" * 40), (second, "f" * 40)):
        assert run.spans(f"{0:040x}", lambda: None) != ()      # both read the two packs
        run.spans(oid, lambda: SOURCE)
    first.save()                                   # a third pack would make PACKS_MAX: merged into one
    assert len(_pack_files(tmp_path)) == 1
    second.save()                                  # its packs are gone already: it writes its merge
    later = SpanCache(tmp_path)
    for oid in (f"{0:040x}", f"{1:040x}", "e" * 40, "f" * 40):
        assert later.spans(oid, lambda: None) != (), oid
    assert later.parsed == 0


def test_a_merged_pack_keeps_this_runs_blobs_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spancache, "PACKS_MAX", 2)
    monkeypatch.setattr(spancache, "PACK_SPANS_MAX", 2 * len(scopes._spans(SOURCE)))     # two blobs' worth
    old = SpanCache(tmp_path)
    for n in range(3):
        old.spans(f"{n:040x}", lambda: SOURCE)
    old.save()
    run = SpanCache(tmp_path)
    run.spans(f"{2:040x}", lambda: None)           # used from disk
    run.spans("e" * 40, lambda: SOURCE)            # new
    run.save()
    packs = _pack_files(tmp_path)
    assert len(packs) == 1
    assert sorted(json.loads(packs[0].read_bytes())["spans"]) == [f"{2:040x}", "e" * 40]


def test_lines_answered_from_pieces_are_kept_and_never_parsed_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`scope` answers a line from the pieces around it; the answers are kept in the run's pack
    (`lines`), so a later run answers them without reading the blob; a blob whose whole spans are known
    answers from those; an odd entry is asked again; a merged pack keeps the lines."""
    reads: list[str] = []

    def read(oid: str):  # noqa: ANN202
        return lambda: reads.append(oid) or SOURCE

    cache = SpanCache(tmp_path)
    a, b = "a" * 40, "b" * 40
    assert [cache.scope(a, n, read(a)) for n in (3, 4, 7)] == ["A.f", None, "g"]
    assert reads == [a] and cache.parsed == 1                  # the blob read once for its three lines
    cache.spans(b, read(b))
    assert cache.scope(b, 3, read(b)) == "A.f" and reads == [a, b]   # whole spans known: no piece parsed
    cache.save()
    data = json.loads(_pack_files(tmp_path)[0].read_bytes())
    assert data["lines"] == {a: [[3, "A.f"], [4, None], [7, "g"]]} and list(data["spans"]) == [b]
    warm = SpanCache(tmp_path)
    assert [warm.scope(a, n, read(a)) for n in (3, 4, 7)] == ["A.f", None, "g"]
    assert warm.parsed == 0 and reads == [a, b]
    assert warm.scope(a, 2, read(a)) == "A.f" and reads == [a, b, a]     # a line not asked before
    pack = _pack_files(tmp_path)[0]
    data["lines"][a] = [[3, 5], "x"]
    pack.write_text(json.dumps(data))
    odd = SpanCache(tmp_path)
    assert odd.scope(a, 3, read(a)) == "A.f" and odd.parsed == 1
    monkeypatch.setattr(spancache, "PACKS_MAX", 2)
    odd.save()                                                # two packs: merged into one, lines kept
    packs = _pack_files(tmp_path)
    assert len(packs) == 1 and json.loads(packs[0].read_bytes())["lines"] == {a: [[3, "A.f"]]}
