"""Apply the structured rule (pipeline.structured) to a conflicted merge-tree result: every conflicted
path must be a Python text file matching the entry's `structured_merge` patterns and resolve, or nothing
changes and the merge stays the conflict git reported.

Partially (`union compose`): each hunk on its own. A file whose other hunks are true conflicts keeps only
those, shown as git's own text merge shows them (the same hunks, hence the same resolution-store keys),
with the resolved hunks in place between them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from carrytool.gitlayer.git import REGULAR_MODES, ConflictStage, Git, MergeResult
from carrytool.manifest import paths as pathlib_
from carrytool.pipeline.structured import Hunk, Resolution, explain_refusal, resolve
from carrytool.pipeline.structured_segments import MARKER_SIZE, sides_of


@dataclass
class TreeResolution:
    """TREE is the resolved tree, or None when some path refused (REFUSED says which and why)."""

    tree: str | None
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)
    partial: set[str] = field(default_factory=set)    # paths resolved in part: still conflicted, fewer hunks
    why: dict[str, str] = field(default_factory=dict)  # a refused path -> its first refusal, in a sentence

    def refusals(self) -> dict[str, dict[str, str]]:
        """Each conflicted path the rule was asked about -> `{"refused": KIND, "why": SENTENCE}`: its first
        refusal, or, for a path that resolved while another did not, that it stays (an entry applies whole).
        Paths the patterns do not select are not its business."""
        out = {path: {"refused": kinds[0], "why": self.why.get(path) or explain_refusal(kinds[0])}
               for path, kinds in sorted(self.refused.items()) if kinds[0] != "not-selected"}
        blocking = sorted(self.refused)
        if self.tree is None and blocking:
            for path in sorted(set(self.hunks) - set(self.refused)):
                out[path] = {"refused": "other-file", "why": f"it resolves, but {blocking[0]} does not, and an "
                             "entry applies whole"}
        return out

    def report(self) -> list[dict[str, object]]:
        """The report's `structured` list: one item per resolved hunk, by file then line."""
        return [{"file": path, "lines": list(h.lines), "kind": h.kind}
                for path in sorted(self.hunks) for h in self.hunks[path]]


def resolve_file(git: Git, base: bytes, ours: bytes, theirs: bytes, *, partial: bool = False) -> Resolution | None:
    """The structured resolution of one file's 3-way merge; None when git merges it cleanly or can't."""
    merged = git.merge_diff3(ours, base, theirs, MARKER_SIZE)
    if merged is None or merged[0]:
        return None
    return resolve(base, ours, theirs, merged[1], partial=partial)


def shown_partly(git: Git, resolution: Resolution, conflicted: bytes) -> tuple[bytes, list[Hunk]] | None:
    """The file with RESOLUTION's resolved hunks in place and its refused ones as conflicts: git's text merge
    of the variants (refused hunks as ours, base, theirs), labelled as CONFLICTED (merge-tree's output) is,
    and the resolved hunks' lines in it. None unless taking ours (theirs) in every conflict left gives back
    the variant with the refused hunks as ours (theirs): then nothing but those hunks conflicts."""
    assert resolution.variants is not None
    ours, base, theirs = resolution.variants
    labels = ["ours", "base", "theirs"]
    for line in conflicted.split(b"\n"):
        label = line[8:-1] if line.endswith(b"\r") else line[8:]     # a CR LF file's marker line ends in CR LF
        if line.startswith(b"<<<<<<< ") and labels[0] == "ours":
            labels[0] = label.decode("utf-8", "replace")
        elif line.startswith(b">>>>>>> ") and labels[2] == "theirs":
            labels[2] = label.decode("utf-8", "replace")
    merged = git.merge_texts(ours, base, theirs, (labels[0], labels[1], labels[2]))
    if merged is None or merged[0]:
        return None
    sides = sides_of(merged[1])
    if sides is None or sides[:2] != (ours, theirs):
        return None
    where = sides[2]
    return merged[1], [Hunk((where[h.lines[0] - 1] + 1, where[h.lines[1] - 1] + 1), h.kind) for h in resolution.hunks]


def resolve_merge(git: Git, result: MergeResult, patterns: Sequence[str], *, partial: bool = False) -> TreeResolution:
    """Resolve every conflicted path of RESULT structurally, or refuse (the tree then stays RESULT's).
    PARTIAL: the tree holds the paths that did resolve even when others refused."""
    out = TreeResolution(None)
    content = all(kind == "CONFLICT (contents)" for _, kind, _ in result.messages if kind.startswith("CONFLICT"))
    by_path: dict[str, dict[int, ConflictStage]] = {}
    for stage in result.stages:
        by_path.setdefault(stage.path, {})[stage.stage] = stage
    edits: dict[str, tuple[str, str] | None] = {}
    for path in result.conflicted_paths:
        stages = by_path.get(path, {})
        if not pathlib_.matches_any(patterns, path):
            out.refused[path] = ["not-selected"]
            continue
        if not content or set(stages) != {1, 2, 3} or any(s.mode not in REGULAR_MODES for s in stages.values()) \
                or len({s.mode for s in stages.values()}) != 1:
            out.refused[path] = ["not-a-content-conflict"]
            continue
        blobs = [git.read_blob(stages[n].oid) for n in (1, 2, 3)]
        resolution = resolve_file(git, *blobs, partial=partial)
        if resolution is None or not resolution.ok:
            out.refused[path] = resolution.refused if resolution else ["binary"]
            if resolution and resolution.why:
                out.why[path] = resolution.why[0]
            found = git.blob_at(result.tree, path)
            shown = shown_partly(git, resolution, git.read_blob(found[1])) \
                if resolution and resolution.variants and found else None
            if shown is not None:
                out.partial.add(path)
                out.hunks[path] = shown[1]
                edits[path] = (found[0], git.write_blob(shown[0]))  # type: ignore[index]
            continue
        out.hunks[path] = resolution.hunks
        edits[path] = (stages[2].mode, git.write_blob(resolution.text))  # type: ignore[arg-type]
    if (partial or not out.refused) and edits:
        out.tree = git.edit_tree(result.tree, edits)
    return out


def without_resolved(result: MergeResult, resolution: TreeResolution) -> MergeResult:
    """RESULT once the paths RESOLUTION resolved are no longer conflicts (its tree holds them, and the paths
    it resolved in part with fewer conflict hunks)."""
    if resolution.tree is None:
        return result
    done = set(resolution.hunks) - resolution.partial
    stages = tuple(s for s in result.stages if s.path not in done)
    messages = tuple(m for m in result.messages if not set(m[0]) <= done)
    return MergeResult(not stages and not any(m[1].startswith("CONFLICT") for m in messages), resolution.tree,
                       stages, messages)
