"""What a union's own lines carry of a PR's hunk in its words (a mixin of regions.Regions, h243's split).

A line of the union's own is one PR's change in its words: the PR's whose lines it does what they do (calls the
same name, assigns the same target, ...: pipeline.lineroles) and is most akin to among the hunks it meets, not
every PR's whose region holds it (h209's review: upstream rewrote a def's body, every PR's region was the whole of
it, and pr/1's line in a new form stood for pr/2's, dropped; h225: so did a line naming pr/2's call only). Where
a union reconciled a PR's hunk in its own words, each line of the hunk doing something must be carried by such a
line (uncarried, h236's review), a base line the PR keeps that another PR's hunk there changes being that side
where the union took it (_taken, h240's review). Regions says where the union's own hunks are (their spans,
_region); this says what their lines do of the PR's.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from carrytool.gitlayer.git import Git
from carrytool.pipeline.callspan import bindings_before, module_bindings
from carrytool.pipeline.continued import _Continued
from carrytool.pipeline.hunks import Hunk, says_nothing
from carrytool.pipeline.linecalls import (
    Alias,
    Call,
    Form,
    Rename,
    call_args,
    differs,
    keeps_base,
    passes_otherwise,
    renamed,
)
from carrytool.pipeline.lineroles import (
    NAMED,
    aliases_of,
    calls_of,
    code_of,
    does_something,
    leading_roles,
    line_carries,
    only_comments,
    opened_at,
    quotes_open,
    reads_of,
    rebound_in,
    roles_of,
)

Span = tuple[int, int]
# a line of the union's own there: its text, the quote of the string it starts in, the other PRs' hunks meeting its
# hunk (rivals), the names bound to a function where it is (aliases), the calls it makes read in its file, those
# with their arguments, and the calls of upstream's and the rivals' lines there (_asked)
Mine = tuple[bytes, str, list[Hunk], dict[str, Alias], "frozenset[Form] | None", "frozenset[Call]",
             "frozenset[Call]"]


class _Carried(_Continued):
    """Regions' judgement of what the union's own lines carry (its `git`, `folded`, `written`, `own`, `renames`,
    `quotes`, `texts`, `bound`, and where hunks are: `_span`, `_region`, `_at`, `_touching`; the calls lines
    continue: _Continued)."""

    git: Git
    folded: Sequence[tuple[Sequence[object], Sequence[Hunk]]]
    written: list[Hunk]
    own: list[Hunk]
    renames: dict[str, frozenset[Rename]]
    quotes: dict[str, dict[int, str]]
    texts: dict[str, list[bytes]]
    bound: dict[tuple[str, int], dict[str, Alias]]
    modules: dict[str, dict[str, Alias]]

    def _span(self, j: int, hunk: Hunk) -> Span | None:
        raise NotImplementedError

    def _region(self, j: int, hunk: Hunk) -> Span | None:
        raise NotImplementedError

    @staticmethod
    def _at(mine: Span | None, theirs: Span | None) -> bool:
        raise NotImplementedError

    def _touching(self, k: int, hunk: Hunk) -> list[tuple[int, Hunk]]:
        raise NotImplementedError

    def _carries(self, k: int, hunk: Hunk, own: Hunk) -> bool:
        """Whether the union's OWN hunk may carry PR K's HUNK in its words: a line of it that says something does
        what HUNK's lines do, and is no less akin to them than to those of every other folded PR's hunk it meets
        (_region) doing that too (lineroles.line_carries). A line of the union's own is one PR's change in another
        form, not every PR's whose region holds it (h209's review: upstream rewrote f's body, both PRs' regions were
        the whole of it, and the union's `X = log(bb)`, pr/1's line on the rewrite, was read as pr/2's
        `send_report(d, 'weekly')`, which it dropped), nor a line only naming what the PR's does (h225: its
        `send_report = None`, by likeness of text)."""
        rivals = self._rivals(k, own)
        said = [line for line in own.added if not says_nothing(line)]
        if only_comments(said, own.path, self._opened(own)) and does_something(hunk, self._opened(hunk)):
            return False
        aliases, asked = self._aliases(own, said), self._asked(own, rivals)
        return not rivals or any(line_carries(line, hunk, rivals, opened, self._opened, aliases,
                                              self.renames.get(own.path, frozenset()), self._calls(own, n, line, opened),
                                              self._forms_of, self._theirs)
                                 and not self._otherwise(self._args(own, n, line, opened), self._changes(hunk), asked)
                                 for n, line, opened in self._said(own))

    @staticmethod
    def _otherwise(args: frozenset[Call], changes: tuple[frozenset[Call], frozenset[Call]],
                   asked: frozenset[Call]) -> bool:
        """Whether the union's line's calls (ARGS) pass an argument a PR's hunk changes (CHANGES: its removed and
        added lines' calls) as it was (linecalls.keeps_base, h255), or as a third value no line of ASKED asks for
        (linecalls.passes_otherwise, h259): no form of the PR's line."""
        return keeps_base(args, *changes) or passes_otherwise(args, *changes, asked)

    def _asked(self, own: Hunk, rivals: Sequence[Hunk]) -> frozenset[Call]:
        """The calls, with their arguments, of upstream's lines the union's OWN hunk replaces and of the lines the
        other folded PRs' hunks meeting it (RIVALS) add: a change of an argument there that a third value of the
        union's may reconcile with a PR's (h259). Where they continue a call opened above them, that call's, read
        whole (_continuing, _continued: upstream making `        5,` the argument a PR makes `        2,`)."""
        calls = set(_sides(tuple(own.removed), (), self._opened(own))[0]) if own.removed else set()
        calls |= self._continued_before(own)
        for rival in rivals:
            calls |= self._changes(rival)[1]
            calls |= {call for n in range(len(rival.added)) if (found := self._continued(rival, n)) is not None
                      for call in found[1][1]}
        return frozenset(calls)

    def _said(self, hunk: Hunk) -> list[tuple[int, bytes, str]]:
        """HUNK's added lines that say something, each with its index among them all and the quote of the string it
        starts in (lineroles.opened_at, read from the first of them)."""
        said = [(n, line) for n, line in enumerate(hunk.added) if not says_nothing(line)]
        return [(n, line, opened) for (n, line), opened in zip(said, opened_at([line for _n, line in said],
                                                                              self._opened(hunk)))]

    def _aliases(self, own: Hunk, said: list[bytes]) -> dict[str, Alias]:
        """The names bound to a function where the union's OWN hunk (SAID: its lines saying something) is: above it
        in its def (callspan.bindings_before, h243: `sr = send_report` outside the hunk, `sr(dd, 'weekly')` in it
        was warned dropped), but those the hunk binds again or names but to call them (lineroles.rebound_in: h253's
        review, `sr = make()` there left `sr(dd, 'weekly')` send_report's), then in it (lineroles.aliases_of)."""
        above, again = self._bound(own), rebound_in(said, own.path, self._opened(own))
        return {**{name: alias for name, alias in above.items() if name not in again},
                **aliases_of(said, own.path, self._opened(own))}

    def _bound(self, own: Hunk) -> dict[str, Alias]:
        """The names bound to a function where HUNK is in its new blob: above it in its def, or at the module's top
        level (callspan.bindings_before, module_bindings; h255), read once a place."""
        if not self._read(own):
            return {}
        key, oid = (own.new_oid or "", own.new_start), own.new_oid or ""
        if oid not in self.modules:
            self.modules[oid] = module_bindings(self.texts[oid], self.quotes[oid])
        if key not in self.bound:
            self.bound[key] = bindings_before(self.texts[oid], self.quotes[oid], own.new_start,
                                              own.new_start + max(len(own.added), 1) - 1, self.modules[oid])
        return self.bound[key]

    def _theirs(self, hunk: Hunk) -> dict[str, Alias]:
        """The names bound to a function where a PR's HUNK is in its head, and in it (h255: pr/2's `sr(d,
        'weekly')` under `sr = send_report` above its hunk was no call of `send_report` to the union's form of
        it): a call of one of them alone is the PR's call of that function."""
        said = [line for line in hunk.added if not says_nothing(line)]
        return {**self._bound(hunk), **aliases_of(said, hunk.path, self._opened(hunk))} if said else {}

    def _read(self, hunk: Hunk) -> bool:
        """Whether HUNK is a text hunk of Python whose new blob is read (texts, quotes: once a blob)."""
        if hunk.kind != "text" or not hunk.new_oid or not hunk.path.endswith((".py", ".pyi")):
            return False
        if hunk.new_oid not in self.quotes:
            found = self.git.read_object(hunk.new_oid) if hunk.new_oid.strip("0") else None
            blob = found[1] if found is not None and found[0] == "blob" else None
            self.quotes[hunk.new_oid] = quotes_open(blob) if blob is not None else {}
            self.texts[hunk.new_oid] = blob.split(b"\n") if blob is not None else []
        return True

    def _calls(self, hunk: Hunk, n: int, line: bytes, opened: str) -> frozenset[Form] | None:
        """The calls LINE, HUNK's added line N (0-based; OPENED: the quote of the string it starts in), makes, read
        in HUNK's new blob (callspan.whole_calls: a call spanning lines counted whole, h243); None where that blob
        is not read or does not hold LINE there (the line read alone)."""
        if not self._read(hunk):
            return None
        lines, at = self.texts[hunk.new_oid or ""], hunk.new_start - 1 + n
        return self._whole(hunk.new_oid or "", at, opened)[0] if 0 <= at < len(lines) and lines[at] == line else None

    def _args(self, hunk: Hunk, n: int, line: bytes, opened: str) -> frozenset[Call]:
        """The calls LINE, HUNK's added line N, makes with their arguments (linecalls.call_args), read in HUNK's new
        blob where it holds LINE there (callspan.whole_args), else on the line alone."""
        if self._read(hunk):
            lines, at = self.texts[hunk.new_oid or ""], hunk.new_start - 1 + n
            if 0 <= at < len(lines) and lines[at] == line:
                return self._whole(hunk.new_oid or "", at, opened)[1]
        return frozenset(call_args(code_of(line, opened)[0]))

    def _changes(self, hunk: Hunk) -> tuple[frozenset[Call], frozenset[Call]]:
        """The calls HUNK's removed lines make and those its added lines make, with their arguments, each side read
        as one text: where the PR changes a call's arguments, a union's line keeping them as they were is no form of
        its line (linecalls.keeps_base, h255)."""
        return _sides(tuple(hunk.removed), tuple(hunk.added), self._opened(hunk))

    def _forms_of(self, hunk: Hunk, opened: str, bound: dict[str, Alias] | None = None) -> frozenset[Form]:
        """The calls HUNK's lines make (its first starting in the string OPENED), read in its file (_calls), a call
        of a name BOUND to a function there (default: _theirs) as that function's: what lineroles.line_carries asks
        of a PR's hunk. A pure deletion's: each removed line alone."""
        said = [(n, line) for n, line in enumerate(hunk.added or hunk.removed) if not says_nothing(line)]
        quotes = opened_at([line for _n, line in said], opened)
        found = [self._calls(hunk, n, line, quote) if hunk.added else None for (n, line), quote in zip(said, quotes)]
        return renamed(frozenset().union(*(calls_of(line, quote) if calls is None else calls
                                           for (_n, line), quote, calls in zip(said, quotes, found))),
                       self._theirs(hunk) if bound is None else bound)

    def _reading(self, hunk: Hunk) -> tuple[Callable[[Hunk, str], frozenset[Form]], Callable[[Hunk], dict[str, Alias]]]:
        """line_carries' FORMS_OF and BOUND for parts of a PR's HUNK (a line of it each): the names bound to a
        function where HUNK is (_theirs), read once for them all."""
        bound = self._theirs(hunk)
        return (lambda h, opened: self._forms_of(h, opened, bound)), (lambda _h: bound)

    def _opened(self, hunk: Hunk) -> str:
        """The quote of the string HUNK's first line (of a deletion: the line after it) starts in, in the blob it
        leaves its file at (lineroles.quotes_open: h235, a union's line inside upstream's docstring read as code);
        "": none, or not a text hunk of Python."""
        if not self._read(hunk):
            return ""
        return self.quotes[hunk.new_oid or ""].get(hunk.new_start + (not hunk.added), "")

    def near(self, k: int, hunk: Hunk) -> str:
        """Where a line of the union's hunks meeting PR K's HUNK calls a name HUNK's lines call, but is no form of
        them, what differs (linecalls.differs), with the line: the first such, as a clause; "" where none does (h255:
        the union's `self.send_report(dd)` for a PR's `self.reporter.send_report(d)` was said to be no line of its
        own for it, and a line keeping the arguments the PR changes said nothing of them)."""
        if not hunk.added or not self._read(hunk):
            return ""
        met, alone = self._region(k, hunk), does_something(hunk, self._opened(hunk))
        whole = next((found for n in range(len(hunk.added)) if (found := self._continued(hunk, n)) is not None
                      and (not alone or found[1][0] != found[1][1])), None)
        readings = [(self._forms_of(hunk, self._opened(hunk)), self._changes(hunk))] if alone or not whole else []
        if whole is not None:           # its lines continue a call opened above it: that call's change (_continued)
            readings.append((self._forms_of(whole[0], ""), whole[1]))       # (after its lines' own: h264)
        for theirs, (before, after) in readings:
            said = self._differing(k, hunk, met, theirs, before, after)
            if said:
                return said
        return ""

    def _differing(self, k: int, hunk: Hunk, met: Span | None, theirs: frozenset[Form], before: frozenset[Call],
                   after: frozenset[Call]) -> str:
        """near's clause for PR K's HUNK read as making the calls THEIRS, changing BEFORE's arguments to AFTER's."""
        for own in self.written:
            if own.path != hunk.path or not self._at(met, self._span(-1, own)) or not self._read(own):
                continue
            aliases = self._aliases(own, [line for line in own.added if not says_nothing(line)])
            asked = self._asked(own, self._rivals(k, own))
            lines = [(own.new_start + n, line, opened, self._calls(own, n, line, opened),
                      self._args(own, n, line, opened)) for n, line, opened in self._said(own)]
            lines += [(j + 1, line, opened, *self._whole(own.new_oid or "", j, opened))
                      for j, line, opened, _text in self._continuing(own)]
            for number, line, opened, calls, args in lines:
                said = differs(renamed(calls_of(line, opened) if calls is None else calls, aliases), args, theirs,
                               before, after, asked)
                if said:
                    text = line.decode("utf-8", "surrogateescape").strip()
                    return f"its line {own.path}:{number} `{text[:80]}` is no form of it: it {said}"
        return ""

    def _rivals(self, k: int, own: Hunk) -> list[Hunk]:
        """The other folded PRs' text hunks (not PR K's) meeting the union's OWN hunk (at their _region)."""
        at = self._span(-1, own)
        return [h for j, (_c, hunks) in enumerate(self.folded) if j != k for h in hunks
                if h.path == own.path and h.kind == "text" and self._at(at, self._region(j, h))]

    def uncarried(self, k: int, hunk: Hunk) -> tuple[int, ...]:
        """The lines of PR K's HUNK (in its head) that a union reconciling it in its own words ("union") still
        lacks: each of its Python lines doing something (a role but a comment's, lineroles.does_something; not
        inside a string) must be carried by a line of the union's own hunks there (lineroles.line_carries, that
        line alone), else it is lost (h236's review: upstream rewrote f, pr/2 added `send_report(d, 'weekly')` and
        `audit(d)`, the union wrote `send_report(dd, 'weekly')` only: the hunk was re-expressed, exit 0). A union
        line merging two of them carries both; order, and a line split in two, do not matter. Where no other
        PR's hunk is there, a line of the union's own doing something none of HUNK's lines does (no role shared)
        but naming a word of theirs (_words) is the maintainer's words for any of them (`self.acks = 'late'` for
        `self.acks_late = True`; not `dd = clamp(dd)` for `audit(d)`, h240); one doing
        what one of them does is that one's form alone. Outside Python, and for a line without roles, the hunk
        as a whole decides (reconciled). A pure deletion is lost where a line of the union's own there does at its
        top what a removed line does (`audit(dd, strict=True)` for a deleted `audit(d)` upstream reworded: the call
        kept in other words, no form of deleting it; pipeline.reworded): its line (the one it deleted after)."""
        met = self._region(k, hunk)
        # the union's own lines there, each with its rivals and the names its hunk binds to a function
        mine: list[Mine] = []
        for own in self.own:
            if own.path != hunk.path or not self._at(met, self._span(-1, own)) or (
                    own.kind == hunk.kind == "text" and own.added == hunk.removed and own.removed == hunk.added):
                continue
            said = [line for line in own.added if not says_nothing(line)]
            if not only_comments(said, own.path, self._opened(own)):
                rivals, aliases = self._rivals(k, own), self._aliases(own, said)
                asked = self._asked(own, rivals)
                mine += [(line, opened, rivals, aliases, self._calls(own, n, line, opened),
                          self._args(own, n, line, opened), asked) for n, line, opened in self._said(own)]
                mine += [(line, opened, rivals, aliases, *self._whole(own.new_oid or "", j, opened), asked)
                         for j, line, opened, _lines in self._continuing(own)]
        if not hunk.added and (whole := self._deleted_within(hunk)) is not None:
            part, changes = whole               # `1,` deleted from a call opened above: that call's line, changed
            forms_of, bound = self._reading(part)
            starts = lambda h: "" if h is part else self._opened(h)                 # noqa: E731 (part: no string)
            nothing = [replace(hunk, removed=(), added=())]
            renames = self.renames.get(hunk.path, frozenset())
            return () if any(line_carries(ours, part, rivals or nothing, at, starts, aliases, renames, calls,
                                          forms_of, bound) and not self._otherwise(args, changes, asked)
                             for ours, at, rivals, aliases, calls, args, asked in mine) else (hunk.new_start,)
        if not hunk.added:
            does = frozenset(role for line, opened in zip(hunk.removed, opened_at(hunk.removed))
                             for role in leading_roles(line, opened) if role[0] in NAMED)
            kept = does_something(hunk) and any(leading_roles(line, opened) & does for line, opened, *_r in mine)
            return (hunk.new_start,) if kept else ()    # the lines it removes, written again in the union's words
        quotes = opened_at(hunk.added, self._opened(hunk))      # (h235: a hunk's lines inside a docstring)
        theirs = frozenset().union(*(roles_of(line, opened) for line, opened in zip(hunk.added, quotes)))
        # a line of its own for any of them, naming a word of theirs (h240's review: `dd = clamp(dd)`, a fix of the
        # union's own in upstream's rewrite, stood for pr/2's `send_report(d, 'weekly')` and `audit(d)`, dropped)
        words = frozenset().union(*(_words(line) for line, opened in zip(hunk.added, quotes) if not opened))
        if any(not rivals and (roles := roles_of(line, opened) | reads_of(line, opened)) - {("comment", "")}
               and not roles & theirs and _words(line) & words for line, opened, rivals, *_a in mine):
            return ()
        nothing = [replace(hunk, removed=(), added=())]     # no rival: akin to nothing
        # a line the PR keeps of the base that another PR's hunk there changes: the union took that side (the
        # seed's union: #45612 keeps `allocator.wake_up(tags)` in its else branch, #45398 makes it
        # `backend.resume(tags)`, as the union does: reconciled, not lost); only where the union holds that side
        # there (h240's review: a union with neither call lost the wake-up of both, exit 0)
        changed = {line.strip() for _j, h in self._touching(k, hunk) if self._taken(h, met, mine)
                   for line in h.removed}
        lost: list[int] = []
        forms_of, bound = self._reading(hunk)
        for n, (line, opened) in enumerate(zip(hunk.added, quotes)):
            part = replace(hunk, added=(line,), new_start=hunk.new_start + n, new_count=1)
            whole = None if opened else self._continued(hunk, n)
            # `2,` in a call opened above: that call's line, its arguments changed; so also for a line doing something
            # alone that changes them (h264's review: `mode='safe',` carried by the union's `a, mode='fast',`)
            parts = [(part, self._changes(part))] if does_something(part) else []
            clause = None if opened else self._clause(hunk, n)
            if clause is not None:          # `if v` of a comprehension: a union's line writing it carries it
                parts = [] if any(_holds(ours, mine_opened, clause) for ours, mine_opened, *_r in mine) else parts
            parts += [whole] if whole is not None and (not parts or whole[1][0] != whole[1][1]) else []
            if not opened and line.strip() not in changed and any(self._lacks(one, changes, mine, nothing, forms_of,
                                                                              bound) for one, changes in parts):
                lost.append(hunk.new_start + n)
        return tuple(lost)

    def _lacks(self, part: Hunk, changes: tuple[frozenset[Call], frozenset[Call]], mine: list[Mine],
               nothing: list[Hunk], forms_of: Callable[[Hunk, str], frozenset[Form]],
               bound: Callable[[Hunk], dict[str, Alias]]) -> bool:
        """Whether no line of MINE carries PART, a line of a PR's hunk (lineroles.line_carries) making the CHANGES
        of calls it makes (_changes, _continued) as it makes them (_otherwise): uncarried's reading of it."""
        renames = self.renames.get(part.path, frozenset())
        starts = lambda h: "" if h is part else self._opened(h)     # noqa: E731 (part: no string)
        return does_something(part) and not any(
            line_carries(ours, part, rivals or nothing, at, starts, aliases, renames, calls, forms_of, bound)
            and not self._otherwise(args, changes, asked) for ours, at, rivals, aliases, calls, args, asked in mine)

    def _taken(self, other: Hunk, met: Span | None, mine: list[Mine]) -> bool:
        """Whether the union took another folded PR's hunk OTHER's side in the region MET: OTHER only deletes, or a
        line of the union's hunks there is one of OTHER's (compared without whitespace) or carries one of them in
        its words (MINE: the union's own lines there, lineroles.line_carries)."""
        said = [line for line in other.added if not says_nothing(line)]
        if not said:
            return True
        written = {_bare(line) for own in self.written if own.path == other.path
                   and self._at(met, self._span(-1, own)) for line in own.added}
        if any(_bare(line) in written for line in said):
            return True
        alone = [replace(other, removed=(), added=(line,), new_start=other.new_start + n, new_count=1)
                 for n, line in enumerate(other.added) if not says_nothing(line)]
        nothing = [replace(other, removed=(), added=())]
        forms_of, bound = self._reading(other)
        return any(line_carries(ours, part, nothing, at, lambda h: "", aliases,
                                self.renames.get(other.path, frozenset()), calls, forms_of, bound)
                   and not self._otherwise(args, self._changes(replace(part, removed=other.removed)), asked)
                   for part in alone for ours, at, _rivals, aliases, calls, args, asked in mine)


@functools.lru_cache(maxsize=1024)
def _sides(removed: tuple[bytes, ...], added: tuple[bytes, ...], opened: str
           ) -> tuple[frozenset[Call], frozenset[Call]]:
    """The calls REMOVED make and those ADDED make, with their arguments, each read as one text (_Carried._changes)."""
    return (frozenset(call_args(code_of(b"\n".join(removed), opened)[0])) if removed else frozenset(),
            frozenset(call_args(code_of(b"\n".join(added), opened)[0])) if added else frozenset())


def _holds(line: bytes, opened: str, tokens: tuple[str, ...]) -> bool:
    """Whether LINE's code (starting in the string OPENED) holds TOKENS in a row (a clause of an expression)."""
    code = [text for _kind, text in code_of(line, opened)[0]]
    return any(tuple(code[n:n + len(tokens)]) == tokens for n in range(len(code) - len(tokens) + 1))


def _bare(line: bytes) -> bytes:
    return line.translate(None, b" \t\r")


_WORDS = re.compile(rb"[^\W\d_][^\W_]*")
_COMMON = frozenset({b"self", b"cls", b"true", b"false", b"none", *(w.encode() for w in keyword.kwlist)})


def _words(line: bytes) -> frozenset[bytes]:
    """The words of LINE's names, split at `_` and `.`, lower case, of three letters or more, but `self`, `cls` and
    Python's keywords (`self.acks = 'late'`: acks, late)."""
    return frozenset(w for w in (m.lower() for m in _WORDS.findall(line)) if len(w) >= 3 and w not in _COMMON)
