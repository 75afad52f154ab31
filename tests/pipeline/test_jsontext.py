"""pipeline.jsontext.indented writes exactly what `json.dumps(obj, indent=2)` writes (the report, the lock and
explain's JSON are users' files: CI diffs them, people read them), whatever the values."""

from __future__ import annotations

import enum
import json
import random

import pytest

from carrytool.pipeline.jsontext import indented


class _Text(str):
    pass


class _Level(enum.IntEnum):
    HIGH = 3


def _value(rng: random.Random, depth: int) -> object:
    kinds = ["str", "int", "bool", "none", "unicode"] + (["dict", "list", "tuple", "empty"] if depth < 5 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        return rng.choice(["", "a", "pr/1", 'quote " and \\ back', "tab\tnew\nline", "\x00\x1f ctl", "a" * 50])
    if kind == "unicode":
        return rng.choice(["café", "日本", "emoji 🙂", "\u2028 separator", "\ud800 lone surrogate"])
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70, -(2**63)])
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "none":
        return None
    if kind == "empty":
        return rng.choice([{}, [], ()])
    if kind == "dict":
        return {rng.choice(["k", "file", "with", "é", f"key{n}", ""]) + str(n): _value(rng, depth + 1)
                for n in range(rng.randrange(5))}
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return items if kind == "list" else tuple(items)


@pytest.mark.parametrize("seed", range(300))
def test_random_documents_read_as_json_writes_them(seed: int) -> None:
    doc = _value(random.Random(seed), 0)
    assert indented(doc) == json.dumps(doc, indent=2, ensure_ascii=True)
    assert indented(doc, ensure_ascii=False) == json.dumps(doc, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("seed", range(40))
def test_joined_in_chunks_it_writes_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pieces are joined every CHUNK of them (helper-96: 120 MB of pieces for a 19 MB explain): with a
    chunk of a few pieces, every document still reads as json writes it."""
    from carrytool.pipeline import jsontext

    monkeypatch.setattr(jsontext, "CHUNK", seed % 4)
    doc = [_value(random.Random(seed), 1) for _ in range(8)]
    assert indented(doc) == json.dumps(doc, indent=2, ensure_ascii=True)


@pytest.mark.parametrize("doc", [
    {"ratio": 1.5, "nan": float("nan")},                  # floats: json's own repr
    {1: "int key", None: "none key", False: "bool key"},  # keys json turns into strings
    {"text": _Text("a str subclass")},
    {"level": _Level.HIGH},
    [{"a": [1, 2.0]}],
    {"nested": {"deep": [[[[]]]], "empty": {}}},
    [], {}, "", 0, None, True,
])
def test_values_the_fast_path_hands_to_json_read_the_same(doc: object) -> None:
    assert indented(doc) == json.dumps(doc, indent=2, ensure_ascii=True)


def test_what_json_refuses_it_refuses_the_same_way() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        indented(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented({"set": {1, 2}})


def test_a_real_sync_report_and_lock_read_the_same(cli, small) -> None:  # noqa: ANN001
    """The documents this exists for, from a real sync with a conflict: report (stdout) and lock."""
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert result.stdout == json.dumps(report, indent=2, ensure_ascii=True) + "\n"
    assert any(e.get("conflicts") for e in report["entries"])
    lock_text = (small.manifest_path.parent / (small.manifest_path.name + ".lock")).read_text()
    assert lock_text == json.dumps(json.loads(lock_text), indent=2) + "\n"
