"""Reuse what the store recorded on one merge of a fold: each hunk resolution on its own, then the
fixups recorded for that PR applied 3-way (a fixup that no longer applies shows both versions)."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from carrytool.gitlayer.git import Git, MergeResult
from carrytool.pipeline.hunks import counted
from carrytool.union.recorded_upstream import (
    Context,
    HunkUpstream,
    Place,
    RecordedUpstream,
    place_said,
    places_in,
)
from carrytool.union.resolutions import (
    Fixup,
    apply_resolutions,
    has_markers,
    resolution_lines,
    split_conflicts,
)
from carrytool.union.upstream_edit import Removed, keep_lines, newly_removed, quote, show_both, upstream_removed
from carrytool.union.upstream_hunks import Around, Judged, Lines, around_hunks, judge, line_names, ordered

Notify = Callable[[str], None]
Content = tuple[str, bytes]


@dataclass
class Step:
    """One PR merged onto the fold: PRE (recorded hunks applied), TREE (fixups too), what is left."""

    pre: str
    tree: str
    unresolved: dict[str, str] = field(default_factory=dict)     # path -> content | other | fixup
    reused: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)     # files whose recorded edit waits (kept in the store)
    fixed: list[str] = field(default_factory=list)       # files a recorded edit (fixup) went into, cleanly
    # files where a recorded edit would remove lines upstream has now and had not when it was recorded:
    # path -> those lines, numbered as the scratch file shows them (kind "fixup": shown both ways; "content":
    # kept beside the new hunks, the rest of the edit applied; in `deletes`: the file kept whole)
    removes_upstream: dict[str, list[int]] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)     # files a recorded edit would delete, upstream's now
    # path -> how many of its hunks have a record not replayed: it would drop upstream's lines, or put back
    # lines upstream no longer has there, that it did not when recorded (upstream_hunks); shown as git made them
    withheld: dict[str, int] = field(default_factory=dict)
    # path -> how many of its hunks have a key whose places were resolved differently, at a place the record
    # does not name surely (a hunk of the key stopped conflicting, or a new one came): not replayed
    unplaced: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Upstream:
    """Where the fold starts: upstream's TREE, and how to name it (`upstream main`)."""

    tree: str
    label: str


def resolve_step(git: Git, merged: MergeResult, records: dict[str, bytes], fixups: list[Fixup],
                 notify: Notify, upstream: Upstream | None = None,
                 recorded: dict[str, RecordedUpstream] | None = None, branched: str | None = None, *,
                 drop_command: Callable[[str], str]) -> Step:
    """Apply each recorded hunk on its own, then FIXUPS (those recorded for this PR); say what is left. A
    hunk's record that would drop lines UPSTREAM has there now, or put back lines it no longer has there,
    which it did not when recorded (RECORDED: what each record says of upstream's lines; BRANCHED: the tree
    the PR branched from, for a record that does not say what it kept), is not applied, and a fixup that
    would remove lines UPSTREAM has now and did not have when it was recorded is left to ask. DROP_COMMAND(FILE):
    the `union continue --drop-edit FILE` to paste, whole (h237: it lacked carrytool, the name and -m/--repo)."""
    edits: dict[str, tuple[str, str] | None] = {}
    removes: dict[str, list[int]] = {}
    deletes: list[str] = []
    withheld: dict[str, int] = {}
    unplaced: dict[str, int] = {}
    unresolved, reused, used, waiting = {}, [], [], []
    for path in merged.conflicted_paths:
        found = read_content(git, merged.tree, path)
        parts = split_conflicts(found[1]) if found and found[0] != "120000" and has_markers(found[1]) else None
        if not found or parts is None:
            unresolved[path] = "other"
            continue
        recorded_here = [p.key for p in parts if not isinstance(p, bytes) and p.key in records]
        keys = set(recorded_here)
        each, unsure = _each_place(path, found[1], keys, recorded or {}, notify)
        held = _over_upstream(git, upstream, path, found[1], {k: records[k] for k in keys - unsure}, each,
                              recorded or {}, notify, branched=branched) if keys - unsure and upstream is not None \
            else set()
        content, missing = apply_resolutions(found[1], {k: records[k] for k in keys - held - unsure}, each)
        used += recorded_here
        if content != found[1]:
            edits[path] = (found[0], git.write_blob(content))  # type: ignore[arg-type]
        if held:
            withheld[path] = sum(1 for key in missing if key in held)
        if unsure:
            unplaced[path] = sum(1 for key in missing if key in unsure)
        new = [key for key in missing if key not in held | unsure]
        if missing:
            unresolved[path] = "content"
            if new and len(missing) < len(parts) // 2:
                notify(f"{path}: {counted(len(parts) // 2 - len(missing), 'conflict hunk')} resolved from the "
                       f"store; {len(new)} not in the resolution store (new, or changed since recorded)")
        else:
            reused.append(path)
    pre = git.edit_tree(merged.tree, edits) if edits else merged.tree
    fixed: dict[str, tuple[str, str] | None] = {}
    went: list[str] = []
    for fixup in fixups:
        if fixup.base == fixup.result and fixup.conflict not in (None, "other"):
            # an edit that changes nothing (an earlier carrytool kept one where a stop's file was left as the
            # fold had it): nothing to apply, show or redo; the fold removes it from the store when it finishes
            # (`Union.prune`). It settles no conflict: one of another kind at its file is the user's (helper-147:
            # "your recorded edit was made where the file merged ... It was:" and nothing after it)
            if unresolved.get(fixup.file) == "other":
                notify(f"{fixup.file}: the edit recorded there for {fixup.item} changes nothing (at an earlier stop "
                       "you left the file as the fold had it), so it settles nothing here and there is nothing to "
                       "redo: decide the file; `union continue` records what you leave in its place")
            continue
        current = read_content(git, pre, fixup.file)
        if unresolved.get(fixup.file) == "content" and current != fixup.base:
            # the file has new hunks to resolve: the edit goes in beside them when it merges 3-way cleanly
            # and leaves every hunk as it was (`union continue` then records it again from what the user
            # leaves). Otherwise it waits, and is kept in the store (helper-76: `continue` dropped it)
            applied, kept = _beside_hunks(git, fixup, current, upstream)
            if applied is not None and upstream is not None and kept:
                # helper-153: applied whole, it removed upstream's lines without a word, and `continue` then
                # recorded that as deliberate; the user, stopped on this file, decides
                fixed[fixup.file] = (applied[0], git.write_blob(applied[1]))
                removes[fixup.file] = [n for n, _ in kept]
                notify(f"{fixup.file}: your recorded edit outside the conflict hunks ({fixup.item}) is applied in "
                       f"the scratch tree beside the new hunks, except where it removes {counted(len(kept), 'line')} "
                       f"{upstream.label} has "
                       f"now, {why_asked(fixup)}: those are kept, these lines of the scratch file:\n{quote(kept)}"
                       "keep them (upstream's code) or delete them if your edit should still remove them, keep the "
                       "rest of the edit as you resolve the hunks; `union continue` records what you leave. It "
                       "was:\n" + describe_edit(fixup))
            elif applied is not None:
                fixed[fixup.file] = (applied[0], git.write_blob(applied[1]))
                notify(f"{fixup.file}: your recorded edit outside the conflict hunks ({fixup.item}) is applied in "
                       "the scratch tree beside the new hunks: keep it as you resolve them")
            else:
                waiting.append(fixup.file)
                notify(f"{fixup.file}: your recorded edit outside the conflict hunks ({fixup.item}) does not apply "
                       "beside the new hunks; redo it in the scratch tree as you resolve them, or drop it: "
                       f"`{drop_command(fixup.file)}` (`union continue` refuses while it is "
                       "neither). It was:\n" + describe_edit(fixup))
            continue
        if unresolved.get(fixup.file) == "other" and fixup.conflict not in (None, "other"):
            # an edit recorded where the file merged (or conflicted in its lines) does not settle a conflict
            # of another kind (a PR now deletes the file): that one is the user's to decide (helper-77), who
            # is shown the edit (what they leave there replaces it in the store: helper-78)
            where = _WHERE.get(fixup.conflict or "", _WHERE[""])
            notify(f"{fixup.file}: your recorded edit ({fixup.item}) was made {where}; it does not settle this "
                   "conflict: decide the file, and redo the edit if it still applies. It was:\n" + describe_edit(fixup))
            continue
        applied, clean = apply_fixup(git, fixup, current)
        removed = removed_upstream(git, upstream, fixup, current, applied) if clean and upstream else []
        if removed and current is not None and upstream is not None:
            unresolved[fixup.file] = "fixup"
            if applied is None:
                # the edit deletes the file (helper-153: upstream's file went, without a word): the scratch
                # tree has it as the fold made it, and the user keeps it or deletes it
                removes[fixup.file] = [n for n, _ in removed]
                deletes.append(fixup.file)
                notify(f"{fixup.file}: your recorded edit ({fixup.item}) deletes the file, which {upstream.label} "
                       f"has now, {why_asked(fixup, 'with ' + counted(len(removed), 'line'))}:\n{quote(removed)}"
                       "the scratch tree has the file as the fold made it: leave it there to keep upstream's file "
                       f"(the edit is then removed from the store), or delete it (rm {shlex.quote(fixup.file)}) to "
                       "confirm your deletion (recorded with upstream's lines: the next refold does not ask); "
                       "then `union "
                       "continue`")
                continue
            shown, where = show_both(current[1], applied[1], {n for n, _ in removed},
                                     ours=f"{upstream.label} now", theirs=f"your recorded edit ({fixup.item})")
            fixed[fixup.file], removes[fixup.file] = (applied[0], git.write_blob(shown)), [n for n, _ in where]
            notify(f"{fixup.file}: your recorded edit outside the conflict hunks ({fixup.item}) removes "
                   f"{counted(len(removed), 'line')} {upstream.label} has now, {why_asked(fixup)}: both versions "
                   f"are shown in the scratch file, upstream's lines being these:\n{quote(where)}keep upstream's lines "
                   "or your edit, then continue. It was:\n" + describe_edit(fixup))
            continue
        fixed[fixup.file] = None if applied is None else (applied[0], git.write_blob(applied[1]))
        if clean:
            unresolved.pop(fixup.file, None)
            reused.append(fixup.file)
            if applied != current:
                went.append(fixup.file)
        else:
            unresolved[fixup.file] = "fixup"
    tree = git.edit_tree(pre, fixed) if fixed else pre
    return Step(pre, tree, unresolved, sorted(set(reused)), used, waiting, sorted(set(went)), removes, deletes,
                withheld, unplaced)


def _each_place(path: str, conflicted: bytes, keys: set[str], recorded: dict[str, RecordedUpstream],
                notify: Notify) -> tuple[list[bytes | None], set[str]]:
    """The resolution to replay at each hunk of CONFLICTED (PATH as the merge wrote it) whose key (of KEYS) was
    resolved differently at its places: that place's own (None: its key's record's); and the keys of those
    met at a place the record does not name surely, not replayed: which place's resolution is unknown, and
    the fold asks (said, with each place's resolution). Helper-174: one resolution a key, the last recorded,
    and the others went into a fixup of the PR, lost once the PRs were folded in another order."""
    differ = {key for key in keys if key in recorded and recorded[key].resolutions}
    if not differ:
        return [], set()
    hunks = around_hunks(None, conflicted, path)
    placed, renamed, new = _recorded_places(path, conflicted, hunks, {key: recorded[key] for key in differ})
    each: list[bytes | None] = []
    unsure: set[str] = set()
    for around, named in zip(hunks, placed):
        key = around.hunk.key
        each.append(recorded[key].resolutions.get(named) if named is not None else None)
        if key in differ and each[-1] is None:
            unsure.add(key)
    for key in sorted(unsure):
        # h186's review: a stop for lines that named places and changed said a hunk had moved
        why = f"the lines that named {_of_places(renamed[key], path, recorded[key])} changed " \
            f"({_changed(renamed[key])}), side by side: only their order would tell which place is which, so" \
            if key in renamed else "this fold does not meet it at the places recorded (a hunk of it stopped " \
            "conflicting, or a new one came)" + (f": {_new_said(new[key])} at no place recorded, so" if key in new
                                                 else ":")
        notify(f"{path}: your recorded resolutions of a conflict you met at {len(recorded[key].resolutions)} places "
               f"differ by place, and {why} they are not replayed; the scratch file shows its hunks as the merge "
               f"made them. You resolved it:\n{_each_said(recorded[key])}resolve its hunks again; `union continue` "
               "records them")
    return each, unsure


Renamed = list[tuple[str | None, str | None]]


def _recorded_places(path: str, conflicted: bytes, hunks: list[Around], recorded: dict[str, RecordedUpstream]
                     ) -> tuple[list[tuple[str, int] | None], dict[str, Renamed], dict[str, list[Place]]]:
    """The recorded place of each of HUNKS (of CONFLICTED, PATH as the merge wrote it) whose key RECORDED has
    (`RecordedUpstream.placed`; None: not named surely, or no record), the keys whose places are not sure
    as the lines that named them changed side by side, with those lines, and the keys met at a place near
    none recorded (the lines around it are no place's), with those places."""
    places = places_in(path, [(around.hunk.key, around.scope) for around in hunks],
                       [around.context or ((), ()) for around in hunks])
    out: list[tuple[str, int] | None] = [None] * len(hunks)
    renamed: dict[str, Renamed] = {}
    new: dict[str, list[Place]] = {}
    lines = line_names(conflicted)
    for key in sorted({around.hunk.key for around in hunks} & recorded.keys()):
        mine = [n for n, around in enumerate(hunks) if around.hunk.key == key]
        found = recorded[key].placed([places[n] for n in mine], lines)
        for n, at in zip(mine, found.at):
            out[n] = at
        if found.renamed:
            renamed[key] = found.renamed
        if found.new:
            new[key] = [places[mine[n]] for n in found.new]
    return out, renamed, new


def _new_said(places: list[Place]) -> str:
    """PLACES, hunks met where no recorded place is, as a stop names them: `m.py's hunk 2 of it (in C, after
    `third = [`) is`."""
    said = [_place_named(place.file, place.index, place.scope, place.context) for place in places]
    return ", ".join(said) + (" is" if len(said) == 1 else " are")


def _place_named(file: str, n: int, scope: str | None, context: Context | None) -> str:
    """A place as a stop names it (`place_said`), with the line before it where its def/class does not say
    which place of it it is: `m.py's hunk 2 of it (in C, after `third = [`)`."""
    said = place_said(file, n, scope)
    before = context[0][0] if context and context[0] else None
    if before and scope and not scope.startswith("@ ") and not before.startswith(("def ", "async def ", "class ")):
        return f"{said[:-1]}, after `{before}`)"
    return said


def _of_places(renamed: Renamed, path: str, recorded: RecordedUpstream) -> str:
    """Which of RECORDED's places in PATH the RENAMED are, as a stop says it."""
    count = sum(1 for file, _n in recorded.at if file == path)
    return "its places" if len(renamed) == count else f"{len(renamed)} of its {count} places"


def _changed(renamed: Renamed) -> str:
    """RENAMED's lines (recorded, now), as a stop says them."""
    return ", ".join(f"{_line(then)} -> {_line(now)}" for then, now in renamed)


def _line(name: str | None) -> str:
    return "(no line before it)" if name is None else f"`{name[2:]}`"


def _each_said(recorded: RecordedUpstream) -> str:
    """Each place of RECORDED with its own resolution, as a stop says them."""
    out = []
    for (file, n), text in sorted(recorded.resolutions.items()):
        scope = recorded.scopes.get((file, n), (None, 0))[0]
        named = _place_named(file, n, scope, recorded.contexts.get((file, n)))
        out.append(f"  at {named}:\n{_quoted(resolution_lines(text))}")
    return "".join(out)


def _over_upstream(git: Git, upstream: Upstream, path: str, conflicted: bytes, records: dict[str, bytes],
                   each: list[bytes | None], recorded: dict[str, RecordedUpstream], notify: Notify, *,
                   branched: str | None) -> set[str]:
    """The keys of the hunks of CONFLICTED (PATH as the merge wrote it) whose record, replayed, would drop lines
    UPSTREAM has there now, or put back lines it no longer has there, that it did not when recorded: the key
    is the two sides only, and stays the same when upstream merges one of the PRs (its lines are then
    upstream's). Each hunk is judged by what was true of its own place (helper-166: a key met twice was judged
    by the place recorded last), and said, with the resolution, for the user to resolve again. BRANCHED: the
    tree the PR branched from (`judge`). EACH: the resolution of the n-th hunk where its place has its own."""
    theirs = read_content(git, upstream.tree, path)
    if theirs is not None and theirs[0] == "120000":
        return set()
    held: set[str] = set()
    lost: Lines | None = None
    hunks = around_hunks(theirs[1] if theirs else None, conflicted, path)
    placed, _renamed, _new = _recorded_places(path, conflicted, hunks, recorded)
    for n, (around, at) in enumerate(zip(hunks, placed)):
        key = around.hunk.key
        if key not in records:
            continue
        mine = each[n] if n < len(each) and each[n] is not None else records[key]
        # what was true at this place: its def/class and n-th hunk of the key there (or, in an older record,
        # the file's n-th), when as many hunks of the key are there as the record names; at a place not named
        # surely, what was true at every one
        said = recorded.get(key, RecordedUpstream())
        place = said.at[at] if at is not None else said.whole
        if place.kept is None and lost is None:
            # the lines upstream lost since the PR branched (helper-169: any line of the file it branched from
            # was asked about, one upstream still has too)
            now = tuple(theirs[1].split(b"\n")) if theirs else ()
            before = _lines_at(git, branched, path)
            lost = ordered(before, Counter(before) - Counter(now))
        judged = judge(around, mine, place, lost or ())
        if judged:
            held.add(key)
            notify(_not_replayed(path, upstream, judged, mine, place))
    return held


def _lines_at(git: Git, tree: str | None, path: str) -> Lines:
    """The lines of PATH in TREE (none: no tree, no such file, a link)."""
    found = read_content(git, tree, path) if tree else None
    return tuple(found[1].split(b"\n")) if found and found[0] != "120000" else ()


def _not_replayed(path: str, upstream: Upstream, judged: Judged, resolution: bytes, recorded: HunkUpstream) -> str:
    """What a stop says of a hunk's recorded RESOLUTION it did not replay (JUDGED: why)."""
    said = []
    if judged.drops:
        why = "which it did not drop as upstream's when you resolved it (upstream merged a PR since?)" \
            if recorded.removed is not None else "which the record (made by an older carrytool) does not say it dropped then"
        said.append(f"it would drop {counted(len(judged.drops), 'line')} {upstream.label} has there now, {why}:\n"
                    f"{_quoted(judged.drops)}")
    if judged.puts_back and recorded.kept is None:
        said.append(f"it would keep {counted(len(judged.puts_back), 'line')} of the file the PR branched from that "
                    f"{upstream.label} does not have "
                    "there, which the record (made by an older carrytool) does not say were upstream's then "
                    f"(upstream deleted them since?):\n{_quoted(judged.puts_back)}")
    elif judged.puts_back:
        said.append(f"it would put back {counted(len(judged.puts_back), 'line')} {upstream.label} had there when you "
                    "resolved it and has no "
                    f"longer (upstream changed them since):\n{_quoted(judged.puts_back)}")
    lines = resolution_lines(resolution)
    was = _quoted(lines) if lines else "    (nothing: you resolved it to no lines)\n"
    return (f"{path}: your recorded resolution of a conflict hunk is not replayed: " + "and ".join(said)
            + "the scratch file shows the hunk as the merge made it (the union so far's side has upstream's lines "
            f"now); your resolution was:\n{was}resolve the hunk again, keeping upstream's lines or not; "
            "`union continue` records it")


def _quoted(lines: tuple[bytes, ...], most: int = 20) -> str:
    """LINES, one a line, indented, at most MOST of them."""
    return quote([(0, line) for line in lines], most=most, numbered=False)


def removed_upstream(git: Git, upstream: Upstream, fixup: Fixup, current: Content | None,
                     applied: Content | None) -> Removed:
    """The lines of CURRENT (the file as the fold made it, or as the user left it) that FIXUP, applied
    (APPLIED; None: the edit deletes the file), removes and UPSTREAM has now, but that the edit did not remove
    as upstream's when it was recorded: (line of CURRENT, text). A deletion is judged as removing every line
    (helper-153: it was not judged, and upstream's file went)."""
    if current is None or applied == current or current[0] == "120000" or (applied and applied[0] == "120000"):
        return []
    theirs = read_content(git, upstream.tree, fixup.file)
    if theirs is None or theirs[0] == "120000":
        return []
    return newly_removed(upstream_removed(theirs[1], current[1], applied[1] if applied else b""), fixup.upstream)


def _beside_hunks(git: Git, fixup: Fixup, current: Content | None, upstream: Upstream | None
                  ) -> tuple[Content | None, Removed]:
    """FIXUP applied to CURRENT, a file with new conflict hunks, when it merges 3-way cleanly and leaves
    every hunk as it was (None: it waits), except where it removes lines UPSTREAM has now that it did not
    remove as upstream's when recorded: those are kept, and returned as the file numbers them."""
    applied, clean = apply_fixup(git, fixup, current)
    if not clean or applied is None or current is None:
        return None, []
    removed = removed_upstream(git, upstream, fixup, current, applied) if upstream else []
    data, kept = keep_lines(current[1], applied[1], {n for n, _ in removed}) if removed else (applied[1], [])
    return ((applied[0], data), kept) if _same_hunks(current[1], data) else (None, [])


def why_asked(fixup: Fixup, lead: str = "which") -> str:
    """Why lines of upstream's a recorded edit removes are asked about: its record does not name them."""
    if fixup.upstream is not None:
        return f"{lead} it had not when you made the edit (upstream merged a PR since?)"
    return f"{lead} the record (made by an older carrytool) does not say it had then"


# where an edit was recorded (Fixup.conflict), as the stop that meets a conflict of another kind says it
_WHERE = {"": "where the file merged", "content": "in a file with conflict hunks",
          "fixup": "where an earlier recorded edit no longer applied"}


def _same_hunks(before: bytes, after: bytes) -> bool:
    """Whether AFTER has exactly BEFORE's conflict hunks (same keys, in order): an edit applied beside
    them touched none."""
    a, b = split_conflicts(before), split_conflicts(after)
    if a is None or b is None:
        return False
    return [p.key for p in a if not isinstance(p, bytes)] == [p.key for p in b if not isinstance(p, bytes)]


def describe_edit(fixup: Fixup) -> str:
    """The recorded edit as a unified diff (what to redo by hand), at most 40 lines."""
    import difflib

    old = (fixup.base[1] if fixup.base else b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (fixup.result[1] if fixup.result else b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, fixup.file, fixup.file, n=1))
    if not lines:           # no line changed: say what did (a unified diff of nothing printed nothing)
        if fixup.base == fixup.result:
            return "  (nothing: it leaves the file as the fold had it)\n"
        if fixup.base is None or fixup.result is None:
            return f"  ({'created' if fixup.base is None else 'deleted'} the file, which is empty)\n"
        return f"  (the file's mode only: {fixup.base[0]} -> {fixup.result[0]})\n"
    shown = "".join(line if line.endswith("\n") else line + "\n" for line in lines[:40])
    return shown + ("  ...\n" if len(lines) > 40 else "")

def apply_fixup(git: Git, fixup: Fixup, current: Content | None) -> tuple[Content | None, bool]:
    """The file with FIXUP applied 3-way to CURRENT: (content, clean); unclean shows both versions."""
    if current == fixup.base or current == fixup.result:
        return fixup.result, True
    theirs = f"your recorded edit ({fixup.item})"
    if current and fixup.base and fixup.result and "120000" not in (current[0], fixup.base[0], fixup.result[0]):
        merged = git.merge_texts(current[1], fixup.base[1], fixup.result[1],
                                      ("the fold now", "the fold when you edited it", theirs))
        if merged is not None:
            return (fixup.result[0] if current[0] == fixup.base[0] else current[0], merged[1]), merged[0]
    now = current[1] if current else b"(no such file now)"
    mine = fixup.result[1] if fixup.result else b"(you deleted the file)"
    shown = b"<<<<<<< the fold now\n" + now + b"\n=======\n" + mine + b"\n>>>>>>> " + theirs.encode() + b"\n"
    return ("100644", shown), False

def read_content(git: Git, tree: str, path: str) -> Content | None:
    found = git.file_entry(tree, path)
    return (found[0], git.read_blob(found[1])) if found is not None else None

