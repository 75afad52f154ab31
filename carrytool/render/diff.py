"""`carrytool diff` as text and as Markdown (for `$GITHUB_STEP_SUMMARY`); untrusted names escaped."""

from __future__ import annotations

import re
import shlex
from typing import Any

from carrytool.render.safe import md_code, md_prose, md_text, printable
from carrytool.review.diff import LockDiff
from carrytool.review.diff_order import said, said_red

_RANGE_WORD = {"=": "same", "!": "changed", "<": "dropped", ">": "new"}


def summary_line(diff: LockDiff) -> str:
    """`upstream a1b2c3d4 -> e5f6a7b8 (+12 commits); 1 added, 2 moved, 3 unchanged`."""
    up = diff.upstream
    moved = f"+{up['commits']} commits" + (f", {up['dropped']} rewritten away" if up.get("dropped") else "")
    counts = ", ".join(f"{n} {change}" for change, n in sorted(diff.counts().items()))
    order = "; order changed" if diff.order() else ""
    pins = sum(1 for item in diff.entries if item.get("pin"))
    order += f"; {pins} pin{'s' * (pins != 1)} (`head:`) changed" if pins else ""
    return f"upstream {up['from'][:12]} -> {up['to'][:12]} ({moved}); {counts or 'no entries'}{order}"


def _changes(diff: LockDiff, shown: list[dict[str, Any]]) -> list[str]:
    """The lines after the entries: where to read why an entry SHOWN is not applied, the new order, the composed
    branch when it changed, asserts (or why they were not compared), resolutions."""
    locks = _locks(diff)
    lines = [_REPORTS_HINT] if any(_unknown_reason(item, locks) for item in shown) else []
    if diff.red_night:
        lines.append(f"  {said_red(diff.red_night)}")
    order = diff.order()
    if order:
        lines.append(f"  order changed: {', '.join(order['from'])} -> {', '.join(order['to'])}")
    result = diff.result()
    if result["from"] != result["to"]:
        lines.append(f"  composed: {_short(result['from'])} -> {_short(result['to'])}")
    for side, line in (diff.result_unavailable or {}).items():     # a report's, not here (h262)
        if line:
            lines.append(f"  the {'older' if side == 'from' else 'newer'} night's composed commit is not in this "
                         "repository: its resolutions and the paths unions provide are not compared; " + line)
    runs = diff.outcome()
    if runs["from"] != runs["to"]:
        lines.append(f"  run: {_run_said(runs['from'])} -> {_run_said(runs['to'])}")
    for item in diff.asserts.get("failing", []):
        then = _THEN.get(item.get("before", ""), "")
        lines.append(f"  assert failing now: {item['name']}{then}" + (f": {item['message']}" if item["message"] else ""))
    if diff.asserts.get("holding_again"):
        lines.append(f"  asserts holding again: {', '.join(diff.asserts['holding_again'])}")
    if diff.asserts.get("known") is False:
        # `-m` is the newer night's manifest (helper-141 passed it with two reports and read it as ignored); a lock's
        # is the file beside it (helper-143: the demo's line spoke of reports to a reader of two locks)
        unknown = diff.old if diff.old.manifest is None else diff.new
        if unknown.recorded is not None:
            lines.append("  " + _record_said(unknown, diff.new if unknown is diff.old else diff.old,
                                             unknown is diff.old))
            return lines + _lists("asserts", diff.asserts) + _lists("resolutions", diff.resolutions)
        which = "older" if unknown is diff.old else "newer"
        if unknown.run is not None:
            said = f"the {which} night's manifest is not known (a report names none, and `-m` is the newer night's)"
        elif _RECORD.search(unknown.label):     # h257: a record `diff`'s hint names, the manifest outside a work tree
            said = f"the {which} night is sync's record {unknown.label}, which holds the lock alone and no manifest"
        elif unknown.label.endswith(".lock"):   # h256: "a lock's is the manifest beside it (...)" named no file
            said = (f"the {which} night's manifest, {unknown.label[:-len('.lock')]} (its lock's name without `.lock`), "
                    "is missing or not a valid manifest")
        else:
            said = (f"the {which} night's manifest is not known: it is read beside its lock, named as the lock without "
                    f"`.lock`, and {unknown.label} does not end in `.lock`")
        lines.append(f"  asserts not compared: {said}")
    return lines + _lists("asserts", diff.asserts) + _lists("resolutions", diff.resolutions)


_RECORD = re.compile(r":[0-9a-f]{40}\.lock\Z")      # REV:<composed sha>.lock, as nights.load_night reads a record


def _record_said(night: Any, other: Any, older: bool) -> str:
    """A night record has no manifest beside it (h248: "a lock's is the manifest beside it (...), and there is
    none that parses"): say so, and the lock to name instead, committed with that night's manifest."""
    path, commit = night.recorded
    said = (f"asserts not compared: the {'older' if older else 'newer'} night is sync's record {night.label}, which "
            "holds the lock alone and no manifest")
    if commit is None:
        return (f"{said}; no commit of this repository's history has that night's lock at {path}, so its manifest "
                "is not known here")
    pair = (f"{commit[:12]}:{path}", other.label) if older else (other.label, f"{commit[:12]}:{path}")
    return (f"{said}; to compare asserts, name the lock committed with that night's manifest instead: "
            f"`carrytool diff {shlex.quote(pair[0])} {shlex.quote(pair[1])}`")


_THEN = {"held": " (it held on the old night)", "new": " (new since the old night)",
         "not run": " (not run on the old night: it stopped before its asserts)", "unknown": ""}


def _run_said(run: dict[str, Any]) -> str:
    if run["published"]:
        return "published (a lock)"
    code = run["exit_code"]         # (a report need not say it: the schema does not require it)
    return ("ok" if run["ok"] else "FAILED") + (f" (exit {code}, a report)" if isinstance(code, int) else " (a report)")


# a lock records the chain it composed, not why an entry is not in it (helper-123: a PR gone from applied to
# conflict read "applied -> skipped"); the reports of both nights have the reasons
_LOCK_SAYS = "the lock has no reason"
_REPORTS_HINT = "  not applied: a lock records what was applied, not why the rest was not; for the reasons, diff " \
                "the nights' reports (each night's `sync --report FILE`): carrytool diff OLD.json NEW.json"


def describe_entry(item: dict[str, Any], *, locks: tuple[bool, bool] = (False, False)) -> str:
    """What happened to one entry beyond its change word, in words (no markup). LOCKS: whether the old and
    the new night are locks (an entry a lock's chain lacks is "not applied", for a reason it does not know).
    A pin (`head:`) added, changed or removed is said after it (alone, of an entry otherwise unchanged)."""
    text = _describe_change(item, locks=locks)
    if not item.get("pin"):
        return text
    pin = _pin_said(item["pin"])
    if item["change"] == "unchanged" and text == _state(item.get("to") or {}, locks[1]):
        return pin
    return f"{text}; {pin}"


def _pin_said(pin: dict[str, str | None]) -> str:
    frm, to = pin["from"], pin["to"]
    if frm is None:
        return f"pinned to {str(to)[:12]} (`head:` added)"
    if to is None:
        return f"pin {frm[:12]} removed (`head:`): follows the PR's head"
    return f"pin {frm[:12]} -> {to[:12]} (`head:`)"


def _describe_change(item: dict[str, Any], *, locks: tuple[bool, bool]) -> str:
    frm, to = item.get("from") or {}, item.get("to") or {}
    change = item["change"]
    if change == "added":
        return _state(to, locks[1]) + _unknown_reason(item, locks)
    if change == "removed":
        return f"was {_state(frm, locks[0])}" + _unknown_reason(item, locks)
    if change == "moved":
        text = f"head {frm['head'][:12]} -> {to['head'][:12]}"
    elif change == "refolded" and item.get("settings") and _same_commit(frm, to):
        return _settings_said(item["settings"])
    elif change == "refolded":
        text = f"commit {str(frm.get('commit', '?'))[:12]} -> {str(to.get('commit', '?'))[:12]}"
        if frm.get("resolution") != to.get("resolution"):
            text += f", resolution {frm.get('resolution') or 'none'} -> {to.get('resolution') or 'none'}"
    elif change == "unchanged" and _state(frm, locks[0]) != _state(to, locks[1]):
        # only a reason the older or newer lock cannot know differs: no arrow beside `unchanged` (helper-159)
        night = "older" if _state(frm, locks[0]) == "not applied" else "newer"
        return f"{_state(to if night == 'older' else frm)} (not applied the {night} night: {_LOCK_SAYS})"
    elif frm.get("head") and "head" in to and to["head"] is None:
        text = f"head {frm['head'][:12]} gone (the PR's ref is missing)"
    elif to.get("head") and "head" in frm and frm["head"] is None:
        text = f"head back at {to['head'][:12]}"
    else:
        text = ""
    if _state(frm, locks[0]) != _state(to, locks[1]):
        text = (text + "; " if text else "") + f"{_state(frm, locks[0])} -> {_state(to, locks[1])}"
    if item.get("settings") and not (change == "refolded" and _same_commit(frm, to)):
        text = "; ".join(filter(None, [text or _state(to, locks[1]), _settings_said(item["settings"])]))
    return (text or _state(to, locks[1])) + _unknown_reason(item, locks)


def _same_commit(frm: dict[str, Any], to: dict[str, Any]) -> bool:
    """Whether a refolded entry's commit, patch and resolution are the same both nights: its settings alone
    changed."""
    return all(frm.get(key) == to.get(key) for key in ("commit", "sha256", "resolution"))


def _settings_said(settings: dict[str, Any]) -> str:
    """`title, on_conflict changed`; the digests when a night's manifest is not known."""
    if settings.get("changed"):
        return f"{', '.join(settings['changed'])} changed"
    return f"settings changed ({settings['from']} -> {settings['to']}; a night's manifest is not known)"


def _state(side: dict[str, Any], lock: bool = False) -> str:
    status = side.get("status", "unknown")
    reason = side.get("reason")
    if lock and status == "skipped" and not reason:
        return "not applied"
    if side.get("provided_by"):     # paths a union provides instead (the chain's `Carry-Filtered`)
        by: dict[str, list[str]] = {}
        for path, union in side["provided_by"].items():
            by.setdefault(union, []).append(path)
        said = "; ".join(", ".join(paths) + f" provided by {union}" for union, paths in by.items())
        return f"{status} ({said})"
    return f"{status} ({reason})" if reason and reason != status else status


def _unknown_reason(item: dict[str, Any], locks: tuple[bool, bool]) -> str:
    """` (the lock has no reason)` when a side of ITEM is a lock's entry outside its chain, with no reason."""
    sides = (item.get("from") or {}, item.get("to") or {})
    return f" ({_LOCK_SAYS})" if any(_state(side, lock) == "not applied" for side, lock in zip(sides, locks)) else ""


def _locks(diff: LockDiff) -> tuple[bool, bool]:
    """Whether the old and the new night are locks (a report has each entry's status and reason)."""
    return diff.old.statuses is None, diff.new.statuses is None


def render_diff_text(diff: LockDiff, *, verbose: bool = False) -> str:
    """The diff for a terminal: one summary line, then one line per changed entry (all with VERBOSE)."""
    lines = [f"carrytool diff {diff.old.label} -> {diff.new.label}", summary_line(diff)]
    if diff.newest_first:
        lines.append(f"  {said(diff.newest_first, diff.old)}")
    locks = _locks(diff)
    shown = [item for item in diff.entries if item["change"] != "unchanged" or verbose or item.get("pin")]
    for item in shown:
        lines.append(f"  {item['id']}: {item['change']}: {describe_entry(item, locks=locks)}")
        lines += [f"      {pair['change']} {_short(pair['old'])} {_short(pair['new'])} {pair['subject']}"
                  for pair in item["range_diff"]]
        lines += [f"      range-diff unavailable, not in this repository: {missing}"
                  for missing in item.get("range_diff_unavailable", [])]
    lines += _changes(diff, shown)
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
    if diff.newest_first:
        parts += [f"**{md_prose(said(diff.newest_first, diff.old))}**", ""]
    changed = [item for item in diff.entries if item["change"] != "unchanged" or item.get("pin")]
    if changed:
        parts += ["| entry | change | detail |", "|---|---|---|"]
        parts += [f"| {md_code(item['id'])} | {item['change']} | "
                  f"{_md_arrows(describe_entry(item, locks=_locks(diff)))} |" for item in changed]
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
    extra = _changes(diff, changed)
    if extra:
        parts += ["", *[f"- {_md_arrows(line.strip())}" for line in extra]]
    return "\n".join(parts).rstrip() + "\n"


def _md_arrows(text: str) -> str:
    """TEXT, carrytool's words with its `code spans` (md_prose), its arrows as arrows."""
    return md_prose(text).replace(" -\\> ", " → ")
