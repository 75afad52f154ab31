"""`carrytool diff`: what changed between two nights, read from two locks and local objects only.

A lock pins upstream and every entry's input; its `result` is the composed chain, one commit per applied
entry with `Carry-Entry`/`Carry-Head`/`Carry-Base`/`Carry-Resolution` trailers. Walking that chain says
which entries were applied (and with which resolution) without composing anything again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from carrytool.asserts.spec import AssertSpec
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import entry_setting_values
from carrytool.review.diff_objects import require_objects
from carrytool.review.diff_order import newest_first, red_night
from carrytool.review.nights import Night

_TRAILER = re.compile(r"^Carry-(Entry|Head|Base|Resolution): (.*)$", re.M)
_FILTERED = re.compile(r"^Carry-Filtered: (.*) \(from (.*)\)$", re.M)
_RANGE = re.compile(r"^\s*(?:\d+|-):\s+([0-9a-f]+|-+)\s+([=!<>])\s+(?:\d+|-):\s+([0-9a-f]+|-+)\s?(.*)$")


@dataclass(frozen=True)
class Link:
    """One commit of a composed chain, as its trailers describe it."""

    commit: str
    head: str | None = None
    base: str | None = None
    resolution: str | None = None
    provided: tuple[tuple[str, str], ...] = ()      # (path, the union it came from): `Carry-Filtered` trailers


@dataclass
class LockDiff:
    """The difference between two nights: the value `--format json` prints."""

    old: Night
    new: Night
    upstream: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
    asserts: dict[str, Any] = field(default_factory=lambda: {"added": [], "removed": [], "changed": []})
    resolutions: dict[str, list[dict[str, str]]] = field(default_factory=lambda: {"added": [], "removed": []})
    newest_first: dict[str, Any] | None = None      # the nights look given newest first (diff_order)
    red_night: dict[str, Any] | None = None         # a red night after NEW, the lock on disk (diff_order)
    # a report's composed commit not here, by side (`from`, `to`): the line saying why and how to get it (h262)
    result_unavailable: dict[str, str | None] | None = None

    def unavailable(self) -> list[str]:
        """One line per entry whose range-diff could not be read (`range_diff_unavailable`)."""
        return [f"{item['id']}: {missing}" for item in self.entries
                for missing in item.get("range_diff_unavailable", [])]

    def to_json(self) -> dict[str, Any]:
        return {"locks": {"old": self.old.label, "new": self.new.label}, "upstream": self.upstream,
                "result": self.result(), "order": self.order(), "outcome": self.outcome(), "entries": self.entries,
                "asserts": self.asserts, "resolutions": self.resolutions, "newest_first": self.newest_first,
                "red_night": self.red_night, "result_unavailable": self.result_unavailable}

    def outcome(self) -> dict[str, dict[str, Any]]:
        """How each night's run ended: a report's `ok` and `exit_code`; a lock's is a run that published
        (helper-143: the diff of a green night's report and a red one's never said the new one was red)."""
        return {"from": _outcome(self.old), "to": _outcome(self.new)}

    def result(self) -> dict[str, str | None]:
        """The composed commit of each night: a lock's `result` (the branch sync published); for a red night's
        report, the commit it composed (`result.sha`: not published)."""
        return {"from": self.old.lock.get("result"), "to": self.new.lock.get("result")}

    def order(self) -> dict[str, list[str]] | None:
        """The entries both nights carry, in each night's order, when that order changed (helper-97: swapping
        two entries composed another branch, and diff said "3 unchanged"); None when it did not."""
        new_ids = {item["id"] for item in self.new.lock["entries"]}
        old_ids = {item["id"] for item in self.old.lock["entries"]}
        before = list(dict.fromkeys(item["id"] for item in self.old.lock["entries"] if item["id"] in new_ids))
        after = list(dict.fromkeys(item["id"] for item in self.new.lock["entries"] if item["id"] in old_ids))
        return {"from": before, "to": after} if before != after else None

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for item in self.entries:
            out[item["change"]] = out.get(item["change"], 0) + 1
        return out


def _outcome(night: Night) -> dict[str, Any]:
    if night.run is None:
        return {"ok": True, "exit_code": 0, "published": True}
    return {"ok": night.run["ok"], "exit_code": night.run["exit_code"], "published": False}



# -- the diff -------------------------------------------------------------------------------------------

def diff_nights(git: Git, old: Night, new: Night, *, options: Sequence[str] = (), on_disk: bool = False
                ) -> LockDiff:
    """Compare two nights using only the objects already in GIT's repository (and, of REV:PATH nights, which
    commit is older). OPTIONS: the `-m`/`--repo` a command printed repeats; ON_DISK: NEW is the lock on disk,
    after which a red night may have come (diff_order.red_night)."""
    absent = require_objects(git, old, new)
    up_old, up_new = old.lock["upstream"]["sha"], new.lock["upstream"]["sha"]
    upstream = {"from": up_old, "to": up_new, "commits": git.count_commits(up_old, up_new)}
    behind = git.count_commits(up_new, up_old)
    if behind:
        upstream["dropped"] = behind        # upstream was rewritten: commits of the old night no longer there
    result = LockDiff(old, new, upstream)
    result.newest_first = newest_first(git, old, new, upstream, options)
    result.red_night = red_night(git, new, options) if on_disk else None
    # a report's composed commit that is not here (a red night's, never pushed) is left out: the report says
    # each entry's status; what only its chain says (resolutions, the paths unions provide) is not compared
    chains = (None if (0, "result") in absent else composed_links(git, old.lock),
              None if (1, "result") in absent else composed_links(git, new.lock))
    if (0, "result") in absent or (1, "result") in absent:
        result.result_unavailable = {"from": absent.get((0, "result")), "to": absent.get((1, "result"))}
    old_items = {item["id"]: item for item in old.lock["entries"]}
    new_items = {item["id"]: item for item in new.lock["entries"]}
    for entry_id, item in new_items.items():
        before = old_items.get(entry_id)
        result.entries.append(_entry_change(git, entry_id, before, item, (old, new), chains, absent))
    for entry_id, item in old_items.items():
        if entry_id not in new_items:
            result.entries.append({"id": entry_id, "change": "removed",
                                   "from": _side(item, chains[0], old), "to": None, "range_diff": []})
    result.asserts = {**_asserts(old.manifest, new.manifest), **_assert_results(old, new)}
    result.resolutions = _resolutions(chains)
    return result


def _entry_change(git: Git, entry_id: str, before: dict | None, after: dict, nights: tuple[Night, Night],
                  chains: tuple[dict[str, Link] | None, dict[str, Link] | None],
                  absent: dict[tuple[int, str], str]) -> dict[str, Any]:
    to = _side(after, chains[1], nights[1])
    if before is None:
        return {"id": entry_id, "change": "added", "from": None, "to": to, "range_diff": []}
    frm = _side(before, chains[0], nights[0])
    item = {"id": entry_id, "change": "unchanged", "from": frm, "to": to, "range_diff": []}
    links = chains[0] is not None and chains[1] is not None     # what only a chain says is compared (h262)
    settings = _settings_change(entry_id, before, after, nights)
    if settings is not None:
        item["settings"] = settings
    pin = _pin_change(entry_id, before, after, nights)
    if pin is not None:
        item["pin"] = pin
    if before.get("head") != after.get("head") and before.get("head") and after.get("head"):
        item["change"] = "moved"
        if not _unavailable(item, "head", absent):
            pair = ((_base(git, nights[0].lock, before["head"], chains[0], entry_id), before["head"]),
                    (_base(git, nights[1].lock, after["head"], chains[1], entry_id), after["head"]))
            item["range_diff"] = range_diff(git, *pair)
    elif _differs(before, after, "commit") or _differs(before, after, "sha256"):
        item["change"] = "refolded"
        if before.get("commit") and after.get("commit") and \
                not _unavailable(item, "commit", absent):
            pair = ((_parent(git, before["commit"]), before["commit"]),
                    (_parent(git, after["commit"]), after["commit"]))
            item["range_diff"] = range_diff(git, *pair)
    elif frm.get("status") != to.get("status") or _reason_changed(frm, to, nights) \
            or (links and frm.get("provided_by") != to.get("provided_by")) or _head_went_or_came(frm, to):
        # (helper-159: a PR whose paths a new union provides, and one it supersedes that conflicted the night
        # before, were both said unchanged; h198: a PR that conflicted, then was closed, its ref deleted)
        item["change"] = "status"
    elif links and frm.get("resolution") != to.get("resolution"):
        item["change"] = "refolded"
    elif settings is not None:
        # the contract's kinds are fixed (a script may switch on them): an entry composed again under other
        # settings (a title is its commit's subject) is refolded, and `settings` says what changed
        item["change"] = "refolded"
    return item


def _head_went_or_came(frm: dict[str, Any], to: dict[str, Any]) -> bool:
    """Whether a PR's head went (its ref missing: a lock's `head: null`, a report's reason `missing`) or came
    back: a status change even where both nights left it out (h198: conflict, then closed, said unchanged)."""
    def gone(side: dict[str, Any]) -> bool:
        return ("head" in side and side["head"] is None) or side.get("reason") == "missing"

    return bool((frm.get("head") and gone(to)) or (to.get("head") and gone(frm)))


def _settings_change(entry_id: str, before: dict[str, Any], after: dict[str, Any],
                     nights: tuple[Night, Night]) -> dict[str, Any] | None:
    """The entry's settings (the lock's digest of what of its manifest entry decides its commit: title,
    on_conflict, on_missing, structured_merge, supersedes, enabled) when they changed: both digests, and the
    names that changed when both nights' manifests are known (else None). None: not changed, or not known
    (a report has no settings)."""
    if not _differs(before, after, "settings"):
        return None
    entries = [night.manifest.entry(entry_id) if night.manifest else None for night in nights]
    changed = None
    if entries[0] is not None and entries[1] is not None:
        values = [entry_setting_values(night.manifest, entry)  # type: ignore[arg-type]
                  for night, entry in zip(nights, entries)]
        changed = ["enabled"] if values[0]["enabled"] != values[1]["enabled"] else \
            [name for name in values[1] if values[0][name] != values[1][name]]
    return {"from": before["settings"], "to": after["settings"], "changed": changed}


def _pin_change(entry_id: str, before: dict[str, Any], after: dict[str, Any],
                nights: tuple[Night, Night]) -> dict[str, str | None] | None:
    """The PR's pin (`head:` in each night's manifest; null: not pinned) when it was added, changed or removed, as
    full SHAs (the head the night's lock has, which the pin resolved to; else as written). None when it did not
    change, or a night's manifest is not known: a lock records the head, not whether it was pinned (h244: a pin
    added after a force-push was said `unchanged`, and nothing of it)."""
    if not entry_id.startswith("pr/") or nights[0].manifest is None or nights[1].manifest is None:
        return None
    pins: list[str | None] = []
    for night, item in zip(nights, (before, after)):
        entry = night.manifest.entry(entry_id)  # type: ignore[union-attr]
        pin = entry.head.lower() if entry is not None and entry.kind == "pr" and entry.head else None
        head = item.get("head")
        pins.append(head if pin and isinstance(head, str) and head.startswith(pin) else pin)
    return {"from": pins[0], "to": pins[1]} if pins[0] != pins[1] else None


def _unavailable(item: dict[str, Any], what: str, absent: dict[tuple[int, str], str]) -> bool:
    """Whether ITEM's WHAT (`head`, `commit`) is missing on either night; if so ITEM says which and the
    fetch that brings it."""
    missing = [absent[key] for key in ((0, f"{item['id']} {what}"), (1, f"{item['id']} {what}")) if key in absent]
    if missing:
        item["range_diff_unavailable"] = missing
    return bool(missing)


def _reason_changed(frm: dict[str, Any], to: dict[str, Any], nights: tuple[Night, Night]) -> bool:
    """Whether a skipped entry's reason changed. A lock says a reason only where its manifest does
    (`_skip_reason`: disabled, superseded), so its entry without one, beside its manifest, was neither:
    another night's `disabled` or `superseded` is a change (helper-159). A reason known on one side only
    otherwise (a lock away from its manifest, which cannot say) is no change."""
    if _differs(frm, to, "reason"):
        return True
    for side, other, night in ((frm, to, nights[0]), (to, frm, nights[1])):
        if side.get("status") == "skipped" and not side.get("reason") and night.statuses is None \
                and night.manifest is not None and other.get("reason") in _MANIFEST_REASONS:
            return True
    return False


_MANIFEST_REASONS = ("disabled", "superseded", "missing")   # the reasons a lock beside its manifest says


def _differs(before: dict[str, Any], after: dict[str, Any], key: str) -> bool:
    """Both nights know KEY and it changed (a report does not know a skipped carry's commit)."""
    return before.get(key) is not None and after.get(key) is not None and before[key] != after[key]


def _side(item: dict[str, Any], chain: dict[str, Link] | None, night: Night) -> dict[str, Any]:
    """One night's view of an entry: its pinned input, and applied/skipped as its report or chain says."""
    side = {key: item[key] for key in ("head", "commit", "patch") if item.get(key) is not None}
    if "head" in item and item["head"] is None and night.statuses is None:
        side["head"] = None             # a lock's PR whose ref was missing (skipped under `on_missing: skip`)
    link = chain.get(item["id"]) if chain is not None else None
    if night.statuses is not None:
        side.update(night.statuses.get(item["id"], {"status": "unknown"}))
        if link is not None:
            side.update(_applied(link))
    elif chain is None:
        side["status"] = "unknown"
    elif link is not None:
        side.update(status="applied", **_applied(link))
    else:
        side["status"] = "skipped"
        reason = _skip_reason(item["id"], night.manifest, missing=side.get("head", "") is None)
        if reason:
            side["reason"] = reason
    return side


def _applied(link: Link) -> dict[str, Any]:
    """What the chain says of an applied entry: its commit, its resolution, the paths a union provides."""
    out: dict[str, Any] = {"commit_in_chain": link.commit}
    if link.resolution:
        out["resolution"] = link.resolution
    if link.provided:
        out["provided_by"] = dict(link.provided)
    return out


def _skip_reason(entry_id: str, manifest: Manifest | None, *, missing: bool = False) -> str | None:
    """Why an entry was left out, when its manifest says so, or `missing` for a PR the lock has no head of
    (MISSING), neither disabled nor superseded (sync's order of reasons); the other reasons are only in that
    night's report. Without its manifest a lock cannot say (a disabled or superseded PR may have no head)."""
    entry = manifest.entry(entry_id) if manifest else None
    if entry is None:
        return None
    if not entry.enabled:
        return "disabled"
    for other in manifest.entries:  # type: ignore[union-attr]
        if other.enabled and any(f"pr/{s.pr}" == entry_id and not s.partial for s in other.supersedes):
            return "superseded"
    return "missing" if missing else None


def composed_links(git: Git, lock: dict[str, Any]) -> dict[str, Link] | None:
    """Entry id -> its commit in the lock's composed result (first parents back to upstream); None: no result."""
    result, upstream = lock.get("result"), lock["upstream"]["sha"]
    if not result:
        return None
    links: dict[str, Link] = {}
    commit = result
    for _ in range(len(lock["entries"]) + 1):
        if commit == upstream:
            break
        info = git.commit_info(commit)
        trailers = dict((m.group(1), m.group(2).strip()) for m in _TRAILER.finditer(str(info["message"])))
        if "Entry" not in trailers:
            break
        provided = tuple((m.group(1), m.group(2)) for m in _FILTERED.finditer(str(info["message"])))
        links[trailers["Entry"]] = Link(commit, trailers.get("Head"), trailers.get("Base"),
                                        trailers.get("Resolution"), provided)
        parents = info["parents"]
        if not parents:
            break
        commit = parents[0]  # type: ignore[index]
    return links


def _base(git: Git, lock: dict[str, Any], head: str, chain: dict[str, Link] | None, entry_id: str) -> str:
    link = chain.get(entry_id) if chain else None
    if link and link.base and link.head == head:
        return link.base
    return git.merge_base(lock["upstream"]["sha"], head) or head


def _parent(git: Git, commit: str) -> str:
    parents = git.commit_info(commit)["parents"]
    return parents[0] if parents else commit  # type: ignore[index,return-value]


def range_diff(git: Git, old: tuple[str, str], new: tuple[str, str]) -> list[dict[str, Any]]:
    """`git range-diff` between OLD_BASE..OLD_HEAD and NEW_BASE..NEW_HEAD, one pair per commit, full SHAs."""
    if old == new:
        return []
    olds, news = git.commits_between(*old), git.commits_between(*new)
    pairs = []
    for line in git.range_diff(old, new):
        match = _RANGE.match(line)
        if match is None:
            continue                        # a diff-of-diffs line (range-diff without -s) or a header
        left, change, right, subject = match.groups()
        pairs.append({"old": _full(left, olds), "new": _full(right, news), "change": change, "subject": subject})
    return pairs


def _full(abbrev: str, candidates: list[str]) -> str | None:
    if abbrev.startswith("-"):
        return None
    return next((sha for sha in candidates if sha.startswith(abbrev)), abbrev)


def _asserts(old: Manifest | None, new: Manifest | None) -> dict[str, Any]:
    """Asserts added, removed, and changed (the same name, another check: where it is written and its `why`
    aside) (helper-97: `times: 1` -> `max: 1` went unsaid); `known: false` when a night's manifest is not
    known (a lock file with no manifest beside it), so nothing could be compared."""
    if old is None or new is None:
        return {"added": [], "removed": [], "changed": [], "known": False}
    before = {a.name: _meaning(a) for a in old.asserts}
    after = {a.name: _meaning(a) for a in new.asserts}
    return {"added": [n for n in after if n not in before], "removed": [n for n in before if n not in after],
            "changed": [n for n in after if n in before and after[n] != before[n]], "known": True}


def _assert_results(old: Night, new: Night) -> dict[str, Any]:
    """Which asserts fail in the new night that did not in the old (`failing`, with the new night's message),
    and which failed in the old and hold in the new (`holding_again`): read from the reports' results; a lock's
    night held every assert of its manifest. Only the names each report lists are compared, so this needs no
    manifest (helper-143: the night an assert was added and failed, the diff of the two reports said only
    that a PR moved)."""
    def failed(night: Night) -> dict[str, str]:
        return {a["name"]: a["message"] for a in night.run["asserts"] if not a["ok"]} if night.run else {}

    def listed(night: Night) -> set[str] | None:     # a lock's night held its manifest's (None: not known)
        if night.run:
            return {a["name"] for a in night.run["asserts"]}
        return {a.name for a in night.manifest.asserts} if night.manifest else None

    def then(name: str) -> str:
        """What the old night says of an assert failing now: `held`, `new` (not in it), `not run` (a report of
        a run that stopped before its asserts: helper-144 read "failing now" as "held before"), `unknown`."""
        if old.run is None:
            names = listed(old)
            return "unknown" if names is None else "held" if name in names else "new"
        if any(a["name"] == name for a in old.run["asserts"]):
            return "held"
        return "not run" if not old.run["asserts"] and old.run["exit_code"] not in (0, 1) else "new"

    before, after = failed(old), failed(new)
    held_after = listed(new)
    return {"failing": [{"name": name, "message": message, "before": then(name)}
                        for name, message in after.items() if name not in before],
            "holding_again": [name for name in before if name not in after
                              and (held_after is None or name in held_after)]}


def _meaning(spec: AssertSpec) -> AssertSpec:
    """SPEC without what does not change what it checks: where it is written, its `why`, the order of its
    `args` and `after` (sets), `in_try: false` (no requirement, as when it is not written) (helper-98)."""
    return replace(spec, line=None, why=None, args=tuple(sorted(spec.args, key=repr)) if spec.args else spec.args,
                   after=tuple(sorted(spec.after)) if spec.after else spec.after, in_try=spec.in_try or None)


def _resolutions(chains: tuple[dict[str, Link] | None, dict[str, Link] | None]) -> dict[str, list[dict[str, str]]]:
    def used(chain: dict[str, Link] | None) -> list[tuple[str, str]]:
        return [(i, link.resolution) for i, link in (chain or {}).items() if link.resolution]

    if chains[0] is None or chains[1] is None:      # a night's chain not read: not known (h262), as asserts say
        return {"added": [], "removed": [], "known": False}
    before, after = used(chains[0]), used(chains[1])
    return {"added": [{"entry": i, "resolution": r} for i, r in after if (i, r) not in before],
            "removed": [{"entry": i, "resolution": r} for i, r in before if (i, r) not in after], "known": True}
