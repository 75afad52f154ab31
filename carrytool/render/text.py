"""Terminal output: rich on a terminal, plain and stable text in pipes (NO_COLOR honoured)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from carrytool.pipeline.plan import provided_absent, structured_refusal, union_lost
from carrytool.pipeline.report import Report, entry_json
from carrytool.render.commands import Invocation
from carrytool.render.safe import PrintableStream, printable

_STATUS_STYLE = {"applied": "green", "skipped": "yellow", "conflict": "red"}


def use_rich(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def console(stream: TextIO):  # noqa: ANN201 - rich.console.Console, imported lazily
    from rich.console import Console

    return Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=False, width=None if stream.isatty() else 120)


FILES_WIDTH = 100     # plain output's files column: two names when they fit, else the first and a count


def entry_rows(report: Report) -> list[tuple[str, str, str, str]]:
    rows = []
    for step in report.steps:
        data = entry_json(step)
        why = data.get("detail") or ""
        if step.reason == "superseded" and step.superseded_by and not step.lost_with:
            why = f"by {step.superseded_by}" + ("; merged upstream: drop it from the union"
                                                 if step.upstream_merged else "")
        if step.filtered and step.status == "applied":
            why = f"without {', '.join(step.filtered)} (from {', '.join(sorted(set(step.provided_by.values())))})"
            if step.lost_with:          # (the union's paths are in no entry: said, not "without" alone)
                why += f"; {data['detail']}"
        landing = data.get("landing")
        if landing and step.status == "applied":
            why = (why + "; " if why and why != "applied" else "") + \
                f"{landing['landed']}/{landing['hunks']} hunks landed"
        names = data.get("files") or []
        shown = names[:1] + [n for n in names[1:2] if len(names[0]) + len(n) + 2 <= FILES_WIDTH - 8]
        files = ", ".join(shown) + (f" (+{len(names) - len(shown)})" if len(names) > len(shown) else "")
        rows.append((step.id, step.status + (f" ({step.reason})" if step.reason and step.status != "conflict"
                                             else ""), why, files))
    return rows


def step_files_short(files: str) -> bool:
    """Plain output shows an entry's files when they fit on the line."""
    return len(files) <= FILES_WIDTH


def render_report(report: Report, stream: TextIO = sys.stdout, *, verbose: bool = False,
                  invocation: Invocation | None = None, show_error: bool = True) -> None:
    """Print a sync/verify report: entries table, checks, warnings, the outcome line.

    `show_error` False leaves the run's error out (the caller prints it on stderr).
    """
    details = detail_lines(report, verbose=verbose, invocation=invocation, show_error=show_error)
    if use_rich(stream):
        _render_rich(report, stream, verbose, details)
    else:
        _render_plain(report, PrintableStream(stream), verbose, details)


# warnings that say a change is missing from the image or stale, shown under --quiet too: never hidden
LOSS_WARNINGS = ("provided-absent", "upstream-loss", "stale-fold", "replaced-commits", "shadowed-definition",
                 "duplicate-key", "unbound-name", "merged-upstream-reverted", "stale-stack", "stale-drop")


def render_quiet(report: Report, stream: TextIO = sys.stdout, *, invocation: Invocation | None = None) -> None:
    """Print why a run failed (conflicts, violations, lost hunks, failed asserts), the warnings that a change
    is missing or stale (LOSS_WARNINGS) and the outcome line."""
    run = invocation or Invocation()
    losses = [f"warning: {run.rewrite(str(w.get('message') or w))}" for w in report.warnings
              if w.get("kind") in LOSS_WARNINGS]
    for line in failure_lines(report) + losses + next_steps(report, invocation):
        stream.write(printable(line) + "\n")
    stream.write(outcome_line(report) + "\n")


def _render_plain(report: Report, stream: PrintableStream, verbose: bool, details: list[str]) -> None:
    out = stream.write
    if report.upstream:
        out(f"upstream {report.upstream['branch']} at {report.upstream['sha'][:12]}\n")
    rows = entry_rows(report)
    if rows:
        width = max(len(r[0]) for r in rows)
        swidth = max(len(r[1]) for r in rows)
        for ident, status, why, files in rows:
            line = f"  {ident.ljust(width)}  {status.ljust(swidth)}  {why}"
            if files and (verbose or step_files_short(files)):
                line += f"  [{files}]"
            out(line.rstrip() + "\n")
    for line in details:
        out(line + "\n")
    out(outcome_line(report) + "\n")


def _render_rich(report: Report, stream: TextIO, verbose: bool, details: list[str]) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = console(stream)
    if report.upstream:
        con.print(f"upstream [bold]{report.upstream['branch']}[/] at {report.upstream['sha'][:12]}")
    rows = entry_rows(report)
    if rows:
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for col in ("entry", "status", "why", "files"):
            table.add_column(col, overflow="fold")
        for step, (ident, status, why, files) in zip(report.steps, rows):
            style = _STATUS_STYLE.get(step.status, "")
            cells = [escape(printable(ident)), f"[{style}]{escape(status)}[/]", escape(printable(why)),
                     escape(printable(files))]
            table.add_row(*cells)
        con.print(table)
    for line in details:
        con.print(printable(line), markup=False)
    style = "green" if report.ok else "red"
    con.print(f"[{style}]{outcome_line(report)}[/]")


def detail_lines(report: Report, *, verbose: bool = False, invocation: Invocation | None = None,
                 show_error: bool = True, unions: Sequence[Sequence[str]] = ()) -> list[str]:
    """Conflicts, violations, landing failures, failed asserts (with `verbose`, held ones too), warnings,
    the error (unless `show_error` is False) and the next steps (UNIONS: explain's suggested unions)."""
    lines = failure_lines(report)
    if verbose:
        lines += [f"assert held: {outcome.name}: {outcome.message}" for outcome in report.asserts if outcome.ok]
    passed = sum(1 for a in report.asserts if a.ok)
    if report.asserts:
        lines.append(f"asserts: {passed}/{len(report.asserts)} hold")
    lines += warning_lines(report, invocation) + dropped_on_purpose_lines(report)
    if report.error and show_error:
        lines.append(f"error: {report.error['message']}")
    return lines + next_steps(report, invocation, unions)


HUNKS_APART = 3     # a pair of entries sharing more identical hunks than this has one line for them all
PAIRS_SHOWN = 10    # and past this many such pairs, one line for the rest: the report keeps every warning
PLACES_SHOWN = 3    # the places a pair's line names


def warning_lines(report: Report, invocation: Invocation | None = None) -> list[str]:
    """One `warning:` line per warning of REPORT (a command it names repeats the run's -m and --repo: helper-114),
    but one line for the identical-hunk warnings of a pair of entries that share more than HUNKS_APART hunks,
    and one line for every pair past PAIRS_SHOWN (helper-123: a jax PR based on a newer upstream than the pinned
    one carried upstream's commits, and sync printed 3,163 identical-hunk lines)."""
    run = invocation or Invocation()
    pairs: dict[tuple[str, str], list[dict]] = {}
    for warning in report.warnings:
        if warning.get("kind") == "identical-hunk":
            pairs.setdefault((str(warning.get("entry")), str(warning.get("other"))), []).append(warning)
    shown = set(list(pairs)[:PAIRS_SHOWN])
    applied = {step.id for step in report.steps if step.status == "applied"}
    lines: list[str] = []
    said: set[tuple[str, str]] = set()
    for warning in report.warnings:
        pair = (str(warning.get("entry")), str(warning.get("other")))
        if warning.get("kind") == "identical-hunk" and (pair not in shown or len(pairs[pair]) > HUNKS_APART):
            if pair in shown and pair not in said:
                said.add(pair)
                lines.append(f"warning: {_same_hunks(pair, pairs[pair], once=pair[0] in applied)}")
            continue
        lines.append(f"warning: {run.rewrite(str(warning.get('message') or warning))}")
    rest = [pair for pair in pairs if pair not in shown]
    if rest:
        hunks = sum(len(pairs[pair]) for pair in rest)
        lines.append(f"warning: {len(rest)} more pair{'s' * (len(rest) != 1)} of entries carr"
                     f"{'y' if len(rest) != 1 else 'ies'} the same hunks ({hunks} hunk{'s' * (hunks != 1)}): see "
                     "the report's warnings (--report FILE or --format json)")
    return lines


def dropped_on_purpose_lines(report: Report) -> list[str]:
    """One line per hunk a union leaves out as its `drops` declare, with the why (helper-135)."""
    lines = []
    for step in report.steps:
        for drop in step.dropped_on_purpose:
            if drop["lines"] is None:        # a file the union does not change
                lines.append(f"dropped on purpose: {step.id} leaves out pr/{drop['pr']}'s change to {drop['file']} "
                             f"(the whole file): {drop['why']}")
                continue
            first, last = drop["lines"]  # type: ignore[misc]
            where = f"{drop['file']}:{first}" + (f"-{last}" if last != first else "")
            scopes = drop["scopes"]
            where += f" ({', '.join(scopes)})" if scopes else ""  # type: ignore[arg-type]
            lines.append(f"dropped on purpose: {step.id} leaves out pr/{drop['pr']}'s hunk {where}: {drop['why']}")
    return lines


def _same_hunks(pair: tuple[str, str], warnings: list[dict], *, once: bool) -> str:
    """`pr/B and pr/A carry the same N hunks in K files (a.py:3, a.py:40-41, b.py:7 and M more)`."""
    places: list[str] = []
    for warning in warnings:
        place = _place(warning)
        places += [] if place in places else [place]
    files = len({warning.get("file") for warning in warnings})
    more = f" and {len(places) - PLACES_SHOWN} more" if len(places) > PLACES_SHOWN else ""
    return f"{pair[0]} and {pair[1]} carry the same {len(warnings)} hunks in {files} file{'s' * (files != 1)} " \
           f"({', '.join(places[:PLACES_SHOWN])}{more})" + (": each is applied once" if once else "")


def _place(warning: dict) -> str:
    """`a.py:3-5` for lines; `run.sh (mode 100755)` for a mode change, `logo.png (binary change)` for another
    change that is not lines (helper-136: a mode change read as a bare path)."""
    first, last = (list(warning.get("lines") or []) + [0, 0])[:2]
    change = warning.get("change")
    if change == "mode" and warning.get("mode"):
        return f"{warning.get('file')} (mode {warning['mode']})"
    if change:
        return f"{warning.get('file')} ({change} change)"
    return f"{warning.get('file')}" + (f":{first}" if first else "") + (f"-{last}" if last and last != first else "")


def _hold(count: int) -> str:
    return "1 assert holds" if count == 1 else f"{count} asserts hold"


def failure_lines(report: Report) -> list[str]:
    """Why a run fails, one line each: conflicts, violations, lost hunks, failed asserts."""
    lines: list[str] = []
    for step in report.steps:
        for conflict in step.conflicts:
            culprits = conflict_culprits(report, conflict)
            label = f"resolved (on_conflict: {step.resolution})" if step.resolution else "conflict"
            refused = structured_refusal(conflict)            # why the structured merge left it (helper-129)
            lines.append(f"{label}: {step.id} in {conflict['file']} with {culprits}" +
                         (f" ({refused})" if refused else ""))
    for violation in report.violations:
        lines.append(f"violation: {violation.message}")
    for drop in report.dropped:
        lines.append(f"lost: {drop['message']}")
    status = {step.id: step for step in report.steps}
    for outcome in report.asserts:
        if not outcome.ok:
            guarded = status.get(outcome.entry or "")
            unapplied = f", which is not applied: {guarded.reason or guarded.status}" \
                if guarded is not None and guarded.status != "applied" else ""
            lines.append(f"assert failed: {outcome.name}: {outcome.message}" +
                         (f" (guards {outcome.entry}{unapplied})" if outcome.entry else "") +
                         (f" (why: {outcome.why})" if outcome.why else ""))
    return lines


def conflict_culprits(report: Report, conflict: dict) -> str:
    """Who a conflict is with: `upstream main alone`, `upstream main and pr/1`, or `pr/1, pr/2`."""
    upstream = f"upstream {report.upstream['branch'] if report.upstream else ''}".rstrip()
    entries = ", ".join(conflict["with"])
    if conflict.get("upstream"):
        return f"{upstream} and {entries}" if entries else f"{upstream} alone"
    return entries or upstream


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


def next_steps(report: Report, invocation: Invocation | None = None, unions: Sequence[Sequence[str]] = ()) -> list[str]:
    """What to run or change next, for each kind of failure in REPORT (commands as the user can paste them).
    UNIONS: the unions explain suggests (from every pair's merge, not only the chain's): a group of entries
    conflicting in the chain that one of them holds is named as that whole union (helper-107: explain
    suggested three PRs, its next step two, and the third conflicted with the union the next night)."""
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
    between = [s for s in failed if any(conf["with"] for conf in s.conflicts) and not s.stacked_conflict
               and s not in stale_conflicts]
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
        else:
            shows = "the overlap map shows where" if report.command == "explain" else \
                f"`{run.command('explain')}` shows the overlap, and the PRs that also conflict with them"
            fold = f"fold {', '.join(group)} into a union ({shows}; " \
                   f"`{run.command('union', 'new', 'NAME', *numbers)}` starts it)"
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
        hints.append(f"next: `{run.command('verify', '--rev', sha)}` reproduces the failed asserts on the "
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
    for item in clobbers:
        victims = victims_of.setdefault(str(item.get("by")), [])
        victims += [] if str(item.get("entry")) in victims else [str(item.get("entry"))]
    hints = []
    for by in sorted(victims_of, key=rank):
        victims = sorted(victims_of[by], key=rank)
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


def _verify_next(report: Report, run: Invocation) -> str:
    """The next step of a failed `verify`: bisect the chain for the entry that broke the asserts (of the composed
    commit verified, else of the manifest composed as sync would), and explain the entries they guard
    (helper-115: verify printed no `next:` line where sync did)."""
    failed = [a for a in report.asserts if not a.ok]
    target = report.extra.get("target") or {}
    names = [word for a in failed for word in ("--assert", a.name)] if len(failed) <= 3 else []  # else: bisect's default
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


def outcome_line(report: Report) -> str:
    structured = sum(len(step.structured) for step in report.steps)
    note = f" ({structured} conflict hunk(s) resolved structurally: see the warnings)" if structured else ""
    return _outcome(report) + note + _lost_note(report)


def _lost_note(report: Report) -> str:
    """`; but carry/u was not applied (conflict): the result lacks changes of pr/1, pr/2, which it supersedes`, for
    each union that left its PRs out (helper-133: "ok" alone, and the two PRs were gone from the branch)."""
    notes = []
    lacking = provided_absent(report.warnings)
    for union in report.steps:
        if union.entry.kind == "carry" and union_lost(union):
            absent = sorted({pr for pr, other in lacking if other == union.id}, key=lambda pr: (len(pr), pr))
            said = f"the result lacks changes of {', '.join(absent)}, which it supersedes (see the provided-absent " \
                "warnings)" if absent else \
                "the PRs it supersedes are in the result only where other entries bring them"
            notes.append(f"{union.id} was not applied ({union.reason or union.status}): {said}")
    return "; but " + "; ".join(notes) if notes else ""


def _outcome(report: Report) -> str:
    result = report.result or {}
    code = report.exit_code
    sha = (result.get("sha") or "")[:12]
    if code == 0:
        if report.command == "verify":
            rebuild = report.extra.get("rebuild")
            if rebuild:
                return f"ok: {rebuild['rev']} is exactly what manifest + lock compose ({rebuild['actual'][:12]}); " \
                       f"{_hold(len(report.asserts))}"
            return f"ok: {_hold(len(report.asserts))}"
        if result.get("updated"):
            prev = (result.get("previous") or "(new)")[:12]
            return f"ok: {result.get('branch')} {prev} -> {sha}" + (f" (pushed{_fork_was(result, 'was')})"
                                                                      if result.get("pushed") else "")
        if report.extra.get("dry_run"):
            return f"ok (dry run): {result.get('branch')} would be {sha}; no branch moved, no lock written"
        pushed = ", pushed to the fork" if result.get("pushed") else ""
        return f"ok: {result.get('branch')} already at {sha}{pushed}"
    verdict = {1: "verification failed", 2: "bad input", 3: "conflict", 4: "environment"}.get(code, "failed")
    tail = f"; {result.get('branch')} left at {(result.get('previous') or '(absent)')[:12]}" \
        if result and report.command == "sync" else ""
    rebuild = report.extra.get("rebuild") if report.command == "verify" else None
    if rebuild and not rebuild.get("ok"):      # (helper-107: "asserts: 7/7 hold", then a bare FAILED)
        tail = f": {rebuild['rev']} is {str(rebuild['actual'])[:12]}, not {str(rebuild['expected'])[:12]}, what " \
               "manifest + lock compose"
    if tail and result.get("pushed") is False:
        tail += f", nothing pushed{_fork_was(result, 'left at')}"
    return f"FAILED ({verdict}, exit {code}){tail}"


def _fork_was(result: dict, verb: str) -> str:
    """`; the fork's BRANCH VERB SHA` where the fork's branch (as fetched to push) is not the local branch's
    old value (a fresh clone has no local branch: helper-82, "(new)" every night)."""
    if "fork_previous" not in result or result["fork_previous"] == result.get("previous"):
        return ""
    return f"; the fork's {result.get('branch')} {verb} {(result['fork_previous'] or '(absent)')[:12]}"


@contextmanager
def progress_reporter(stream: TextIO, enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on a terminal for fetch and compose; nothing elsewhere."""
    if not enabled or not use_rich(stream):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=console(stream), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update
