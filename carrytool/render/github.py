"""GitHub Actions output: `::error` annotations and a Markdown step summary."""

from __future__ import annotations

import os
from typing import TextIO

from carrytool.pipeline.report import Report
from carrytool.render.safe import md_code, md_text, printable


def _escape(text: str, *, prop: bool = False) -> str:
    text = printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def annotations(report: Report) -> list[str]:
    """One `::error file=F,line=L,title=T::message` line per failed assert."""
    lines = []
    for outcome in report.asserts:
        if outcome.ok:
            continue
        props = [f"file={_escape(outcome.file, prop=True)}"]
        if outcome.line:
            props.append(f"line={outcome.line}")
        props.append(f"title={_escape('carrytool: ' + outcome.name, prop=True)}")
        message = outcome.message + (f" (guards {outcome.entry})" if outcome.entry else "") + \
            (f" (why: {outcome.why})" if outcome.why else "")
        lines.append(f"::error {','.join(props)}::{_escape(message)}")
    return lines


def summary_markdown(report: Report) -> str:
    held = sum(1 for a in report.asserts if a.ok)
    lines = [f"### carrytool verify: {held}/{len(report.asserts)} asserts hold", "",
             "| assert | file | result |", "|---|---|---|"]
    for outcome in report.asserts:
        mark = "✅" if outcome.ok else "❌"
        where = outcome.file + (f":{outcome.line}" if outcome.line else "")
        lines.append(f"| {md_text(outcome.name)} | {md_code(where)} | {mark} {md_text(outcome.message)} |")
    return "\n".join(lines) + "\n"


def emit_github(report: Report, stream: TextIO) -> None:
    """Print annotations; append the summary to $GITHUB_STEP_SUMMARY when it is set."""
    for line in annotations(report):
        stream.write(line + "\n")
    if report.error:
        stream.write(f"::error title=carrytool::{_escape(report.error['message'])}\n")
    held = sum(1 for a in report.asserts if a.ok)
    stream.write(f"carrytool verify: {held}/{len(report.asserts)} asserts hold\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(report))
