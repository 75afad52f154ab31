"""What a finished fold checks and says: the hunks of its PRs the union left out, and the names its
Python files load that nothing binds (with the likely fix and where to make it)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from carrytool.gitlayer.git import Change, paths_of
from carrytool.manifest import paths as pathmatch
from carrytool.pipeline.drops import account_drops, drop_hint, out_of_reach, unreached
from carrytool.pipeline.landing import has_change
from carrytool.pipeline.leftout import Folded, LeftOut, UnionCheck
from carrytool.pipeline.provided import left_out
from carrytool.pipeline.scopes import is_python
from carrytool.pipeline.unbound import binding_of, bound_names, introduced, loose_names
from carrytool.union.outcome import FoldItem
from carrytool.union.recorded_upstream import place_said
from carrytool.union.reuse import Content


class FoldChecks:
    """Union's checks of a finished fold's result (mixed into fold.Union)."""

    def unbound(self, state: dict, commit: str, items: list[FoldItem]) -> list[str]:
        """A name the union's result (COMMIT) loads in a Python file it changes that nothing binds there, while
        upstream's version of the file and each folded PR head's that changes it bind it or do not load it: the
        fold introduced it, by a resolution (at a stop, or replayed from the store), a recorded edit, or where
        the PRs' changes merged (one drops an import another's new line uses). Sync sees the union as one entry
        and cannot tell (helper-147: `pruned_tensor / densty`, a typo in a resolution, passed continue and sync).
        Every such file is read, not only those that stopped: a resolution replayed on a refold, and two PRs that
        merge cleanly, leave names unbound as surely; a file some PR's head has as the result is skipped (that
        head loads the same names). pipeline.unbound's reading: builtins, star imports (nothing said of the file),
        `global`/`nonlocal`, class bodies, comprehensions, `except ... as`, walrus, `match` captures, `del` and
        conditional imports as Python binds them. Each a `warning: ` line with the likely fix; never a refusal."""
        upstream = state["upstream"]
        notes = []
        for change, result, diffs in self.python_results(upstream, commit, items):
            path = change.path
            if not loose_names(result):         # the usual answer, from symtable alone: no file is parsed
                continue
            heads = self.heads_at(items, diffs, path)
            if any(data == result for _item, data in heads):
                continue
            before = self.git.file_at(upstream, change.old_path or path)
            found = introduced(result, [before, *(data for _item, data in heads)])
            if not found:
                continue
            lines = result.split(b"\n")
            having = ["upstream's"] if before is not None else []
            having += [f"{i.id}'s" for i, data in heads if data is not None]
            whose = "a file only the union has" if not having else (
                f"{', '.join(having[:-1])} and {having[-1]} versions each bind it or do not load it"
                if len(having) > 1 else f"{having[0]} version binds it or does not load it") + \
                ": the fold made it unbound"
            for name, line in sorted(found.items(), key=lambda item: (item[1], item[0])):
                text = lines[line - 1] if line <= len(lines) else b""
                notes.append(f"warning: {path}:{line}: the union loads `{name}`, which nothing binds in the file "
                             f"({whose}); NameError when line {line} runs. Likely fix: "
                             f"{self._rebind(name, result, before, heads)}{self._made_where(state, path, name, text)}")
        return notes

    def python_results(self, upstream: str, commit: str, items: list[FoldItem]
                       ) -> Iterator[tuple[Change, bytes, list[list[Change]]]]:
        """(its change, the union's result) of each Python file the union's result (COMMIT) changes from UPSTREAM,
        with the diffs of ITEMS (base -> head, in order) and the union's last (one batched diff-tree): what the
        unbound-name and the syntax checks read."""
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(upstream, commit)])
        for change in diffs[-1]:
            if change.status == "D" or change.new_mode not in ("100644", "100755") or not is_python(change.path):
                continue
            yield change, self.git.read_blob(change.new_oid), diffs

    def heads_at(self, items: list[FoldItem], diffs: list[list[Change]], path: str
                 ) -> list[tuple[FoldItem, bytes | None]]:
        """Each of ITEMS whose diff (DIFFS, in order) changes PATH, and that it folds there, with its head's file."""
        return [(item, self.git.file_at(item.head, path)) for item, changes in zip(items, diffs)
                if any(path in c.paths for c in changes)
                and (not item.paths or pathmatch.matches_any(item.paths, path))]

    def _rebind(self, name: str, result: bytes, before: bytes | None,
                heads: list[tuple[FoldItem, bytes | None]]) -> str:
        """What would bind NAME again: the binding upstream's version (BEFORE) or a PR head's has, else a name the
        file (RESULT) binds that NAME looks like a typo of."""
        for who, data in [("upstream's version", before), *((f"{i.id}'s head", d) for i, d in heads)]:
            found = binding_of(data, name) if data is not None else None
            if found:
                return f"bring back its binding, `{found[1][:160]}` (line {found[0]} of {who})"
        close = difflib.get_close_matches(name, sorted(bound_names(result)), n=1, cutoff=0.75)
        if close:
            return f"`{close[0]}`, which the file binds (a typo?)"
        return f"bind `{name}`, or correct the name"

    def _made_where(self, state: dict, path: str, name: str, text: bytes) -> str:
        """Where to correct NAME, loaded at the line TEXT of PATH, as a clause: a hunk resolution the fold used
        that has the line, or whose conflict had the name where its resolution has not (the binding dropped
        there: an import a side held); else an edit recorded for a PR that added the line; else the merge of the
        PRs' changes."""
        compose = self.command("compose")
        word = re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"\b")
        records = self.store.records_of(self.name, set(state.get("used_keys", [])), path)
        said = {record: resolutions_in(doc, path) for record, doc in records}
        for record, _doc in records:
            for _where, field, resolution in said[record]:
                if text.strip() and text.strip() in {line.strip() for line in resolution.split(b"\n")}:
                    return f"; the line is your recorded resolution {record.absolute()}: correct it there ({field}), " \
                        f"then {compose}"
        for record, doc in records:
            sides = b"\n".join(str(doc.get(k) or "").encode("utf-8", "surrogateescape") for k in ("ours", "theirs"))
            for where, field, resolution in said[record] if word.search(sides) else ():
                if not word.search(resolution):
                    return f"; a conflict you resolved there had `{name}` and your resolution{where} has not (the " \
                        f"binding dropped?): correct it in {record.absolute()} ({field}), then {compose}"

        def stripped(side: Content | None) -> set[bytes]:
            return {line.strip() for line in side[1].split(b"\n")} if side else set()

        for fixup in self.store.load_fixups(self.name) if text.strip() else ():
            if fixup.file == path and text.strip() in stripped(fixup.result) - stripped(fixup.base):
                where = self.store.fixup_path(self.name, fixup).absolute()
                return f"; the line is your edit recorded for {fixup.item} in {where}: correct it there (its " \
                    f"`result`), then {compose}"
        return ("; no recorded resolution or edit has the line or dropped the name (the PRs' changes merged there): "
                "correct it at a stop of the fold, or carry the fix as an entry of its own after the union")

    def left_out(self, upstream: str, commit: str, items: list[FoldItem], *, judged: list[LeftOut] | None = None
                 ) -> list[str]:
        """The hunks of the folded ITEMS the union COMMIT lacks, outside the regions it reconciled (another
        PR's, or its own, change meets them: pipeline.provided), as sync will warn of them (helper-128: the
        side a stop was resolved to dropped a third PR's method, and nothing said so), each with the YAML that
        declares it dropped on purpose; those its `drops` declare, with their why; and the stale drops
        (helper-135). One line each, a warning prefixed `warning: `. JUDGED, given, gets every hunk the check
        found the union lacks verbatim (union.rewritten lists those it re-expresses)."""
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(upstream, commit)])
        own = set(paths_of(diffs[-1]))
        # as sync's account_provided: a PR's file the union does not change is left out whole (one item, which
        # only a drop without `in` covers) unless the union's tree has the PR's change there anyway; the hunks
        # are looked for only in the other files (helper-147: continue hinted a drop per hunk of a file the union
        # left alone, which sync then called stale, and the file still provided-absent)
        files, folded = [], []
        for item, changes in zip(items, diffs):
            paths = {p for c in changes for p in c.paths if not item.paths or pathmatch.matches_any(item.paths, p)}
            whole = {p for p in paths - own if not has_change(self.git, commit, upstream, changes, p)}
            files += [LeftOut(item.id, path, None, (), True, item.head) for path in sorted(whole)]
            folded.append(Folded(item.id, item.base, item.head, changes, frozenset(paths - whole)))
        [found] = left_out(self.git, [UnionCheck(upstream, commit, diffs[-1], commit, tuple(folded))])
        judged = judged if judged is not None else []
        judged += found
        supersedes = self.entry.supersedes
        drops = account_drops(files + found, supersedes)
        notes = [f"warning: the union does not change {lost.file}, which {lost.pr} changes: the PR's change there is "
                 f"left out (the file taken back as it was at a stop?): sync will warn provided-absent; if on purpose, "
                 f"{drop_hint(lost, supersedes)}"
                 if lost.lines is None and not lost.whole else
                 f"warning: the union {lost.lacking()}, in no region it reconciled "
                 f"({lost.region()}): {'deleted' if lost.missing else 'dropped by a side taken'} at a stop? sync "
                 f"will warn provided-absent; if on "
                 f"purpose, {drop_hint(lost, supersedes)}" for lost in drops.absent]
        notes += [f"dropped on purpose: {lost.pr}'s {'change to ' if lost.lines is None else 'hunk '}"
                  f"{lost.describe()}: {drop.why}" for lost, drop in drops.dropped]
        for number, drop in drops.stale:
            lost = out_of_reach(number, drop, drops.absent)
            said = f"warning: pr/{number}'s drop of {drop.describe()} (manifest line {drop.line})"
            notes.append(f"{said} covers nothing: {unreached(lost, drop)} (sync will warn stale-drop)" if lost else
                         f"{said} covers no hunk the union lacks verbatim: sync will warn stale-drop; remove or fix it")
        return notes


def resolutions_in(doc: dict[str, Any], path: str) -> list[tuple[str, str, bytes]]:
    """(where, which field, the resolution) of each place of PATH the record DOC keeps its own resolution for
    (a conflict resolved differently at its places: helper-174), each on its own (h187: joined, one place's
    binding hid another's drop, and the record's `resolution` was named); else DOC's own `resolution`."""
    own = [at for at in doc.get("upstream_at") or [] if isinstance(at, dict) and at.get("file") == path
           and "resolution" in at]
    if not own:
        return [("", "its `resolution`", str(doc.get("resolution", "")).encode("utf-8", "surrogateescape"))]
    return [(f" at {place_said(path, at['hunk'] if type(at.get('hunk')) is int else 0, _str(at.get('scope')))}",
             "the `resolution` of its place in `upstream_at`",
             str(at["resolution"]).encode("utf-8", "surrogateescape")) for at in own]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
