"""What upstream already has of an entry that conflicts with it alone: which of the entry's hunks upstream
made too since the entry's base, and the upstream commit that made them (h185: upstream merged sqlalchemy
PR #13487 as another commit, its session.py hunk byte for byte, its test rewritten; explain said only
"rebase needed").

Only on evidence of a hunk's own change at its own place (h204: a line standing anywhere in the file, or a
removed block upstream merely edited, made "likely merged" of PRs upstream never took): upstream's file holds
the hunk's added lines (consecutive, byte for byte) more often than the entry's base did, its removed lines
less often, and at one of their places the lines the entry has next to the hunk (up to the nearest line that
tells, `tells`) stand next to them, with the removed lines not beside them; a hunk that only removes lines
(or adds none that tell) needs the lines before and after it joined where the block was. That place must meet
the region the hunk's base lines map to in upstream's file through upstream's diff from the base (`BaseMap.region`,
as a union's base map places a hunk; h213: one anchoring line matched in another method, or a removal
upstream made in a twin function, was "likely merged"). A hunk whose lines all say nothing on their own
(blank, brackets, `pass`, `return None`, a bare import) is counted neither way.
A deleted file is had when upstream deleted it too, not moved it elsewhere (h226: a rename was read as the
deletion made); a binary, mode or whole-file change when upstream has the file as the entry's head has it.
The commit is looked up by a printable line of the largest hunk upstream has (`Git.pickaxe`, one path-limited
`git log -S`, the command the story prints): of the commits it lists that added (for a removal: removed) the
line, the first whose version of the file has the hunk at its place, else the first with the line there (h213:
not one that added the line to another function first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.history import Pickaxed
from carrytool.pipeline.basemap import BaseMap, Span, meets, span_of
from carrytool.pipeline.hunks import Hunk, find_block, says_nothing
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.hascache import KeptHas

# lines any change may add or remove on its own account: they say nothing of whose change it is
_SILENT = re.compile(rb"\s*(?:pass|return|return None|return True|return False|None|break|continue|raise|else:|"
                     rb"try:|finally:|\.\.\.|\"\"\"|'''|@\w+|(?:import|from\s+\S+\s+import|#\s*include|use)\s.*)"
                     rb"\s*;?\s*")
_REACH = 5          # lines looked at beside a hunk for one that tells where it stands
# the longest line (bytes) the commit is looked up by: `-S<line>` is one argument, and Linux refuses one over
# 128 kB (E2BIG; h219: a minified bundle). A longer line is no needle: a prefix of it would count other lines
NEEDLE_MAX = 1_000


def tells(line: bytes) -> bool:
    """Whether LINE says something of the change that holds it: not blank or brackets (`says_nothing`), not
    `pass`, `return None`, `else:`, a docstring's quotes, a bare decorator or an import."""
    return not says_nothing(line) and _SILENT.fullmatch(line) is None


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
    """What upstream already has of each entry: kept answers first (review.hascache), then the others weighed,
    each one's `git log -S` started as soon as it is known, all of them read at the end."""

    keep_answers = True     # answers kept on disk by what decides them (tests compare both)
    side_by_side = True     # the `git log -S` processes run at once, beside the weighing (tests compare both)
    skip_unchanged = True   # a hunk of a file upstream has as the entry's base is missing, unread (tests compare both)

    def __init__(self, git: Git, upstream: str, sources: Sources) -> None:
        self.git, self.upstream, self.sources = git, upstream, sources
        folder = git.common_dir / "carrytool" / "cache" if self.keep_answers else None
        self.kept = KeptHas(folder, git.version)

    def find(self, evidence: dict[str, EntryFacts], entries: Sequence[str]) -> dict[str, UpstreamHas]:
        tree = self.git.tree_of(self.upstream)
        weighed: dict[str, tuple[str, UpstreamHas, Callable[[], bool] | None]] = {}
        found: dict[str, UpstreamHas] = {}
        lines: dict[str | None, _Lines] = {}        # a blob's lines, indexed once for every entry (upstream's files)
        for entry in entries:
            facts = evidence.get(entry)
            if facts is None or not facts.head or not facts.base or not facts.hunks:
                continue
            key = self.kept.key(self.upstream, facts)
            raw = self.kept.get(key)
            answer = _from_kept(facts, raw) if raw is not None else None
            if answer is None:
                answer = _weigh(self.git, tree, facts, self.sources, lines, unchanged=self.skip_unchanged)
                weighed[entry] = (key, answer, self._start_commit(answer, facts.base, lines) if answer.present
                                  else None)
            found[entry] = answer
        for key, answer, name in weighed.values():
            if name is None or name():      # a failed `git log -S` named no commit: the next run asks again
                self.kept.put(key, _kept(answer))
        self.kept.save()
        return {entry: answer for entry, answer in found.items() if answer.present}

    def _start_commit(self, found: UpstreamHas, since: str, lines: dict[str | None, _Lines]
                      ) -> Callable[[], bool] | None:
        """Choose the line the commit is looked up by and start its `git log -S`; the function returned reads
        it and names the commit (`_name_commit`): False when `git log -S` failed (no commit named)."""
        found.since = since
        needle = _needle(found.taken)
        if needle is None:
            return None
        hunk, base, line, found.adds = needle
        found.needle = (hunk.path, line)
        listed: Callable[[], list[Pickaxed] | None] = self.git.pickaxe_later(since, self.upstream, line, hunk.path) \
            if self.side_by_side else lambda: self.git.pickaxe(since, self.upstream, line, hunk.path)

        def name() -> bool:
            commits = listed()
            if commits is not None:
                _name_commit(self.git, self.sources, found, hunk, base, commits[:50], lines)
            return commits is not None

        return name


def upstream_has(git: Git, upstream: str, evidence: dict[str, EntryFacts], sources: Sources,
                 entries: Sequence[str]) -> dict[str, UpstreamHas]:
    """For each of ENTRIES (those that conflict with upstream alone) whose facts are known, what upstream
    already has of it; only the entries upstream has at least one hunk of."""
    return HasFinder(git, upstream, sources).find(evidence, entries)


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


def _weigh(git: Git, tree: str, facts: EntryFacts, sources: Sources, lines: dict[str | None, _Lines], *,
           unchanged: bool = True) -> UpstreamHas:
    found = UpstreamHas(facts.id, len(facts.hunks))
    entries: dict[str, tuple[str, str] | None] = {}       # path -> (mode, oid) in upstream's tree

    def text(oid: str | None) -> _Lines:
        return _text(oid, sources, lines)

    moved: list[set[str]] = []      # the paths upstream renamed since the entry's base, once asked

    def renamed(path: str) -> bool:     # one `diff-tree -M`, only for a PR deleting a file upstream lacks (h226)
        if not moved:
            moved.append({c.old_path for c in git.diff_trees([(str(facts.base), tree)])[0]
                          if c.status == "R" and c.old_path})
        return path in moved[0]

    weighed: list[tuple[int, Hunk, str | None, list[int] | None]] = []   # each hunk counted: index, base blob, where
    placed: list[tuple[int, str | None, str, list[int]]] = []        # (index in weighed, base, upstream, places)
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
            places = _places(hunk, text(base_oid), text(hunk.new_oid), text(there[1]))   # (polars: PRs of 350
            if places:                                                                   # files, most as the base)
                placed.append((len(weighed), base_oid, there[1], places))
        weighed.append((n, hunk, base_oid, at))
    # where upstream's diff from the entry's base puts each hunk's base lines: one `diff-tree` for the entry
    spans = BaseMap(git, [(base_oid, oid) for _i, base_oid, oid, _p in placed]) if placed else None
    for i, base_oid, oid, places in placed:
        n, hunk = weighed[i][:2]
        weighed[i] = (n, hunk, base_oid, _at_place(hunk, places, spans, base_oid, oid))
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


def _text(oid: str | None, sources: Sources, lines: dict[str | None, _Lines]) -> _Lines:
    """Blob OID's lines, indexed once in LINES (none for no blob)."""
    if oid not in lines:
        lines[oid] = _Lines((sources.read(oid) or b"").split(b"\n") if oid and oid != ZERO else [])
    return lines[oid]


class _Lines:
    """A file's lines, indexed by line: where a block of lines stands, without a scan of the file per hunk
    (a 350-file PR's thousand hunks in 5,000-line files)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self._at: dict[bytes, list[int]] | None = None

    def find(self, block: Sequence[bytes]) -> list[int]:
        """Every 0-based index where BLOCK stands as consecutive lines (`hunks.find_block`)."""
        if self._at is None:
            self._at = {}
            for i, line in enumerate(self.lines):
                self._at.setdefault(line, []).append(i)
        want, n = list(block), len(block)
        if not want:
            return []
        # from the block's line the file holds least often: a blank first line stands at hundreds of places of
        # a 5,000-line file, and polars' 19,000 hunks were each compared there (3 s of explain, now 0.6 s)
        j = min(range(n), key=lambda k: len(self._at.get(want[k], ())))
        return [i - j for i in self._at.get(want[j], ()) if i >= j and self.lines[i - j:i - j + n] == want]


@dataclass(frozen=True)
class _Side:
    """The lines a file has beside a hunk, up to the nearest one that tells (at most _REACH): `edge` when they
    run to the file's start (before it) or end (after it), then a place must too; `anchors` when they tell
    where the hunk stands (a line that tells, or the file's edge)."""

    lines: tuple[bytes, ...]
    edge: bool
    anchors: bool

    def ends_at(self, lines: list[bytes], at: int) -> bool:
        """Whether LINES hold these lines just before index AT."""
        start = at - len(self.lines)
        return start >= 0 and tuple(lines[start:at]) == self.lines and (not self.edge or start == 0)

    def starts_at(self, lines: list[bytes], at: int) -> bool:
        """Whether LINES hold these lines from index AT."""
        end = at + len(self.lines)
        return tuple(lines[at:end]) == self.lines and (not self.edge or end == len(lines))


def _before(lines: list[bytes], at: int) -> _Side:
    start = at
    while start > 0 and at - start < _REACH:
        start -= 1
        if tells(lines[start]):
            return _Side(tuple(lines[start:at]), False, True)
    return _Side(tuple(lines[start:at]), start == 0, start == 0)


def _after(lines: list[bytes], at: int) -> _Side:
    end = at
    while end < len(lines) and end - at < _REACH:
        end += 1
        if tells(lines[end - 1]):
            return _Side(tuple(lines[at:end]), False, True)
    return _Side(tuple(lines[at:end]), end == len(lines), end == len(lines))


def _places(hunk: Hunk, base: _Lines, head: _Lines, upstream: _Lines) -> list[int]:
    """The indexes of UPSTREAM where HUNK's added lines stand (or, for a hunk that adds none, where the lines
    around its removed ones are joined) as if upstream made HUNK's change since BASE: beside the lines HEAD or
    BASE has beside it, with the removed lines not beside them; [] when upstream's file holds its added lines
    no more often than BASE, or its removed lines no less often. Where the hunk itself stands is `_at_place`'s."""
    added, removed = list(hunk.added), list(hunk.removed)
    kept = bool(removed) and bool(find_block(added, removed))     # what it removes lives on in what it adds
    if removed and not kept and any(tells(line) for line in removed) and \
            len(upstream.find(removed)) >= len(base.find(removed)):
        return []
    if added and len(upstream.find(added)) <= len(base.find(added)):
        return []
    at_base = hunk.old_start - 1 if hunk.old_count else hunk.old_start
    at_head = hunk.new_start - 1 if hunk.new_count else hunk.new_start
    sides = [(_before(head.lines, at_head), _after(head.lines, at_head + len(added))),
             (_before(base.lines, at_base), _after(base.lines, at_base + len(removed)))]
    joined = not any(tells(line) for line in added)     # its added lines say nothing: the lines around join
    if added:
        places = upstream.find(added)
    else:
        places = sorted({i + len(before.lines) if before.lines else 0 for before, _ in sides
                         for i in (upstream.find(before.lines) if before.lines else [0])})
    n, up = len(added), upstream.lines
    return [p for p in places if (kept or not _beside(up, p, n, removed)) and
            any(_placed(up, p, n, before, after, joined) for before, after in sides)]


def _at_place(hunk: Hunk, places: list[int], spans: BaseMap | None, base: str | None, upstream: str
              ) -> list[int] | None:
    """The lines of blob UPSTREAM that hold HUNK's added lines (or the line after which its removed ones were),
    of PLACES (`_places`), when one of them is HUNK's own place: it meets the region HUNK's lines of blob BASE
    map to in UPSTREAM (`BaseMap.region`, widened over the hunks of their diff it meets; a line standing
    elsewhere in the file is no evidence, with the same lines beside it or not: h213). Else None."""
    if spans is None or not places:
        return None
    mine = span_of(hunk.old_start, hunk.old_count)
    region = spans.region(base, upstream, mine)
    if region is None:          # a binary
        return None
    n = len(hunk.added)
    found = [p for p in places if meets(_span_at(p, n), region)]
    if not found:
        return None
    at_head = hunk.new_start - 1 if hunk.new_count else hunk.new_start
    first = min(found, key=lambda i: abs(i - at_head))
    return [first + 1, first + n] if n else [max(first, 1)] * 2


def _span_at(at: int, n: int) -> Span:
    """The doubled span (`basemap.span_of`) of the N lines from index AT; for none, the place before index AT."""
    return span_of(at + 1, n) if n else span_of(at, 0)


def _beside(lines: list[bytes], at: int, n: int, removed: list[bytes]) -> bool:
    """Whether REMOVED stands right before index AT or right after the N lines from it."""
    k = len(removed)
    return bool(k) and (lines[at + n:at + n + k] == removed or (at >= k and lines[at - k:at] == removed))


def _placed(lines: list[bytes], at: int, n: int, before: _Side, after: _Side, joined: bool) -> bool:
    """Whether the N lines of LINES from index AT stand where BEFORE and AFTER say: both beside them when
    JOINED is asked for (and one of them anchors), else one that anchors."""
    b, a = before.ends_at(lines, at), after.starts_at(lines, at + n)
    if joined:
        return b and a and (before.anchors or after.anchors)
    return (b and before.anchors) or (a and after.anchors)


def _needle(taken: list[tuple[Hunk, str | None]]) -> tuple[Hunk, str | None, str, bool] | None:
    """(hunk, its base blob, line, whether it was added) to look the commit up by: the longest line that tells,
    is printable UTF-8 (a command prints it; a CRLF file's lines without their `\\r`) and is no longer than
    NEEDLE_MAX bytes, of the largest hunk upstream has, added lines before removed ones."""
    best: tuple[tuple[bool, int], Hunk, str | None, bytes, bool] | None = None
    for hunk, base in taken:
        if hunk.kind != "text":
            continue
        for adds, block in ((True, hunk.added), (False, hunk.removed)):
            usable = [bare for line in block if tells(line) and len(bare := _unreturned(line)) <= NEEDLE_MAX
                      and _printable(bare)]
            if usable:
                key = (adds, sum(len(line) for line in block))
                if best is None or key > best[0]:
                    best = (key, hunk, base, max(usable, key=lambda item: len(item.strip())), adds)
                break
    return None if best is None else (best[1], best[2], best[3].decode(), best[4])


def _unreturned(line: bytes) -> bytes:
    """LINE without the `\\r` a CRLF file ends it with: `git log -S` finds the rest (it matches substrings),
    and a command can print it."""
    return line[:-1] if line.endswith(b"\r") else line


def _printable(line: bytes) -> bool:
    try:
        text = line.decode()
    except UnicodeDecodeError:
        return False
    return text.replace("\t", "").isprintable()      # every character a tab or printable, in one call


def _name_commit(git: Git, sources: Sources, found: UpstreamHas, hunk: Hunk, base: str | None,
                 listed: list[Pickaxed], lines: dict[str | None, _Lines]) -> None:
    """The first upstream commit since the entry's base, of those that changed how often the file holds the
    chosen line (`git log -S`, oldest first), whose version of the file has the line's hunk at its own place
    (`_first_with`): not one that added (removed) the line elsewhere, before or after (h204, h213). LISTED: what
    `git log -S` listed (HasFinder._start_commit chose HUNK, its BASE blob and the line, `found.needle`)."""
    assert found.needle is not None
    raw, sign = found.needle[1].encode(), 1 if found.adds else -1

    def made(old: str, new: str) -> bool:    # added the line (removed it, for a removal): the other way is not it
        return sign * ((sources.read(new) or b"").count(raw) - (sources.read(old) or b"").count(raw)) > 0

    blobs = [new if made(old, new) else None for _sha, _subject, old, new in listed]
    at = _first_with(git, hunk, base, blobs, raw, found.adds, sources, lines)
    if at is not None:
        found.commit, found.subject = listed[at][0], listed[at][1]
    found.passed = len(listed) if at is None else at


def _first_with(git: Git, hunk: Hunk, base: str | None, blobs: list[str | None], line: bytes, adds: bool,
                sources: Sources, lines: dict[str | None, _Lines]) -> int | None:
    """The index of the first of BLOBS (versions of HUNK's file; None: not one to look at) that has HUNK at its
    own place, made since its BASE blob; when none has all of it (upstream made it in steps), the first whose
    HUNK's place holds LINE (ADDS; else no longer holds it). One `diff-tree` places HUNK in every version.
    A hunk deleting the file: the first that deletes it."""
    if hunk.new_oid in (None, ZERO):
        return next((i for i, blob in enumerate(blobs) if blob == ZERO), None)
    looked = [(i, blob) for i, blob in enumerate(blobs) if blob is not None and blob != ZERO]
    spans = BaseMap(git, [(base, blob) for _i, blob in looked]) if looked else None
    base_lines, head = _text(base, sources, lines), _text(hunk.new_oid, sources, lines)
    for i, blob in looked:
        if _at_place(hunk, _places(hunk, base_lines, head, _text(blob, sources, lines)), spans, base, blob):
            return i
    mine = span_of(hunk.old_start, hunk.old_count)
    for i, blob in looked:
        region = spans.region(base, blob, mine) if spans is not None else None
        if region is None or spans is None:
            continue
        text = _text(blob, sources, lines)
        held = any(meets(_span_at(at, 1), region) for at in text.find([line]) + text.find([line + b"\r"]))
        if held == adds:
            return i
    return None


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
        lines = ", deleted" if last == 0 else f", line {first}" if first == last else f", lines {first}-{last}"
        said.append(f"{path}: {len(spans)} of {total}{lines}")
    return "; ".join(said) + (f"; ... (+{len(by) - most} more files)" if len(by) > most else "")
