"""explain on a terminal (rich tables) or in a pipe (plain, stable lines); NO_COLOR honoured."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TextIO

from carrytool.render.commands import Invocation, suggestion_command
from carrytool.render.safe import PrintableStream, printable
from carrytool.render.text import (
    _STATUS_STYLE,
    console,
    detail_lines,
    entry_rows,
    print_trimmed,
    use_rich,
)
from carrytool.review.explanation import Explanation
from carrytool.review.story import files_said, shorten

FILES_SHOWN = 8      # per overlap line, besides the files it conflicts in (the JSON lists every one)
_KIND_STYLE = {"conflict": "bold red", "identical-hunk": "magenta", "same-scope": "yellow", "same-file": "dim"}


def render_explain(ex: Explanation, stream: TextIO, *, verbose: bool = False,
                   invocation: Invocation | None = None) -> None:
    """Print the plan, the overlap map, suggestions, coverage and details; or only the stories asked for."""
    if ex.stories:
        safe = PrintableStream(stream)
        for number, story in enumerate(ex.stories):
            lines = ([""] if number else []) + [f"story of {story['id']}"] + story_lines(story)
            safe.write("\n".join(lines) + "\n")
        return
    if use_rich(stream):
        _render_rich(ex, stream, verbose, invocation)
        return
    out = PrintableStream(stream).write
    out(header_line(ex) + "\n")
    out("\nplan\n")
    rows = entry_rows(ex.planned.report)
    for line in _columns([(r[0], r[1], r[2]) + ((f"[{r[3]}]",) if verbose and r[3] else ()) for r in rows]):
        out(f"  {line}\n")
    out("\n" + overlap_title(ex) + "\n")
    for line in _columns([_overlap_cells(o) for o in ex.overlap_map.overlaps]):
        out(f"  {line}\n")
    for line in body_lines(ex, invocation):
        out(line + "\n")
    out(outcome_line(ex) + "\n")


def header_line(ex: Explanation) -> str:
    up = ex.planned.report.upstream or {}
    comp = ex.planned.composition
    tip = comp.result[:12] if comp else "?"
    code = ex.planned.report.exit_code
    # a plan sync would not publish says so here, not only on the last line (helper-100)
    kept = f", which sync would not publish (it would exit {code})" if code else ""
    return (f"upstream {up.get('branch')} at {str(up.get('sha'))[:12]}; the plan composes "
            f"{ex.manifest.fork.branch} = {tip}{kept} (explain writes no branch and no lock)")


def overlap_title(ex: Explanation) -> str:
    overlaps = ex.overlap_map.overlaps
    conflicts = sum(1 for o in overlaps if o.kind == "conflict")
    undecided = sum(1 for o in overlaps if not o.merged)
    return f"overlaps ({len(overlaps)} pairs share a file; {conflicts} conflict" + \
        (f"; {undecided} not merged: both conflict with upstream alone" if undecided else "") + \
        (f"; {left_out_said(ex.overlaps_left_out)})" if ex.overlaps_left_out else ")")


def left_out_said(ids: Sequence[str], code: Callable[[str], str] = str) -> str:
    """`left out: the pairs of pr/1, which upstream already has (merged-upstream)`."""
    which = "which upstream already has" if len(ids) == 1 else "which upstream already has each"
    return f"left out: the pairs of {', '.join(code(i) for i in ids)}, {which} (merged-upstream)"


def _overlap_cells(overlap: Any) -> tuple[str, ...]:
    also = [k for k in overlap.kinds[1:] if k != "same-file"]
    scopes = f" [{shorten(overlap.scopes)}]" if overlap.scopes else ""
    provided = " (the union provides it)" if getattr(overlap, "provided_by", None) else ""
    provided += " (resolved structurally)" if getattr(overlap, "structurally", False) else ""
    if getattr(overlap, "applied_stacked", False):
        provided += " (stacked: sync applies the later onto the earlier's head)"
    elif getattr(overlap, "stacked", False):
        provided += " (stacked: the later is built on the earlier's head)"
    elif getattr(overlap, "held", False):
        provided += " (the earlier is built on the later's head: it carries the later's change already)"
    elif getattr(overlap, "shared_commits", 0):
        shared = overlap.shared_commits
        provided += f" (both built on one branch: {shared} commit{'s' if shared != 1 else ''} beyond upstream in common)"
    # the pair was not merged: whether it conflicts is not known (helper-80: read as harmless)
    provided += " (not merged: both conflict with upstream alone)" if not getattr(overlap, "merged", True) else ""
    return (overlap.kind + (f" (+{', '.join(also)})" if also else ""), " x ".join(overlap.entries) + provided,
            files_said(overlap.files, overlap.conflict_files, most=FILES_SHOWN) + scopes)


def body_lines(ex: Explanation, invocation: Invocation | None = None) -> list[str]:
    """Everything after the two tables: suggestions, coverage, details, stories (plain lines)."""
    lines: list[str] = []
    if ex.overlap_map.upstream_conflicts:
        lines.append("")
        for entry, paths in ex.overlap_map.upstream_conflicts.items():
            has = ex.upstream_has.get(entry)
            more = f", and {has.said()} (`carrytool explain {entry}` says what next)" if has else ""
            lines.append(f"  {entry} conflicts with upstream alone in {', '.join(paths)}{more}")
    if ex.suggestions:
        lines += ["", "suggestions"]
        for item in ex.suggestions:
            lines.append(f"  {item['kind']}: {item['message']}")
            command = suggestion_command(item, invocation or Invocation())
            lines += [f"      run: {command}"] if command else []
            lines += [f"      {row}" for row in item.get("range_diff", [])]
            lines += [f"      {c['sha'][:12]} {c['subject']}" for c in item.get("commits", [])]
    if ex.coverage:
        lines += ["", "union coverage"]
        for cov in ex.coverage:
            lines.append(f"  {cov.union} carries {cov.pr}" + (f" ({', '.join(cov.paths)})" if cov.paths else "")
                         + f": {cov.counts_said()}")
            for hunk in cov.hunks:
                if hunk.status != "verbatim":
                    lines.append(f"      {hunk_line(hunk)}")
    details = detail_lines(ex.planned.report, invocation=invocation, unions=ex.union_suggestions,
                           merged=likely_merged(ex))
    if details:
        lines += ["", "details"] + [f"  {line}" for line in details]
    if not ex.asserts_known:
        lines.append("  asserts: not evaluated (the assertion engine is not installed)")
    return lines


def likely_merged(ex: Explanation) -> dict[str, str]:
    """What upstream has of each entry that conflicts with it alone and that it likely merged as another commit,
    in words (UpstreamHas.said), for the `next:` that drops it (h262)."""
    return {entry: has.said() for entry, has in ex.upstream_has.items() if has.likely_merged}


def hunk_line(hunk: Any) -> str:
    scopes = f" ({', '.join(hunk.scopes)})" if hunk.scopes else ""
    guard = ""
    if hunk.status == "re-expressed":
        guard = f"; guarded by {', '.join(hunk.asserts)}" if hunk.asserts else "; NOT guarded by any assert"
    why = f": {hunk.why}" if getattr(hunk, "why", None) else ""
    return f"{hunk.status}: {hunk.where()}{scopes}{guard}{why}"


def story_lines(story: dict[str, Any]) -> list[str]:
    # each on one line (an assert's name or check with a text's newline: h185), as verify quotes the text
    lines = [f"  {printable(line, newlines=False)}" for line in story["summary"]]
    if story["commands"]:
        lines.append("  reproduce (in the repository explain ran in):")
        for item in story["commands"]:
            lines += [f"    # {item['purpose']}", f"    {item['command']}"]
    return lines


def outcome_line(ex: Explanation) -> str:
    steps = ex.steps
    counts = {s: sum(1 for x in steps if x.status == s) for s in ("applied", "skipped", "conflict")}
    return (f"explained {len(steps)} entries: {counts['applied']} applied, {counts['skipped']} skipped, "
            f"{counts['conflict']} conflict; sync would exit {ex.planned.report.exit_code}")


COLUMN_WIDTH = 40    # a plain column is as wide as its widest cell up to this; a wider cell runs on in its row


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """ROWS in aligned columns, two blanks apart. A cell wider than COLUMN_WIDTH widens no column: it pushes
    the rest of its own row (h262: one pair's note padded every row of polars' overlaps to 170 columns)."""
    if not rows:
        return []
    widths = [max((len(r[i]) for r in rows if i < len(r) and len(r[i]) <= COLUMN_WIDTH), default=0)
              for i in range(max(len(r) for r in rows))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def _render_rich(ex: Explanation, stream: TextIO, verbose: bool, invocation: Invocation | None) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    def safe(text: str) -> str:
        return escape(printable(text))

    con = console(stream)
    print_trimmed(con, Text(printable(header_line(ex))))
    plan = Table(title="plan", title_justify="left", show_edge=False, box=None, header_style="bold")
    for col in ("entry", "status", "why") + (("files",) if verbose else ()):
        plan.add_column(col, overflow="fold")
    for step, (ident, status, why, files) in zip(ex.steps, entry_rows(ex.planned.report)):
        style = _STATUS_STYLE.get(step.status, "")
        plan.add_row(safe(ident), f"[{style}]{safe(status)}[/]", safe(why), *([safe(files)] if verbose else []))
    print_trimmed(con, plan)
    table = Table(title=overlap_title(ex), title_justify="left", show_edge=False, box=None, header_style="bold")
    for col in ("kind", "entries", "files [scopes]"):
        table.add_column(col, overflow="fold")
    for overlap in ex.overlap_map.overlaps:
        cells = _overlap_cells(overlap)
        table.add_row(f"[{_KIND_STYLE[overlap.kind]}]{safe(cells[0])}[/]", *map(safe, cells[1:]))
    print_trimmed(con, table)
    for line in body_lines(ex, invocation):
        print_trimmed(con, Text(printable(line)))       # wrapped at words: the blank it breaks at dropped
    con.print(f"[bold]{outcome_line(ex)}[/]")
