"""What a union's tree lacks of the PRs it stands for, as pipeline.provided finds it: the PRs (Folded) and the
union (UnionCheck) it weighs, and each PR hunk (or whole file, mode) left out of the tree (LeftOut) with how it
stands and the words its warning says it in. Split from provided.py (h238 took it past 500 lines)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carrytool.gitlayer.git import Change

ABSENT, RECONCILED = "absent", "reconciled"
KINDS = {"120000": "link", "160000": "submodule"}     # the modes of a file that holds no lines: what it is then


@dataclass(frozen=True)
class Folded:
    """A PR a union stands for: its id, its own diff (BASE -> HEAD: CHANGES) and the files to look in; FOLDED: the
    older head the union folded when the PR moved since (a stale fold), else empty."""

    id: str
    base: str
    head: str
    changes: Sequence[Change]
    paths: frozenset[str]
    folded: str = ""


@dataclass(frozen=True)
class UnionCheck:
    """A union's own diff (BASE -> HEAD: CHANGES), the tree its PRs' hunks must stand in, and its PRs."""

    base: str
    head: str
    changes: Sequence[Change]
    tip: str
    folded: tuple[Folded, ...]
    onto: str = ""      # the commit the tip's union was composed on, whose files are upstream's (default: BASE)



@dataclass(frozen=True)
class LeftOut:
    """A PR's hunk (or, LINES None, its whole file) the tree lacks verbatim: HOW (ABSENT: warned unless a drop
    covers it; RECONCILED: missing in a region the union reconciled; RE_EXPRESSED: there in another form)."""

    pr: str
    file: str
    lines: tuple[int, int] | None   # in the PR's head; None: the whole file (the union does not change it; WHOLE)
    scopes: tuple[str, ...]
    module: bool = False            # a line of it at module level (or the whole file): only a drop without `in`
    head: str = ""                  # the PR's head it was read at (the hint's `head:`)
    how: str = ABSENT
    removed: tuple[int, int] | None = None   # a pure deletion: the lines it removes in the PR's base
    whole: str = ""                 # the whole file: "lacks" one the PR changes, "keeps" one the PR deletes;
    #                                 "mode": the tree has the file at another mode than MODE, the one the PR sets;
    #                                 "kind": the tree has a link or submodule (MODE) there, the PR changes lines
    mode: str = ""
    beside: tuple[str, ...] = ()    # ABSENT though these PRs insert lines in the same conflict (Regions: "dropped")
    next_to: tuple[str, ...] = ()   # ABSENT though these PRs change lines next to it (an insertion; "changed-next"),
    #                                 or insert lines next to it (a replacement; "inserted-next"), in that conflict
    inserted: bool = False          # NEXT_TO inserts lines next to it
    apart: tuple[str, ...] = ()     # ABSENT though these PRs change those lines or the next, in other def/classes
    missing: tuple[int, ...] = ()   # the lines of the PR's head the tree lacks of a hunk it otherwise holds
    unfolded: str = ""              # the head the union folded, which lacks this change (a stale fold)
    upstream: bool = False          # upstream's file (the one the union is composed on) has it at its place
    worded: bool = False            # ABSENT though the union writes the rest of the hunk in its own words there
    #                                 (a deletion: writes the lines it removes in its own words)
    binary: bool = False            # WHOLE "kind": the PR changes a binary file there, not lines
    near: str = ""                  # ABSENT: what keeps a line of the union's there calling the hunk's names from
    #                                 being a form of it (Regions.near), as a clause

    def lacking(self, whose: str = "") -> str:
        """How the tree leaves it out, as a clause: lacks WHOSE hunk (default: its PR's), or (a pure deletion)
        still has the lines it removes; or lacks the file the PR changes, or keeps the file it deletes."""
        if self.whole == "lacks":
            return f"lacks {self.file}, which {self.pr} changes"
        if self.whole == "keeps":
            return f"still has {self.file}, which {self.pr} deletes"
        if self.whole == "mode":
            return "lacks " + (whose or self.pr + "'s") + f" mode change of {self.file} (to {self.mode})"
        if self.whole == "kind":
            return f"has a {KINDS.get(self.mode, 'link')} at {self.file}, " + \
                (f"which {self.pr} changes (a binary file)" if self.binary else f"whose lines {self.pr} changes")
        if self.removed is None:
            part = f"{_numbered(self.missing)} of " if self.missing else ""
            return f"lacks {part}" + (whose or self.pr + "'s") + f" hunk {self.describe()}" + \
                (", which upstream has too: the union removed upstream's lines as well" if self.upstream else "")
        first, last = self.removed
        return f"still has {self._those('the')} {self.pr} removes at {self.describe()} ({self.file}:{first}" + \
            (f"-{last}" if last != first else "") + " in its base)" + \
            (", which upstream removed too: the union put them back" if self.upstream else "")

    def describe(self) -> str:
        if self.lines is None:
            return f"{self.file} (" + ("mode change" if self.whole == "mode" else "the whole file") + ")"
        first, last = self.lines
        where = f"{self.file}:{first}" + (f"-{last}" if last != first else "")
        return where + (f" ({', '.join(self.scopes)})" if self.scopes else "")

    def region(self) -> str:
        """Why it is not a region the union reconciled, as a clause; and what keeps a line of the union's there
        calling the hunk's names from being a form of it (NEAR)."""
        return self._region() + (f"; {self.near}" if self.near else "")

    def _those(self, article: str) -> str:
        """The lines the hunk changes (a deletion: removes), as ARTICLE says them (`the`, `those`), in the number
        they are: `the line`, `that line` for one (h259: "the lines" was said of one line)."""
        span = self.removed if self.removed is not None else self.lines
        if span is not None and span[0] == span[1]:
            return "that line" if article == "those" else f"{article} line"
        return f"{article} lines"

    def _region(self) -> str:
        if self.whole == "mode":
            return "no other PR it folds sets another mode on that file"
        if self.beside:
            return f"another PR it folds inserts lines there too, and both could be kept: {_listed(self.beside)} " + \
                ("inserts" if len(self.beside) == 1 else "insert") + " in the same conflict, and the union does not " \
                "keep this hunk there nor write lines of its own for it"
        if self.next_to:
            verb = ("inserts" if len(self.next_to) == 1 else "insert") if self.inserted else \
                ("changes" if len(self.next_to) == 1 else "change")
            return f"another PR it folds {'only inserts lines' if self.inserted else 'changes the lines'} next to " \
                f"it, and both could be kept: {_listed(self.next_to)} {verb} " + \
                ("lines" if self.inserted else "the lines") + " next to it in the same conflict, and the union does " \
                "not keep this hunk there nor write lines of its own for it"
        if self.worded:
            if self.removed is not None:
                does = "line does: it is" if self.removed[0] == self.removed[1] else "lines do: they are"
                return f"the union writes lines of its own there doing what the removed {does} kept in its words"
            lacked = f"{_numbered(self.missing)} " + ("does" if len(self.missing) == 1 else "do") \
                if self.missing else "these do"
            return f"the union writes lines of its own there for the rest of this hunk, but none doing what {lacked}"
        if self.apart:
            return f"{_listed(self.apart)} " + ("changes" if len(self.apart) == 1 else "change") + \
                f" {self._those('those')} or the next ones, but in another def/class, nor does the union write lines of its " \
                "own in that def/class"
        if self.whole == "kind":
            return f"no other PR it folds makes that file a {KINDS.get(self.mode, 'link')}"
        if self.whole:
            return "no other PR it folds " + ("deletes" if self.whole == "lacks" else "changes") + " that file"
        return f"no other PR it folds changes {self._those('those')} or the next ones" + \
            (" in that def/class" if self.scopes else "") + ", nor does the union write lines of its own there"


def _numbered(lines: Sequence[int]) -> str:
    """`line 7`, `lines 7-9`, `lines 7, 9-10`: LINES (ascending) as a phrase."""
    runs: list[list[int]] = []
    for line in lines:
        if runs and line == runs[-1][1] + 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    said = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
    return ("line " if len(lines) == 1 else "lines ") + said


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
