"""A head reduced to some of its files: merges that need to decide only those files merge only those.

A 3-way merge decides each path from its three versions; only renames tie paths together, and a
rename pairs a path one side deletes with a path that side adds. So the head keeps every add, delete
and rename as it is (rename detection sees the same sources and targets on both sides), and each other
path it merely modifies, which the other side still has at the same place (neither a rename source nor
moved away, nor made a directory), goes back to its base version: there the merge takes the other side's version without a
content merge, and every path kept, and every add, delete or rename, merges exactly as in the head's
whole merge.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from carrytool.gitlayer.git import Change, Git, Signature


def reduced_head(git: Git, *, head: str, base: str, changes: Sequence[Change], keep: Collection[str],
                 ours_tree: str, sig: Signature, what: str, is_file: Callable[[str], bool] | None = None) -> str | None:
    """A commit (parent BASE) with HEAD's tree but every path outside KEEP that HEAD only modifies (not
    adds, deletes or renames) and that OURS_TREE, the other side, still has as a file, at its base version; None
    when that would change nothing or leave nothing of KEEP to merge. IS_FILE: whether a path outside KEEP
    is a file in OURS_TREE, when the caller knows it without reading that tree."""
    if not any(path in keep for c in changes for path in c.paths):
        return None
    if is_file is None:
        is_file = lambda path: file_at(git, ours_tree, path)  # noqa: E731
    rest = [c for c in changes if c.status == "M" and c.path not in keep and is_file(c.path)]
    if not rest:
        return None
    tree = git.edit_tree(git.tree_of(head), {c.path: (c.old_mode, c.old_oid) for c in rest})
    return git.write_commit(tree, [base], sig, sig, f"carrytool: {what}, its other files at their base\n")


def file_at(git: Git, tree: str, path: str) -> bool:
    """Whether TREE has a file (not a directory) at PATH."""
    found = git.blob_at(tree, path)
    return found is not None and found[0] != "040000"
