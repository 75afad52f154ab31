"""What a union leaves out of the PRs it stands for, hunk by hunk (helper-128: lost work nothing named).

A union folds PRs and its maintainer resolves where they meet; the per-path check (landing.account_provided)
trusts a union for every file it changes. Here each hunk of a folded PR in such a file is looked for in
the tree that should hold it (the composed tip; the union's own commit for `union continue`): its added
lines (blank or bracket-only lines at either end aside) as one block, within the def/class they belong to
when the tip still has a def/class of each of those names (a line the same text in another method is not
the PR's: helper-131), anywhere in the file otherwise. Where the block is not there, most of its lines that
say something (two thirds, at least two) standing there compared loosely (_re_expressed) mean the union
carries the change in another form: renamed, moved, reformatted, tweaked (helper-131: the vLLM union's own
version of #45612's test). A hunk not there is left out unless it lies in a region the union had to
reconcile: one that another folded PR's hunk, or the union's own, changes too (their lines meet or touch
in the same base file, as git's merge sees a conflict), in the same def/class for Python (explain's coverage: `re-expressed`). Where the base
files differ and lines cannot be compared, the union's scopes decide (outside Python: that it changes
the file at all), as coverage's classification does. A hunk that only removes lines is left out when the
tip still holds them where the PR removes them (_still_there: in the def/class they lay in, else between
the same neighbours) more often than the PR's head does (helper-144: a deletion the union dropped was
called re-expressed, and its drop stale); the same line standing elsewhere is no loss.

A hunk left out that the union's `supersedes` item declares dropped on purpose (`drops`: file, scope, why)
is not left out but accounted as dropped (account_drops); a declared drop that matches no hunk left out is
stale (helper-135: a maintainer's deliberate drop was warned every night, and nothing said why).

One batched `diff-tree -p` for every PR and union; blobs through the long-lived `cat-file --batch`;
the PRs' Python files parsed by the pieces around their hunks (pipeline.scopes), the tip's wholly where a
hunk lies in a def/class (each distinct piece once, and cached on disk).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change, Git
from carrytool.manifest.edit import flow_scalar
from carrytool.manifest.model import Drop, Supersede
from carrytool.manifest.paths import literal_pattern, matches
from carrytool.pipeline.hunks import Hunk, find_block, read_hunks
from carrytool.pipeline.scopes import SpanCache, hunk_reach, is_python


@dataclass(frozen=True)
class Folded:
    """A PR a union stands for: its id, its own diff (BASE -> HEAD: CHANGES) and the files to look in."""

    id: str
    base: str
    head: str
    changes: Sequence[Change]
    paths: frozenset[str]


@dataclass(frozen=True)
class UnionCheck:
    """A union's own diff (BASE -> HEAD: CHANGES), the tree its PRs' hunks must stand in, and its PRs."""

    base: str
    head: str
    changes: Sequence[Change]
    tip: str
    folded: tuple[Folded, ...]


VERBATIM, ABSENT, RECONCILED, RE_EXPRESSED = "verbatim", "absent", "reconciled", "re-expressed"


@dataclass(frozen=True)
class LeftOut:
    """A PR's hunk (or, LINES None, its whole file) the tree lacks verbatim: HOW (ABSENT: warned unless a drop
    covers it; RECONCILED: missing in a region the union reconciled; RE_EXPRESSED: there in another form)."""

    pr: str
    file: str
    lines: tuple[int, int] | None   # in the PR's head; None: the whole file (the union does not change it)
    scopes: tuple[str, ...]
    module: bool = False            # a line of it at module level (or the whole file): only a drop without `in`
    head: str = ""                  # the PR's head it was read at (the hint's `head:`)
    how: str = ABSENT
    removed: tuple[int, int] | None = None   # a pure deletion: the lines it removes in the PR's base

    def lacking(self, whose: str = "") -> str:
        """How the tree leaves it out, as a clause: lacks WHOSE hunk (default: its PR's), or (a pure deletion)
        still has the lines it removes."""
        if self.removed is None:
            return "lacks " + (whose or self.pr + "'s") + f" hunk {self.describe()}"
        first, last = self.removed
        return f"still has the lines {self.pr} removes at {self.describe()} ({self.file}:{first}" + \
            (f"-{last}" if last != first else "") + " in its base)"

    def describe(self) -> str:
        if self.lines is None:
            return f"{self.file} (the whole file)"
        first, last = self.lines
        where = f"{self.file}:{first}" + (f"-{last}" if last != first else "")
        return where + (f" ({', '.join(self.scopes)})" if self.scopes else "")

    def region(self) -> str:
        """Why it is not a region the union reconciled, as a clause."""
        return "no other PR it folds, nor the union itself, changes those lines" + \
            (" in that def/class" if self.scopes else "")


@dataclass(frozen=True)
class Drops:
    """A union's hunks left out, split by its `drops`: still ABSENT (warned), DROPPED on purpose (each with the
    drop that declares it), and the STALE drops that cover no hunk the tree lacks verbatim (each with its PR's
    number)."""

    absent: tuple[LeftOut, ...]
    dropped: tuple[tuple[LeftOut, Drop], ...]
    stale: tuple[tuple[int, Drop], ...]


def account_drops(found: Sequence[LeftOut], supersedes: Sequence[Supersede]) -> Drops:
    """FOUND (a union's hunks the tree lacks verbatim) against the `drops` its SUPERSEDES items declare. A drop
    covering a hunk reconciled or re-expressed is not stale: the hunk is dropped on purpose (helper-141: a hunk
    dropped at a stop, declared, was called carried); such a hunk no drop covers is no warning."""
    declared = {f"pr/{s.pr}": s.drops for s in supersedes if s.drops}
    absent, dropped = [], []
    used: set[tuple[str, Drop]] = set()       # a hunk two drops cover is accounted to the first: neither is stale
    for lost in found:
        covering = [d for d in declared.get(lost.pr, ()) if d.covers(lost.file, lost.scopes, module=lost.module)]
        if covering:
            dropped.append((lost, covering[0]))
        elif lost.how == ABSENT:
            absent.append(lost)
        used |= {(lost.pr, d) for d in covering}
    stale = [(s.pr, d) for s in supersedes for d in s.drops if (f"pr/{s.pr}", d) not in used]
    return Drops(tuple(absent), tuple(dropped), tuple(stale))


def drop_hint(lost: LeftOut, supersedes: Sequence[Supersede]) -> str:
    """The YAML that declares LOST dropped on purpose, as one line: the `drops` item to add to its PR's
    `supersedes` item (written whole when the item is a bare number), its `file` a pattern naming only that
    file; with the `head:` LOST was read at when the item has none, so that the PR moving is a `stale-fold`
    (helper-140: a drop went on covering the hunks a PR gained later)."""
    common = None if lost.module else _common_scope(lost.scopes)
    item = f"{{file: {flow_scalar(literal_pattern(lost.file))}" + (f", in: {common}" if common else "") + \
        ', why: "..."}'
    number = int(lost.pr.removeprefix("pr/"))
    sup = next((s for s in supersedes if s.pr == number), None)
    head = f"head: {lost.head}" if lost.head and (sup is None or not sup.head) else ""
    if sup is not None and sup.drops:
        return f"add `{item}` to the `drops:` of its supersedes item (pr: {number})" + \
            (f", and `{head}` to that item" if head else "")
    if sup is not None and (sup.head or sup.paths):
        return f"add `{head + ', ' if head else ''}drops: [{item}]` to its supersedes item (pr: {number})"
    return f"write its supersedes item as `{{pr: {number}, {head + ', ' if head else ''}drops: [{item}]}}`"


def out_of_reach(number: int, drop: Drop, absent: Sequence[LeftOut]) -> LeftOut | None:
    """What of pr/NUMBER the union leaves out (ABSENT: warned `provided-absent`) that a stale DROP seems meant for
    and cannot cover because of its `in`: the whole file it names (the union does not change it: a drop with `in`
    never covers a whole file), or a hunk in its scope with a line at module level. None: the drop is stale for
    the usual reasons (the union carries the hunks, the PR changed, the file or scope is wrong). (helper-147: a
    drop with `in` for a file the union leaves alone was said to be stale because the union "carries them now".)"""
    if drop.scope is None:
        return None
    for lost in absent:
        if lost.pr != f"pr/{number}" or not matches(drop.file, lost.file):
            continue
        if lost.lines is None or (lost.module and any(s == drop.scope or s.startswith(drop.scope + ".")
                                                      for s in lost.scopes)):
            return lost
    return None


def unreached(lost: LeftOut, drop: Drop) -> str:
    """Why DROP (with `in`) does not cover LOST (`out_of_reach`), and the drop that does, as a clause."""
    without = f"`{{file: {flow_scalar(drop.file)}, why: {flow_scalar(drop.why)}}}`"
    if lost.lines is None:
        return (f"the union does not change {lost.file} at all: {lost.pr}'s whole change there is left out "
                f"(provided-absent), and a drop with `in` never covers a whole file; to drop it on purpose, write "
                f"the drop without `in`: {without}")
    return (f"{lost.pr}'s hunk {lost.describe()} is left out (provided-absent), and a line of it at module level "
            f"puts it out of reach of a drop with `in`; to drop it on purpose, write the drop without `in`: {without}")


def _common_scope(scopes: Sequence[str]) -> str | None:
    """The innermost def/class every one of SCOPES lies in (None: module level, or none they share)."""
    if not scopes:
        return None
    parts = scopes[0].split(".")
    for scope in scopes[1:]:
        other = scope.split(".")
        k = 0
        while k < min(len(parts), len(other)) and parts[k] == other[k]:
            k += 1
        parts = parts[:k]
    return ".".join(parts) or None


def left_out(git: Git, unions: Sequence[UnionCheck]) -> list[list[LeftOut]]:
    """For each of UNIONS, the hunks of its folded PRs its tip lacks verbatim: ABSENT outside the regions it
    reconciled, else RECONCILED, or RE_EXPRESSED where it carries them in another form (the last two are no
    warning: a drop covering one is not stale)."""
    wanted = [u for u in unions if any(f.paths for f in u.folded)]
    pairs = [pair for u in wanted for pair in [*((f.base, f.head) for f in u.folded), (u.base, u.head)]]
    changes = [list(c) for u in wanted for c in [*(f.changes for f in u.folded), u.changes]]
    hunks = iter(read_hunks(git, pairs, changes) if pairs else [])
    found: dict[int, list[LeftOut]] = {}
    spans = SpanCache(git.common_dir / "carrytool" / "cache")     # explain's: PRs' heads are asked again
    for union in wanted:
        mine = [next(hunks) for _ in union.folded]
        found[id(union)] = _left_out(git, spans, union, mine, next(hunks))
    spans.save()
    return [found.get(id(u), []) for u in unions]


def _left_out(git: Git, spans: SpanCache, union: UnionCheck, folded: list[list[Hunk]], own: list[Hunk]
              ) -> list[LeftOut]:
    tips: dict[str, _Tip | None] = {}
    missing: list[tuple[int, Hunk, str | None, tuple[int, int] | None]] = []
    for k, (pr, hunks) in enumerate(zip(union.folded, folded)):
        for hunk in hunks:
            change = _change_of(pr.changes, hunk.path)
            # a pure deletion (not of the whole file: the per-path check's) is looked for by its removed lines
            deletion = not hunk.added and change is not None and change.new_oid != ZERO
            offset, block = _core(hunk.removed if deletion else hunk.added) \
                if hunk.kind == "text" and hunk.path in pr.paths else (0, ())
            if not block:
                continue
            if hunk.path not in tips:
                tips[hunk.path] = _read_tip(git, union.tip, hunk.path)
            tip = tips[hunk.path]                       # None: a file gone, the per-path check's
            if tip is None:
                how: str | None = VERBATIM
            elif deletion and change is not None:
                how = None if _still_there(git, spans, tip, change, hunk.old_start + offset, block) else VERBATIM
            else:
                how = _standing(git, spans, tip, hunk, change, hunk.new_start + offset, block)
            if how != VERBATIM:
                removed = (hunk.old_start + offset, hunk.old_start + offset + len(block) - 1) if deletion else None
                missing.append((k, hunk, how, removed))
    if not missing:
        return []

    def reach(hunk: Hunk, changes: Sequence[Change]) -> tuple[list[str], bool]:
        return hunk_reach(hunk, _change_of(changes, hunk.path), lambda oid, line: spans.scope(
            oid, line, lambda: git.read_blob(oid)))

    out = []
    for k, hunk, how, removed in missing:
        pr = union.folded[k]
        scopes, module = reach(hunk, pr.changes)
        if how is None:
            mine = (hunk, _change_of(pr.changes, hunk.path), scopes)
            others = [(h, other.changes) for j, other in enumerate(union.folded) if j != k
                      for h in folded[j] if h.path == hunk.path]
            others += [(h, union.changes) for h in own if h.path == hunk.path]
            how = RECONCILED if any(_meet(mine, (h, _change_of(changes, h.path)),
                                          lambda h=h, c=changes: reach(h, c)[0]) for h, changes in others) else ABSENT
        out.append(LeftOut(pr.id, hunk.path, hunk.span, tuple(scopes), module, pr.head, how, removed))
    return out


def _meet(mine: tuple[Hunk, Change | None, list[str]], other: tuple[Hunk, Change | None],
          other_scopes: Callable[[], list[str]]) -> bool:
    """Whether hunk OTHER (another folded PR's, or the union's own) changes the region of MINE: lines that meet or
    touch in the same base file (in a def/class they share, where both have one); base files differing, a
    def/class they share (where MINE has none: that it changes the file at all)."""
    hunk, change, scopes = mine
    theirs, their_change = other
    comparable = change is not None and their_change is not None and change.old_oid == their_change.old_oid
    if comparable and not _touch(hunk, theirs):
        return False
    if not scopes:
        return True
    shared = set(scopes) & set(other_scopes())
    return bool(shared) or (comparable and not other_scopes())


def _touch(one: Hunk, two: Hunk) -> bool:
    """Whether two hunks of one base file change lines that meet or touch (nothing unchanged between them:
    git's merge calls that a conflict). A line k is 2k, the place after it 2k+1."""
    def span(h: Hunk) -> tuple[int, int]:
        if not h.old_count:
            return 2 * h.old_start + 1, 2 * h.old_start + 1
        return 2 * h.old_start - 1, 2 * (h.old_start + h.old_count - 1) + 1
    (a, b), (c, d) = span(one), span(two)
    return a <= d and c <= b


def _core(lines: Sequence[bytes]) -> tuple[int, tuple[bytes, ...]]:
    """LINES without the lines that say nothing on their own (blank, brackets only) at either end, and the
    index of the first line kept."""
    trivial = [_trivial(line) for line in lines]
    if all(trivial):
        return 0, ()
    first = trivial.index(False)
    last = len(trivial) - trivial[::-1].index(False)
    return first, tuple(lines[first:last])


def _trivial(line: bytes) -> bool:
    return not line.strip(b" \t\r()[]{}:;,.#")


@dataclass(frozen=True)
class _Tip:
    """A file of the tree a union's PRs' hunks must stand in: its blob and its lines."""

    oid: str
    lines: list[bytes]


def _read_tip(git: Git, tree: str, path: str) -> _Tip | None:
    found = git.blob_at(git.tree_of(tree), path)
    if found is None or found[0] in ("040000", "160000"):
        return None
    return _Tip(found[1], git.read_blob(found[1]).split(b"\n"))


def _standing(git: Git, spans: SpanCache, tip: _Tip, hunk: Hunk, change: Change | None, start: int,
              block: tuple[bytes, ...]) -> str | None:
    """How BLOCK (HUNK's added lines from line START of the PR's head) stands in TIP: VERBATIM, as one block
    in the def/class its lines belong to when TIP still has a def/class of each of those names (a line the
    same text elsewhere in the file is not the PR's), anywhere in the file otherwise; RE_EXPRESSED there
    (_re_expressed: renamed, moved, reformatted, tweaked); None: not at all."""
    python = change is not None and change.new_oid != ZERO and is_python(hunk.path)
    owners = [spans.scope(change.new_oid, start + k, lambda: git.read_blob(change.new_oid))
              if python and change is not None and line.strip() else None for k, line in enumerate(block)]
    first, last, kept = 0, len(tip.lines), frozenset[str]()
    names = {name for name in owners if name}
    if names:
        tip_spans = spans.spans(tip.oid, lambda: git.read_blob(tip.oid))
        held = [(a, b) for a, b, name in tip_spans if name in names]
        if {name for _a, _b, name in tip_spans if name in names} == names:
            first, last, kept = min(a for a, _b in held) - 1, max(b for _a, b in held), frozenset(names)
    if any(at + len(block) <= last for at in find_block(tip.lines, block, first)):
        return VERBATIM
    return RE_EXPRESSED if _re_expressed(block, owners, tip.lines[first:last], kept, python=python) else None


def _still_there(git: Git, spans: SpanCache, tip: _Tip, change: Change, start: int, block: tuple[bytes, ...]
                 ) -> bool:
    """Whether TIP still holds BLOCK, the lines a PR's pure deletion (CHANGE) removes from line START of its
    base, where the PR removes them, more often than the PR's head does (a line the PR moves within its
    def/class is carried): in the def/class each line that says something lay in, when every one lay in
    one and TIP still has a def/class of each of those names; else between the same neighbours as in the
    base (the nearest line that says something on either side, compared without whitespace)."""
    if not find_block(tip.lines, block):
        return False                                # the usual answer: asked before anything is parsed
    base, head = partial(git.read_blob, change.old_oid), git.read_blob(change.new_oid).split(b"\n")
    owners = {spans.scope(change.old_oid, start + k, base) if is_python(change.path) else None
              for k, line in enumerate(block) if line.strip()}
    if None not in owners:
        tip_spans = spans.spans(tip.oid, partial(git.read_blob, tip.oid))
        if {name for _a, _b, name in tip_spans if name in owners} == owners:
            head_spans = spans.spans(change.new_oid, partial(git.read_blob, change.new_oid))
            return _held(tip.lines, tip_spans, owners, block) > _held(head, head_spans, owners, block)
    around = _neighbours(base().split(b"\n"), start - 1, len(block))
    return _beside(tip.lines, block, around) > _beside(head, block, around)


def _held(lines: Sequence[bytes], spans: Sequence[tuple[int, int, str]], names: set[str | None],
          block: tuple[bytes, ...]) -> int:
    """How many times BLOCK stands in LINES within the def/classes NAMES (SPANS: LINES' def/classes)."""
    held = [(a, b) for a, b, name in spans if name in names]
    if not held:
        return 0
    first, last = min(a for a, _b in held) - 1, max(b for _a, b in held)
    return sum(1 for at in find_block(lines, block, first) if at + len(block) <= last)


def _beside(lines: Sequence[bytes], block: tuple[bytes, ...], around: tuple[bytes | None, bytes | None]) -> int:
    """How many times BLOCK stands in LINES between the neighbours AROUND (_neighbours)."""
    return sum(1 for at in find_block(lines, block) if _neighbours(lines, at, len(block)) == around)


def _neighbours(lines: Sequence[bytes], at: int, count: int) -> tuple[bytes | None, bytes | None]:
    """The nearest line that says something before index AT and after the COUNT lines from it, without
    whitespace (None: the file's start or end)."""
    def bare(k: int) -> bytes:
        return lines[k].translate(None, b" \t\r")
    before = next((bare(k) for k in range(at - 1, -1, -1) if bare(k)), None)
    after = next((bare(k) for k in range(at + count, len(lines)) if bare(k)), None)
    return before, after


_HEADER = re.compile(rb"^((?:async[ \t]+)?def|class)[ \t]+\w+")


def _re_expressed(block: Sequence[bytes], owners: Sequence[str | None], region: Sequence[bytes],
                  kept: frozenset[str], *, python: bool) -> bool:
    """Whether most of BLOCK's lines that say something (at least 2, two thirds of them) stand in REGION,
    each compared without its whitespace (Python: its comment, and a def/class header without its name):
    the union carries the change in another form. A header whose def/class (OWNERS: the scope of each
    line) KEPT still holds stands whatever its signature became. One such line must stand as it was."""
    wanted = [(_plain(line, python=python), owner in kept and _HEADER.match(line.lstrip()) is not None)
              for line, owner in zip(block, owners) if not _trivial(line)]
    wanted = [(line, header) for line, header in wanted if line]
    if len(wanted) < 2:
        return False
    there = {_plain(line, python=python) for line in region}
    standing = sum(1 for line, header in wanted if header or line in there)
    return 3 * standing >= 2 * len(wanted)


def _plain(line: bytes, *, python: bool) -> bytes:
    """LINE as _re_expressed compares it: without whitespace; for Python without its comment, and a
    def/class header with its name left out (`def _(a, b):`)."""
    if python:
        line = _HEADER.sub(rb"\1 _", _uncommented(line.strip()))
    return line.translate(None, b" \t\r\n")


def _uncommented(line: bytes) -> bytes:
    """LINE up to a `#` outside a one-line string (a line inside a longer string may lose some text: both
    sides of the comparison do)."""
    quote = 0
    k = 0
    while k < len(line):
        c = line[k]
        if quote:
            if c == 92:                 # a backslash: the next character is the string's
                k += 1
            elif c == quote:
                quote = 0
        elif c in (34, 39):
            quote = c
        elif c == 35:
            return line[:k]
        k += 1
    return line


def _change_of(changes: Sequence[Change], path: str) -> Change | None:
    return next((c for c in changes if c.path == path), None)
