"""What a reviewer should do next: unions to create, unions to refold (stale), unions upstream drifted under.

- `union`: a connected group of the conflict graph whose conflicts no single union already covers.
- `stale-fold`: a union folded an older head of a PR it supersedes; the range-diff says what moved.
- `drift`: upstream changed a union's owned paths since the union's base; the commits are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from carrytool.gitlayer.git import Git
from carrytool.manifest import paths
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.hunks import counted
from carrytool.review.evidence import EntryFacts
from carrytool.review.overlap import Overlap

# entries that sync will not apply whatever happens: their conflicts need no union
_OUT_OF_PLAY = ("disabled", "precompiled", "merged-upstream", "missing")


def union_groups(manifest: Manifest, overlaps: Sequence[Overlap], evidence: Mapping[str, EntryFacts],
                 upstream_conflicts: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """Connected components of the uncovered conflict graph: "consider a union of pr/A, pr/B"; and a
    `rebase` suggestion for each fork carry (not a union) in conflict with another entry.

    A PR a union provides (for the conflicting files) stands for that union in the graph, so a conflict
    between two PRs of one union is covered, and one between a union's PR and an outsider is the
    union's conflict with the outsider ("consider folding pr/C into carry/U"). An entry (or the union
    standing for it) that conflicts with upstream by itself (UPSTREAM_CONFLICTS) is left out: it needs a
    rebase, which no union gives, and groups must not chain through it. A fork carry is never in a
    group: only PRs can be superseded (h254: "consider a union of pr/3486, pr/3111, carry/fix-dare-nan",
    which no command starts); it is rebased onto the entries it meets (of two carries, the later one).
    """
    alone = upstream_conflicts or {}
    order = {e.id: i for i, e in enumerate(manifest.entries)}
    parent: dict[str, str] = {}
    files: dict[tuple[str, str], list[str]] = {}
    carried: dict[str, dict[str, list[str]]] = {}     # fork carry -> the entry it meets -> files

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for o in overlaps:
        if o.kind != "conflict" or o.stacked or o.held or not _in_play(evidence, o.entries):
            continue
        conflicted = o.conflict_files or o.files
        a, b = (_representative(manifest, i, o.own_paths(i, conflicted)) for i in o.entries)
        if a == b or a in alone or b in alone:
            continue
        key = (a, b) if order[a] < order[b] else (b, a)
        plain = [i for i in key if _plain_carry(manifest, i)]
        if plain:
            carried.setdefault(plain[-1], {}).setdefault(key[0] if plain[-1] == key[1] else key[1], []).extend(
                conflicted)
            continue
        files.setdefault(key, []).extend(conflicted)
        parent[find(key[1])] = find(key[0])
    groups: dict[str, set[str]] = {}
    for a, b in files:
        groups.setdefault(find(a), set()).update((a, b))
    out = []
    for members in groups.values():
        ids = sorted(members, key=order.__getitem__)
        paths = sorted({f for key, found in files.items() if key[0] in members for f in found})
        out.append(_group(manifest, ids, paths))
    out += [_rebase(carry, met, order) for carry, met in carried.items()]
    return sorted(out, key=lambda s: (order[s["entries"][0]], s["kind"]))


def _plain_carry(manifest: Manifest, entry_id: str) -> bool:
    """Whether ENTRY_ID is a fork carry that is no union (nothing can supersede it)."""
    entry = manifest.entry(entry_id)
    return entry is not None and entry.kind == "carry" and not entry.supersedes


def _rebase(carry: str, met: Mapping[str, list[str]], order: Mapping[str, int]) -> dict[str, Any]:
    """The suggestion for fork carry CARRY, in conflict with the entries MET (each with the files)."""
    others = sorted(met, key=order.__getitem__)
    said = ", ".join(others)
    files = sorted({f for found in met.values() for f in found})
    where = ", ".join(f"{o} (in {', '.join(sorted(set(met[o])))})" for o in others)
    move = f" and move it after {others[-1]} in the manifest" if order[others[-1]] > order[carry] else ""
    message = (f"{carry} conflicts with {where}: a fork carry cannot join a union's `supersedes`: rebase its "
               f"commit onto {said}{move} (or drop it if {said} {'do' if len(others) > 1 else 'does'} what it does)")
    return {"kind": "rebase", "entries": [carry, *others], "files": files, "message": message}


def _representative(manifest: Manifest, entry_id: str, files: Sequence[str]) -> str:
    """The enabled union that provides FILES of ENTRY_ID, or the entry itself."""
    for union in manifest.entries:
        if union.enabled and union.supersedes and union.id != entry_id and provides(union, entry_id, files):
            return union.id
    return entry_id


def _group(manifest: Manifest, ids: list[str], files: list[str]) -> dict[str, Any]:
    unions = [i for i in ids if (manifest.entry(i) or Entry("pr")).supersedes]
    others = [i for i in ids if i not in unions]
    if len(unions) == 1:
        message = f"consider folding {', '.join(others)} into {unions[0]} (they conflict in {', '.join(files)})"
    else:
        message = f"consider a union of {', '.join(ids)} (they conflict in {', '.join(files)})"
    return {"kind": "union", "entries": ids, "files": files, "message": message}


def _in_play(evidence: Mapping[str, EntryFacts], ids: Sequence[str]) -> bool:
    for entry_id in ids:
        facts = evidence.get(entry_id)
        step = facts.step if facts else None
        if step is None or not step.entry.enabled or step.reason in _OUT_OF_PLAY:
            return False
    return True


def provides(union: Entry, entry_id: str, files: Sequence[str]) -> bool:
    """Whether UNION provides FILES of ENTRY_ID: it is the entry, or supersedes it whole or for those paths."""
    if union.id == entry_id:
        return True
    for sup in union.supersedes:
        if f"pr/{sup.pr}" == entry_id:
            return not sup.paths or all(paths.matches_any(sup.paths, f) for f in files)
    return False


def stale_folds(git: Git, upstream: str, warnings: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sync's stale-fold warnings with full SHAs, the range-diff of folded vs current, and the files."""
    out = []
    for warning in warnings:
        if warning.get("kind") != "stale-fold":
            continue
        current = str(warning["current"])
        folded = git.rev_parse(str(warning["folded"]))
        item: dict[str, Any] = {"kind": "stale-fold", "entry": warning["entry"], "pr": warning["pr"],
                                "folded": folded or warning["folded"], "current": current,
                                "range_diff": [], "files": []}
        if folded is None:
            item["message"] = (f"{warning['entry']} folded pr/{warning['pr']} at {warning['folded']}, which this "
                               f"repository does not have; its head is now {current[:12]}")
        else:
            bases = (git.merge_base(upstream, folded) or folded, git.merge_base(upstream, current) or current)
            item["range_diff"] = git.range_diff((bases[0], folded), (bases[1], current))
            item["files"] = sorted({p for c in git.diff_trees([(folded, current)])[0] for p in c.paths})
            item["message"] = (f"{warning['entry']} folded pr/{warning['pr']} at {folded[:12]}, but its head is "
                               f"now {current[:12]}; changed since the fold: {', '.join(item['files']) or 'nothing'}")
        out.append(item)
    return out


def drift(git: Git, manifest: Manifest, upstream: str, evidence: Mapping[str, EntryFacts],
          patch_bases: Mapping[str, str]) -> list[dict[str, Any]]:
    """Carries whose owned paths upstream changed since the carry's base: `git log base..upstream -- owns`."""
    out = []
    for entry in manifest.entries:
        facts = evidence.get(entry.id)
        if not entry.enabled or not entry.owns or facts is None or not facts.base or entry.id in patch_bases:
            continue
        specs = [spec for pattern in entry.owns for spec in (f":(glob){pattern}", f":(glob){pattern}/**")]
        commits = git.log_paths(facts.base, upstream, specs)
        if not commits:
            continue
        out.append({"kind": "drift", "entry": entry.id, "base": facts.base, "upstream": upstream,
                    "paths": list(entry.owns),
                    "commits": [{"sha": sha, "subject": subject} for sha, subject in commits],
                    "message": f"upstream changed {entry.id}'s owned paths in {counted(len(commits), 'commit')} "
                               f"since its base {facts.base[:12]}: review and refold it"})
    return out
