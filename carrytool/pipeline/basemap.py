"""The line correspondence of two blobs, read from git's diff: where a blob's lines stand in another blob.

One `diff-tree -p -U0` of one-file trees for every pair of blobs, batched (xdiff: a few milliseconds for a
5,000-line file). A line the diff leaves alone maps by the offset of the diff's hunks before it; a range whose
lines or immediate neighbours the diff changes does not map (`map`), or stands for the region those hunks
span (`region`), or for its own lines with the hunks changing them (`lines`).

Spans are in doubled coordinates, as git's merge sees a conflict: line k is 2k, the place after it 2k+1.
A diff's hunks are looked up by bisection: pytest's generated 15,000-line plugin list differs from its base in
400 hunks, and a PR changes 600 of its lines (a walk of the hunks per line tripled explain's "upstream already
has" step there: h216).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from carrytool.gitlayer.env import EMPTY_TREE, ZERO
from carrytool.gitlayer.git import Git
from carrytool.pipeline.hunks import hunk_headers

Span = tuple[int, int]


def span_of(start: int, count: int) -> Span:
    """The doubled span of `@@ -START,COUNT` lines: the lines and the places either side; COUNT 0, the
    place after line START."""
    if not count:
        return 2 * start + 1, 2 * start + 1
    return 2 * start - 1, 2 * (start + count - 1) + 1


def meets(one: Span, two: Span) -> bool:
    """Whether two spans of one blob meet or touch (nothing unchanged between them: a conflict to git)."""
    return one[0] <= two[1] and two[0] <= one[1]


def overlaps(one: Span, two: Span) -> bool:
    """Whether two spans of one blob share a line, or a place within one (more than touching), or are one place."""
    return one == two or (one[0] < two[1] and two[0] < one[1])


class _Diff:
    """One diff's hunks: their spans in the source (STARTS, ENDS, both ascending), in the target (NEWS), and
    the line shift of the hunks before each (SHIFTS[i]: of hunks 0..i-1)."""

    __slots__ = ("starts", "ends", "news", "shifts")

    def __init__(self, headers: list[tuple[int, int, int, int]]) -> None:
        olds = [span_of(a, b) for a, b, _c, _d in headers]
        self.starts, self.ends = [one for one, _ in olds], [two for _, two in olds]
        self.news = [span_of(c, d) for _a, _b, c, d in headers]
        self.shifts = [0]
        for _a, b, _c, d in headers:
            self.shifts.append(self.shifts[-1] + d - b)

    def meeting(self, span: Span) -> tuple[int, int]:
        """The hunks (first, past the last) whose source spans meet or touch SPAN."""
        return bisect_left(self.ends, span[0]), bisect_right(self.starts, span[1])

    def at(self, point: int) -> Span | None:
        """POINT's place in the target, when no hunk meets it: moved by the hunks before it."""
        before, after = self.meeting((point, point))
        return (point + 2 * self.shifts[before],) * 2 if before >= after else None


class BaseMap:
    """The line correspondence of pairs of blobs (a blob id, ZERO or None for none), read at once."""

    def __init__(self, git: Git, pairs: Iterable[tuple[str | None, str | None]]) -> None:
        wanted = list(dict.fromkeys((blob_key(a), blob_key(b)) for a, b in pairs if blob_key(a) != blob_key(b)))
        trees = [(_tree(git, a), _tree(git, b)) for a, b in wanted]
        # None: the blobs differ and git shows no text hunks (a binary): nothing maps
        self._diffs: dict[tuple[str, str], _Diff | None] = {}
        for pair, patch in zip(wanted, git.diff_patches(trees)):
            headers = hunk_headers(patch)
            self._diffs[pair] = _Diff(headers) if headers else None

    def map(self, source: str | None, target: str | None, span: Span) -> Span | None:
        """SPAN of blob SOURCE in blob TARGET's lines, or None where the two blobs differ at its lines or
        next to them."""
        diff = self._diff(source, target)
        if diff is None:
            return None
        first, past = diff.meeting(span)
        if first < past:
            return None
        return span[0] + 2 * diff.shifts[first], span[1] + 2 * diff.shifts[first]

    def region(self, source: str | None, target: str | None, span: Span) -> Span | None:
        """SPAN of blob SOURCE in blob TARGET's lines, widened over the hunks of their diff it meets (their lines
        in TARGET): where the two differ at its lines or next to them, the region git's merge of a change there
        onto TARGET meets as one conflict. None where the blobs differ and git shows no text hunks (a binary)."""
        diff = self._diff(source, target)
        if diff is None:
            return None
        first, past = diff.meeting(span)
        found = diff.news[first:past]
        # each end of SPAN no hunk meets, where `map` puts it
        found += [at for point in span if (at := diff.at(point)) is not None]
        return min(one for one, _two in found), max(two for _one, two in found)

    def lines(self, source: str | None, target: str | None, span: Span) -> Span | None:
        """SPAN of blob SOURCE in blob TARGET's lines, widened over the hunks of their diff that change its own
        lines (their lines in TARGET), but not over those only next to it (unlike `region`): where its lines stand
        in TARGET whatever was changed beside them. None where the blobs differ and git shows no text hunks."""
        diff = self._diff(source, target)
        if diff is None:
            return None
        first, past = diff.meeting(span)      # those changing its lines are among those meeting it
        inside = [n for n in range(first, past) if overlaps((diff.starts[n], diff.ends[n]), span)]
        # the hunks before it: all before those meeting it, and those meeting it only at its start
        before = diff.shifts[first] + sum(diff.shifts[n + 1] - diff.shifts[n] for n in range(first, past)
                                          if n not in inside and diff.ends[n] <= span[0])
        within = sum(diff.shifts[n + 1] - diff.shifts[n] for n in inside)
        ends = (span[0] + 2 * before, span[1] + 2 * (before + within))
        # each end no hunk changing its lines covers, past the hunks before it; those hunks' lines
        found = [diff.news[n] for n in inside]
        found += [(at, at) for point, at in zip(span, ends)
                  if not any(diff.starts[n] <= point <= diff.ends[n] for n in inside)]
        return min(one for one, _two in found), max(two for _one, two in found)

    def _diff(self, source: str | None, target: str | None) -> _Diff | None:
        """The diff of blob SOURCE to blob TARGET (_SAME for one blob); None where the two differ and git shows no
        text hunks (a binary), or were not read."""
        source, target = blob_key(source), blob_key(target)
        return _SAME if source == target else self._diffs.get((source, target))


_SAME = _Diff([])     # one blob: no hunks, every span maps to itself


def blob_key(oid: str | None) -> str:
    """The key of blob OID in a BaseMap: "" for none (None or ZERO)."""
    return "" if oid is None or oid == ZERO else oid


def _tree(git: Git, blob: str) -> str:
    """A tree holding only BLOB (as `f`): the empty tree for none."""
    return git.mktree([("100644", "blob", blob, b"f")]) if blob else EMPTY_TREE
