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
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import EMPTY_TREE, Change, Git
from carrytool.pipeline.hunks import Hunk, find_block, line_span, read_hunks, says_nothing
from carrytool.pipeline.keptfindings import KeptFindings
from carrytool.pipeline.landing_clobbers import _Clobbers
from carrytool.pipeline.landing_match import _Matching
from carrytool.pipeline.landing_parsed import _ParsedChecks
from carrytool.pipeline.landing_provided import _ProvidedAccounting, has_change
from carrytool.pipeline.landing_records import Accounting, Owner, _Entry, own_base
from carrytool.pipeline.plan import APPLIED, Step
from carrytool.pipeline.pyadds import adds_definition, adds_key

if TYPE_CHECKING:
    from carrytool.pipeline.leftout import LeftOut

__all__ = ["Accounting", "Owner", "account", "has_change", "own_base"]     # (has_change: union.fold's)

_KEEPS_LINES = ("text", "rename", "mode")     # hunk kinds after which a file's owned lines are still there
_WHOLE = ("binary", "submodule", "file")        # hunk kinds that replace a file whole


class _Accountant(_Matching, _Clobbers, _ParsedChecks, _ProvidedAccounting):
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
                self.clobber(index, path, lost, None, hunks=text_hunks, elsewhere=diff)
            if step.resolution:
                self.upstream_loss(index, path, removed, intended_removed.get(path, Counter()))

    def undone(self, index: int, step: Step, by_file: dict[str, list[Hunk]]) -> None:
        """What step INDEX undoes of earlier entries beyond their added lines: a file one deleted that it
        brings back, a whole file one set (binary, submodule) that it changes, and lines one only removed that
        a hunk of it at the place they were removed from (followed through every step since) adds again:
        resolved `on_conflict: theirs`, or merged cleanly from a base that lacks them already (h271: upstream's
        revert of a PR that deletes a function, carried after it, put the function back, and nothing was said);
        a hunk that adds exactly those lines and removes none is its revert."""
        for path, hunks in by_file.items():
            owner = self.gone.get(path)
            if owner is not None and owner[0] != index and any(h.new_oid and h.new_oid != ZERO for h in hunks):
                del self.gone[path]
                self.clobber(index, path, [(1, owner)], None, how="brought the file it deleted back",
                             reverts=self._deleted_as(owner, path, hunks))
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
            for owner, lines, gap in list(self.removals.get(path, [])):
                if owner[0] == index:
                    continue
                for hunk in hunks:               # a hunk of this step at the place they were removed, adding them
                    spot = find_block(hunk.added, lines) if hunk.kind == "text" and _at_gap(hunk, gap) else []
                    if spot:
                        self.removals[path].remove((owner, lines, gap))
                        first = hunk.new_start + spot[0]
                        self.clobber(index, path, [(first, owner), (first + len(lines) - 1, owner)], None,
                                     how=f"brought back {line_span(first, first + len(lines) - 1)} it had removed",
                                     reverts=hunk.added == lines and not hunk.removed, numbered_after=True)
                        break

    def _deleted_as(self, owner: Owner, path: str, hunks: list[Hunk]) -> bool:
        """Whether HUNKS bring PATH back as the blob the entry of OWNER deleted (the one its base has): its
        revert (helper-271: upstream's revert of a PR deleting a file, carried after it)."""
        back = {h.new_oid for h in hunks if h.new_oid and h.new_oid != ZERO}
        base = own_base(self.entries[owner[0]].step)
        was = self.git.blob_at(self.git.tree_of(base), path) if base else None
        return was is not None and back == {was[1]}

    def intended_removed(self, index: int) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        entry_hunks = self.entries[index].own        # run() registers the entry before follow()
        for hunk in entry_hunks:
            out.setdefault(hunk.path, Counter()).update(hunk.removed)
        return out

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
                not all(says_nothing(line) for line in hunk.removed):
            self.removals.setdefault(path, []).append((owner, hunk.removed, placed[0]))

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
