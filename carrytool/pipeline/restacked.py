"""A folded PR's hunk split by another folded PR built on its head (h265's pylint trial, h268).

Where one PR a union folds is built on another's head (its history holds that head: an earlier entry stacked on
a later one, plan's `held_by`), its own commits since that head may rewrite the other's lines: pr/11293 inserts
its functions in the middle of pr/11294's, so pr/11294's hunk stands nowhere as one block in a union that took
pr/11293's version, and was warned lost ("no other PR it folds changes those lines"). The hunk's lines as the
upper PR's head holds them (mapped through the diff between the two heads, with what the upper PR changed inside
them) standing in the tree verbatim: the union took the upper PR's version, the lower PR's hunk is reconciled by
it. The tree lacking that version too is still a loss; so is a hunk the upper PR leaves alone (its version is the
lower's), or one whose first or last line the upper PR rewrites (not known where it begins or ends: warned)."""

from __future__ import annotations

from collections.abc import Sequence

from carrytool.gitlayer.git import Git
from carrytool.pipeline.hunks import Hunk, core_lines, find_block, read_hunks
from carrytool.pipeline.leftout import UnionCheck


class Restacked:
    """For a union's folded PRs: which of them, built on another's head, holds that one's hunk in a version the
    tree has (reconciled_by). Heads' ancestry, diffs and blobs asked once each."""

    def __init__(self, git: Git, union: UnionCheck) -> None:
        self.git, self.union = git, union
        self.built: dict[tuple[int, int], bool] = {}
        self.deltas: dict[tuple[int, int], list[Hunk]] = {}
        self.blobs: dict[tuple[str, str], list[bytes] | None] = {}

    def reconciled_by(self, k: int, hunk: Hunk, tip: Sequence[bytes]) -> str | None:
        """The id of another folded PR built on PR K's head whose own commits since that head change lines inside
        K's text HUNK (in K's head), and whose head's version of those lines (core: blank or bracket-only lines at
        either end aside) stands in TIP (the tree's file's lines) as one block, as often as that head has it;
        None: none does."""
        if hunk.kind != "text" or not hunk.added:
            return None
        first, last = hunk.new_start, hunk.new_start + hunk.new_count - 1
        for j, other in enumerate(self.union.folded):
            if j == k or not self._built_on(j, k):
                continue
            span = _mapped(self._delta(j, k, hunk.path), first, last)
            lines = self._lines(other.head, hunk.path) if span is not None else None
            if span is None or lines is None:
                continue
            block = core_lines(lines[span[0] - 1:span[1]])[1]
            # as often as the upper head has it: a copy elsewhere is not this one (helper-166)
            if block and len(find_block(tip, block)) >= len(find_block(lines, block)):
                return other.id
        return None

    def _built_on(self, j: int, k: int) -> bool:
        if (j, k) not in self.built:
            upper, lower = self.union.folded[j].head, self.union.folded[k].head
            self.built[(j, k)] = upper != lower and self.git.is_ancestor(lower, upper)
        return self.built[(j, k)]

    def _delta(self, j: int, k: int, path: str) -> list[Hunk]:
        if (j, k) not in self.deltas:
            pair = (self.union.folded[k].head, self.union.folded[j].head)
            self.deltas[(j, k)] = read_hunks(self.git, [pair], self.git.diff_trees([pair], renames=False))[0]
        return [h for h in self.deltas[(j, k)] if h.path == path]

    def _lines(self, commit: str, path: str) -> list[bytes] | None:
        if (commit, path) not in self.blobs:
            entry = self.git.file_entry(self.git.tree_of(commit), path)
            self.blobs[(commit, path)] = None if entry is None or entry[0] == "160000" else \
                self.git.read_blob(entry[1]).split(b"\n")
        return self.blobs[(commit, path)]


def _mapped(delta: Sequence[Hunk], first: int, last: int) -> tuple[int, int] | None:
    """Lines FIRST..LAST of the lower head, through DELTA (the zero-context hunks from it to the upper head, of
    one file): the upper head's lines from FIRST's to LAST's, with what DELTA changes between them. None where
    DELTA changes nothing strictly inside them, or rewrites FIRST or LAST themselves, or is no text diff."""
    before = inside = 0
    touched = False
    for d in delta:
        if d.kind != "text":
            return None
        shift = d.new_count - d.old_count
        if d.old_count:
            end = d.old_start + d.old_count - 1
            if end < first:
                before += shift
            elif d.old_start > last:
                continue
            elif d.old_start <= first or end >= last:
                return None             # its first or last line rewritten: where it begins or ends is not known
            else:
                inside, touched = inside + shift, True
        elif d.old_start < first:       # an insertion after line old_start
            before += shift
        elif d.old_start < last:
            inside, touched = inside + shift, True
    return (first + before, last + before + inside) if touched else None
