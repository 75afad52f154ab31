"""Edit a manifest in place, keeping its comments, order and layout: only the values that change move."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from carrytool.errors import ManifestError


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def in_its_line_ends(text: str, edit: Callable[[str], str]) -> str:
    """EDIT applied to TEXT, a manifest as read (no newline translation). A file whose every line ends in
    CRLF (a Windows checkout), or CR alone, is edited with LF and given its own ends back, so the lines an
    edit adds end as the file's do and no other line changes (`union new` and `union compose` wrote such a
    file back with LF everywhere); any other file is edited as it is."""
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        return edit(text.replace("\r\n", "\n")).replace("\n", "\r\n")
    if "\r" in text and "\n" not in text:           # CR alone ends every line (helper-90: exit 2, not valid YAML)
        return edit(text.replace("\r", "\n")).replace("\n", "\r")
    return edit(text)


def _mapping_get(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return key_node, value_node
    return None


def _entry_node(root: yaml.Node, index: int) -> yaml.MappingNode:
    entries = _mapping_get(root, "entries") if isinstance(root, yaml.MappingNode) else None
    if entries is None or not isinstance(entries[1], yaml.SequenceNode) or index >= len(entries[1].value):
        raise ManifestError(f"entries[{index}] is not where the manifest was read from (edited meanwhile?)")
    node = entries[1].value[index]
    if not isinstance(node, yaml.MappingNode):
        raise ManifestError(f"entries[{index}] is not a mapping")
    return node


def update_union(text: str, index: int, *, commit: str | None, folded: dict[int, str]) -> str:
    """Return TEXT with entries[INDEX].commit set to COMMIT and each superseded PR's folded head set."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    entry = _entry_node(root, index)
    edits: list[_Edit] = []
    if commit is not None:
        found = _mapping_get(entry, "commit")
        if found is None:
            raise ManifestError(f"entries[{index}] has no commit: to update")
        value = found[1]
        edits.append(_Edit(value.start_mark.index, value.end_mark.index, commit))
    sup = _mapping_get(entry, "supersedes")
    if folded and sup is not None and isinstance(sup[1], yaml.SequenceNode):
        for item in sup[1].value:
            edits += _fold_edits(text, item, folded)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    return text


def _fold_edits(text: str, item: yaml.Node, folded: dict[int, str]) -> list[_Edit]:
    if isinstance(item, yaml.ScalarNode):
        number = _int(item.value)
        if number in folded:
            return [_Edit(item.start_mark.index, item.end_mark.index, f"{{pr: {number}, head: {folded[number]}}}")]
        return []
    if not isinstance(item, yaml.MappingNode):
        return []
    pr = _mapping_get(item, "pr")
    number = _int(pr[1].value) if pr and isinstance(pr[1], yaml.ScalarNode) else None
    if number not in folded:
        return []
    head = _mapping_get(item, "head")
    if head is not None:
        return [_Edit(head[1].start_mark.index, head[1].end_mark.index, folded[number])]
    if item.flow_style:
        close = item.end_mark.index - 1
        return [_Edit(close, close, f", head: {folded[number]}")]
    key_node = pr[0]  # type: ignore[index]
    line_end = text.find("\n", pr[1].end_mark.index)  # type: ignore[index]
    line_end = len(text) if line_end < 0 else line_end
    indent = " " * key_node.start_mark.column
    return [_Edit(line_end, line_end, f"\n{indent}head: {folded[number]}")]


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def add_union(text: str, name: str, prs: list[int], paths: dict[int, list[str]], *, patch: str | None,
              before: int | None = None) -> str:
    """Return TEXT with `- carry: NAME` (supersedes PRS, PATHS per PR) in `entries`, in the entries' own
    indentation: just before entries[BEFORE] (and the comment lines right above it, which stay with it),
    or appended as the last entry when BEFORE is None; everything else (comments included) stays as it was.

    PATCH names the patch file the fold writes; None keeps a commit (a placeholder until the first fold)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    found = _mapping_get(root, "entries") if isinstance(root, yaml.MappingNode) else None
    if found is None or not isinstance(found[1], yaml.SequenceNode) or found[1].flow_style or not found[1].value:
        raise ManifestError("`entries` is not a block list with at least one entry: add the union by hand",
                            hint="see docs/manifest.md, 'entries'")
    items = found[1].value
    line_start = text.rfind("\n", 0, items[0].start_mark.index) + 1
    dash_col = text[line_start:items[0].start_mark.index].find("-")
    key_col = items[0].start_mark.column
    if dash_col < 0:
        raise ManifestError("cannot tell how `entries` is indented: add the union by hand")
    if before is None:
        insert = text.find("\n", _last_end(items[-1], text))
        insert = len(text) if insert < 0 else insert + 1
    else:
        start = _entry_node(root, before).start_mark.index
        floor = _last_end(items[before - 1], text) if before else found[0].end_mark.index
        insert = _above_comments(text, start, floor)
    pad, keys = " " * dash_col, " " * key_col
    lines = [f"{pad}-{' ' * (key_col - dash_col - 1)}carry: {name}",
             f"{keys}{'patch: ' + _flow(patch) if patch else 'commit: 0000000   # carrytool union compose sets it'}"]
    if paths:
        lines.append(f"{keys}supersedes:")
        for pr in prs:
            extra = f", paths: [{', '.join(_flow(g) for g in paths[pr])}]" if pr in paths else ""
            lines.append(f"{keys}  - {{pr: {pr}{extra}}}")
    else:
        lines.append(f"{keys}supersedes: [{', '.join(map(str, prs))}]")
    head = text[:insert] if text[:insert].endswith("\n") or not text[:insert] else text[:insert] + "\n"
    return head + "\n".join(lines) + "\n" + text[insert:]


def _above_comments(text: str, start: int, floor: int) -> int:
    """Where the line holding START begins, above the whole-line comments right over it (no blank line
    between: they speak of that entry, and stay with it), none of them at or before FLOOR (the end of the
    entry before: a block scalar's line that reads like a comment is its value)."""
    insert = text.rfind("\n", 0, start) + 1
    while "-" not in text[insert:start] and insert > 0:      # `-` alone on its line (or with an anchor)
        insert = text.rfind("\n", 0, insert - 1) + 1
    while insert > 0:
        above = text.rfind("\n", 0, insert - 1) + 1
        if above <= floor or not text[above:insert].strip().startswith("#"):
            break
        insert = above
    return insert


_BLOCK_HEADER = re.compile(r"[|>][0-9+-]*")       # a block scalar's indicators: `|`, `>+`, `|2-`


def _last_end(node: yaml.Node, text: str) -> int:
    """Where the last scalar of NODE (parsed from TEXT) ends (a trailing comment or blank lines are not part
    of it). A block scalar (`|`, `>`) ends, for the parser, where the next line begins, past blank lines: its
    end is its last character (helper-85: removing an entry whose title was one removed the next line)."""
    if isinstance(node, yaml.MappingNode):
        return max(_last_end(n, text) for pair in node.value for n in pair) if node.value else node.end_mark.index
    if isinstance(node, yaml.SequenceNode):
        return max((_last_end(n, text) for n in node.value), default=node.end_mark.index)
    end = node.end_mark.index
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        header = _BLOCK_HEADER.match(text, node.start_mark.index)
        if header and "+" in header.group(0):
            # keep chomping: its trailing blank lines are its value (helper-86): it ends at its last newline
            return max(node.start_mark.index, end - 1) if end and text[end - 1] == "\n" else end
        while end > node.start_mark.index and text[end - 1] in " \t\r\n":
            end -= 1
    return end


def _flow(value: str) -> str:
    """VALUE as a YAML flow scalar: plain when it reads back as this very string (not `1234`, `true`,
    `null`, `2026-08-20`: helper-85), else double-quoted: printable characters as they are (an emoji
    too: JSON's surrogate-pair escapes read back as two lone surrogates), the rest escaped."""
    plain = value and all(ch.isalnum() or ch in "/._-" for ch in value) and value[0] not in "-." and value.isascii()
    if plain:
        try:
            plain = yaml.safe_load(value) == value
        except yaml.YAMLError:
            plain = False
    return value if plain else _double_quoted(value)


def flow_scalar(value: str) -> str:
    """VALUE as a YAML flow scalar that reads back as this very string (for a line of YAML to show)."""
    return _flow(value)


# what PyYAML reads as it is inside double quotes: printable, no line break of its own (\x85, \u2028, \u2029).
# Compared by code point: the same class as a regular expression took 7 ms to compile, in every sync
_PRINTABLE = ((0x20, 0x7E), (0xA0, 0x2027), (0x202A, 0xD7FF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF))


def _printable(ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in _PRINTABLE)


def _double_quoted(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif _printable(ch):
            out.append(ch)
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\\ufffd")                  # a lone surrogate is no character a file can hold
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"' + "".join(out) + '"'


def remove_entries(text: str, indexes: list[int]) -> str:
    """Return TEXT without entries[i] for each of INDEXES (whole lines, from the dash to the entry's last
    value); comments on other lines stay where they are."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    edits = []
    for index in indexes:
        node = _entry_node(root, index)
        if _is_flow(root):
            raise ManifestError("`entries` is a flow list: remove the entry by hand")
        start = text.rfind("\n", 0, node.start_mark.index) + 1
        end = text.find("\n", _last_end(node, text))
        edits.append(_Edit(start, len(text) if end < 0 else end + 1, ""))
    found = _mapping_get(root, "entries")
    if indexes and found is not None and isinstance(found[1], yaml.SequenceNode) and \
            len(set(indexes)) >= len(found[1].value):     # every entry goes: `entries: []`, not null (helper-85)
        colon = text.find(":", found[0].end_mark.index)
        rest = text[colon + 1:text.find("\n", colon) if "\n" in text[colon:] else len(text)].strip()
        if rest and not rest.startswith("#"):       # an anchor or a tag (helper-86: `entries: [] &e`)
            raise ManifestError("`entries` carries an anchor or a tag: remove its last entry by hand")
        edits.append(_Edit(colon + 1, colon + 1, " []"))
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    return text


def set_title(text: str, index: int, title: str) -> str:
    """Return TEXT with entries[INDEX].title set to TITLE (added after the entry's first key if absent)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    node = _entry_node(root, index)
    value = _flow(title)
    found = _mapping_get(node, "title")
    if found is not None:      # a block scalar's newline stays (helper-85: the next line was joined to it)
        edit = _Edit(found[1].start_mark.index, _last_end(found[1], text), value)
    elif node.flow_style:
        close = node.end_mark.index - 1
        edit = _Edit(close, close, f", title: {value}")
    else:
        key, first = node.value[0]
        line_end = text.find("\n", first.end_mark.index)
        line_end = len(text) if line_end < 0 else line_end
        edit = _Edit(line_end, line_end, f"\n{' ' * key.start_mark.column}title: {value}")
    return text[:edit.start] + edit.text + text[edit.end:]


def _is_flow(root: yaml.Node) -> bool:
    found = _mapping_get(root, "entries") if isinstance(root, yaml.MappingNode) else None
    return bool(found and getattr(found[1], "flow_style", False))
