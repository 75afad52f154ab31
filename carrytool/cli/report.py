"""A command's report: on stdout (text, -q or JSON), to --report, and the report of a run that failed early."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from carrytool import __version__
from carrytool.cli.options import _invocation, _State
from carrytool.errors import CarryError


def _failed_report(command: str, exc: CarryError, report_file: Optional[Path], fmt: str) -> None:
    """A run that stopped before it had a plan still leaves a report (ok: false, the error) for CI."""
    from carrytool.pipeline.report import Report, write_report

    error = {"exit_code": exc.exit_code, "kind": type(exc).__name__, "message": str(exc)}
    failed = Report(command, error=error)
    if report_file:
        write_report(failed, report_file)
    if fmt == "json" and command in ("sync", "verify", "explain"):      # a report's shape, as --report writes
        sys.stdout.write(failed.dumps())
    elif fmt == "json":           # the other commands' documents have no `asserts`/`warnings` of a report's
        import json

        doc = {"carrytool": __version__, "command": command, "ok": False, "exit_code": exc.exit_code, "error": error}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")


@contextmanager
def _report_failure(command: str, report_file: Optional[Path], fmt: str) -> Iterator[None]:
    """A CarryError before the command has its result still leaves the report (`--report`, `--format json`)."""
    try:
        yield
    except CarryError as exc:
        _failed_report(command, exc, report_file, fmt)
        raise


def _error_line(report) -> None:  # noqa: ANN001
    """An error recorded in a report (after planning began) goes to stderr, once."""
    if report.error:
        from carrytool.gitlayer.urls import redact
        from carrytool.render.safe import printable

        message = redact(str(report.error["message"]))
        print(f"carrytool: error: {printable(_invocation().rewrite(message))}", file=sys.stderr)


def _emit(report, fmt: str, report_file: Optional[Path], merged: Optional[dict] = None) -> None:  # noqa: ANN001
    from carrytool.pipeline.report import write_report

    dumped = report.dumps() if fmt == "json" else None     # once, for the file and stdout alike
    unwritten: CarryError | None = None
    if report_file:
        try:
            write_report(report, report_file, dumped)
        except CarryError as exc:       # the run is over: say what it did, then why the file is missing
            unwritten = exc
    if dumped is not None:
        sys.stdout.write(dumped)
    elif not _State.quiet:       # (the text renderer is imported for text only: not by a nightly json run)
        from carrytool.render.text import render_report

        render_report(report, sys.stdout, verbose=_State.verbose, invocation=_invocation(), show_error=False,
                      merged=merged)
    else:  # quiet hides progress and detail, never the reasons for a failure
        from carrytool.render.text import render_quiet

        render_quiet(report, sys.stdout, invocation=_invocation(), merged=merged)
    _error_line(report)
    if unwritten is not None:
        result = report.result or {}
        if result.get("updated"):
            done = f"the run itself finished: {result.get('branch')} moved to {str(result.get('sha'))[:12]}" + \
                   (" and the lock was written" if report.extra.get("lock_written") else "")
        else:
            done = f"the run itself finished (exit {report.exit_code}) and moved no branch"
        raise type(unwritten)(f"{unwritten.message}; {done}", where=unwritten.where,
                              hint="the output above is the report; run again once the file can be written")
