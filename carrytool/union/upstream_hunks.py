"""Which of upstream's lines a recorded hunk resolution drops, or keeps, and whether a replay changes that.

A hunk is keyed by its two sides only (`ConflictHunk.key`), so the key of a conflict between two PRs
stays the same once upstream merges one of them: the merged PR's side is then upstream's lines, and the
resolution, replayed, drops the lines of upstream's it dropped as that PR's, or keeps lines upstream has
since replaced (the other PR's side still has them), without a word. A record keeps, from when it was made,
upstream's lines on the fold's side of the hunk that the resolution drops (`removed`) and upstream's lines
around the hunk that the resolution keeps (`kept`), at each place of its key (a file's n-th hunk of the key
in its def/class, `Around.scope`): a replay that drops others, or keeps lines upstream no longer has there,
is not made (`judge`): the fold stops on the hunk.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from itertools import islice

from carrytool.pipeline.hunks import says_nothing
from carrytool.pipeline.scopes import is_python, scope_of_line
from carrytool.union.recorded_upstream import CONTEXT, Context, HunkUpstream
from carrytool.union.resolutions import ConflictHunk, _spans, resolution_lines

Lines = tuple[bytes, ...]


@dataclass(frozen=True)
class Around:
    """Upstream's lines at one conflict hunk: those the fold's side has (OURS), and those of the place
    (PLACE: OURS and the lines the fold replaced or removed there); SCOPE: the def/class the hunk is in on the
    fold's side (`Class.method`; at module level, in a file not Python or that does not parse, `@ ` and the
    nearest line before it that says something: `_scope`); CONTEXT: the lines around it there (`_context`)."""

    hunk: ConflictHunk
    ours: Lines
    place: Lines
    scope: str | None = None
    context: Context | None = None


@dataclass(frozen=True)
class Judged:
    """A replay's effect on upstream's lines that its record does not account for: lines of upstream's
    it drops (DROPS) and lines upstream no longer has at the hunk that it puts back (PUTS_BACK)."""

    drops: Lines = ()
    puts_back: Lines = ()

    def __bool__(self) -> bool:
        return bool(self.drops or self.puts_back)


def around_hunks(upstream: bytes | None, conflicted: bytes, path: str | None = None) -> list[Around]:
    """Upstream's lines at each conflict hunk of CONFLICTED (a file as git's merge wrote it), in order,
    from the alignment of UPSTREAM's version of the file with the fold's side (every hunk's first side);
    blank lines say nothing and are left out. Each hunk's scope on the fold's side when PATH is Python."""
    lines = conflicted.split(b"\n")
    found = _spans(lines)
    if not found:
        return []
    fold: list[bytes] = []
    spans: list[tuple[ConflictHunk, int, int]] = []
    last = 0
    for i, j, k in found:
        fold += lines[last:i]
        spans.append((ConflictHunk(b"\n".join(lines[i + 1:j]), b"\n".join(lines[j + 1:k])), len(fold),
                      len(fold) + j - i - 1))
        fold += lines[i + 1:j]
        last = k + 1
    fold += lines[last:]
    theirs = upstream.split(b"\n") if upstream is not None else []
    codes = difflib.SequenceMatcher(None, theirs, fold, autojunk=False).get_opcodes()
    out = []
    for hunk, s, e in spans:
        ours = [fold[j] for tag, _i1, _i2, j1, j2 in codes if tag == "equal" for j in range(max(j1, s), min(j2, e))]
        replaced = [theirs[i] for tag, i1, i2, j1, j2 in codes if tag != "equal" and _meets(j1, j2, s, e)
                    for i in range(i1, i2)]
        out.append(Around(hunk, _said(ours), _said(ours + replaced), _scope(path, fold, s, e),
                          _context(fold, s, e)))
    return out


def _context(fold: list[bytes], s: int, e: int) -> Context:
    """The lines that say something nearest the fold's lines S:E, stripped: up to CONTEXT before them (nearest
    first) and after them; fewer where the file ends. What a place is known by (h185's trial: a place named by
    its def/class and its n-th hunk of the key there was another place once a PR moved from one of them)."""
    def said(at: range) -> tuple[str, ...]:       # read lazily: a large file's lines are not copied per hunk
        found = (fold[n].strip().decode("utf-8", "surrogateescape") for n in at if not says_nothing(fold[n]))
        return tuple(islice(found, CONTEXT))

    return said(range(s - 1, -1, -1)), said(range(e, len(fold)))


def _scope(path: str | None, fold: list[bytes], s: int, e: int) -> str | None:
    """The def/class of PATH (the fold's side, FOLD) holding its lines S:E, or the line before them when there
    are none (an insertion at the end of a body is in it). Outside a def/class (at a module's top level, or in
    a file that is not Python): `@ ` and the nearest line before them that says something, stripped (h183's
    review: with no name there, places were matched by position, and a refold replayed one place's resolution
    at another); None when there is none."""
    if path is not None and is_python(path):
        named = scope_of_line(b"\n".join(fold), s + 1 if e > s else max(s, 1))
        if named is not None:
            return named
    before = next((line for line in reversed(fold[:s]) if not says_nothing(line)), None)
    return None if before is None else _named_by(before)


def _named_by(line: bytes) -> str:
    """The name of a place outside a def/class whose nearest line before it that says something is LINE."""
    return "@ " + line.strip().decode("utf-8", "surrogateescape")


def line_names(conflicted: bytes) -> set[str]:
    """The name each line of CONFLICTED that says something would give a place after it (`_scope`): whether
    the line that named a recorded place is still in the file."""
    return {_named_by(line) for line in conflicted.split(b"\n") if not says_nothing(line)}


def _meets(j1: int, j2: int, s: int, e: int) -> bool:
    """Whether a change of the fold's lines J1:J2 is at the hunk S:E (overlaps it, or is empty at it)."""
    return max(j1, s) < min(j2, e) or (j1 == j2 and s <= j1 <= e) or (s == e and j1 <= s <= j2)


def _said(lines: list[bytes]) -> Lines:
    return tuple(line for line in lines if line.strip())


def upstream_of_resolution(around: Around, resolution: bytes) -> HunkUpstream:
    """What a record keeps of upstream's lines at AROUND's hunk, resolved as RESOLUTION."""
    lines = Counter(resolution_lines(resolution))
    removed = Counter(around.ours) - lines
    kept = Counter(around.place) & lines
    return HunkUpstream(ordered(around.ours, removed), ordered(around.place, kept))


def judge(around: Around, resolution: bytes, recorded: HunkUpstream, lost: Lines = ()) -> Judged:
    """What replaying RESOLUTION at AROUND's hunk does to upstream's lines that RECORDED (what its record says
    of this place) does not account for: upstream's lines of the fold's side it drops and did not drop as
    upstream's when recorded (a record that does not say: all), and lines it kept as upstream's then that
    upstream no longer has there. A record that does not say what it kept: lines of the resolution that are
    neither the fold's side's nor upstream's there now, and that upstream lost since the folded PR branched
    (LOST: the lines of the file it branched from that upstream's file has fewer of now), are asked about
    (helper-166: a line the PR kept as context, which upstream deleted since, was put back), as its drops
    are; a line upstream still has is not (helper-169: a PR's `return None`, a line the file had elsewhere,
    was asked about on every fold)."""
    lines = resolution_lines(resolution)
    drops = ordered(around.ours, Counter(around.ours) - Counter(lines) - Counter(recorded.removed or ()))
    if recorded.kept is not None:
        return Judged(drops, ordered(recorded.kept, Counter(recorded.kept) - Counter(around.place)))
    neither = Counter(_said(list(lines))) - (Counter(around.ours) | Counter(around.place))
    return Judged(drops, ordered(lines, neither & Counter(lost)))


def ordered(lines: Lines, wanted: Counter[bytes]) -> Lines:
    """Those of LINES that WANTED counts, in LINES' order, each as often as counted."""
    left, out = Counter(wanted), []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
            out.append(line)
    return tuple(out)
