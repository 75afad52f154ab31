"""Scopes come from a cache keyed by blob SHA: each distinct blob is parsed once, and once ever on disk."""

from __future__ import annotations

from pathlib import Path

from carrytool.pipeline.scopes import SpanCache, scope_at, scope_in

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

    again = SpanCache(tmp_path / "cache")                     # a later run: read from disk, never parsed
    assert again.spans("a" * 40, lambda: read("a" * 40)) == spans
    assert again.parsed == 0 and reads == ["a" * 40, "b" * 40]


def test_a_broken_or_unwritable_cache_only_costs_a_parse(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    cache = SpanCache(folder)
    spans = cache.spans("c" * 40, lambda: SOURCE)
    path = next(folder.rglob("*.json"))
    path.write_text("{not json")
    fresh = SpanCache(folder)
    assert fresh.spans("c" * 40, lambda: SOURCE) == spans and fresh.parsed == 1
    blocked = tmp_path / "file"
    blocked.write_text("x")
    assert SpanCache(blocked).spans("d" * 40, lambda: SOURCE) == spans      # cannot write: still answers
