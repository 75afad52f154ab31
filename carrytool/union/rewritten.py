"""The lines of its PRs a finished fold's union writes in its own words outside the conflicts the fold stopped at.

A union's rewrite of a PR's line is its own words (re-expressed, pipeline.provided: it adapts one PR's call to
another PR's API, helper-166), no warning, and sync sees the union as one entry: `a += 20` made `a += 21` away
from the conflict passed `union continue` and sync with nothing said but `explain`'s "1 re-expressed" (h185).
The fold lists each such line once, so the maintainer sees what they changed: the hunks the union check judged
re-expressed, diffed from their PR's head to the union's result, but for the lines a conflict the fold stopped
at held (a resolution the fold used has them on a side, and the hunk meets where that resolution stands in the
result: what the maintainer chose there they know). Where it stands, not the text anywhere in the file (h194's
review: a statement repeated in two defs, rewritten in the one with no conflict, was hidden by the other's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carrytool.asserts.messages import quote_text
from carrytool.pipeline.basemap import Span, meets, span_of
from carrytool.pipeline.hunks import find_block, parse_patch
from carrytool.pipeline.leftout import LeftOut
from carrytool.pipeline.standing import RE_EXPRESSED
from carrytool.union.outcome import FoldItem
from carrytool.union.resolutions import read_resolution, resolution_lines

SHOWN = 20      # lines of the note; `union status --format json` has them all


class FoldRewrites:
    """Union's reading of what its result re-expresses of its PRs (mixed into fold.Union)."""

    def rewritten(self, state: dict, commit: str, items: list[FoldItem], found: Sequence[LeftOut]
                  ) -> list[dict[str, Any]]:
        """Each run of a PR's lines the union COMMIT has otherwise, in a hunk of the PR that FOUND (the union
        check's) says it re-expresses, outside the conflicts the fold stopped at: `{file, line, pr, pr_line, old,
        new}` (LINE in the union's result, PR_LINE in the PR's head; OLD the PR's lines, NEW the union's, none
        where it removed them), by file and line."""
        heads = {item.id: item.head for item in items}
        spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for lost in found:
            if lost.how == RE_EXPRESSED and lost.lines is not None and lost.pr in heads:
                spans.setdefault((lost.pr, lost.file), []).append(lost.lines)
        out = []
        for (pr, path), places in spans.items():
            changes = [c for c in self.git.diff_trees([(heads[pr], commit)], renames=False)[0] if c.path == path]
            entry = self.git.file_entry(commit, path)
            conflicts = self._conflicts(state, path, self.git.read_blob(entry[1]).split(b"\n") if entry else [])
            patch = self.git.diff_patch(heads[pr], commit, [path], context=0, renames=False)
            for hunk in parse_patch(patch, changes):
                first, last = hunk.old_start, hunk.old_start + hunk.old_count - 1
                if hunk.kind != "text" or not hunk.old_count or not any(a <= last and first <= b for a, b in places):
                    continue
                at = span_of(hunk.new_start, hunk.new_count)
                if any(any(row.strip() and row.strip() in sides for row in hunk.removed)
                       and (stands is None or any(meets(at, span) for span in stands)) for sides, stands in conflicts):
                    continue            # a conflict's line: resolved at a stop, or replayed from the store
                out.append({"file": path, "line": hunk.new_start, "pr": pr, "pr_line": first,
                            "old": [_text(row) for row in hunk.removed], "new": [_text(row) for row in hunk.added]})
        return sorted(out, key=lambda r: (r["file"], r["line"], r["pr"]))

    def _conflicts(self, state: dict, path: str, result: list[bytes]
                   ) -> list[tuple[set[bytes], list[Span] | None]]:
        """Each conflict in PATH the fold resolved by a record it used: the lines (stripped) on either side, and
        where its resolution stands in RESULT (the union's file), as spans (basemap.span_of); None where that is
        not known (a resolution of no lines, or not there as written: a later edit changed it), and the sides
        count wherever they stand."""
        out = []
        for _record, doc in self.store.records_of(self.name, set(state.get("used_keys", [])), path):
            sides = {row.strip() for key in ("ours", "theirs")
                     for row in str(doc.get(key) or "").encode("utf-8", "surrogateescape").split(b"\n") if row.strip()}
            out.append((sides, _standing(doc, path, result)))
        return out


def rewritten_note(rewrites: Sequence[dict[str, Any]]) -> str | None:
    """The note listing REWRITES (`FoldRewrites.rewritten`), one line each; None when there are none."""
    if not rewrites:
        return None
    count = sum(len(r["old"]) for r in rewrites)
    lines = [f"note: the union re-expresses {count} line{'' if count == 1 else 's'} of the PRs it folds outside the conflicts the fold "
             "stopped at (its own words: no warning, and sync does not say it; explain shows it as re-expressed):"]
    for rewrite in rewrites[:SHOWN]:
        old, new = rewrite["old"], rewrite["new"]
        if [row.strip() for row in old] != [row.strip() for row in new]:
            old, new = [row.strip() for row in old], [row.strip() for row in new]
        said = quote_text("\n".join(new)) if new else "(removed)"
        lines.append(f"  {rewrite['file']}:{rewrite['line']}: {rewrite['pr']}'s {quote_text(chr(10).join(old))} "
                     f"-> {said}")
    if len(rewrites) > SHOWN:
        lines.append(f"  ... and {len(rewrites) - SHOWN} more (union status --format json lists them all)")
    return "\n".join(lines)


def _standing(doc: dict[str, Any], path: str, result: Sequence[bytes]) -> list[Span] | None:
    """Where the resolutions of record DOC for PATH (its own, and each of its places' in PATH) stand in RESULT, as
    spans; None where one of them has no lines, or stands nowhere there."""
    texts = [doc, *(place for place in doc.get("upstream_at") or []
                    if isinstance(place, dict) and place.get("file") == path and "resolution" in place)]
    spans: list[Span] = []
    for text in texts:
        try:
            lines = resolution_lines(read_resolution(text))
        except ValueError:
            return None
        found = find_block(result, lines)
        if not found:
            return None
        spans += [span_of(at + 1, len(lines)) for at in found]
    return spans


def _text(row: bytes) -> str:
    return row.decode("utf-8", "replace")
