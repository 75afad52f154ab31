"""The `next:` lines of a report: what to run or change next for each kind of failure, as the user can paste it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from carrytool.pipeline.plan import held_in
from carrytool.pipeline.report import Report
from carrytool.render.commands import Invocation


def _other_ways(stopped: Sequence[str], report: Report, *, rebase: bool = False) -> str:
    """How else STOPPED (entries whose conflict fails the run) can stop failing it: `on_conflict: skip`; under
    --strict, which fails a run on every conflict, skipped or not, only a run without it (with the skip where
    the manifest has none), or for PRs that need a rebase (REBASE), `enabled: false` (helper-123, helper-127:
    it said to set `on_conflict: skip`, which some had, and which --strict fails the run on all the same)."""
    failing = [name for name in stopped if name not in report.strict_only]
    one = len(stopped) == 1
    if not report.strict:
        return f"set `on_conflict: skip` on {('it' if one else 'them') if rebase else ', '.join(failing)}"
    skip = f" with `on_conflict: skip` on {', '.join(failing)}" if failing else \
        f" (`on_conflict: skip` skips {', '.join(stopped)})"
    disable = f"set `enabled: false` on {', '.join(stopped)} (or drop {'it' if one else 'them'}), or " if rebase else ""
    return f"{disable}run without --strict{skip}"


def next_steps(report: Report, invocation: Invocation | None = None, unions: Sequence[Sequence[str]] = (),
               merged: Mapping[str, str] | None = None) -> list[str]:
    """What to run or change next, for each kind of failure in REPORT (commands as the user can paste them).
    UNIONS: the unions explain suggests (from every pair's merge, not only the chain's): a group of entries
    conflicting in the chain that one of them holds is named as that whole union (helper-107: explain
    suggested three PRs, its next step two, and the third conflicted with the union the next night).
    MERGED: of PRs that conflict with upstream alone, the ones upstream likely merged as another commit, with
    what upstream has of each (UpstreamHas.said): dropped first, rebased else (h262: "rebase" alone)."""
    run = invocation or Invocation()
    hints: list[str] = []
    failed = report.failed_conflicts
    alone = [s for s in failed if any(conf.get("upstream") for conf in s.conflicts)]
    # a union is refolded onto upstream, not rebased by hand (helper-114: "rebase carry/x")
    refold = [s for s in alone if s.entry.kind == "carry" and s.entry.supersedes and s.entry.name]
    for step in refold:
        hints.append(f"next: refold {step.id} onto upstream (a conflict with upstream by itself): "
                     f"`{run.command('union', 'compose', str(step.entry.name))}`")
    rebase = [s for s in alone if s not in refold]
    for step in [s for s in rebase if s.entry.kind == "pr" and s.id in (merged or {})]:
        branch = report.upstream["branch"] if report.upstream else "upstream"
        # as explain's story and status say it (story._merged_next; status's `drop`)
        hints.append(f"next: {step.id} conflicts with upstream alone, and {(merged or {})[step.id]}; if upstream's "
                     "version of it is what you carry it for (`carrytool status` shows whether upstream merged it), "
                     f"drop it: remove its entry from the manifest; else rebase it onto upstream {branch}")
    rebase = [s for s in rebase if s.id not in (merged or {})]
    if rebase:
        branch = report.upstream["branch"] if report.upstream else "upstream"
        hints.append(f"next: rebase {', '.join(s.id for s in rebase)} onto upstream {branch} (a conflict with "
                     f"upstream by itself: no union can solve it), or {_other_ways([s.id for s in rebase], report, rebase=True)}")
    stacks = [s for s in failed if s.stacked_conflict]
    if stacks:          # before the union: a PR stacked on another needs no union to apply on it
        hints.append(f"next: {', '.join(f'{s.id} is stacked on {s.stacked_conflict}' for s in stacks)}: "
                     "`policy: {stacked: own-commits}` in the manifest merges each one's own commits onto the PR "
                     "it is stacked on (as git merging its branch would), instead of its whole change")
    stale = {str(w["entry"]): w for w in report.warnings if w.get("kind") == "stale-stack" and w.get("was")}
    # a stale stack in conflict with a PR it was built on: a union would keep the old version (helper-121)
    met = {s.id: {name for conf in s.conflicts for name in conf["with"]} for s in failed}
    stale_conflicts = [s for s in failed
                       if s.id in stale and met[s.id] & set(stale[s.id]["was"])]  # type: ignore[arg-type]
    for step in stale_conflicts:
        pins: dict[str, str] = stale[step.id]["was"]  # type: ignore[assignment]
        lowers = ", ".join(pins)
        said = " and ".join(f"`head: {head[:12]}` on {lower}" for lower, head in pins.items())
        hints.append(f"next: {step.id} is built on an older version of {lowers} (stale-stack): rebase {step.id} onto "
                     f"the current head; until then {said} carr{'ies' if len(pins) == 1 else 'y'} the version it was "
                     "built on (with `policy.stacked: own-commits` where its whole change conflicts with it)")
    held = [s for s in failed if not s.stacked_conflict and held_in(s) is not None]
    for step in held:   # an earlier entry built on it carries it: no union to make (h265)
        hints.append(f"next: {held_in(step)} is built on {step.id} (its history holds {step.id}'s head) and carries "
                     f"its change already: remove {step.id}'s entry from the manifest, or move it before "
                     f"{held_in(step)}")
    between = [s for s in failed if any(conf["with"] for conf in s.conflicts) and not s.stacked_conflict
               and s not in stale_conflicts and s not in held]
    order = {step.id: n for n, step in enumerate(report.steps)}
    steps = {step.id: step for step in report.steps}
    for group, stopped in _conflict_groups(between, order):   # one union per set of entries that conflict together
        group = next((list(union) for union in unions if set(group) <= set(union)), group)
        numbers = [p.removeprefix("pr/") for p in group if p.startswith("pr/")]
        standing = [m for m in group if m in steps and steps[m].entry.kind == "carry" and steps[m].entry.supersedes]
        if standing:     # a union already stands for some of them: the others join it (a union of one fixes nothing)
            name = steps[standing[0]].entry.name
            carries = [m for m in group if m not in standing and not m.startswith("pr/")]
            ways = [f"add {', '.join(numbers)} to {standing[0]}'s `supersedes` and refold it "
                    f"(`{run.command('union', 'compose', name)}`)"] if numbers else []
            if carries:      # only PRs can be superseded: a fork carry is made to apply on the union
                ways.append(f"rebase {', '.join(carries)} onto {standing[0]} (a fork carry cannot join `supersedes`)")
            fold = " and ".join(ways)
        elif len(numbers) < 2 and len(numbers) < len(group):   # a fork carry meets one PR or a carry (h254)
            later = [m for m in group if not m.startswith("pr/")][-1]
            onto = [m for m in group if m != later]
            them = ", ".join(onto)
            last = max(onto, key=lambda m: order.get(m, -1))
            # standing before them, it would apply before them, rebased or not (h257; explain's `rebase` says so)
            move = f" and move it after {last} in the manifest" if order.get(later, -1) < order.get(last, -1) else ""
            fold = (f"rebase {later} onto {them}{move} (a fork carry cannot join a union's `supersedes`), or drop it "
                    f"if {them} {'does' if len(onto) == 1 else 'do'} what it does")
        else:
            shows = "the overlap map shows where" if report.command == "explain" else \
                f"`{run.command('explain')}` shows the overlap, and the PRs that also conflict with them"
            carries = [m for m in group if not m.startswith("pr/")]
            prs = [m for m in group if m.startswith("pr/")]
            rebase = f", then rebase {', '.join(carries)} onto it (a fork carry cannot join a union's " \
                     "`supersedes`)" if carries else ""
            fold = f"fold {', '.join(prs)} into a union ({shows}; " \
                   f"`{run.command('union', 'new', 'NAME', *numbers)}` starts it){rebase}"
        hints.append(f"next: {fold}, or {_other_ways(stopped, report)}")
    if any(v.kind == "owned-path" for v in report.violations):
        v = next(v for v in report.violations if v.kind == "owned-path")
        hints.append(f"next: let {v.other} supersede {v.entry} for {v.path} (`supersedes: [{{pr: N, paths: "
                     f"[{v.path}]}}]`), or drop {v.entry}")
    if any(v.kind == "excludes" for v in report.violations):
        hints.append("next: take the excluded paths out of the carry (or out of its `excludes`)")
    clobbers = [d for d in report.dropped if d.get("kind") == "clobbered"]
    if clobbers:
        hints += _clobber_next(clobbers, report, run)
    dropped = sorted({str(d.get("entry")) for d in report.dropped if d.get("kind") == "dropped" and d.get("entry")})
    if dropped:
        hints.append(f"next: `{run.command('explain', *dropped)}` shows the dropped hunk and the commands that "
                     "reproduce it")
    elif any(d.get("kind") == "dropped" for d in report.dropped):
        hints.append(f"next: `{run.command('explain')}` shows the dropped hunk and the commands that reproduce it")
    if any(not a.ok for a in report.asserts) and report.result and report.command == "sync":
        sha = str(report.result["sha"])
        state = "the fork branch already had it" if report.result.get("previous") == sha else "not published"
        failed = [a for a in report.asserts if not a.ok]
        names = _assert_options(failed)
        them = "it" if len(failed) == 1 else "them"
        # bisect first: verify only repeats what sync said, and would name bisect one step later (h254)
        hints.append(f"next: `{run.command('bisect', '--rev', sha, *names)}` names the entry of that chain that "
                     f"broke {them}; `{run.command('verify', '--rev', sha)}` reproduces the failed asserts on the "
                     f"composed result ({state})")
    if any(not a.ok for a in report.asserts) and report.command == "verify":
        hints.append(_verify_next(report, run))
    return hints


def _clobber_next(clobbers: list[dict[str, Any]], report: Report, run: Invocation) -> list[str]:
    """The next steps after entries removed other entries' lines, one per entry that removed them: its cause
    (`on_conflict: theirs` only where that entry resolved so: helper-133, a fork carry's clean merge was
    blamed on it; helper-144, one `theirs` in a run coloured every other clobber) and the way out that
    entry's kind has: PRs fold into a union (every PR whose lines went and the PR that removed them:
    helper-76 saw one pair named), a union takes the PRs into its `supersedes` and is refolded, a fork carry
    carries the PR's change and supersedes it, or holds the other carry's change (a carry is never in
    `supersedes`)."""
    order = {step.id: n for n, step in enumerate(report.steps)}
    steps = {step.id: step for step in report.steps}

    def rank(entry_id: str) -> tuple[int, str]:         # manifest order
        return order.get(entry_id, len(order)), entry_id

    victims_of: dict[str, list[str]] = {}
    reverted: dict[tuple[str, str], int] = {}       # (by, entry) -> the entry's hunks BY reverted
    for item in clobbers:
        victims = victims_of.setdefault(str(item.get("by")), [])
        victims += [] if str(item.get("entry")) in victims else [str(item.get("entry"))]
        if item.get("reverts"):
            pair = (str(item.get("by")), str(item.get("entry")))
            reverted[pair] = reverted.get(pair, 0) + 1

    def wholly(by: str, victim: str) -> bool:       # every hunk of VICTIM's own diff reverted by BY
        landing = getattr(steps.get(victim), "landing", None) or {}
        return 0 < int(landing.get("hunks", 0) or 0) <= reverted.get((by, victim), 0)   # type: ignore[call-overload]

    hints = []
    for by in sorted(victims_of, key=rank):
        every = sorted(victims_of[by], key=rank)
        undone = [v for v in every if wholly(by, v)]
        if undone:
            # a union of a change and its revert holds neither (verl's pr/5091, upstream's revert of pr/5054):
            # the manifest carries one of them, or neither; a revert of part of an entry is a clobber as any
            hints.append(_revert_next(by, undone))
        victims = [v for v in every if v not in undone]
        if not victims:
            continue
        step = steps.get(by)
        whose = ", ".join(victims)
        cause = f"{by} (`on_conflict: {step.resolution}`) overwrote {whose}'s lines" if step and step.resolution else \
            f"{by}'s own change edits {whose}'s lines (a clean merge: its commit changes them)"
        prs = [v for v in victims if v.startswith("pr/")]
        carries = [v for v in victims if not v.startswith("pr/")]
        numbers = [v.removeprefix("pr/") for v in prs]
        union = step is not None and step.entry.kind == "carry" and bool(step.entry.supersedes)
        ways = []
        if by.startswith("pr/"):
            both = sorted(prs + [by], key=rank)
            ways.append("compose both into a union instead "
                        f"(`{run.command('union', 'new', 'NAME', *[x.removeprefix('pr/') for x in both])}`)")
        elif union and step is not None:
            if numbers:
                ways.append(f"add {', '.join(numbers)} to {by}'s `supersedes` and refold it "
                            f"(`{run.command('union', 'compose', str(step.entry.name))}`)")
        elif numbers:
            ways.append(f"if {by} means to change them, make its commit carry {', '.join(prs)}'s change too and let "
                        f"it supersede {'it' if len(prs) == 1 else 'them'} (`supersedes: [{', '.join(numbers)}]`)")
        if carries:
            ways.append(f"fold {', '.join(carries)} into {by} (one carry holding both changes)")
        if not by.startswith("pr/"):
            ways.append(f"{'else ' if ways else ''}change {by} to leave those lines alone")
        hints.append(f"next: {cause}: {'; '.join(ways)}")
    return hints


def _revert_next(by: str, undone: list[str]) -> str:
    """The next step after BY reverted the whole change of each of UNDONE (every hunk of its own diff)."""
    many = len(undone) > 1
    names = [f"{v}'s" for v in undone]
    changes = (", ".join(names[:-1]) + " and " + names[-1] + " changes") if many else f"{names[0]} change"
    entries, them = ("their entries", "them") if many else (f"{undone[0]}'s entry", "it")
    if by.startswith("pr/"):
        choice = f"{by} or those, not all" if many else "one of the two, not both"
        return f"next: {by}'s own change reverts {changes}: carry {choice} (remove {by}'s entry to keep {them}, " \
               f"or {entries} to leave {them} out)"
    return f"next: {by}'s own change reverts {changes}: change {by} to leave {them} alone, or remove {entries} " \
           f"(not carrying {them})"


def _verify_next(report: Report, run: Invocation) -> str:
    """The next step of a failed `verify`: bisect the chain for the entry that broke the asserts (of the composed
    commit verified, else of the manifest composed as sync would), and explain the entries they guard
    (helper-115: verify printed no `next:` line where sync did)."""
    failed = [a for a in report.asserts if not a.ok]
    # the work tree checked is not the fork branch: its asserts say nothing of what sync composed, and bisect
    # (which composes the manifest) would find nothing to bisect (h258: the next step after a plain `verify`)
    [tree] = [w for w in report.warnings if w.get("kind") == "work-tree"][:1] or [None]
    if tree is not None:
        return f"next: `{tree['command']}` checks the fork branch" if tree.get("command") else \
            "next: verify the fork branch where sync wrote it, as the warning says"
    target = report.extra.get("target") or {}
    names = _assert_options(failed)
    them = "it" if len(failed) == 1 else "them"
    if target.get("composed"):
        hint = f"next: `{run.command('bisect', '--rev', str(target['sha']), *names)}` names the entry of that chain " \
               f"that broke {them}"
    else:
        hint = f"next: `{run.command('bisect', *names)}` composes the manifest as sync would and names the entry " \
               f"that breaks {them}"
    entries = sorted({a.entry for a in failed if a.entry})
    if entries:
        hint += f"; `{run.command('explain', *entries)}` shows what {', '.join(entries)} carr" \
                f"{'ies' if len(entries) == 1 else 'y'} and where it lands"
    return hint


def _assert_options(failed: Sequence[Any]) -> list[str]:
    """`--assert NAME` for each assert of FAILED, for bisect; none (bisect's default: every failed assert) for
    more than 3, or a name a command line cannot hold on one line (a text check's newline)."""
    if len(failed) > 3 or not all(a.name.isprintable() for a in failed):
        return []
    return [word for a in failed for word in ("--assert", a.name)]


def _conflict_groups(steps: list, order: dict[str, int]) -> list[tuple[list[str], list[str]]]:  # noqa: ANN001
    """The entries STEPS (a report's) conflict with, grouped: each group holds the entries linked by a
    conflict (one entry's conflict names another), with the ones of STEPS in it; entries in manifest
    ORDER (`pr/2` before `pr/10`), groups in order of their first entry."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for step in steps:
        for conf in step.conflicts:
            for other in conf["with"]:
                parent[root(other)] = root(step.id)
    groups: dict[str, list[str]] = {}
    for name in sorted(parent, key=lambda name: (order.get(name, len(order)), name)):
        groups.setdefault(root(name), []).append(name)
    stopped = {step.id for step in steps}
    return [(members, [m for m in members if m in stopped]) for members in groups.values()]
