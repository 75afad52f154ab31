"""What a union leaves out of the PRs it stands for, hunk by hunk (helper-128: lost work nothing named).

A union folds PRs and its maintainer resolves where they meet; the per-path check (landing.account_provided)
trusts a union for every file it changes. Here each hunk of a folded PR in such a file is looked for in
the tree that should hold it (the composed tip; the union's own commit for `union continue`): its added
lines (blank or bracket-only lines at either end aside) as one block, anywhere in the file. A hunk not
there is left out unless it lies in a region the union had to reconcile: one that another folded PR's
hunk, or the union's own, changes too (their lines meet or touch in the same base file, as git's merge
sees a conflict), in the same def/class for Python (explain's coverage: `re-expressed`). Where the base
files differ and lines cannot be compared, the union's scopes decide (outside Python: that it changes
the file at all), as coverage's classification does. Pure deletions are not checked (a removed line may
stand elsewhere by right).

One batched `diff-tree -p` for every PR and union; blobs through the long-lived `cat-file --batch`,
Python files parsed only where a hunk is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from carrytool.gitlayer.git import Change, Git
from carrytool.pipeline.hunks import Hunk, find_block, read_hunks
from carrytool.pipeline.scopes import SpanCache, hunk_scopes


@dataclass(frozen=True)
class Folded:
    """A PR a union stands for: its id, its own diff (BASE -> HEAD: CHANGES) and the files to look in."""

    id: str
    base: str
    head: str
    changes: Sequence[Change]
    paths: frozenset[str]


@dataclass(frozen=True)
class UnionCheck:
    """A union's own diff (BASE -> HEAD: CHANGES), the tree its PRs' hunks must stand in, and its PRs."""

    base: str
    head: str
    changes: Sequence[Change]
    tip: str
    folded: tuple[Folded, ...]


@dataclass(frozen=True)
class LeftOut:
    pr: str
    file: str
    lines: tuple[int, int]          # in the PR's head
    scopes: tuple[str, ...]

    def describe(self) -> str:
        first, last = self.lines
        where = f"{self.file}:{first}" + (f"-{last}" if last != first else "")
        return where + (f" ({', '.join(self.scopes)})" if self.scopes else "")

    def region(self) -> str:
        """Why it is not a region the union reconciled, as a clause."""
        return "no other PR it folds, nor the union itself, changes those lines" + \
            (" in that def/class" if self.scopes else "")


def left_out(git: Git, unions: Sequence[UnionCheck]) -> list[list[LeftOut]]:
    """For each of UNIONS, the hunks of its folded PRs its tip lacks outside the regions it reconciled."""
    wanted = [u for u in unions if any(f.paths for f in u.folded)]
    pairs = [pair for u in wanted for pair in [*((f.base, f.head) for f in u.folded), (u.base, u.head)]]
    changes = [list(c) for u in wanted for c in [*(f.changes for f in u.folded), u.changes]]
    hunks = iter(read_hunks(git, pairs, changes) if pairs else [])
    found: dict[int, list[LeftOut]] = {}
    spans = SpanCache()
    for union in wanted:
        mine = [next(hunks) for _ in union.folded]
        found[id(union)] = _left_out(git, spans, union, mine, next(hunks))
    return [found.get(id(u), []) for u in unions]


def _left_out(git: Git, spans: SpanCache, union: UnionCheck, folded: list[list[Hunk]], own: list[Hunk]
              ) -> list[LeftOut]:
    tip: dict[str, list[bytes] | None] = {}
    missing: list[tuple[int, Hunk]] = []
    for k, (pr, hunks) in enumerate(zip(union.folded, folded)):
        for hunk in hunks:
            block = _core(hunk.added) if hunk.kind == "text" and hunk.path in pr.paths else ()
            if not block:
                continue
            if hunk.path not in tip:
                data = git.file_at(union.tip, hunk.path)
                tip[hunk.path] = data.split(b"\n") if data is not None else None
            lines = tip[hunk.path]
            if lines is not None and not find_block(lines, block):    # a file gone: the per-path check's
                missing.append((k, hunk))
    if not missing:
        return []

    def scopes(hunk: Hunk, changes: Sequence[Change]) -> list[str]:
        return hunk_scopes(hunk, _change_of(changes, hunk.path), lambda oid, line: spans.scope(
            oid, line, lambda: git.read_blob(oid)))

    out = []
    for k, hunk in missing:
        pr = union.folded[k]
        mine = (hunk, _change_of(pr.changes, hunk.path), scopes(hunk, pr.changes))
        others = [(h, other.changes) for j, other in enumerate(union.folded) if j != k
                  for h in folded[j] if h.path == hunk.path]
        others += [(h, union.changes) for h in own if h.path == hunk.path]
        if not any(_meet(mine, (h, _change_of(changes, h.path)), lambda h=h, c=changes: scopes(h, c))
                         for h, changes in others):
            out.append(LeftOut(pr.id, hunk.path, hunk.span, tuple(mine[2])))
    return out


def _meet(mine: tuple[Hunk, Change | None, list[str]], other: tuple[Hunk, Change | None],
          other_scopes: Callable[[], list[str]]) -> bool:
    """Whether hunk OTHER (another folded PR's, or the union's own) changes the region of MINE: lines that meet or
    touch in the same base file (in a def/class they share, where both have one); base files differing, a
    def/class they share (where MINE has none: that it changes the file at all)."""
    hunk, change, scopes = mine
    theirs, their_change = other
    comparable = change is not None and their_change is not None and change.old_oid == their_change.old_oid
    if comparable and not _touch(hunk, theirs):
        return False
    if not scopes:
        return True
    shared = set(scopes) & set(other_scopes())
    return bool(shared) or (comparable and not other_scopes())


def _touch(one: Hunk, two: Hunk) -> bool:
    """Whether two hunks of one base file change lines that meet or touch (nothing unchanged between them:
    git's merge calls that a conflict). A line k is 2k, the place after it 2k+1."""
    def span(h: Hunk) -> tuple[int, int]:
        if not h.old_count:
            return 2 * h.old_start + 1, 2 * h.old_start + 1
        return 2 * h.old_start - 1, 2 * (h.old_start + h.old_count - 1) + 1
    (a, b), (c, d) = span(one), span(two)
    return a <= d and c <= b


def _core(lines: Sequence[bytes]) -> tuple[bytes, ...]:
    """LINES without the lines that say nothing on their own (blank, brackets only) at either end."""
    trivial = [not line.strip(b" \t\r()[]{}:;,.#") for line in lines]
    if all(trivial):
        return ()
    first = trivial.index(False)
    last = len(trivial) - trivial[::-1].index(False)
    return tuple(lines[first:last])


def _change_of(changes: Sequence[Change], path: str) -> Change | None:
    return next((c for c in changes if c.path == path), None)
