"""`carrytool status`: what upstream did with the PRs the fork carries, and what to do about each.

The forge says state, title, labels, head and merge commit; whether a merged PR really *landed* is
checked here against upstream's tree with local objects only: every hunk of the PR's own diff (base..head,
as the pipeline reads hunks) must be on upstream's branch, so a merge that upstream later partly reverted
is a `keep`, naming the hunks upstream lacks.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from carrytool.errors import InputError
from carrytool.gitlayer.env import ZERO
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.urls import is_local, redact
from carrytool.manifest.edit import in_its_line_ends, remove_entries, set_title
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.hunks import Hunk, counted, find_block, read_hunks
from carrytool.pipeline.resolve import namespace
from carrytool.pipeline.sync_warnings import moved_pin_hint, superseded_pin_hint, whole_union
from carrytool.review.forge import ForgeClient, project_path
from carrytool.review.status_has import closed_made, save_kept
from carrytool.review.status_local import Night, last_nights, said_local, upstream_pr_refs


@dataclass
class StatusResult:
    """Every PR's forge state and suggestion: the value `--format json` prints."""

    entries: list[dict[str, Any]]
    source: str
    written: list[str] = field(default_factory=list)      # what --write changed, in words
    local: bool = False        # upstream.url is a local path: no forge was asked, nor its cache (not in the JSON)

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "source": self.source}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


# -- the forge's answer, normalised ------------------------------------------------------------------------

def fetch_pr(client: ForgeClient, project: str, number: int) -> dict[str, Any]:
    """State, title, labels, head, base and merge commit of PR NUMBER; `{"missing": HTTP status}` when the
    forge has no such PR (404) or, offline, the cache does not know it (0)."""
    if client.forge == "gitlab":
        answer = client.get(f"projects/{urllib.parse.quote(project, safe='')}/merge_requests/{number}")
        body = answer.body
        if not isinstance(body, dict):
            return {"missing": answer.status}
        state = {"opened": "open", "locked": "open"}.get(_text(body, "state"), _text(body, "state"))
        labels = [lab.get("name") if isinstance(lab, dict) else str(lab) for lab in _list(body.get("labels"))]
        merged_as = _text(body, "merge_commit_sha") or _text(body, "squash_commit_sha") if state == "merged" else None
        return {"state": state if state in ("open", "closed", "merged") else "unknown", "title": _text(body, "title"),
                "labels": labels, "head": _text(body, "sha"), "merged_as": merged_as,
                "base": _text(_object(body.get("diff_refs")), "base_sha")}
    answer = client.get(f"repos/{project}/pulls/{number}")
    body = answer.body
    if not isinstance(body, dict):
        return {"missing": answer.status}
    merged = bool(body.get("merged") or body.get("merged_at"))
    labels_answer = client.get_all(f"repos/{project}/issues/{number}/labels?per_page=100")
    labels = [lab.get("name") for lab in _list(labels_answer.body) if isinstance(lab, dict)]
    return {"state": "merged" if merged else ("open" if body.get("state") == "open" else "closed"),
            "title": _text(body, "title"), "labels": labels, "head": _text(_object(body.get("head")), "sha"),
            "merged_as": _text(body, "merge_commit_sha") if merged else None,
            "base": _text(_object(body.get("base")), "sha")}


# a forge's answer (or the cache's, hand-edited) read field by field: a field of another type says nothing (h246)
def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) else None


# -- did it land? ----------------------------------------------------------------------------------------

def check_landed(git: Git, upstream: str, pr: dict[str, Any]) -> tuple[bool | None, str]:
    """(every hunk of the PR is on UPSTREAM's tree, in words); None when a needed object is not here."""
    head = pr.get("head")
    if not head or git.object_type(head) is None:
        return None, f"its head {str(head)[:12]} is not in the repository (run `carrytool sync` to fetch it)"
    merged = pr.get("merged_as")
    if merged and git.object_type(merged) != "commit":
        # merged since upstream was last fetched here: upstream as fetched lacks it, which says nothing about
        # the merge (helper-85: `keep`, "upstream lacks 7 of its 7 hunk(s)")
        return None, (f"its merge commit {merged[:12]} is not in this repository (merged since the last sync?): "
                      "run `carrytool sync`, then status again")
    base = _pr_base(git, upstream, pr)
    if base is None or base == head:
        return None, "cannot tell the PR's base commit, so not which hunks are its own"
    changes = git.diff_trees([(base, head)])[0]
    hunks = read_hunks(git, [(base, head)], [changes])[0]
    missing = [h for h in hunks if not _hunk_present(git, upstream, h)]
    if not missing:
        return True, ("the one hunk of its diff is on upstream" if len(hunks) == 1 else
                      f"all {len(hunks)} hunks of its diff are on upstream")
    shown = ", ".join(h.describe() for h in missing[:5]) + (", ..." if len(missing) > 5 else "")
    # here but not in upstream's history: merged since the last sync, or into another branch and picked
    # over (helper-86): the hunks say whether upstream has the change; the words say why it may not
    elsewhere = f" (its merge commit {merged[:12]} is not in upstream as fetched here: merged since the last " \
        "sync, or elsewhere)" if merged and not git.is_ancestor(merged, upstream) else ""
    return False, f"upstream lacks {len(missing)} of its {counted(len(hunks))}: {shown}{elsewhere}"


def _pr_base(git: Git, upstream: str, pr: dict[str, Any]) -> str | None:
    """Where the head forked from the forge's base (GitHub's `base.sha` is the base branch's tip when the PR
    was last updated, not its fork point: helper-85, other PRs merged since counted as the PR's own hunks,
    reversed; GitLab's `diff_refs.base_sha` is the fork point already); else where it forked from upstream
    before the merge commit."""
    if pr.get("base") and git.object_type(pr["base"]) == "commit":
        fork = git.merge_base(pr["base"], pr["head"]) or pr["base"]
        if fork != pr["head"]:          # a base that holds the head (merged by hand, fast-forward): below
            return fork
    merged = pr.get("merged_as")
    if merged and git.object_type(merged) == "commit":
        parents = git.commit_info(merged)["parents"]
        if parents:
            return git.merge_base(parents[0], pr["head"])  # type: ignore[index]
    return git.merge_base(upstream, pr["head"])


def _hunk_present(git: Git, upstream: str, hunk: Hunk) -> bool:
    """The hunk's added lines are in upstream's file (a deletion: its removed lines are gone from it)."""
    blob = git.blob_at(git.tree_of(upstream), hunk.path)
    if hunk.kind != "text":
        if blob is None:
            return hunk.new_oid in (None, ZERO)
        return blob[1] == hunk.new_oid
    if blob is None:
        return not hunk.added
    lines = git.read_blob(blob[1]).split(b"\n")
    if hunk.added:
        return bool(find_block(lines, hunk.added))
    return not find_block(lines, hunk.removed)


# -- suggestions -----------------------------------------------------------------------------------------

def gather_status(manifest: Manifest, git: Git, client: ForgeClient, *, lock: dict[str, Any] | None) -> StatusResult:
    """Ask the forge about every carried and superseded PR and suggest keep/drop/refold/retitle/investigate.
    A local-path upstream (`/path/to/up.git`, `file://...`) has no forge: offline, each PR is told from this
    repository alone, as a PR the forge cache does not know (h185: it was exit 2, "cannot tell the forge
    project"); online it is exit 2, saying so and what to run."""
    url = manifest.upstream.url
    local = is_local(url) or url.lower().startswith("file://")
    if local and not client.offline:
        raise InputError(f"upstream.url {redact(url)} is a local path, which has no forge to ask about PRs",
                         where=str(manifest.path),
                         hint="`carrytool status --offline` says what this repository tells of each PR (the heads "
                              "the last sync fetched, and whether upstream holds them); to ask the forge, set "
                              "upstream.url to its URL and fetch from the local copy all the same with `git config "
                              "url./path/to/up.git.insteadOf https://github.com/OWNER/REPO`")
    project = None if local else project_path(url)
    upstream = _upstream(git, manifest, lock)
    known = _known_heads(git, manifest, lock)
    nights = last_nights(manifest, git, lock) if local else []
    folded = {sup.pr: (entry, sup.head) for entry in manifest.entries for sup in entry.supersedes if sup.head}
    numbers = [e.number for e in manifest.entries if e.kind == "pr"]
    numbers += [n for e in manifest.entries for n in (s.pr for s in e.supersedes) if n not in numbers]
    refs = upstream_pr_refs(manifest, git, list(dict.fromkeys(numbers))) if local else None
    try:
        items = [_pr_status(manifest, git, client, project, number, upstream, known, folded.get(number), nights,
                            refs) for number in dict.fromkeys(numbers)]
    finally:
        client.save()       # what was learnt before a failure is reused next time (ETags)
        save_kept(git)      # what upstream has of the PRs weighed: the file written once a run
    return StatusResult(items, "cache" if client.offline else "api", local=local)


def _pr_status(manifest: Manifest, git: Git, client: ForgeClient, project: str | None, number: int,
               upstream: str | None, heads: dict[int, str], folded: tuple[Any, str] | None,
               nights: list[Night], refs: set[str] | None = None) -> dict[str, Any]:
    """One PR: the forge's answer (none when PROJECT is None: a local-path upstream, told from this repository,
    the last NIGHTS and the PR REFS it has now), whether it landed, and the suggestion."""
    entry = manifest.entry(f"pr/{number}")
    known = heads.get(number)
    pr = fetch_pr(client, project, number) if project is not None else {"missing": 0}
    item = {"id": f"pr/{number}", "state": "unknown", "title": None, "labels": [], "head": None,
            "merged_as": None, "landed": None}
    here = upstream_holds(git, upstream, known) if "missing" in pr and client.offline else None
    if here:
        item.update(head=known, suggestion="investigate",
                    why=_said_offline(git, upstream, number, heads, *here, local=project is None))
    elif project is None:
        item.update(said_local(manifest, git, upstream, number, known, nights, refs))
    elif "missing" in pr:
        item.update(suggestion="investigate",
                    why="not in the cache: run without --offline" if pr["missing"] != 404
                    else f"the forge has no PR {number} (404)")
    else:
        item.update({k: pr[k] for k in ("state", "title", "labels", "head", "merged_as")})
        if pr["state"] == "merged":
            item["landed"], landed_why = (check_landed(git, upstream, pr) if upstream
                                          else (None, "upstream is not fetched here (run `carrytool sync`)"))
        else:
            landed_why = ""
        item.update(_suggest(item, landed_why, entry.title if entry else None, known, folded,
                             _pin_passed(manifest, entry, item["head"])))
        if pr["state"] == "closed" and entry is not None and upstream:
            item.update(closed_made(git, entry, upstream, item["head"], item["why"]) or {})
    if entry is None:
        item["superseded_only"] = True
    return item


def upstream_holds(git: Git, upstream: str | None, head: str | None) -> tuple[dict[str, Any], str] | None:
    """Offline, of a PR the forge cache does not know: (the PR as `check_landed` reads it, in words why) when
    upstream has its commits as the last sync fetched them: its HEAD is in UPSTREAM's history (with the commit
    that merged it and the base, as `Git.merged_in` finds them), or merging it onto upstream changes nothing
    (`Git.upstream_has`: squashed or picked); else None. This is not the PR's merge: an open PR with nothing
    pushed since another PR's merge, or none of its own yet, looks the same (h194)."""
    if not upstream or not head or git.object_type(head) != "commit":
        return None
    said = f"its head {head[:12]} (as the last sync fetched it)"
    if git.is_ancestor(head, upstream):
        merge = git.merged_in(upstream, head)
        return ({"head": head, "merged_as": merge[0] if merge else None, "base": merge[1] if merge else None},
                f"{said} is in upstream's history" + (f", merged by {merge[0][:12]}" if merge else ""))
    if git.upstream_has(upstream, [head])[0]:
        return ({"head": head, "merged_as": None, "base": None},
                f"{said} is not in upstream's history, but merging it onto upstream changes nothing (squashed or "
                "picked)")
    return None


def _said_offline(git: Git, upstream: str | None, number: int, heads: dict[int, str], pr: dict[str, Any],
                  evidence: str, *, local: bool = False) -> str:
    """The `why` of a PR only this repository tells of: what upstream holds of it and whether its hunks are on
    upstream, never that it was merged (h187 said `merged`, and `--write` dropped an open PR's entry, h194):
    `investigate` until the forge confirms."""
    others = [f"pr/{n}" for n, head in heads.items() if n != number and head == pr["head"]]
    if others:      # another PR's hunks measured as its own (h194: pr/2 at pr/1's head was `drop`)
        landed_why = f"its head is {', '.join(others)}'s too, so which hunks are its own cannot be told here"
    else:
        landed_why = check_landed(git, upstream, pr)[1]  # type: ignore[arg-type]
    confirm = "upstream.url is a local path, with no forge to ask: check the PR where it is reviewed" if local \
        else "confirm online, run without --offline"
    return (f"upstream has its commits, as this repository tells: {evidence}; {landed_why}; whether the PR was "
            f"merged is the forge's to say (an open PR with nothing pushed since looks the same here): {confirm}")


def _pin_passed(manifest: Manifest, entry: Entry | None, head: str | None) -> str | None:
    """The words for a PR whose entry pins (`head:`) another head than HEAD, the forge's: pushed since the pin,
    which sync composes (h244: "open upstream", the pin unsaid); None when it is not pinned, or at the pin. Of a
    PR a union supersedes whole, what sync's `stale-pin` says: the pin changes nothing there (h251). None for a
    disabled entry, which sync composes nothing of and warns no `stale-pin` for (h253's review)."""
    if entry is None or not entry.enabled or not entry.head or not head or head.startswith(entry.head.lower()):
        return None
    union = whole_union(manifest, entry.number)  # type: ignore[arg-type]
    hint = f"; {superseded_pin_hint(union, head)}" if union is not None else f": {moved_pin_hint(head)}"
    return (f"pinned to {entry.head[:12]} by its entry's `head:` ({manifest.path}:{entry.line}), but the PR's head is "
            f"now {head[:12]}{hint}")


def _suggest(item: dict[str, Any], landed_why: str, title: str | None, known: str | None,
             folded: tuple[Any, str] | None, pinned: str | None = None) -> dict[str, str]:
    state, head = item["state"], item["head"] or ""
    if state == "merged":
        merged = f"merged upstream as {str(item['merged_as'])[:12]}"
        if item["landed"] is True:
            return {"suggestion": "drop", "why": f"{merged}; {landed_why}"}
        if item["landed"] is False:
            return {"suggestion": "keep", "why": f"{merged}, but {landed_why}"}
        return {"suggestion": "investigate", "why": f"{merged}; {landed_why}"}
    if state == "closed":
        return {"suggestion": "investigate", "why": "closed upstream without merging: the fork now carries it alone"}
    # one suggestion, the strongest; what the others would have said goes into its `why` (an older note: a
    # retitle hid that the head had moved)
    retitled = title is not None and item["title"] is not None and title != item["title"]
    moved = bool(pinned or (known and head and known != head))
    said_title = f"the title upstream is now {item['title']!r} (manifest: {title!r})"
    # a pinned PR's lock head is the pin: the next sync composes it again, so a move is the pin's words (h244)
    said_moved = pinned or f"its head moved {str(known)[:12]} -> {head[:12]} since the last sync (`carrytool diff` " \
        "after the next sync shows what changed)"
    if folded and head and not head.startswith(folded[1]):
        union = folded[0].name
        why = f"{folded[0].id} folded {folded[1][:12]}, its head is now {head[:12]}: run `carrytool union compose {union}`"
        # a pin the PR was pushed past is what sync's `stale-pin` warns of beside `stale-fold`: said alike (h256)
        why += f"; also, {pinned}" if pinned else ""
        return {"suggestion": "refold", "why": why + (f"; also, {said_title}" if retitled else "")}
    if retitled:
        return {"suggestion": "retitle", "why": said_title + (f"; also, {said_moved}" if moved else "")}
    if moved:
        return {"suggestion": "keep", "why": f"open; {said_moved}"}
    return {"suggestion": "keep", "why": "open upstream"}


def _upstream(git: Git, manifest: Manifest, lock: dict[str, Any] | None) -> str | None:
    sha = git.ref_value(f"{namespace(manifest)}/upstream") or (lock or {}).get("upstream", {}).get("sha")
    return sha if sha and git.object_type(sha) == "commit" else None


def _known_heads(git: Git, manifest: Manifest, lock: dict[str, Any] | None) -> dict[int, str]:
    """PR heads as the last sync saw them: the lock, else what refs/carrytool holds."""
    heads = {int(n.split("/")[-1]): sha for n, sha in git.refs(f"{namespace(manifest)}/pr/").items()
             if n.split("/")[-1].isdigit()}
    for item in (lock or {}).get("entries", []):
        number = item["id"][3:]
        if item.get("head") and item["id"].startswith("pr/") and number.isascii() and number.isdigit():
            heads[int(number)] = item["head"]       # (a hand edit, `pr/abc`, names no PR: h246)
    return heads


# -- --write ---------------------------------------------------------------------------------------------

def apply_status(manifest: Manifest, result: StatusResult) -> tuple[str, list[str]]:
    """The manifest's text with the drops and title updates of RESULT applied (nothing else), and what changed."""
    done: list[str] = []

    def edit(text: str) -> str:
        drops = []
        for item in result.entries:
            entry = manifest.entry(item["id"])
            if entry is None:
                continue
            # a refold's `why` may say the title changed too (one suggestion per PR): it is applied as well
            if item["suggestion"] == "retitle" or (item["suggestion"] == "refold" and entry.title is not None and
                                                   item.get("title") is not None and item["title"] != entry.title):
                text = set_title(text, entry.index, item["title"])
                done.append(f"{item['id']}: title set to {item['title']!r}")
            elif item["suggestion"] == "drop":
                drops.append(entry.index)
                done.append(f"{item['id']}: removed (merged upstream)")
        return remove_entries(text, drops) if drops else text

    return in_its_line_ends(manifest.text, edit), done
