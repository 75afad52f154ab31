"""What upstream already has of an entry that conflicts with it alone: which of the entry's hunks upstream
made too since the entry's base, and the upstream commit that made them (h185: upstream merged sqlalchemy
PR #13487 as another commit, its session.py hunk byte for byte, its test rewritten; explain said only
"rebase needed").

By content, as `git log -S` counts: a hunk is in upstream when upstream's file holds its added lines (as
consecutive lines) more often than the entry's base did, and its removed lines less often. A hunk whose
lines say nothing on their own (blank, brackets) decides nothing. A binary, mode or whole-file change is in
upstream when upstream has the file as the entry's head has it. The commit is the newest one since the
entry's base that changed how often its file holds the largest such hunk's most telling line
(`Git.last_changing`, one path-limited `git log -S`): the command the story prints finds it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.pipeline.hunks import Hunk, find_block, says_nothing
from carrytool.review.evidence import EntryFacts, Sources


@dataclass
class UpstreamHas:
    """The hunks of one entry upstream already has (`present`) and has not (`missing`), and the commit."""

    entry: str
    hunks: int
    present: list[dict[str, Any]] = field(default_factory=list)   # {"file", "lines": [a, b]} in upstream's file
    missing: list[dict[str, Any]] = field(default_factory=list)   # {"file", "lines": [a, b]} in the entry's head
    commit: str | None = None
    subject: str | None = None
    needle: tuple[str, str] | None = None       # (path, line) the commit was looked up by (`git log -S`)
    since: str | None = None                    # the entry's base
    taken: list[Hunk] = field(default_factory=list, repr=False)   # the entry's hunks upstream has

    @property
    def likely_merged(self) -> bool:
        """Upstream has at least half of its hunks: the conflict is most likely upstream's own version of it."""
        return 2 * len(self.present) >= self.hunks

    def to_json(self) -> dict[str, Any]:
        return {"hunks": self.hunks, "present": len(self.present), "likely_merged": self.likely_merged,
                "hunks_present": self.present, "hunks_missing": self.missing,
                "commit": self.commit, "subject": self.subject}

    def said(self) -> str:
        """`upstream already has 4 of its 6 hunks (a.py: 4 of 4, lines 10-52): likely merged upstream as 4914050a66 "..."`."""
        count = f"every one of its {self.hunks} hunks" if len(self.present) == self.hunks else \
            f"{len(self.present)} of its {self.hunks} hunks"
        made = f" as {self.commit[:10]} \"{self.subject}\"" if self.commit else ""
        verdict = f"likely merged upstream{made}" if self.likely_merged else f"upstream made part of its change{made}"
        return f"upstream already has {count} ({files_said(self.present, self.missing)}): {verdict}"

    def lacking(self) -> str:
        """`a.py (1 hunk), b.py (2 hunks)`: the files of the hunks upstream lacks."""
        by: dict[str, int] = {}
        for item in self.missing:
            by[item["file"]] = by.get(item["file"], 0) + 1
        shown = [f"{path} ({n} hunk{'s' if n != 1 else ''})" for path, n in list(by.items())[:4]]
        return ", ".join(shown) + (f", ... (+{len(by) - 4} more files)" if len(by) > 4 else "")

    def command(self, upstream: str) -> list[str] | None:
        """The `git log -S` that names the commit (as `Git.last_changing` ran it), when one was looked for."""
        if self.needle is None or self.since is None:
            return None
        path, needle = self.needle
        return ["git", "log", "-n", "1", "--format=%H %s", f"-S{needle}", f"{self.since}..{upstream}",
                "--", f":(literal){path}"]


def upstream_has(git: Git, upstream: str, evidence: dict[str, EntryFacts], sources: Sources,
                 entries: Sequence[str]) -> dict[str, UpstreamHas]:
    """For each of ENTRIES (those that conflict with upstream alone) whose facts are known, what upstream
    already has of it; only the entries upstream has at least one hunk of."""
    tree = git.tree_of(upstream)
    out = {}
    for entry in entries:
        facts = evidence.get(entry)
        if facts is None or not facts.head or not facts.base or not facts.hunks:
            continue
        found = _weigh(git, tree, facts, sources)
        if found.present:
            found.since = facts.base
            _find_commit(git, upstream, facts, found)
            out[entry] = found
    return out


def _weigh(git: Git, tree: str, facts: EntryFacts, sources: Sources) -> UpstreamHas:
    found = UpstreamHas(facts.id, len(facts.hunks))
    lines: dict[str | None, _Lines] = {}
    entries: dict[str, tuple[str, str] | None] = {}       # path -> (mode, oid) in upstream's tree

    def text(oid: str | None) -> _Lines:
        if oid not in lines:
            lines[oid] = _Lines((sources.read(oid) or b"").split(b"\n") if oid and oid != ZERO else [])
        return lines[oid]

    for hunk in facts.hunks:
        change = facts.change_of(hunk)
        if hunk.path not in entries:
            entries[hunk.path] = git.blob_at(tree, hunk.path)
        there = entries[hunk.path]
        if hunk.kind != "text":
            made = there is not None and there[1] == hunk.new_oid and (hunk.kind != "mode" or there[0] == hunk.new_mode)
            at = [1, 1] if made else None
        else:
            base_oid = change.old_oid if change is not None else None
            at = _has(hunk, text(base_oid), text(there[1] if there else None))
        if at is not None:
            found.present.append({"file": hunk.path, "lines": at})
            found.taken.append(hunk)
        else:
            found.missing.append({"file": hunk.path, "lines": list(hunk.span)})
    return found


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
        return [i for i in self._at.get(want[0], ()) if self.lines[i:i + n] == want] if want else []


def _has(hunk: Hunk, base: _Lines, upstream: _Lines) -> list[int] | None:
    """The lines of UPSTREAM that hold HUNK's added lines (or where its removed ones were), when upstream
    made HUNK's change since BASE; else None (or when its lines say nothing on their own)."""
    added, removed = list(hunk.added), list(hunk.removed)
    if not any(not says_nothing(line) for line in added + removed):
        return None
    if added:
        if not any(not says_nothing(line) for line in added):
            return None
        places = upstream.find(added)
        if len(places) <= len(base.find(added)):
            return None
    inside = removed and find_block(added, removed)     # what it removes lives on in what it adds
    if removed and not inside and any(not says_nothing(line) for line in removed):
        if len(upstream.find(removed)) >= len(base.find(removed)):
            return None
    if not added:
        near = min(hunk.new_start, max(len(upstream.lines), 1))
        return [near, near]
    first = min(places, key=lambda i: abs(i + 1 - hunk.new_start)) + 1
    return [first, first + len(added) - 1]


def _find_commit(git: Git, upstream: str, facts: EntryFacts, found: UpstreamHas) -> None:
    """The upstream commit that made the largest hunk upstream has (its most telling line, `git log -S`)."""
    best: tuple[int, str, str] | None = None
    for hunk in found.taken:
        lines = [line for line in (hunk.added or hunk.removed) if not says_nothing(line) and b"\0" not in line]
        if hunk.kind != "text" or not lines:
            continue
        line = max(lines, key=lambda item: len(item.strip())).decode("utf-8", "surrogateescape")
        size = sum(len(item) for item in hunk.added or hunk.removed)
        if best is None or size > best[0]:
            best = (size, hunk.path, line)
    if best is None:
        return
    found.needle = (best[1], best[2])
    made = git.last_changing(str(facts.base), upstream, best[2], best[1])
    if made is not None:
        found.commit, found.subject = made


def files_said(items: list[dict[str, Any]], others: list[dict[str, Any]], most: int = 4) -> str:
    """`a.py: 4 of 4, lines 10-52; b.py: 1 of 2, line 7`: per file of ITEMS, how many of its hunks (of ITEMS
    and OTHERS) and the lines ITEMS span; the first MOST files."""
    by: dict[str, list[list[int]]] = {}
    for item in items:
        by.setdefault(item["file"], []).append(item["lines"])
    said = []
    for path, spans in list(by.items())[:most]:
        total = len(spans) + sum(1 for other in others if other["file"] == path)
        first, last = min(s[0] for s in spans), max(s[1] for s in spans)
        lines = f", line {first}" if first == last else f", lines {first}-{last}"
        said.append(f"{path}: {len(spans)} of {total}{lines}")
    return "; ".join(said) + (f"; ... (+{len(by) - most} more files)" if len(by) > most else "")
