"""What a manifest's YAML reads as: mappings and sequences that remember the lines their values came from
(for errors that name a line) and their scalars' raw texts."""

from __future__ import annotations


class YMap(dict):
    """A mapping from the YAML document, with the line of itself, of each key and each scalar's raw text."""

    line: int
    key_lines: dict[str, int]
    raw: dict[str, str]


class YList(list):
    """A sequence from the YAML document, with the line of itself and of each item."""

    line: int
    item_lines: list[int]
    raw: list[str | None]
