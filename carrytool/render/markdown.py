"""explain as GitHub Markdown: a plan table, a Mermaid graph of overlaps and supersessions, and details
in `<details>` blocks. Ready for a PR comment or `$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

import re
from typing import Any

from carrytool.render.commands import Invocation, suggestion_command
from carrytool.render.explain_text import (
    FILES_SHOWN,
    header_line,
    hunk_line,
    left_out_said,
    likely_merged,
    outcome_line,
)
from carrytool.render.safe import md_code, md_fence, md_prose, md_text
from carrytool.render.text import detail_lines, entry_rows
from carrytool.review.explanation import Explanation
from carrytool.review.overlap import Overlap
from carrytool.review.story import files_said

_STATUS_MARK = {"applied": "✅", "skipped": "⏭️", "conflict": "❌"}
_EDGE = {"conflict": "===", "identical-hunk": "---", "same-scope": "---", "same-file": "---"}
MAX_EDGES = 150      # past this, same-file edges leave the graph (they stay in the table)


def render_markdown(ex: Explanation, *, invocation: Invocation | None = None) -> str:
    """The whole explanation as one Markdown document (untrusted names and titles escaped)."""
    parts = [f"## carrytool explain: {md_code(ex.manifest.fork.branch)}", "", md_text(header_line(ex)) + ".", "",
             outcome_line(ex) + ".", "", "### Plan", "", plan_table(ex), "", "### Overlaps", "",
             mermaid(ex), "", overlap_table(ex)]
    for title, body in _detail_sections(ex, invocation):
        parts += ["", f"<details><summary>{title}</summary>", "", body, "", "</details>"]
    return "\n".join(parts).rstrip() + "\n"


def cell(text: str) -> str:
    """Text safe inside a table cell (or a list item): on one line, literal but for its `code spans`
    (md_prose: h262, `\\`on_conflict: skip\\`` showed its backslashes' backticks)."""
    return md_prose(text)


def plan_table(ex: Explanation) -> str:
    rows = ["| entry | status | why | files |", "|---|---|---|---|"]
    for step, (ident, status, why, files) in zip(ex.steps, entry_rows(ex.planned.report)):
        title = f" {step.entry.title}" if step.entry.title else ""
        mark = _STATUS_MARK.get(step.status, "")
        rows.append(f"| {md_code(ident)}{cell(title)} | {mark} {cell(status)} | {cell(why)} | {cell(files)} |")
    return "\n".join(rows)


def overlap_table(ex: Explanation) -> str:
    """The overlaps stronger than same-file, and those not merged (whether they conflict is not known:
    helper-81, a same-file pair not merged read as harmless); the other same-file ones follow in a
    collapsed block."""
    overlaps = ex.overlap_map.overlaps
    # the pairs of an entry upstream already has are not in the map (explain._leave_out_merged): said so
    left_out = ["", _upper_first(left_out_said(ex.overlaps_left_out, md_code)) + "."] if ex.overlaps_left_out else []
    if not overlaps:
        return "\n".join(["No two entries change the same file.", *left_out])
    strong = [o for o in overlaps if o.kind != "same-file" or not o.merged]
    plain = [o for o in overlaps if o.kind == "same-file" and o.merged]
    parts = [_overlap_rows(strong)] if strong else ["No conflicts, identical hunks or shared scopes."]
    if plain:
        parts += ["", f"<details><summary>Same-file overlaps ({len(plain)})</summary>", "", _overlap_rows(plain),
                  "", "</details>"]
    return "\n".join(parts + left_out)


def _overlap_rows(overlaps: list[Overlap]) -> str:
    rows = ["| entries | kind | also | files | scopes |", "|---|---|---|---|---|"]
    for o in overlaps:
        kind = f"**{o.kind}**" if o.kind == "conflict" else o.kind
        kind += " (resolved structurally)" if o.structurally else ""
        kind += " (not merged: both conflict with upstream alone)" if not o.merged else ""
        if o.applied_stacked:        # as the text says them (helper-144: the markdown never did)
            kind += " (stacked: sync applies the later onto the earlier's head)"
        elif o.stacked:
            kind += " (stacked: the later is built on the earlier's head)"
        elif o.shared_commits:
            kind += f" (both built on one branch: {o.shared_commits} commit{'s' if o.shared_commits != 1 else ''} " \
                    "beyond upstream in common)"
        files = files_said(o.files, o.conflict_files, md_code, most=FILES_SHOWN)
        scopes = ", ".join(md_code(s) for s in o.scopes[:FILES_SHOWN]) + \
            (f", ... (+{len(o.scopes) - FILES_SHOWN} more)" if len(o.scopes) > FILES_SHOWN else "")
        pair = f"{md_code(o.entries[0])} × {md_code(o.entries[1])}"
        rows.append(f"| {pair} | {kind} | {', '.join(o.kinds[1:])} | {files} | {scopes} |")
    return "\n".join(rows)


def node_id(entry_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", entry_id)


def mermaid(ex: Explanation) -> str:
    """`graph LR`: overlap edges labelled by kind (conflicts thick and red), supersessions dotted."""
    overlaps = ex.overlap_map.overlaps
    edges = overlaps if len(overlaps) <= MAX_EDGES else [o for o in overlaps if o.kind != "same-file" or not o.merged]
    lines = ["```mermaid", "graph LR"]
    for step in ex.steps:
        lines.append(f'  {node_id(step.id)}["{step.id}"]')
    links: list[str] = []
    red: list[int] = []
    for o in edges:
        if o.kind == "conflict":
            red.append(len(links))
        label = o.kind + ("; not merged" if not o.merged else "")
        links.append(f"  {node_id(o.entries[0])} {_EDGE[o.kind]}|{label}| {node_id(o.entries[1])}")
    ids = {s.id for s in ex.steps}
    for entry in ex.manifest.entries:
        for sup in entry.supersedes:
            if f"pr/{sup.pr}" in ids:
                label = "supersedes paths" if sup.paths else "supersedes"
                links.append(f"  {node_id(entry.id)} -.->|{label}| {node_id(f'pr/{sup.pr}')}")
    lines += links
    if red:
        lines.append(f"  linkStyle {','.join(map(str, red))} stroke:#d73a49,stroke-width:3px")
    lines += ["  classDef applied fill:#e6ffed,stroke:#28a745",
              "  classDef skipped fill:#f6f8fa,stroke:#959da5,color:#586069",
              "  classDef conflict fill:#ffeef0,stroke:#d73a49"]
    for status in ("applied", "skipped", "conflict"):
        members = [node_id(s.id) for s in ex.steps if s.status == status]
        if members:
            lines.append(f"  class {','.join(members)} {status}")
    lines.append("```")
    if len(edges) < len(overlaps):
        lines.append(f"\n_{len(overlaps) - len(edges)} same-file edges are left out of the graph; "
                     "the table lists them._")
    return "\n".join(lines)


def _detail_sections(ex: Explanation, invocation: Invocation | None) -> list[tuple[str, str]]:
    sections = []
    if ex.suggestions:
        sections.append((f"Suggestions ({len(ex.suggestions)})", _suggestions(ex.suggestions, invocation)))
    if ex.coverage:
        sections.append(("Union coverage", _coverage(ex)))
    details = detail_lines(ex.planned.report, invocation=invocation, unions=ex.union_suggestions,
                           merged=likely_merged(ex))
    if details or not ex.asserts_known:
        if not ex.asserts_known:
            details.append("asserts: not evaluated (the assertion engine is not installed)")
        sections.append(("Warnings and checks", "\n".join(f"- {cell(line)}" for line in details)))
    if ex.upstream_has and not ex.stories:     # a story says it in its own words
        sections.append(("What upstream already has", "\n".join(
            f"- {md_code(entry)} conflicts with upstream alone, and {cell(has.said())}"
            for entry, has in ex.upstream_has.items())))
    for story in ex.stories:
        sections.append((f"Story of <code>{story['id']}</code>", _story(story)))
    return sections


def _suggestions(items: list[dict[str, Any]], invocation: Invocation | None) -> str:
    out = []
    for item in items:
        out.append(f"- **{cell(item['kind'])}**: {cell(item['message'])}")
        extra = item.get("range_diff") or [f"{c['sha'][:12]} {c['subject']}" for c in item.get("commits", [])]
        if extra:
            out += ["", *(f"  {row}" for row in md_fence(list(extra)))]
        command = suggestion_command(item, invocation or Invocation())
        if command:
            out += ["", *(f"  {row}" for row in md_fence([command], "sh"))]
    return "\n".join(out)


def _coverage(ex: Explanation) -> str:
    rows = ["| union | PR | paths | verbatim | re-expressed | reconciled | absent | dropped |",
            "|---|---|---|---|---|---|---|---|"]
    notes = []
    for cov in ex.coverage:
        paths = ", ".join(md_code(p) for p in cov.paths) or "all"
        rows.append(f"| {md_code(cov.union)} | {md_code(cov.pr)} | {paths} | {cov.count('verbatim')} | "
                    f"{cov.count('re-expressed')} | {cov.count('reconciled')} | {cov.count('absent')} | "
                    f"{cov.count('dropped')} |")
        notes += [f"- {md_code(cov.pr)} {cell(hunk_line(h))}" for h in cov.hunks if h.status != "verbatim"]
    return "\n".join(rows + ([""] + notes if notes else []))


def _story(story: dict[str, Any]) -> str:
    out = [f"- {cell(line)}" for line in story["summary"]]
    if story["commands"]:
        out += ["", "Reproduce (in the repository explain ran in):", ""]
        out += md_fence([line for item in story["commands"] for line in (f"# {item['purpose']}", item["command"])],
                        "sh")
    return "\n".join(out)


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]
