"""A directory holding exactly one tree's files, moved from tree to tree: where bisect's `--run` command runs.

`git read-tree --reset -u NEW`, through an index and a git dir of the checkout's own, writes only the files
that differ from the tree the index holds, and writes again each the command changed (git's stat check: a
change `git status` would see); what the tree does not hold (files and directories the command made, ignored
or not, a `.git`, anything inside a submodule's directory) is removed first. On sqlalchemy (932 files, 26 MB)
moving between two prefixes of a chain costs a few ms where writing the whole tree cost 0.3 s of CPU.

The bytes written are the blobs': the checkout's git dir has an `info/attributes` (which outranks every
`.gitattributes`) that unsets every attribute converting content, and git runs isolated (no configuration,
filters or hooks of the user: `Git.run`). No ref, index or work tree of the user's is read or written.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

Git = Any   # carrytool.gitlayer.git.Git, which imports nothing of this module; typed loosely as the mixins are

# text (and with it eol, crlf), ident, filter and working-tree-encoding are what change a blob on its way out
_RAW_ATTRIBUTES = "* -text -ident -filter -working-tree-encoding\n"


class TreeCheckout:
    """`dir` (ROOT/tree) holding one tree's files, an index (ROOT/index) and a git dir (ROOT/checkout.git)."""

    def __init__(self, git: Git, root: Path) -> None:
        self.git = git
        self.dir = root / "tree"
        self._git_dir = root / "checkout.git"
        self._index = root / "index"
        self.tree: str | None = None        # the tree the index holds (and the directory, as last written)
        (self._git_dir / "refs").mkdir(parents=True)
        (self._git_dir / "info").mkdir()
        (self._git_dir / "info" / "attributes").write_text(_RAW_ATTRIBUTES)
        (self._git_dir / "HEAD").write_text("ref: refs/heads/carrytool\n")
        (self._git_dir / "config").write_text("[core]\n\tbare = false\n")
        self.dir.mkdir()
        self._made = [_identity(path) for path in (root, self.dir, self._git_dir)]

    def move_to(self, tree: str) -> None:
        """Make `dir` hold exactly TREE's files: remove what the tree the index holds does not hold, then
        `git read-tree --reset -u TREE` (only what differs is written). Raises GitError when git refuses
        (a path it never checks out, such as `.git`) and OSError when something cannot be removed; the
        directory is then in no known state: make another checkout. So is one the command replaced (the
        checkout, its root or its git dir moved, or made a link to a directory elsewhere, helper-213): nothing
        is then removed or written through it (OSError)."""
        roots = (self.dir.parent, self.dir, self._git_dir)
        if [_identity(path) for path in roots] != self._made:
            raise OSError(f"the checkout at {self.dir} was replaced by the command run in it")
        self.tree = None if self.tree is None else _prune(self.git, self.tree, os.fsencode(self.dir))
        self.git.run("read-tree", "--reset", "-u", tree, cwd=self.dir,
                     env={"GIT_DIR": str(self._git_dir), "GIT_WORK_TREE": str(self.dir),
                          "GIT_INDEX_FILE": str(self._index)})
        self.tree = tree


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of PATH when it is a directory itself (not a link to one), else None."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISDIR(found.st_mode) else None


def _prune(git: Git, tree: str, directory: bytes) -> str:
    """Remove under DIRECTORY every entry TREE does not hold, a file where it holds a directory (and the
    reverse), and the contents of its submodules' directories; return TREE. A file of the tree is left to
    read-tree's stat check (written again when changed, missing or of another mode)."""
    held = {name: (kind, oid) for _, kind, oid, name in git.read_tree(tree)}
    with os.scandir(directory) as found:
        entries = list(found)
    for entry in entries:
        kind, oid = held.get(entry.name, (None, ""))
        is_dir = entry.is_dir(follow_symlinks=False)
        if kind == "tree" and is_dir:
            _prune(git, oid, entry.path)
        elif kind == "commit" and is_dir:       # a submodule: the empty directory read-tree made
            with os.scandir(entry.path) as inside:
                for inner in list(inside):
                    _remove(inner.path, inner.is_dir(follow_symlinks=False))
        elif kind is None or is_dir or kind in ("tree", "commit"):
            _remove(entry.path, is_dir)
    return tree


def _remove(path: bytes, is_dir: bool) -> None:
    if is_dir:
        shutil.rmtree(path)
    else:
        os.unlink(path)
