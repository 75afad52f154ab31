"""A line a PR deletes that upstream reworded since, still in the tree in its new words (h236's review).

A pure deletion is looked for by the lines it removes, byte for byte (standing.still_there). Where upstream rewrote
them since the PR branched (pr/2 deletes `audit(d)`; upstream made f's `d` `dd`, and the call `audit(dd)`), their
text is nowhere, and a union keeping upstream's `audit(dd)` (or its own `audit(dd, strict=True)`) read as
carrying the deletion: `verbatim`, exit 0, the call pr/2 removes still in the fork. Here upstream's rewrite of the
removed lines is the lines of upstream's file at them (their region there: basemap.BaseMap.lines) doing at their
top what a removed line does (calls the same name, assigns the same target, ...: lineroles.NAMED); each is looked
for at its own place in the tree (BaseMap.region: with the tree's changes meeting it, the union's words for it), and
the deletion is not carried where the tree holds more lines doing that there than upstream's rewrite less the
removed lines doing it (a tree carrying the deletion). Python only; a line doing something else, or one elsewhere
(an `audit(aa)` the union writes after `aa = 1`), is no form of the one removed.
"""

from __future__ import annotations

from carrytool.gitlayer.git import Change, Git
from carrytool.pipeline.basemap import BaseMap, Span, span_of
from carrytool.pipeline.lineroles import NAMED, Role, leading_roles, opened_at
from carrytool.pipeline.scopes import is_python
from carrytool.pipeline.standing import Drift, Place, Tip


def reworded_kept(git: Git, tip: Tip, change: Change, start: int, block: tuple[bytes, ...], drift: Drift | None,
                  place: Place) -> bool:
    """Whether TIP still holds upstream's rewrite of BLOCK, the lines a PR's pure deletion (CHANGE) removes from
    line START of its base (DRIFT: upstream's file; PLACE.tip: git's merge finds the deletion at its place in
    TIP), as the module says. False where upstream kept BLOCK's lines as they were (the byte-for-byte look judged
    them), deleted them, or wrote lines doing other things there."""
    if place.tip or drift is None or drift.ours is None or not is_python(change.path):
        return False
    does = frozenset(role for line, opened in zip(block, opened_at(block))
                     for role in leading_roles(line, opened) if role[0] in NAMED)
    ours = drift.ours
    if not does or ours.oid == tip.oid or not _named(ours.lines, does):
        return False                    # (no diff asked where upstream's file names none of it: the usual case)
    mapped = BaseMap(git, [(change.old_oid, ours.oid), (ours.oid, tip.oid)])
    found = mapped.lines(change.old_oid, ours.oid, span_of(start, len(block)))
    if found is None:
        return False
    first, rewrite = _lines(ours.lines, found)
    if any(tuple(rewrite[n:n + len(block)]) == block for n in range(len(rewrite) - len(block) + 1)):
        return False
    forms = [first + n for n, (line, opened) in enumerate(zip(rewrite, opened_at(rewrite)))
             if leading_roles(line, opened) & does]
    theirs = [mapped.region(ours.oid, tip.oid, span_of(line, 1)) for line in forms]
    if not forms or None in theirs:
        return False
    held: set[int] = set()              # the tree's lines doing it there (spans may meet: each line once)
    for span in theirs:
        at, lines = _lines(tip.lines, span)     # type: ignore[arg-type]
        held |= {at + n for n, line in enumerate(lines) if _doing(line, does)}
    return len(held) > len(forms) - sum(1 for line in block if _doing(line, does))


def _named(lines: list[bytes], does: frozenset[Role]) -> bool:
    """Whether LINES hold the name of one of DOES (its last part) anywhere: text only."""
    text = b"\n".join(lines)
    return any(name.rsplit(".", 1)[-1].encode() in text for _kind, name in does)


def _lines(lines: list[bytes], span: Span) -> tuple[int, list[bytes]]:
    """The first line (1-based) of doubled SPAN and LINES' lines in it."""
    first, last = (span[0] + 1) // 2, span[1] // 2
    return first, lines[first - 1:last]


def _doing(line: bytes, does: frozenset[Role]) -> bool:
    """Whether LINE does at its top one of DOES (read on its own: no string left open before it)."""
    return bool(leading_roles(line) & does)
