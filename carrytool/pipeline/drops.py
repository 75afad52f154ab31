"""A union's `drops` (a `supersedes` item's hunks dropped on purpose) against the hunks the union leaves out
(pipeline.provided.left_out): which are dropped on purpose, which are still absent, which drops are stale; and the
YAML a user adds to declare one. Moved verbatim from pipeline/provided.py (541 lines) when it passed 500."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.manifest.edit import flow_scalar
from carrytool.manifest.model import Drop, Supersede
from carrytool.manifest.paths import literal_pattern, matches
from carrytool.pipeline.leftout import ABSENT, LeftOut


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
    if lost.whole == "mode":
        return (f"the union's tree {lost.lacking()} (provided-absent), and a drop with `in` never covers a mode "
                f"change (the file's, in no def/class); to drop it on purpose, write the drop without `in`: {without}")
    if lost.whole:
        return (f"the union's tree {lost.lacking()}: {lost.pr}'s change there is left out whole (provided-absent), "
                f"and a drop with `in` never covers a whole file; to drop it on purpose, write the drop without "
                f"`in`: {without}")
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
