"""`carrytool diff` as text and as Markdown (for `$GITHUB_STEP_SUMMARY`); untrusted names escaped."""

from __future__ import annotations

from typing import Any

from carrytool.render.safe import md_code, md_text, printable
from carrytool.review.diff import LockDiff

_RANGE_WORD = {"=": "same", "!": "changed", "<": "dropped", ">": "new"}


def summary_line(diff: LockDiff) -> str:
    """`upstream a1b2c3d4 -> e5f6a7b8 (+12 commits); 1 added, 2 moved, 3 unchanged`."""
    up = diff.upstream
    moved = f"+{up['commits']} commits" + (f", {up['dropped']} rewritten away" if up.get("dropped") else "")
    counts = ", ".join(f"{n} {change}" for change, n in sorted(diff.counts().items()))
    order = "; order changed" if diff.order() else ""
    return f"upstream {up['from'][:12]} -> {up['to'][:12]} ({moved}); {counts or 'no entries'}{order}"


def _changes(diff: LockDiff) -> list[str]:
    """The lines after the entries: the new order, the composed branch when it changed, asserts (or why they
    were not compared), resolutions."""
    lines = []
    order = diff.order()
    if order:
        lines.append(f"  order changed: {', '.join(order['from'])} -> {', '.join(order['to'])}")
    result = diff.result()
    if result["from"] != result["to"]:
        lines.append(f"  composed: {_short(result['from'])} -> {_short(result['to'])}")
    if diff.asserts.get("known") is False:
        lines.append("  asserts not compared: a night's manifest is not known (none beside its lock, or one that "
                     "does not parse)")
    return lines + _lists("asserts", diff.asserts) + _lists("resolutions", diff.resolutions)


def describe_entry(item: dict[str, Any]) -> str:
    """What happened to one entry beyond its change word, in words (no markup)."""
    frm, to = item.get("from") or {}, item.get("to") or {}
    change = item["change"]
    if change == "added":
        return _state(to)
    if change == "removed":
        return f"was {_state(frm)}"
    if change == "moved":
        text = f"head {frm['head'][:12]} -> {to['head'][:12]}"
    elif change == "refolded":
        text = f"commit {str(frm.get('commit', '?'))[:12]} -> {str(to.get('commit', '?'))[:12]}"
        if frm.get("resolution") != to.get("resolution"):
            text += f", resolution {frm.get('resolution') or 'none'} -> {to.get('resolution') or 'none'}"
    else:
        text = ""
    if _state(frm) != _state(to):
        text = (text + "; " if text else "") + f"{_state(frm)} -> {_state(to)}"
    return text or _state(to)


def _state(side: dict[str, Any]) -> str:
    status = side.get("status", "unknown")
    reason = side.get("reason")
    return f"{status} ({reason})" if reason and reason != status else status


def render_diff_text(diff: LockDiff, *, verbose: bool = False) -> str:
    """The diff for a terminal: one summary line, then one line per changed entry (all with VERBOSE)."""
    lines = [f"carrytool diff {diff.old.label} -> {diff.new.label}", summary_line(diff)]
    for item in diff.entries:
        if item["change"] == "unchanged" and not verbose:
            continue
        lines.append(f"  {item['id']}: {item['change']}: {describe_entry(item)}")
        lines += [f"      {pair['change']} {_short(pair['old'])} {_short(pair['new'])} {pair['subject']}"
                  for pair in item["range_diff"]]
        lines += [f"      range-diff unavailable, not in this repository: {missing}"
                  for missing in item.get("range_diff_unavailable", [])]
    lines += _changes(diff)
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "-" * 12


def _lists(what: str, change: dict[str, Any]) -> list[str]:
    out = []
    for verb in ("added", "removed", "changed"):
        names = [n if isinstance(n, str) else f"{n['entry']}: {n['resolution']}" for n in change.get(verb, [])]
        if names:
            out.append(f"  {what} {verb}: {', '.join(names)}")
    return out


def render_diff_markdown(diff: LockDiff) -> str:
    """The diff as GitHub Markdown: a summary, a table of changed entries, range-diffs in `<details>`."""
    parts = [f"## carrytool diff: {md_code(diff.old.label)} → {md_code(diff.new.label)}", "",
             _md_arrows(summary_line(diff)) + ".", ""]
    changed = [item for item in diff.entries if item["change"] != "unchanged"]
    if changed:
        parts += ["| entry | change | detail |", "|---|---|---|"]
        parts += [f"| {md_code(item['id'])} | {item['change']} | {_md_arrows(describe_entry(item))} |"
                  for item in changed]
    else:
        parts.append("No entry changed.")
    for item in changed:
        if item["range_diff"]:
            rows = [f"| {pair['change']} ({_RANGE_WORD[pair['change']]}) | {md_code(_short(pair['old']))} | "
                    f"{md_code(_short(pair['new']))} | {md_text(pair['subject'])} |" for pair in item["range_diff"]]
            parts += ["", f"<details><summary>{md_text(item['id'])}: range-diff</summary>", "",
                      "| | old | new | subject |", "|---|---|---|---|", *rows, "", "</details>"]
        for missing in item.get("range_diff_unavailable", []):
            parts += ["", f"{md_text(item['id'])}: range-diff unavailable, not in this repository: {md_code(missing)}"]
    extra = _changes(diff)
    if extra:
        parts += ["", *[f"- {md_text(line.strip())}" for line in extra]]
    return "\n".join(parts).rstrip() + "\n"


def _md_arrows(text: str) -> str:
    return md_text(text).replace(" -\\> ", " → ")
