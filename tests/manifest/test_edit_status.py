"""The in-place edits `status --write` makes: drop entries, set titles; every other byte stays."""

from __future__ import annotations

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest.edit import in_its_line_ends, remove_entries, set_title

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


BLOCK = """\
version: 1
entries:
  - pr: 1
    title: >
      a long title
      folded
  - pr: 2   # IMPORTANT: still needed
  - pr: 3
    title: |
      kept

  # about pr 4
  - pr: 4
asserts: []
"""


def test_an_entry_ending_in_a_block_scalar_goes_alone() -> None:
    """The parser ends a block scalar where the next line begins (past blank lines): removing pr/1 removed
    pr/2's line too, and removing pr/3 the comment above pr/4 (helper-85)."""
    assert remove_entries(BLOCK, [0]) == BLOCK.replace("  - pr: 1\n    title: >\n      a long title\n      folded\n", "")
    assert remove_entries(BLOCK, [2]) == BLOCK.replace("  - pr: 3\n    title: |\n      kept\n", "")


def test_a_block_scalar_title_set_keeps_its_line_end() -> None:
    """The next line was joined to a retitled block-scalar title (helper-85: not YAML, or a traceback)."""
    changed = set_title(set_title(BLOCK, 0, "New 1"), 2, "New 3")
    assert changed == BLOCK.replace(">\n      a long title\n      folded\n", '"New 1"\n').replace(
        "|\n      kept\n", '"New 3"\n')


@pytest.mark.parametrize("title", ["Fix 😀 crash", "1234", "true", "null", "2026-08-20", "~", 'say "hi" \\ now',
                                   "tab\there", "line\u2028break"])
def test_a_title_reads_back_as_the_same_string(title: str) -> None:
    """An emoji was written as JSON's surrogate-pair escapes (read back as two lone surrogates: sync crashed),
    and `1234`, `true`, `null`, a date unquoted, read back as another type (helper-85)."""
    import yaml

    assert yaml.safe_load(set_title(TEXT, 0, title))["entries"][0]["title"] == title


def test_every_character_at_the_edges_of_the_printable_ranges_reads_back() -> None:
    """The printable class is compared by code point (a regular expression of it took 7 ms to compile in every
    sync): each character just inside and just outside each range, and a line break PyYAML reads as its own,
    reads back through a double-quoted title as itself."""
    import yaml

    from carrytool.manifest.edit import _PRINTABLE, flow_scalar

    edges = {c + d for low, high in _PRINTABLE for c in (low, high) for d in (-1, 0, 1)} | {0x85, 0x2028, 0x2029}
    chars = [chr(c) for c in sorted(edges) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF]
    for ch in chars:
        value = f"a{ch}b"
        assert yaml.safe_load(f"t: {flow_scalar(value)}\n")["t"] == value, (hex(ord(ch)), flow_scalar(value))
    assert flow_scalar("a\x85b") == '"a\\x85b"' and flow_scalar("a\u2028b") == '"a\\u2028b"'
    assert flow_scalar("a\u00a0b") == '"a\u00a0b"'


def test_removing_every_entry_leaves_an_empty_list() -> None:
    """`entries:` with nothing is null, which the manifest refuses (helper-85); an empty list is valid."""
    assert remove_entries(TEXT, [0, 1, 2]) == "version: 1\nentries: []\n  # first\n  # trailing\nasserts: []\n"


def test_a_keep_chomped_block_scalar_keeps_its_blank_lines() -> None:
    """`|+` keeps its trailing blank lines: they are its value. Trimmed as a clipped one is, `union new`
    appended before them and the title lost them (helper-86)."""
    import yaml

    from carrytool.manifest.edit import add_union

    text = "entries:\n  - pr: 1\n    title: |+\n      foo\n\n\n# c\n"
    added = add_union(text, "u1", [1, 2], {}, patch=None)
    assert yaml.safe_load(added)["entries"][0]["title"] == "foo\n\n\n"
    assert [e.get("carry") for e in yaml.safe_load(added)["entries"]] == [None, "u1"]
    two = "entries:\n  - pr: 1\n    title: |+\n      a\n\n  - pr: 2\n"
    assert remove_entries(two, [1]) == "entries:\n  - pr: 1\n    title: |+\n      a\n\n"


def test_every_entry_removed_under_an_anchor_is_refused_not_mangled() -> None:
    """`entries: &e` became `entries: [] &e`, not YAML (helper-86)."""
    with pytest.raises(ManifestError, match="anchor or a tag"):
        remove_entries("version: 1\nentries: &e\n  - pr: 1\n", [0])
    assert remove_entries("version: 1\nentries:   # the PRs\n  - pr: 1\n", [0]) == \
        "version: 1\nentries: []   # the PRs\n"


@pytest.mark.parametrize("edit", [lambda t: set_title(t, 2, "three"), lambda t: remove_entries(t, [1]),
                                  lambda t: set_title(remove_entries(t, [0]), 0, "two")])
def test_a_crlf_manifest_keeps_crlf_on_every_line(edit) -> None:  # noqa: ANN001
    """A manifest checked out with CRLF line ends: an edit adds lines ending as the file's do and changes no
    other line's end (an older note: `union new` wrote such a file back with LF on every line)."""
    crlf = TEXT.replace("\n", "\r\n")
    out = in_its_line_ends(crlf, edit)
    assert out == edit(TEXT).replace("\n", "\r\n")
    assert out.count("\n") == out.count("\r\n")


def test_a_mixed_line_end_manifest_is_edited_as_it_is() -> None:
    mixed = TEXT.replace("version: 1\n", "version: 1\r\n")
    assert in_its_line_ends(mixed, lambda t: remove_entries(t, [1])) == remove_entries(mixed, [1])
    assert in_its_line_ends(mixed, lambda t: remove_entries(t, [1])).startswith("version: 1\r\nentries:\n")



def test_a_cr_only_manifest_keeps_cr() -> None:
    """helper-90: a manifest whose lines end in CR alone (which YAML reads) was given to the edit as one line:
    `union new` failed, exit 2 "not valid YAML" (before, the file was rewritten with LF)."""
    cr = TEXT.replace("\n", "\r")
    assert in_its_line_ends(cr, lambda t: remove_entries(t, [1])) == remove_entries(TEXT, [1]).replace("\n", "\r")
