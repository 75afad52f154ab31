"""explain parses only the Python blobs an overlap or an assert needs (SpanCache.parsed counts them)."""

from __future__ import annotations

from carrytool.gitlayer.git import Git
from carrytool.manifest.load import load_manifest
from carrytool.review.explain import explain
from tests.conftest import Small

A = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def _parsed(small: Small, entries: list[str] = ()) -> tuple[int, list]:  # type: ignore[assignment]
    manifest = load_manifest(small.manifest_path)
    with Git(small.work.path) as git:
        ex = explain(manifest, git, entries=[manifest.find_entry(e) for e in entries])
        return ex.sources.spans.parsed, ex.overlap_map.overlaps


def test_a_pair_whose_first_change_is_at_module_level_parses_only_that_change(small: Small) -> None:
    small.pr(1, {"a.py": "import os\n" + A})                       # module level: no scope
    small.pr(2, {"a.py": A.replace("return 2", "return 20")})      # in g
    small.manifest([{"pr": 1}, {"pr": 2}])
    parsed, [overlap] = _parsed(small)
    assert overlap.scopes == [] and overlap.kinds == ["same-file"]
    assert parsed == 1                  # #1's head; not #2's base and head: nothing of #1 is in a scope


def test_a_pair_in_one_function_parses_each_version_once(small: Small) -> None:
    small.pr(1, {"a.py": A.replace("return 1", "return 10")})
    small.pr(2, {"a.py": A.replace("return 1", "return 1 + 0")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    parsed, [overlap] = _parsed(small)
    assert overlap.scopes == ["f"]
    assert parsed == 3                  # the base (shared) and both heads


def test_a_story_parses_for_asserts_only_the_files_they_read(small: Small) -> None:
    small.pr(1, {"a.py": A.replace("return 1", "return 10"), "b.py": "x = 1\ny = 20\nz = 3\n"})
    small.manifest([{"pr": 1}])
    parsed, _ = _parsed(small, ["pr/1"])
    assert parsed == 0                  # no overlap, no assert: nothing to parse
    small.manifest([{"pr": 1}], asserts=[{"name": "f-returns", "file": "a.py", "in": "f",
                                          "contains": "return"}])
    parsed, _ = _parsed(small, ["pr/1"])
    assert parsed == 2                  # a.py's base and head: the assert reads a.py


def test_a_second_explain_parses_nothing_and_the_first_wrote_one_pack(small: Small) -> None:
    small.pr(1, {"a.py": A.replace("return 1", "return 10")})
    small.pr(2, {"a.py": A.replace("return 1", "return 1 + 0")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    parsed, [overlap] = _parsed(small)
    assert parsed == 3
    folder = small.work.path / "carrytool" / "cache"        # a bare repository: its git dir
    assert len(list(folder.rglob("pack-*.json"))) == 1 and not list(folder.rglob("*.tmp"))
    again, [same] = _parsed(small)
    assert again == 0 and same.scopes == overlap.scopes == ["f"]
    assert len(list(folder.rglob("pack-*.json"))) == 1       # nothing new: no second pack
