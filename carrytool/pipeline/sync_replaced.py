"""The commits the fork branch had that sync did not make and its result does not have
(`replaced-commits`): found, said, and kept under refs/carrytool/<branch>/replaced/<tip> before the
branch is replaced."""

from __future__ import annotations

from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.hunks import counted
from carrytool.pipeline.plan import APPLIED
from carrytool.pipeline.report import Report
from carrytool.pipeline.resolve import namespace
from carrytool.pipeline.sync_records import Planned


def replaced_ref(manifest: Manifest, previous: str) -> str:
    return f"{namespace(manifest)}/replaced/{previous}"


def replaced_commits(manifest: Manifest, git: Git, tip: str | None, planned: Planned, last: str | None,
                     limit: int = 1000) -> list[tuple[str, str, bool, str | None]]:
    """(SHA, subject, carried, copy of) of the commits TIP (the fork branch before the run) has that sync did not make
    and the composed result does not have: committed or pushed onto the generated branch by hand, or a
    branch that was something else before carrytool was pointed at it (the old cherry-pick loop's).
    Newest first, at most LIMIT. Sync's own commits say so (a `Carry-Entry:` trailer, committed by the
    manifest's identity); upstream's are in upstream or in LAST, the last night's result (the lock's). None at all
    when TIP's tree is the result's but for the commits that change no file (helper-87: an empty commit, a
    release marker, went without a word, and no ref kept it; the old cherry-pick loop's merges and picks,
    whose changes the result has, go unsaid).
    CARRIED: the commit's patch is the patch of a commit an entry of the manifest carries (`git patch-id`):
    its change is composed anyway. COPY OF: else the entry one of whose commits has the same subject (the
    old loop's cherry-pick of a PR the manifest carries, resolved otherwise: helper-107, a migration's picks
    were all "committed by hand?")."""
    result = planned.composition.result if planned.composition else None
    if tip is None or result is None or tip == result or last == tip:
        return []
    upstream = planned.resolved.upstream
    known = [sha for sha in (result, upstream, last) if sha and git.object_type(sha) == "commit"]
    out = git.run("log", f"--max-count={limit}", "--format=%H%x1f%cn <%ce>%x1f%s%x1f%B%x1e", tip, "--not", *known,
                  "--", check=False).stdout.decode("utf-8", "replace")
    me = f"{manifest.identity.name} <{manifest.identity.email}>"
    unmade = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != 4:
            continue
        sha, committer, subject, body = fields
        if committer != me or not any(line.startswith("Carry-Entry: ") for line in body.splitlines()):
            unmade.append((sha, subject))
    if not unmade:
        return []
    carried = _patch_ids(git, ["--no-walk=unsorted", *(sha for sha, _ in unmade)])
    # the entries the result has (applied): a skipped PR's cherry-pick is not carried (helper-77)
    entries = [s.head for s in planned.steps if s.status == APPLIED and s.head]
    ours = set(_patch_ids(git, [*entries, "--not", upstream, *planned.resolved.patch_bases.values()]).values()) \
        if entries else set()
    if git.tree_of(tip) == git.tree_of(result):
        # the result's files: only what changes no file is lost (helper-90: a migration's merges and squashed
        # picks were named, though each change they made is in the result)
        return [(sha, subject, False, None) for sha, subject in unmade if _changes_nothing(git, sha)]
    out = [(sha, subject, carried.get(sha) in ours) for sha, subject in unmade]
    copies = _subjects(git, planned) if any(not was for _sha, _subject, was in out) else {}
    return [(sha, subject, was, None if was else copies.get(subject)) for sha, subject, was in out]


def _subjects(git: Git, planned: Planned) -> dict[str, str]:
    """Subject -> the first applied entry (manifest order) one of whose own commits (not a merge) has it. A
    skipped entry's pick is not its copy in the result: the result has no such change (helper-109)."""
    steps = [s for s in planned.steps if s.head and s.status == APPLIED]
    if not steps:
        return {}
    out: dict[str, str] = {}
    for step in steps:        # one log per entry: its commits alone (a log of several would not say whose)
        log = git.run("log", "--no-merges", "--max-count=500", "--format=%s", step.head, "--not",
                      planned.resolved.upstream, *([step.base] if step.base else []), "--",
                      check=False).stdout.decode("utf-8", "replace")
        for subject in log.splitlines():
            if subject.strip():
                out.setdefault(subject, step.id)
    return out


def _changes_nothing(git: Git, sha: str) -> bool:
    """SHA is a commit with one parent and its parent's tree (an empty commit)."""
    parents = git.commit_info(sha)["parents"]
    return len(parents) == 1 and git.tree_of(sha) == git.tree_of(parents[0])  # type: ignore[arg-type,index]


def _patch_ids(git: Git, revs: list[str]) -> dict[str, str]:
    """commit -> its `git patch-id --stable` for the commits `git log REVS` lists (merges have none)."""
    log = git.run("log", "-p", "--no-merges", "--no-color", "--format=commit %H", *revs, "--", check=False).stdout
    if not log:
        return {}
    out = git.run("patch-id", "--stable", input=log, check=False).stdout.decode("ascii", "replace")
    return {commit: patch for patch, commit in (line.split() for line in out.splitlines() if len(line.split()) == 2)}


def _replaced_warning(manifest: Manifest, previous: str, replaced: list[tuple[str, str, bool, str | None]],
                      remote: bool, *, same_tree: bool = False) -> dict[str, object]:
    """The replaced-commits warning for the tip PREVIOUS; its message ends once the run knows whether it
    replaced that branch (`_say_what_was_replaced`). SAME_TREE: PREVIOUS has the result's files."""
    branch = manifest.fork.branch
    where = f"the fork's {branch}" if remote else branch
    lost = [(sha, subject, copy) for sha, subject, carried, copy in replaced if not carried]
    same = len(replaced) - len(lost)
    copied = " ({} has a commit of that subject; this one's patch differs)"
    shown = "; ".join(f"{sha[:12]} {subject}" + (copied.format(copy) if copy else "")
                      for sha, subject, copy in lost[:5]) + ("; ..." if len(lost) > 5 else "")
    what = f": {shown}" if lost else ""
    if same:
        what += f"{'; and ' if lost else ': '}{same} whose patch a PR or carry of the manifest carries too"
    how = "committed onto it by hand?" if any(copy is None for _sha, _subject, copy in lost) or not lost else \
        "picks of entries of the manifest, each resolved otherwise: the old loop's?"
    return {"kind": "replaced-commits", "branch": branch, "remote": remote, "previous": previous,
            "commits": [sha for sha, _subject, _carried, _copy in replaced],
            "carried": [sha for sha, _subject, carried, _copy in replaced if carried],
            "copies": {sha: copy for sha, _subject, _carried, copy in replaced if copy},
            "message": f"{where} has {counted(len(replaced), 'commit')} that sync did not make ({how}), "
                       f"which the composed result does not have{what}."
                       + (" They change no file (the branch's files are the result's): what goes is the commits "
                          "themselves." if same_tree else "")
                       + " The branch is generated: carry such a change as an entry of the manifest."}


def _replaced_tail(manifest: Manifest, previous: str, remote: bool, how: str) -> str:
    """The end of a replaced-commits message: HOW is `would keep` (a dry run), `keeps` (the branch is
    replaced) or `not moved` (the run failed before replacing it: nothing was kept, nor needed)."""
    where = f"the fork's {manifest.fork.branch}" if remote else manifest.fork.branch
    ref = replaced_ref(manifest, previous) + (" here and on the fork" if remote else "")
    if how == "not moved":
        return (f" This run did not replace {where} (nothing moved); a run that replaces it keeps its old tip "
                f"{previous[:12]} as {ref}")
    return f" Replacing {where}, carrytool {how} its old tip {previous[:12]} as {ref}"


def _say_what_was_replaced(manifest: Manifest, report: Report, dry_run: bool) -> None:
    """End each replaced-commits message with what this run did to that branch: would keep its old tip (a
    dry run), kept it, or replaced nothing (helper-82: a failed run said it kept a backup ref it never
    wrote)."""
    result = report.result or {}
    for warning in report.warnings:
        if warning.get("kind") != "replaced-commits":
            continue
        remote = bool(warning.get("remote"))
        done = result.get("pushed") if remote else result.get("updated")
        how = "would keep" if dry_run else "keeps" if done else "not moved"
        warning["message"] = str(warning["message"]) + _replaced_tail(manifest, str(warning["previous"]), remote, how)


def _keep_replaced(manifest: Manifest, git: Git, warnings: list[dict], remote: bool) -> list[str]:
    """Before a branch is replaced, its old tip stays reachable when it had commits sync did not make (a bare
    clone keeps no reflog, and the fork none of ours: gc would take them). The tips kept."""
    kept = [str(w["previous"]) for w in warnings if w.get("kind") == "replaced-commits" and w.get("remote") is remote]
    for tip in kept:
        if git.ref_value(replaced_ref(manifest, tip)) is None:
            git.update_ref(replaced_ref(manifest, tip), tip, None, "carrytool sync: the tip it replaces")
    return kept
