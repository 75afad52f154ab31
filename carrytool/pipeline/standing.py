"""Whether a PR's lines stand in a tree's file: its hunk at its place as git's 3-way merge sees it
(held_at_place), else its added lines as one block within their def/class, or in another form (renamed, moved,
reformatted, tweaked: _re_expressed, with the lines that do not stand), and a pure deletion's lines still where
the PR removed them (pipeline.provided's reading of a union's tip)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change, Git
from carrytool.pipeline.hunks import Hunk, find_block, says_nothing
from carrytool.pipeline.lineroles import opened_at, roles_of
from carrytool.pipeline.scopes import is_python
from carrytool.pipeline.spancache import SpanCache

VERBATIM, RE_EXPRESSED = "verbatim", "re-expressed"


@dataclass(frozen=True)
class Tip:
    """A file of the tree a union's PRs' hunks must stand in: its blob and its lines."""

    oid: str
    lines: list[bytes]


@dataclass(frozen=True)
class Drift:
    """What upstream did to a PR's file since the PR branched, where the file the union is built on (OURS: the
    union's base's, or in sync the union's step's parent's; None where it lacks it) is not the one the PR branched from (BASE; None: the PR adds the
    file). The tip holds upstream's copies of a line, not the PR's base's (helper-169)."""

    ours: Tip | None
    base: Tip | None


@dataclass(frozen=True)
class Place:
    """Where git's 3-way merge puts a PR's hunk (held_at_place): TIP, whether the tree's file holds it at its
    place; OURS, whether upstream's file (a Drift's) does (upstream took the change there); None: a conflict
    there, or not asked (the counting rules judge). OTHERS: the other folded PRs' files (head, base) that change
    the file, where the tree's file does not hold the hunk at its place (lacks it, or conflicts: h186's review,
    upstream's edit next to it made the merge conflict and another PR's copy stood for the PR's): a copy of a
    line they add is theirs, not the PR's (helper-176)."""

    tip: bool | None = None
    ours: bool | None = None
    others: tuple[tuple[Tip, Tip | None], ...] = ()


def held_at_place(git: Git, asked: Sequence[tuple[Tip, Tip | None, Hunk]]) -> list[bool | None]:
    """For each (FILE, BASE, HUNK: a PR's change to BASE, None: a file it adds): whether FILE holds HUNK at its
    place, as git's 3-way merge sees it (one merge-tree batch): HUNK alone merged onto FILE, with BASE as the
    base, leaves FILE as it is (True) or changes it cleanly (False: git would put it there, FILE lacks it); None:
    a conflict (FILE changed the lines at or next to it: the union re-expressed it, or upstream moved there).
    A copy elsewhere, or beside a line the same text as the hunk's neighbour, is not the hunk (helper-176)."""
    triples = []
    for file, base, hunk in asked:
        lines = base.lines if base is not None else []
        at = hunk.old_start - (1 if hunk.old_count else 0)
        alone = [*lines[:at], *hunk.added, *lines[at + hunk.old_count:]]
        triples.append((file.oid, base.oid if base is not None else None, git.write_blob(b"\n".join(alone))))
    merged = git.merge_contents_many(triples) if triples else []
    return [None if m is None or not m[0] else m[1] == b"\n".join(file.lines)
            for (file, _base, _hunk), m in zip(asked, merged)]


def places(git: Git, asked: Sequence[tuple[Tip, Change, Hunk, Drift | None, Sequence[Change]]],
           read: Callable[[str], Tip]) -> list[Place]:
    """Where git's merge puts each of ASKED (the tree's file, a PR's CHANGE to it and its HUNK, upstream's DRIFT
    since the PR branched, the other folded PRs' changes to the file), as Place: in the tree's file, and where
    that lacks it and upstream moved the file, in upstream's (one merge-tree batch each); with the other PRs'
    files (head, base) where the tree's file does not hold it (lacks it, or conflicts), but for a PR whose head
    holds the hunk at its place (stacked on the PR: one copy is both's; where git's merge of the hunk onto that
    head conflicts, as it does beside a line the PR's head adds next to it, by its neighbours: _held_beside).
    READ: a blob's lines, by oid."""
    def base(change: Change) -> Tip | None:
        return read(change.old_oid) if change.old_oid != ZERO else None

    at_tip = held_at_place(git, [(tip, base(change), hunk) for tip, change, hunk, _drift, _others in asked])
    upstream = [(n, drift.ours) for n, ((_t, _c, _h, drift, _o), held) in enumerate(zip(asked, at_tip))
                if held is not True and drift is not None and drift.ours is not None]
    at_ours = dict(zip([n for n, _o in upstream], held_at_place(
        git, [(ours, base(asked[n][1]), asked[n][2]) for n, ours in upstream])))
    theirs = [(n, other) for n, ((_t, _c, _h, _d, others), held) in enumerate(zip(asked, at_tip))
              if held is not True for other in others]
    stacked = {(n, id(other)) for (n, other), held in zip(theirs, held_at_place(
        git, [(read(other.new_oid), base(asked[n][1]), asked[n][2]) for n, other in theirs]))
        if held or (held is None and _held_beside(read(other.new_oid), asked[n][1], asked[n][2], read))}
    return [Place(held, at_ours.get(n), tuple((read(c.new_oid), base(c)) for c in others
                                              if held is not True and (n, id(c)) not in stacked))
            for n, ((_t, _c, _h, _d, others), held) in enumerate(zip(asked, at_tip))]


def _held_beside(head: Tip, change: Change, hunk: Hunk, read: Callable[[str], Tip]) -> bool:
    """Whether another PR's HEAD, where git's merge of a PR's HUNK (its CHANGE) onto it conflicts, holds the
    hunk at its place all the same: its added lines next to the same line on either side as in the PR's head
    (_placed: a PR stacked on it adds a line right after them), or, a pure deletion, fewer copies of the lines
    it removes between their neighbours than the PR's base has."""
    if hunk.added:
        return _placed(head.lines, hunk.added, read(change.new_oid).lines, hunk.new_start - 1)
    if change.old_oid == ZERO:
        return False
    lines = read(change.old_oid).lines
    around = _neighbours(lines, hunk.old_start - 1, len(hunk.removed))
    return _beside(head.lines, hunk.removed, around) < _beside(lines, hunk.removed, around)


def standing(git: Git, spans: SpanCache, tip: Tip, head: Tip, hunk: Hunk, change: Change | None, start: int,
             block: tuple[bytes, ...], drift: Drift | None = None, place: Place = Place()
             ) -> tuple[str | None, tuple[int, ...]]:
    """How BLOCK (HUNK's added lines from line START of the PR's HEAD) stands in TIP: VERBATIM, as one block
    in the def/class its lines belong to when TIP still has a def/class of each of those names (a line the
    same text elsewhere in the file is not the PR's) and none of them lies at module level, anywhere in the
    file otherwise; RE_EXPRESSED there (_re_expressed: renamed, moved, reformatted, tweaked), with the lines of
    the PR's head that say something and stand nowhere there (the caller asks whether the union reconciled
    them: helper-159); None: not at all (with the lines of the PR's head it lacks where some of its lines that say
    something stand there, loosely: h197). A copy counts only beyond those TIP would hold there without the PR's
    own: HEAD's there besides it (helper-166: a statement the union deleted stood because the def had the same
    text elsewhere), shifted by the copies upstream has there (DRIFT: the union's base's file) beyond the PR's
    base's, one beside the same line as BLOCK is HEAD's being BLOCK itself, taken by upstream (helper-169:
    upstream's copy made up for one the union deleted; one upstream deleted was wanted). PLACE: where git's merge
    puts the hunk; held at its place in TIP, it stands; where TIP lacks it there (or the merge conflicts), a copy
    another folded PR adds in the def/class is that PR's, and upstream took the change only where it holds it at
    the PR's place (helper-176: a copy of upstream's, or another PR's, elsewhere in the def stood for a line the
    union lost; h186: so did another PR's once upstream edited the line next to the PR's place)."""
    if place.tip:
        return VERBATIM, ()
    python = change is not None and change.new_oid != ZERO and is_python(hunk.path)
    owners = [spans.scope(change.new_oid, start + k, lambda: git.read_blob(change.new_oid))
              if python and change is not None and line.strip() else None for k, line in enumerate(block)]
    first, last, kept = 0, len(tip.lines), frozenset[str]()
    within = frozenset[str]()       # the def/classes both are looked for in (none: the whole file)
    names = {name for name in owners if name}
    if names:
        tip_spans = spans.spans(tip.oid, lambda: git.read_blob(tip.oid))
        held = [(a, b) for a, b, name in tip_spans if name in names]
        if {name for _a, _b, name in tip_spans if name in names} == names:
            kept = frozenset(names)
            # a block reaching module level (a new module, a def and the line registering it) is not within
            # its defs: looked for in the whole file (helper-149: a new file called lacking from a tip holding it)
            if all(owner for owner, line in zip(owners, block) if line.strip()):
                first, last, within = min(a for a, _b in held) - 1, max(b for _a, b in held), kept
    found = _count(tip.lines, block, first, last)
    # the other folded PRs' files where the tip does not hold the hunk at its place, within a def/class (at module
    # level a line the same text, an import, is the same line wherever it stands)
    others = place.others if within else ()
    # as many copies as the head (and upstream, the other PRs) has there: its whole file first (no parse of it)
    ours = drift.ours.lines if drift is not None and drift.ours is not None else []
    if found and found >= _count(head.lines, block, 0, len(head.lines)) + _count(ours, block, 0, len(ours)) + \
            sum(_count(other.lines, block, 0, len(other.lines)) for other, _base in others):
        return VERBATIM, ()
    theirs = _around(git, spans, head, within)
    # upstream's copies there less the PR's base's: what the union's base did there since the PR branched
    # (so the other PRs' since their bases); but for this block where upstream has it at the PR's place (it
    # took the PR's change: the same copy)
    moved = _moved(git, spans, drift, others, within)
    took = place.ours
    if took is None and drift is not None and drift.ours is not None:
        took = _placed(drift.ours.lines, block, head.lines, start - 1)
    if took:
        moved.append((-1, block))
    shift = sum(sign * _count(lines, block, 0, len(lines)) for sign, lines in moved)
    if found and found >= _count(head.lines, block, *theirs) + shift:
        return VERBATIM, ()
    # the head's lines there but this block, and upstream's since the PR branched: copies of a line the union
    # holds beyond those are the PR's
    besides = [(1, [*head.lines[theirs[0]:start - 1], *head.lines[start - 1 + len(block):theirs[1]]]), *moved]
    expressed, lacking = _re_expressed(block, owners, tip.lines[first:last], besides, kept, python=python)
    return RE_EXPRESSED if expressed else None, tuple(start + k for k in lacking)


def _moved(git: Git, spans: SpanCache, drift: Drift | None, others: Sequence[tuple[Tip, Tip | None]],
           names: frozenset[str]) -> list[tuple[int, list[bytes]]]:
    """What others wrote in the def/classes NAMES (none: the whole file) since the PR branched, as pairs of a
    sign and lines: upstream's file there less the PR's base's (DRIFT), each of OTHERS' heads less its base."""
    pairs = [] if drift is None else [(drift.ours, drift.base)]
    return [(sign, _region(git, spans, file, names)) for ours, base in [*pairs, *others]
            for sign, file in ((1, ours), (-1, base))]


def _around(git: Git, spans: SpanCache, head: Tip, names: frozenset[str]) -> tuple[int, int]:
    """The lines of HEAD (0-based, end excluded) from the first to the last of its def/classes NAMES (none: the
    whole file)."""
    if not names:
        return 0, len(head.lines)
    held = [(a, b) for a, b, name in spans.spans(head.oid, lambda: git.read_blob(head.oid)) if name in names]
    return (min(a for a, _b in held) - 1, max(b for _a, b in held)) if held else (0, len(head.lines))


def _region(git: Git, spans: SpanCache, file: Tip | None, names: frozenset[str]) -> list[bytes]:
    """FILE's lines from the first to the last of its def/classes NAMES (none: the whole file; nothing when FILE
    is None or has none of them)."""
    if file is None or not names:
        return [] if file is None else file.lines
    held = [(a, b) for a, b, name in spans.spans(file.oid, lambda: git.read_blob(file.oid)) if name in names]
    return file.lines[min(a for a, _b in held) - 1:max(b for _a, b in held)] if held else []


def _count(lines: Sequence[bytes], block: tuple[bytes, ...], first: int, last: int) -> int:
    """How many times BLOCK stands in LINES[FIRST:LAST]."""
    return sum(1 for at in find_block(lines, block, first) if at + len(block) <= last)


def still_there(git: Git, spans: SpanCache, tip: Tip, change: Change, start: int, block: tuple[bytes, ...],
                drift: Drift | None = None, place: Place = Place(), only: int | None = None) -> bool:
    """Whether TIP still holds BLOCK, the lines a PR's pure deletion (CHANGE) removes from line START of its
    base, where the PR removes them, more often than the PR's head does (a line the PR moves within its
    def/class is carried): in the def/class each line that says something lay in, when every one lay in
    one and TIP still has a def/class of each of those names; else between the same neighbours as in the
    base (the nearest line that says something on either side, compared without whitespace). The head's
    copies shifted by upstream's there beyond the PR's base's (DRIFT) but the one upstream deleted at the
    PR's place (it took the deletion), and, where TIP keeps the lines at their place (or the merge conflicts
    there), by the other folded PRs' (PLACE; helper-176: a copy upstream deleted elsewhere hid the line kept,
    one it added was called the line kept; h186: so did another PR's once upstream edited the line next to
    them). Deleted at its place in TIP (PLACE.tip), the lines are gone. ONLY: BLOCK's line of that index alone,
    in its own def/class, else between BLOCK's neighbours with BLOCK's other lines passed over (kept_lines)."""
    lines = block if only is None else (block[only],)
    if place.tip or not find_block(tip.lines, lines):
        return False                                # the usual answer: asked before anything is parsed
    base, head = partial(git.read_blob, change.old_oid), Tip(change.new_oid, git.read_blob(change.new_oid).split(b"\n"))
    others = place.others
    pairs = [*([(drift.ours, drift.base)] if drift is not None else []), *others]
    took = 1 if place.ours else 0                   # upstream deleted the PR's lines: not a copy it took away
    owners = {spans.scope(change.old_oid, start + k, base) if is_python(change.path) else None
              for k, line in enumerate(block) if line.strip() and only in (None, k)}
    if None not in owners:
        tip_spans = spans.spans(tip.oid, partial(git.read_blob, tip.oid))
        if {name for _a, _b, name in tip_spans if name in owners} == owners:
            def held(file: Tip | None) -> int:
                return 0 if file is None else _held(file.lines, spans.spans(file.oid, partial(
                    git.read_blob, file.oid)), owners, lines)
            shift = sum(held(ours) - held(old) for ours, old in pairs)
            return held(tip) > held(head) + shift + took
    around = _neighbours(base().split(b"\n"), start - 1, len(block))
    passed = frozenset(_bare(line) for line in block) if only is not None else frozenset()

    def beside(file: Tip | None) -> int:
        return 0 if file is None else _beside(file.lines, lines, around, passed)
    shift = sum(beside(ours) - beside(old) for ours, old in pairs)
    return beside(tip) > beside(head) + shift + took


def _held(lines: Sequence[bytes], spans: Sequence[tuple[int, int, str]], names: set[str | None],
          block: tuple[bytes, ...]) -> int:
    """How many times BLOCK stands in LINES within the def/classes NAMES (SPANS: LINES' def/classes)."""
    held = [(a, b) for a, b, name in spans if name in names]
    if not held:
        return 0
    first, last = min(a for a, _b in held) - 1, max(b for _a, b in held)
    return sum(1 for at in find_block(lines, block, first) if at + len(block) <= last)


def _placed(lines: Sequence[bytes], block: tuple[bytes, ...], head: Sequence[bytes], at: int) -> bool:
    """Whether LINES hold BLOCK where HEAD holds it from index AT: next to the same line on either side
    (_neighbours; upstream took the change, perhaps editing a line beside it)."""
    before, after = _neighbours(head, at, len(block))
    around = (_neighbours(lines, k, len(block)) for k in find_block(lines, block))
    return any(b == before or a == after for b, a in around)


def _beside(lines: Sequence[bytes], block: tuple[bytes, ...], around: tuple[bytes | None, bytes | None],
            passed: frozenset[bytes] = frozenset()) -> int:
    """How many times BLOCK stands in LINES between the neighbours AROUND (_neighbours; PASSED: lines passed over)."""
    return sum(1 for at in find_block(lines, block) if _neighbours(lines, at, len(block), passed) == around)


def _neighbours(lines: Sequence[bytes], at: int, count: int, passed: frozenset[bytes] = frozenset()
                ) -> tuple[bytes | None, bytes | None]:
    """The nearest line that says something before index AT and after the COUNT lines from it, without
    whitespace (None: the file's start or end), passing over the lines PASSED (so compared)."""
    def bare(k: int) -> bytes:
        return _bare(lines[k])
    before = next((bare(k) for k in range(at - 1, -1, -1) if bare(k) and bare(k) not in passed), None)
    after = next((bare(k) for k in range(at + count, len(lines)) if bare(k) and bare(k) not in passed), None)
    return before, after


def _bare(line: bytes) -> bytes:
    return line.translate(None, b" \t\r")


def kept_lines(git: Git, spans: SpanCache, tip: Tip, change: Change, start: int, block: tuple[bytes, ...],
               drift: Drift | None = None, place: Place = Place()) -> tuple[int, ...]:
    """The lines of BLOCK (a PR's pure deletion from line START of its base) TIP still holds each on its own where
    the PR removes them (still_there, ONLY), where BLOCK is not there whole: lines that do something (Python: a
    role but a comment's, lineroles.roles_of; elsewhere: that say something), by their numbers in the PR's base
    (h255: a union keeping one line of three a PR deletes carried the deletion, `verbatim`, exit 0)."""
    if len(block) < 2:
        return ()
    python = is_python(change.path)
    doing = [n for n, (line, opened) in enumerate(zip(block, opened_at(block) if python else [""] * len(block)))
             if not says_nothing(line) and (not python or roles_of(line, opened) - {("comment", "")})]
    return tuple(start + n for n in doing if still_there(git, spans, tip, change, start, block, drift, place, only=n))


_HEADER = re.compile(rb"^((?:async[ \t]+)?def|class)[ \t]+\w+")


def _re_expressed(block: Sequence[bytes], owners: Sequence[str | None], region: Sequence[bytes],
                  besides: Sequence[tuple[int, Sequence[bytes]]], kept: frozenset[str], *, python: bool
                  ) -> tuple[bool, list[int]]:
    """Whether most of BLOCK's lines that say something (at least 2, two thirds of them) stand in REGION,
    each compared without its whitespace (Python: its comment, and a def/class header without its name):
    the union carries the change in another form. A line stands as many times as REGION holds it more often
    than BESIDES say it would without the PR's (pairs of a sign and lines: the PR's head there but BLOCK, plus
    upstream's there less the PR's base's): a copy the def had already is not the PR's (helper-166), nor
    one upstream added since, and one upstream deleted is not wanted (helper-169).
    A header whose def/class (OWNERS: the scope of each line) KEPT still holds stands whatever its signature
    became. One such line must stand as it was. With the indexes in BLOCK of those lines that do not stand
    there; where BLOCK is not re-expressed, only when some of them stand (h197: a hunk of two lines, one of
    which the union kept, was said to be lacking whole): else none."""
    wanted = [(k, _plain(line, python=python), owner in kept and _HEADER.match(line.lstrip()) is not None)
              for k, (line, owner) in enumerate(zip(block, owners)) if not says_nothing(line)]
    wanted = [(k, line, header) for k, line, header in wanted if line]
    if len(wanted) < 2:
        return False, []
    there = Counter(_plain(line, python=python) for line in region)
    for sign, lines in besides:
        counted = Counter(_plain(line, python=python) for line in lines)
        there.subtract({line: sign * n for line, n in counted.items()})
    lacking = []
    for k, line, header in wanted:
        if header:
            continue
        if there[line] > 0:
            there[line] -= 1
        else:
            lacking.append(k)
    if 3 * (len(wanted) - len(lacking)) >= 2 * len(wanted):
        return True, lacking
    return False, lacking if len(lacking) < len(wanted) else []


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
