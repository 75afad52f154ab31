"""Trees: read (cached, parsed in process), compared, written (`mktree`'s bytes, or spliced into a known
tree's), edited at paths (`_TreeEditor`), and the file or entry at a path."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from carrytool.errors import GitError
from carrytool.gitlayer.env import EMPTY_TREE, decode_path, encode_path
from carrytool.gitlayer.objectread import exchange
from carrytool.gitlayer.objects import Change

Git = Any   # carrytool.gitlayer.git.Git, which imports this module: not imported back (no cycle)


# the modes git writes (and `mktree` writes as given): a tree that has only these, in git's order, is the
# tree `mktree` writes for its entries, so `splice_tree` may edit its bytes
_MODES = {b"40000": ("040000", "tree"), b"100644": ("100644", "blob"), b"100755": ("100755", "blob"),
          b"120000": ("120000", "blob"), b"160000": ("160000", "commit")}     # a canonical mode's entry
_CANONICAL_MODES = frozenset(_MODES)
_TREE_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0(.{20})", re.DOTALL)       # mode, name, binary object name


class Trees:
    """Trees: reading, comparing, writing, splicing and editing them; what is at a path."""

    # Git's state this reads or updates (all of it made in Git.__init__): _stage_objects, _trees, _layouts

    def read_tree(self, tree: str) -> list[tuple[str, str, str, bytes]]:
        """Entries of one tree object: (mode, type, oid, name) in git order (cached: objects never change)."""
        cached = self._trees.get(tree)
        if cached is not None:
            return cached
        entries = self._read_tree(tree)
        if len(self._trees) > 20000:
            self._trees.clear()
        self._trees[tree] = entries
        return entries

    def preread_trees(self, root: str, directories: Iterable[str]) -> None:
        """Put the trees at DIRECTORIES (paths) of tree ROOT into the tree cache in one pipelined exchange
        with cat-file (`ROOT:DIR`, in chunks), not a round trip each as editing them one by one would:
        composing edits a few hundred directories. A directory ROOT lacks is passed over. The cache is keyed
        by object name, so what it holds is what read_tree would read."""
        names = [f"{root}:{d}".encode("utf-8", "surrogateescape") for d in dict.fromkeys(directories)
                 if d and "\n" not in d]
        pipe = self._pipe("cat-file", ["cat-file", "--batch"])
        with pipe.lock:
            for header, data in exchange(pipe, names):
                oid, kind, _size = header.split() if data is not None else (b"", b"", b"")
                if kind == b"tree" and oid.decode() not in self._trees and len(self._trees) < 20000:
                    self._trees[oid.decode()] = self._parse_tree(oid.decode(), data)

    def changes_exactly(self, old: str, new: str, changes: Sequence[Change]) -> bool:
        """Whether tree NEW differs from tree OLD by exactly CHANGES (no renames), each path from its old
        (mode, oid) to its new: both trees read and compared level by level down the changed paths (every
        other entry by mode and object), as diff-tree would find them. False for anything it does not
        decide (a rename or copy, a path under another changed path): the caller then asks diff-tree."""
        nested: dict = {}
        for change in changes:
            if change.status not in ("A", "M", "D", "T"):
                return False
            parts = encode_path(change.path).split(b"/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    return False
            if parts[-1] in node:
                return False
            node[parts[-1]] = (None if change.status == "A" else (change.old_mode, change.old_oid),
                               None if change.status == "D" else (change.new_mode, change.new_oid))
        return bool(nested) and self._differs_only(old, new, nested)

    def _differs_only(self, old: str | None, new: str | None, edits: dict) -> bool:
        old_entries = self.read_tree(old) if old else []
        new_entries = self.read_tree(new) if new else []
        # every entry not edited the same in both, in the same (git's) order: one comparison of two lists
        # (a large directory's entries are not each looked up; trees out of order are left to diff-tree)
        if [e for e in old_entries if e[3] not in edits] != [e for e in new_entries if e[3] not in edits]:
            return False
        before = {e[3]: e for e in old_entries if e[3] in edits}
        after = {e[3]: e for e in new_entries if e[3] in edits}
        for name, edit in edits.items():
            a, b = before.get(name), after.get(name)
            if isinstance(edit, dict):
                if (a is not None and a[1] != "tree") or (b is not None and b[1] != "tree") or (a is b is None):
                    return False
                if not self._differs_only(a[2] if a else None, b[2] if b else None, edit):
                    return False
            elif any(entry is not None and (entry[1] == "tree" or (entry[0], entry[2]) != side)
                     or (entry is None) != (side is None) for entry, side in ((a, edit[0]), (b, edit[1]))):
                return False
        return True

    def changed_paths(self, old: str, new: str) -> list[str]:
        """The paths where tree NEW differs from tree OLD (no renames): files, and a directory's own path
        where one side has a directory and the other not. Read level by level down the subtrees that
        differ (the rest are equal by object name), from the tree cache where it can."""
        out: list[str] = []
        stack = [(old, new, b"")]
        while stack:
            a, b, prefix = stack.pop()
            before = {e[3]: e for e in self.read_tree(a)}
            after = {e[3]: e for e in self.read_tree(b)}
            for name in before.keys() | after.keys():
                x, y = before.get(name), after.get(name)
                if x == y:
                    continue
                if x is not None and y is not None and x[1] == y[1] == "tree":
                    stack.append((x[2], y[2], prefix + name + b"/"))
                else:
                    out.append(decode_path(prefix + name))
        return sorted(out)

    def _read_tree(self, tree: str) -> list[tuple[str, str, str, bytes]]:
        obj = self.read_object(tree)
        if obj is None or obj[0] != "tree":
            raise GitError(f"{tree} is not a tree")
        return self._parse_tree(tree, obj[1])

    def _parse_tree(self, tree: str, data: bytes) -> list[tuple[str, str, str, bytes]]:
        entries: list[tuple[str, str, str, bytes]] = []
        offsets: list[int] = []
        canonical, last, at = True, b"", 0
        for match in _TREE_ENTRY.finditer(data):     # one regex match an entry; anything odd: the loop below
            if match.start() != at:
                break
            raw_mode, name, raw_oid = match.groups()
            known = _MODES.get(raw_mode)
            if known is None:
                break
            mode, kind = known
            entries.append((mode, kind, raw_oid.hex(), name))
            offsets.append(at)
            key = name + b"/" if kind == "tree" else name
            canonical = canonical and key > last
            last, at = key, match.end()
        if at == len(data):
            if canonical and self._stage_objects:
                offsets.append(at)
                self._remember_layout(tree, data, offsets)
            return entries
        return self._parse_tree_entries(tree, data)

    def _parse_tree_entries(self, tree: str, data: bytes) -> list[tuple[str, str, str, bytes]]:
        """_parse_tree entry by entry: modes git does not write (100664 and the like), a corrupt tree."""
        entries, i = [], 0
        offsets, canonical, last = [], True, b""
        while i < len(data):
            offsets.append(i)
            space = data.index(b" ", i)
            nul = data.index(b"\0", space)
            raw_mode, name = data[i:space], data[space + 1:nul]
            mode = raw_mode.decode() if raw_mode in _CANONICAL_MODES else _canonical_mode(raw_mode)
            oid = data[nul + 1:nul + 21].hex()
            kind = "tree" if mode == "40000" else ("commit" if mode == "160000" else "blob")
            entries.append((mode.rjust(6, "0"), kind, oid, name))
            key = name + b"/" if kind == "tree" else name
            canonical = canonical and raw_mode in _CANONICAL_MODES and key > last
            last = key
            i = nul + 21
        if canonical and self._stage_objects:
            offsets.append(len(data))
            self._remember_layout(tree, data, offsets)
        return entries

    def _remember_layout(self, tree: str, data: bytes, offsets: list[int]) -> None:
        """Keep a canonical tree's bytes and where each entry starts: `splice_tree` edits it in place."""
        if len(self._layouts) > 4096:
            self._layouts.clear()
        self._layouts[tree] = (data, offsets)

    def mktree(self, entries: Iterable[tuple[str, str, str, bytes]]) -> str:
        """Write a tree from (mode, type, oid, name) entries, in git's order; return its SHA."""
        def order(entry: tuple[str, str, str, bytes]) -> bytes:
            return entry[3] + (b"/" if entry[1] == "tree" else b"")

        ordered = sorted(entries, key=order)
        encoded = [(b"40000" if kind == "tree" else mode.encode()) + b" " + name + b"\0" + bytes.fromhex(oid)
                   for mode, kind, oid, name in ordered]
        data = b"".join(encoded)
        sha = self.write_object("tree", data)
        if self._stage_objects and sha not in self._trees and len(self._trees) <= 20000:
            self._trees[sha] = [("040000" if kind == "tree" else mode.rjust(6, "0"), kind, oid, name)
                                for mode, kind, oid, name in ordered]
            keys = [order(entry) for entry in ordered]
            if all(e[:e.index(b" ")] in _CANONICAL_MODES for e in encoded) and \
                    all(a < b for a, b in zip(keys, keys[1:])):
                self._remember_layout(sha, data, [0, *itertools.accumulate(len(e) for e in encoded)])
        return sha

    def splice_tree(self, tree: str, changes: dict[bytes, tuple[str, str, str, bytes]]) -> str | None:
        """TREE with the entries CHANGES names replaced by (mode, type, oid, name) entries of the same type
        and size, written by splicing TREE's bytes: the very tree `mktree` writes for those entries, without
        sorting or encoding the others. None when TREE's layout is not known or a change cannot be spliced
        (a new name, another type or size): the caller then writes the tree with `mktree`."""
        layout, entries = self._layouts.get(tree), self._trees.get(tree)
        if layout is None or entries is None:
            return None
        data, offsets = layout
        index = {entry[3]: n for n, entry in enumerate(entries)}
        spliced: list[tuple[int, bytes, tuple[str, str, str, bytes]]] = []
        for name, (mode, kind, oid, _name) in changes.items():
            n = index.get(name)
            if n is None or entries[n][1] != kind:
                return None
            raw_mode = b"40000" if kind == "tree" else mode.encode()
            encoded = raw_mode + b" " + name + b"\0" + bytes.fromhex(oid)
            if raw_mode not in _CANONICAL_MODES or len(encoded) != offsets[n + 1] - offsets[n]:
                return None
            spliced.append((n, encoded, ("040000" if kind == "tree" else mode.rjust(6, "0"), kind, oid, name)))
        parts, at, new_entries = [], 0, list(entries)
        for n, encoded, entry in sorted(spliced, key=lambda item: item[0]):
            parts += (data[at:offsets[n]], encoded)
            at = offsets[n + 1]
            new_entries[n] = entry
        parts.append(data[at:])
        new_data = b"".join(parts)
        sha = self.write_object("tree", new_data)
        if sha not in self._trees and len(self._trees) <= 20000:
            self._trees[sha] = new_entries
            self._remember_layout(sha, new_data, offsets)
        return sha

    def edit_tree(self, tree: str, edits: dict[str, tuple[str, str] | None]) -> str:
        """Return a tree like TREE with paths replaced by (mode, oid) or deleted (None)."""
        return _TreeEditor(self).apply(tree, edits)

    def file_at(self, tree_or_commit: str, path: str) -> bytes | None:
        """The content of the file at PATH (a blob or symlink; not a directory or submodule), or None."""
        found = self.file_entry(tree_or_commit, path)
        return self.read_blob(found[1]) if found is not None else None

    def file_entry(self, tree_or_commit: str, path: str) -> tuple[str, str] | None:
        """(mode, oid) of the file at PATH (a blob or symlink; not a directory or submodule), or None."""
        found = self.blob_at(self.tree_of(tree_or_commit), path)
        return None if found is None or found[0] in ("040000", "160000") else found

    def blob_at(self, tree: str, path: str) -> tuple[str, str] | None:
        """(mode, oid) of PATH in TREE, or None."""
        parts = encode_path(path).split(b"/")
        current = tree
        for depth, part in enumerate(parts):
            match = next((e for e in self.read_tree(current) if e[3] == part), None)
            if match is None:
                return None
            if depth == len(parts) - 1:
                return match[0], match[2]
            if match[1] != "tree":
                return None
            current = match[2]
        return None


_FRESH = b""      # in a _TreeEditor edit: this subtree starts empty (a name git never gives an entry)


def _canonical_mode(raw: bytes) -> str:
    """The mode git reads a tree entry's RAW mode as (cache.h canon_mode): 100664 is 100644, and so on.
    git writes every tree it builds (a directory merge-tree merges, an index's) with these modes."""
    if not re.fullmatch(rb"[0-7]+", raw):
        raise GitError(f"a tree entry has the mode {raw!r}, which git does not read: the tree is corrupt",
                       hint="run `git fsck` in the repository")
    mode = int(raw, 8)
    kind = mode & 0o170000
    if kind == 0o100000:
        return "100755" if mode & 0o100 else "100644"
    return {0o120000: "120000", 0o040000: "40000"}.get(kind, "160000")


class _TreeEditor:
    """Rewrite a tree at some paths, writing only the subtrees on the way (mktree --batch)."""

    def __init__(self, git: Git) -> None:
        self.git = git

    def apply(self, tree: str, edits: dict[str, tuple[str, str] | None]) -> str:
        """TREE with EDITS (path -> (mode, oid), None: deleted). A file that goes while a directory of the
        same name comes (or the reverse), in either order, is a file<->directory swap, as diff-tree lists it.
        No edit: TREE itself (not the tree git would write for it, when its modes are not those git writes)."""
        if not edits:
            return tree
        nested: dict = {}
        for path, value in edits.items():
            node: dict | None = nested
            parts = encode_path(path).split(b"/")
            for part in parts[:-1]:
                child = node.get(part)               # type: ignore[union-attr]
                if child is None or isinstance(child, dict):
                    node = node.setdefault(part, {})  # type: ignore[union-attr]
                elif child[1] is None:               # the file there goes: a directory takes its place
                    node[part] = {_FRESH: True}      # type: ignore[index]
                    node = node[part]                # type: ignore[index]
                elif value is None:                  # a file takes the directory's place: under it all goes
                    node = None
                    break
                else:
                    raise GitError(f"cannot edit {path}: a parent is a file")
            if node is None:
                continue
            existing = node.get(parts[-1])
            if isinstance(existing, dict) and value is None:
                existing[_FRESH] = True              # the file goes, a directory with these entries comes
                continue
            node[parts[-1]] = ("leaf", value)        # (over a directory's edits: the file replaces it)
        return self._write(tree, nested) or EMPTY_TREE

    def _write(self, tree: str | None, edits: dict) -> str | None:
        base = self.git.read_tree(tree) if tree else []
        entries = {e[3]: e for e in base}
        for name, edit in edits.items():
            if name == _FRESH:
                continue
            if isinstance(edit, dict):
                current = entries.get(name)
                sub = current[2] if current and current[1] == "tree" and not edit.get(_FRESH) else None
                new_sub = self._write(sub, edit)
                if new_sub is None:
                    entries.pop(name, None)
                else:
                    entries[name] = ("040000", "tree", new_sub, name)
            else:
                value = edit[1]
                if value is None:
                    entries.pop(name, None)
                else:
                    mode, oid = value
                    kind = "tree" if mode in ("40000", "040000") else ("commit" if mode == "160000" else "blob")
                    entries[name] = (mode, kind, oid, name)
        if not entries:
            return None
        if tree and len(entries) == len(base):     # only replacements (or a new name for a deleted one)
            spliced = self.git.splice_tree(tree, {name: entries[name] for name in edits
                                                  if name != _FRESH and name in entries})
            if spliced is not None:
                return spliced
        return self.git.mktree(entries.values())
