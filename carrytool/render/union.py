"""Text for `carrytool union`: where a fold stopped and what to run next, or what it produced."""

from __future__ import annotations

from typing import Any, TextIO

from carrytool.union.fold import Outcome


def render_outcome(outcome: Outcome, stream: TextIO, *, fork_url: str | None) -> None:
    out = stream.write
    name = outcome.name
    if not outcome.done:
        out(f"union carry/{name}: the fold stopped on a conflict the resolution store cannot resolve\n")
        width = max(len(c["file"]) for c in outcome.conflicts)
        for conflict in outcome.conflicts:
            out(f"  {conflict['file'].ljust(width)}  {', '.join(conflict['entries'])}"
                + ("" if conflict["kind"] == "content" else "  (not a content conflict: keep, edit or delete "
                                                              "the file)") + "\n")
        if outcome.scratch:
            out(f"resolve them in the scratch tree: {outcome.scratch}\n")
            out(f"then:  carrytool union continue {name}\n")
            out(f"or:    carrytool union abort {name}\n")
        return
    reused = f"; {len(outcome.reused)} conflicted file(s) resolved from the store" if outcome.reused else ""
    out(f"union carry/{name}: composed {outcome.commit} from {len(outcome.folded)} PRs{reused}\n")
    for pr, head in outcome.folded.items():
        out(f"  pr/{pr} at {head[:12]}\n")
    if outcome.unused_records:
        out(f"note: {outcome.unused_records} recorded resolution(s) were not needed by this fold\n")
    if outcome.manifest_updated:
        out("manifest updated in place: the new commit and each PR's folded head\n")
    where = fork_url or "<fork.url>"
    out(f"next: push it where sync can fetch it: git push {where} {outcome.commit}:refs/heads/carry/{name}\n")


def render_status(report: dict[str, Any], stream: TextIO) -> None:
    out = stream.write
    out(f"{report['entry']} at {(report['commit'] or '(unresolved)')[:12]} on upstream {report['upstream'][:12]}\n")
    for stale in report["stale"]:
        out(f"  stale: pr/{stale['pr']} folded at {stale['folded'][:12]}, now {stale['current'][:12]}\n")
    for pr in report["unfolded"]:
        out(f"  no folded head recorded for pr/{pr}\n")
    for drift in report["drift"]:
        out(f"  drift: upstream {drift['commit'][:12]} {drift['subject']} changes an owned file\n")
    for pr in report["merged_upstream"]:
        out(f"  pr/{pr} is merged upstream: drop it from the union\n")
    refold = report["refold"]
    if refold["needs_resolution"]:
        files = ", ".join(c["file"] for c in refold["needs_resolution"])
        out(f"  a refold would stop on a new conflict in {files}\n")
    elif refold["changes"] is not None:
        changed = ", ".join(refold["changes"]) or "nothing"
        out(f"  a refold would change: {changed}\n")
    clean = not (report["stale"] or report["drift"] or report["merged_upstream"] or refold["needs_resolution"]
                 or refold["changes"])
    out("  up to date\n" if clean else "")
