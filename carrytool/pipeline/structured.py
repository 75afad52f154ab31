"""Structured merge for Python: resolve conflict hunks where both sides only inserted whole statements.

Pure: the three sides of one file and git's diff3-style merge of them in, the resolved bytes and one
kind per hunk out, or the reasons each refused hunk stays a conflict. Statement boundaries come from
the standard library's `ast` (`lineno`/`end_lineno`); nothing here runs git.

A hunk resolves when, after the lines all three sides share at its edges are set aside:
- the base part is empty and each side inserted whole statements of the allowed kinds (definitions,
  imports, assignments) into the same body, neither reading what the other binds nor making a call as it
  runs whose order may matter (pipeline.pyorder, pipeline.pycalls), nor both binding names in one class
  body or registering by decorators (pipeline.pynamespace: else `order-dependent`), or whole items
  of the same list/dict/set/tuple literal: the result holds ours' insertion, then theirs', each byte for
  byte (ours is the earlier entry);
- or each part is one `from m import ...` of the same module and both sides only added names: the
  union of the names, sorted when both sides kept them sorted, else ours' order then theirs' additions.
- or one side rewrote whole statements and the other only inserted whole statements right before or
  after them (the base lines kept): the rewrite with the insertion where it was anchored.
- or both inserted, and the same statements are in both: kept once where each insertion stays whole (one
  holds the other, or ours ends with what theirs begins with), else a `shadows` refusal.
The whole file is then accepted only when it parses, no name is defined twice in a scope where neither
side defined it twice (nor an attribute or subscript an assignment sets: pybindings `_bound`), no dict
display holds a key twice where an added line holds one, no added line imports `*`, every line either
side added is there, and the other order (theirs first) gives
the same definitions. Anything else refuses the file: it stays the conflict git reported; or, partially
(`partial=True`, for unions), the refused hunks stay conflicts and the others resolve when the gates hold
with the refused hunks taken as ours and as theirs. Files are parsed in pieces (pipeline.pyparts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from carrytool.pipeline import pyparts
from carrytool.pipeline.structured_gates import _gates
from carrytool.pipeline.structured_hunks import _classify_lines, _classify_statements, _Index, _module_facts
from carrytool.pipeline.structured_segments import _assemble, _Conflict, parse_diff3


@dataclass(frozen=True)
class Hunk:
    """A resolved hunk: its lines in the resolved file (1-based, inclusive) and what both sides added."""

    lines: tuple[int, int]
    kind: str     # functions | methods | classes | imports | assignments | definitions | items | import-union
                  # | adjacent-edit (one side rewrote statements, the other inserted next to them)


@dataclass
class Resolution:
    """The outcome for one file: TEXT is None when any hunk (or a whole-file gate) refused.

    A partial outcome (`resolve(..., partial=True)`, some hunks resolved and some refused) keeps TEXT None
    and gives VARIANTS: the file with the resolved hunks resolved and each refused hunk as ours, as the
    base, as theirs. Merging the three (git's text merge) shows only the refused hunks as conflicts."""

    text: bytes | None
    hunks: list[Hunk] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # one reason per refused hunk, or one per file gate
    variants: tuple[bytes, bytes, bytes] | None = None
    why: list[str] = field(default_factory=list)       # REFUSED, each said in a sentence (`explain_refusal`)

    @property
    def ok(self) -> bool:
        return self.text is not None


# what each refusal means, for the one the user reads (`explain_refusal`); some say more (the name at fault)
REFUSALS = {
    "markers": "git's merge of it could not be read",
    "not-utf8": "it is not UTF-8 text",
    "binary": "it is not text",
    "not-a-content-conflict": "the conflict is not in its lines (a rename, a deletion, a mode or a type change)",
    "edit-edit": "both sides changed the same lines",
    "delete-edit": "one side deleted lines the other changed",
    "syntax": "the merged file does not parse",
    "not-statements": "an insertion is not whole statements",
    "not-items": "an insertion is not whole items of one literal",
    "other-statements": "an insertion holds statements other than definitions, imports or assignments, whose "
                        "order may matter",
    "mixed-scopes": "the insertions are in different bodies",
    "shadows": "a name would be bound twice",
    "duplicate-key": "a dict key would be given twice",
    "dict-spread": "a `**spread` is added beside other added items: which wins depends on the order",
    "star-import": "an added `from m import *` binds names no one can list",
    "lost-line": "a line one side added would be lost",
    "order-dependent": "the other order gives other definitions",
}


def explain_refusal(kind: str) -> str:
    """The sentence saying what refusal KIND means."""
    return REFUSALS.get(kind, kind)


def resolve(base: bytes, ours: bytes, theirs: bytes, merged: bytes, *, partial: bool = False) -> Resolution:
    """Resolve every conflict hunk of MERGED (diff3 markers of MARKER_SIZE) or say why not.

    PARTIAL: resolve the hunks that do resolve even when others are refused (see Resolution.variants).
    The gates then hold for the file with each refused hunk as ours and as theirs, the lines the refused
    hunks hold aside; a gate that fails refuses every hunk (it cannot say which one is at fault)."""
    segments = parse_diff3(merged)
    if segments is None:
        return _refuse(["markers"])
    try:
        for text in (base, ours, theirs):
            text.decode("utf-8")
    except UnicodeDecodeError:
        return _refuse(["not-utf8"])
    conflicts = [s for s in segments if isinstance(s, _Conflict)]
    for conflict in conflicts:
        _classify_lines(conflict)
    early = [c for c in conflicts if c.refused]
    if early and (not partial or len(early) == len(conflicts)):
        return _refuse_hunks(early)
    lines, blocks = _assemble(segments, theirs_first=False)
    parsed = pyparts.parse(lines, [r for pair in blocks for r in pair])
    tree = parsed.tree if parsed.ok else None
    if tree is None:
        for conflict in conflicts:
            conflict.refused = conflict.refused or "syntax"
    else:
        index = _Index(tree, [r for c, pair in zip(conflicts, blocks) if not c.refused for r in pair])
        module = _module_facts(ours, theirs)
        for conflict, (first, second) in zip(conflicts, blocks):
            if conflict.refused is None and conflict.parts:
                _classify_statements(conflict, index, first, second, lines, module)
    refused = [c.refused for c in conflicts if c.refused]
    if refused and (not partial or len(refused) == len(conflicts)):
        return _refuse_hunks([c for c in conflicts if c.refused])
    text = b"".join(lines)
    inserted = {line for c, pair in zip(conflicts, blocks) if not c.refused for a, b in pair
                for line in range(a, b + 1)}
    problem = _gates(base, ours, theirs, lines, segments, parsed, inserted)
    variants = None
    if problem is None and refused:
        variants = tuple(b"".join(_assemble(segments, theirs_first=False, refused_as=side)[0])
                         for side in ("ours", "base", "theirs"))
        other_lines, other_blocks = _assemble(segments, theirs_first=False, refused_as="theirs")
        other = pyparts.parse(other_lines, [r for pair in other_blocks for r in pair])
        if not other.ok:
            problem = "syntax"
        else:
            moved = {line for c, pair in zip(conflicts, other_blocks) if not c.refused for a, b in pair
                     for line in range(a, b + 1)}
            problem = _gates(base, ours, theirs, other_lines, segments, other, moved, refused_as="theirs")
    if problem:
        kind, why = problem if isinstance(problem, tuple) else (problem, explain_refusal(problem))
        return _refuse([kind] * len(conflicts), [why] * len(conflicts))
    hunks = [Hunk((min(o[0], t[0]), max(o[1], t[1])), c.kind or "statements")  # type: ignore[arg-type]
             for c, (o, t) in zip(conflicts, blocks) if not c.refused]
    if refused:
        return Resolution(None, hunks, refused, variants, _whys([c for c in conflicts if c.refused]))  # type: ignore[arg-type]
    return Resolution(text, hunks)


def _refuse(kinds: list[str], whys: list[str] | None = None) -> Resolution:
    return Resolution(None, refused=kinds, why=whys or [explain_refusal(kind) for kind in kinds])


def _refuse_hunks(conflicts: list[_Conflict]) -> Resolution:
    return _refuse([c.refused for c in conflicts], _whys(conflicts))  # type: ignore[misc]


def _whys(conflicts: list[_Conflict]) -> list[str]:
    """Each refused one of CONFLICTS said in a sentence: what is known of it, else what its kind means."""
    return [c.why or explain_refusal(c.refused) for c in conflicts]  # type: ignore[arg-type]
