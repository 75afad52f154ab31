"""The warnings sync adds to its report about its inputs and what it composed: stale folds, PRs
holding one commit in two versions, reverted PRs carried again, structured resolutions, a lock
whose result its inputs no longer compose; and why two PRs built on a newer upstream carry the same hunks."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from carrytool.gitlayer.env import is_sha
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import read_json
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.hunks import counted
from carrytool.pipeline.keptpatchids import KeptPatchIds
from carrytool.pipeline.lock import lock_path, resync_hint
from carrytool.pipeline.plan import APPLIED, CONFLICT, Step
from carrytool.pipeline.resolve import Resolved


def stale_folds(manifest: Manifest, git: Git, resolved: Resolved, *, locked: bool = False) -> list[dict[str, object]]:
    """Unions that folded a PR head that is no longer the PR's head. A head that only changed as a commit
    (the same tree on the same parents: a reworded message) is said to be so (`same_change`): the union has
    its change, and a refold only records the new head (helper-80: read as "refold the union"). A fold follows
    the PR's ref, never a PR entry's pin (`union compose` folds the ref): a pinned PR's fold is read against
    its ref's head (h251: a union refolded at the PR's new head was "stale" against the pin, and the stale-pin
    warning said the pin changes nothing there). LOCKED (`sync --locked`): the lock records a pinned PR's pin,
    not its ref, so such a fold is not judged (as `stale-pin` is not)."""
    pinned = {e.number for e in manifest.entries if e.kind == "pr" and e.head} if locked else set()
    warnings = []
    for entry in manifest.entries:
        if not entry.enabled:
            continue
        for sup in entry.supersedes:
            current = None if sup.pr in pinned else resolved.passed_pins.get(sup.pr) or resolved.heads.get(sup.pr)
            if sup.head and current and not current.startswith(sup.head):
                warning: dict[str, object] = {"kind": "stale-fold", "entry": entry.id, "pr": sup.pr,
                                              "folded": sup.head, "current": current}
                folded = git.commit_by_abbreviation(sup.head)       # 7 to 40 hex digits (the manifest's schema)
                if folded and _same_change(git, folded, current):
                    warning["same_change"] = True
                    warning["message"] = (f"{entry.id} folded pr/{sup.pr} at {sup.head[:12]}; its head is now "
                                          f"{current[:12]}, the same tree on the same parents (a reworded commit): "
                                          f"the union has its change, a refold records the new head "
                                          f"(`carrytool union compose {shlex.quote(str(entry.name))}`)")
                else:
                    warning["message"] = (f"{entry.id} folded pr/{sup.pr} at {sup.head[:12]}, but its head is "
                                          f"now {current[:12]}: refold the union "
                                          f"(`carrytool union compose {shlex.quote(str(entry.name))}`)")
                warnings.append(warning)
    return warnings


def stale_pins(manifest: Manifest, resolved: Resolved) -> list[dict[str, object]]:
    """PR entries whose pin (`head:`) is not the head their ref is at (fetched tonight, or as last fetched
    offline): the PR was pushed since, and sync composes the pin (h244: h239's trial pinned a PR after a
    force-push, and later nights never said it had moved on). A warning: the night holds what it was told."""
    warnings: list[dict[str, object]] = []
    for entry in manifest.entries:
        current = resolved.passed_pins.get(entry.number) if entry.kind == "pr" else None  # type: ignore[arg-type]
        pinned = resolved.heads.get(entry.number)  # type: ignore[arg-type]
        if current is None or pinned is None or not entry.enabled:
            continue
        where = f"{manifest.path}:{entry.line}"
        said = f"{entry.id} is pinned to {pinned[:12]} by its entry's `head:` ({where}), but the PR's head is now " \
            f"{current[:12]}"
        union = whole_union(manifest, entry.number)  # type: ignore[arg-type]
        warning: dict[str, object] = {"kind": "stale-pin", "entry": entry.id, "pr": entry.number, "pinned": pinned,
                                      "current": current, "line": entry.line,
                                      "message": f"{said}: {moved_pin_hint(current)}"}
        if union is not None:
            warning["superseded_by"] = union.id
            warning["message"] = f"{said}; {superseded_pin_hint(union, current)}"
        warnings.append(warning)
    return warnings


def whole_union(manifest: Manifest, number: int) -> Entry | None:
    """The enabled union that supersedes PR NUMBER whole (no `paths`), if any."""
    return next((other for other in manifest.entries if other.enabled and any(
        sup.pr == number and not sup.partial for sup in other.supersedes)), None)


def superseded_pin_hint(union: Entry, current: str) -> str:
    """What to do about a pin the PR was pushed past (its ref at CURRENT) when UNION provides the PR whole: sync
    composes the union's fold, the pin changes nothing there (h248: "set `head:` ..., then `carrytool sync`" did
    nothing); a fold takes the PR's ref, not the pin. sync's warning and status say it alike (h251)."""
    return (f"{union.id} provides it whole (`supersedes`), so sync composes the union's fold of it, not the pin: to "
            f"carry the new head, refold the union (`carrytool union compose {shlex.quote(str(union.name))}` folds "
            f"the PR's head, not the pin), and set `head: {current}` in the PR's entry or remove `head:`")


def moved_pin_hint(current: str) -> str:
    """What to do about a pin the PR was pushed past (its ref at CURRENT): sync's warning and status say it alike."""
    return (f"it was pushed since the pin, and sync composes the pin; to carry the new head, set `head: {current}` "
            "in its entry (or remove `head:` to follow the PR), then `carrytool sync`")


def _same_change(git: Git, one: str, other: str) -> bool:
    """Whether commits ONE and OTHER have the same tree and the same parents."""
    a, b = git.commit_info(one), git.commit_info(other)
    return a["tree"] == b["tree"] and a["parents"] == b["parents"]


# what a structured resolution kept, by rule (helper-83: an adjacent edit's rewrite replaces base lines, so
# "both sides kept" was not what it did)
_KEPT = {"adjacent-edit": "one side's rewrite kept with the other's insertion beside it",
         "import-union": "the names both sides import, once each"}


def stale_stacks(git: Git, upstream: str, steps: list[Step],
                 kept: KeptPatchIds | None = None) -> Callable[[], list[dict[str, object]]]:
    """`stale-stack` warnings: two PRs holding one commit in two versions (the same author, author date and
    subject, what a rebase or an amend keeps; another patch id), neither built on the other's head. When one
    PR's head is such a commit and the other's is not, the other was built on it before it was rewritten:
    it carries the old version, and can put back what the rewrite changed or removed (helper-114: pr/3710,
    amended, no longer added a line that pr/9001, stacked on its old head, put back; every hunk landed,
    nothing was said). Else neither is the other's base (two PRs on two versions of a third branch): the one
    composed later brings its version over the other's. A commit both hold with the same patch (only
    rebased) merges as one: no warning. (Which version is newer is not read from commit dates: a rebase of
    the stale PR dates its copies anew, helper-117.)

    In two halves: the commits are compared now (facts.gather's walk, one `cat-file`), their patch ids read
    in the background (while composing: a few hundred ms where the commits are large), those KEPT has not
    (pipeline.keptpatchids: explain after the nightly sync reads sync's); the function returned makes the
    warnings (and puts the ids read into KEPT)."""
    prs = [s for s in steps if s.entry.kind == "pr" and s.head]
    own = {s.id: git.outside(upstream, s.head) for s in prs}        # type: ignore[arg-type]
    if sum(len(commits) > 0 for commits in own.values()) < 2:
        return list
    every = set().union(*own.values())
    git.load_commits(every)
    keys = {sha: _authored(git.commit_info(sha)) for sha in every}
    # only a commit held in two versions (one key, two commits) makes a pair: only the PRs holding one are
    # compared (300 PRs of one commit each: 44,850 pairs compared for nothing, 0.1 s of every sync)
    versions: dict[tuple[str, str], set[str]] = {}
    for sha in every:
        versions.setdefault(keys[sha], set()).add(sha)
    twice = {key for key, shas in versions.items() if len(shas) > 1}
    prs = [s for s in prs if any(keys[sha] in twice for sha in own[s.id])]
    found: list[tuple[Step, Step, str, str, bool]] = []   # (stale or later, other, its commit, the other's, on it)
    was: dict[tuple[str, str], str] = {}     # (stale, the PR it was built on) -> its copy of that PR's head
    for n, one in enumerate(prs):
        mine = {keys[sha]: sha for sha in sorted(own[one.id])}     # (sorted: one PR holding a key twice)
        for other in prs[n + 1:]:
            if one.head in own[other.id] or other.head in own[one.id]:   # one built on the other's head: a stack
                continue
            pairs = [(mine[keys[sha]], sha) for sha in sorted(own[other.id] - own[one.id])
                     if keys[sha] in mine and mine[keys[sha]] not in own[other.id]]
            if not pairs:
                continue
            tops = (one.head in {a for a, _b in pairs}, other.head in {b for _a, b in pairs})
            if tops == (True, False):          # other was built on one: other holds the old version
                found += [(other, one, b, a, True) for a, b in pairs]
                was[(other.id, one.id)] = next(b for a, b in pairs if a == one.head)
            elif tops == (False, True):
                found += [(one, other, a, b, True) for a, b in pairs]
                was[(one.id, other.id)] = next(a for a, b in pairs if b == other.head)
            else:
                found += [(other, one, b, a, False) for a, b in pairs]
    if not found:
        return list
    patches = _patch_ids_later(git, sorted({sha for *_steps, a, b, _on in found for sha in (a, b)}), kept)
    return lambda: _stale_warnings(keys, found, patches(), was)


def _patch_ids_later(git: Git, commits: list[str], kept: KeptPatchIds | None) -> Callable[[], dict[str, str]]:
    """`Git.patch_ids_later` of COMMITS, those KEPT has read from it, the others asked of git and put into it."""
    known = {sha: found for sha in commits if kept is not None and (found := kept.get(kept.key(sha))) is not None}
    later = git.patch_ids_later([sha for sha in commits if sha not in known])

    def answer() -> dict[str, str]:
        asked = later()
        if kept is not None:
            for sha, found in asked.items():
                kept.put(kept.key(sha), found)
        return known | asked

    return answer


def _stale_warnings(keys: dict[str, tuple[str, str]], found: list[tuple[Step, Step, str, str, bool]],
                    patches: dict[str, str], was: dict[tuple[str, str], str]) -> list[dict[str, object]]:
    grouped: dict[tuple[str, bool], dict[str, list[tuple[str, str]]]] = {}   # (PR, built on) -> other PR -> pairs
    for entry, other, here, there, built_on in found:
        if patches.get(here) and patches.get(there) and patches[here] != patches[there]:
            grouped.setdefault((entry.id, built_on), {}).setdefault(other.id, []).append((here, there))
    out: list[dict[str, object]] = []
    for (entry_id, built_on), by in grouped.items():
        others = sorted(by)
        commits = sorted({pair for pairs in by.values() for pair in pairs})
        here, there = by[others[0]][0]
        count = counted(len({a for a, _b in commits}), "commit")
        versions = f"{keys[here][1]!r}: {here[:12]} in {entry_id}, {there[:12]} in {others[0]}"
        if built_on:
            message = (f"{entry_id} holds {count} of {', '.join(others)} in another version than {others[0]} has now "
                       f"({versions}): it was built on {others[0]} before that was rewritten, and carries the old "
                       f"version, which can put back what the rewrite changed or removed; rebase {entry_id} onto "
                       f"{others[0]}'s head")
        else:
            message = (f"{entry_id} and {', '.join(others)} hold {count} in different versions ({versions}), neither "
                       f"built on the other's head: the one composed later brings its version over the other's; "
                       f"rebase them onto one version")
        warning = {"kind": "stale-stack", "entry": entry_id, "on": others, "built_on": built_on,
                   "commits": [{"here": a, "there": b} for a, b in commits], "message": message}
        pins = {other: was[(entry_id, other)] for other in others if (entry_id, other) in was}
        if pins:         # the heads of the PRs it was built on, as it holds them: `head:` pins carry those versions
            warning["was"] = pins
        out.append(warning)
    return out


def _authored(info: dict[str, object]) -> tuple[str, str]:
    """What a rebase or an amend keeps of a commit: its author with the date, and its subject."""
    return str(info.get("author", "")), str(info["message"]).split("\n", 1)[0]


def reverted_warnings(steps: list[Step]) -> list[dict[str, object]]:
    """One `merged-upstream-reverted` warning per PR upstream merged and reverted since, carried again from the
    base its change was made on (helper-114: skipped as merged-upstream, its lines were gone from the image,
    exit 0, nothing said); none when upstream has its change all the same."""
    out: list[dict[str, object]] = []
    for step in steps:
        if step.reverted is None or step.reason == "merged-upstream":
            continue
        said = f"{step.id}: {step.reverted}"
        if step.status == APPLIED:
            message = f"{said}: it is applied again, as it was made; remove the entry to leave it out"
        elif step.status == CONFLICT:
            message = f"{said}: applied again as it was made, it conflicts; rebase the PR, or remove the entry"
        else:
            message = f"{said}: applied again as it was made, it is {step.status} ({step.reason}): see its entry"
        out.append({"kind": "merged-upstream-reverted", "entry": step.id, "merged_in": step.merged_in,
                    "reverted_in": step.reverted_in, "base": step.base, "applied": step.status == APPLIED,
                    "message": message})
    return out


def structured_warnings(steps: list[Step]) -> list[dict[str, object]]:
    """One `structured-merge` warning per hunk resolved structurally: a reviewer should see each."""
    return [{"kind": "structured-merge", "entry": step.id, "file": h["file"], "lines": h["lines"], "rule": h["kind"],
             "message": f"{step.id}: {h['file']} lines {h['lines'][0]}-{h['lines'][1]} resolved structurally "  # type: ignore[index]
                        f"({h['kind']}): {_KEPT.get(h['kind'], 'both sides kept')}; review it"}
            for step in steps for h in step.structured]


def lock_result_warning(locked: str, composed: str, ran: str = "sync --locked") -> dict[str, object]:
    """The `lock-result` warning: the lock's inputs compose COMPOSED, not the result LOCKED it names; RAN:
    the command that read the lock (resync_hint)."""
    return {"kind": "lock-result", "locked": locked, "composed": composed,
            "message": f"the lock's inputs compose {composed[:12]}, but the lock's result is {locked[:12]}: something "
                       "the lock does not pin changed (with a lock written before carrytool kept the manifest's "
                       "settings in it: the identity, a title, a policy), and the lock is left as it is: "
                       + resync_hint(ran, "to write a new one")}


def upstream_rewound(manifest: Manifest, git: Git, current: str, *, offline: bool = False) -> list[dict[str, object]]:
    """An `upstream-rewound` warning when upstream's branch no longer holds the commit the lock beside the
    manifest (the last night sync wrote) composed on: force-pushed back, reset, or rewritten (helper-214, on
    celery: upstream moved six commits back and sync said nothing; only `diff` did). What those commits
    merged is gone from the image tonight, and entries they merged are carried again. None when there is no
    readable lock for the same upstream, its commit is not in the repository, or upstream only moved on; nor,
    OFFLINE, when upstream as this repository last fetched it is an older commit of the lock's (h219: a lock
    from CI, newer than this clone's fetch, read as a force-push)."""
    try:
        upstream = read_json(lock_path(manifest))["upstream"]
        previous = upstream["sha"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(previous, str) or not is_sha(previous) or previous == current or \
            upstream.get("url") != manifest.upstream.url or upstream.get("branch") != manifest.upstream.branch:
        return []
    if git.object_type(previous) != "commit" or git.is_ancestor(previous, current):
        return []
    behind = git.is_ancestor(current, previous)
    if behind and offline:
        return []
    gone = git.count_commits(current, previous)
    how = "went back to an older commit" if behind else "was rewritten"
    branch = manifest.upstream.branch
    return [{"kind": "upstream-rewound", "previous": previous, "current": current, "gone": gone,
             "message": f"upstream {branch} {how}: {current[:12]} does not hold {previous[:12]}, the upstream of the "
                        f"last night's lock ({gone} commit{'s' if gone != 1 else ''} of it gone: a force-push, a "
                        f"reset, or another branch?); what they brought is not in tonight's image, and entries they "
                        f"merged are carried again: `carrytool diff` against the last night's lock shows it"}]


# what the identical-hunk warnings of two PRs built on a newer upstream add to their message (the report's
# schema unchanged), and the text's line for the pair repeats (render.report_lines)
BOTH_HOLD = "; both PRs hold "


def say_newer_upstream(manifest: Manifest, git: Git, upstream: str, steps: list[Step],
                       warnings: list[dict[str, object]]) -> None:
    """Add to each identical-hunk warning of two PR entries whose heads share commits UPSTREAM does not have
    (their merge base is not in its history, nor either head: no stack) how many, and the likely cause: both
    built on a newer upstream than the one synced, they carry its changes as their own (h227, on trl with
    upstream at main~12: "pr/6507 and pr/6024 carry the same 92 hunks in 34 files", and no word of why). One
    merge-base and one rev-list --count per such pair, only when it has the warning. Both PRs stacked on one
    branch no entry carries read alike (h236: the note said "newer upstream" of such a stack), and nothing here
    tells the two apart (upstream's newer commits are in no ref sync has), so the note names both causes."""
    heads = {step.id: step.head for step in steps if step.entry.kind == "pr" and step.head}
    notes: dict[tuple[str, str], str] = {}
    for warning in warnings:
        if warning.get("kind") != "identical-hunk":
            continue
        pair = (str(warning.get("entry")), str(warning.get("other")))
        if pair not in notes:
            notes[pair] = _newer_upstream(manifest, git, upstream, heads.get(pair[0]), heads.get(pair[1]))
        if notes[pair]:
            warning["message"] = f"{warning.get('message', '')}{notes[pair]}"


def _newer_upstream(manifest: Manifest, git: Git, upstream: str, one: str | None, other: str | None) -> str:
    """BOTH_HOLD's words for heads ONE and OTHER when their merge base is a commit UPSTREAM lacks; "" else."""
    shared = git.merge_base(one, other) if one and other else None
    if shared is None or shared in (one, other):
        return ""
    count = git.count_commits(upstream, shared)
    if not count:
        return ""
    return (f"{BOTH_HOLD}{count} commit{'s' * (count != 1)} that upstream {manifest.upstream.branch} does not have "
            f"(through {shared[:12]}): both built on a newer upstream than the one synced, or stacked on one branch "
            "the manifest does not carry, so each carries those commits' changes as its own")
