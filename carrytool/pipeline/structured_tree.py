"""Apply the structured rule (pipeline.structured) to a conflicted merge-tree result: every conflicted
path must be a Python text file matching the entry's `structured_merge` patterns and resolve, or nothing
changes and the merge stays the conflict git reported."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from carrytool.gitlayer.git import ConflictStage, Git, MergeResult
from carrytool.manifest import paths as pathlib_
from carrytool.pipeline.structured import MARKER_SIZE, Hunk, Resolution, resolve

_TEXT = ("100644", "100755")


@dataclass
class TreeResolution:
    """TREE is the resolved tree, or None when some path refused (REFUSED says which and why)."""

    tree: str | None
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)

    def report(self) -> list[dict[str, object]]:
        """The report's `structured` list: one item per resolved hunk, by file then line."""
        return [{"file": path, "lines": list(h.lines), "kind": h.kind}
                for path in sorted(self.hunks) for h in self.hunks[path]]


def resolve_file(git: Git, base: bytes, ours: bytes, theirs: bytes) -> Resolution | None:
    """The structured resolution of one file's 3-way merge; None when git merges it cleanly or can't."""
    merged = git.merge_diff3(ours, base, theirs, MARKER_SIZE)
    if merged is None or merged[0]:
        return None
    return resolve(base, ours, theirs, merged[1])


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
        if not content or set(stages) != {1, 2, 3} or any(s.mode not in _TEXT for s in stages.values()) \
                or len({s.mode for s in stages.values()}) != 1:
            out.refused[path] = ["not-a-content-conflict"]
            continue
        blobs = [git.read_blob(stages[n].oid) for n in (1, 2, 3)]
        resolution = resolve_file(git, *blobs)
        if resolution is None or not resolution.ok:
            out.refused[path] = resolution.refused if resolution else ["binary"]
            continue
        out.hunks[path] = resolution.hunks
        edits[path] = (stages[2].mode, git.write_blob(resolution.text))  # type: ignore[arg-type]
    if (partial or not out.refused) and edits:
        out.tree = git.edit_tree(result.tree, edits)
    return out


def without_resolved(result: MergeResult, resolution: TreeResolution) -> MergeResult:
    """RESULT once the paths RESOLUTION resolved are no longer conflicts (its tree holds them)."""
    if resolution.tree is None:
        return result
    stages = tuple(s for s in result.stages if s.path not in resolution.hunks)
    messages = tuple(m for m in result.messages if not set(m[0]) <= set(resolution.hunks))
    return MergeResult(not stages and not any(m[1].startswith("CONFLICT") for m in messages), resolution.tree,
                       stages, messages)
