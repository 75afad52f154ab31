"""Who a conflict is with: whether another change meets the lines where an entry conflicts with upstream.

An entry that conflicts with upstream alone conflicts on any result built on upstream, whatever the
earlier entries did elsewhere in the file. An earlier entry is part of that conflict only when its own
change meets the conflicting lines: then merging the entry onto (upstream + that change) gives other
conflict regions than merging it onto upstream. Regions are compared as merge-tree (the merge that
composes) writes them, without the labels on the marker lines; the merges run in the long-lived
merge-tree process, not one `git merge-file` process each.
"""

from __future__ import annotations

from carrytool.gitlayer.git import Git

_REGULAR = ("100644", "100755")


def conflict_regions(git: Git, ours: str, base: str, theirs: str) -> list[bytes] | None:
    """The conflict regions (markers to markers) of merging blob THEIRS onto blob OURS from BASE, or None
    for a binary or an error."""
    merged = git.merge_contents(ours, base, theirs)
    if merged is None:
        return None
    regions, current = [], None
    for line in merged[1].splitlines(keepends=True):
        if line.startswith((b"<<<<<<< ", b">>>>>>> ", b"||||||| ")):
            line = line[:7] + b"\n"                          # labels name the merge's objects: drop them
        if current is None and line.startswith(b"<<<<<<<"):
            current = [line]
        elif current is not None:
            current.append(line)
            if line.startswith(b">>>>>>>"):
                regions.append(b"".join(current))
                current = None
    return regions


def meets_conflict(git: Git, path: str, *, base_tree: str, head_tree: str, upstream_tree: str,
                   other_tree: str) -> bool:
    """Whether the change from UPSTREAM_TREE to OTHER_TREE meets the lines where the entry (BASE_TREE ->
    HEAD_TREE) conflicts with upstream in PATH. Only regular files can be judged; anything else
    (a deletion, a submodule, a symlink, a binary) is upstream's conflict alone."""
    sides = [git.blob_at(tree, path) for tree in (base_tree, head_tree, upstream_tree, other_tree)]
    if any(side is None or side[0] not in _REGULAR for side in sides):
        return False
    return regions_differ(git, *(side[1] for side in sides))  # type: ignore[index]


def regions_differ(git: Git, base: str, head: str, upstream: str, other: str) -> bool:
    """Whether merging blob HEAD (from BASE) onto OTHER gives other conflict regions than onto UPSTREAM."""
    if upstream == other:
        return False
    alone = conflict_regions(git, upstream, base, head)
    with_other = conflict_regions(git, other, base, head)
    return alone is not None and with_other is not None and alone != with_other
