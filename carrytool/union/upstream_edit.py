"""Which of upstream's lines a recorded edit (a fixup) removes, and the file shown with both versions there.

An edit made at a stop of a fold may remove a line a folded PR brought; once upstream merges that PR, the
same edit replayed removes upstream's line (helper-147: peft's `was_disabled = self._adapters_disabled`,
deleted as pr/3565's, was deleted from upstream by the refold without a word). A record keeps the lines of
upstream's its edit removed when it was made (`Fixup.upstream`); a replay that removes others stops the fold.
A deletion of the file removes every line (helper-153: one was not judged). Lines are said as the file the
user opens numbers them (helper-153: "line 21" of the fold's file was line 22 of the scratch file).
"""

from __future__ import annotations

import difflib
from collections import Counter

Removed = list[tuple[int, bytes]]      # (line, 1-based, of the file said, its text)


def upstream_removed(upstream: bytes | None, before: bytes, after: bytes) -> Removed:
    """The lines of BEFORE that AFTER removes or replaces and that BEFORE has from UPSTREAM (upstream's
    version of the file: the lines the two align on), numbered as BEFORE has them; blank lines say nothing
    and are left out."""
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


def show_both(before: bytes, after: bytes, lines: set[int], *, ours: str, theirs: str) -> tuple[bytes, Removed]:
    """AFTER (the edit applied to BEFORE), except where the edit removes one of LINES (of BEFORE, 1-based):
    there BEFORE's lines and the edit's, between conflict markers labelled OURS and THEIRS. With LINES as it
    numbers them (1-based: the numbers the user sees in the file) and their text."""
    cr = b"\r" if before.split(b"\n", 1)[0].endswith(b"\r") else b""
    return _redo(before, after, lines, (b"<<<<<<< " + ours.encode() + cr, b"=======" + cr,
                                        b">>>>>>> " + theirs.encode() + cr))


def keep_lines(before: bytes, after: bytes, lines: set[int]) -> tuple[bytes, Removed]:
    """AFTER (the edit applied to BEFORE), except where the edit removes one of LINES (of BEFORE, 1-based):
    there BEFORE's lines stay, the edit's are left out. With LINES as it numbers them, and their text."""
    return _redo(before, after, lines, None)


def _redo(before: bytes, after: bytes, lines: set[int], markers: tuple[bytes, bytes, bytes] | None
          ) -> tuple[bytes, Removed]:
    old, new = before.split(b"\n"), after.split(b"\n")
    out: list[bytes] = []
    where: Removed = []
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag == "equal" or not lines.intersection(range(i1 + 1, i2 + 1)):
            out += new[j1:j2]
            continue
        out += markers[:1] if markers else []
        where += [(len(out) + 1 + k, old[i1 + k]) for k in range(i2 - i1) if i1 + k + 1 in lines]
        out += old[i1:i2]
        out += [markers[1], *new[j1:j2], markers[2]] if markers else []
    return b"\n".join(out), where


def quote(lines: Removed, *, most: int = 10, numbered: bool = True) -> str:
    """LINES (number, text), one a line (`    22: text`; without NUMBERED, `    text`), at most MOST of them."""
    shown = [f"    {n}: {_text(t)}\n" if numbered else f"    {_text(t)}\n" for n, t in lines]
    return "".join(shown[:most]) + (f"    ... ({len(shown) - most} more)\n" if len(shown) > most else "")


def spans(lines: list[int]) -> str:
    """LINES (sorted) as `3`, `3-5`, `3-5, 9`."""
    out: list[list[int]] = []
    for line in lines:
        if out and line == out[-1][1] + 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def _text(line: bytes) -> str:
    text = line.rstrip(b"\r").decode("utf-8", "replace")
    return text[:200] + (" ..." if len(text) > 200 else "")


def _opcodes(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _equal_targets(a: list[bytes], b: list[bytes]) -> set[int]:
    """The lines of B (0-based) that the alignment of A with B pairs with a line of A."""
    return {j1 + k for tag, i1, i2, j1, _j2 in _opcodes(a, b) if tag == "equal" for k in range(i2 - i1)}
