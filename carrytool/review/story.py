"""One entry's story: what happens to it and why, the overlaps and asserts around it, and the git
commands (with full SHAs) that reproduce each decision in the repository explain ran in.

Commands are shell-quoted here, where they are built: file names come from PR authors, and a pasted
command must run exactly what it says (`git diff ... -- 'docs/$(touch PWNED).md'`).
"""

from __future__ import annotations

import shlex
from typing import Any

from carrytool.gitlayer.git import Git, Signature, is_sha
from carrytool.pipeline.plan import Step
from carrytool.pipeline.report import entry_json
from carrytool.review.coverage import Coverage, describe_assert, guarding_asserts
from carrytool.review.explanation import Explanation


def tell(git: Git, ex: Explanation, step: Step) -> dict[str, Any]:
    """The story of STEP's entry as data: the entry as planned plus the why, the what-else, the how-to-check."""
    facts = ex.evidence.get(step.id)
    story: dict[str, Any] = {"id": step.id, "entry": entry_json(step), "onto": ex.onto.get(step.id)}
    story["head"], story["base"] = (facts.head, facts.base) if facts else (None, None)
    story["files"] = facts.files if facts else []
    story["applies"] = step.files
    story["provided"] = _provided(ex, step)
    story["overlaps"] = [o.to_json() for o in ex.overlap_map.of(step.id)]
    story["coverage"] = [c.to_json() for c in ex.coverage if step.id in (c.pr, c.union)]
    story["asserts"] = _asserts(ex, step)
    story["suggestions"] = [s for s in ex.suggestions if step.id in s.get("entries", [s.get("entry")])]
    if step.entry.supersedes:
        story["supersedes"] = [_supersede(ex, sup) for sup in step.entry.supersedes]
    has = ex.upstream_has.get(step.id)
    if has is not None:
        story["upstream_has"] = has.to_json()
    story["summary"] = _summary(ex, step, story)
    story["commands"] = _commands(git, ex, step)
    return story


def _provided(ex: Explanation, step: Step) -> list[dict[str, Any]]:
    if step.reason == "superseded" and not step.filtered and step.superseded_by:
        return [{"by": step.superseded_by, "paths": []}]
    by: dict[str, list[str]] = {}
    for path, union in step.provided_by.items():
        by.setdefault(union, []).append(path)
    return [{"by": union, "paths": sorted(found)} for union, found in by.items()]


def _supersede(ex: Explanation, sup: Any) -> dict[str, Any]:
    current = ex.planned.resolved.heads.get(sup.pr)
    folded = ex.full_heads.get(sup.head, sup.head) if sup.head else None
    return {"pr": f"pr/{sup.pr}", "paths": list(sup.paths), "folded": folded, "head": current,
            "stale": bool(folded and current and folded != current)}


def _asserts(ex: Explanation, step: Step) -> list[dict[str, Any]]:
    """Asserts declared for the entry (or, for a union, for a PR it supersedes), or that read a file it
    changes in a scope it changes."""
    facts = ex.evidence.get(step.id)
    declared = {step.id, *(f"pr/{s.pr}" for s in step.entry.supersedes)}
    found: dict[str, str] = {}
    for spec in ex.manifest.asserts:
        if spec.entry in declared:
            found.setdefault(spec.name, f"declared for {spec.entry}")
    read = {spec.file for spec in ex.manifest.asserts}
    for hunk in facts.hunks if facts else []:
        if hunk.path not in read:          # no assert reads the file: its scopes decide nothing (and cost a parse)
            continue
        scopes = facts.scopes_of(hunk, ex.sources)  # type: ignore[union-attr]
        for spec in guarding_asserts(ex.manifest.asserts, hunk.path, scopes, step.id):
            where = f" in {spec.scope}" if spec.scope else ""
            found.setdefault(spec.name, f"reads {spec.file}{where}, which it changes")
    outcomes = {a.name: a for a in ex.asserts or []}
    out = []
    for spec in ex.manifest.asserts:
        if spec.name in found:
            outcome = outcomes.get(spec.name)
            out.append({"name": spec.name, "file": spec.file, "in": spec.scope, "check": describe_assert(spec),
                        "why": spec.why, "because": found[spec.name], "ok": outcome.ok if outcome else None})
    return out


def _summary(ex: Explanation, step: Step, story: dict[str, Any]) -> list[str]:
    title = f" ({step.entry.title})" if step.entry.title else ""
    lines = [f"{step.id}{title}: {step.status}" + (f" ({step.reason})" if step.reason and step.reason != step.status
                                                   else "")
             + (f": {step.detail}" if step.detail else "")]
    if step.entry.supersedes:
        lines.append("supersedes " + ", ".join(_supersede_text(item) for item in story["supersedes"]))
    for item in story["provided"]:
        lines.append(f"{item['by']} provides " + (", ".join(item["paths"]) if item["paths"] else "all of it"))
    if step.filtered and step.status != "skipped" or step.reason == "redundant":
        left = ", ".join(step.files) or "nothing"
        lines.append(f"left to apply: {left}")
    if step.reason == "redundant":
        lines.append("redundant with " + (", ".join(step.redundant_with) or "nothing: its diff is empty"))
    landing = step.landing or {}
    # what `next:` sends the reader here for (helper-110: only the JSON and markdown had it)
    lines += [f"hunk did not land: {item['message']}" for item in landing.get("dropped", [])]
    lines += [f"hunk clobbered: {item['message']}" for item in landing.get("clobbered", [])]
    lines += [f"hunk changed by a PR built on it: {item['message']}" for item in landing.get("stacked_edits", [])]
    alone = ex.overlap_map.upstream_conflicts.get(step.id)
    has = ex.upstream_has.get(step.id)
    if alone and has is not None:
        lines.append(f"conflicts with upstream alone in {', '.join(alone)}, and {has.said()}")
        lines.append(_merged_next(ex, step, has))
    elif alone:
        lines.append(f"conflicts with upstream alone in {', '.join(alone)}: rebase needed")
    onto = story["onto"]
    if onto and (step.status in ("applied", "conflict") or step.reason == "redundant"):
        after = next((s.id for s in ex.steps if s.commit == onto), None)
        verb = "applied" if step.status == "applied" else "merged"
        lines.append(f"{verb} onto {onto[:12]} ({'after ' + after if after else 'upstream'})")
    for cov in ex.coverage:
        if step.id in (cov.pr, cov.union):
            lines.append(_coverage_line(cov, step.id))
    for item in story["overlaps"]:
        other = item["entries"][1] if item["entries"][0] == step.id else item["entries"][0]
        scopes = f" ({shorten(item['scopes'])})" if item["scopes"] else ""
        conflicting, rest = split_files(item["files"], item.get("conflict_files", []))
        where = f"{', '.join(conflicting)}; also shares {', '.join(rest)}" if conflicting else ", ".join(rest)
        # as the overlaps table says it (helper-105: a union's story showed its expected conflict unexplained)
        provided = " (the union provides it)" if item.get("provided_by") else ""
        lines.append(f"{item['kind']} with {other} in {where}{scopes}{provided}")
    for item in story["asserts"]:
        state = "" if item["ok"] is None else (" [holds]" if item["ok"] else " [FAILS]")
        lines.append(f"guarded by {item['check']}{state}")
    lines += [s["message"] for s in story["suggestions"]]
    return lines


def _merged_next(ex: Explanation, step: Step, has: Any) -> str:
    """What to do about an entry upstream already has (some of): check the PR, then drop it or rebase it."""
    check = f" (`carrytool status` shows whether upstream merged {step.id})" if step.entry.kind == "pr" else ""
    branch = ex.manifest.upstream.branch
    if not has.missing:     # h204: "which lacks its hunks in " and nothing after
        return (f"next: upstream has every hunk of it counted: if upstream's version of it is what you carry it "
                f"for{check}, remove {step.id} from the manifest; else rebase it onto upstream {branch} to see what "
                "is left of it")
    return (f"next: if upstream's version of it is what you carry it for{check}, remove {step.id} from the "
            f"manifest; else rebase it onto upstream {branch}, which lacks its hunks in {has.lacking()}")


def split_files(files: list[str], conflict_files: list[str]) -> tuple[list[str], list[str]]:
    """A pair's shared FILES as (the ones it conflicts in, the others), when it conflicts in only some of
    them (helper-87: a pair conflicting in CHANGES.rst alone was shown "conflict ... CHANGES.rst,
    environment.py [Template.generate_async]"); else ([], FILES)."""
    if not conflict_files or set(files) <= set(conflict_files):
        return [], list(files)
    return list(conflict_files), [f for f in files if f not in conflict_files]


def files_said(files: list[str], conflict_files: list[str], quote: Any = str, most: int | None = None) -> str:
    """FILES joined (each through QUOTE), the ones the pair conflicts in marked when it is only some; with
    MOST, every conflicting file and at most MOST others, then how many more (60 polars PRs on one branch:
    pairs of 350 files each, 1.2 MB of explain's text)."""
    conflicting, rest = split_files(files, conflict_files)
    more = len(rest) - most if most is not None and len(rest) > most else 0
    said = [quote(f) + " (conflicts)" for f in conflicting] + [quote(f) for f in rest[:len(rest) - more]]
    return ", ".join(said) + (f", ... (+{more} more files)" if more else "")


def shorten(names: list[str], most: int = 4) -> str:
    """NAMES joined, the first MOST of them and how many more."""
    shown = ", ".join(names[:most])
    return shown + (f", ... (+{len(names) - most} more)" if len(names) > most else "")


def _supersede_text(item: dict[str, Any]) -> str:
    text = item["pr"]
    if item["paths"]:
        text += f" (only {', '.join(item['paths'])})"
    if item["stale"]:
        text += f" (folded {item['folded'][:12]}, now {item['head'][:12]}: stale)"
    return text


def _coverage_line(cov: Coverage, who: str) -> str:
    subject = f"{cov.union} carries {cov.pr}" if who == cov.pr else f"carries {cov.pr}"
    tail = []
    for hunk in cov.hunks:
        if hunk.status != "verbatim":
            where = hunk.where(last=False) + (f" ({', '.join(hunk.scopes)})" if hunk.scopes else "")
            guard = f", guarded by {', '.join(hunk.asserts)}" if hunk.asserts else ", NOT guarded by any assert"
            tail.append(f"{hunk.status} {where}{guard if hunk.status == 're-expressed' else ''}")
    counts = cov.counts_said()
    return f"{subject}: {counts}" + (f" [{'; '.join(tail)}]" if tail else "")


def _commands(git: Git, ex: Explanation, step: Step) -> list[dict[str, str]]:
    """Git commands, with full SHAs, that show each fact the decision rests on."""
    facts = ex.evidence.get(step.id)
    upstream = ex.planned.resolved.upstream
    out: list[dict[str, str]] = []

    def add(purpose: str, argv: list[str]) -> None:
        out.append({"purpose": purpose, "command": shlex.join(argv)})
        for token in argv:          # commits explain wrote must outlive it for the command to work
            if is_sha(token):
                git.keep(token)

    if facts is None or not facts.head:
        return out
    head, base = facts.head, facts.base
    if step.entry.kind == "pr" and step.merged_in:
        add(f"its base ({step.reverted}; the base it was made on): prints {base}",
            ["git", "merge-base", f"{step.merged_in}^1", head])
    elif step.entry.kind == "pr":
        add(f"its base: prints {base}", ["git", "merge-base", upstream, head])
    elif base:
        add(f"its base (the carried commit's parent): prints {base}", ["git", "rev-parse", f"{head}^"])
    add("its whole change", ["git", "diff", str(base), head])
    for item in _provided(ex, step):
        union = ex.evidence.get(item["by"])
        if union and union.head:
            spec = ["--", *item["paths"]] if item["paths"] else []
            add(f"what {item['by']} provides", ["git", "diff", str(union.base), union.head, *spec])
    if step.filtered and step.files:
        add("what is left once the unions' paths are taken out", ["git", "diff", str(base), head, "--", *step.files])
    onto = ex.onto.get(step.id, upstream)
    merge = _merge_pair(git, ex, step, onto)
    if step.reason == "redundant" and merge:
        tree = git.tree_of(onto)
        add(f"applying it changes nothing: prints {tree}, the tree it would apply onto",
            ["git", "merge-tree", "--write-tree", *merge])
        for other in step.redundant_with:
            done = ex.evidence.get(other)
            if done and done.head:
                add(f"{other} already carries the same hunks",
                    ["git", "diff", str(done.base), done.head, "--", *step.files])
    elif step.status == "applied" and merge and step.commit and (step.structured or step.resolution):
        # git's merge conflicts there: the tree is that merge resolved (helper-128: the story said the command
        # printed the tree, and it exits 1 with another)
        how = "resolved structurally (`structured_merge`)" if step.structured else \
            f"resolved `on_conflict: {step.resolution}`"
        add(f"the merge that applies it: exits 1 with conflicts in {', '.join(_conflicted(step))}, which carrytool "
            f"{how}: the tree it applied is {git.tree_of(step.commit)}", ["git", "merge-tree", "--write-tree", *merge])
    elif step.status == "applied" and merge and step.commit:
        add(f"the merge that applies it: prints {git.tree_of(step.commit)}", ["git", "merge-tree", "--write-tree", *merge])
    elif step.status == "conflict" and merge:
        add("the merge that conflicts: exits 1 and names the conflicts", ["git", "merge-tree", "--write-tree", *merge])
    elif step.reason == "merged-upstream" and step.merged_in and merge:
        add(f"upstream already has its change: prints upstream's tree {git.tree_of(upstream)}",
            ["git", "merge-tree", "--write-tree", *merge])
    elif step.reason == "merged-upstream":
        add(f"upstream already has it: prints upstream's tree {git.tree_of(upstream)}",
            ["git", "merge-tree", "--write-tree", upstream, head])
    elif step.reason == "precompiled":
        add("the files it changes (policy.precompiled matches one)", ["git", "diff", "--name-only", str(base), head])
    has = ex.upstream_has.get(step.id)
    command = has.command(upstream) if has is not None else None
    if command and has is not None and has.needle is not None:
        verb = "added" if has.adds else "removed"
        if has.commit and not has.passed:
            found = f"the first that {verb} it: {has.commit} {has.subject}"
        elif has.commit:    # the commits listed before it changed the line elsewhere (h213)
            found = (f"the first that {verb} it at its hunk's place is number {has.passed + 1} of the list: "
                     f"{has.commit} {has.subject} (those before it changed it elsewhere)")
        else:
            found = f"none of them {verb} it at its hunk's place" if has.passed else f"none {verb} it"
        add(f"upstream's commits since its base that changed how often {has.needle[0]} holds a line of its change, "
            f"oldest first (`git log -S`); {found}", command)
    for overlap in ex.overlap_map.of(step.id):
        if overlap.kind == "conflict" and overlap.merge:
            add(f"conflicts with {overlap.other(step.id)}: {overlap.order[1]} merged onto {overlap.order[0]} "
                "alone on upstream (commits explain wrote; exits 1)",
                ["git", "merge-tree", "--write-tree", *overlap.merge])
    return out


def _conflicted(step: Step) -> list[str]:
    """The files STEP's own merge conflicted in, that a resolution settled (structured hunks, or `theirs`)."""
    files = dict.fromkeys([str(hunk.get("file")) for hunk in step.structured if hunk.get("file")] +
                          list(step.resolved_paths))
    return list(files) or list(step.files)


def _merge_pair(git: Git, ex: Explanation, step: Step, onto: str) -> tuple[str, str] | None:
    """The (ours, theirs) commits sync merges for STEP (compose.py shapes a carry's merge base the same way)."""
    head = getattr(step, "_filtered_commit", None) or step.head
    if head is None:
        return None
    if step.entry.kind == "pr" and not step.merged_in and not step.stacked:
        return onto, head
    info = git.commit_info(ex.planned.resolved.upstream)
    when: int = info["committer_time"]  # type: ignore[assignment]
    sig = Signature(ex.manifest.identity.name, ex.manifest.identity.email, when)
    # a PR upstream merged is in ONTO's history: its base alone, else git's merge base would be its head
    if step.stacked_onto:        # its own commits onto the PR it is stacked on (compose._on_its_lower)
        parents = [step.stacked_onto[1]]
    else:
        parents = [step.base] if step.merged_in else [onto] + ([step.base] if step.base else [])
    shaped = git.write_commit(git.tree_of(onto), parents, sig, sig, f"carrytool: merge base for {step.id}\n")
    return shaped, head
