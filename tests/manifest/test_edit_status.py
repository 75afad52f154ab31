"""The in-place edits `status --write` makes: drop entries, set titles; every other byte stays."""

from __future__ import annotations

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest.edit import remove_entries, set_title

TEXT = """\
version: 1
entries:
  # first
  - pr: 1   # keep me
    title: old one
  - {pr: 2}
  - pr: 3
    # inner
    head: abcdef1
  # trailing
asserts: []
"""


@pytest.mark.parametrize(("index", "title", "changed"), [
    (0, "new: one", ('    title: old one\n', '    title: "new: one"\n')),
    (1, "two", ("  - {pr: 2}\n", "  - {pr: 2, title: two}\n")),
    (2, "three", ("  - pr: 3\n", "  - pr: 3\n    title: three\n")),
])
def test_set_title(index: int, title: str, changed: tuple[str, str]) -> None:
    assert set_title(TEXT, index, title) == TEXT.replace(*changed)


def test_remove_entries_keeps_other_lines() -> None:
    assert remove_entries(TEXT, [0, 2]) == "version: 1\nentries:\n  # first\n  - {pr: 2}\n  # trailing\nasserts: []\n"
    assert remove_entries(TEXT, [1]) == TEXT.replace("  - {pr: 2}\n", "")


def test_remove_from_a_flow_list_is_refused() -> None:
    with pytest.raises(ManifestError):
        remove_entries("version: 1\nentries: [{pr: 1}, {pr: 2}]\n", [0])
