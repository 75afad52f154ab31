"""Whether a PR's lines stand in a tree's file: its added lines as one block within their def/class, or in
another form (renamed, moved, reformatted, tweaked: _re_expressed, with the lines that do not stand), and a
pure deletion's lines still where the PR removed them (pipeline.provided's reading of a union's tip)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Change, Git
from carrytool.pipeline.hunks import Hunk, find_block, says_nothing
from carrytool.pipeline.scopes import SpanCache, is_python

VERBATIM, RE_EXPRESSED = "verbatim", "re-expressed"


@dataclass(frozen=True)
class Tip:
    """A file of the tree a union's PRs' hunks must stand in: its blob and its lines."""

    oid: str
    lines: list[bytes]


@dataclass(frozen=True)
class Drift:
    """What upstream did to a PR's file since the PR branched, where the file the union is built on (OURS: the
    union's base's; None where it lacks it) is not the one the PR branched from (BASE; None: the PR adds the
    file). The tip holds upstream's copies of a line, not the PR's base's (helper-169)."""

    ours: Tip | None
    base: Tip | None


def standing(git: Git, spans: SpanCache, tip: Tip, head: Tip, hunk: Hunk, change: Change | None, start: int,
             block: tuple[bytes, ...], drift: Drift | None = None) -> tuple[str | None, tuple[int, ...]]:
    """How BLOCK (HUNK's added lines from line START of the PR's HEAD) stands in TIP: VERBATIM, as one block
    in the def/class its lines belong to when TIP still has a def/class of each of those names (a line the
    same text elsewhere in the file is not the PR's) and none of them lies at module level, anywhere in the
    file otherwise; RE_EXPRESSED there (_re_expressed: renamed, moved, reformatted, tweaked), with the lines of
    the PR's head that say something and stand nowhere there (the caller asks whether the union reconciled
    them: helper-159); None: not at all. A copy counts only beyond those TIP would hold there without the PR's
    own: HEAD's there besides it (helper-166: a statement the union deleted stood because the def had the same
    text elsewhere), shifted by the copies upstream has there (DRIFT: the union's base's file) beyond the PR's
    base's, one beside the same line as BLOCK is HEAD's being BLOCK itself, taken by upstream (helper-169:
    upstream's copy made up for one the union deleted; one upstream deleted was wanted)."""
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
    # as many copies as the head (and upstream) has there: its whole file first (no parse of it)
    ours = drift.ours.lines if drift is not None and drift.ours is not None else []
    if found and found >= _count(head.lines, block, 0, len(head.lines)) + _count(ours, block, 0, len(ours)):
        return VERBATIM, ()
    theirs = _around(git, spans, head, within)
    # upstream's copies there less the PR's base's: what the union's base did there since the PR branched;
    # but for this block where upstream has it at the PR's place (it took the PR's change: the same copy)
    moved = [] if drift is None else [(1, _region(git, spans, drift.ours, within)),
                                      (-1, _region(git, spans, drift.base, within))]
    if drift is not None and drift.ours is not None and _placed(drift.ours.lines, block, head.lines, start - 1):
        moved.append((-1, block))
    shift = sum(sign * _count(lines, block, 0, len(lines)) for sign, lines in moved)
    if found and found >= _count(head.lines, block, *theirs) + shift:
        return VERBATIM, ()
    # the head's lines there but this block, and upstream's since the PR branched: copies of a line the union
    # holds beyond those are the PR's
    besides = [(1, [*head.lines[theirs[0]:start - 1], *head.lines[start - 1 + len(block):theirs[1]]]), *moved]
    lacking = _re_expressed(block, owners, tip.lines[first:last], besides, kept, python=python)
    return (None, ()) if lacking is None else (RE_EXPRESSED, tuple(start + k for k in lacking))


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


def still_there(git: Git, spans: SpanCache, tip: Tip, change: Change, start: int, block: tuple[bytes, ...]
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


def _placed(lines: Sequence[bytes], block: tuple[bytes, ...], head: Sequence[bytes], at: int) -> bool:
    """Whether LINES hold BLOCK where HEAD holds it from index AT: next to the same line on either side
    (_neighbours; upstream took the change, perhaps editing a line beside it)."""
    before, after = _neighbours(head, at, len(block))
    around = (_neighbours(lines, k, len(block)) for k in find_block(lines, block))
    return any(b == before or a == after for b, a in around)


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
                  besides: Sequence[tuple[int, Sequence[bytes]]], kept: frozenset[str], *, python: bool
                  ) -> list[int] | None:
    """Whether most of BLOCK's lines that say something (at least 2, two thirds of them) stand in REGION,
    each compared without its whitespace (Python: its comment, and a def/class header without its name):
    the union carries the change in another form. A line stands as many times as REGION holds it more often
    than BESIDES say it would without the PR's (pairs of a sign and lines: the PR's head there but BLOCK, plus
    upstream's there less the PR's base's): a copy the def had already is not the PR's (helper-166), nor
    one upstream added since, and one upstream deleted is not wanted (helper-169).
    A header whose def/class (OWNERS: the scope of each line) KEPT still holds stands whatever its signature
    became. One such line must stand as it was. The indexes in BLOCK of those lines that do not stand there;
    None: not re-expressed."""
    wanted = [(k, _plain(line, python=python), owner in kept and _HEADER.match(line.lstrip()) is not None)
              for k, (line, owner) in enumerate(zip(block, owners)) if not says_nothing(line)]
    wanted = [(k, line, header) for k, line, header in wanted if line]
    if len(wanted) < 2:
        return None
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
    return lacking if 3 * (len(wanted) - len(lacking)) >= 2 * len(wanted) else None


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
