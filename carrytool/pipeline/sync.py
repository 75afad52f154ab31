"""`carrytool sync`: fetch, plan, compose, check, and only then move the fork branch."""

from __future__ import annotations

import json
from collections.abc import Callable

from carrytool.asserts.spec import AssertOutcome
from carrytool.errors import (
    CarryError,
    EnvironmentProblem,
    InputError,
    RefMoved,
    UnknownRef,
)
from carrytool.gitlayer.env import EMPTY_TREE
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import read_json
from carrytool.gitlayer.repolock import RepoLock
from carrytool.gitlayer.urls import resolve_local
from carrytool.manifest.model import Manifest
from carrytool.pipeline import facts
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.compose_records import Composition, Misguessed
from carrytool.pipeline.keptfindings import KeptFindings
from carrytool.pipeline.keptmerges import KeptMerges
from carrytool.pipeline.keptpatchids import KeptPatchIds
from carrytool.pipeline.keptplan import KeptPlans, Settled, Unkept, capture, checking, decode, names, settle
from carrytool.pipeline.landing import Accounting, account
from carrytool.pipeline.lock import (
    build_lock,
    lock_path,
    locked_resolution,
    read_lock,
    stage_lock,
)
from carrytool.pipeline.night_record import night_record, nights_ref, record_night
from carrytool.pipeline.plan import CONFLICT, Step, plan_paths, plan_static, say_unapplied_unions
from carrytool.pipeline.report import Report
from carrytool.pipeline.resolve import (
    Resolved,
    _fetch,
    commit_patch,
    namespace,
    resolve,
    see_fork_branch,
)
from carrytool.pipeline.sync_publish import _moved_so_far, _publish_lock, push
from carrytool.pipeline.sync_records import Planned, SyncOptions
from carrytool.pipeline.sync_replaced import _keep_replaced, _replaced_warning, _say_what_was_replaced, replaced_commits
from carrytool.pipeline.sync_warnings import (
    lock_result_warning,
    reverted_warnings,
    say_newer_upstream,
    stale_folds,
    stale_pins,
    stale_stacks,
    structured_warnings,
    upstream_rewound,
)

Progress = Callable[[str, int, int], None]


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
    report.warnings += stale_folds(manifest, git, resolved, locked=options.locked) + stale_pins(manifest, resolved)
    if command == "sync" and not options.locked:
        report.warnings += upstream_rewound(manifest, git, resolved.upstream, offline=options.offline)
    # clean chained merges earlier runs kept (pipeline.keptmerges): written by sync, unless it is a dry run
    # (which writes nothing), and by explain, which keeps what it learns (as its scope cache); verify
    # merges everything again, a check independent of what earlier runs found; so too what the landing
    # checks found parsing the composed modules (pipeline.keptfindings), and the stale-stack check's patch ids
    # (pipeline.keptpatchids)
    cache = git.common_dir / "carrytool" / "cache"
    kept = KeptMerges(cache, git.version) if command != "verify" else None
    findings = KeptFindings(cache, git.version) if command != "verify" else None
    patch_ids = KeptPatchIds(cache, git.version) if command != "verify" else None
    keeps = command == "explain" or (command == "sync" and not options.dry_run)
    nights: list[tuple[str, str | None]] = []     # the record of what is composed (sync, not a dry run)

    def night(result: str) -> None:
        if command == "sync" and not options.dry_run and not nights:
            nights.append(night_record(manifest, git, build_lock(manifest, resolved, result)))

    # what an earlier run settled for these very inputs (pipeline.keptplan): explain after the nightly sync
    # reads the facts again and composes nothing; sync composes every time (it is the run that keeps it)
    plans = KeptPlans(cache, git.version) if command in ("sync", "explain") else None
    plan_key = plans.key(manifest, resolved, _switches(), git.common_dir) if plans is not None else ""
    kept_state = plans.get(plan_key) if plans is not None and command == "explain" else None
    reused = _reused_plan(manifest, git, resolved, missing, kept_state)
    if reused is None or checking():
        before = len(report.warnings)
        steps, composition = _settle(manifest, git, resolved, missing, progress, report, kept, findings, patch_ids,
                                     keeps, night)
        state = capture(steps, composition.result, composition.trees, composition.failed_conflicts, report.dropped,
                        report.warnings[before:], git.abbreviations_asked())
        if reused is not None and state != kept_state:
            raise AssertionError("a kept plan differs from the plan composed again (CARRYTOOL_CHECK_KEPT_PLANS)")
        if state is None and checking():
            raise AssertionError("a plan that cannot be kept (pipeline.keptplan.capture; CARRYTOOL_CHECK_KEPT_PLANS)")
        if plans is not None and keeps and state is not None and reused is None:
            git.keep_named(json.dumps(state))    # what it names persists (a union-filtered head): it is used only then
            plans.put(plan_key, state)
            plans.save()
    else:
        composition, settled, violations = reused
        steps = report.steps = composition.steps
        report.violations = violations
        report.failed_conflicts = list(composition.failed_conflicts)
        report.warnings += settled.warnings
        report.dropped = settled.dropped
    report.strict = options.strict
    if options.strict:
        report.strict_only = {s.id for s in steps if s.status == CONFLICT} - {s.id for s in report.failed_conflicts}
        report.failed_conflicts = [s for s in steps if s.status == CONFLICT]
    # the report names the composed commit (a dry run's too): it and what it reaches persist; the rest
    # of what composing wrote (stand-ins, merges whose result was not used) vanishes with the quarantine
    git.keep(composition.result)
    night(composition.result)       # (when _compose did not record it before packing what it composed)
    git.keep_unreferenced = False
    return Planned(resolved, steps, composition, report, nights[0] if nights else None)


def _settle(manifest: Manifest, git: Git, resolved: Resolved, missing: dict[int, str], progress: Progress | None,
            report: Report, kept: KeptMerges | None, findings: KeptFindings | None, patch_ids: KeptPatchIds | None,
            keeps: bool, night: Callable[[str], None]) -> tuple[list[Step], Composition]:
    """Compose, check what landed (composing again without a structured resolution a check rejected) and
    say what composing found: REPORT's steps, violations, failed conflicts, landing failures and warnings."""
    steps, violations, composition, accounting, stacks = _compose(manifest, git, resolved, missing, progress,
                                                                  frozenset(), kept, findings, patch_ids, night=night)
    rejected = structured_rejections(manifest, git, steps, composition, accounting)
    if rejected:    # a structured resolution a check rejected goes back to being the conflict it was
        steps, violations, composition, accounting, stacks = _compose(manifest, git, resolved, missing, progress,
                                                                      frozenset(rejected), kept, findings, patch_ids)
        why = {"landing": "a hunk did not land", "asserts": "an assert failed on it"}
        for step in steps:
            if step.id in rejected and step.status == CONFLICT:
                step.detail = f"{step.detail}; its structured resolution was rejected: {why[rejected[step.id]]}"
    if kept is not None and findings is not None and keeps:
        kept.save()
        findings.save()
    report.steps = steps
    for step in steps:       # a PR skipped before its facts were read: its head as fetched (and locked)
        if step.entry.kind == "pr" and step.head is None:
            step.fetched_head = resolved.heads.get(step.entry.number)  # type: ignore[arg-type]
    merged_under_unions(git, resolved.upstream, steps)
    report.violations = violations
    report.failed_conflicts = list(composition.failed_conflicts)
    report.warnings += structured_warnings(steps) + reverted_warnings(steps) + \
        stacks()
    if patch_ids is not None and keeps:
        patch_ids.save()
    report.dropped = accounting.failures
    report.warnings += accounting.warnings
    say_newer_upstream(manifest, git, resolved.upstream, steps, report.warnings)
    say_unapplied_unions(steps, report.warnings)
    return steps, composition


def _switches() -> tuple[object, ...]:
    """The composer's switches (tests flip them to compare the ways of composing): part of a kept plan's key."""
    import sys

    from carrytool.pipeline import reduce

    displays = getattr(sys.modules.get("carrytool.pipeline.dictkeys"), "SEPARATE_DISPLAYS", True)
    return (Composer.fast_path, Composer.explicit_bases, Composer.regions_from_merges, Composer.regions_from_chain,
            reduce.FROM_BASE, displays)


def _same_abbreviations(git: Git, state: dict) -> bool:
    """Whether each abbreviated name the run that kept STATE asked (a union's folded head) names the same commit,
    or none, here and now (h270: a folded head fetched after the sync changed the landing's warning)."""
    try:
        asked = decode(state["abbreviations"])
    except (KeyError, Unkept):
        return False
    return isinstance(asked, dict) and all(isinstance(name, str) and git.commit_by_abbreviation(name) == commit
                                           for name, commit in asked.items())


def _reused_plan(manifest: Manifest, git: Git, resolved: Resolved, missing: dict[int, str],
                 state: dict | None) -> tuple[Composition, Settled, list] | None:
    """The plan STATE keeps (pipeline.keptplan) on steps planned and read afresh (the composition's), with their
    violations; None when there is none, the store lacks an object it names, or it does not fit the steps."""
    if state is None or git.store_lacks(names(state)) or not _same_abbreviations(git, state):
        return None
    steps = plan_static(manifest, missing)
    facts.gather(git, resolved, steps)
    violations = plan_paths(manifest, steps)
    settled = settle(state, steps)
    if settled is None:
        return None
    return Composition(resolved.upstream, settled.result, steps, settled.failed, settled.trees), settled, violations


def _compose(manifest: Manifest, git: Git, resolved: Resolved, missing: dict[int, str], progress: Progress | None,
             structured_off: frozenset[str], kept: KeptMerges | None = None, findings: KeptFindings | None = None,
             patch_ids: KeptPatchIds | None = None, aside: bool = True, night: Callable[[str], None] | None = None
             ) -> tuple[list[Step], list, Composition, Accounting, Callable[[], list[dict[str, object]]]]:
    """Plan and compose from scratch (the steps are fresh each time: composing settles them). ASIDE: the
    entries that conflict with upstream alone are merged beside the chain (Composer.aside); should one
    merge cleanly after all, everything is composed again without that guess. NIGHT: records a composed
    commit that stands, before its objects are packed (one pack: pipeline.night_record)."""
    steps = plan_static(manifest, missing)
    facts.gather(git, resolved, steps)
    stacks = stale_stacks(git, resolved.upstream, steps, patch_ids)     # their patch ids read while composing
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
        return _compose(manifest, git, resolved, missing, progress, structured_off, kept, findings, patch_ids,
                        aside=False, night=night)
    if not any(step.structured for step in steps):
        # the composition stands (only a structured resolution can be composed again): what it reaches
        # persists whatever the checks say (the report names it), so it is packed into the store while
        # the landing checks read
        git.keep(composition.result)
        if night is not None:
            night(composition.result)
        git.migrate_objects(later=True)
    return steps, violations, composition, account(git, steps, composition.result, findings), stacks


def merged_under_unions(git: Git, upstream: str, steps: list[Step]) -> None:
    """A PR a union supersedes whole that upstream has merged since (its head merged onto upstream changes
    nothing, as `union status` judges it): its detail says so, and how the union drops it (h179: `union
    status` said "pr/6847 is merged upstream: drop it from the union"; explain and sync only "provided whole
    by carry/offload-union")."""
    todo = [step for step in steps if step.reason == "superseded" and step.superseded_by and not step.filtered
            and step.fetched_head]
    for step, merged in zip(todo, git.upstream_has(upstream, [str(step.fetched_head) for step in todo])):
        if merged:
            step.upstream_merged, union = True, str(step.superseded_by)
            step.detail = (f"{step.detail}; upstream has merged it: drop it from the union (take it out of "
                           f"{union}'s `supersedes`, then `carrytool union compose {union.removeprefix('carry/')}`)")


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
        if planned.night is not None:
            _record_night(manifest, git, planned.night, notify)
        _say_what_was_replaced(manifest, report, options.dry_run)
        return report


def _record_night(manifest: Manifest, git: Git, night: tuple[str, str | None],
                  notify: Callable[[str], None] | None) -> None:
    """Move the ref of what the run composed to its record, published or not (pipeline.night_record: a red
    night writes no lock, and `bisect --rev` of it reads this); after publishing, which it never holds up. A
    failure is said, and changes nothing else of the run."""
    try:
        record_night(manifest, git, night)
    except CarryError as exc:
        if notify is not None:
            notify(f"the inputs of this night were not recorded under {nights_ref(manifest)}: {exc}")


def last_result(manifest: Manifest) -> str | None:
    """The composed commit the lock beside the manifest names (the last published night), if it can be read."""
    try:
        result = read_json(lock_path(manifest)).get("result")
    except (OSError, ValueError, AttributeError):
        return None
    return result if isinstance(result, str) else None


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


def clear_stale_ref_locks(git: Git, ns: str, notify: Callable[[str], None] | None) -> None:
    """Remove `*.lock` files a killed fetch left under our own namespace (we hold the repo lock)."""
    root = git.common_dir / ns      # refs live in the common dir (a linked work tree's git dir has none)
    if not root.is_dir():
        return
    for stale in root.rglob("*.lock"):
        stale.unlink(missing_ok=True)
        if notify:
            notify(f"removed a stale ref lock {stale} (a previous run was interrupted)")
