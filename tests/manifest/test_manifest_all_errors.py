"""`check` reports every error of a manifest in one run, and stays near linear on thousands of carries."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest import paths
from carrytool.manifest.load import load_manifest
from tests.conftest import Cli

HEAD = "version: 1\nupstream: {url: https://example.com/up.git}\nfork: {branch: dev}\n"

THREE_ERRORS = textwrap.dedent("""\
    version: 1
    upstream: {url: https://example.com/up.git}
    fork: {branch: dev, brnach: x}
    entries:
      - pr: 1
      - pr: abc
      - carry: u
        commit: 1234567
        owns: [pkg/a.py]
      - carry: v
        commit: 1234568
        owns: [pkg]
    asserts:
      - file: a.py
        calls: g
        min: -1
      - file: b.py
        mentions: x
        entry: pr/2
    """)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    return path


def test_every_error_is_reported_in_manifest_order(tmp_path: Path) -> None:
    path = write(tmp_path, THREE_ERRORS)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    error = info.value
    assert error.exit_code == 2
    assert [(e.where, e.message.split(":")[0]) for e in error.errors] == [
        (f"{path}:3", "fork.brnach"), (f"{path}:6", "entries[1].pr"), (f"{path}:10", "entries[3].owns"),
        (f"{path}:16", "asserts[0].min"), (f"{path}:19", "asserts[1].entry")]
    assert error.where == f"{path}:3" and "unknown key 'brnach'" in error.message  # the first one leads
    text = str(error)
    assert text.startswith("5 errors in the manifest:\n")
    assert "carry/v and carry/u both own pkg" in text and "did you mean 'branch'?" in text


def test_check_prints_every_error_once_on_stderr(cli: Cli, tmp_path: Path) -> None:
    result = cli("check", "-m", write(tmp_path, THREE_ERRORS))
    assert result.exit_code == 2 and result.stdout == ""
    for key in ("fork.brnach", "entries[1].pr", "entries[3].owns", "asserts[0].min", "asserts[1].entry"):
        assert result.stderr.count(key) == 1, key


def test_errors_past_the_cap_are_counted(tmp_path: Path) -> None:
    entries = "".join(f"  - pr: x{i}\n" for i in range(60))
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, HEAD + "entries:\n" + entries))
    assert len(info.value.errors) == 60
    lines = str(info.value).splitlines()
    assert lines[0] == "60 errors in the manifest:" and lines[-1] == "  ... and 10 more"
    assert len(lines) == 1 + 50 + 1


def test_a_single_error_reads_as_before(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(write(tmp_path, HEAD + "entries:\n  - pr: 0\n"))
    assert str(info.value) == f"{tmp_path / 'manifest.yaml'}:5: entries[0].pr: must be a PR number above 0, got 0"


@pytest.mark.parametrize("first, second, clash", [
    ("pkg/a.py", "pkg", True), ("pkg", "pkg/a.py", True), ("pkg/*.py", "pkg/a.py", True),
    ("pkg/a.py", "pkg/*.py", True), ("**/*.cu", "csrc/k.cu", True), ("csrc/k.cu", "**/*.cu", True),
    ("pkg/sub/**", "pkg/sub/x/y.py", True), ("pkg/a.py", "pkg/ab.py", False), ("pkg/*.py", "other/a.py", False),
    ("pkg", "pkgs/a.py", False), ("a/b*", "a/bc/d.py", True), ("a/b*", "ab/c.py", False),
])
def test_owned_patterns_overlap_as_before(first: str, second: str, clash: bool) -> None:
    index: paths.PatternIndex[str] = paths.PatternIndex()
    index.add("elsewhere/x.py", "e")
    index.add(first, "one")
    assert (index.first_overlap(second) is not None) is clash
    assert paths.overlaps(first, second) is clash


def carries(count: int) -> str:
    lines = [f"  - carry: c{i}\n    commit: {i:07x}a\n    owns: [pkg{i}/mod.py, 'pkg{i}/sub/**']\n" for i in range(count)]
    return HEAD + "entries:\n" + "".join(lines)


def test_owns_checking_grows_linearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    real = paths.matches

    def counting(pattern: str, path: str) -> bool:
        calls[0] += 1
        return real(pattern, path)

    monkeypatch.setattr(paths, "matches", counting)
    work = {}
    for count in (1500, 3000):
        calls[0] = 0
        assert len(load_manifest(write(tmp_path, carries(count))).entries) == count
        work[count] = calls[0]
    assert work[3000] <= 8 * 3000, work          # a few comparisons per pattern, not one per pair
    assert work[3000] <= 2.5 * work[1500], work  # linear, loosely
