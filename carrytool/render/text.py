"""Terminal output: rich on a terminal, plain and stable text in pipes (NO_COLOR honoured)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from carrytool.pipeline.report import Report, entry_json
from carrytool.render.commands import Invocation
from carrytool.render.next_steps import next_steps
from carrytool.render.outcome import outcome_line
from carrytool.render.report_lines import dropped_on_purpose_lines, failure_lines, warning_lines
from carrytool.render.safe import PrintableStream, printable

_STATUS_STYLE = {"applied": "green", "skipped": "yellow", "conflict": "red"}


def use_rich(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def console(stream: TextIO):  # noqa: ANN201 - rich.console.Console, imported lazily
    from rich.console import Console

    return Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=False, width=None if stream.isatty() else 120)


def print_trimmed(con: Any, renderable: Any) -> None:
    """Print RENDERABLE (a rich table) on CON without the blanks that end its lines: a table pads each cell to
    its column's width, so its lines ran on in spaces to the terminal's edge (h262: 170 columns of a CI log)."""
    from rich.segment import Segment, Segments

    out: list[Segment] = []
    for line in con.render_lines(renderable, pad=False):
        while line and not line[-1].control and not line[-1].text.rstrip():
            line.pop()
        if line and not line[-1].control:
            line[-1] = Segment(line[-1].text.rstrip(), line[-1].style)
        out += [*line, Segment.line()]
    con.print(Segments(out))          # (a renderable, not text: print adds no newline of its own)


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
                  invocation: Invocation | None = None, show_error: bool = True,
                  merged: Mapping[str, str] | None = None) -> None:
    """Print a sync/verify report: entries table, checks, warnings, the outcome line.

    `show_error` False leaves the run's error out (the caller prints it on stderr).
    """
    details = detail_lines(report, verbose=verbose, invocation=invocation, show_error=show_error, merged=merged)
    if use_rich(stream):
        _render_rich(report, stream, verbose, details)
    else:
        _render_plain(report, PrintableStream(stream), verbose, details)


# warnings that say a change is missing from the image or stale, shown under --quiet too: never hidden
LOSS_WARNINGS = ("provided-absent", "upstream-loss", "stale-fold", "replaced-commits", "shadowed-definition",
                 "duplicate-key", "unbound-name", "merged-upstream-reverted", "stale-stack", "stale-drop",
                 "upstream-rewound", "stale-pin")


def render_quiet(report: Report, stream: TextIO = sys.stdout, *, invocation: Invocation | None = None,
                 merged: Mapping[str, str] | None = None) -> None:
    """Print why a run failed (conflicts, violations, lost hunks, failed asserts), the warnings that a change
    is missing or stale (LOSS_WARNINGS) and the outcome line."""
    run = invocation or Invocation()
    losses = [f"warning: {run.rewrite(str(w.get('message') or w))}" for w in report.warnings
              if w.get("kind") in LOSS_WARNINGS]
    for line in failure_lines(report) + losses + next_steps(report, invocation, merged=merged):
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
        print_trimmed(con, table)
    for line in details:
        con.print(printable(line), markup=False)
    style = "green" if report.ok else "red"
    con.print(f"[{style}]{outcome_line(report)}[/]")


def detail_lines(report: Report, *, verbose: bool = False, invocation: Invocation | None = None,
                 show_error: bool = True, unions: Sequence[Sequence[str]] = (),
                 merged: Mapping[str, str] | None = None) -> list[str]:
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
    return lines + next_steps(report, invocation, unions, merged)


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
