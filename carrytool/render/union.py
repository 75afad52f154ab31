"""Text for `carrytool union`: where a fold stopped and what to run next, or what it produced."""

from __future__ import annotations

import shlex
from collections import Counter
from typing import Any, TextIO

from carrytool.gitlayer.urls import redact
from carrytool.pipeline.hunks import counted
from carrytool.union.fold import Outcome
from carrytool.union.upstream_edit import spans


def render_outcome(outcome: Outcome, stream: TextIO, *, fork_url: str | None, quiet: bool = False) -> None:
    """A fold's outcome. QUIET (`-q`): a stop is said whole (it is the problem); a finished fold by its
    outcome line, its warnings and whether the manifest changed, without the PRs folded, the note on
    resolutions it did not need and the next commands."""
    out = stream.write
    name, args = outcome.name, outcome.invocation
    if outcome.taken:       # said even with -q: what went into the union unasked (h214: a vim swap file)
        out("continue took from the scratch tree, beyond the files that conflicted: "
            + ", ".join(f"{item['file']} ({item['change']})" for item in outcome.taken) + "\n")
    if not outcome.done:
        out(f"union carry/{name}: the fold stopped on a conflict the resolution store cannot resolve\n")
        width = max(len(c["file"]) for c in outcome.conflicts)
        for conflict in outcome.conflicts:
            out(f"  {conflict['file'].ljust(width)}  {_who(conflict)}{_kind(conflict)}\n")
        if outcome.reused:      # in the words the finished fold says them (h244: counted apart, they disagreed)
            out(f"so far: {_reused(outcome, named=True)[2:]}\n")
        _structured(outcome, out)
        if outcome.scratch:
            out(f"resolve them in the scratch tree: {outcome.scratch}\n")
            out("every change you make there is taken (other files, new files and deletions too: continue names them) "
                "and recorded; an editor's or merge tool's leftover file (a swap file, `*~`, `*.orig`) is refused "
                "unless you --take it\n")
            out(f"then:  carrytool union continue {shlex.quote(name)}{args}\n")
            out(f"or:    carrytool union abort {shlex.quote(name)}{args}\n")
        return
    out(f"union carry/{name}: composed {outcome.commit} from {len(outcome.folded)} PRs{_reused(outcome)}\n")
    for pr, head in outcome.folded.items() if not quiet else ():
        out(f"  pr/{pr} at {head[:12]}\n")
    _structured(outcome, out)
    if outcome.unused_records and not quiet:
        by_file = Counter((file, tuple(entries)) for file, entries in outcome.unused)
        named = "; ".join(f"{file}" + (f" ({', '.join(entries)})" if entries else "") + (f": {n}" if n > 1 else "")
                          for (file, entries), n in list(by_file.items())[:8]) + ("; ..." if len(by_file) > 8 else "")
        were = "was" if outcome.unused_records == 1 else "were"
        out(f"note: {counted(outcome.unused_records, 'recorded resolution')} {were} not needed by this fold (conflicts "
            f"it did not meet as recorded: a PR moved, or left the union; the store keeps every resolution): {named}\n")
    for file in outcome.edited_alone:
        out(f"warning: {file}: your recorded edit outside the conflict hunks went into the union, but a resolution "
            f"you recorded in {file} with a PR that left the union was not needed by this fold: if the edit relied "
            f"on it, the union is broken there; review it: git show {outcome.commit}:{file}\n")
    if outcome.manifest_updated:
        what = f"the patch {outcome.patch}" if outcome.patch else "the new commit"
        out(f"manifest updated in place: {what} and each PR's folded head\n")
    if quiet:
        return
    if outcome.unchanged and outcome.patch:     # (a commit union: its commit may be unpushed still)
        out(f"nothing changed: {outcome.patch}, the manifest and resolutions/ are as they "
            f"were, nothing to commit; see the union composed with the other entries: carrytool sync --dry-run{args}\n")
        return
    if outcome.patch:
        out(f"next: commit the manifest folder (the manifest, {outcome.patch} and resolutions/), and see the "
            f"union composed with the other entries, in the manifest's order (the fold merged it onto upstream "
            f"alone): carrytool sync --dry-run{args}\n")
        return
    shown = redact(fork_url) if fork_url else "<fork.url>"
    where = shlex.quote(shown) if fork_url and shown == fork_url else shown
    hidden = " (credentials hidden: use your own)" if fork_url and shown != fork_url else ""
    out(f"next: push it where sync can fetch it: git push {where} {outcome.commit}:refs/heads/carry/{name}{hidden}\n")
    out(f"then see it composed with the other entries, in the manifest's order (the fold merged it onto "
        f"upstream alone): carrytool sync --dry-run{args}\n")


def _reused(outcome: Outcome, *, named: bool = False) -> str:
    """`; 2 conflicted files resolved from the store`, and apart the files that had no conflict, into which a
    recorded edit went (helper-159: such a file was counted as a conflict resolved). NAMED: the conflicted
    files named too (a stop's line)."""
    conflicts = [path for path in outcome.reused if path in outcome.resolved]
    edits = [path for path in outcome.reused if path not in outcome.resolved]
    said = f"; {counted(len(conflicts), 'conflicted file')} resolved from the store" if conflicts else ""
    said += f" ({', '.join(conflicts)})" if conflicts and named else ""
    if edits:
        said += (f"; your recorded {'edit' if len(edits) == 1 else 'edits'} applied in {counted(len(edits), 'file')} "
                 f"with no conflict ({', '.join(edits)})")
    return said


def _who(conflict: dict[str, Any]) -> str:
    """The PRs of a conflict, and upstream when the last of them conflicts with upstream alone there."""
    entries = ", ".join(conflict["entries"])
    if conflict.get("upstream"):
        return f"{entries} with upstream {conflict['upstream']}" + (" alone" if len(conflict["entries"]) == 1 else "")
    return entries


def _kind(conflict: dict[str, Any]) -> str:
    # `removes_upstream`: lines of upstream's a recorded edit removes, numbered as the scratch file shows them
    removed = conflict.get("removes_upstream") or []
    removes = f"{'line' if len(removed) == 1 else 'lines'} {spans(removed)}"
    if conflict["kind"] == "content":
        # `not_replayed`: hunks whose recorded resolution would drop or put back upstream's lines (upstream_hunks)
        held = conflict.get("not_replayed") or 0
        # `not_placed`: hunks of a key resolved differently at its places, met where the record names no place
        unplaced = conflict.get("not_placed") or 0
        new = (conflict.get("hunks") or 0) - held - unplaced
        said = [f"{counted(new)} without a recorded resolution"] if new > 0 else []
        said += [f"{counted(held)} whose recorded resolution is not replayed: upstream's lines there changed"] \
            if held else []
        said += [f"{counted(unplaced)} whose recorded resolutions differ by place, not met at the places recorded"] \
            if unplaced else []
        said += [f"your recorded edit would remove upstream's {removes} of the file as shown: kept"] \
            if removed else []
        return f"  ({'; '.join(said)})" if said else ""
    if conflict["kind"] == "fixup" and conflict.get("deletes_file"):
        return "  (your recorded edit deletes upstream's file: it is shown as the fold made it)"
    if conflict["kind"] == "fixup" and removed:
        return (f"  (your recorded edit removes upstream's {removes} of the file as shown: both versions "
                "are shown)")
    if conflict["kind"] == "fixup":
        return "  (your recorded edit outside the hunks no longer applies: both versions are shown)"
    return "  (not a content conflict: keep, edit or delete the file)"


def render_status(report: dict[str, Any], stream: TextIO, *, invocation: str = "") -> None:
    out = stream.write
    name = report["entry"].removeprefix("carry/")
    if report["commit"]:
        at = f"at {report['commit'][:12]}"
    elif report.get("patch"):
        at = f"from {report['patch']}"          # a patch union has no commit: its fold is the patch file
    else:
        at = "at a commit this repository does not have"
    refold = report["refold"]
    fold = report.get("fold") or ({} if report.get("under_way") else None)
    clean = not (report["stale"] or report["drift"] or report["merged_upstream"] or refold["needs_resolution"]
                 or refold["changes"] or report.get("not_composed") or report.get("patch_edited") or fold is not None)
    # the verdict on the union's own line: after its details it read as the next union's
    out(f"{report['entry']} {at} on upstream {report['upstream'][:12]}{': up to date' if clean else ''}\n")
    if fold is not None:
        _under_way(fold, out, name, invocation)
    if report.get("patch_edited"):
        out(f"  {report['patch_edited']}: a refold would replace it (union compose refuses until it is restored "
            "or deleted)\n")
    for stale in report["stale"]:
        out(f"  stale: pr/{stale['pr']} folded at {stale['folded'][:12]}, now {stale['current'][:12]}\n")
    for pr in report["unfolded"]:
        out(f"  no folded head recorded for pr/{pr}\n")
    # while a fold is under way, `union compose` refuses (exit 4): the commands above go on, not a refold
    refold_command = f"refold: carrytool union compose {shlex.quote(name)}{invocation}" if fold is None else \
        "refold: finish or abort the fold under way first"
    for pr in report.get("not_composed", []):
        out(f"  pr/{pr} is in supersedes, but the union was not composed with it (its Carry-Supersedes does not "
            f"name it): {refold_command}\n")
    for drift in report["drift"]:
        out(f"  drift: upstream {drift['commit'][:12]} {drift['subject']} changes an owned file\n")
    for pr in report["merged_upstream"]:
        out(f"  pr/{pr} is merged upstream: drop it from the union\n")
    if refold["reused"]:
        out(f"  a refold would reuse recorded resolutions for: {', '.join(refold['reused'])}\n")
    if refold["needs_resolution"]:
        out("  a refold would stop and ask about:\n")
        for conflict in refold["needs_resolution"]:
            out(f"    {conflict['file']}  {_who(conflict)}{_kind(conflict)}\n")
        out(f"  {refold_command}\n")
    elif refold["changes"] is not None:
        changed = ", ".join(refold["changes"]) or "nothing"
        out(f"  a refold would ask nothing and change: {changed}\n")
    else:
        out("  a refold would ask nothing\n")


_NOW = {"unresolved": "conflict markers remain", "resolved": "resolved (no conflict markers left)",
        "gone": "gone from the scratch tree", "link": "a symbolic link in the scratch tree now",
        "directory": "a directory in the scratch tree now"}
_REFUSED = ("gone", "link", "directory")     # what `union continue` refuses unless the file is taken by name


def _under_way(fold: dict[str, Any], out, name: str, invocation: str) -> None:  # noqa: ANN001 - a stream's write
    """A fold under way (status's `fold`): where it stopped and the commands that go on with it or drop it."""
    go_on = fold.get("continue") or f"carrytool union continue {shlex.quote(name)}{invocation}"
    drop = fold.get("abort") or f"carrytool union abort {shlex.quote(name)}{invocation}"
    if fold.get("corrupt"):
        out(f"  a fold is under way, but its state is unusable ({fold['corrupt']}): {drop} drops it (recorded "
            "resolutions stay)\n")
        return
    if fold.get("stopped"):
        files = ", ".join(f["file"] for f in fold["files"])
        out(f"  a fold is under way, stopped at {fold['at']} on a conflict: {files}\n")
        for item in fold["files"]:
            if item.get("now") and (item["now"] != "unresolved" or len(fold["files"]) > 1):
                out(f"    {item['file']}: {_NOW[item['now']]}")
                out(": continue refuses it (both sides' changes to it would be dropped); restore it, or drop it from "
                    f"the union on purpose:  {go_on} --take {shlex.quote(item['file'])}\n"
                    if item["now"] in _REFUSED else "\n")
        out(f"  resolve it in the scratch tree ({fold['scratch']}), then:  {go_on}\n")
    else:
        out("  a fold is under way (interrupted between its steps: nothing to resolve)\n")
        out(f"  go on with it:  {go_on}\n")
    out(f"  or drop it:  {drop}\n")


def _structured(outcome: Outcome, out) -> None:  # noqa: ANN001 - a stream's write
    """The hunks the structured rule resolved (policy structured_merge): re-derived each fold, never recorded."""
    for hunk in outcome.structured:
        out(f"resolved structurally (not recorded): {hunk['file']} lines {hunk['lines'][0]}-{hunk['lines'][1]} "
            f"({hunk['kind']}, {hunk['entry']})\n")
