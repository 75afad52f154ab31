"""Why a sync/verify run fails and what it warns of, one line each: conflicts, violations, lost hunks, failed
asserts, warnings (identical hunks grouped by pair) and the hunks unions leave out on purpose."""

from __future__ import annotations

from carrytool.pipeline.plan import structured_refusal
from carrytool.pipeline.report import Report
from carrytool.pipeline.sync_warnings import BOTH_HOLD
from carrytool.render.commands import Invocation
from carrytool.render.safe import printable

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
    said = str(warnings[0].get("message") or "")      # both PRs built on a newer upstream: why (pipeline says)
    why = said[said.index(BOTH_HOLD):] if BOTH_HOLD in said else ""
    return f"{pair[0]} and {pair[1]} carry the same {len(warnings)} hunks in {files} file{'s' * (files != 1)} " \
           f"({', '.join(places[:PLACES_SHOWN])}{more})" + (": each is applied once" if once else "") + why


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
            # one line, as the message quotes a text check's text: a name derived from `absent: "a\nb"` (or a
            # why) holds a newline, which broke the line (h185)
            lines.append(printable(f"assert failed: {outcome.name}: {outcome.message}" +
                                   (f" (guards {outcome.entry}{unapplied})" if outcome.entry else "") +
                                   (f" (why: {outcome.why})" if outcome.why else ""), newlines=False))
    return lines


def conflict_culprits(report: Report, conflict: dict) -> str:
    """Who a conflict is with: `upstream main alone`, `upstream main and pr/1`, or `pr/1, pr/2`."""
    upstream = f"upstream {report.upstream['branch'] if report.upstream else ''}".rstrip()
    entries = ", ".join(conflict["with"])
    if conflict.get("upstream"):
        return f"{upstream} and {entries}" if entries else f"{upstream} alone"
    return entries or upstream
