"""A report's outcome line: ok or FAILED, the branch moved or left, what was pushed and what the result lacks."""

from __future__ import annotations

from carrytool.pipeline.hunks import counted
from carrytool.pipeline.plan import provided_absent, union_lost
from carrytool.pipeline.report import Report


def _hold(count: int) -> str:
    return "1 assert holds" if count == 1 else f"{count} asserts hold"


def outcome_line(report: Report) -> str:
    structured = sum(len(step.structured) for step in report.steps)
    note = f" ({counted(structured, 'conflict hunk')} resolved structurally: see the warnings)" if structured else ""
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
            # with --push in a fresh clone the local branch is new every night: say when the fork had it already
            # (h258: a night where nothing moved read "ok: polars-fork (new) -> SHA", as if it had published)
            already = "fork_previous" in result and result["fork_previous"] == result.get("sha")
            return f"ok: {result.get('branch')} {prev} -> {sha}" + (
                f" (pushed{_fork_was(result, 'was')})" if result.get("pushed") else
                f" (the fork's {result.get('branch')} was already at it: nothing pushed)" if already else "")
        if report.extra.get("dry_run"):
            return f"ok (dry run): {result.get('branch')} would be {sha}; no branch moved, no lock written"
        pushed = ", pushed to the fork" if result.get("pushed") else ""
        return f"ok: {result.get('branch')} already at {sha}{pushed}"
    verdict = {1: "verification failed", 2: "bad input", 3: "conflict", 4: "environment"}.get(code, "failed")
    tail = ""
    if result and report.command == "sync":    # a first night's failure creates no branch (h227: "left at (absent)")
        tail = f"; {result.get('branch')} " + (f"left at {result['previous'][:12]}" if result.get("previous") else
                                                "not created (it does not exist here yet)")
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
