"""`carrytool status --offline` of a PR of a local-path upstream, which no forge tells of: what this repository
says of it, from the syncs' records (`refs/carrytool/<branch>/nights`, else the lock) and the merge of its head
onto upstream, as sync merges a PR alone.

h213 and h214 found it said `keep`, "merging it onto upstream changes something: sync keeps carrying it", of a
PR that sync skipped every night for a conflict (with upstream, or with an entry before it), never having
merged it; and "run `carrytool sync` to fetch it" of a PR whose ref upstream deleted, which sync cannot fetch.
h219 found `keep`, "carry/u provides it: sync carries that", of the PRs of a union the syncs never applied; the
sync loop again of a PR only partly superseded and no entry (no sync fetches it); and "an entry before it
conflicts with it" of a PR skipped as `precompiled`. h259 found `keep`, "the last sync carried it", of a PR whose
ref upstream deleted since: the upstream path's PR refs are read (one `ls-remote`, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from carrytool.errors import GitError
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.urls import resolve_local, url_problem
from carrytool.manifest.model import Manifest
from carrytool.pipeline.lock import lock_path
from carrytool.pipeline.night_record import nights_ref, recorded_locks
from carrytool.pipeline.plan import PENDING, Step, plan_paths
from carrytool.pipeline.resolve import namespace
from carrytool.review.diff import composed_links
from carrytool.review.status_has import has_of, suggested

NO_FORGE = "upstream.url is a local path: no forge says the PR's state"
Night = tuple[str, dict[str, Any]]          # (where it is recorded, the lock document)


def last_nights(manifest: Manifest, git: Git, lock: dict[str, Any] | None) -> list[Night]:
    """What the syncs composed from, newest first: the night records (red nights too), else the lock file."""
    nights = recorded_locks(manifest, git)
    if not nights and lock:
        nights = [(str(lock_path(manifest)), lock)]
    return nights


def said_local(manifest: Manifest, git: Git, upstream: str | None, number: int, head: str | None,
               nights: list[Night], refs: set[str] | None = None) -> dict[str, Any]:
    """The head, suggestion and why of PR NUMBER, of which upstream holds nothing (`upstream_holds` said no),
    HEAD as the last sync fetched it (None: not fetched), REFS the PR refs upstream has now (`upstream_pr_refs`;
    None: not known): `keep` only when sync carries it, as far as this repository tells; `investigate` when it
    conflicts, was left out, or its ref is gone."""
    if not upstream:
        return {"suggestion": "investigate",
                "why": f"{NO_FORGE}, and upstream is not fetched here (run `carrytool sync`)"}
    fetched = bool(head) and git.object_type(head) == "commit"      # type: ignore[arg-type]
    shown = {"head": head} if fetched else {}
    left_out = _left_out_by_manifest(manifest, git, number, nights)
    if left_out:
        return {**shown, "suggestion": left_out[0], "why": f"{NO_FORGE}; {left_out[1]}"}
    partly = _partly_provided(manifest, number)
    if partly:
        return {**shown, "suggestion": "investigate", "why": f"{NO_FORGE}; {partly}"}
    gone = _gone(manifest, git, number, nights) if not fetched else None
    if gone:
        return {"suggestion": "investigate", "why": f"{NO_FORGE}; {gone}"}
    deleted = _deleted_since(manifest, number, head if fetched else None, refs)
    if deleted:
        return {**shown, "suggestion": "investigate", "why": f"{NO_FORGE}; {deleted}"}
    if not fetched:
        return {"suggestion": "investigate",
                "why": f"{NO_FORGE}, and its head is not in this repository (run `carrytool sync` to fetch it)"}
    assert head is not None
    said = f"{NO_FORGE}; as this repository tells, its head {head[:12]} ({_fetched_as(manifest, git, number, head)})"
    explain = f"`carrytool explain pr/{number}`"
    carried = _carried(git, upstream, f"pr/{number}", head, nights)
    if carried:
        return {"head": head, "suggestion": "keep",
                "why": f"{said} is not in upstream's history, and the last sync carried it onto this upstream"}
    skipped = _skipped_by_policy(manifest, git, upstream, number, head)
    if skipped:
        return {"head": head, "suggestion": "investigate", "why": f"{said}: {skipped}: run {explain}"}
    merge = git.merge_trees([(upstream, head)])[0]     # as sync merges a PR alone (upstream_holds merged it too)
    if not merge.clean:
        how = _on_conflict(manifest, number, carried)
        files = ", ".join(merge.conflicted_files) or "its tree"
        made = _upstream_made(manifest, git, upstream, number, head)
        if made is not None:
            return {"head": head, **made(f"{said} conflicts with upstream in {files}: "
                                         f"{how or 'on_conflict: theirs takes its side'}", explain)}
        if how is None:
            return {"head": head, "suggestion": "keep",
                    "why": f"{said} conflicts with upstream in {files}, which `on_conflict: theirs` resolves in its "
                           "favour: sync carries it, and an upstream-loss warning says what upstream lost"}
        return {"head": head, "suggestion": "investigate",
                "why": f"{said} conflicts with upstream in {files}: {how}; run {explain}"}
    if carried is False:
        why = _left_out_why(git, nights[0][1], f"pr/{number}", head)
        if why is not None and why[0] == "keep":
            return {"head": head, "suggestion": "keep",
                    "why": f"{said} merges onto upstream alone, and the last sync, from this upstream and head, "
                           f"{why[1]} ({explain} says more)"}
        if why is not None:
            return {"head": head, "suggestion": "investigate",
                    "why": f"{said} merges onto upstream alone, but the last sync, from this upstream and head, did "
                           f"not carry it: {why[1]}: run {explain}"}
        return {"head": head, "suggestion": "investigate",
                "why": f"{said} merges onto upstream alone, but the last sync, from this upstream and head, did not "
                       f"carry it (an entry before it conflicts with it, or provides it already): run {explain}"}
    return {"head": head, "suggestion": "keep",
            "why": f"{said} is not in upstream's history and merges onto it alone: sync carries it unless an entry "
                   f"before it conflicts with it ({explain} says)"}


def _upstream_made(manifest: Manifest, git: Git, upstream: str, number: int, head: str
                   ) -> Callable[[str, str], dict[str, str]] | None:
    """Of PR NUMBER, which conflicts with UPSTREAM alone: what upstream already has of it, as explain says
    (review.status_has), as a function of the words so far and the explain command giving the suggestion and
    why: `drop` when upstream has every hunk, naming the commit that made them, else `investigate`; None when
    upstream has none of it (or it is no entry of its own: nothing to drop)."""
    entry = manifest.entry(f"pr/{number}")
    had = has_of(git, entry, upstream, head) if entry is not None else None
    if had is None:
        return None

    def said(words: str, explain: str) -> dict[str, str]:
        return suggested(had, words, f" ({explain} says more)", f"; run {explain}")
    return said


def _left_out_why(git: Git, doc: dict[str, Any], entry_id: str, head: str) -> tuple[str, str] | None:
    """Why the night DOC, whose chain lacks ENTRY_ID (which merges onto upstream alone), left HEAD out, as its
    branch tells: merged onto each commit of the entries before it (one merge-tree batch), the first that has
    its change already (merging it there changes nothing: sync found it `redundant`), or the first it
    conflicts with. (suggestion, words); None when neither (h248: the lock records no reason, and status said
    "an entry before it conflicts with it, or provides it already")."""
    links = _links(git, doc)
    ids = [e.get("id") for e in doc.get("entries", []) if isinstance(e, dict)]
    earlier = [(i, links[i].commit) for i in ids[:ids.index(entry_id)] if links and i in links]
    if not earlier:
        return None
    merges = git.merge_trees([(commit, head) for _i, commit in earlier])
    tip = merges[-1]            # as sync merged it: onto the chain before it
    conflicts = not tip.clean
    if tip.clean and tip.tree != git.tree_of(earlier[-1][1]):
        return None             # it would change the chain: not why it was left out
    for (other, commit), merged in zip(earlier, merges):
        if conflicts and not merged.clean:
            files = ", ".join(merged.conflicted_paths) or "its tree"
            return "investigate", (f"it conflicts with {other} in {files} (merged onto the last sync's branch from "
                                    f"{other} on)")
        if not conflicts and merged.clean and merged.tree == git.tree_of(commit):
            return "keep", (f"found nothing left to apply after {other} (redundant): the fork has its change while "
                            f"{other} carries it")
    return None


def _links(git: Git, doc: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return composed_links(git, doc)
    except GitError:
        return None


def _fetched_as(manifest: Manifest, git: Git, number: int, head: str) -> str:
    """How HEAD came: as the last sync fetched the PR's ref; else, the ref the last sync fetched being elsewhere,
    the entry's pin (`head:`) or the lock's head (a red night since wrote none), and where the ref is (h239: a pin,
    and the lock's head after a red night that fetched another, were said to be the head the last sync fetched)."""
    entry = manifest.entry(f"pr/{number}")
    fetched = git.ref_value(f"{namespace(manifest)}/pr/{number}")
    if not fetched or fetched == head:
        return "as the last sync fetched it"
    if entry is not None and entry.head and head.startswith(entry.head):     # (a pin set since: the lock's, h246)
        return (f"pinned by its entry's `head:`; the PR's ref, as the last sync fetched it, is at {fetched[:12]}: "
                f"pushed since the pin, carried only once you move the pin (`head: {fetched}` in its entry, then "
                "`carrytool sync`) or remove it")
    # the lock's head: a later sync fetched another and wrote no lock (a red night, --dry-run)
    return (f"as the lock's night composed it; the PR's ref, as the last sync fetched it, is at {fetched[:12]}: "
            "pushed since, and not in a published night yet (`carrytool diff` with that night's report says more)")


def _left_out_by_manifest(manifest: Manifest, git: Git, number: int, nights: list[Night]
                          ) -> tuple[str, str] | None:
    """(suggestion, why) when sync never applies PR NUMBER itself, as the manifest says: disabled, provided
    whole by a union, which carries it only if the last sync applied it (its composed chain holds it), or, with
    no entry of its own, stood for by disabled unions alone."""
    entry = manifest.entry(f"pr/{number}")
    for other in manifest.entries:      # before its own entry's state: a union carries it, disabled or not (h226)
        if other.enabled and any(s.pr == number and not s.partial for s in other.supersedes):
            if _applied(git, other.id, nights) is False:
                return "investigate", (
                    f"{other.id} provides it (`supersedes`), but the last sync did not apply {other.id} (its "
                    "composed chain lacks it): its change is in the fork only if upstream already has it; run "
                    f"`carrytool explain {other.id}`")
            return "keep", f"{other.id} provides it (`supersedes`): sync carries that, not the PR itself"
    if entry is not None and not entry.enabled:
        return "keep", "its entry is disabled (`enabled: false`): sync leaves it out"
    # no entry of its own, and the unions that stand for it all disabled: nothing carries it (h226: said `keep`)
    standing = [other for other in manifest.entries if any(s.pr == number for s in other.supersedes)]
    off = list(dict.fromkeys(other.id for other in standing))
    if entry is None and off and not any(other.enabled for other in standing):
        ids, one = " and ".join(off), len(off) == 1
        parts = [s.paths if s.partial else None for other in standing for s in other.supersedes if s.pr == number]
        if None not in parts:   # for some paths only: enabling them carries those alone (h236)
            paths = ", ".join(dict.fromkeys(p for ps in parts for p in ps))  # type: ignore[union-attr]
            said = "provides its" if one else "provide its"
            whose = "its entry is" if one else "their entries are"
            return "investigate", (
                f"only {ids} {said} {paths} (`supersedes` paths), and {whose} disabled (`enabled: false`): sync carries "
                f"none of it, so its change is in the fork only if upstream already has it; to carry it, add "
                f"`- pr: {number}` to the manifest's entries")
        said = "provides it (`supersedes`), and its entry is" if one else \
            "provide it (`supersedes`), and their entries are"
        return "investigate", (
            f"only {ids} {said} disabled (`enabled: false`): sync carries none of them, so its change is in the fork "
            f"only if upstream already has it; to carry it, enable {ids} or add `- pr: {number}` to the manifest's "
            "entries")
    return None


def _applied(git: Git, entry_id: str, nights: list[Night]) -> bool | None:
    """Whether the last sync's composed chain holds ENTRY_ID (a red night's too: it composed nothing past its
    failure); None when that night does not list it, or its chain cannot be read."""
    if not nights:
        return None
    doc = nights[0][1]
    if not any(isinstance(e, dict) and e.get("id") == entry_id for e in doc.get("entries", [])):
        return None
    return _holds(git, doc, entry_id)


def _holds(git: Git, doc: dict[str, Any], entry_id: str) -> bool | None:
    """Whether the chain the night DOC composed holds ENTRY_ID; None when it cannot be read."""
    try:
        links = composed_links(git, doc)
    except GitError:        # a record whose commits are gone (gc, a hand edit) says nothing
        return None
    return None if links is None else entry_id in links


def _partly_provided(manifest: Manifest, number: int) -> str | None:
    """The words for PR NUMBER when no entry is its own and unions provide only some of its paths: sync never
    fetches its head (no entry carries it whole), and its other paths are in no entry. None otherwise."""
    if manifest.entry(f"pr/{number}") is not None:
        return None
    parts = [(other.id, sup.paths) for other in manifest.entries if other.enabled
             for sup in other.supersedes if sup.pr == number and sup.partial]
    if not parts:
        return None
    ids = " and ".join(dict.fromkeys(i for i, _paths in parts))
    paths = ", ".join(dict.fromkeys(p for _i, ps in parts for p in ps))
    return (f"no entry carries it whole, so sync never fetches its head: only its {paths} comes through {ids} "
            f"(`supersedes` paths), and its other paths are in no entry; to carry them, add `- pr: {number}` to the "
            f"manifest's entries ({ids} keeps {paths}), or widen {ids}'s `supersedes` paths")


def _skipped_by_policy(manifest: Manifest, git: Git, upstream: str, number: int, head: str) -> str | None:
    """Why sync skips PR NUMBER for what its diff (from its merge base with UPSTREAM to HEAD) touches, as the
    planner says it (`precompiled`, or every path provided by unions); None when it does not. The night records
    hold what was composed, not each entry's status, so the planner's own rule is asked again."""
    entry = manifest.entry(f"pr/{number}")
    base = git.merge_base(upstream, head)
    if entry is None or base is None:
        return None
    step = Step(entry)
    step.all_changes = git.diff_trees([(base, head)])[0]
    plan_paths(manifest, [step])
    if step.status == PENDING or step.reason is None:
        return None
    return f"sync skips it as {step.reason}: it {step.detail}" if step.reason == "precompiled" \
        else f"sync skips it as {step.reason} ({step.detail})"


def _carried(git: Git, upstream: str, entry_id: str, head: str, nights: list[Night]) -> bool | None:
    """Whether the last sync's composed chain holds ENTRY_ID, when that sync composed from UPSTREAM and HEAD (a
    red night, which composed nothing past its failure, too); None when it did not, or cannot be read."""
    if not nights:
        return None
    _where, doc = nights[0]
    item = next((e for e in doc.get("entries", []) if isinstance(e, dict) and e.get("id") == entry_id), None)
    if doc.get("upstream", {}).get("sha") != upstream or item is None or item.get("head") != head:
        return None
    return _holds(git, doc, entry_id)


def _on_conflict(manifest: Manifest, number: int, carried: bool | None) -> str | None:
    """What sync does with PR NUMBER, which conflicts with upstream alone; None: it takes its side (`theirs`)
    and carried it, or would."""
    entry = manifest.entry(f"pr/{number}")
    policy = manifest.on_conflict(entry) if entry is not None else manifest.policy.on_conflict
    if policy == "theirs" and carried is not False:
        return None
    how = {"skip": "sync skips it (on_conflict: skip)", "fail": "sync stops on it (on_conflict: fail, exit 3)"} \
        .get(policy, "the last sync did not carry it")
    if entry is not None and manifest.structured_paths(entry) and carried is None:
        how += ", unless its structured merge resolves the conflict"
    return how


def _gone(manifest: Manifest, git: Git, number: int, nights: list[Night]) -> str | None:
    """The words for PR NUMBER when the last sync found no ref of it upstream (the lock's `"head": null`, reason
    `missing`): no sync can fetch it; the last head a night recorded, and what to do. None when it did not."""
    entry_id = f"pr/{number}"
    if not nights:
        return None
    last = next((e for e in nights[0][1].get("entries", []) if isinstance(e, dict) and e.get("id") == entry_id), None)
    if last is None or "head" not in last or last["head"] is not None:
        return None
    said = (f"upstream has no {manifest.upstream.pr_ref_for(number)} any more, so the last sync skipped it as "
            "missing (closed and its ref deleted, or a wrong number), and no sync can fetch it again")
    seen, where = next(((e["head"], where) for where, doc in nights for e in doc.get("entries", [])
                        if isinstance(e, dict) and e.get("id") == entry_id and isinstance(e.get("head"), str)),
                       (None, ""))
    next_step = f"check the PR where it is reviewed: to stop carrying it, remove `- pr: {number}` from the manifest"
    if seen is None:
        return f"{said}; no night recorded here has its head; {next_step}"
    record = nights_ref(manifest) if where.startswith(nights_ref(manifest)) else where
    said += f"; the last head a sync fetched was {seen[:12]} ({record})"
    if git.object_type(seen) == "commit":
        next_step += f"; to keep carrying that head, pin it in the entry (`head: {seen}`: this repository has it)"
    return f"{said}; {next_step}"


def upstream_pr_refs(manifest: Manifest, git: Git, numbers: list[int]) -> set[str] | None:
    """Which of the refs of PRs NUMBERS the local-path upstream has now: one `git ls-remote` of its path (a
    read of this machine's files, no network); None when it cannot be read (then nothing is said of them)."""
    refs = [manifest.upstream.pr_ref_for(number) for number in numbers]
    url = resolve_local(manifest.upstream.url, manifest.base_dir)
    if not refs or url_problem(url):
        return None
    listed = git.run("ls-remote", "--end-of-options", url, *refs, check=False)
    if listed.returncode != 0:
        return None
    names = {line.partition("\t")[2] for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines()}
    return names & set(refs)


def _deleted_since(manifest: Manifest, number: int, head: str | None, refs: set[str] | None) -> str | None:
    """The words for PR NUMBER when upstream has no ref of it now (REFS: the refs it has), though no sync said
    so yet (h259: `keep`, "the last sync carried it", of a PR whose ref upstream deleted since): this repository
    cannot tell why; what the next sync does, and what to do. None when it has the ref, REFS is not known, or
    the entry pins its head (sync composes the pin) or is disabled (sync fetches nothing of it)."""
    entry = manifest.entry(f"pr/{number}")
    ref = manifest.upstream.pr_ref_for(number)
    if refs is None or ref in refs or entry is None or entry.head or not entry.enabled:
        return None
    next_sync = "skips it as missing (on_missing: skip)" if manifest.on_missing(entry) == "skip" \
        else "stops on it (on_missing: fail, exit 2)"
    since = f"deleted since the last sync, which fetched its head {head[:12]}" if head else \
        "no sync here fetched it: a wrong number, or closed and its ref deleted"
    said = (f"upstream has no {ref} now ({since}): whether the PR was merged or closed cannot be told here, with no "
            f"forge to ask; the next sync {next_sync}")
    next_step = f"check the PR where it is reviewed: to stop carrying it, remove `- pr: {number}` from the manifest"
    if head:
        next_step += f"; to keep carrying that head, pin it in the entry (`head: {head}`: this repository has it)"
    return f"{said}; {next_step}"
