"""What upstream already has of an entry that conflicts with it alone: which of the entry's hunks upstream
made too since the entry's base, and the upstream commit that made them (h185: upstream merged sqlalchemy
PR #13487 as another commit, its session.py hunk byte for byte, its test rewritten; explain said only
"rebase needed").

A text hunk is had only at its own place (review.has_places says where upstream's file holds it, and why
nothing less is evidence); the commit is named by review.has_commit. A deleted file is had when upstream
deleted it too, not moved it elsewhere (h226: a rename was read as the deletion made); a binary, mode or
whole-file change when upstream has the file as the entry's head has it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.history import Pickaxed
from carrytool.pipeline.basemap import BaseMap
from carrytool.pipeline.hunks import Hunk, line_span
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.has_commit import _looked_pairs, _name_commit, _needle
from carrytool.review.has_places import _at_place, _Lines, _places, _text, is_blob, tells
from carrytool.review.hascache import KeptHas


@dataclass
class UpstreamHas:
    """The hunks of one entry upstream already has (`present`) and has not (`missing`), and the commit."""

    entry: str
    hunks: int
    present: list[dict[str, Any]] = field(default_factory=list)   # {"file", "lines": [a, b]} in upstream's file
    missing: list[dict[str, Any]] = field(default_factory=list)   # {"file", "lines": [a, b]} in the entry's head
    trivial: int = 0                            # hunks of lines that say nothing on their own: counted neither way
    commit: str | None = None
    subject: str | None = None
    needle: tuple[str, str] | None = None       # (path, line) the commit was looked up by (`git log -S`)
    adds: bool = True                           # the commit named added the line (else removed it)
    since: str | None = None                    # the entry's base
    passed: int = 0                             # commits `git log -S` lists before the one named (all, if none)
    taken: list[tuple[Hunk, str | None]] = field(default_factory=list, repr=False)  # hunks had, their base blobs
    taken_at: list[int] = field(default_factory=list, repr=False)  # ... as their places in the entry's hunks
    trivial_at: list[int] = field(default_factory=list, repr=False)  # the trivial hunks' places

    @property
    def likely_merged(self) -> bool:
        """Upstream has at least half of its hunks that tell: the conflict is most likely upstream's own version
        of it."""
        told = self.hunks - self.trivial
        return told > 0 and 2 * len(self.present) >= told

    def to_json(self) -> dict[str, Any]:
        return {"hunks": self.hunks, "present": len(self.present), "likely_merged": self.likely_merged,
                "hunks_trivial": self.trivial, "hunks_present": self.present, "hunks_missing": self.missing,
                "commit": self.commit, "subject": self.subject}

    def said(self) -> str:
        """`upstream already has 4 of its 6 hunks (a.py: 4 of 4, lines 10-52): likely merged upstream as 4914050a66 "..."`."""
        told, had = self.hunks - self.trivial, len(self.present)
        if had == told:
            count = "its one hunk" if told == 1 else f"all {told} of its hunks"
        else:
            count = f"{had} of its {told} hunks"
        left = "" if not self.trivial else (
            "; 1 more hunk, of lines that say nothing on their own, is not counted" if self.trivial == 1 else
            f"; {self.trivial} more hunks, of lines that say nothing on their own, are not counted")
        made = f" as {self.commit[:10]} \"{self.subject}\"" if self.commit else ""
        verdict = f"likely merged upstream{made}" if self.likely_merged else f"upstream made part of its change{made}"
        return f"upstream already has {count} ({files_said(self.present, self.missing)}{left}): {verdict}"

    def lacking(self) -> str:
        """`a.py (1 hunk), b.py (2 hunks)`: the files of the hunks upstream lacks."""
        by: dict[str, int] = {}
        for item in self.missing:
            by[item["file"]] = by.get(item["file"], 0) + 1
        shown = [f"{path} ({n} hunk{'s' if n != 1 else ''})" for path, n in list(by.items())[:4]]
        return ", ".join(shown) + (f", ... (+{len(by) - 4} more files)" if len(by) > 4 else "")

    def command(self, upstream: str) -> list[str] | None:
        """The `git log -S` that names the commit (as `Git.pickaxe` ran it), when one was looked for: the commits
        that changed how often the file holds the line, oldest first."""
        if self.needle is None or self.since is None:
            return None
        path, needle = self.needle
        return ["git", "log", "--reverse", "--format=%H %s", f"-S{needle}", f"{self.since}..{upstream}",
                "--", f":(literal){path}"]


class HasFinder:
    """What upstream already has of each entry: kept answers first (review.hascache), then the others weighed, their
    hunks placed by one `diff-tree` for all of them, their `git log -S` started then, side by side, and read at the
    end, the versions they list placed by one more `diff-tree` (h242: one per entry and step, waited for in turn)."""

    keep_answers = True     # answers kept on disk by what decides them (tests compare both)
    side_by_side = True     # the `git log -S` processes run at once, beside the weighing (tests compare both)
    skip_unchanged = True   # a hunk of a file upstream has as the entry's base is missing, unread (tests compare both)
    batched = True          # one `diff-tree` places every entry's hunks, one more every commit's (tests compare both)

    def __init__(self, git: Git, upstream: str, sources: Sources) -> None:
        self.git, self.upstream, self.sources = git, upstream, sources
        self.alike = _Alike()
        folder = git.common_dir / "carrytool" / "cache" if self.keep_answers else None
        self.kept = KeptHas(folder, git.version)

    def find(self, evidence: dict[str, EntryFacts], entries: Sequence[str], *, save: bool = True
             ) -> dict[str, UpstreamHas]:
        """What upstream has of each of ENTRIES; the answers weighed are kept on disk unless not SAVE (h263:
        `sync --dry-run`, which writes nothing, wrote them)."""
        tree = self.git.tree_of(self.upstream)
        weighed: dict[str, tuple[str, UpstreamHas, _Naming | None]] = {}
        found: dict[str, UpstreamHas | None] = {}
        # a blob's lines, indexed once: upstream's files', which any entry may compare against, for the whole run;
        # an entry's own (its changes' blobs before and after) until no entry left names them (polars: 58 MB of
        # lines kept to the end, many of its PRs' diffs alike; the largest PR's alone are 42 MB)
        lines: dict[str | None, _Lines] = {}
        named = [facts for entry in entries if _weighable(facts := evidence.get(entry))]
        left = Counter(oid for facts in named for oid in _blobs(facts))
        halves: list[tuple[str, EntryFacts, str, tuple[UpstreamHas, list[Weighed], list[Placed]]]] = []
        for entry in entries:
            facts = evidence.get(entry)
            if not _weighable(facts):
                continue
            key = self.kept.key(self.upstream, facts)
            raw = self.kept.get(key)
            answer = _from_kept(facts, raw) if raw is not None else None
            if answer is None and self.batched:     # placed below, with the other entries', in one `diff-tree`
                halves.append((entry, facts, key, _weigh_places(self.git, tree, facts, self.sources, lines,
                                                                unchanged=self.skip_unchanged, alike=self.alike)))
            elif answer is None:
                answer = _weigh(self.git, tree, facts, self.sources, lines, unchanged=self.skip_unchanged,
                                alike=self.alike)
                weighed[entry] = (key, answer, self._start_commit(answer, facts.base, lines) if answer.present
                                  else None)
            found[entry] = answer
            for oid in _blobs(facts):
                left[oid] -= 1
                if not left[oid]:
                    lines.pop(oid, None)
        spans = _spans(self.git, [item for *_, (_f, _w, placed) in halves for item in placed])
        for entry, facts, key, (answer, hunks, placed) in halves:
            found[entry] = _settle(answer, hunks, placed, spans, self.alike)
            weighed[entry] = (key, answer, self._start_commit(answer, facts.base, lines) if answer.present else None)
        namings = [name for _key, _answer, name in weighed.values() if name is not None]
        named = dict(zip(map(id, namings), _name_all(namings, self.git) if self.batched else
                         [naming() for naming in namings]))
        for key, answer, name in weighed.values():
            if name is None or named[id(name)]:      # a failed `git log -S` named no commit: the next run asks again
                self.kept.put(key, _kept(answer))
        if save:
            self.kept.save()
        return {entry: answer for entry, answer in found.items() if answer is not None and answer.present}

    def _start_commit(self, found: UpstreamHas, since: str, lines: dict[str | None, _Lines]) -> _Naming | None:
        """Choose the line the commit is looked up by and start its `git log -S`; the _Naming returned reads
        it and names the commit (`_name_commit`): False when `git log -S` failed (no commit named)."""
        found.since = since
        needle = _needle(found.taken)
        if needle is None:
            return None
        hunk, base, line, found.adds = needle
        found.needle = (hunk.path, line)
        listed: Callable[[], list[Pickaxed] | None] = self.git.pickaxe_later(since, self.upstream, line, hunk.path) \
            if self.side_by_side else lambda: self.git.pickaxe(since, self.upstream, line, hunk.path)
        return _Naming(self.git, self.sources, found, hunk, base, listed, lines)


class _Naming:
    """The commit that made FOUND's hunks, named from the `git log -S` LISTED reads (`_name_commit`)."""

    def __init__(self, git: Git, sources: Sources, found: UpstreamHas, hunk: Hunk, base: str | None,
                 listed: Callable[[], list[Pickaxed] | None], lines: dict[str | None, _Lines]) -> None:
        self.git, self.sources, self.found, self.hunk, self.base, self.lines = git, sources, found, hunk, base, lines
        self._listed: Callable[[], list[Pickaxed] | None] | None = listed
        self._commits: list[Pickaxed] | None = None

    def commits(self) -> list[Pickaxed] | None:
        """The commits `git log -S` listed, the first 50 (None: it failed), read once."""
        if self._listed is not None:
            listed, self._listed = self._listed(), None
            self._commits = None if listed is None else listed[:50]
        return self._commits

    def pairs(self) -> list[tuple[str | None, str]]:
        """The pairs of blobs naming the commit diffs (`_looked_pairs`)."""
        commits, needle = self.commits(), self.found.needle
        if commits is None or needle is None:
            return []
        return _looked_pairs(self.sources, needle[1], self.found.adds, self.hunk, self.base, commits)

    def __call__(self, spans: BaseMap | None = None) -> bool:
        """Name the commit (SPANS: a BaseMap holding `pairs`, else one of its own); False when `git log -S` failed."""
        commits, found = self.commits(), self.found
        if commits is not None:
            assert found.needle is not None
            named = _name_commit(self.git, self.sources, found.needle[1], found.adds, self.hunk, self.base, commits,
                                 self.lines, spans)
            if named[0] is not None:
                found.commit, found.subject = named[0], named[1]
            found.passed = named[2]
        return commits is not None


def _name_all(namings: Sequence[_Naming], git: Git) -> list[bool]:
    """Each of NAMINGS done, their commits' versions placed by one `diff-tree` for all (each pair of blobs is
    diffed on its own: the answers are those of a `diff-tree` per naming)."""
    pairs = [pair for naming in namings for pair in naming.pairs()]
    spans = BaseMap(git, pairs) if pairs else None
    return [naming(spans) for naming in namings]


def upstream_has(git: Git, upstream: str, evidence: dict[str, EntryFacts], sources: Sources,
                 entries: Sequence[str]) -> dict[str, UpstreamHas]:
    """For each of ENTRIES (those that conflict with upstream alone) whose facts are known, what upstream
    already has of it; only the entries upstream has at least one hunk of."""
    return HasFinder(git, upstream, sources).find(evidence, entries)


def _weighable(facts: EntryFacts | None) -> TypeGuard[EntryFacts]:
    """Whether FACTS are known enough to weigh: a base, a head and hunks."""
    return facts is not None and bool(facts.head) and bool(facts.base) and bool(facts.hunks)


def _blobs(facts: EntryFacts) -> set[str | None]:
    """The blobs of the entry's own files whose lines `_weigh` may read: its changes' before and after."""
    return {oid for change in facts.changes for oid in (change.old_oid, change.new_oid)}


def _kept(found: UpstreamHas) -> dict[str, Any]:
    """FOUND as the cache keeps it: the hunks upstream has as their places in the entry's hunks (with the lines
    upstream has them at), and the trivial ones; the others are missing (a 350-file PR's thousand hunks)."""
    return {"taken": found.taken_at, "at": [item["lines"] for item in found.present], "trivial": found.trivial_at,
            "commit": found.commit, "subject": found.subject, "needle": list(found.needle) if found.needle else None,
            "adds": found.adds, "since": found.since, "passed": found.passed}


def _from_kept(facts: EntryFacts, raw: dict[str, Any]) -> UpstreamHas | None:
    """The UpstreamHas the cache kept as RAW for FACTS (as `_weigh` found it); None when RAW does not have its
    shape."""
    try:
        taken, at, trivial, needle = list(raw["taken"]), list(raw["at"]), list(raw["trivial"]), raw["needle"]
        if len(at) != len(taken) or not all(isinstance(i, int) and 0 <= i < len(facts.hunks) for i in taken + trivial) \
                or not all(isinstance(a, list) and len(a) == 2 and all(isinstance(n, int) for n in a) for a in at):
            return None
        if len(set(taken + trivial)) != len(taken + trivial):    # h219: a hunk counted twice ("3 of 2 hunks")
            return None
        found = UpstreamHas(facts.id, len(facts.hunks), trivial=len(trivial), commit=_str_or_none(raw["commit"]),
                            subject=_str_or_none(raw["subject"]), adds=bool(raw["adds"]), since=_str_or_none(raw["since"]),
                            needle=None if needle is None else (str(needle[0]), str(needle[1])),
                            passed=int(raw["passed"]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    skipped = set(taken) | set(trivial)
    found.present = [{"file": facts.hunks[i].path, "lines": list(lines)} for i, lines in zip(taken, at)]
    found.missing = [{"file": hunk.path, "lines": list(hunk.span)} for i, hunk in enumerate(facts.hunks)
                     if i not in skipped]
    found.taken = [(facts.hunks[i], _base_of(facts, facts.hunks[i])) for i in taken]
    found.taken_at, found.trivial_at = taken, trivial
    return found


def _str_or_none(raw: Any) -> str | None:
    if raw is not None and not isinstance(raw, str):
        raise ValueError(raw)
    return raw


Weighed = tuple[int, Hunk, str | None, list[int] | None]      # a hunk counted: index, base blob, where
Placed = tuple[int, str | None, str, list[int]]               # (index in weighed, base, upstream, places)
Blobs = tuple[Hunk, str | None, str]                          # a hunk, its base blob, upstream's


@dataclass
class _Alike:
    """What weighing a hunk finds that follows from the hunk and its blobs alone, found once for every entry
    a HasFinder weighs: stacked PRs carry the same hunks (60 polars PRs: 20,804 hunks weighed, 3,010
    distinct; 0.4 s). Upstream's tree is the same for all."""

    there: dict[str, tuple[str, str] | None] = field(default_factory=dict)   # path -> (mode, oid) in upstream
    places: dict[Blobs, list[int]] = field(default_factory=dict)             # `_places`, when it counts
    at: dict[Blobs, list[int] | None] = field(default_factory=dict)          # `_at_place`

    switched_on = True      # tests compare both: off, nothing is kept from one hunk for the next


def _weigh(git: Git, tree: str, facts: EntryFacts, sources: Sources, lines: dict[str | None, _Lines], *,
           unchanged: bool = True, alike: _Alike | None = None) -> UpstreamHas:
    """What upstream has of FACTS' hunks, with a `diff-tree` of its own (HasFinder.batched shares one)."""
    alike = alike if alike is not None else _Alike()
    found, weighed, placed = _weigh_places(git, tree, facts, sources, lines, unchanged=unchanged, alike=alike)
    return _settle(found, weighed, placed, _spans(git, placed), alike)


def _spans(git: Git, placed: Sequence[Placed]) -> BaseMap | None:
    """Where upstream's diff from each entry's base puts the hunks PLACED: one `diff-tree` for all of them (each
    pair of blobs is diffed on its own: the answers do not depend on which pairs are asked together)."""
    return BaseMap(git, [(base_oid, oid) for _i, base_oid, oid, _p in placed]) if placed else None


def _weigh_places(git: Git, tree: str, facts: EntryFacts, sources: Sources, lines: dict[str | None, _Lines], *,
                  unchanged: bool = True, alike: _Alike | None = None) -> tuple[UpstreamHas, list[Weighed], list[Placed]]:
    """Every hunk of FACTS weighed but where upstream's diff from the base puts it: the answer so far, each
    hunk counted (where upstream has it, when that needs no diff) and the hunks whose places that diff decides.
    ALIKE: what the entries weighed before found (TREE is the same for them)."""
    found = UpstreamHas(facts.id, len(facts.hunks))
    alike = alike if alike is not None and alike.switched_on else _Alike()
    entries = alike.there

    def text(oid: str | None) -> _Lines:
        return _text(oid, sources, lines)

    moved: list[set[str]] = []      # the paths upstream renamed since the entry's base, once asked

    def renamed(path: str) -> bool:     # one `diff-tree -M`, only for a PR deleting a file upstream lacks (h226)
        if not moved:
            moved.append({c.old_path for c in git.diff_trees([(str(facts.base), tree)])[0]
                          if c.status == "R" and c.old_path})
        return path in moved[0]

    weighed: list[Weighed] = []
    placed: list[Placed] = []
    for n, hunk in enumerate(facts.hunks):
        if hunk.kind == "text" and not any(tells(line) for line in hunk.added + hunk.removed):
            found.trivial += 1
            found.trivial_at.append(n)
            continue
        if hunk.path not in entries:
            entries[hunk.path] = git.blob_at(tree, hunk.path)
        there = entries[hunk.path]
        base_oid = _base_of(facts, hunk)
        at: list[int] | None = None
        if hunk.new_oid in (None, ZERO):        # it deletes the file: had when upstream deleted it too (not moved
            at = [0, 0] if there is None and not renamed(hunk.path) else None      # it elsewhere: h226)
        elif there is None:                     # upstream deleted a file it changes
            at = None
        elif hunk.kind != "text":
            made = there[1] == hunk.new_oid and (hunk.kind != "mode" or there[0] == hunk.new_mode)
            at = [1, 1] if made else None
        elif not unchanged or there[1] != base_oid:   # else upstream's file is the base's: it made no change
            blobs = (hunk, base_oid, there[1])      # (polars: PRs of 350 files, most as the base)
            places = alike.places.get(blobs)
            if places is None:
                places = alike.places[blobs] = _places(hunk, text(base_oid), text(hunk.new_oid), text(there[1])) \
                    if is_blob(sources, there[1]) and is_blob(sources, base_oid) else []
            if places:
                placed.append((len(weighed), base_oid, there[1], places))
        weighed.append((n, hunk, base_oid, at))
    return found, weighed, placed


def _settle(found: UpstreamHas, weighed: list[Weighed], placed: Sequence[Placed], spans: BaseMap | None,
            alike: _Alike | None = None) -> UpstreamHas:
    """FOUND, with each hunk PLACED put at its place through SPANS (None: no hunk placed; each pair of blobs
    diffed on its own, the same for every entry), and every hunk WEIGHED counted had or missing. ALIKE: the
    places found for the entries settled before."""
    known = alike.at if alike is not None and alike.switched_on else {}
    for i, base_oid, oid, places in placed:
        n, hunk = weighed[i][:2]
        blobs = (hunk, base_oid, oid)
        if blobs not in known:
            known[blobs] = _at_place(hunk, places, spans, base_oid, oid)
        at = known[blobs]
        weighed[i] = (n, hunk, base_oid, None if at is None else list(at))     # each entry's own list
    for n, hunk, base_oid, at in weighed:
        if at is not None:
            found.present.append({"file": hunk.path, "lines": at})
            found.taken.append((hunk, base_oid))
            found.taken_at.append(n)
        else:
            found.missing.append({"file": hunk.path, "lines": list(hunk.span)})
    return found


def _base_of(facts: EntryFacts, hunk: Hunk) -> str | None:
    """The blob HUNK's file had at the entry's base (None: none)."""
    change = facts.change_of(hunk)
    return change.old_oid if change is not None else None



def files_said(items: list[dict[str, Any]], others: list[dict[str, Any]], most: int = 4) -> str:
    """`a.py: 4 of 4, lines 10-52; b.py: 1 of 2, line 7`: per file of ITEMS, how many of its hunks (of ITEMS
    and OTHERS) and the lines ITEMS span (`deleted` for a file deleted); the first MOST files."""
    by: dict[str, list[list[int]]] = {}
    for item in items:
        by.setdefault(item["file"], []).append(item["lines"])
    said = []
    for path, spans in list(by.items())[:most]:
        total = len(spans) + sum(1 for other in others if other["file"] == path)
        first, last = min(s[0] for s in spans), max(s[1] for s in spans)
        lines = ", deleted" if last == 0 else f", {line_span(first, last)}"
        said.append(f"{path}: {len(spans)} of {total}{lines}")
    return "; ".join(said) + (f"; ... (+{len(by) - most} more files)" if len(by) > most else "")
