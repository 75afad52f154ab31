"""Account for every hunk: landed or dropped when its entry is applied, survived or clobbered at the end.

Each applied entry's intended change is its own diff (base -> head) as hunks. When the entry is
applied, the composed step's diff (parent -> commit) must contain each hunk: its added lines in order,
its removed lines gone. Lines that landed are then followed, diff by diff, through every later step
(a sparse line -> owner ledger per file): a later step that removes them clobbers them. So does a later
step that brings back a file an entry deleted or changes a binary (or submodule) it set, and one resolved
`on_conflict: theirs` that adds lines an entry removed again at the place they were removed from. A step
resolved with `on_conflict: theirs` that removes upstream lines its own diff never removed loses upstream
content.

Both diffs are read in one batched `diff-tree -p` process (a step whose raw diff equals its entry's own
diff is read once); blobs are read only in the rare cases
where git's diff aligned a change differently (the fallback counts block occurrences instead).
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import EMPTY_TREE, REGULAR_MODES, Change, Git, paths_of
from carrytool.pipeline.dictkeys import adds_key, duplicate_keys, written_keys
from carrytool.pipeline.hunks import Hunk, find_block, is_subsequence_block, read_hunks
from carrytool.pipeline.keptfindings import KeptFindings
from carrytool.pipeline.plan import APPLIED, Step, union_judged
from carrytool.pipeline.provided import (
    RECONCILED,
    Folded,
    LeftOut,
    UnionCheck,
    account_drops,
    drop_hint,
    left_out,
    out_of_reach,
    unreached,
)
from carrytool.pipeline.shadowed import adds_definition, defined_names, shadowed_definitions
from carrytool.pipeline.unbound import binding_line, loose_names, unbound_names

Owner = tuple[int, int]          # (index of the applied step, index of its hunk)


_KEEPS_LINES = ("text", "rename", "mode")     # hunk kinds after which a file's owned lines are still there
_WHOLE = ("binary", "submodule", "file")        # hunk kinds that replace a file whole


@dataclass
class Accounting:
    failures: list[dict[str, object]] = field(default_factory=list)   # dropped / clobbered: exit 1
    warnings: list[dict[str, object]] = field(default_factory=list)   # identical-hunk, upstream-loss


@dataclass
class _Entry:
    step: Step
    own: list[Hunk]                  # the hunks it must land
    provided: list[Hunk]             # hunks in paths a union provides
    landed: dict[int, str] = field(default_factory=dict)          # hunk index -> how (applied|identical|...)
    dropped: list[dict[str, object]] = field(default_factory=list)
    clobbered: list[dict[str, object]] = field(default_factory=list)


class _Accountant:
    def __init__(self, git: Git, steps: Sequence[Step], tip: str | None = None,
                 findings: KeptFindings | None = None) -> None:
        self.git = git
        self.findings = findings       # what parsing the composed modules found before (pipeline.keptfindings)
        self.steps = list(steps)
        self.applied = [s for s in self.steps if s.status == APPLIED]
        self.tip = tip or (self.applied[-1].commit if self.applied else None)    # the composed commit
        self._union_paths: dict[str, set[str]] = {}     # union id -> the paths its own diff changes (_left_out)
        self._files_dropped: dict[str, list[LeftOut]] = {}  # union id -> the PRs' files its drops cover
        self._files_absent: dict[str, list[LeftOut]] = {}   # union id -> the PRs' files it leaves out, no drop covering
        self.ledger: dict[str, dict[int, Owner]] = {}
        # what else landed that a later step can undo: a file an entry deleted (path -> owner), a whole file
        # it set (binary, submodule, replaced: path -> owner), lines it only removed (path -> [(owner, lines)])
        self.gone: dict[str, Owner] = {}
        self.whole: dict[str, Owner] = {}
        self.modes: dict[str, tuple[Owner, str]] = {}             # an executable bit it set: path -> (owner, mode)
        self.removals: dict[str, list[tuple[Owner, tuple[bytes, ...], int]]] = {}   # ... and the line it follows
        self.renamed: dict[str, str] = {}                          # path -> where earlier steps moved it
        self.result = Accounting()
        self.entries: list[_Entry] = []
        self.landed_keys: dict[tuple, tuple[int, int]] = {}       # hunk key -> first owner that landed it
        self._blobs: dict[tuple[str, str], list[bytes] | None] = {}
        self.defining: set[str] = set()          # Python files where a landed hunk adds a def/class line
        self.keying: set[str] = set()            # ... where a landed hunk adds a line writing a dict key
        self.overridden: dict[tuple[int, str], None] = {}   # (step, Python file) where `theirs` lost upstream lines
        self._removed_names: dict[Owner, frozenset[str]] = {}      # _redefined
        self._here: dict[str, set[int]] = {}    # the current step's: path -> the lines its hunks were found at

    # -- reading -------------------------------------------------------------------------------------
    def lines_at(self, commit: str, path: str) -> list[bytes] | None:
        key = (commit, path)
        if key not in self._blobs:
            data = self.git.file_at(commit, path)
            self._blobs[key] = data.split(b"\n") if data is not None else None
        return self._blobs[key]

    def source_of(self, oid: str | None) -> bytes | None:
        if not oid or oid == ZERO:
            return None
        try:
            return self.git.read_blob(oid)
        except Exception:  # noqa: BLE001 - a missing blob only costs us a scope name
            return None

    # -- the run -------------------------------------------------------------------------------------
    def run(self) -> Accounting:
        intended_pairs = [(own_base(s) or EMPTY_TREE, s.head) for s in self.applied]
        # a PR applied as its own commits onto the PR it is stacked on (compose._on_its_lower) is accounted
        # for those commits' hunks: its whole change's hunks that hold the lower's lines beside its own were
        # nowhere as blocks (helper-121: "did not land", a red night, depending on the entries' order)
        stacked = [k for k, s in enumerate(self.applied) if own_base(s) != s.base]
        own = dict(zip(stacked, self.git.diff_trees([intended_pairs[k] for k in stacked]))) if stacked else {}
        intended_changes = [own.get(k, s.all_changes) for k, s in enumerate(self.applied)]
        applied_pairs = [(s.parent, s.commit) for s in self.applied]
        # what each step changed: known from composing for the fast path's steps (checked against both
        # trees, level by level down its paths: a step whose commit is not what composing says is asked
        # of git like any other), else one diff-tree
        tree_of = self.git.tree_of
        known = [s.applied_changes if s.applied_changes is not None and
                 self.git.changes_exactly(tree_of(s.parent), tree_of(s.commit), s.applied_changes)  # type: ignore[arg-type]
                 else None for s in self.applied]
        asked = iter(self.git.diff_trees([pair for pair, k in zip(applied_pairs, known) if k is None]))
        applied_changes = [next(asked) if k is None else list(k) for k in known]
        # a step that changed exactly the blobs its entry's own diff changes (upstream left those files
        # alone since the entry's base) has the same patch: read it once
        same = [list(mine) == changes for mine, changes in zip(intended_changes, applied_changes)]
        rest = [k for k, equal in enumerate(same) if not equal]
        everything = read_hunks(self.git, intended_pairs + [applied_pairs[k] for k in rest],
                                intended_changes + [applied_changes[k] for k in rest])
        intended, read = everything[:len(self.applied)], iter(everything[len(self.applied):])
        stepped = [intended[k] if equal else next(read) for k, equal in enumerate(same)]
        for index, (step, hunks, diff) in enumerate(zip(self.applied, intended, stepped)):
            hunks = hunks + _added_modes(intended_changes[index])
            filtered = set(step.filtered)
            entry = _Entry(step, [h for h in hunks if not _in(h, filtered)], [h for h in hunks if _in(h, filtered)])
            self.entries.append(entry)
            self.follow(index, diff)
            self.land(index, entry, diff)
        self.account_redundant()
        self.account_provided()
        self.account_shadowed()
        self.account_duplicate_keys()
        self.account_unbound()
        for entry in self.entries:
            entry.step.landing = self.summary(entry)
        return self.result

    # -- following lines through a step's diff --------------------------------------------------------
    def follow(self, index: int, diff: list[Hunk]) -> None:
        """Move every owned line through step INDEX's diff; lines it removes are clobbered (or lost)."""
        step = self.applied[index]
        by_file: dict[str, list[Hunk]] = {}
        for hunk in diff:
            if hunk.old_path and hunk.old_path != hunk.path:
                if hunk.old_path in self.ledger:
                    self.ledger[hunk.path] = self.ledger.pop(hunk.old_path)
                for kept in (self.whole, self.removals, self.modes):
                    if hunk.old_path in kept:
                        kept[hunk.path] = kept.pop(hunk.old_path)  # type: ignore[assignment]
                for source, target in list(self.renamed.items()):
                    if target == hunk.old_path:
                        self.renamed[source] = hunk.path
                self.renamed[hunk.old_path] = hunk.path
            by_file.setdefault(hunk.path, []).append(hunk)
        set_whole = {path for path in by_file if path in self.whole or path in self.gone}   # (before undone)
        set_mode = {path for path in by_file if path in self.modes}     # an entry's bit: undone says its loss
        self.undone(index, step, by_file)
        for path, hunks in by_file.items():        # where lines other entries removed are now
            if path in self.removals:
                text = sorted((h for h in hunks if h.kind == "text"), key=lambda h: h.old_start)
                self.removals[path] = [(owner, lines, _moved_gap(gap, text))
                                       for owner, lines, gap in self.removals[path]]
        intended_removed = self.intended_removed(index)
        for path, hunks in by_file.items():
            text_hunks = sorted((h for h in hunks if h.kind == "text"), key=lambda h: h.old_start)
            owned = self.ledger.get(path, {})
            # a pure rename or a mode change moves or keeps every line: only the other whole-file kinds
            # (binary, submodule, a file replaced) take the owned lines with them
            if any(h.kind not in _KEEPS_LINES for h in hunks) and owned:
                whole = [h for h in hunks if h.kind not in _KEEPS_LINES][0]
                self.clobber(index, path, sorted(owned.items()), whole)
                self.ledger[path] = {}
                continue
            if step.resolution and path not in set_whole and any(h.kind in _WHOLE for h in hunks):
                self.upstream_replaced(index, path)
            if step.resolution and path not in set_mode and any(h.kind == "mode" for h in hunks):
                self.upstream_mode_replaced(index, path, next(h.new_mode for h in hunks if h.kind == "mode"))
            removed: list[tuple[int, Owner | None, bytes]] = []
            for hunk in text_hunks:
                for k in range(hunk.old_count if hunk.removed else 0):
                    line = hunk.old_start + k
                    removed.append((line, owned.pop(line, None), hunk.removed[k]))
            self.ledger[path] = _shift(owned, text_hunks)
            lost = [(line, owner) for line, owner, _text in removed if owner is not None and owner[0] != index]
            if lost:
                self.clobber(index, path, lost, None)
            if step.resolution:
                self.upstream_loss(index, path, removed, intended_removed.get(path, Counter()))

    def undone(self, index: int, step: Step, by_file: dict[str, list[Hunk]]) -> None:
        """What step INDEX undoes of earlier entries beyond their added lines: a file one deleted that it
        brings back, a whole file one set (binary, submodule) that it changes, and, resolved with
        `on_conflict: theirs` (a clean merge cannot bring them back), lines one only removed that a hunk of
        it at the place they were removed from (followed through every step since) adds again."""
        for path, hunks in by_file.items():
            owner = self.gone.get(path)
            if owner is not None and owner[0] != index and any(h.new_oid and h.new_oid != ZERO for h in hunks):
                del self.gone[path]
                self.clobber(index, path, [(1, owner)], None, how="brought the file it deleted back")
            owner = self.whole.get(path)
            if owner is not None and owner[0] != index and any(h.kind not in ("rename", "mode") for h in hunks):
                del self.whole[path]
                self.clobber(index, path, [(1, owner)], None, how="replaced the whole file")
            kept = self.modes.get(path)
            if kept is not None and kept[0][0] != index and any(h.kind == "mode" and h.new_mode != kept[1]
                                                                  for h in hunks):
                del self.modes[path]
                back = next(h.new_mode for h in hunks if h.kind == "mode")
                self.clobber(index, path, [(1, kept[0])], None, how=f"set its mode to {back} again")
            if not step.resolution:
                continue
            for owner, lines, gap in list(self.removals.get(path, [])):
                if owner[0] == index:
                    continue
                for hunk in hunks:               # a hunk of this step at the place they were removed, adding them
                    spot = find_block(hunk.added, lines) if hunk.kind == "text" and _at_gap(hunk, gap) else []
                    if spot:
                        self.removals[path].remove((owner, lines, gap))
                        first = hunk.new_start + spot[0]
                        self.clobber(index, path, [(first, owner), (first + len(lines) - 1, owner)], None,
                                     how=f"brought back lines {first}-{first + len(lines) - 1} it had removed")
                        break

    def intended_removed(self, index: int) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        entry_hunks = self.entries[index].own        # run() registers the entry before follow()
        for hunk in entry_hunks:
            out.setdefault(hunk.path, Counter()).update(hunk.removed)
        return out

    def clobber(self, index: int, path: str, lines: list[tuple[int, Owner]], whole: Hunk | None,
                how: str | None = None) -> None:
        by = self.applied[index]
        groups: dict[Owner, list[int]] = {}
        for line, owner in lines:
            groups.setdefault(owner, []).append(line)
        prev_lines = self.lines_at(by.parent, path) if by.parent else None  # type: ignore[arg-type]
        source = b"\n".join(prev_lines) if prev_lines is not None else None
        # loaded here: only a failed check names scopes
        from carrytool.pipeline.scopes import scope_at

        for (step_index, hunk_index), numbers in sorted(groups.items()):
            victim = self.entries[step_index]
            first, last = min(numbers), max(numbers)
            scope = scope_at(source, first) if source is not None and path.endswith(".py") else None
            what = how or ("replaced the whole file" if whole else f"removed lines {first}-{last}" if last != first
                           else f"removed line {first}")
            record = {"file": path, "by": by.id, "lines": [first, last], "scope": scope,
                      "message": f"{victim.step.id}'s change to {path}{f' ({scope})' if scope else ''} was "
                                 f"clobbered: {by.id} {what}" +
                                 (f" (on_conflict: {by.resolution})" if by.resolution else "")}
            if victim.step.id in by.built_over:
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
                "message": f"{step.id} (on_conflict: {step.resolution}) overrode {len(lost)} upstream line(s) of "
                           f"{path} at {min(lost)}-{max(lost)} that its own diff never changed: possible "
                           "upstream content loss"})

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

    # -- landing --------------------------------------------------------------------------------------
    def land(self, index: int, entry: _Entry, diff: list[Hunk]) -> None:
        step = entry.step
        self._current = step
        self._here = {}
        applied_by_file: dict[str, list[Hunk]] = {}
        for hunk in diff:
            applied_by_file.setdefault(hunk.path, []).append(hunk)
        used: dict[int, set[int]] = {}       # id(applied hunk) -> the offsets of its added lines matched
        claimed: Counter = Counter()
        for hunk_index, hunk in enumerate(entry.own):
            how = self.match(hunk, applied_by_file.get(self.renamed.get(hunk.path, hunk.path), []), used)
            if how is None:   # the merge followed a rename (by upstream or an earlier entry)
                others = [h for h in diff if h.path != self.renamed.get(hunk.path, hunk.path)]
                how = self.match(hunk, others, used) if hunk.kind == "text" else \
                    self._mode_moved(hunk, others, {h.path for h in entry.own}) if hunk.kind == "mode" else None
            placed: tuple[int, int, str] | None = None        # (first line, lines, the path it is at)
            if isinstance(how, tuple):
                placed, how = how, "applied"
            # a change the entry's own diff holds twice (at two places) is two hunks to land, not an entry
            # overlapping itself (helper-146/147: "carry/zero-union and carry/zero-union carry the same hunk",
            # upstream having both): each copy is accounted at its place, as any hunk
            if how is None and self.landed_keys.get(hunk.key, (index,))[0] != index:
                owner_step, _ = self.landed_keys[hunk.key]
                how = "identical"
                stacked = self.applied[owner_step].id in step.built_over
                # a stack repeats its lower's hunks by construction
                self.result.warnings += [] if stacked else [
                    _identical(step.id, self.applied[owner_step].id, hunk, ": it is applied once")]
            if how is None:
                placed = self.fallback(step, hunk, claimed) or self.slid(step, hunk, claimed)
                how = "applied" if placed else None
            if how is None and hunk.new_oid == ZERO and hunk.kind == "text" and self.whole_file_landed(hunk):
                how = "applied"    # the file is gone, as the entry deleted it: lines an earlier entry changed in
                # it are that entry's loss (clobbered), not a deletion that did not land (helper-124)
            if how is None and self.already_present(step, hunk):
                how = "present"
            if how is None:
                self.drop(index, entry, hunk)
                continue
            entry.landed[hunk_index] = how
            self.landed_keys.setdefault(hunk.key, (index, hunk_index))
            if how == "applied":
                self.keep_undoable(hunk, (index, hunk_index), placed)
            if placed and hunk.added:
                self._here.setdefault(placed[2], set()).update(range(placed[0], placed[0] + len(hunk.added)))
                # owned where it landed: upstream may have moved the file since the entry's base (helper-106:
                # its lines were kept under the entry's own path, which the later steps' diffs never name)
                ledger = self.ledger.setdefault(placed[2], {})
                for line in range(placed[0], placed[0] + len(hunk.added)):
                    ledger[line] = (index, hunk_index)
                if placed[2].endswith(".py") and adds_definition(hunk.added, hunk.removed):
                    self.defining.add(placed[2])
                if placed[2].endswith(".py") and adds_key(hunk.added, hunk.removed):
                    self.keying.add(placed[2])

    def _mode_moved(self, hunk: Hunk, others: list[Hunk], own: set[str]) -> tuple[int, int, str] | None:
        """Where the step set HUNK's mode on a file the entry's own change does not name: upstream moved
        the file since the entry's base, and the merge followed (helper-127: "run.sh (mode change) did not
        land", its bit and its lines being at bin/run.sh). (0, 0, that path), or None."""
        return next(((0, 0, h.path) for h in others if h.kind == "mode" and h.new_mode == hunk.new_mode
                     and h.path not in own), None)

    def keep_undoable(self, hunk: Hunk, owner: Owner, placed: tuple[int, int, str] | None) -> None:
        """Note what of a landed HUNK a later step could undo beyond its added lines (`undone`); PLACED: for
        lines it only removed, (the line of the step's result they followed, 0)."""
        path = self.renamed.get(hunk.path, hunk.path)
        if hunk.new_oid == ZERO:
            self.gone[path] = owner                   # a deletion: its removed lines are the whole file
        elif hunk.kind in ("binary", "submodule"):    # not "file": an empty file added has no lines to own
            self.whole[path] = owner
        elif hunk.kind == "mode":
            self.modes[placed[2] if placed else path] = (owner, hunk.new_mode)     # type: ignore[assignment]
        elif hunk.kind == "text" and hunk.removed and not hunk.added and placed is not None and \
                not all(_trivial(line) for line in hunk.removed):
            self.removals.setdefault(path, []).append((owner, hunk.removed, placed[0]))

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
        if hunk.kind != "text" or not hunk.added or all(_trivial(line) for line in hunk.added):
            return False
        before = self.lines_at(step.parent, path) or []  # type: ignore[arg-type]
        after = self.lines_at(step.commit, path) or []   # type: ignore[arg-type]
        return bool(find_block(before, hunk.added)) and bool(find_block(after, hunk.added))

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

    def drop(self, index: int, entry: _Entry, hunk: Hunk) -> None:
        step = entry.step
        source = self.source_of(hunk.new_oid)
        # loaded here: only a failed check names scopes
        from carrytool.pipeline.scopes import scope_names

        scopes = scope_names(hunk.path, source, [hunk.span]) if hunk.kind == "text" else []
        near = sorted({self.applied[o[0]].id for o in self.ledger.get(hunk.path, {}).values()
                       if o[0] != index})
        where = f" ({', '.join(scopes)})" if scopes else ""
        blame = f"; earlier entries own lines of {hunk.path}: {', '.join(near)}" if near else ""
        record = {"file": hunk.path, "lines": list(hunk.span), "scope": scopes[0] if scopes else None,
                  "near": near,
                  "message": f"{step.id}'s hunk {hunk.describe()}{where} did not land: the composed result does "
                             f"not contain it{blame}"}
        entry.dropped.append(record)
        self.result.failures.append({"kind": "dropped", "entry": step.id, **record})

    def account_shadowed(self) -> None:
        """A definition an entry landed that the composed module defines again in the same scope, by another
        entry or upstream (pipeline.shadowed): both hunks landed, and one of them is dead code. A warning:
        nothing was dropped, and the composed file is what the merges made."""
        if not self.tip or not self.defining:
            return
        owners: dict[str, dict[int, tuple[str, frozenset[str]]]] = {}
        for path in dict.fromkeys(self.renamed.get(p, p) for p in sorted(self.defining)):   # a later step moved it
            owners[path] = {line: (self.applied[step].id, self._redefined(step, hunk))
                            for line, (step, hunk) in self.ledger.get(path, {}).items()}
        self.result.warnings += shadowed_definitions(self.git, self.tip, owners, self.findings)

    def account_duplicate_keys(self) -> None:
        """A key an entry landed in a dict display that the composed module writes again in the same display,
        by another entry or upstream (pipeline.dictkeys): the later value wins, the earlier is dead. A warning,
        as `account_shadowed`'s."""
        if not self.tip or not self.keying:
            return
        removed: dict[Owner, tuple[str, frozenset[object]]] = {}      # each hunk's keys, read once
        for owner in {o for p in self.keying for o in self.ledger.get(self.renamed.get(p, p), {}).values()}:
            step, hunk = owner
            removed[owner] = (self.applied[step].id, written_keys(self.entries[step].own[hunk].removed))
        owners = {path: {line: removed[owner] for line, owner in self.ledger.get(path, {}).items()}
                  for path in dict.fromkeys(self.renamed.get(p, p) for p in sorted(self.keying))}
        self.result.warnings += duplicate_keys(self.git, self.tip, owners, self.findings)

    def account_unbound(self) -> None:
        """A name the composed module loads that nothing binds any more, where an `on_conflict: theirs` step
        overrode upstream lines (pipeline.unbound): bound (or unused) before that step and in the entry's own
        version, unbound after it and at the tip. The binding the step's resolution dropped is named."""
        for index, path in self.overridden:
            at = self.renamed.get(path, path)
            tip = self.git.file_at(self.tip, at) if self.tip else None     # type: ignore[arg-type]
            loose = unbound_names(tip) if tip is not None else None
            if not loose:
                continue
            step = self.applied[index]
            versions = [self.git.file_at(commit, path) if commit else None   # type: ignore[arg-type]
                        for commit in (step.commit if step.commit != self.tip else None, step.parent, step.head)]
            after, before, own = [loose_names(data) if data is not None else frozenset() for data in versions]
            if after is None or before is None or own is None:
                continue
            for name, line in sorted(loose.items(), key=lambda item: item[1]):
                if (versions[0] is None or name in after) and name not in before and name not in own:
                    self.result.warnings.append(self._unbound(step, at, name, line, versions[1]))

    def _unbound(self, step: Step, path: str, name: str, line: int, before: bytes | None) -> dict[str, object]:
        bound = binding_line(before, name) if before is not None else None
        text = before.split(b"\n")[bound - 1].strip().decode("utf-8", "replace") if before and bound else None
        dropped = f" dropped `{text}` (line {bound} before it)" if text else " dropped its binding"
        return {"kind": "unbound-name", "entry": step.id, "file": path, "name": name, "line": line,
                "dropped": {"line": bound, "text": text} if text else None,
                "message": f"{path} uses {name} at line {line}, which nothing binds any more: {step.id} "
                           f"(on_conflict: {step.resolution}){dropped}; the module raises NameError when line "
                           f"{line} runs"}

    def _redefined(self, step: int, hunk: int) -> frozenset[str]:
        """The names hunk HUNK of applied step STEP removes a definition of: a def line it rewrites (a new
        signature) defines nothing new (helper-106: upstream's own pair was blamed on the PR)."""
        key = (step, hunk)
        found = self._removed_names.get(key)
        if found is None:
            found = self._removed_names[key] = defined_names(self.entries[step].own[hunk].removed)
        return found

    # -- redundant entries ----------------------------------------------------------------------------
    def account_redundant(self) -> None:
        """Name what provides a redundant entry: the applied entries carrying the same hunks."""
        redundant = [s for s in self.steps if s.reason == "redundant" and s.head and s.changes]
        if not redundant:
            return
        pairs = [(s.base or EMPTY_TREE, s.head) for s in redundant]
        for step, hunks in zip(redundant, read_hunks(self.git, pairs, [s.all_changes for s in redundant])):
            filtered = set(step.filtered)
            providers: dict[str, None] = {}
            complete = True
            for hunk in (h for h in hunks if not _in(h, filtered)):
                owner = self.landed_keys.get(hunk.key)
                if owner is None:
                    complete = False
                    continue
                providers.setdefault(self.applied[owner[0]].id, None)
                self.result.warnings.append(_identical(step.id, self.applied[owner[0]].id, hunk))
            if complete and providers:
                step.redundant_with = list(providers)
                step.detail = f"every hunk it carries is already applied by {', '.join(providers)}"

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
                elif union:
                    kept.setdefault(union_id, set()).add(path)
            for union_id, paths in kept.items():
                if step.base and step.head:
                    trusted.setdefault(union_id, []).append(
                        Folded(step.id, step.base, step.head, step.all_changes, frozenset(paths)))
        for union in self.steps:
            for number, changes in sorted(union.superseded_diffs.items()):
                paths = set()
                for path in paths_of(changes):
                    why = self._left_out(union, number, changes, path)
                    if why:
                        head = union.superseded_heads.get(number, ("", ""))[1]
                        self._file_left_out(union, LeftOut(f"pr/{number}", path, None, (), True, head), "", why)
                    else:
                        paths.add(path)
                if number in union.superseded_heads:
                    base, head = union.superseded_heads[number]
                    trusted.setdefault(union.id, []).append(Folded(f"pr/{number}", base, head, changes,
                                                                   frozenset(paths)))
        self.account_left_out(by_id, trusted)

    def account_left_out(self, by_id: dict[str, Step], trusted: dict[str, list[Folded]]) -> None:
        """Each hunk of a PR a union stands for, in a file the union changes, that the composed tree lacks
        and that is in no region the union had to reconcile (pipeline.provided: no other PR it folds, nor
        the union itself, changes those lines): a `provided-absent` warning naming the lines (helper-128: a
        resolution that took one side dropped a third PR's method, and sync said nothing). Unless the union's
        `supersedes` declares it dropped on purpose (`drops`): then it is on the union's `dropped_on_purpose`;
        a declared drop that matches no such hunk is a `stale-drop` warning (helper-135)."""
        checks = [(union_id, UnionCheck(union.base, union.head, union.all_changes, self.tip, tuple(folded)))
                  for union_id, folded in trusted.items()
                  for union in [by_id[union_id]] if union.base and union.head and self.tip]
        found = dict(zip([union_id for union_id, _c in checks], left_out(self.git, [c for _u, c in checks])))
        for union_id, lost in found.items():
            self._account_drops(by_id[union_id], lost)
        for union in self.steps:       # no hunk to look for: every drop it declares matches nothing
            if union.id not in found and any(s.drops for s in union.entry.supersedes) and self.tip and \
                    union_judged(union):
                self._account_drops(union, [])

    def _file_left_out(self, union: Step, lost: LeftOut, how: str, why: str) -> None:
        """A PR's file UNION leaves out (LOST, no lines: WHY says how): a `provided-absent` warning; where the
        union was applied and does not change the file, dropped on purpose when a drop without `in` covers it
        (helper-140: the docs' own `tests/**` drop was warned, and called stale), else the warning ends with the
        YAML that declares it."""
        if union_judged(union) and lost.file not in self._union_paths.get(union.id, ()):
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
        drops = account_drops(self._files_dropped.get(union.id, []) + list(found), union.entry.supersedes)
        for lost in drops.absent:
            self.result.warnings.append({
                "kind": "provided-absent", "entry": lost.pr, "other": union.id, "file": lost.file,
                **({"lines": list(lost.lines)} if lost.lines else {}),
                "message": f"{union.id} supersedes {lost.pr} but the composed tree {lost.lacking('its')}, "
                           f"in no region {union.id} reconciled ({lost.region()}): "
                           f"dropped at a stop of the fold? (explain shows {union.id}'s coverage; if on purpose, "
                           f"{drop_hint(lost, union.entry.supersedes)})"})
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

    def _left_out(self, union: Step, number: int | None, changes: Sequence[Change], path: str) -> str | None:
        """How UNION, standing for PR NUMBER whose diff is CHANGES, leaves the PR's change at PATH out of
        the image (the warning's sentence after "UNION supersedes PR but"), or None when it does not."""
        pr, name = f"pr/{number}", union.entry.name
        if not union_judged(union):
            why = f"was not applied ({union.reason or union.status}): {pr}'s change to {path} is in no entry of " \
                  f"the build"
        else:
            own = self._union_paths.get(union.id)
            if own is None:
                own = self._union_paths[union.id] = set(paths_of(union.all_changes))
            if path not in own:
                why = f"does not change {path}: {pr}'s change there is in neither (explain shows {union.id}'s coverage)"
            elif number is not None and not self._composed_with(union, number):
                named = " ".join(f"#{n}" for n in sorted(union.composed_with or ())) or "no PR"
                why = f"was not composed with it (its commit's Carry-Supersedes names {named}): {pr}'s change " \
                      f"to {path} is in no entry of the build (refold: carrytool union compose {name})"
            else:
                return None
        return None if self._has(changes, path) else why

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

    def summary(self, entry: _Entry) -> dict[str, object]:
        clobbered_hunks = len({(c["file"], tuple(c["lines"])) for c in entry.clobbered})  # type: ignore[arg-type]
        provided: dict[str, int] = {}
        for hunk in entry.provided:
            union = entry.step.provided_by.get(hunk.path) or entry.step.provided_by.get(hunk.old_path or "", "?")
            provided[union] = provided.get(union, 0) + 1
        data: dict[str, object] = {
            "hunks": len(entry.own) + len(entry.provided),
            "landed": len(entry.landed),
            "dropped": entry.dropped,
            # the contract's `clobbered` fails the run; a stacked PR's edit of its lower's lines does not
            # (helper-133: a CI reading `clobbered != []` failed an ok run): `stacked_edits`, apart
            "clobbered": [c for c in entry.clobbered if not c.get("stacked")],
        }
        stacked = [c for c in entry.clobbered if c.get("stacked")]
        if stacked:
            data["stacked_edits"] = stacked
        if provided:
            data["provided"] = [{"by": by, "hunks": n} for by, n in provided.items()]
        identical = sum(1 for how in entry.landed.values() if how == "identical")
        if identical:
            data["identical"] = identical
        data["survived"] = max(0, len(entry.landed) - clobbered_hunks)
        return data


def own_base(step: Step) -> str | None:
    """Where the change STEP applied starts: the head of the PR it is stacked on when it was applied as its
    own commits onto it, else its base."""
    return step.stacked_onto[1] if step.stacked_onto else step.base


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


def _trivial(line: bytes) -> bool:
    """A line that says nothing on its own: blank, or only brackets and punctuation."""
    return not line.strip(b" \t\r()[]{}:;,.#")


def _identical(entry: str, other: str, hunk: Hunk, tail: str = "") -> dict[str, object]:
    """The identical-hunk warning for HUNK, which ENTRY and OTHER both carry; a change that is not lines
    says which (`change`, and a mode change its `mode`), so a line grouping them can say so (helper-136:
    a mode change read as a bare path there)."""
    warning: dict[str, object] = {"kind": "identical-hunk", "entry": entry, "other": other, "file": hunk.path,
                                  "lines": list(hunk.span)}
    if hunk.kind != "text":
        warning["change"] = hunk.kind
    if hunk.kind == "mode":
        warning["mode"] = hunk.new_mode
    warning["message"] = f"{entry} and {other} carry the same hunk in {hunk.describe()}{tail}"
    return warning


def _added_modes(changes: Sequence[Change]) -> list[Hunk]:
    """A "mode" hunk for each executable file CHANGES add: the bit is a change of its own, as it is on a
    file they edit (parse_patch) (helper-136: a file both added, resolved `theirs`, kept upstream's mode)."""
    return [Hunk(c.path, 0, 0, 0, 0, (), (), "mode", c.old_path, c.new_oid, c.new_mode)
            for c in changes if c.status == "A" and c.new_mode == "100755"]


def _in(hunk: Hunk, paths: set[str]) -> bool:
    return hunk.path in paths or (hunk.old_path is not None and hunk.old_path in paths)


def _block_at(block: Sequence[bytes], within: Sequence[bytes], taken: set[int]) -> int:
    """Where BLOCK occurs in WITHIN on lines no earlier hunk matched (TAKEN): the first such place after
    the last line taken, else the first anywhere; -1 when none is free. Two hunks adding the same lines
    never both match one place (both were put at the first when upstream had shifted the file, and the
    second place, unowned, could be clobbered unseen: an adversarial review)."""
    free = [at for at in find_block(within, block) if taken.isdisjoint(range(at, at + len(block)))]
    after = [at for at in free if at > max(taken, default=-1)]
    return (after or free or [-1])[0]


def _at_gap(hunk: Hunk, gap: int) -> bool:
    """Whether HUNK (of a later step) changes the place after old line GAP: it replaces line GAP or GAP+1,
    or inserts right there."""
    if hunk.old_count:
        return hunk.old_start - 1 <= gap <= hunk.old_start + hunk.old_count - 1
    return hunk.old_start == gap


def _moved_gap(gap: int, hunks: list[Hunk]) -> int:
    """The place after old line GAP once HUNKS (sorted by old_start) were applied: shifted by the hunks
    before it, or after the replacement of a hunk that covers it."""
    delta = 0
    for hunk in hunks:
        if _at_gap(hunk, gap):
            return hunk.new_start + hunk.new_count - 1 if hunk.new_count else hunk.new_start
        end = hunk.old_start + hunk.old_count - 1 if hunk.old_count else hunk.old_start
        if end > gap:
            break
        delta += hunk.new_count - hunk.old_count
    return gap + delta


def _shift(owned: dict[int, Owner], hunks: list[Hunk]) -> dict[int, Owner]:
    """Renumber surviving lines after HUNKS (sorted by old_start) were applied."""
    if not owned or not hunks:
        return owned
    thresholds, deltas, total = [], [], 0
    for hunk in hunks:
        last_old = hunk.old_start + hunk.old_count - 1 if hunk.old_count else hunk.old_start
        total += hunk.new_count - hunk.old_count
        thresholds.append(last_old)
        deltas.append(total)
    out = {}
    for line, owner in owned.items():
        k = bisect.bisect_left(thresholds, line) - 1
        out[line + (deltas[k] if k >= 0 else 0)] = owner
    return out


def account(git: Git, steps: Sequence[Step], tip: str | None = None, findings: KeptFindings | None = None
            ) -> Accounting:
    """Set `landing` on every applied step; return dropped/clobbered failures and warnings. TIP: the
    composed commit (the last applied entry's, or upstream when none applied). FINDINGS: what earlier runs
    found parsing the composed modules (pipeline.keptfindings)."""
    return _Accountant(git, steps, tip, findings).run()
