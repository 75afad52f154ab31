"""What explain knows about every entry: head, base, whole diff, hunks, and the scopes each hunk touches.

Sync only looks at the entries it still has to apply; explain looks at all of them (a superseded PR's
own diff is what tells whether the union really provides it), and at superseded PRs that are not
entries themselves when their folded head was fetched. The planned steps are never modified: the
facts are gathered on fresh steps, so explain's `entries` stay exactly sync's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from carrytool.errors import UnknownRef
from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import EMPTY_TREE, REGULAR_MODES, Change, Git, paths_of
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline import facts
from carrytool.pipeline.hunks import Hunk, parse_patches, parts_hunks, patch_parts, read_hunks
from carrytool.pipeline.plan import Step
from carrytool.pipeline.resolve import Resolved
from carrytool.pipeline.scopes import hunk_scopes, hunk_sides
from carrytool.pipeline.spancache import SpanCache


class Sources:
    """Blob contents by object id, read once through git's long-lived `cat-file --batch`."""

    def __init__(self, git: Git, spans: SpanCache | None = None) -> None:
        self.git = git
        self._cache: dict[str, bytes | None] = {}
        self.spans = spans if spans is not None else SpanCache(git.common_dir / "carrytool" / "cache")
        # EntryFacts.scopes_in's answers by what decides them, for every entry (stacked PRs share changes)
        self.scopes_by_change: dict[tuple, frozenset[str]] = {}

    def scope_at(self, oid: str, line: int) -> str | None:
        """The innermost def/class of blob OID (Python) containing LINE: only the pieces around LINE are
        parsed, once per blob, ever (SpanCache.scope)."""
        return self.spans.scope(oid, line, lambda: self.read(oid))

    def preload_later(self) -> Callable[[Iterable[str]], None]:
        """Read blobs not read yet, all in one `cat-file --batch` process, in two halves: the process is
        prepared now, and the function returned reads the OIDS it is given into this cache, in another
        thread (Git.blob_reader_later: a thread that parses them then never speaks to the run's git), while
        the caller's thread goes on; nothing else may use these Sources until it returned."""
        read = self.git.blob_reader_later()

        def fill(oids: Iterable[str]) -> None:
            wanted = [oid for oid in dict.fromkeys(oids) if oid and oid != ZERO and oid not in self._cache]
            if wanted:
                found = read(wanted)
                self._cache.update({oid: found.get(oid) for oid in wanted})
        return fill

    def read(self, oid: str | None) -> bytes | None:
        if not oid or oid == ZERO:
            return None
        if oid not in self._cache:
            obj = self.git.read_object(oid)
            self._cache[oid] = obj[1] if obj and obj[0] == "blob" else None
        return self._cache[oid]


@dataclass
class EntryFacts:
    """One entry's own change: base -> head, unfiltered, as raw changes and as zero-context hunks."""

    entry: Entry
    step: Step | None                 # the planned step (None for a superseded PR that is no entry)
    head: str | None = None
    base: str | None = None
    changes: list[Change] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    _scopes: dict[int, list[str]] = field(default_factory=dict, repr=False)
    # (the list, its length) they were computed from -> files; path -> hunks: asked for per pair
    _files: tuple[object, int, list[str]] = field(default=(None, 0, []), repr=False)
    _by_path: tuple[object, int, dict[str, list[Hunk]]] = field(default=(None, 0, {}), repr=False)
    _scopes_in: tuple[object, int, dict[str, frozenset[str]]] = field(default=(None, 0, {}), repr=False)
    _change_at: tuple[object, int, dict[str, Change]] = field(default=(None, 0, {}), repr=False)
    _changes_at: tuple[object, int, dict[str, list[int]]] = field(default=(None, 0, {}), repr=False)

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def files(self) -> list[str]:
        known, size, files = self._files
        if known is not self.changes or size != len(self.changes):
            files = paths_of(self.changes)
            self._files = (self.changes, len(self.changes), files)
        return list(files)

    def hunks_in(self, path: str) -> list[Hunk]:
        known, size, by_path = self._by_path
        if known is not self.hunks or size != len(self.hunks):
            by_path = {}
            for hunk in self.hunks:
                for key in dict.fromkeys((hunk.path, hunk.old_path)):
                    if key is not None:
                        by_path.setdefault(key, []).append(hunk)
            self._by_path = (self.hunks, len(self.hunks), by_path)
        return list(by_path.get(path, ()))

    def change_of(self, hunk: Hunk) -> Change | None:
        """The (first) change at HUNK's path: asked for every hunk, of every pair that shares its file."""
        known, size, at = self._change_at
        if known is not self.changes or size != len(self.changes):
            at = {}
            for change in self.changes:
                at.setdefault(change.path, change)
            self._change_at = (self.changes, len(self.changes), at)
        return at.get(hunk.path)

    def changes_at(self, paths: Iterable[str]) -> tuple[Change, ...]:
        """The changes whose path or old path is one of PATHS, in the list's order: asked for every path of
        every entry that shares one (a 350-file PR's list read once, not once per path)."""
        known, size, at = self._changes_at
        if known is not self.changes or size != len(self.changes):
            at = {}
            for index, change in enumerate(self.changes):
                for path in dict.fromkeys((change.path, change.old_path)):
                    if path is not None:
                        at.setdefault(path, []).append(index)
            self._changes_at = (self.changes, len(self.changes), at)
        indexes = sorted({index for path in paths for index in at.get(path, ())})
        return tuple(self.changes[index] for index in indexes)

    def scopes_of(self, hunk: Hunk, sources: Sources) -> list[str]:
        """Qualified scopes of HUNK: its removed lines in the base file, its added lines in the head file."""
        key = id(hunk)
        if key not in self._scopes:
            self._scopes[key] = hunk_scopes(hunk, self.change_of(hunk), sources.scope_at)
        return self._scopes[key]

    def blobs_in(self, path: str) -> set[str]:
        """The blobs `scopes_in(PATH)` reads: each hunk's base blob (removed lines), head blob (added lines)."""
        return {oid for hunk in self.hunks_in(path) for oid, _, _ in hunk_sides(hunk, self.change_of(hunk))}

    share_scopes = True       # scopes_in shared by entries with the same changes (tests compare both)

    def scopes_in(self, path: str, sources: Sources) -> frozenset[str]:
        """The scopes of every hunk in PATH: asked for every pair that shares PATH, kept per path (helper-96:
        pairs of 350-file PRs asked it 35,000 times), and in SOURCES by the changes that decide them: the
        hunks in PATH are the diffs of those changes' blobs, and each hunk's scopes are read in the blobs
        of its path's change. Entries that change PATH alike (a stack of PRs on one branch: on polars'
        60 PRs, 4,223 entry-paths were 569 changes) ask it once."""
        known, size, memo = self._scopes_in
        if known is not self.hunks or size != len(self.hunks):
            memo = {}
            self._scopes_in = (self.hunks, len(self.hunks), memo)
        found = memo.get(path)
        if found is None:
            hunks = self.hunks_in(path)
            key = None
            if self.share_scopes:
                key = (path, self.changes_at({path} | {hunk.path for hunk in hunks}))
                found = sources.scopes_by_change.get(key)
            if found is None:
                out: set[str] = set()
                for hunk in hunks:
                    out.update(self.scopes_of(hunk, sources))
                found = frozenset(out)
                if key is not None:
                    sources.scopes_by_change[key] = found
            memo[path] = found
        return found


def gather_evidence(git: Git, manifest: Manifest, resolved: Resolved, steps: Sequence[Step], *,
                    hunks: bool = True) -> dict[str, EntryFacts]:
    """Head, base, diff and hunks of every entry that has a head (and of superseded PRs with a known head).

    Returns id -> facts in manifest order; entries without a head (missing PRs) are absent. Without
    HUNKS, read_evidence_hunks reads them later (explain starts its pair merges first).
    """
    fresh = [Step(step.entry) for step in steps]
    fresh += [Step(entry) for entry in _superseded_outsiders(manifest, resolved)]
    _gather(git, resolved, fresh)
    planned = {step.id: step for step in steps}
    found = [EntryFacts(s.entry, planned.get(s.id), s.head, s.base, list(s.all_changes)) for s in fresh if s.head]
    if hunks:
        read_evidence_hunks(git, found)
    return {f.id: f for f in found}


DIFF_ALIKE_ONCE = True     # a file's change that entries make alike is diffed once (tests compare both)


def hunks_later(git: Git, found: Sequence[EntryFacts]) -> Callable[[], None]:
    """read_evidence_hunks in two halves: the patch process starts now (Git.patches_later: it runs on another
    core while the caller merges, explain: every entry alone onto upstream), and the function returned, in
    any thread (explain's parsing thread, while the caller composes), sets every fact's hunks from it.

    A file an earlier entry changes alike (the same path modified from the same blob to the same blob: a
    stack of PRs on one branch) is diffed once (DIFF_ALIKE_ONCE): a later entry's patch is asked from its
    base with those files already at their new blobs (so git leaves them out: a modified file is never a
    rename's source or target, the others pair as before), and their parts come from the earlier patch
    (60 polars PRs, a dozen on one 350-file branch: 4,223 file diffs, 569 distinct; 0.5 s of git's CPU)."""
    if not DIFF_ALIKE_ONCE:
        patches = git.patches_later(_patch_pairs(found))
        return lambda: _set_hunks(found, parse_patches(patches(), [f.changes for f in found]))
    pairs, alike = _diffed_once(git, found)
    patches = git.patches_later(pairs)
    return lambda: _set_hunks(found, _hunks_alike_once(patches(), [f.changes for f in found], alike))


def _alike_key(change: Change) -> tuple[str, str, str] | None:
    """What a file's part of a patch follows from, for a regular file modified in place (None otherwise)."""
    if change.status != "M" or change.old_mode != change.new_mode or change.new_mode not in REGULAR_MODES:
        return None
    return change.path, change.old_oid, change.new_oid


def _diffed_once(git: Git, found: Sequence[EntryFacts]) -> tuple[list[tuple[str, str]], list[set[int]]]:
    """The (old, new) pair whose patch each fact asks, and the ids of its changes an earlier fact's patch holds."""
    seen: set[tuple[str, str, str]] = set()
    pairs, alike = [], []
    for item in found:
        keys = [(change, _alike_key(change)) for change in item.changes] if item.base else []
        earlier = [change for change, key in keys if key is not None and key in seen]
        seen.update(key for _change, key in keys if key is not None)
        base = item.base or EMPTY_TREE
        if earlier:
            base = git.edit_tree(git.tree_of(base), {c.path: (c.new_mode, c.new_oid) for c in earlier})
        pairs.append((base, item.head))  # type: ignore[arg-type]  # facts have heads
        alike.append({id(change) for change in earlier})
    return pairs, alike


def _hunks_alike_once(patches: Sequence[bytes], changes: Sequence[Sequence[Change]],
                      alike: Sequence[set[int]]) -> list[list[Hunk]]:
    """Each fact's hunks, as parse_patches reads them from its whole patch: from its own patch (PATCHES), and
    for its changes in ALIKE, from the part of the earlier patch that holds the same change."""
    held: dict[tuple[str, str, str], bytes] = {}
    out = []
    for patch, mine, earlier in zip(patches, changes, alike):
        if not earlier:
            out.append(parse_patches([patch], [mine])[0])
            parts = {key: part for key, (_change, part) in patch_parts(patch, mine).items()}
        else:
            parts = {key: part for key, (_change, part) in
                     patch_parts(patch, [c for c in mine if id(c) not in earlier]).items()}
            for change in mine:
                key = _alike_key(change) if id(change) in earlier else None
                if key is not None and key in held:
                    parts[id(change)] = held[key]
            out.append(parts_hunks(mine, parts))
        for change in mine:
            key = _alike_key(change)
            if key is not None and id(change) in parts:
                held.setdefault(key, parts[id(change)])
    return out


def read_evidence_hunks(git: Git, found: Sequence[EntryFacts]) -> None:
    """Every fact's zero-context hunks, from one batched patch process."""
    _set_hunks(found, read_hunks(git, _patch_pairs(found), [f.changes for f in found]))


def _set_hunks(found: Sequence[EntryFacts], hunks: Sequence[list[Hunk]]) -> None:
    for item, mine in zip(found, hunks):
        item.hunks = mine


def _patch_pairs(found: Sequence[EntryFacts]) -> list[tuple[str, str]]:
    return [(f.base or EMPTY_TREE, f.head) for f in found]  # type: ignore[misc]  # facts have heads


def _gather(git: Git, resolved: Resolved, steps: list[Step]) -> None:
    """facts.gather on every step; one without history shared with upstream is left without a head."""
    try:
        facts.gather(git, resolved, steps, everything=True)
        return
    except UnknownRef:
        pass
    for step in steps:
        try:
            facts.gather(git, resolved, [step], everything=True)
        except UnknownRef:
            step.head = step.base = None


def _superseded_outsiders(manifest: Manifest, resolved: Resolved) -> Iterable[Entry]:
    """Superseded PRs that are not entries of their own, but whose head sync fetched."""
    ids = {e.id for e in manifest.entries}
    seen: set[int] = set()
    for entry in manifest.entries:
        for sup in entry.supersedes:
            if f"pr/{sup.pr}" in ids or sup.pr in seen or sup.pr not in resolved.heads:
                continue
            seen.add(sup.pr)
            yield Entry("pr", number=sup.pr, title=None, line=entry.line, index=-1)
