"""A union's `drops` (supersedes[].drops: {file, in, why}): what loads, and each input error naming its key
path and line (helper-135)."""

from __future__ import annotations

from pathlib import Path

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest.load import parse_manifest
from carrytool.manifest.model import Drop
from tests.conftest import Cli

HEAD = """\
version: 1
upstream: {url: ../up}
fork: {branch: dev}
entries:
  - carry: u
    patch: unions/u.patch
    supersedes:
      - 101
      - pr: 102
"""


def _load(tmp_path: Path, item: str) -> object:
    return parse_manifest(HEAD + item, tmp_path / "manifest.yaml")


def test_drops_load_with_their_file_scope_why_and_line(tmp_path: Path) -> None:
    manifest = _load(tmp_path, '        drops:\n          - {file: agent.py, in: Agent.describe, why: "upstream  has it"}\n'
                               "          - file: docs/\n            why: docs moved\n")
    [_, sup] = manifest.entries[0].supersedes     # type: ignore[attr-defined]
    assert sup.drops == (Drop("agent.py", "upstream has it", "Agent.describe", 11), Drop("docs", "docs moved", None, 12))


def test_a_scope_covers_the_defs_and_classes_nested_under_it_and_no_others() -> None:
    drop = Drop("w/*.py", "why", "Worker")
    assert drop.covers("w/a.py", ("Worker.wake_up",)) and drop.covers("w/a.py", ("Worker",))
    assert not drop.covers("w/a.py", ("Workers.wake_up",)) and not drop.covers("w/a.py", ())
    assert not drop.covers("w/a.py", ("Worker.sleep", "other")) and not drop.covers("x/a.py", ("Worker",))
    assert Drop("w/a.py", "why").covers("w/a.py", ()) and Drop("w", "why").covers("w/a.py", ("f",))


@pytest.mark.parametrize(("item", "keypath", "line", "said"), [
    ("        drops:\n          - {file: a.py, why: x, scope: A}\n", "supersedes[1].drops[0].scope", 11,
     "unknown key 'scope'"),
    ('        drops:\n          - {file: a.py, why: ""}\n', "supersedes[1].drops[0].why", 11, "must not be empty"),
    ('        drops:\n          - {file: a.py, why: "  "}\n', "supersedes[1].drops[0].why", 11, "must not be empty"),
    ("        drops:\n          - {file: a.py}\n", "supersedes[1].drops[0].why", 11, "is required"),
    ("        drops:\n          - {in: A.b, why: x}\n", "supersedes[1].drops[0].file", 11, "is required"),
    ("        drops:\n          - {file: ../a.py, why: x}\n", "supersedes[1].drops[0].file", 11, "leaves the tree"),
    ("        drops:\n          - {file: /etc/a.py, why: x}\n", "supersedes[1].drops[0].file", 11, "absolute path"),
    ("        drops:\n          - {file: a.py, in: 'A.b()', why: x}\n", "supersedes[1].drops[0].in", 11,
     "not a dotted Python name"),
    ("        drops:\n          - a.py\n", "supersedes[1].drops[0]", 11, "must be a mapping"),
    ("        drops: a.py\n", "supersedes[1].drops", 10, "must be a list"),
    ("        drops:\n          - {file: a.py, why: x}\n          - {file: a.py, why: y}\n", "supersedes[1].drops[1]",
     12, "twice (first at line 11)"),
    ("        paths: [w/]\n        drops:\n          - {file: a.py, why: x}\n", "supersedes[1].drops[0].file", 12,
     "not among this PR's paths"),
])
def test_a_bad_drop_is_an_input_error_naming_its_key_and_line(tmp_path: Path, item: str, keypath: str, line: int,
                                                               said: str) -> None:
    with pytest.raises(ManifestError) as caught:
        _load(tmp_path, item)
    text = str(caught.value)
    assert f"entries[0].{keypath}" in text and f"manifest.yaml:{line}" in text and said in text, text


def test_check_refuses_a_drop_without_why_with_exit_2(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(HEAD + "        drops: [{file: a.py, in: A.b}]\n")
    result = cli("check", "-m", str(path))
    assert result.exit_code == 2
    assert "entries[0].supersedes[1].drops[0].why" in result.stderr and "is required" in result.stderr
