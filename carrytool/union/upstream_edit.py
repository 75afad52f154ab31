"""Which of upstream's lines a recorded edit (a fixup) removes, and the file shown with both versions there.

An edit made at a stop of a fold may remove a line a folded PR brought; once upstream merges that PR, the
same edit replayed removes upstream's line (helper-147: peft's `was_disabled = self._adapters_disabled`,
deleted as pr/3565's, was deleted from upstream by the refold without a word). A record keeps the lines of
upstream's its edit removed when it was made (`Fixup.upstream`); a replay that removes others stops the fold.
"""

from __future__ import annotations

import difflib
from collections import Counter

Removed = list[tuple[int, bytes]]      # (line of the file before the edit, 1-based, its text)


def upstream_removed(upstream: bytes | None, before: bytes, after: bytes) -> Removed:
    """The lines of BEFORE that AFTER removes or replaces and that BEFORE has from UPSTREAM (upstream's
    version of the file: the lines the two align on); blank lines say nothing and are left out."""
    if upstream is None:
        return []
    old, new = before.split(b"\n"), after.split(b"\n")
    mapped = _equal_targets(upstream.split(b"\n"), old)
    return [(i + 1, old[i]) for tag, i1, i2, _j1, _j2 in _opcodes(old, new) if tag in ("delete", "replace")
            for i in range(i1, i2) if i in mapped and old[i].strip()]


def newly_removed(removed: Removed, recorded: tuple[bytes, ...] | None) -> Removed:
    """Those of REMOVED the edit did not remove as upstream's when it was recorded (RECORDED; None: a record
    that does not say, all of them)."""
    left = Counter(recorded or ())
    out = []
    for line, text in removed:
        if left[text] > 0:
            left[text] -= 1
        else:
            out.append((line, text))
    return out


def show_both(before: bytes, after: bytes, lines: set[int], *, ours: str, theirs: str) -> bytes:
    """AFTER (the edit applied to BEFORE), except where the edit removes one of LINES (of BEFORE, 1-based):
    there BEFORE's lines and the edit's, between conflict markers labelled OURS and THEIRS."""
    old, new = before.split(b"\n"), after.split(b"\n")
    cr = b"\r" if old and old[0].endswith(b"\r") else b""
    out: list[bytes] = []
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag != "equal" and lines.intersection(range(i1 + 1, i2 + 1)):
            out += [b"<<<<<<< " + ours.encode() + cr, *old[i1:i2], b"=======" + cr, *new[j1:j2],
                    b">>>>>>> " + theirs.encode() + cr]
        else:
            out += new[j1:j2]
    return b"\n".join(out)


def spans(lines: list[int]) -> str:
    """LINES (sorted) as `3`, `3-5`, `3-5, 9`."""
    out: list[list[int]] = []
    for line in lines:
        if out and line == out[-1][1] + 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def _opcodes(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _equal_targets(a: list[bytes], b: list[bytes]) -> set[int]:
    """The lines of B (0-based) that the alignment of A with B pairs with a line of A."""
    return {j1 + k for tag, i1, i2, j1, _j2 in _opcodes(a, b) if tag == "equal" for k in range(i2 - i1)}
