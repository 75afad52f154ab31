"""Where an applied entry's hunk is in the composed step: in the step's diff, by counting blocks of lines
where git aligned the change differently, slid over repeated lines, or in the step's tree (a mixin of
landing._Accountant)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from carrytool.gitlayer.env import ZERO
from carrytool.pipeline.hunks import Hunk, find_block, is_subsequence_block, says_nothing
from carrytool.pipeline.landing_records import own_base
from carrytool.pipeline.plan import Step

_CONTEXT = 5      # lines of a deletion's base read on each side to anchor it (_deleted_in_context)


class _Matching:
    def _mode_moved(self, hunk: Hunk, others: list[Hunk], own: set[str]) -> tuple[int, int, str] | None:
        """Where the step set HUNK's mode on a file the entry's own change does not name: upstream moved
        the file since the entry's base, and the merge followed (helper-127: "run.sh (mode change) did not
        land", its bit and its lines being at bin/run.sh). (0, 0, that path), or None."""
        return next(((0, 0, h.path) for h in others if h.kind == "mode" and h.new_mode == hunk.new_mode
                     and h.path not in own), None)

    def match(self, hunk: Hunk, candidates: list[Hunk], used: dict[int, set[int]]):  # noqa: ANN201
        """Find HUNK inside this step's diff: (first new line, count, path) for added lines, (the new line the
        removed lines followed, 0, path) for a removal, 'applied' (whole file), or None."""
        if hunk.kind != "text":
            return "applied" if self.whole_file_landed(hunk) else None
        ordered = sorted(candidates, key=lambda c: abs(c.new_start - hunk.new_start))
        for cand in ordered:
            if cand.kind != "text":
                continue
            if hunk.added:
                taken = used.setdefault(id(cand), set())
                offset = _block_at(hunk.added, cand.added, taken)
                # the removed side may differ when upstream changed those lines since the entry's base
                if offset >= 0:
                    taken.update(range(offset, offset + len(hunk.added)))
                    return (cand.new_start + offset, len(hunk.added), cand.path)
            elif is_subsequence_block(hunk.removed, cand.removed) >= 0:
                return (cand.new_start + cand.new_count - 1 if cand.new_count else cand.new_start, 0, cand.path)
        return None

    def whole_file_landed(self, hunk: Hunk) -> bool:
        """A binary/rename/submodule change landed when the step's tree has its blob at its path, a mode
        change when the file there has its mode (helper-124: a PR that only made a script executable, on a
        file upstream edited since, "did not land" and failed every night: its blob is the old content)."""
        step = self._current
        path = self.renamed.get(hunk.path, hunk.path) if hunk.new_oid == ZERO else hunk.path
        found = self.git.blob_at(self.git.tree_of(step.commit), path)  # type: ignore[arg-type]
        if hunk.kind == "mode":
            return found is not None and found[0] == hunk.new_mode
        if hunk.new_oid in (None, ZERO):         # (a directory there now: no file, as the entry left it)
            return found is None or found[0].lstrip("0") == "40000"
        if found is not None and hunk.kind == "rename" and hunk.old_path:
            # the move happened: the content may carry other entries' edits, which their own hunks account for
            return found[1] == hunk.new_oid or self.git.blob_at(self.git.tree_of(step.commit), hunk.old_path) is None  # type: ignore[arg-type]
        return found is not None and found[1] == hunk.new_oid

    def already_present(self, step: Step, hunk: Hunk) -> bool:
        """The result already had this change before the step (upstream has it, e.g. a rewritten base)."""
        path = self.renamed.get(hunk.path, hunk.path)
        found = self.git.blob_at(self.git.tree_of(step.commit), path)  # type: ignore[arg-type]
        if hunk.new_oid and found is not None and found[1] == hunk.new_oid:
            return True
        if hunk.kind == "text" and hunk.removed and not hunk.added and found is not None:
            # a deletion upstream made too since the entry's base: the file the step merged onto has none of
            # its lines left to delete (h254: peft's pr/3360 "did not land" once pr/3379 had changed the file)
            before = self.lines_at(step.parent, path) or []  # type: ignore[arg-type]
            return not find_block(before, hunk.removed) or self._deleted_in_context(step, hunk, path, before)
        if hunk.kind != "text" or not hunk.added or all(says_nothing(line) for line in hunk.added):
            return False
        before = self.lines_at(step.parent, path) or []  # type: ignore[arg-type]
        after = self.lines_at(step.commit, path) or []   # type: ignore[arg-type]
        return bool(find_block(before, hunk.added)) and bool(find_block(after, hunk.added))

    def _deleted_in_context(self, step: Step, hunk: Hunk, path: str, before: list[bytes]) -> bool:
        """A deletion of lines the file holds elsewhere too (a blank line) made already: the lines around it
        in the entry's base, up to one that says something on each side, are in the file the step merged
        onto and in its result without the deleted lines between them, and nowhere with them (h258: polars'
        pr/28708 deletes one of two blank lines in a docstring, as upstream did since its base: "did not
        land", a red night)."""
        entry_base = own_base(step)
        base = self.lines_at(entry_base, hunk.old_path or hunk.path) if entry_base else None  # type: ignore[arg-type]
        start, end = hunk.old_start - 1, hunk.old_start - 1 + len(hunk.removed)
        if base is None or list(base[start:end]) != list(hunk.removed):
            return False
        left, right = start, end
        while left > 0 and start - left < _CONTEXT and (left == start or says_nothing(base[left])):
            left -= 1
        while right < len(base) and right - end < _CONTEXT and (right == end or says_nothing(base[right - 1])):
            right += 1
        if left == start or right == end:        # no line on one side to anchor it
            return False
        pre, post = base[left:right], base[left:start] + base[end:right]
        after = self.lines_at(step.commit, path) or []  # type: ignore[arg-type]
        return all(find_block(lines, post) and not find_block(lines, pre) for lines in (before, after))

    def fallback(self, step: Step, hunk: Hunk, claimed: Counter) -> tuple[int, int, str] | None:
        """Git aligned the change differently: the block must occur more often after the step than before."""
        if hunk.kind != "text":
            return None
        path = self.renamed.get(hunk.path, hunk.path)
        before = self.lines_at(step.parent, path) or []  # type: ignore[arg-type]
        after = self.lines_at(step.commit, path) or []   # type: ignore[arg-type]
        block = hunk.added or hunk.removed
        gained = len(find_block(after, block)) - len(find_block(before, block))
        if hunk.added:
            if gained - claimed[block] <= 0:
                return None
            # not where another hunk of the step was found: lines it added beside equal ones may form this
            # block too (helper-112: a hunk the merge dropped was taken for landed on its neighbour's lines)
            here = self._here.get(path, set())
            spots = [i for i in find_block(after, block) if here.isdisjoint(range(i + 1, i + 1 + len(block)))]
            if not spots:
                return None
            claimed[block] += 1
            best = min(spots, key=lambda i: abs(i + 1 - hunk.new_start))
            return (best + 1, len(block), path)
        if -gained - claimed[block] <= 0:
            return None
        claimed[block] += 1
        return (hunk.new_start, 0, path)

    def slid(self, step: Step, hunk: Hunk, claimed: Counter) -> tuple[int, int, str] | None:
        """HUNK aligned otherwise: lines inserted (or deleted) beside lines equal to their last (or first)
        ones can be placed several ways, each the same change of the file. Git's zero-context diff picks
        one; the merge may have kept the lines around another, and upstream may have changed the lines the
        picked one takes in (helper-110: poetry's pr/10402 adds a test whose last 8 lines repeat the
        previous test's; `diff -U0` placed it 8 lines earlier, taking in those 8 lines, which upstream had
        rewritten since: "did not land", and a red night). Each other placement, slid up or down over the
        entry's base, is looked for as `fallback` looks for the hunk."""
        if hunk.kind != "text" or (hunk.added and hunk.removed) or not own_base(step):
            return None
        base = self.lines_at(own_base(step), hunk.old_path or hunk.path)  # type: ignore[arg-type]
        block = list(hunk.added or hunk.removed)
        if base is None or not block:
            return None
        n = len(block)
        start = hunk.old_start if hunk.added else hunk.old_start - 1     # 0-based: where it goes / begins
        end = start if hunk.added else start + n                           # base[start:end]: what it deletes
        others: list[list[bytes]] = []
        shift = 1
        while shift <= n and end + shift <= len(base) and block[shift - 1] == base[end + shift - 1]:
            others.append(block[shift:] + base[end:end + shift])            # slid down
            shift += 1
        shift = 1
        while shift <= n and start - shift >= 0 and block[n - shift] == base[start - shift]:
            others.append(base[start - shift:start] + block[:n - shift])    # slid up
            shift += 1
        for other in others:
            moved = replace(hunk, added=tuple(other)) if hunk.added else replace(hunk, removed=tuple(other))
            placed = self.fallback(step, moved, claimed)
            if placed:
                return placed
        return None


def _block_at(block: Sequence[bytes], within: Sequence[bytes], taken: set[int]) -> int:
    """Where BLOCK occurs in WITHIN on lines no earlier hunk matched (TAKEN): the first such place after
    the last line taken, else the first anywhere; -1 when none is free. Two hunks adding the same lines
    never both match one place (both were put at the first when upstream had shifted the file, and the
    second place, unowned, could be clobbered unseen: an adversarial review)."""
    free = [at for at in find_block(within, block) if taken.isdisjoint(range(at, at + len(block)))]
    after = [at for at in free if at > max(taken, default=-1)]
    return (after or free or [-1])[0]
