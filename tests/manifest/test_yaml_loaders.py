"""libyaml's loader (when PyYAML has it) reads a manifest exactly as the pure-Python one: same values,
same lines; a document it refuses gives the pure loader's error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from carrytool.errors import ManifestError
from carrytool.manifest import yamlload, yamlparse

ROOT = Path(__file__).resolve().parents[2]
TRICKY = """\
version: 1
upstream: {url: "https://x/y.git", branch: main}   # flow mapping
fork:
  branch: dev
entries:
  - pr: 0x1F
  - pr: 12
    title: 'quoted: "both"'
    head: 0123456789abcdef
  - carry: union
    patch: "unions/u.patch"
    supersedes: [1, {pr: 2, head: f24612b}]
    why: |
      a literal
        block
    note: >-
      folded
      text
anchor: &a {x: 1}
alias: *a
sha: 0123456789012345678901234567890123456789
"""


def _shape(value: object) -> object:
    """VALUE with the lines and raw texts the loader records, for comparison."""
    if isinstance(value, yamlload.YMap):
        return ("map", value.line, value.key_lines, value.raw, {k: _shape(v) for k, v in value.items()})
    if isinstance(value, yamlload.YList):
        return ("list", value.line, value.item_lines, value.raw, [_shape(v) for v in value])
    return value


def _both(text: str) -> tuple[object, object]:
    fast = _shape(yamlparse._load_with(yamlparse._FAST_LOADER, text, "m.yaml"))
    pure = _shape(yamlparse._load_with(yaml.SafeLoader, text, "m.yaml"))
    return fast, pure


@pytest.mark.skipif(yamlparse._FAST_LOADER is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("source", ["tricky", "carries/vllm-intarweb.yaml", "demo"])
def test_the_fast_loader_reads_what_the_pure_one_reads(source: str, tmp_path: Path) -> None:
    if source == "tricky":
        text = TRICKY
    elif source == "demo":
        from carrytool.demo.scenario import build

        text = build(tmp_path / "demo").manifest.read_text()
    else:
        text = (ROOT / source).read_text()
    fast, pure = _both(text)
    assert fast == pure and pure


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b\n c: d\n", "a: 'x\n", "- [" * 2000 + "\n", "a: \x07\n"])
def test_a_refused_document_gives_the_pure_loaders_error(text: str) -> None:
    with pytest.raises(ManifestError) as got:
        yamlload.load_yaml(text, "m.yaml")
    with pytest.raises(ManifestError) as pure:
        yamlparse._load_with(yaml.SafeLoader, text, "m.yaml")
    assert str(got.value) == str(pure.value)


@pytest.mark.parametrize("text", ["a:\t1\n",                  # a tab after the colon
                                  "entries:\n  - pr: 1\t\n",  # a trailing tab
                                  "a: [b ? c]\n",             # '?' in a flow plain scalar
                                  "a: [x ? y : z]\n"])        # read as [{'x ? y': 'z'}] by libyaml
def test_what_the_pure_loader_refuses_is_refused_with_libyaml_too(text: str) -> None:
    with pytest.raises(ManifestError):
        yamlparse._load_with(yaml.SafeLoader, text, "m.yaml")
    with pytest.raises(ManifestError):
        yamlload.load_yaml(text, "m.yaml")
