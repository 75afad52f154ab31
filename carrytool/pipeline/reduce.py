"""A head reduced to some of its files: merges that need to decide only those files merge only those.

A 3-way merge decides each path from its three versions; only renames tie paths together. An entry
that deletes and renames nothing, none of whose other files the other side moved away, merges on the paths
kept exactly as its whole head does: its other paths, reset to their base versions, merge to the other
side's versions without a content merge.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from carrytool.gitlayer.git import Change, Git, Signature


def reduced_head(git: Git, *, head: str, base: str, changes: Sequence[Change], keep: Collection[str],
                 ours_tree: str, sig: Signature, what: str) -> str | None:
    """A commit (parent BASE) with HEAD's tree but every changed path outside KEEP at its base version;
    None when that would not merge like HEAD on KEEP (it renames or deletes, or OURS_TREE, the other
    side, lacks one of its other paths: moved away, a rename could carry the change into KEEP) or would
    change nothing."""
    if any(c.status in ("R", "D") for c in changes):
        return None
    rest = [c for c in changes if c.path not in keep]
    if not rest or len(rest) == len(changes):
        return None
    if any(c.status != "A" and git.blob_at(ours_tree, c.path) is None for c in rest):
        return None
    edits = {c.path: None if c.status == "A" else (c.old_mode, c.old_oid) for c in rest}
    tree = git.edit_tree(git.tree_of(head), edits)
    return git.write_commit(tree, [base], sig, sig, f"carrytool: {what}, its other files at their base\n")
