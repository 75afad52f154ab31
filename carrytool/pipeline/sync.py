"""`carrytool sync`: fetch, plan, compose, check, and only then move the fork branch."""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import (
    CarryError,
    EnvironmentProblem,
    InputError,
    PushError,
    RefMoved,
    UnknownRef,
)
from carrytool.gitlayer.env import EMPTY_TREE
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.repolock import RepoLock
from carrytool.gitlayer.urls import redact, resolve_local
from carrytool.manifest.model import Manifest
from carrytool.pipeline import facts
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.compose_records import Composition, Misguessed
from carrytool.pipeline.keptfindings import KeptFindings
from carrytool.pipeline.keptmerges import KeptMerges
from carrytool.pipeline.landing import Accounting, account
from carrytool.pipeline.lock import (
    StagedLock,
    build_lock,
    lock_path,
    locked_resolution,
    read_lock,
    resync_hint,
    stage_lock,
)
from carrytool.pipeline.plan import APPLIED, CONFLICT, Step, plan_paths, plan_static, say_unapplied_unions
from carrytool.pipeline.report import Report
from carrytool.pipeline.resolve import (
    Resolved,
    _fetch,
    commit_patch,
    namespace,
    resolve,
    see_fork_branch,
)

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class SyncOptions:
    offline: bool = False
    locked: bool = False
    push: bool = False
    dry_run: bool = False
    strict: bool = False
    retry_delay: float = float(os.environ.get("CARRYTOOL_RETRY_DELAY", "1.0"))
    wait: float = 0.0
    locked_as: str = "sync --locked"      # with locked: the command reading the lock, as hints name it


@dataclass
class Planned:
    """Everything up to a composed result: what explain and verify --rebuild need too."""

    resolved: Resolved
    steps: list[Step]
    composition: Composition | None
    report: Report


def branch_ref(manifest: Manifest) -> str:
    return f"refs/heads/{manifest.fork.branch}"


def refuse_checked_out(git: Git, manifest: Manifest) -> None:
    ref = branch_ref(manifest)
    found = git.branch_states().get(ref)
    if found is None:
        return
    where, state = found
    if state is None:
        hint = f"switch that work tree to another branch (`git -C {where} switch --detach`), or sync into a bare clone"
    else:            # git puts the branch back when the rebase or bisect ends: a sync would be undone
        done = "rebase --continue` or `rebase --abort" if state == "rebase" else "bisect reset"
        hint = f"finish the {state} there first (`git -C {where} {done}`), or sync into a bare clone"
    raise EnvironmentProblem(f"{manifest.fork.branch} is checked out in the work tree {where}"
                             f"{f' (a {state} is under way on it)' if state else ''}; carrytool will not move a "
                             "checked-out branch", hint=hint)


def resolve_inputs(manifest: Manifest, git: Git, options: SyncOptions, progress: Progress | None) -> Resolved:
    """The SHAs to compose: fetched and resolved, or exactly those of the lock with --locked."""
    if not options.locked:
        return resolve(manifest, git, offline=options.offline, progress=progress, retry_delay=options.retry_delay)
    lock = read_lock(manifest, ran=options.locked_as)
    upstream, heads, commits = locked_resolution(manifest, lock)
    wanted = [upstream, *heads.values(), *(c for i, c in commits.items() if not manifest.entry(i).patch)]  # type: ignore[union-attr]
    absent = [sha for sha in wanted if git.object_type(sha) is None]
    if absent and not options.offline:
        url = resolve_local(manifest.upstream.url, manifest.base_dir)
        _fetch(git, url, {sha: f"{namespace(manifest)}/locked/{sha}" for sha in absent},
               retry_delay=options.retry_delay)
        absent = [sha for sha in absent if git.object_type(sha) is None]
        carried_absent = [c for c in commits.values() if c in absent]
        if carried_absent and manifest.fork.url:      # a carried commit lives in the fork (as sync fetches it)
            _fetch(git, resolve_local(manifest.fork.url, manifest.base_dir),
                   {sha: f"{namespace(manifest)}/locked/{sha}" for sha in carried_absent}, retry_delay=options.retry_delay)
            absent = [sha for sha in absent if git.object_type(sha) is None]
    if absent:
        carried = [f"{e.id} ({c[:12]})" for e, c in ((manifest.entry(i), c) for i, c in commits.items())
                   if c in absent and e is not None]
        hint = "run without --offline so they can be fetched, or fetch them into the repo" if options.offline else \
            "upstream (and the fork, for a carried commit) were asked and have them no more (a PR head force-pushed away, a commit no " \
            "branch of the fork holds" + (f": {', '.join(carried)}" if carried else "") + "); fetch them into " \
            "the repository, and keep a carried commit on a branch of the fork of its own"
        raise UnknownRef(f"the lock names commits this repository does not have: {', '.join(s[:12] for s in absent)}",
                         hint=hint)
    resolved = Resolved(upstream=upstream, heads=heads, commits=commits)
    if options.push:
        see_fork_branch(manifest, git, resolved, offline=options.offline, retry_delay=options.retry_delay)
    for entry in manifest.entries:
        if entry.patch:
            base, head, resolved.messages[entry.id] = commit_patch(manifest, git, entry, upstream)
            resolved.commits[entry.id], resolved.patch_bases[entry.id] = head, base
    for entry in manifest.entries:
        if entry.kind == "pr" and entry.number not in heads and entry.enabled:
            resolved.missing[entry.number] = "the lock has no head for it"  # type: ignore[index]
    return resolved


def stale_folds(manifest: Manifest, git: Git, resolved: Resolved) -> list[dict[str, object]]:
    """Unions that folded a PR head that is no longer the PR's head. A head that only changed as a commit
    (the same tree on the same parents: a reworded message) is said to be so (`same_change`): the union has
    its change, and a refold only records the new head (helper-80: read as "refold the union")."""
    warnings = []
    for entry in manifest.entries:
        if not entry.enabled:
            continue
        for sup in entry.supersedes:
            current = resolved.heads.get(sup.pr)
            if sup.head and current and not current.startswith(sup.head):
                warning: dict[str, object] = {"kind": "stale-fold", "entry": entry.id, "pr": sup.pr,
                                              "folded": sup.head, "current": current}
                folded = git.rev_parse(sup.head)        # 7 to 40 hex digits (the manifest's schema)
                if folded and folded.startswith(sup.head.lower()) and _same_change(git, folded, current):
                    warning["same_change"] = True
                    warning["message"] = (f"{entry.id} folded pr/{sup.pr} at {sup.head[:12]}; its head is now "
                                          f"{current[:12]}, the same tree on the same parents (a reworded commit): "
                                          f"the union has its change, a refold records the new head "
                                          f"(`carrytool union compose {shlex.quote(str(entry.name))}`)")
                else:
                    warning["message"] = (f"{entry.id} folded pr/{sup.pr} at {sup.head[:12]}, but its head is "
                                          f"now {current[:12]}: refold the union "
                                          f"(`carrytool union compose {shlex.quote(str(entry.name))}`)")
                warnings.append(warning)
    return warnings


def _same_change(git: Git, one: str, other: str) -> bool:
    """Whether commits ONE and OTHER have the same tree and the same parents."""
    a, b = git.commit_info(one), git.commit_info(other)
    return a["tree"] == b["tree"] and a["parents"] == b["parents"]


def plan_and_compose(manifest: Manifest, git: Git, options: SyncOptions, progress: Progress | None = None,
                     *, command: str = "sync", resolved_hook: Callable[[Resolved], None] | None = None) -> Planned:
    """Resolve, plan and compose in memory; nothing outside refs/carrytool is written. RESOLVED_HOOK runs
    once the inputs are resolved, before composing (explain starts work there that composing does not need).

    The fetched refs are written while composing goes on: they have landed when this returns."""
    with git.refs_in_background():
        return _plan_and_compose(manifest, git, options, progress, command, resolved_hook)


def _plan_and_compose(manifest: Manifest, git: Git, options: SyncOptions, progress: Progress | None,
                      command: str, resolved_hook: Callable[[Resolved], None] | None) -> Planned:
    resolved = resolve_inputs(manifest, git, options, progress)
    missing = {n: why for n, why in resolved.missing.items()
               if any(e.kind == "pr" and e.number == n and manifest.on_missing(e) == "skip" for e in manifest.entries)}
    gone = [entry for entry in manifest.entries
            if entry.kind == "pr" and entry.enabled and entry.number in resolved.missing and entry.number not in missing
            and not any(s.pr == entry.number and not s.paths for e in manifest.entries if e.enabled
                        for s in e.supersedes)]
    if gone:           # every one of them named at once (helper-82: one a night, fixed one by one)
        first, hint = gone[0], "remove the entry, pin a `head:` that still exists, or set `on_missing: skip`"
        if len(gone) == 1:
            raise UnknownRef(f"{first.id}: {resolved.missing[first.number]} (closed, or a wrong number?)",
                             where=f"{manifest.path}:{first.line}", hint=hint)
        raise UnknownRef(f"{len(gone)} PRs cannot be found (closed, or wrong numbers?):\n  " + "\n  ".join(
                         f"{manifest.path}:{e.line}: {e.id}: {resolved.missing[e.number]}" for e in gone),
                         hint=hint.replace("the entry", "the entries"))
    if resolved_hook is not None:
        resolved_hook(resolved)
    report = Report(command, upstream={"url": manifest.upstream.url, "branch": manifest.upstream.branch,
                                       "sha": resolved.upstream})
    report.warnings += stale_folds(manifest, git, resolved)
    # clean chained merges earlier runs kept (pipeline.keptmerges): written by sync, unless it is a dry run
    # (which writes nothing), and by explain, which keeps what it learns (as its scope cache); verify
    # merges everything again, a check independent of what earlier runs found; so too what the landing
    # checks found parsing the composed modules (pipeline.keptfindings)
    cache = git.common_dir / "carrytool" / "cache"
    kept = KeptMerges(cache, git.version) if command != "verify" else None
    findings = KeptFindings(cache, git.version) if command != "verify" else None
    steps, violations, composition, accounting, stacks = _compose(manifest, git, resolved, missing, progress,
                                                                  frozenset(), kept, findings)
    rejected = structured_rejections(manifest, git, steps, composition, accounting)
    if rejected:    # a structured resolution a check rejected goes back to being the conflict it was
        steps, violations, composition, accounting, stacks = _compose(manifest, git, resolved, missing, progress,
                                                                      frozenset(rejected), kept, findings)
        why = {"landing": "a hunk did not land", "asserts": "an assert failed on it"}
        for step in steps:
            if step.id in rejected and step.status == CONFLICT:
                step.detail = f"{step.detail}; its structured resolution was rejected: {why[rejected[step.id]]}"
    if kept is not None and findings is not None and (command == "explain" or
                                                      (command == "sync" and not options.dry_run)):
        kept.save()
        findings.save()
    report.steps = steps
    for step in steps:       # a PR skipped before its facts were read: its head as fetched (and locked)
        if step.entry.kind == "pr" and step.head is None:
            step.fetched_head = resolved.heads.get(step.entry.number)  # type: ignore[arg-type]
    report.violations = violations
    report.failed_conflicts = list(composition.failed_conflicts)
    report.warnings += structured_warnings(steps) + reverted_warnings(steps) + \
        stacks()
    report.dropped = accounting.failures
    report.warnings += accounting.warnings
    say_unapplied_unions(steps, report.warnings)
    report.strict = options.strict
    if options.strict:
        report.strict_only = {s.id for s in steps if s.status == CONFLICT} - {s.id for s in report.failed_conflicts}
        report.failed_conflicts = [s for s in steps if s.status == CONFLICT]
    # the report names the composed commit (a dry run's too): it and what it reaches persist; the rest
    # of what composing wrote (stand-ins, merges whose result was not used) vanishes with the quarantine
    git.keep(composition.result)
    git.keep_unreferenced = False
    return Planned(resolved, steps, composition, report)


def _compose(manifest: Manifest, git: Git, resolved: Resolved, missing: dict[int, str], progress: Progress | None,
             structured_off: frozenset[str], kept: KeptMerges | None = None, findings: KeptFindings | None = None,
             aside: bool = True) -> tuple[list[Step], list, Composition, Accounting,
                                          Callable[[], list[dict[str, object]]]]:
    """Plan and compose from scratch (the steps are fresh each time: composing settles them). ASIDE: the
    entries that conflict with upstream alone are merged beside the chain (Composer.aside); should one
    merge cleanly after all, everything is composed again without that guess."""
    steps = plan_static(manifest, missing)
    facts.gather(git, resolved, steps)
    stacks = stale_stacks(git, resolved.upstream, steps)     # their patch ids read while composing
    violations = plan_paths(manifest, steps)
    composer = Composer(git, manifest, resolved.upstream, progress)
    # the landing checks read every applied entry's own patch: read them while composing, on another core,
    # once the merges onto upstream leave out the entries that conflict there (the landing reads the patch
    # of one that applies anyway itself)
    composer.merged_onto_upstream = lambda likely: git.prefetch_patches(
        [(s.base or EMPTY_TREE, s.head) for s in likely])  # type: ignore[misc]
    composer.structured_off = structured_off
    composer.kept = kept
    composer.aside = aside
    try:
        composition: Composition | None = composer.compose(steps)
    except Misguessed:
        composition = None      # composed again below, outside the handler: the first pass can go
    if composition is None:
        return _compose(manifest, git, resolved, missing, progress, structured_off, kept, findings, aside=False)
    if not any(step.structured for step in steps):
        # the composition stands (only a structured resolution can be composed again): what it reaches
        # persists whatever the checks say (the report names it), so it is packed into the store while
        # the landing checks read
        git.keep(composition.result)
        git.migrate_objects(later=True)
    return steps, violations, composition, account(git, steps, composition.result, findings), stacks


def structured_rejections(manifest: Manifest, git: Git, steps: list[Step], composition: Composition,
                          accounting: Accounting) -> dict[str, str]:
    """Entries whose structured resolution the landing check or an assert rejects: id -> why."""
    structured = {s.id: {h["file"] for h in s.structured} for s in steps if s.structured}
    if not structured:
        return {}
    out = {}
    for failure in accounting.failures:
        for key in ("entry", "by"):
            if failure.get(key) in structured:
                out[str(failure[key])] = "landing"
    failed = {o.file for o in evaluate_asserts(manifest, git, composition.result) if not o.ok}
    for entry, files in structured.items():
        if files & failed:
            out.setdefault(entry, "asserts")
    return out


# what a structured resolution kept, by rule (helper-83: an adjacent edit's rewrite replaces base lines, so
# "both sides kept" was not what it did)
_KEPT = {"adjacent-edit": "one side's rewrite kept with the other's insertion beside it",
         "import-union": "the names both sides import, once each"}


def stale_stacks(git: Git, upstream: str, steps: list[Step]) -> Callable[[], list[dict[str, object]]]:
    """`stale-stack` warnings: two PRs holding one commit in two versions (the same author, author date and
    subject, what a rebase or an amend keeps; another patch id), neither built on the other's head. When one
    PR's head is such a commit and the other's is not, the other was built on it before it was rewritten:
    it carries the old version, and can put back what the rewrite changed or removed (helper-114: pr/3710,
    amended, no longer added a line that pr/9001, stacked on its old head, put back; every hunk landed,
    nothing was said). Else neither is the other's base (two PRs on two versions of a third branch): the one
    composed later brings its version over the other's. A commit both hold with the same patch (only
    rebased) merges as one: no warning. (Which version is newer is not read from commit dates: a rebase of
    the stale PR dates its copies anew, helper-117.)

    In two halves: the commits are compared now (facts.gather's walk, one `cat-file`), their patch ids read
    in the background (while composing: a few hundred ms where the commits are large); the function returned
    makes the warnings."""
    prs = [s for s in steps if s.entry.kind == "pr" and s.head]
    own = {s.id: git.outside(upstream, s.head) for s in prs}        # type: ignore[arg-type]
    if sum(len(commits) > 0 for commits in own.values()) < 2:
        return list
    every = set().union(*own.values())
    git.load_commits(every)
    keys = {sha: _authored(git.commit_info(sha)) for sha in every}
    found: list[tuple[Step, Step, str, str, bool]] = []   # (stale or later, other, its commit, the other's, on it)
    was: dict[tuple[str, str], str] = {}     # (stale, the PR it was built on) -> its copy of that PR's head
    for n, one in enumerate(prs):
        mine = {keys[sha]: sha for sha in own[one.id]}
        for other in prs[n + 1:]:
            if one.head in own[other.id] or other.head in own[one.id]:   # one built on the other's head: a stack
                continue
            pairs = [(mine[keys[sha]], sha) for sha in sorted(own[other.id] - own[one.id])
                     if keys[sha] in mine and mine[keys[sha]] not in own[other.id]]
            if not pairs:
                continue
            tops = (one.head in {a for a, _b in pairs}, other.head in {b for _a, b in pairs})
            if tops == (True, False):          # other was built on one: other holds the old version
                found += [(other, one, b, a, True) for a, b in pairs]
                was[(other.id, one.id)] = next(b for a, b in pairs if a == one.head)
            elif tops == (False, True):
                found += [(one, other, a, b, True) for a, b in pairs]
                was[(one.id, other.id)] = next(a for a, b in pairs if b == other.head)
            else:
                found += [(other, one, b, a, False) for a, b in pairs]
    if not found:
        return list
    later = git.patch_ids_later(sorted({sha for *_steps, a, b, _on in found for sha in (a, b)}))
    return lambda: _stale_warnings(keys, found, later(), was)


def _stale_warnings(keys: dict[str, tuple[str, str]], found: list[tuple[Step, Step, str, str, bool]],
                    patches: dict[str, str], was: dict[tuple[str, str], str]) -> list[dict[str, object]]:
    grouped: dict[tuple[str, bool], dict[str, list[tuple[str, str]]]] = {}   # (PR, built on) -> other PR -> pairs
    for entry, other, here, there, built_on in found:
        if patches.get(here) and patches.get(there) and patches[here] != patches[there]:
            grouped.setdefault((entry.id, built_on), {}).setdefault(other.id, []).append((here, there))
    out: list[dict[str, object]] = []
    for (entry_id, built_on), by in grouped.items():
        others = sorted(by)
        commits = sorted({pair for pairs in by.values() for pair in pairs})
        here, there = by[others[0]][0]
        count = f"{len({a for a, _b in commits})} commit(s)"
        versions = f"{keys[here][1]!r}: {here[:12]} in {entry_id}, {there[:12]} in {others[0]}"
        if built_on:
            message = (f"{entry_id} holds {count} of {', '.join(others)} in another version than {others[0]} has now "
                       f"({versions}): it was built on {others[0]} before that was rewritten, and carries the old "
                       f"version, which can put back what the rewrite changed or removed; rebase {entry_id} onto "
                       f"{others[0]}'s head")
        else:
            message = (f"{entry_id} and {', '.join(others)} hold {count} in different versions ({versions}), neither "
                       f"built on the other's head: the one composed later brings its version over the other's; "
                       f"rebase them onto one version")
        warning = {"kind": "stale-stack", "entry": entry_id, "on": others, "built_on": built_on,
                   "commits": [{"here": a, "there": b} for a, b in commits], "message": message}
        pins = {other: was[(entry_id, other)] for other in others if (entry_id, other) in was}
        if pins:         # the heads of the PRs it was built on, as it holds them: `head:` pins carry those versions
            warning["was"] = pins
        out.append(warning)
    return out


def _authored(info: dict[str, object]) -> tuple[str, str]:
    """What a rebase or an amend keeps of a commit: its author with the date, and its subject."""
    return str(info.get("author", "")), str(info["message"]).split("\n", 1)[0]


def reverted_warnings(steps: list[Step]) -> list[dict[str, object]]:
    """One `merged-upstream-reverted` warning per PR upstream merged and reverted since, carried again from the
    base its change was made on (helper-114: skipped as merged-upstream, its lines were gone from the image,
    exit 0, nothing said); none when upstream has its change all the same."""
    out: list[dict[str, object]] = []
    for step in steps:
        if step.reverted is None or step.reason == "merged-upstream":
            continue
        said = f"{step.id}: {step.reverted}"
        if step.status == APPLIED:
            message = f"{said}: it is applied again, as it was made; remove the entry to leave it out"
        elif step.status == CONFLICT:
            message = f"{said}: applied again as it was made, it conflicts; rebase the PR, or remove the entry"
        else:
            message = f"{said}: applied again as it was made, it is {step.status} ({step.reason}): see its entry"
        out.append({"kind": "merged-upstream-reverted", "entry": step.id, "merged_in": step.merged_in,
                    "reverted_in": step.reverted_in, "base": step.base, "applied": step.status == APPLIED,
                    "message": message})
    return out


def structured_warnings(steps: list[Step]) -> list[dict[str, object]]:
    """One `structured-merge` warning per hunk resolved structurally: a reviewer should see each."""
    return [{"kind": "structured-merge", "entry": step.id, "file": h["file"], "lines": h["lines"], "rule": h["kind"],
             "message": f"{step.id}: {h['file']} lines {h['lines'][0]}-{h['lines'][1]} resolved structurally "  # type: ignore[index]
                        f"({h['kind']}): {_KEPT.get(h['kind'], 'both sides kept')}; review it"}
            for step in steps for h in step.structured]


def evaluate_asserts(manifest: Manifest, git: Git, tree_of: str) -> list[AssertOutcome]:
    """Run every assert of the manifest on the tree of commit TREE_OF."""
    if not manifest.asserts:
        return []
    from carrytool.asserts import evaluate_all

    return evaluate_all(manifest.asserts, lambda path: git.file_at(tree_of, path))


def run_sync(manifest: Manifest, git: Git, options: SyncOptions, progress: Progress | None = None,
             notify: Callable[[str], None] | None = None) -> Report:
    """The nightly job. Returns the report; its exit_code says whether the branch moved.

    Holds the repository's lock throughout (one writer). Errors before planning are raised; after
    planning began they are recorded in the report (so --report is written whatever the outcome).
    """
    if options.push and not manifest.fork.url:
        raise InputError("--push needs fork.url in the manifest", where=str(manifest.path))
    with RepoLock(git.git_dir, wait=options.wait, notify=notify):
        clear_stale_ref_locks(git, namespace(manifest), notify)
        if not options.dry_run:        # a dry run moves no branch: a checked-out one is no obstacle
            refuse_checked_out(git, manifest)
        previous = git.ref_value(branch_ref(manifest))
        planned = plan_and_compose(manifest, git, options, progress)
        crash_point("sync:composed")
        report = planned.report
        report.result = {"branch": manifest.fork.branch, "sha": planned.composition.result,  # type: ignore[union-attr]
                         "previous": previous, "updated": False}
        if options.push and planned.resolved.fork_remote_known:
            # the fork's branch as fetched (the lease's value): `previous` is the local branch's, which a
            # runner's fresh clone does not have (helper-82: null every night)
            report.result["fork_previous"] = planned.resolved.fork_remote
        last = last_result(manifest)          # the last published night's result, read once
        # what the run replaces: the local branch, and with --push the fork's branch as fetched
        tips = [(previous, False)]
        if options.push and planned.resolved.fork_remote not in (None, previous):
            tips.append((planned.resolved.fork_remote, True))
        for tip, remote in tips:
            replaced = replaced_commits(manifest, git, tip, planned, last)
            if tip is not None and replaced:
                same = git.tree_of(tip) == git.tree_of(planned.composition.result)  # type: ignore[union-attr]
                report.warnings.append(_replaced_warning(manifest, tip, replaced, remote, same_tree=same))
        locked_result = last if options.locked else None
        if locked_result and locked_result != report.result["sha"]:
            report.warnings.append(lock_result_warning(locked_result, report.result["sha"], options.locked_as))
        try:
            _finish(manifest, git, options, planned, previous)
        except CarryError as exc:
            report.error = {"exit_code": exc.exit_code, "kind": type(exc).__name__, "message": str(exc)}
        _say_what_was_replaced(manifest, report, options.dry_run)
        return report


def replaced_ref(manifest: Manifest, previous: str) -> str:
    return f"{namespace(manifest)}/replaced/{previous}"


def replaced_commits(manifest: Manifest, git: Git, tip: str | None, planned: Planned, last: str | None,
                     limit: int = 1000) -> list[tuple[str, str, bool, str | None]]:
    """(SHA, subject, carried, copy of) of the commits TIP (the fork branch before the run) has that sync did not make
    and the composed result does not have: committed or pushed onto the generated branch by hand, or a
    branch that was something else before carrytool was pointed at it (the old cherry-pick loop's).
    Newest first, at most LIMIT. Sync's own commits say so (a `Carry-Entry:` trailer, committed by the
    manifest's identity); upstream's are in upstream or in LAST, the last night's result (the lock's). None at all
    when TIP's tree is the result's but for the commits that change no file (helper-87: an empty commit, a
    release marker, went without a word, and no ref kept it; the old cherry-pick loop's merges and picks,
    whose changes the result has, go unsaid).
    CARRIED: the commit's patch is the patch of a commit an entry of the manifest carries (`git patch-id`):
    its change is composed anyway. COPY OF: else the entry one of whose commits has the same subject (the
    old loop's cherry-pick of a PR the manifest carries, resolved otherwise: helper-107, a migration's picks
    were all "committed by hand?")."""
    result = planned.composition.result if planned.composition else None
    if tip is None or result is None or tip == result or last == tip:
        return []
    upstream = planned.resolved.upstream
    known = [sha for sha in (result, upstream, last) if sha and git.object_type(sha) == "commit"]
    out = git.run("log", f"--max-count={limit}", "--format=%H%x1f%cn <%ce>%x1f%s%x1f%B%x1e", tip, "--not", *known,
                  "--", check=False).stdout.decode("utf-8", "replace")
    me = f"{manifest.identity.name} <{manifest.identity.email}>"
    unmade = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != 4:
            continue
        sha, committer, subject, body = fields
        if committer != me or not any(line.startswith("Carry-Entry: ") for line in body.splitlines()):
            unmade.append((sha, subject))
    if not unmade:
        return []
    carried = _patch_ids(git, ["--no-walk=unsorted", *(sha for sha, _ in unmade)])
    # the entries the result has (applied): a skipped PR's cherry-pick is not carried (helper-77)
    entries = [s.head for s in planned.steps if s.status == APPLIED and s.head]
    ours = set(_patch_ids(git, [*entries, "--not", upstream, *planned.resolved.patch_bases.values()]).values()) \
        if entries else set()
    if git.tree_of(tip) == git.tree_of(result):
        # the result's files: only what changes no file is lost (helper-90: a migration's merges and squashed
        # picks were named, though each change they made is in the result)
        return [(sha, subject, False, None) for sha, subject in unmade if _changes_nothing(git, sha)]
    out = [(sha, subject, carried.get(sha) in ours) for sha, subject in unmade]
    copies = _subjects(git, planned) if any(not was for _sha, _subject, was in out) else {}
    return [(sha, subject, was, None if was else copies.get(subject)) for sha, subject, was in out]


def _subjects(git: Git, planned: Planned) -> dict[str, str]:
    """Subject -> the first applied entry (manifest order) one of whose own commits (not a merge) has it. A
    skipped entry's pick is not its copy in the result: the result has no such change (helper-109)."""
    steps = [s for s in planned.steps if s.head and s.status == APPLIED]
    if not steps:
        return {}
    out: dict[str, str] = {}
    for step in steps:        # one log per entry: its commits alone (a log of several would not say whose)
        log = git.run("log", "--no-merges", "--max-count=500", "--format=%s", step.head, "--not",
                      planned.resolved.upstream, *([step.base] if step.base else []), "--",
                      check=False).stdout.decode("utf-8", "replace")
        for subject in log.splitlines():
            if subject.strip():
                out.setdefault(subject, step.id)
    return out


def _changes_nothing(git: Git, sha: str) -> bool:
    """SHA is a commit with one parent and its parent's tree (an empty commit)."""
    parents = git.commit_info(sha)["parents"]
    return len(parents) == 1 and git.tree_of(sha) == git.tree_of(parents[0])  # type: ignore[arg-type,index]


def _patch_ids(git: Git, revs: list[str]) -> dict[str, str]:
    """commit -> its `git patch-id --stable` for the commits `git log REVS` lists (merges have none)."""
    log = git.run("log", "-p", "--no-merges", "--no-color", "--format=commit %H", *revs, "--", check=False).stdout
    if not log:
        return {}
    out = git.run("patch-id", "--stable", input=log, check=False).stdout.decode("ascii", "replace")
    return {commit: patch for patch, commit in (line.split() for line in out.splitlines() if len(line.split()) == 2)}


def lock_result_warning(locked: str, composed: str, ran: str = "sync --locked") -> dict[str, object]:
    """The `lock-result` warning: the lock's inputs compose COMPOSED, not the result LOCKED it names; RAN:
    the command that read the lock (resync_hint)."""
    return {"kind": "lock-result", "locked": locked, "composed": composed,
            "message": f"the lock's inputs compose {composed[:12]}, but the lock's result is {locked[:12]}: something "
                       "the lock does not pin changed (with a lock written before carrytool kept the manifest's "
                       "settings in it: the identity, a title, a policy), and the lock is left as it is: "
                       + resync_hint(ran, "to write a new one")}


def last_result(manifest: Manifest) -> str | None:
    """The composed commit the lock beside the manifest names (the last published night), if it can be read."""
    try:
        result = json.loads(lock_path(manifest).read_text(encoding="utf-8")).get("result")
    except (OSError, ValueError, AttributeError):
        return None
    return result if isinstance(result, str) else None


def _replaced_warning(manifest: Manifest, previous: str, replaced: list[tuple[str, str, bool, str | None]],
                      remote: bool, *, same_tree: bool = False) -> dict[str, object]:
    """The replaced-commits warning for the tip PREVIOUS; its message ends once the run knows whether it
    replaced that branch (`_say_what_was_replaced`). SAME_TREE: PREVIOUS has the result's files."""
    branch = manifest.fork.branch
    where = f"the fork's {branch}" if remote else branch
    lost = [(sha, subject, copy) for sha, subject, carried, copy in replaced if not carried]
    same = len(replaced) - len(lost)
    copied = " ({} has a commit of that subject; this one's patch differs)"
    shown = "; ".join(f"{sha[:12]} {subject}" + (copied.format(copy) if copy else "")
                      for sha, subject, copy in lost[:5]) + ("; ..." if len(lost) > 5 else "")
    what = f": {shown}" if lost else ""
    if same:
        what += f"{'; and ' if lost else ': '}{same} whose patch a PR or carry of the manifest carries too"
    how = "committed onto it by hand?" if any(copy is None for _sha, _subject, copy in lost) or not lost else \
        "picks of entries of the manifest, each resolved otherwise: the old loop's?"
    return {"kind": "replaced-commits", "branch": branch, "remote": remote, "previous": previous,
            "commits": [sha for sha, _subject, _carried, _copy in replaced],
            "carried": [sha for sha, _subject, carried, _copy in replaced if carried],
            "copies": {sha: copy for sha, _subject, _carried, copy in replaced if copy},
            "message": f"{where} has {len(replaced)} commit(s) that sync did not make ({how}), "
                       f"which the composed result does not have{what}."
                       + (" They change no file (the branch's files are the result's): what goes is the commits "
                          "themselves." if same_tree else "")
                       + " The branch is generated: carry such a change as an entry of the manifest."}


def _replaced_tail(manifest: Manifest, previous: str, remote: bool, how: str) -> str:
    """The end of a replaced-commits message: HOW is `would keep` (a dry run), `keeps` (the branch is
    replaced) or `not moved` (the run failed before replacing it: nothing was kept, nor needed)."""
    where = f"the fork's {manifest.fork.branch}" if remote else manifest.fork.branch
    ref = replaced_ref(manifest, previous) + (" here and on the fork" if remote else "")
    if how == "not moved":
        return (f" This run did not replace {where} (nothing moved); a run that replaces it keeps its old tip "
                f"{previous[:12]} as {ref}")
    return f" Replacing {where}, carrytool {how} its old tip {previous[:12]} as {ref}"


def _say_what_was_replaced(manifest: Manifest, report: Report, dry_run: bool) -> None:
    """End each replaced-commits message with what this run did to that branch: would keep its old tip (a
    dry run), kept it, or replaced nothing (helper-82: a failed run said it kept a backup ref it never
    wrote)."""
    result = report.result or {}
    for warning in report.warnings:
        if warning.get("kind") != "replaced-commits":
            continue
        remote = bool(warning.get("remote"))
        done = result.get("pushed") if remote else result.get("updated")
        how = "would keep" if dry_run else "keeps" if done else "not moved"
        warning["message"] = str(warning["message"]) + _replaced_tail(manifest, str(warning["previous"]), remote, how)


def _keep_replaced(manifest: Manifest, git: Git, warnings: list[dict], remote: bool) -> list[str]:
    """Before a branch is replaced, its old tip stays reachable when it had commits sync did not make (a bare
    clone keeps no reflog, and the fork none of ours: gc would take them). The tips kept."""
    kept = [str(w["previous"]) for w in warnings if w.get("kind") == "replaced-commits" and w.get("remote") is remote]
    for tip in kept:
        if git.ref_value(replaced_ref(manifest, tip)) is None:
            git.update_ref(replaced_ref(manifest, tip), tip, None, "carrytool sync: the tip it replaces")
    return kept


def _finish(manifest: Manifest, git: Git, options: SyncOptions, planned: Planned, previous: str | None) -> None:
    """Asserts; then, only if everything holds: the push (with its lease), the local branch, the lock.

    The push goes first: when the lease refuses it (or the push fails), nothing local has moved and
    no lock is written. The local branch then moves by compare-and-swap from the value read at the start.
    """
    report, comp = planned.report, planned.composition
    assert comp is not None and report.result is not None
    report.asserts = evaluate_asserts(manifest, git, comp.result)
    if options.push:
        report.result["pushed"] = False        # asked for: the report says whether it happened, whatever stops it
    if report.exit_code != 0 or options.dry_run:
        return
    ref = branch_ref(manifest)
    lock_doc = build_lock(manifest, planned.resolved, comp.result)
    git.keep_named(json.dumps(lock_doc))        # every commit the lock names persists
    # Order: stage the lock (written and synced beside its place: a full disk or a read-only directory stops
    # the run with nothing moved), push with the lease, move the local branch, then rename the lock into
    # place. A refused push moves nothing local; once the branch moved only the lock's rename is left.
    staged = None if options.locked else stage_lock(manifest, lock_doc)
    crash_point("sync:lock-staged")
    pushing = False
    try:
        # asked again: a work tree may have switched to the branch while composing (its index would then
        # undo the sync with the next commit), and nothing has moved yet
        refuse_checked_out(git, manifest)
        if options.push:
            if git.ref_value(ref) != previous:
                raise RefMoved(f"{ref} changed while carrytool was composing; nothing was pushed or written",
                               hint="run sync again")
            kept = _keep_replaced(manifest, git, report.warnings, remote=True)
            report.result["pushed"] = False
            pushing = True
            report.result["pushed"] = push(manifest, git, comp.result, planned.resolved, options,
                                           keep=kept[0] if kept else None)
            crash_point("sync:pushed")
        if previous != comp.result:
            _keep_replaced(manifest, git, report.warnings, remote=False)
            if not git.update_ref(ref, comp.result, previous, f"carrytool sync: {len(comp.applied)} entries "
                                                              f"on {manifest.upstream.branch}"):
                pushed = " (the fork's branch was pushed; the lock was not written)" \
                    if report.result.get("pushed") else "; nothing was written"
                raise RefMoved(f"{ref} changed while carrytool was composing{pushed}", hint="run sync again")
            report.result["updated"] = True
            crash_point("sync:branch-moved")
        if staged is not None:
            report.extra["lock_written"] = _publish_lock(staged, report.result)
    except KeyboardInterrupt as exc:      # (helper-109: "nothing was written", after the branch moved)
        exc.carrytool_done = _moved_so_far(manifest, report.result, pushing)  # type: ignore[attr-defined]
        raise
    finally:
        if staged is not None:
            staged.discard()


def _moved_so_far(manifest: Manifest, result: dict, pushing: bool) -> str | None:
    """What an interrupt of _finish leaves, in words; None when nothing moved (the usual sentence holds)."""
    branch, sha = manifest.fork.branch, str(result.get("sha"))[:12]
    if result.get("updated"):
        pushed = " and pushed to the fork" if result.get("pushed") else ""
        return f"{branch} was moved to {sha}{pushed}, but the lock was not written: run sync again, which writes it"
    if result.get("pushed"):
        return f"the fork's {branch} was pushed ({sha}), but the local branch and the lock were not written: run " \
               "sync again"
    if pushing:
        return f"interrupted while pushing: the fork's {branch} may have moved to {sha}; the local branch and the " \
               "lock were not written: run sync again"
    return None


def _publish_lock(staged: StagedLock, result: dict) -> bool:
    try:
        return staged.commit()
    except EnvironmentProblem as exc:
        moved = (f"{result['branch']} moved to {result['sha']}" if result.get("updated")
                 else f"{result['branch']} was already at {result['sha']}")
        raise EnvironmentProblem(f"{exc.message}; {moved}, but the lock was not updated",
                                 hint="fix the file system and run sync again: it rewrites the lock") from None


def clear_stale_ref_locks(git: Git, ns: str, notify: Callable[[str], None] | None) -> None:
    """Remove `*.lock` files a killed fetch left under our own namespace (we hold the repo lock)."""
    root = git.common_dir / ns      # refs live in the common dir (a linked work tree's git dir has none)
    if not root.is_dir():
        return
    for stale in root.rglob("*.lock"):
        stale.unlink(missing_ok=True)
        if notify:
            notify(f"removed a stale ref lock {stale} (a previous run was interrupted)")


def _refused_as_moved(porcelain: str) -> bool:
    """Whether `git push --porcelain` refused the update itself (`[rejected] (stale info)`: the lease; or
    a branch that moved on): its status line, not what a remote hook printed. A `[remote rejected]` (a
    hook, the remote failing to unpack, a checked-out branch) is not a moved branch."""
    return any(line.startswith("!\t") and "\t[rejected] " in line for line in porcelain.splitlines())


def push(manifest: Manifest, git: Git, sha: str, resolved: Resolved, options: SyncOptions,
         keep: str | None = None) -> bool:
    """Push SHA to the fork branch with a lease on the value seen at fetch time; False when already there.
    KEEP: the fork branch's tip when it has commits sync did not make (`replaced-commits`), pushed in the same
    atomic push to refs/carrytool/<branch>/replaced/<tip> on the fork: the branch moves only if that ref is
    made too, so what was pushed there by hand stays in the fork (a CI runner's clone is thrown away)."""
    url = resolve_local(manifest.fork.url, manifest.base_dir)  # type: ignore[arg-type]
    expected = resolved.fork_remote
    if expected == sha:
        return False
    dest = f"refs/heads/{manifest.fork.branch}"
    lease = f"--force-with-lease={dest}:{expected or ''}"
    extra = ["--atomic"] if keep else []
    refspecs = [f"{sha}:{dest}"] + ([f"{keep}:{replaced_ref(manifest, keep)}"] if keep else [])
    git.keep(sha)                     # what a push sends is in the store before it runs (see Git.run)
    attempts = 0
    while True:
        proc = git.run("push", "--porcelain", "--no-verify", *extra, lease, "--end-of-options", url, *refspecs,
                       check=False)
        if proc.returncode == 0:
            return True
        stderr = redact(proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace"))
        if _refused_as_moved(proc.stdout.decode("utf-8", "replace")):
            raise PushError(f"the fork's {manifest.fork.branch} moved since it was fetched; nothing was "
                            "overwritten", stderr=stderr, hint="run sync again")
        attempts += 1
        if attempts >= 3:
            raise PushError(f"cannot push to {redact(manifest.fork.url or '')}", stderr=stderr)
        time.sleep(options.retry_delay * (2 ** (attempts - 1)))
