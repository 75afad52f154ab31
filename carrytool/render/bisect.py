"""`carrytool bisect` as text or JSON: the first bad entry, with whom, the failing checks, the next command."""

from __future__ import annotations

import json
import shlex
from typing import TextIO

from carrytool.asserts.source import RUNNING
from carrytool.render.commands import Invocation, union_new_command
from carrytool.render.safe import printable
from carrytool.review.bisect_result import BisectResult


def next_command(result: BisectResult, invocation: Invocation) -> str | None:
    """`explain ENTRY` for an entry bad alone (or with carries); `union new` to fold PRs that break together.
    None for an answer the rerun did not confirm (helper-97: `union new`, which edits the manifest, was
    proposed on an answer bisect had just said not to trust)."""
    if result.confirmed is False:
        return None
    if result.first_bad is None:
        guarded = _guarded(result)
        if result.unjudged:     # nothing was judged: no entry to explain (helper-123)
            return None
        return invocation.command("explain", *guarded) if guarded and not result.tip_good else None
    together = [*result.interacts_with, result.first_bad]
    union = union_new_command(invocation, together) if result.interacts_with else None
    return union or invocation.command("explain", *together)


def _guarded(result: BisectResult) -> list[str]:
    """The entries of the chain that the asserts searched with guard (`entry:`), in chain order, then those
    of them the chain left out (h179); not those of asserts on a file that does not parse (not judged: the
    entry may well provide what they check)."""
    unjudged = {o.name for o in result.verdict.failed if o.unparsable} if result.verdict else set()
    wanted = {spec.entry for spec in result.checks.asserts if spec.entry and spec.name not in unjudged}
    return [link.id for link in result.chain.links if link.id in wanted] + \
        [str(row["id"]) for row in result.left_out if row["id"] in wanted]


def _left_out(result: BisectResult, invocation: Invocation) -> list[str]:
    """A line for each entry the asserts guard that the chain left out: which asserts, and why (h179: bisect
    said "upstream itself fails" of an assert whose entry had conflicted with an earlier one); one it could not
    try, why and the command that fetches it (h187)."""
    lines = []
    for row in result.left_out:
        names = ", ".join(spec.name for spec in result.checks.asserts if spec.entry == row["id"])
        if row["status"] == "not-tried":       # (of any assert searched with, as the answering search may be one's)
            names = ", ".join(row["asserts"])  # type: ignore[arg-type]
            then = f": run `{invocation.command('sync')}`, then bisect again" if row.get("fetch") else ""
            lines.append(f"  {row['id']} (the `entry:` of {names}) is not in the chain and was not tried: "
                         f"{row['why']}{then}")
            continue
        if row["status"] == "conflict":
            whom = [*(["upstream"] if row["upstream"] else []), *row["with"]]  # type: ignore[misc]
            why = f"it conflicts with {' and '.join(whom) or 'the entries before it'} in " \
                  f"{', '.join(row['files'])}"  # type: ignore[arg-type]
        else:
            why = f"composed after the entries before it, it is {row['status']} there"
            if row.get("night") is False:
                why += ": the night left it out, so what it was tried with is likely not what the night had"
        lines.append(f"  {row['id']} (the `entry:` of {names}) is not in the chain: {why}")
        used = dict(result.chain.composed_with).get(str(row["id"]))
        if used is not None and not used.night:     # h193: a PR pushed again since, bisected as the night's
            lines.append(f"  {row['id']} was tried with {used.what} ({used.sha[:12]}), which may not be the one the "
                         "night had: no lock of that night records it, nor sync's record in this repository "
                         "(refs/carrytool/<fork branch>/nights: a red night writes no lock, and a sync run in "
                         "another clone recorded it there; its report's `head` says which it had)")
    return lines


def render_bisect_json(result: BisectResult, stream: TextIO, invocation: Invocation) -> None:
    """Write the contract's JSON (plus `upstream` and `next`)."""
    data = result.to_json()
    # an entry not tried: the command that fetches it (`sync`) in place of whether one would
    data["left_out"] = [{k: v for k, v in row.items() if k != "fetch"} |
                        ({"next": invocation.command("sync") if row["fetch"] else None} if "fetch" in row else {})
                        for row in result.left_out]
    data["next"] = next_command(result, invocation)
    stream.write(json.dumps(data, indent=2) + "\n")


def render_bisect_text(result: BisectResult, stream: TextIO, invocation: Invocation) -> None:
    """Write what was found, the failing checks, the probe counts and the next command."""
    def say(text: str = "") -> None:
        print(printable(text), file=stream)

    n = len(result.chain.links)
    if result.tip_good:
        say(f"The tip of the chain ({n} entries on upstream {result.chain.upstream[:12]}) passes every check: "
            "nothing to bisect.")
    elif result.first_bad is None and result.unjudged:
        files = ", ".join(result.unparsable)
        say(f"Upstream {result.chain.upstream[:12]} fails the asserts, and so did every prefix of the chain probed, "
            f"but none of them was judged: {files} do{'es' if len(result.unparsable) == 1 else ''} not parse with "
            f"{RUNNING}, the Python carrytool runs on: no entry is to blame.")
        say("  a file the project's Python parses may use newer syntax than this one: if the project needs a "
            "newer Python, install carrytool with it and run this bisect again; a real syntax error is to be "
            "fixed where the FAIL line below points")
    elif result.first_bad is None:
        guarded = _guarded(result)
        if guarded:     # helper-100: "upstream itself fails: no entry broke it" read as nothing to do
            # (what was probed, no more: a binary search probes a few prefixes; helper-101)
            say(f"Upstream {result.chain.upstream[:12]} fails the asserts, and so did every prefix of the chain "
                f"probed: what they check is to come from {', '.join(guarded)} (their `entry:`).")
        else:
            say(f"Upstream {result.chain.upstream[:12]} itself fails: no entry of the chain broke it.")
        for line in _left_out(result, invocation):
            say(line)
        verdict = result.upstream_verdict or result.verdict
        if verdict is not None and verdict.command is not None and not verdict.failed:
            # helper-83: a command that cannot pass anywhere (it needs `.git`, every probe timed out) read as
            # upstream's own failure
            cmd = verdict.command
            why = f"timed out after {result.checks.timeout:g} s" if cmd.timed_out else f"exit {cmd.exit_code}"
            say(f"  the command fails on upstream's own tree too ({why}): if upstream's code is not what fails, "
                "it needs what a probed tree does not have (a `.git`, an install step, more time); see "
                "docs/bisect.md")
        tried = [base for base in result.bases if base.origin == "entry" and base.bad]
        if guarded and tried:     # an assert of what an entry adds fails on upstream by design (helper-79); said
            # of the entry only once upstream + it was judged too (helper-146: said of a carry applied unchanged)
            one = len(guarded) == 1
            say(f"  the asserts searched with check what {', '.join(guarded)} add{'s' if one else ''} (their "
                f"`entry:`), which upstream alone never has, and upstream + {', '.join(guarded)} (with what "
                f"{'it is' if one else 'they are'} built on) fails them too: the entry no longer provides it "
                "(moved, rebased, or skipped), or needs an entry it is not built on")
        for line in _moved(result, broke=False):
            say(line)
        for note in result.night_notes:
            say(f"  {note}")
        if result.bases:
            say(f"  no base passes either: {_bases(result)}")
        if result.unparsable:   # some failed, some were not judged at all (helper-123)
            one = len(result.unparsable) == 1
            say(f"  not judged: the asserts on {', '.join(result.unparsable)}, which do{'es' if one else ''} not "
                f"parse with {RUNNING}, the Python carrytool runs on")
    else:
        position = [link.id for link in result.chain.links].index(result.first_bad) + 1
        say(f"First bad entry: {result.first_bad} ({position} of {n} in the chain)")
        for line in _left_out(result, invocation):
            say(line)
        moved = _moved(result, broke=True)
        if moved:
            say(moved[0])
        elif result.alone_bad:
            say("  bad alone: composed by itself onto upstream it fails the same way")
        else:
            alone = "upstream fails without it too" if result.upstream_bad else "good alone on upstream"
            say(f"  {alone}; it breaks the check together with: {', '.join(result.interacts_with) or '?'}")
        if result.bases and moved:
            say(f"  no base passes with it at its new head: {_bases(result)}")
        elif result.bases:  # upstream fails the check (e.g. it guards a carry): searched on a base that passes
            say(f"  upstream fails the check, so the rest of the chain was searched on a base that passes: "
                f"{_bases(result)}")
    if result.confirmed is False:
        say("  NOT CONFIRMED: run again on the trees this answer rests on, the command gave another verdict: it is "
            "flaky, and this answer is not to be trusted (the changed verdict was dropped from the cache; make "
            "the command deterministic, e.g. with retries inside it, and run bisect again)")
    elif result.confirmed:
        say("  confirmed: run again on the trees this answer rests on, the command gave the same verdicts")
    _render_checks(result, say)
    names = [spec.name for spec in result.checks.asserts] + ([f"`{result.checks.command}`"]
                                                             if result.checks.command else [])
    say(f"Searched with: {', '.join(names)}")
    say(f"Probes: {result.probes} ({result.cached} from the cache)")
    command = next_command(result, invocation)
    if command:
        say(f"Next: {command}")
        for line in _night_commits(result, invocation):
            say(line)


def _night_commits(result: BisectResult, invocation: Invocation) -> list[str]:
    """With --rev, a line per entry the next command names: explain reads today's manifest and heads, not
    the night's, so say what the night composed for it and the command that shows it (h245: `bisect --rev`
    of an older night named `explain pr/6290`, which explains pr/6290 as it is now)."""
    if result.chain.rev is None or result.first_bad is None:
        return []
    links = {link.id: link for link in result.chain.links}
    lines = []
    for entry in [*result.interacts_with, result.first_bad]:
        link = links.get(entry)
        if link is None:
            continue
        head = f" at head {link.step.head[:12]}" if link.step.head else ""
        show = shlex.join(["git", *(["-C", str(invocation.repo)] if invocation.repo else []), "show", link.commit])
        lines.append(f"  (explain reads today's manifest and heads) the night {result.chain.rev[:12]} composed "
                     f"{entry}{head} as {link.commit[:12]}: `{show}`")
    return lines


def _moved(result: BisectResult, *, broke: bool) -> list[str]:
    """A line for each entry an assert guards whose head moved since the last good night (h241): with BROKE,
    the one that broke it itself (upstream + its earlier head passes); else those whose earlier head fails on
    upstream too, or does not apply there (not the move alone)."""
    lines = []
    for row in result.moved:
        names = ", ".join(spec.name for spec in result.checks.asserts if spec.entry == row["id"])
        heads = f"{row['id']} moved from {str(row['from'])[:12]} (the last good night, {row['night']})"
        if broke and row["bad"] is False and row["id"] == result.first_bad:
            lines.append(f"  it broke it itself: {heads}, where upstream + it passes, to {str(row['to'])[:12]}, "
                         f"where upstream + it fails: its new head drops what {names} check"
                         f"{'s' if ', ' not in names else ''}")
        elif not broke and row["bad"] is not False:
            then = "does not apply there" if row["bad"] is None else "fails too"
            lines.append(f"  {heads} to {str(row['to'])[:12]}, but upstream + it at {str(row['from'])[:12]} {then}: "
                         "not the move alone (upstream moved too, or it needs an entry it is not built on)")
    return lines


_ORIGINS = {"entry": "the asserts' `entry:`", "carries": "the fork's carries",
            "carries-alone": "the fork's carries built on no PR that apply on upstream",
            "prefix": "a prefix of the chain"}


def _bases(result: BisectResult) -> str:
    """The bases tried, each as `upstream + IDS (why) passes|fails`, or `skipped: ID does not apply there
    (REASON)` when one of its entries did not apply (the tree was not that one; helper-153)."""
    def ids(base) -> str:  # noqa: ANN001 - a Base
        shown = list(base.ids[:6]) + ([f"... ({len(base.ids)} entries)"] if len(base.ids) > 6 else [])
        return ", ".join(shown)

    def outcome(base) -> str:  # noqa: ANN001 - a Base
        if base.unapplied:
            one = len(base.unapplied) == 1
            names = ", ".join(name for name, _reason in base.unapplied)
            why = base.unapplied[0][1] if one else ", ".join(f"{name}: {reason}" for name, reason in base.unapplied)
            return f"skipped: {names} do{'es' if one else ''} not apply there ({why})"
        return "fails" if base.bad else "passes"

    return "; ".join(f"upstream + {ids(b)} ({_ORIGINS[b.origin]}) {outcome(b)}" for b in result.bases)


def _render_checks(result: BisectResult, say) -> None:  # noqa: ANN001 - a print function
    verdict = result.verdict
    if verdict is None:
        return
    where = " at the tip" if result.first_bad is None and result.upstream_verdict is not None else ""
    for outcome in verdict.failed:
        say(f"  FAIL{where} {outcome.name} ({outcome.file}{f':{outcome.line}' if outcome.line else ''}): "
            f"{outcome.message}")
    if where:   # helper-146: upstream's message was quoted for the tip's; upstream's is beside it, labelled
        shown = {(o.name, o.message) for o in verdict.failed}
        for outcome in result.upstream_verdict.failed:       # type: ignore[union-attr]
            if (outcome.name, outcome.message) not in shown:
                say(f"  FAIL on upstream {outcome.name} ({outcome.file}{f':{outcome.line}' if outcome.line else ''}): "
                    f"{outcome.message}")
    if verdict.command is not None and not verdict.failed:
        cmd = verdict.command
        status = "timed out" if cmd.timed_out else f"exit {cmd.exit_code}"
        say(f"  FAIL `{cmd.command}`: {status}")
        for line in cmd.output.splitlines()[-10:]:
            say(f"    | {line}")
