"""Cache files nested too deep for Python's JSON reader (h219: RecursionError, exit 70 on every run until the
file was deleted) are caches like any damaged file: read as empty, a shortcut lost, never a crash."""

from __future__ import annotations

from pathlib import Path

from carrytool.review.forge import _read_cache
from carrytool.review.probe import CommandVerdict, VerdictCache

DEEP = "[" * 200_000 + "]" * 200_000


def test_a_deeply_nested_bisect_verdict_cache_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    path.write_text(DEEP)
    cache = VerdictCache(path)
    assert cache.get("t" * 40, "make test") is None
    cache.put("t" * 40, CommandVerdict("make test", 0, "ok"))       # written again, whole
    assert VerdictCache(path).get("t" * 40, "make test") == CommandVerdict("make test", 0, "ok")


def test_a_deeply_nested_forge_cache_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "forge.json"
    path.write_text(DEEP)
    assert _read_cache(path) == {}
