"""Who a conflict is with: whether another change meets the lines where an entry conflicts with upstream.

An entry that conflicts with upstream alone conflicts on any result built on upstream, whatever the
earlier entries did elsewhere in the file. An earlier entry is part of that conflict only when its own
change meets the conflicting lines: then merging the entry onto (upstream + that change) gives other
conflict regions than merging it onto upstream. Regions are compared as merge-tree (the merge that
composes) writes them, without the labels on the marker lines; the merges run in the long-lived
merge-tree process, not one `git merge-file` process each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from carrytool.gitlayer.git import REGULAR_MODES, Git, MergeResult


def conflict_regions(git: Git, ours: str, base: str, theirs: str) -> list[bytes] | None:
    """The conflict regions (markers to markers) of merging blob THEIRS onto blob OURS from BASE, or None
    for a binary or an error."""
    merged = git.merge_contents(ours, base, theirs)
    if merged is None:
        return None
    return _regions(merged[1])


def regions_in(git: Git, merge: MergeResult | None, path: str, ours: str, base: str, theirs: str, *,
               remember: bool = False) -> list[bytes] | None:
    """conflict_regions(OURS, BASE, THEIRS) read from a tree MERGE that already merged exactly those three
    blobs at PATH (its stages say so) and wrote the result with its markers: no second merge. None when
    MERGE cannot tell (no such merge, other stages, a virtual merge base, no markers: a binary).
    REMEMBER: a merge whose regions are asked again (an entry's merge alone onto upstream, beside every
    other entry it may meet): the merged blob is read once (_regions_of_blob)."""
    if merge is None or merge.clean:
        return None
    stages = {s.stage: s for s in merge.stages if s.path == path}
    if len(stages) != 3 or [stages[n].oid if n in stages else None for n in (1, 2, 3)] != [base, ours, theirs] or \
            any(s.mode not in REGULAR_MODES for s in stages.values()):
        return None
    found = git.blob_at(merge.tree, path)
    if found is None or found[0] not in REGULAR_MODES:
        return None
    return (_regions_of_blob(git, found[1]) if remember else _regions(git.read_blob(found[1]))) or None


# merged blob -> its conflict regions, for the merges regions_in is told to REMEMBER: a blob's content
# never changes, so neither do they (explain asks those of one entry's merge alone onto upstream once per
# pair it is in: 60 xarray PRs, 210 reads of a 480 KB file, 90 of them again). At most one per entry and
# conflicted path of a run; emptied should it reach _REGIONS_KEPT (a long-lived process, tests).
_REGIONS_OF: dict[str, list[bytes]] = {}
_REGIONS_KEPT = 1024


def _regions_of_blob(git: Git, oid: str) -> list[bytes]:
    found = _REGIONS_OF.get(oid)
    if found is None:
        if len(_REGIONS_OF) >= _REGIONS_KEPT:
            _REGIONS_OF.clear()
        found = _REGIONS_OF[oid] = _regions(git.read_blob(oid))
    return found


def _regions(merged: bytes) -> list[bytes]:
    """The regions of MERGED, from the line of its first `<<<<<<<` to the line end after its last
    `>>>>>>>` (no region starts before the one, none ends after the other): large files, few lines read."""
    first, last = merged.find(b"<<<<<<<"), merged.rfind(b">>>>>>>")
    if first < 0 or last < first:
        return []
    start = max(merged.rfind(b"\n", 0, first), merged.rfind(b"\r", 0, first)) + 1   # splitlines' line starts
    end = merged.find(b"\n", last)
    return regions_of_lines(merged[start:len(merged) if end < 0 else end + 1].splitlines(keepends=True))


def regions_of_lines(lines: Iterable[bytes]) -> list[bytes]:
    """The conflict regions among LINES (with their line ends), markers without their labels."""
    regions, current = [], None
    for line in lines:
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


def conflicted_at(merge: MergeResult, path: str) -> tuple[str, ...]:
    """The conflicted files of MERGE (an earlier change merged onto upstream) at PATH or under it (a
    directory): where that merge holds conflict markers rather than a change to weigh."""
    inside = path + "/"
    return tuple(p for p in merge.conflicted_files if p == path or p.startswith(inside))


def takes_file_away(git: Git, path: str, *, upstream_tree: str, other_trees: Sequence[str]) -> list[bool]:
    """For each of OTHER_TREES (an earlier change merged onto upstream), whether it took away the regular
    file upstream has at PATH: deleted it, or made it a link, a submodule or a directory. A later entry's
    conflict with upstream in PATH is then that change's doing too, whatever lines it met: in the result
    so far there is no file to merge the entry into."""
    found = git.blob_at(upstream_tree, path)
    if found is None or found[0] not in REGULAR_MODES:
        return [False] * len(other_trees)
    others = [git.blob_at(tree, path) for tree in other_trees]
    return [other is None or other[0] not in REGULAR_MODES for other in others]


def meets_conflict_many(git: Git, path: str, *, base_tree: str, head_tree: str, upstream_tree: str,
                        other_trees: Sequence[str], alone: MergeResult | None = None) -> list[bool]:
    """meets_conflict for each of OTHER_TREES (none with a tree merge of its own: MERGES[1] is None),
    their content merges asked as one batch, which two merge processes may share, instead of one merge
    after the other. ALONE: the entry's tree merge onto upstream (MERGES[0]), if the caller has it."""
    out = [False] * len(other_trees)
    asked, own, triples = _meeting(git, path, base_tree=base_tree, head_tree=head_tree,
                                   upstream_tree=upstream_tree, other_trees=other_trees, alone=alone)
    if not asked:
        return out
    merged = git.merge_contents_many(triples)
    if own is None:
        first = merged.pop(0)
        own = None if first is None else _regions(first[1])
    for n, with_other in zip(asked, merged):
        out[n] = own is not None and with_other is not None and own != _regions(with_other[1])
    return out


def meeting_merges(git: Git, path: str, *, base_tree: str, head_tree: str, upstream_tree: str,
                   other_trees: Sequence[str], alone: MergeResult | None = None) -> list[tuple[str, str, str]]:
    """The content merges (ours, base, theirs blobs) meets_conflict_many asks of git with these arguments:
    a caller that will ask it for several entries can ask them all of git as one batch first
    (Git.merge_contents_many keeps the answers)."""
    return _meeting(git, path, base_tree=base_tree, head_tree=head_tree, upstream_tree=upstream_tree,
                    other_trees=other_trees, alone=alone)[2]


def _meeting(git: Git, path: str, *, base_tree: str, head_tree: str, upstream_tree: str,
             other_trees: Sequence[str], alone: MergeResult | None
             ) -> tuple[list[int], list[bytes] | None, list[tuple[str, str, str]]]:
    """For meets_conflict_many: which of OTHER_TREES are asked, the regions of the entry's conflict with
    upstream when ALONE holds them, and the content merges to ask (upstream's first when it does not)."""
    sides = [git.blob_at(tree, path) for tree in (base_tree, head_tree, upstream_tree)]
    if any(side is None or side[0] not in REGULAR_MODES for side in sides):
        return [], None, []
    base, head, upstream = (side[1] for side in sides)  # type: ignore[index]
    others = [git.blob_at(tree, path) for tree in other_trees]
    asked = [n for n, other in enumerate(others) if other is not None and other[0] in REGULAR_MODES
             and other[1] != upstream]
    if not asked:
        return [], None, []
    own = regions_in(git, alone, path, upstream, base, head, remember=True)
    return asked, own, (([(upstream, base, head)] if own is None else []) +
                        [(others[n][1], base, head) for n in asked])  # type: ignore[index]


def meets_conflict(git: Git, path: str, *, base_tree: str, head_tree: str, upstream_tree: str,
                   other_tree: str, merges: Sequence[MergeResult | None] = (None, None)) -> bool:
    """Whether the change from UPSTREAM_TREE to OTHER_TREE meets the lines where the entry (BASE_TREE ->
    HEAD_TREE) conflicts with upstream in PATH. Only regular files can be judged; anything else
    (a deletion, a submodule, a symlink, a binary) is upstream's conflict alone. MERGES: the tree merges
    of the entry onto upstream and onto other, if the caller has them (see regions_differ)."""
    sides = [git.blob_at(tree, path) for tree in (base_tree, head_tree, upstream_tree, other_tree)]
    if any(side is None or side[0] not in REGULAR_MODES for side in sides):
        return False
    return regions_differ(git, *(side[1] for side in sides), path=path, merges=merges)  # type: ignore[index]


def regions_differ(git: Git, base: str, head: str, upstream: str, other: str, *, path: str = "",
                   merges: Sequence[MergeResult | None] = (None, None)) -> bool:
    """Whether merging blob HEAD (from BASE) onto OTHER gives other conflict regions than onto UPSTREAM.
    MERGES: tree merges of HEAD's commit onto UPSTREAM's and onto OTHER's: where one of them merged
    exactly these blobs at PATH, its regions are read from it instead of merging again (regions_in)."""
    if upstream == other:
        return False
    alone = regions_in(git, merges[0], path, upstream, base, head, remember=True)
    if alone is None:
        alone = conflict_regions(git, upstream, base, head)
    with_other = regions_in(git, merges[1], path, other, base, head)
    if with_other is None:
        with_other = conflict_regions(git, other, base, head)
    return alone is not None and with_other is not None and alone != with_other
