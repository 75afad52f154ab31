"""What a union provides and leaves out: each PR's change it stands for is in the composed tree, or a
`provided-absent` warning, dropped on purpose (`drops`), or a `stale-drop` (a mixin of landing._Accountant;
has_change is also union.fold's). What only a union needs (`provided`, `drops`, and what they import: regions,
scopes, yaml edits) is imported when a union is there to check: a run without one never loads it."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from carrytool.gitlayer.git import REGULAR_MODES, Change, Git, paths_of
from carrytool.pipeline.hunks import find_block
from carrytool.pipeline.plan import APPLIED, Step, union_judged

if TYPE_CHECKING:
    from carrytool.pipeline.leftout import Folded, LeftOut


class _ProvidedAccounting:
    def account_provided(self) -> None:
        """A union that supersedes a PR for a path its own change does not touch: the PR's change there is
        in neither (the PR's hunks there are filtered out, the union has none). So too for each file of a
        PR it supersedes whole (skipped, or no entry: Step.superseded_diffs): the seed's union was trusted
        to hold the PRs it replaced, and nothing checked it. Unless the composed tree has that change
        anyway (`_has`: upstream took it, or another entry brought it). Checked for a union applied, or
        skipped because the image has its change already (merged upstream, redundant): the PRs it stands
        for are skipped all the same. A union skipped for any other reason (a conflict under
        `on_conflict: skip`) leaves every file of the PRs it stands for out; one whose commit says which PRs
        it was composed with (`Carry-Supersedes:`, as `union new`/`compose` and explain's draft message
        write it) and does not name a PR it supersedes was not composed with that PR (added to `supersedes`
        by hand, or a refold not finished): its files are checked too. A warning (a union may leave a change
        out on purpose), never silent: `explain` shows the union's coverage hunk by hunk."""
        if not any(step.provided_by or step.superseded_diffs or step.entry.supersedes for step in self.steps):
            return      # no union: nothing stands for a PR (and nothing of a union's checks is imported)
        from carrytool.pipeline.leftout import Folded, LeftOut

        by_id = {step.id: step for step in self.steps}
        trusted: dict[str, list[Folded]] = {}     # union id -> the PRs' files it changes: checked hunk by hunk
        for step in self.steps:
            kept: dict[str, set[str]] = {}
            for path, union_id in sorted(step.provided_by.items()):
                union = by_id.get(union_id)
                why = self._left_out(union, step.entry.number, step.all_changes, path) if union else None
                if why and union:
                    self._file_left_out(union, LeftOut(step.id, path, None, (), True, step.head or ""),
                                        f" for {path}", why)
                elif union and path in self._owned(union):
                    kept.setdefault(union_id, set()).add(path)
            for union_id, paths in kept.items():
                if step.base and step.head:
                    trusted.setdefault(union_id, []).append(
                        Folded(step.id, step.base, step.head, step.all_changes, frozenset(paths),
                               self._stale_fold(by_id[union_id], step.entry.number, step.head)))
        for union in self.steps:
            for number, changes in sorted(union.superseded_diffs.items()):
                paths = set()
                for path in paths_of(changes):
                    why = self._left_out(union, number, changes, path)
                    if why:
                        head = union.superseded_heads.get(number, ("", ""))[1]
                        self._file_left_out(union, LeftOut(f"pr/{number}", path, None, (), True, head), "", why)
                    elif path in self._owned(union):
                        paths.add(path)
                if number in union.superseded_heads:
                    base, head = union.superseded_heads[number]
                    trusted.setdefault(union.id, []).append(Folded(
                        f"pr/{number}", base, head, changes, frozenset(paths), self._stale_fold(union, number, head)))
        self.account_left_out(by_id, trusted)

    def account_left_out(self, by_id: dict[str, Step], trusted: dict[str, list[Folded]]) -> None:
        """Each hunk of a PR a union stands for, in a file the union changes, that the composed tree lacks
        and that is in no region the union had to reconcile (pipeline.provided: no other PR it folds, nor
        the union itself, changes those lines; a hunk partly there, for the lines it lacks): a `provided-absent`
        warning naming the lines (helper-128: a resolution that took one side dropped a third PR's method, and
        sync said nothing). Unless the union's
        `supersedes` declares it dropped on purpose (`drops`): then it is on the union's `dropped_on_purpose`;
        a declared drop that matches no such hunk is a `stale-drop` warning (helper-135)."""
        from carrytool.pipeline.leftout import UnionCheck
        from carrytool.pipeline.provided import judge_provided

        checks = []
        for union_id, folded in trusted.items():
            union = by_id[union_id]
            if union.base and union.head and self.tip:
                tip, onto = self._union_tree(union)
                checks.append((union_id, UnionCheck(union.base, union.head, union.all_changes, tip, tuple(folded),
                                                    onto)))
        judged = dict(zip([union_id for union_id, _c in checks], judge_provided(self.git, [c for _u, c in checks])))
        found = {union_id: provided.lost for union_id, provided in judged.items()}
        for union_id, provided in judged.items():
            by_id[union_id].provided = provided.verdicts()
            self._account_drops(by_id[union_id], provided.lost)
        for union in self.steps:       # no hunk to look for: every drop it declares matches nothing
            if union.id not in found and any(s.drops for s in union.entry.supersedes) and self.tip and \
                    union_judged(union):
                self._account_drops(union, [])

    def _union_tree(self, union: Step) -> tuple[str, str]:
        """Where UNION's PRs' hunks are looked for: the tree right after UNION's step (`tip`), composed on its
        parent (`onto`: upstream as sync found it, and the entries before), where it was applied; else the
        composed tree, on upstream. Not the union's base, nor later entries' lines (helper-176: upstream deleting
        a line after the union was made called a line the union holds lost, and adding one hid a loss). As a
        pair (tip, onto)."""
        if union.status == APPLIED and union.commit and union.parent:
            return union.commit, union.parent
        tip = self.tip or ""
        return tip, self.applied[0].parent or tip if self.applied else tip

    def _stale_fold(self, union: Step, number: int | None, head: str) -> str:
        """The older head of PR NUMBER that UNION folded, where the PR's head (HEAD) moved since (sync warns
        `stale-fold`) and the repository has it; else empty."""
        sup = next((s for s in union.entry.supersedes if s.pr == number), None)
        if sup is None or not sup.head or head.startswith(sup.head.lower()):
            return ""
        return self.git.commit_by_abbreviation(sup.head) or ""

    def _file_left_out(self, union: Step, lost: LeftOut, how: str, why: str) -> None:
        """A PR's file UNION leaves out (LOST, no lines: WHY says how): a `provided-absent` warning; where the
        union was applied and does not change the file, dropped on purpose when a drop without `in` covers it
        (helper-140: the docs' own `tests/**` drop was warned, and called stale), else the warning ends with the
        YAML that declares it."""
        from carrytool.pipeline.drops import account_drops, drop_hint

        if union_judged(union) and lost.file not in self._owned(union):
            if account_drops([lost], union.entry.supersedes).dropped:
                self._files_dropped.setdefault(union.id, []).append(lost)
                return
            self._files_absent.setdefault(union.id, []).append(lost)
            why += f"; if on purpose, {drop_hint(lost, union.entry.supersedes)}"
        self._absent(lost.pr, union.id, lost.file, how, why)

    def _account_drops(self, union: Step, found: list[LeftOut]) -> None:
        """FOUND, UNION's hunks the tree lacks verbatim, as `provided-absent` warnings (those absent), or dropped
        on purpose (its `drops`, which also cover the files it leaves out: _file_left_out); and, where UNION was
        applied (union_judged), each declared drop that covers none as a `stale-drop` warning."""
        from carrytool.pipeline.drops import account_drops, out_of_reach, unreached
        from carrytool.pipeline.leftout import RECONCILED

        drops = account_drops(self._files_dropped.get(union.id, []) + list(found), union.entry.supersedes)
        for lost in drops.absent:
            self.result.warnings.append({
                "kind": "provided-absent", "entry": lost.pr, "other": union.id, "file": lost.file,
                **({"lines": list(lost.lines)} if lost.lines else {}), **({"mode": lost.mode} if lost.mode else {}),
                "message": f"{union.id} supersedes {lost.pr} but the composed tree {lost.lacking('its')}, "
                           f"in no region {union.id} reconciled ({lost.region()}): {self._likely(union, lost)}"})
        union.reconciled = [(lost.pr, lost.file, lost.lines) for lost in found if lost.how == RECONCILED and
                            not any(lost is d for d, _drop in drops.dropped)]
        union.dropped_on_purpose = [{"pr": int(lost.pr.removeprefix("pr/")), "file": lost.file,
                                     "lines": list(lost.lines) if lost.lines else None, "scopes": list(lost.scopes),
                                     "in": drop.scope, "why": drop.why} for lost, drop in drops.dropped]
        absent = [*drops.absent, *self._files_absent.get(union.id, [])]
        for number, drop in drops.stale if union_judged(union) else ():
            lost = out_of_reach(number, drop, absent)
            why = unreached(lost, drop) if lost else "it lacks none of them verbatim: it carries them now, the PR " \
                "changed, or the file or scope is wrong; remove or fix the drop"
            self.result.warnings.append({
                "kind": "stale-drop", "entry": union.id, "pr": number, "file": drop.file, "in": drop.scope,
                "line": drop.line,
                "message": f"{union.id} declares pr/{number}'s hunks in {drop.describe()} dropped on purpose (manifest "
                           f"line {drop.line}), but {why}"})

    def _likely(self, union: Step, lost: LeftOut) -> str:
        """How UNION likely came to leave LOST out, and what to do, as a clause: a PR that gained it after the fold
        (a stale fold: no stop dropped it, a refold brings it; helper-159 on celery), else a stop of the fold."""
        from carrytool.pipeline.drops import drop_hint

        if lost.unfolded:
            return f"not in {lost.pr}'s head {union.id} folded ({lost.unfolded[:12]}): the PR moved since " \
                f"(stale-fold); refold the union (`carrytool union compose {shlex.quote(str(union.entry.name))}`)"
        return f"dropped at a stop of the fold? (explain shows {union.id}'s coverage; if on purpose, " \
            f"{drop_hint(lost, union.entry.supersedes)})"

    def _left_out(self, union: Step, number: int | None, changes: Sequence[Change], path: str) -> str | None:
        """How UNION, standing for PR NUMBER whose diff is CHANGES, leaves the PR's change at PATH out of
        the image (the warning's sentence after "UNION supersedes PR but"), or None when it does not."""
        pr, name = f"pr/{number}", union.entry.name
        if not union_judged(union):
            why = f"was not applied ({union.reason or union.status}): {pr}'s change to {path} is in no entry of " \
                  f"the build"
        else:
            if path not in self._owned(union):
                why = f"does not change {path}: {pr}'s change there is in neither (explain shows {union.id}'s coverage)"
            elif number is not None and not self._composed_with(union, number):
                named = " ".join(f"#{n}" for n in sorted(union.composed_with or ())) or "no PR"
                why = f"was not composed with it (its commit's Carry-Supersedes names {named}): {pr}'s change " \
                      f"to {path} is in no entry of the build (refold: carrytool union compose {name})"
            else:
                return None
        if not self._has(changes, path):
            return why
        if self.tip is not None and self.git.blob_at(self.git.tree_of(self.tip), path) is not None:
            union.has_anyway.add((pr, path))   # the tree holds it (not: upstream deleted the file, h219)
        return None

    def _owned(self, union: Step) -> set[str]:
        """The paths UNION's own diff changes: its PRs' hunks are looked for there (account_left_out); a file
        of theirs it leaves alone is the tree's as a whole (`_has`), after every entry."""
        if union.id not in self._union_paths:
            self._union_paths[union.id] = set(paths_of(union.all_changes))
        return self._union_paths[union.id]

    def _composed_with(self, union: Step, number: int) -> bool:
        return union.composed_with is None or number in union.composed_with

    def _has(self, changes: Sequence[Change], path: str) -> bool:
        """Whether the composed tree has the change CHANGES make at PATH (`has_change`)."""
        if self.tip is None:
            return False
        return has_change(self.git, self.tip, self.applied[0].parent if self.applied else None, changes, path)

    def _absent(self, pr: str, union: str, path: str, how: str, why: str) -> None:
        self.result.warnings.append({"kind": "provided-absent", "entry": pr, "other": union, "file": path,
                                     "message": f"{union} supersedes {pr}{how} but {why}"})


def has_change(git: Git, tip: str, start: str | None, changes: Sequence[Change], path: str) -> bool:
    """Whether the tree of TIP has the change CHANGES make at PATH: the file as they leave it; or a
    file of the same mode their change merges into without changing it, or where each blocks of lines
    their change adds stands at its place (upstream took the change and changed the file next to it,
    or elsewhere); or no file at a path they only modify that upstream (START: the commit the composition
    starts from; None: not known) has no more either (upstream moved or deleted it: where the change lands
    is upstream's rename to say, which explain's coverage follows; an entry that deleted it took the change
    away). Sync's check of a PR's file a union does not change, and `union continue`'s (union.fold)."""
    found = git.blob_at(git.tree_of(tip), path)
    if found == _wanted(changes, path):
        return True
    change = next((c for c in changes if c.path == path and c.status in ("M", "R", "A")), None)
    if change is None:
        return False
    if found is None:       # upstream moved or deleted the file (not an entry: that loses the change)
        return change.status == "M" and (start is None or git.blob_at(git.tree_of(start), path) is None)
    if found[0] != change.new_mode or not all(mode in REGULAR_MODES for mode in (found[0], change.new_mode)) \
            or (change.status != "A" and change.old_mode not in REGULAR_MODES):
        return False
    base = None if change.status == "A" else change.old_oid
    merged = git.merge_contents(found[1], base, change.new_oid)
    if merged is None:
        return False
    data = git.read_blob(found[1])
    if merged[0]:
        return merged[1] == data
    # a conflict: the tip changed lines next to the change (git's merge calls touching edits a
    # conflict). The change is there when every block of lines it adds stands in the tip and no block
    # it only removes does
    old = _lines_of(git.read_blob(base)) if base else []
    return _change_inside(old, _lines_of(git.read_blob(change.new_oid)), _lines_of(data))


def _lines_of(data: bytes) -> list[bytes]:
    """DATA's lines, without their newlines (a last line without one too)."""
    lines = data.split(b"\n")
    return lines[:-1] if lines and not lines[-1] else lines


def _change_inside(old: list[bytes], new: list[bytes], tip: list[bytes]) -> bool:
    """Whether the change OLD -> NEW (lines) stands in TIP: each block of lines it adds (blank lines aside)
    is in TIP as one block with the line before it or the one after it in NEW (its place: a line of the
    change put elsewhere is not the change), and each block it only removes is not in TIP."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if any(line.strip() for line in new[j1:j2]):
            placed = [new[max(j1 - 1, 0):j2], new[j1:j2 + 1]]
            if not any(find_block(tip, block) for block in placed):
                return False
        elif find_block(tip, old[i1:i2]):
            return False
    return True


def _wanted(changes: Sequence[Change], path: str) -> tuple[str, str] | None:
    """What CHANGES leave at PATH: (mode, oid), or None where they delete it or move it away."""
    for change in changes:
        if change.path == path:
            return None if change.status == "D" else (change.new_mode, change.new_oid)
        if change.old_path == path:
            return None
    return None
