"""`carrytool union status`: stale folds, upstream drift into owned files, PRs merged upstream, and what
a refold would reuse from the resolution store and what it would ask."""

from __future__ import annotations

import shlex
import stat
from pathlib import Path
from typing import Any

from carrytool.errors import InputError
from carrytool.gitlayer.git import Git
from carrytool.manifest import paths as pathmatch
from carrytool.union.fold import Union
from carrytool.union.resolutions import has_markers


def status(union: Union, *, offline: bool) -> dict[str, Any]:
    """Stale folds, upstream drift into owned files, PRs merged upstream since, and what a refold changes."""
    git, entry = union.git, union.entry
    upstream, items = union.resolve(offline)
    current = git.rev_parse(entry.commit) if entry.commit else None
    folded = {s.pr: s.head for s in entry.supersedes}
    report: dict[str, Any] = {"entry": entry.id, "commit": current, "patch": entry.patch, "upstream": upstream}
    report["stale"] = [{"pr": i.pr, "folded": folded[i.pr], "current": i.head} for i in items
                       if folded.get(i.pr) and not i.head.startswith(folded[i.pr])]  # type: ignore[arg-type]
    report["unfolded"] = [i.pr for i in items if not folded.get(i.pr)]
    composed = _composed_with(union, current)
    report["not_composed"] = [s.pr for s in entry.supersedes if composed is not None and s.pr not in composed]
    report["drift"] = _drift(git, current, upstream, entry.owns)
    report["merged_upstream"] = [i.pr for i, merged in zip(items, git.upstream_has(upstream, [union.only_paths(i)
                                                                                         for i in items])) if merged]
    state = {"name": union.name, "upstream": upstream, "items": [i.__dict__ for i in items], "next": 0,
             "tip": upstream, "touched": {}, "reused": [], "used_keys": [], "scratch": str(union.scratch)}
    refold = union.advance(state, dry=True)
    if refold.done and current:
        changes = git.diff_trees([(current, refold.commit)])[0]  # type: ignore[list-item]
        report["refold"] = {"needs_resolution": [], "changes": sorted({p for c in changes for p in c.paths}),
                            "reused": refold.reused}
    else:
        report["refold"] = {"needs_resolution": refold.conflicts, "changes": None, "reused": refold.reused}
    report["refold"]["re_expressed"] = refold.re_expressed      # (a refold that stops finishes nothing: [])
    report["under_way"] = union.state_path.exists() or union.state_path.is_symlink()
    report["fold"] = _under_way(union) if report["under_way"] else None
    report["patch_edited"] = union.patch_edited()
    return report


def _under_way(union: Union) -> dict[str, Any]:
    """The fold under way (its state): stopped on a conflict (`at` the PR, the `files` it asks about, the
    `scratch` tree) or interrupted between steps (`stopped` false), with the commands that go on with it
    and drop it. `union compose` refuses while it is there (helper-147: status said "refold: carrytool union
    compose", which failed with exit 4, "a fold ... is already under way")."""
    fold: dict[str, Any] = {"stopped": False, "at": None, "files": [], "scratch": None, "manifest": None,
                            "corrupt": None, "continue": union.command("continue"), "abort": union.command("abort")}
    try:
        state = union.load()
    except InputError as exc:          # unreadable or corrupt: only abort (which works on it) goes on
        return {**fold, "corrupt": exc.message, "continue": None}
    conflict = state.get("conflict")
    fold.update(scratch=state["scratch"], manifest=state.get("manifest"))
    if fold["manifest"] and fold["manifest"] != str(union.manifest.path.resolve()):
        # begun from another manifest (a copy: helper-130): it goes on from that one
        fold["continue"], fold["abort"] = (_with_manifest(union, verb, fold["manifest"])
                                           for verb in ("continue", "abort"))
    if conflict:
        root = Path(state["scratch"])
        fold.update(stopped=True, at=f"pr/{conflict['pr']}",
                    files=[{"file": c["file"], "kind": c["kind"], "entries": c["entries"], "now": _now(root, c)}
                           for c in conflict["files"]])
    return fold


def _now(root: Path, conflict: dict[str, Any]) -> str | None:
    """Where the conflicted file of CONFLICT (a stop's record) stands in the scratch tree ROOT: "unresolved"
    (conflict markers remain), "resolved" (none left), or what `union continue` refuses (union.taken: both
    sides' changes would be dropped) unless the file is taken by name: "gone", "link", "directory". None for
    a conflict of another kind, or one decided by deleting the file (those have no markers to resolve)."""
    if conflict["kind"] == "other" or conflict.get("deletes_file"):
        return None
    path, folder = root / conflict["file"], root
    for part in Path(conflict["file"]).parts[:-1]:      # continue reads no file through a folder made a link or a
        folder = folder / part                          # file (Scratch.read): gone there (h257: "resolved" was read
        if folder.is_symlink() or not folder.is_dir():  # through the link, in a file outside the scratch tree)
            return "gone"
    if path.is_symlink():
        return "link"
    if path.is_dir():
        return "directory"
    try:
        if not stat.S_ISREG(path.lstat().st_mode):  # a FIFO, device or socket (continue refuses it): never read,
            return None                             # a FIFO's read waits for a writer (h257: status hung)
        data = path.read_bytes()
    except FileNotFoundError:
        return "gone"
    except OSError:
        return None
    return "unresolved" if has_markers(data) else "resolved"


def _with_manifest(union: Union, verb: str, manifest: str) -> str:
    """`carrytool union VERB NAME` with -m MANIFEST and the --repo the user gave."""
    words = shlex.split(union.invocation)
    repo = words[words.index("--repo"):words.index("--repo") + 2] if "--repo" in words else []
    return shlex.join(["carrytool", "union", verb, union.name, "-m", manifest, *repo])


def _composed_with(union: Union, current: str | None) -> frozenset[int] | None:
    """The PRs the union's commit or patch says it was composed with (its `Carry-Supersedes:` trailer)."""
    from carrytool.pipeline.facts import supersedes_trailer
    from carrytool.pipeline.resolve import patch_message

    if current:
        return supersedes_trailer(str(union.git.commit_info(current)["message"]))
    if union.entry.patch:
        try:
            return supersedes_trailer(patch_message((union.manifest.base_dir / union.entry.patch).read_bytes()))
        except OSError:
            return None
    return None


def _drift(git: Git, union_commit: str | None, upstream: str, owns: tuple[str, ...]) -> list[dict[str, str]]:
    if not union_commit or not owns:
        return []
    parents = git.commit_info(union_commit)["parents"]
    if not parents or parents[0] == upstream or not git.is_ancestor(parents[0], upstream):  # type: ignore[index]
        return []
    out = git.run("log", "--format=%H %s", f"{parents[0]}..{upstream}", "--",  # type: ignore[index]
                  *(":(glob)" + p if pathmatch.is_glob(p) else ":(literal)" + p for p in owns)).stdout
    return [{"commit": line[:40], "subject": line[41:]} for line in out.decode("utf-8", "replace").splitlines()]
