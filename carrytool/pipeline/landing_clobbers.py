"""What a later step undoes, said: an entry's lines clobbered (or a stacked PR's edit of them), and upstream
content a step resolved `on_conflict: theirs` overrode (a mixin of landing._Accountant)."""

from __future__ import annotations

from collections import Counter

from carrytool.pipeline.hunks import Hunk, counted, find_block, line_span
from carrytool.pipeline.landing_records import Owner, own_base


class _Clobbers:
    def clobber(self, index: int, path: str, lines: list[tuple[int, Owner]], whole: Hunk | None,
                how: str | None = None, hunks: list[Hunk] | None = None, elsewhere: list[Hunk] = (),  # type: ignore[assignment]
                reverts: bool = False, numbered_after: bool = False) -> None:
        """Say that step INDEX removed LINES of PATH (line, owner) that earlier entries landed (WHOLE: by a
        change of the whole file; HOW: what it did, when not that). HUNKS: the step's own text hunks in PATH,
        in the composed file, and ELSEWHERE all of its hunks, to tell a revert (`_reverts`) from another change
        (a move); REVERTS: a revert, known by the caller (lines an entry removed, put back as they were).
        NUMBERED_AFTER: LINES are numbered in the step's result (lines it brought back), not in the file before
        it (lines it removed): the scope named is read there."""
        by = self.applied[index]
        groups: dict[Owner, list[int]] = {}
        for line, owner in lines:
            groups.setdefault(owner, []).append(line)
        at = by.commit if numbered_after else by.parent
        prev_lines = self.lines_at(at, path) if at else None  # type: ignore[arg-type]
        source = b"\n".join(prev_lines) if prev_lines is not None else None
        # loaded here: only a failed check names scopes
        from carrytool.pipeline.scopes import scope_at

        for (step_index, hunk_index), numbers in sorted(groups.items()):
            victim = self.entries[step_index]
            first, last = min(numbers), max(numbers)
            scope = scope_at(source, first) if source is not None and path.endswith(".py") else None
            what = how or ("replaced the whole file" if whole else f"removed {line_span(first, last)}")
            stacked = victim.step.id in by.built_over
            # (a PR built on the victim undoing part of it in its own commits is its author's edit: said below)
            undone = not stacked and (reverts or hunks is not None and
                                      _reverts(victim.own[hunk_index], numbers, hunks, elsewhere))
            said = what + (f" (on_conflict: {by.resolution})" if by.resolution else "")
            if undone and hunks is not None:
                said += f", reverting it: exactly what {victim.step.id} added goes" + \
                    (", and what that replaced comes back" if victim.own[hunk_index].removed else "")
            elif undone:
                said += ", reverting it"
            record = {"file": path, "by": by.id, "lines": [first, last], "scope": scope,
                      "message": f"{victim.step.id}'s change to {path}{f' ({scope})' if scope else ''} was "
                                 f"clobbered: {by.id} {said}"}
            if undone:
                record["reverts"] = True
            if stacked:
                # a PR built on the victim's head changed its lines in commits of its own: what its author did
                # to them, said (the victim's lines are gone all the same: not "survived"), not a failure
                # (helper-120: a stacked PR reverting part of its lower was hidden by a skip here)
                record["stacked"] = True
                record["message"] = (f"{victim.step.id}'s change to {path}{f' ({scope})' if scope else ''} was "
                                     f"changed by {by.id}, built on it: {by.id} {what} in its own commits")
                victim.clobbered.append(record)
                self.result.warnings.append({"kind": "stacked-edit", "entry": victim.step.id, **record})
                continue
            victim.clobbered.append(record)
            self.result.failures.append({"kind": "clobbered", "entry": victim.step.id, **record})

    def upstream_loss(self, index: int, path: str, removed: list, intended: Counter) -> None:
        budget = Counter(intended)
        lost = []
        for line, owner, text in removed:
            if owner is not None:
                continue
            if budget[text] > 0:
                budget[text] -= 1
                continue
            lost.append(line)
        if lost:
            step = self.applied[index]
            if path.endswith(".py"):
                self.overridden[(index, path)] = None
            self.result.warnings.append({
                "kind": "upstream-loss", "entry": step.id, "file": path, "lines": [min(lost), max(lost)],
                "message": f"{step.id} (on_conflict: {step.resolution}) overrode "
                           f"{counted(len(lost), 'upstream line')} of {path} at {line_span(min(lost), max(lost))} "
                           "that its own diff never changed: possible upstream content loss"})

    def upstream_replaced(self, index: int, path: str) -> None:
        """Step INDEX, resolved `theirs`, replaced PATH whole (a binary, a submodule, a link or a file of
        another type: no lines to merge) where no entry had set it: upstream's version is gone when it is not
        the one the entry's own change started from (helper-124: a binary both changed, a submodule bumped
        where upstream had made a file, a file made a link where upstream had edited it: gone, nothing said)."""
        step = self.applied[index]
        tree_of = self.git.tree_of
        before = self.git.blob_at(tree_of(step.parent), path) if step.parent else None   # type: ignore[arg-type]
        base = own_base(step)
        if before is None or before == (self.git.blob_at(tree_of(base), path) if base else None):  # type: ignore[arg-type]
            return
        self.result.warnings.append({
            "kind": "upstream-loss", "entry": step.id, "file": path, "lines": [0, 0],
            "message": f"{step.id} (on_conflict: {step.resolution}) replaced {path} whole with its own version: "
                       "the version upstream had there since the entry's base is gone: possible upstream content "
                       "loss"})

    def upstream_mode_replaced(self, index: int, path: str, mode: str | None) -> None:
        """Step INDEX, resolved `theirs`, set PATH's mode to MODE over the one upstream gave it since the
        entry's base (helper-136: a file both added, upstream's executable and the entry's not: git calls
        the modes a conflict, `theirs` takes the entry's, and upstream's bit was gone with nothing said)."""
        step = self.applied[index]
        tree_of = self.git.tree_of
        before = self.git.blob_at(tree_of(step.parent), path) if step.parent else None   # type: ignore[arg-type]
        base = own_base(step)
        started = self.git.blob_at(tree_of(base), path) if base else None   # type: ignore[arg-type]
        first = self.applied[0].parent                  # upstream, where the composition starts
        upstream = self.git.blob_at(tree_of(first), path) if first else None   # type: ignore[arg-type]
        if before is None or (started is not None and started[0] == before[0]) \
                or upstream is None or upstream[0] != before[0]:
            return          # the entry changed the mode it started from, or upstream did not set it
        self.result.warnings.append({
            "kind": "upstream-loss", "entry": step.id, "file": path, "lines": [0, 0],
            "message": f"{step.id} (on_conflict: {step.resolution}) set the mode of {path} to {mode} over "
                       f"{before[0]}, the mode upstream gave it since the entry's base: possible upstream "
                       "content loss"})


def _reverts(own: Hunk, lines: list[int], hunks: list[Hunk], elsewhere: list[Hunk] = ()) -> bool:  # type: ignore[assignment]
    """Whether the later step's HUNKS undo OWN, an earlier entry's hunk whose added lines are LINES of the
    composed file (every one of them: a hunk clobbered in part is not reverted): one hunk of them removes
    exactly those lines and adds back exactly the lines OWN removed, and no hunk of the step (ELSEWHERE: in
    any file) adds OWN's lines again, which moves them (verl's pr/5091, upstream's revert of pr/5054, carried
    beside it: the union a clobber suggests would hold neither change; h271: a block moved to another function
    was said reverted)."""
    if len(lines) != len(own.added) or not own.added:
        return False
    if any(find_block(h.added, own.added) for h in elsewhere if h.kind == "text"):
        return False
    wanted = set(lines)
    meeting = [(h, spans) for h in hunks if h.kind == "text" and h.old_count and
               wanted & (spans := set(range(h.old_start, h.old_start + h.old_count)))]
    return len(meeting) == 1 and meeting[0][1] == wanted and meeting[0][0].added == own.removed
