"""The calls a Python line continues, opened on a line above it (a mixin of carried._Carried, h264's split).

A line inside the brackets of a call written over lines (`        2,` of `x = send(\n        a,\n        2,\n    )`)
passes an argument of that call: what a PR's such line changes is that call's arguments (h257's review: `2,` does
nothing alone, and a union keeping `1,` read as the PR's line re-expressed, exit 0), and a union's such line is a
line of that call. callspan.openers finds the call's first line; this reads the call whole, once a hunk and a
call: as the PR's base had it and as the PR makes it (_continued, _deleted_within), and where the union's own lines
continue one (_continuing).
"""

from __future__ import annotations

from dataclasses import replace

from carrytool.pipeline.callspan import openers, whole_args, whole_calls
from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.linecalls import Call, Form
from carrytool.pipeline.lineroles import code_of

_WINDOW = 2000      # lines read on past a PR's hunk for the call its line continues (callspan's _MOST)
_CLAUSES = frozenset({"if", "else", "for", "async"})    # the words a clause of an expression starts with


class _Continued:
    """The calls lines continue, read in the blobs _Carried reads (`texts`, `quotes`; `_read`), kept for the run."""

    quotes: dict[str, dict[int, str]]
    texts: dict[str, list[bytes]]
    opening: dict[tuple[str, int, tuple[bytes, ...]], list[int | None]]
    wholes: dict[tuple[str, int, str], tuple[frozenset[Form], frozenset[Call]]]
    continued: dict[tuple[Hunk, int], tuple[Hunk, tuple[frozenset[Call], frozenset[Call]]]]

    def _read(self, hunk: Hunk) -> bool:
        raise NotImplementedError

    def _whole(self, oid: str, at: int, opened: str) -> tuple[frozenset[Form], frozenset[Call]]:
        """callspan.whole_calls and whole_args of line AT of blob OID (read: _read), read once a run: each line of a
        PR's hunk continuing a call opened above it asks for that call's first line (_continued; h264's review:
        100 argument lines of a 1,500-line call changed, explain 1.6 s -> 9.7 s)."""
        key = (oid, at, opened)
        if key not in self.wholes:
            lines = self.texts[oid]
            self.wholes[key] = (whole_calls(lines, at, opened), whole_args(lines, at, opened))
        return self.wholes[key]

    def _continued(self, hunk: Hunk, n: int) -> tuple[Hunk, tuple[frozenset[Call], frozenset[Call]]] | None:
        """Where HUNK's added line N does nothing alone but continues a call opened above the hunk (`        2,`, an
        argument of `x = send(` written over lines: callspan.openers), the PR's change is that call's: the call's
        first line, as a part of HUNK to carry, with the calls of that statement with their arguments (each read
        whole: callspan.whole_args) as they were, HUNK's removed lines in place of its added ones, and as HUNK makes
        them (h257's review: a union keeping `1,` for a PR's `2,` read as its line re-expressed, exit 0). None where
        the line is read alone (the call opens in the hunk, or no bracket holds the line)."""
        j = self._openers(hunk)[n] if self._read(hunk) else None
        if j is None or j >= hunk.new_start - 1:
            return None
        if (hunk, j) not in self.continued:             # once a call a hunk's lines continue (_whole)
            lines, oid = self.texts[hunk.new_oid or ""], hunk.new_oid or ""
            opened = self.quotes[oid].get(j + 1, "")
            before = _before(lines, j, hunk.new_start - 1, len(hunk.added), hunk.removed, opened)
            self.continued[hunk, j] = _part(hunk, lines, j), (before, self._whole(oid, j, opened)[1])
        return self.continued[hunk, j]

    def _deleted_within(self, hunk: Hunk) -> tuple[Hunk, tuple[frozenset[Call], frozenset[Call]]] | None:
        """Where a PR's HUNK only deletes lines from inside a call opened above it, changing its arguments (`        1,`
        of `x = send(`), the PR's change is that call's, as _continued reads it for a line added there: the call's
        first line as a part of HUNK, with that statement's calls before the deletion and after it. None elsewhere."""
        if not self._read(hunk):
            return None
        lines, oid = self.texts[hunk.new_oid or ""], hunk.new_oid or ""
        j = (openers(lines, self.quotes[oid], hunk.new_start, 1) or [None])[0]
        if j is None:
            return None
        opened = self.quotes[oid].get(j + 1, "")
        before = _before(lines, j, hunk.new_start, 0, hunk.removed, opened)
        after = whole_args(lines, j, opened)
        return (_part(hunk, lines, j), (before, after)) if before != after else None

    def _continuing(self, own: Hunk) -> list[tuple[int, bytes, str, list[bytes]]]:
        """The first lines of the calls the union's OWN hunk's lines continue, opened above the hunk (callspan.openers:
        `x = send(` for its `        2,` or `    ) or fb(a)`): lines of the union's there too, their calls read whole
        (_continued, the PR's side), each with its index, the quote of the string it starts in and its file's lines."""
        if not self._read(own):
            return []
        lines, quotes = self.texts[own.new_oid or ""], self.quotes[own.new_oid or ""]
        return [(j, lines[j], quotes.get(j + 1, ""), lines)
                for j in sorted({j for j in self._openers(own) if j is not None and j < own.new_start - 1})]

    def _continued_before(self, own: Hunk) -> frozenset[Call]:
        """The calls, with their arguments, the union's OWN hunk's lines continue (_continuing), as upstream had them
        (OWN's removed lines in place of its added ones: upstream making `        5,` the argument a PR makes `2,`)."""
        return frozenset().union(*(_before(lines, j, own.new_start - 1, len(own.added), own.removed, opened)
                                   for j, _line, opened, lines in self._continuing(own)))

    def _openers(self, hunk: Hunk) -> list[int | None]:
        """callspan.openers of HUNK's added lines in its new blob (read: _read), where that blob holds them there; none
        elsewhere. Once a hunk."""
        key = (hunk.new_oid or "", hunk.new_start, hunk.added)
        if key not in self.opening:
            lines, first = self.texts[key[0]], hunk.new_start - 1
            held = first >= 0 and tuple(lines[first:first + len(hunk.added)]) == hunk.added
            self.opening[key] = openers(lines, self.quotes[key[0]], first, len(hunk.added)) if held else \
                [None] * len(hunk.added)
        return self.opening[key]

    def _clause(self, hunk: Hunk, n: int) -> tuple[str, ...] | None:
        """The tokens of HUNK's added line N where it continues an expression inside brackets with a clause of it (a
        comprehension's `if v` or `for v in a`, a conditional's `else b`): no statement, whose role lineroles reads
        (h264's review: a PR's `        if v` in `x = [\n    g(v)\n    for v in a\n]`, carried by the union's
        `x = [g(v) for v in a if v] or fb(a)`, was warned absent); None for any other line."""
        if not self._read(hunk) or self._openers(hunk)[n] is None:
            return None
        code = code_of(hunk.added[n])[0]
        return tuple(text for _kind, text in code) if code and code[0][1] in _CLAUSES else None


def _before(lines: list[bytes], j: int, start: int, count: int, removed: tuple[bytes, ...], opened: str
            ) -> frozenset[Call]:
    """The calls, with their arguments, of the statement opened on line J of LINES as it was before a hunk: its
    COUNT lines from line START (0-based; 0 for a deletion before START) read as the hunk's REMOVED ones, read on
    to _WINDOW lines past it (callspan.whole_args; OPENED: the quote of the string line J starts in)."""
    return whole_args([*lines[j:start], *removed, *lines[start + count:start + count + _WINDOW]], 0, opened)


def _part(hunk: Hunk, lines: list[bytes], j: int) -> Hunk:
    """Line J (0-based) of HUNK's new blob (LINES), the first line of the call its lines change, as a part of HUNK
    to carry."""
    return replace(hunk, removed=(), added=(lines[j],), new_start=j + 1, new_count=1)
