"""Recording what the user left in the scratch tree at a stop: each hunk's resolution, each other edit
as a fixup (with the upstream lines it removes), a recorded edit that waited applied, asked about, refused
or dropped by name, and the marker lines that refuse a `continue`."""

from __future__ import annotations

from collections.abc import Collection

from carrytool.errors import ConflictError, InputError
from carrytool.gitlayer.git import REGULAR_MODES
from carrytool.pipeline.hunks import counted
from carrytool.union.resolutions import Fixup, align_at, apply_resolutions, split_conflicts
from carrytool.union.reuse import (
    Content,
    Upstream,
    apply_fixup,
    describe_edit,
    read_content,
    removed_upstream,
    why_asked,
)
from carrytool.union.scratch import Scratch
from carrytool.union.taken import continue_command
from carrytool.union.upstream_edit import quote, show_both, upstream_removed
from carrytool.union.upstream_hunks import Around, around_hunks, upstream_of_resolution


class Recording:
    """Union's recording of a stop's scratch tree (mixed into fold.Union)."""

    def _more_labels(self, data: bytes, shown: tuple[str, str] | None, labels: set[bytes]) -> bool:
        """Whether DATA holds more of LABELS (marker lines) than SHOWN, (mode, oid) of the file the fold
        showed at its path (nothing, a link, a submodule: none)."""
        count = _count_lines(data, labels)
        if not count:
            return False
        before = self.git.read_blob(shown[1]) if shown and shown[0] in REGULAR_MODES else b""
        return count > _count_lines(before, labels)

    def _labels(self, conflict: dict) -> set[bytes]:
        """The marker lines (`<<<<<<< ...`, `>>>>>>> ...`, without CR) of CONFLICT's shown files."""
        labels: set[bytes] = set()
        for item in conflict["files"]:
            found = read_content(self.git, conflict["shown"], item["file"]) if item["kind"] == "content" else None
            if found is not None and found[0] != "120000":
                labels.update(line.rstrip(b"\r") for line in found[1].split(b"\n")
                              if line.startswith((b"<<<<<<< ", b">>>>>>> ")))
        return labels

    def _ask_waiting(self, state: dict, conflict: dict, snapshot: dict[str, Content], scratch: Scratch,
                     drop: Collection[str] = ()) -> None:
        """Refuse to take a recorded edit that waited (`conflict["waiting"]`) and, applied to the file as the
        user left it, removes lines upstream has now that it did not remove as upstream's when recorded
        (helper-153: `continue` applied it and recorded the loss as deliberate). Each such file is written
        to the scratch tree with both versions there, it no longer waits (what the user leaves is recorded),
        and the user decides, then continues again. One dropped by name (DROP) is not asked about. Nothing is
        recorded before."""
        item = f"pr/{conflict['pr']}"
        upstream = self.upstream_of(state)
        asked: dict[str, str] = {}
        for fixup in self._waiting(conflict).values():
            result = snapshot.get(fixup.file)
            if fixup.file in drop or result is None or result[0] == "120000":
                continue
            merged, clean = apply_fixup(self.git, fixup, result)
            removed = removed_upstream(self.git, upstream, fixup, result, merged) if clean and merged else []
            if not removed or merged is None:
                continue
            shown, where = show_both(result[1], merged[1], {n for n, _ in removed}, ours=f"{upstream.label} now",
                                     theirs=f"your recorded edit ({item})")
            scratch.rewrite(fixup.file, shown)
            asked[fixup.file] = (f"{fixup.file}: your recorded edit outside the conflict hunks ({item}), applied after "
                                 f"your resolution, would remove {counted(len(removed), 'line')} {upstream.label} has "
                                 f"now, {why_asked(fixup)}: "
                                 "the scratch file now has the edit, with both versions shown where upstream's lines "
                                 f"are these:\n{quote(where)}It was:\n{describe_edit(fixup)}")
        if not asked:
            return
        conflict["waiting"] = [p for p in conflict["waiting"] if p not in asked]
        self.save(state)
        raise ConflictError("".join(asked.values()) + "nothing was recorded",
                            hint=f"keep upstream's lines or your edit (between the markers), then: "
                                 f"{self.command('continue')}")

    def _waiting(self, conflict: dict) -> dict[str, Fixup]:
        """The recorded edits of CONFLICT's PR that waited (did not apply beside the new hunks), by file."""
        item = f"pr/{conflict['pr']}"
        return {f.file: f for f in self.store.load_fixups(self.name)
                if f.item == item and f.file in conflict.get("waiting", [])}

    def check_drops(self, conflict: dict, drop: Collection[str], take: Collection[str] = ()) -> None:
        """Refuse a DROP (`--drop-edit FILE`) that names no recorded edit held back at this stop (one already
        gone from the store, by a `continue` interrupted after it recorded, is still named: run again, the
        command goes on). The hint's continue keeps the other options given (the drops that name one, TAKE's
        leftovers: h236 found them left out)."""
        waiting = conflict.get("waiting", [])
        for path in drop:
            if path not in waiting:
                go_on = continue_command(self.name, self.invocation, [p for p in drop if p in waiting], take)([])
                raise InputError(f"{path}: no recorded edit is held back there at this stop (held back: "
                                 f"{', '.join(sorted(waiting)) or 'none'})",
                                 hint=f"{go_on} (--drop-edit FILE names a held-back edit to drop)")

    def _refuse_held_back(self, conflict: dict, snapshot: dict[str, Content], drop: Collection[str],
                          scratch: Scratch, take: Collection[str]) -> None:
        """Refuse to go on while a recorded edit that waited does not apply to the file as the user left it
        either (not redone) and is not dropped by name (DROP). Kept in the store, it made `continue` exit 0
        on a union without it and the next refold with the same inputs stop on it (h198's trial, h202);
        replaced by the user's other edits of the file, it went without the user deciding. The user redoes
        it, or drops it (`--drop-edit FILE`). Nothing is recorded before."""
        item = f"pr/{conflict['pr']}"
        held: list[Fixup] = []
        for path, fixup in self._waiting(conflict).items():
            result = snapshot.get(path)
            if path in drop or result is None or result[0] == "120000":
                continue        # dropped; or deleted, or a link: the user decided the file (recorded as left)
            merged, clean = apply_fixup(self.git, fixup, result)
            if not clean or merged is None:
                held.append(fixup)
        if not held:
            return
        # the drops the user gave stay in both commands (h209: run as printed, the refusal came back on them)
        # and so do the leftovers it takes (`--take`: union.taken's continue_command writes both)
        given = [path for path in self._waiting(conflict) if path in drop]
        go_on = continue_command(self.name, self.invocation, given, take)([])
        drop_command = continue_command(self.name, self.invocation, given + [f.file for f in held], take)([])
        raise ConflictError(
            "".join(f"{f.file}: your recorded edit outside the conflict hunks ({item}) is not in the file as you "
                    "left it (it did not apply beside the new hunks, and does not apply to the file now): this "
                    "union would not have it. It was:\n" + describe_edit(f) for f in held)
            + "nothing was recorded",
            hint="redo it in " + ", ".join(str(scratch.root / f.file) for f in held)
                 + f", then: {go_on}; or, when it is no longer needed (or the file has it in "
                   f"another form), drop it from the store: {drop_command}")

    def record(self, state: dict, conflict: dict, snapshot: dict[str, Content], paths: list[str],
               drop: Collection[str] = ()) -> dict[str, Content]:
        """Record the resolution of each conflict hunk, and each other edit as a fixup of the folded PR.
        A recorded edit that waited (it did not apply beside the new hunks: `conflict["waiting"]`) is
        applied 3-way to the file as the user left it, now that its hunks are resolved: returned, path ->
        the file with it, for the fold's tree (`_refuse_held_back` refused one that does not apply there
        either). One the user drops by name (DROP) is not applied, said once: the file as left replaces it."""
        self.store.preflight()
        records = self.store.load(self.name)
        kinds = {c["file"]: c for c in conflict["files"]}
        item = f"pr/{conflict['pr']}"
        waiting = self._waiting(conflict)
        applied: dict[str, Content] = {}
        for path in paths:
            result = snapshot.get(path)
            old = waiting.get(path)
            if old is not None and path in drop:
                self.notify(f"{path}: your recorded edit outside the conflict hunks ({item}) is dropped from the "
                            "store, as you asked (--drop-edit): this union does not have it, and no refold applies "
                            "it. It was:\n" + describe_edit(old))
            elif old is not None and result is not None and result[0] != "120000":
                merged, clean = apply_fixup(self.git, old, result)
                if clean and merged is not None and merged != result:
                    self.notify(f"{path}: your recorded edit outside the conflict hunks ({item}) is applied "
                                "after your resolution")
                    applied[path] = result = merged
            info = kinds.get(path)
            shown = read_content(self.git, conflict["shown"], path)
            if info and info["kind"] == "content" and shown and result and result[0] != "120000":
                each = align_at(shown[1], result[1])
                found = dict(each)
                hunks = {p.key: p for p in split_conflicts(shown[1]) or [] if not isinstance(p, bytes)}
                around = self._around(state, conflict, path)
                for key, text in found.items():
                    # each hunk of the key resolved as the user left it (helper-174: one resolution per key, the
                    # last, and the others' went into a fixup of this PR, lost once the PRs were folded in
                    # another order)
                    mine = [resolved for k, resolved in each if k == key]
                    places = around.get(key, [])
                    mine = mine if len(mine) == len(places) else [text] * len(places)
                    self.store.record(self.name, path, key, hunks.get(key), text, info["entries"],
                                      [upstream_of_resolution(a, r) for a, r in zip(places, mine)] or None,
                                      [a.scope for a in places], mine, [a.context for a in places])
                    state["used_keys"].append(key)
                records.update(found)
                # the file as the fold made it, every hunk resolved as recorded (each as the user left it),
                # without a recorded edit outside the hunks that the scratch tree showed applied (that edit is
                # the fixup again)
                made = read_content(self.git, conflict["pre"], path) or shown
                base: Content | None = (made[0],
                                        apply_resolutions(made[1], records, [r for _k, r in each])[0] or b"")
            elif info and info["kind"] == "content" and shown:
                # deleted: the file as the fold made it (git's own labels, as the next fold makes it again)
                base = read_content(self.git, conflict["pre"], path) or shown
            else:
                base = read_content(self.git, conflict["pre"], path)
            kind = info["kind"] if info else ""
            if base == result and kind == "fixup":
                # the stop showed your recorded edit beside the fold's file, and you kept the fold's: the edit
                # changes nothing now, and a record of it would only stand in the way of a later stop (helper-147)
                self.store.record_fixup(self.name, Fixup(item, path, base, base))   # removes it
                self.notify(f"{path}: you left the file as the fold had it, without your recorded edit ({item}): "
                            "the edit is removed from the store (the next refold does not apply it)")
            elif base == result and not (info and info["kind"] != "content"):
                self.store.record_fixup(self.name, Fixup(item, path, base, base))   # drops an old one
            else:
                self.store.record_fixup(self.name, Fixup(item, path, base, result, kind,
                                                         self._upstream_removed(state, path, base, result)),
                                        keep_same=True)
        return applied

    def _around(self, state: dict, conflict: dict, path: str) -> dict[str, list[Around]]:
        """Upstream's lines at each conflict hunk of PATH as the stop's merge wrote it, by key, each hunk of a
        key in order: what a hunk's record keeps of them at each place (upstream_hunks; a refold whose replay
        drops others there, or puts back lines upstream no longer has there, stops)."""
        raw = read_content(self.git, conflict["tree"], path)
        if raw is None or raw[0] == "120000":
            return {}
        theirs = read_content(self.git, self.upstream_of(state).tree, path)
        out: dict[str, list[Around]] = {}
        for around in around_hunks(theirs[1] if theirs and theirs[0] != "120000" else None, raw[1], path):
            out.setdefault(around.hunk.key, []).append(around)
        return out

    def upstream_of(self, state: dict) -> Upstream:
        """Where the fold of STATE starts: upstream's tree, named as its branch."""
        return Upstream(self.git.tree_of(state["upstream"]), f"upstream {self.manifest.upstream.branch}")

    def _upstream_removed(self, state: dict, path: str, base: Content | None, result: Content | None
                          ) -> tuple[bytes, ...]:
        """The lines of upstream's the edit of PATH (BASE -> RESULT; None: deleted) removes, kept with it: a
        refold that finds it removing others stops (reuse.resolve_step; helper-147). A deletion removes every
        line of upstream's the file had (helper-153: none were kept, and a refold never asked)."""
        if base is None:
            return ()
        theirs = read_content(self.git, self.upstream_of(state).tree, path)
        return tuple(text for _line, text in upstream_removed(theirs[1] if theirs else None, base[1],
                                                              result[1] if result else b""))


def _count_lines(data: bytes, lines: set[bytes]) -> int:
    """How many lines of DATA (without a CR at the end) are among LINES."""
    return sum(1 for line in data.split(b"\n") if line.rstrip(b"\r") in lines)
