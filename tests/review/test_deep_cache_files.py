"""Cache files nested too deep for Python's JSON reader (h219: RecursionError, exit 70 on every run until the
file was deleted) are caches like any damaged file: read as empty, a shortcut lost, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from carrytool.review.forge import ForgeError, _json, _read_cache
from carrytool.review.probe import CommandVerdict, VerdictCache

DEEP = "[" * 200_000 + "]" * 200_000
# and the other ways a file is not JSON (h237): read as empty too
UNREADABLE = {"deep": DEEP.encode(), "not-utf8": b'{"version": "\xff"}', "truncated": b'{"version": 1, "verd'}


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


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_bisect_verdict_cache_is_empty_and_written_anew(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "verdicts.json"
    path.write_bytes(UNREADABLE[kind])
    cache = VerdictCache(path)
    assert cache.get("t" * 40, "make test") is None
    cache.put("t" * 40, CommandVerdict("make test", 0, "ok"))
    assert VerdictCache(path).get("t" * 40, "make test") == CommandVerdict("make test", 0, "ok")


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_forge_cache_is_empty(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "forge.json"
    path.write_bytes(UNREADABLE[kind])
    assert _read_cache(path) == {}


@pytest.mark.parametrize("kind", UNREADABLE)
def test_a_forge_answer_that_is_not_json_is_said(kind: str) -> None:
    with pytest.raises(ForgeError) as err:
        _json(UNREADABLE[kind], "https://api.github.com/repos/o/r/pulls/1")
    assert str(err.value) == "the forge's answer to https://api.github.com/repos/o/r/pulls/1 is not JSON"
