"""What a hunk's record in the resolution store says of upstream's lines (union.upstream_hunks judges a
replay by it), and how the record writes and reads it: at each place of its key (a file's n-th hunk of that
key in a def/class, known by the lines around it; in a record made before scopes were kept, in the file) and,
for a place it does not name, what was true at all of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

# how many lines that say something a place keeps on each side of it (`Context`: before it, nearest first, and
# after it), on the fold's side: enough that one line edited (a version bump, a renamed name) leaves the place
# known by the others, few enough that an edit far from it leaves them as they were
CONTEXT = 3
Context = tuple[tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class HunkUpstream:
    """What a hunk's record says of upstream's lines when it was made (union.upstream_hunks): those of the
    fold's side its resolution drops (REMOVED), those at the hunk it keeps (KEPT); None in a record made
    before they were kept."""

    removed: tuple[bytes, ...] | None = None
    kept: tuple[bytes, ...] | None = None


@dataclass(frozen=True)
class Place:
    """Where a hunk of a key is now: FILE's INDEX-th of its COUNT hunks of the key, and the NTH of the
    IN_SCOPE of them in the def/class SCOPE (outside a def/class, `@ ` and the line before it:
    upstream_hunks._scope), with the lines around it (CONTEXT: upstream_hunks._context)."""

    file: str
    index: int
    count: int
    scope: str | None = None
    nth: int = 0
    in_scope: int = 1
    context: Context | None = None


def places_in(file: str, hunks: list[tuple[str, str | None]], contexts: list[Context] | None = None) -> list[Place]:
    """The place of each of FILE's HUNKS ((key, scope), in the file's order), with the lines around each
    (CONTEXTS, in the same order)."""
    count = Counter(key for key, _scope in hunks)
    in_scope = Counter(hunks)
    seen: Counter[str] = Counter()
    seen_in: Counter[tuple[str, str | None]] = Counter()
    out = []
    for n, (key, scope) in enumerate(hunks):
        out.append(Place(file, seen[key], count[key], scope, seen_in[key, scope], in_scope[key, scope],
                         contexts[n] if contexts else None))
        seen[key] += 1
        seen_in[key, scope] += 1
    return out


@dataclass(frozen=True)
class RecordedUpstream:
    """What a hunk's record says of upstream's lines at each place it resolved (AT: (file, n) -> what was
    true there, n counting the file's hunks of that key from 0; SCOPES: (file, n) -> the def/class of that
    place and its n-th hunk of the key there, for places recorded with them), and at a place it does not
    name (WHOLE: what was true at every one of them; a record made before places were kept: what it says);
    RESOLUTIONS: (file, n) -> the place's own resolution, where the key's places were resolved differently;
    CONTEXTS: (file, n) -> the lines around the place, for places recorded with them (h185's trial)."""

    whole: HunkUpstream = HunkUpstream()
    at: dict[tuple[str, int], HunkUpstream] = field(default_factory=dict)
    scopes: dict[tuple[str, int], tuple[str | None, int]] = field(default_factory=dict)
    resolutions: dict[tuple[str, int], bytes] = field(default_factory=dict)
    contexts: dict[tuple[str, int], Context] = field(default_factory=dict)

    def place_of(self, place: Place) -> tuple[str, int] | None:
        """The recorded place (file, n) PLACE is, None when the record does not name it surely. Where the record
        names the file's places by their def/class, by its scope and n-th hunk of the key there, when the scope
        has as many hunks of the key as the record names there (helper-174: a position is no name: a hunk
        stopped conflicting in f() and another started in g(), as many as recorded, and g()'s hunk was judged
        by f()'s record, upstream's line replaced unasked). Otherwise (a record made before scopes were kept)
        by its position, when the file has as many hunks of the key as the record names places in it
        (helper-169)."""
        named = {self.scopes[at]: at for at in self.at if at[0] == place.file and at in self.scopes}
        if named:
            here = sum(1 for scope, _n in named if scope == place.scope)
            return named.get((place.scope, place.nth)) if here == place.in_scope else None
        count = sum(1 for name, _n in self.at if name == place.file)
        return (place.file, place.index) if count == place.count and (place.file, place.index) in self.at else None

    def placed(self, places: list[Place], lines: Collection[str]) -> Placed:
        """The recorded place of each of PLACES (a file's hunks of this key, in order; LINES: the names the
        file's lines give a place after them, `@ ` and the line), by its name (`_by_name`) and, where the record
        keeps the lines around each of the file's places (CONTEXTS), by those (h185's trial: a PR moved from
        `first` to `third` in one class, and `first`'s resolution was replayed at `second`, `second`'s at
        `third`, by their n-th hunk of the key in the class): a hunk named a place is that place only when the
        place's lines are still around it (`_near`: one of them changed at most), and a hunk not so named is
        the place of its def/class whose lines around it are exactly its own, when no other hunk's and no other
        place's are. A recorded place met twice is met at neither. A hunk near no recorded place is new (NEW:
        its index in PLACES): the fold asks."""
        named = self._by_name(places, lines)
        recorded = sorted(at for at in self.at if places and at[0] == places[0].file)
        if not recorded or any(at not in self.contexts for at in recorded) or any(p.context is None for p in places):
            return named                    # a record made before places kept their lines: by name alone
        contexts = [place.context or ((), ()) for place in places]
        at = [was if was is not None and _near(self.contexts[was], context, lines) else None
              for was, context in zip(named.at, contexts)]
        for n, (place, context) in enumerate(zip(places, contexts)):
            same = [one for one in recorded if self.contexts[one] == context
                    and self.scopes.get(one, (place.scope, 0))[0] == place.scope]
            if at[n] is None and len(same) == 1 and contexts.count(context) == 1:
                at[n] = same[0]
        twice = {one for one in at if one is not None and at.count(one) > 1}
        at = [None if one in twice else one for one in at]
        new = [n for n, (one, context) in enumerate(zip(at, contexts))
               if one is None and not any(_near(self.contexts[was], context, lines) for was in recorded)]
        return Placed(at, named.renamed if None in at else [], new)

    def _by_name(self, places: list[Place], lines: Collection[str]) -> Placed:
        """The recorded place of each of PLACES by its name: by `place_of`; where that names not all, and
        the file has as many hunks of the key as recorded, each named by a line or by none (a def is not
        matched so), by order: each hunk whose name is not its recorded place's is that place when the
        recorded line is gone from the file and names no hunk of the key, and the hunks beside it are met at
        their own (h186's review: upstream edited the line, a version bump, or put a header above the file's
        first line, and the fold asked as though the hunk had moved). A recorded line still in the file is a
        hunk that stopped conflicting, and another came where it was not: not sure; two changed places side
        by side only their order tells apart: not sure either, and RENAMED says which lines changed."""
        strict = Placed([self.place_of(place) for place in places])
        recorded = sorted(at for at in self.at if places and at[0] == places[0].file)
        if None not in strict.at or len(recorded) != len(places) or not all(at in self.scopes for at in recorded):
            return strict
        then = [self.scopes[at] for at in recorded]
        now = {place.scope for place in places}
        changed = []
        for (name, nth), place in zip(then, places):
            if (name, nth) == (place.scope, place.nth):
                changed.append(False)
            elif _by_line(name) and _by_line(place.scope) and name not in now and name not in lines:
                changed.append(True)
            else:
                return strict
        renamed = [(name, place.scope) for (name, _n), place, was in zip(then, places, changed) if was]
        if any(one and next_ for one, next_ in zip(changed, changed[1:])):
            return Placed(strict.at, renamed)
        return Placed(list(recorded))

    def of(self, place: Place) -> HunkUpstream:
        """What the record says of upstream's lines at PLACE: at its recorded place (`place_of`); at a place not
        named surely, what was true at every place."""
        at = self.place_of(place)
        return self.at[at] if at is not None else self.whole


@dataclass(frozen=True)
class Placed:
    """The recorded place of each of a file's hunks of a key, in order (AT; None: not named surely) and, where
    the lines that named places changed side by side (not sure), those lines: (recorded, now) (RENAMED)."""

    at: list[tuple[str, int] | None]
    renamed: list[tuple[str | None, str | None]] = field(default_factory=list)
    new: list[int] = field(default_factory=list)        # hunks near no recorded place (their lines around)


def _near(then: Context, now: Context, lines: Collection[str]) -> bool:
    """Whether a place's lines around it NOW are those it had THEN, one line of each side replaced, inserted or
    deleted at most (upstream edited a line by it, a PR added one; one edit made in two defs falls on both
    sides of a place between them), a line replaced or deleted gone from the file (LINES: `@ ` and each line
    of it: a line still there is a place's that stopped conflicting, and this is another place: h190's open
    case). The lines of a side left as they were keep it where it was."""
    return _edits(then[0], now[0], lines) <= 1 and _edits(then[1], now[1], lines) <= 1


def _edits(then: tuple[str, ...], now: tuple[str, ...], lines: Collection[str]) -> int:
    """0 when NOW (lines on one side of a place, nearest first, at most CONTEXT) is THEN; 1 when one line of
    THEN was replaced, or deleted, and is gone from the file (LINES), or one line was inserted; 2 otherwise.
    A window of CONTEXT lines loses its farthest line to an insertion and gains one for a deletion."""
    if then == now:
        return 0
    i = next((i for i, (one, two) in enumerate(zip(then, now)) if one != two), min(len(then), len(now)))
    gone = i < len(then) and f"@ {then[i]}" not in lines
    replaced = gone and len(then) == len(now) and then[i + 1:] == now[i + 1:]
    inserted = i < len(now) and len(now) == min(CONTEXT, len(then) + 1) and now[i + 1:] == then[i:len(now) - 1]
    deleted = gone and (len(now) == len(then) - 1 or len(now) == len(then) == CONTEXT) \
        and now[i:len(then) - 1] == then[i + 1:]
    return 1 if replaced or inserted or deleted else 2


def _by_line(name: str | None) -> bool:
    """Whether a place's NAME is a line's (`@ ` and the line before it) or none (no line before it), not a
    def's or class's."""
    return name is None or name.startswith("@ ")


def merged_upstream(places: list[HunkUpstream]) -> HunkUpstream:
    """What was true at every one of PLACES (a key met at several): upstream's lines each resolution dropped
    there (the lines all drop), and those any kept (a line kept at one place is asked about wherever upstream
    no longer has it). None where a place does not say."""
    if not places:
        return HunkUpstream()
    removed, kept = places[0].removed, places[0].kept
    for place in places[1:]:
        removed = None if removed is None or place.removed is None else _counted(removed, place.removed, "&")
        kept = None if kept is None or place.kept is None else _counted(kept, place.kept, "|")
    return HunkUpstream(removed, kept)


def _counted(first: tuple[bytes, ...], second: tuple[bytes, ...], how: str) -> tuple[bytes, ...]:
    """FIRST and SECOND as multisets, intersected ("&") or joined ("|"): FIRST's order, then SECOND's."""
    wanted = Counter(first) & Counter(second) if how == "&" else Counter(first) | Counter(second)
    out = []
    for line in first + second:
        if wanted[line] > 0:
            wanted[line] -= 1
            out.append(line)
    return tuple(out)


def read_lines(doc: dict[str, Any], name: str) -> tuple[bytes, ...] | None:
    """DOC's list of lines NAME (None when it has none); ValueError when it is not a list of strings."""
    lines = doc.get(name)
    if lines is None:
        return None
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise ValueError(f"'{name}' must be a list of strings")
    return tuple(line.encode("utf-8", "surrogateescape") for line in lines)


def written_lines(lines: tuple[bytes, ...]) -> list[str]:
    """LINES as a record writes them (`read_lines` reads them back)."""
    return [line.decode("utf-8", "surrogateescape") for line in lines]


def upstream_of_doc(doc: dict[str, Any]) -> HunkUpstream:
    """What DOC (a record, or one place of it) says of upstream's lines; ValueError when malformed."""
    return HunkUpstream(read_lines(doc, "upstream_removed"), read_lines(doc, "upstream_kept"))


def upstream_fields(said: HunkUpstream) -> dict[str, list[str]]:
    """SAID as a record writes it (`upstream_of_doc` reads it back)."""
    out = {}
    if said.removed is not None:
        out["upstream_removed"] = written_lines(said.removed)
    if said.kept is not None:
        out["upstream_kept"] = written_lines(said.kept)
    return out


def places_of(doc: dict[str, Any]) -> dict[tuple[str, int], HunkUpstream]:
    """DOC's `upstream_at`: (file, n) -> what was true of upstream's lines at the file's n-th hunk of the key
    (none in a record made before places were kept); ValueError when malformed."""
    places = doc.get("upstream_at")
    if places is None:
        return {}
    if not isinstance(places, list) or not all(isinstance(p, dict) and isinstance(p.get("file"), str)
                                               and type(p.get("hunk")) is int and p["hunk"] >= 0 for p in places):
        raise ValueError("'upstream_at' must be a list of {file, hunk, upstream_removed, upstream_kept}")
    return {(p["file"], p["hunk"]): upstream_of_doc(p) for p in places}


def scopes_of(doc: dict[str, Any]) -> dict[tuple[str, int], tuple[str | None, int]]:
    """(file, n) -> the def/class (`scope`; None at module level) and the n-th hunk of the key there
    (`scope_hunk`) of each place of DOC's `upstream_at` that names them (none before helper-174); ValueError
    when malformed (`places_of` checks the rest)."""
    out = {}
    for p in doc.get("upstream_at") or []:
        if "scope" not in p and "scope_hunk" not in p:
            continue
        if "scope" not in p or not (p["scope"] is None or isinstance(p["scope"], str)) \
                or type(p.get("scope_hunk")) is not int \
                or p["scope_hunk"] < 0:
            raise ValueError("an 'upstream_at' place's 'scope' must be a string or null, with a 'scope_hunk' >= 0")
        out[p["file"], p["hunk"]] = (p["scope"], p["scope_hunk"])
    return out


def contexts_of(doc: dict[str, Any]) -> dict[tuple[str, int], Context]:
    """(file, n) -> the lines around each place of DOC's `upstream_at` that keeps them (`before`, nearest
    first, and `after`; none before h191); ValueError when malformed (`places_of` checks the rest)."""
    out = {}
    for p in doc.get("upstream_at") or []:
        if "before" not in p and "after" not in p:
            continue
        sides = (p.get("before"), p.get("after"))
        if not all(isinstance(side, list) and len(side) <= CONTEXT and all(isinstance(line, str) for line in side)
                   for side in sides):
            raise ValueError(f"an 'upstream_at' place's 'before' and 'after' must be lists of at most {CONTEXT} "
                             "strings")
        out[p["file"], p["hunk"]] = (tuple(sides[0]), tuple(sides[1]))     # type: ignore[arg-type]
    return out


def place_fields(hunk: int, named: tuple[str | None, int] | None, context: Context | None = None) -> dict[str, Any]:
    """A place of `upstream_at` as a record writes it: its HUNK (the file's n-th of the key) and, when NAMED,
    its def/class and n-th hunk of the key there (`scopes_of` reads them back), and the lines around it
    (CONTEXT; `contexts_of`)."""
    return {"hunk": hunk, **({"scope": named[0], "scope_hunk": named[1]} if named else {}),
            **({"before": list(context[0]), "after": list(context[1])} if context is not None else {})}


def place_said(file: str, hunk: int, scope: str | None) -> str:
    """A place of a key as a stop names it: `m.py's hunk 2 of it (in g)` (HUNK counted from 0)."""
    return f"{file}'s hunk {hunk + 1} of it" + (f" (after `{scope[2:]}`)" if scope and scope.startswith("@ ")
                                                 else f" (in {scope})" if scope else "")
