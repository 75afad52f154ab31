"""What git knows about each entry: its head, its base and its own diff (batched: one diff-tree process)."""

from __future__ import annotations

from collections.abc import Sequence

from carrytool.errors import UnknownRef
from carrytool.gitlayer.git import EMPTY_TREE, Git, paths_of
from carrytool.pipeline.plan import PENDING, Step
from carrytool.pipeline.resolve import Resolved


def gather(git: Git, resolved: Resolved, steps: Sequence[Step], *, everything: bool = False) -> None:
    """Fill head, base and all_changes of pending steps (of every step with EVERYTHING, for explain)."""
    todo = [s for s in steps if (s.status == PENDING or everything) and s.reason not in ("missing",)]
    # PRs a union supersedes whole: only the paths they change, for the landing checks (Step.superseded_paths)
    whole = [s for s in steps if s not in todo and s.reason == "superseded" and s.entry.kind == "pr"
             and not s.provided_by and s.entry.number in resolved.heads]
    pr_heads = [resolved.heads[s.entry.number] for s in [*todo, *whole]  # type: ignore[index]
                if s.entry.kind == "pr" and s.entry.number in resolved.heads]
    bases = git.merge_bases(resolved.upstream, pr_heads)
    git.load_commits([*pr_heads, *(b for b in bases.values() if b)])   # one process, not a round trip each
    for step in todo:
        entry = step.entry
        if entry.kind == "pr":
            step.head = resolved.heads.get(entry.number)  # type: ignore[arg-type]
            if step.head is None:
                continue
            step.base = bases.get(step.head)
            if step.base is None:
                raise UnknownRef(f"{entry.id}: head {step.head[:12]} shares no history with upstream",
                                 hint="is upstream.pr_ref pointing at the right repository?")
        else:
            step.head = resolved.commits.get(entry.id)
            if step.head is None:
                continue
            step.base = resolved.patch_bases.get(entry.id) or _first_parent(git, step.head)
    superseded = [(s, resolved.heads[s.entry.number]) for s in whole]  # type: ignore[index]
    superseded = [(s, head, bases[head]) for s, head in superseded if bases.get(head)]
    pairs = [(s.base or EMPTY_TREE, s.head) for s in todo if s.head] + [(base, head) for _s, head, base in superseded]
    diffs = git.diff_trees(pairs)  # type: ignore[arg-type]
    for step, changes in zip([s for s in todo if s.head], diffs):
        step.all_changes = changes
    for (step, _head, _base), changes in zip(superseded, diffs[len(diffs) - len(superseded):]):
        step.superseded_paths = paths_of(changes)


def _first_parent(git: Git, sha: str) -> str | None:
    parents = git.commit_info(sha)["parents"]
    return parents[0] if parents else None  # type: ignore[index]
