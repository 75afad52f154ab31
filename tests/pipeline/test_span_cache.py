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
