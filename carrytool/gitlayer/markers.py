"""The conflict markers of merge-tree's content merges, read back: a conflicted merge resolved in the
entry's favour, as git's `-X theirs` resolves it (`favour_theirs`), and the markers rewritten to the size
and labels `git merge-file` would write (`relabel`), for the structured rule and the text merges shown to
a user. No `git merge-file` process, no temporary files: every content merge is merge-tree's.

merge-ort's `-X theirs` (`cherry-pick -X theirs`; `merge-tree -X theirs` from git 2.43) runs the very
content merge that writes the markers, and only when writing the result takes the second side of each
conflicting hunk in place of the hunk with its markers (xdiff/xmerge.c, xdl_fill_merge_buffer): the
same hunks, split at the same lines. So the favoured text is the marked text with each conflict replaced
by its part between `=======` and `>>>>>>>`, with one difference: a conflict's part gets a line end
appended when its last line has none (the file's last line), which the favoured text does not. A merge
git takes for one of binaries (a NUL in the first 8000 bytes, a side over MAX_XDIFF_SIZE) has no markers:
`-X theirs` takes the entry's side whole (Git.merge_theirs says so before merging).

Reading markers back is exact only when no line of the three versions looks like a marker line. Such
lines (a committed conflict, a reST title underlined with exactly seven `=`) are escaped before the
merge: each gets a prefix no line of the three versions starts with (DEL bytes, `\\x7f`), which keeps
every equality between lines, and that is all the merge compares (a histogram diff with no indent
heuristic, merge-ort.c; conflicts merged at level XDL_MERGE_ZEALOUS, which reads no letters: merge-ll.c);
the prefix is taken off the merged text again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# a line that could be read as a conflict marker line (git's marker size, 7): it starts as a conflict's
# first or last line does, or as the line before its base part (diff3 style), or is its middle line (seven
# `=`, then CR LF, LF or the end). xdiff splits lines at LF only, as `^` and `$` do here.
_MARKER_LIKE = re.compile(rb"^(?:<{7}|>{7}|\|{7}|={7}\r?$)", re.MULTILINE)
SIZE = 7                                   # git's conflict marker size: no attributes are read
_ESCAPE = b"\x7f"
MAX_XDIFF_SIZE = 1024 * 1024 * 1023        # git merges a larger side as a binary (merge-ll.c)
_ESCAPED_RUNS = re.compile(rb"^\x7f+", re.MULTILINE)


def escape(blobs: Sequence[bytes]) -> tuple[list[bytes], bytes]:
    """BLOBS with every marker-like line prefixed, and the prefix (b"" when no line needed it: BLOBS as
    they are). The prefix is the shortest run of DEL bytes that no line of BLOBS starts with, so a
    prefixed line equals no line that was not, and two prefixed lines are equal exactly when they were."""
    if not any(_has_marker_like(blob) for blob in blobs):
        return list(blobs), b""
    prefix = _ESCAPE * (1 + max((len(run) for blob in blobs for run in _ESCAPED_RUNS.findall(blob)), default=0))
    return [_MARKER_LIKE.sub(lambda found: prefix + found.group(0), blob) for blob in blobs], prefix


def _has_marker_like(blob: bytes) -> bool:
    """Whether a line of BLOB is marker-like (`_MARKER_LIKE`), asked with substring searches: a large file
    is read at memchr's speed, not a regular expression's."""
    middle = (b"=======\n", b"=======\r\n")
    return blob.startswith((b"<<<<<<<", b">>>>>>>", b"|||||||", *middle)) or blob in (b"=======", b"=======\r") or \
        any(b"\n" + line in blob for line in (b"<<<<<<<", b">>>>>>>", b"|||||||", *middle)) or \
        blob.endswith((b"\n=======", b"\n=======\r"))


def unescape(data: bytes, prefix: bytes) -> bytes:
    """DATA (merged from blobs `escape` gave PREFIX) with the prefix taken off its lines again."""
    if not prefix:
        return data
    return re.sub(b"^" + re.escape(prefix), b"", data, flags=re.MULTILINE)


def _conflicts(merged: bytes) -> tuple[int, int] | None:
    """Where the conflicts of MERGED lie: from the first line that starts as a conflict does to the end of
    the last that ends one (only that part of a large file is searched for marker lines; the rest is
    checked to have none). None when it has no conflict, or a marker line outside that part."""
    first = 0 if merged.startswith(b"<<<<<<<") else (merged.find(b"\n<<<<<<<") + 1 or len(merged))
    last = merged.rfind(b"\n>>>>>>>", first) + 1
    if first == len(merged) or not last:
        return None
    stop = merged.find(b"\n", last) + 1 or len(merged)
    if _has_marker_like(merged[:first]) or _has_marker_like(merged[stop:]):
        return None
    return first, stop


def relabel(merged: bytes, size: int, labels: tuple[str, str, str]) -> bytes | None:
    """MERGED (a content merge with conflict markers, from versions no line of which is marker-like:
    `escape`) with each marker line written as `git merge-file --marker-size=SIZE -L OURS -L BASE -L
    THEIRS` writes it: SIZE marker characters, then a space and the label (an empty one too; none on the
    middle line), then the line's own end. None when MERGED has no conflict (a merge git made of binaries)."""
    found = _conflicts(merged)
    if found is None:
        return None
    first, stop = found
    names = {b"<": labels[0], b"|": labels[1], b">": labels[2]}
    out, at = [merged[:first]], first
    for marker in _MARKER_LIKE.finditer(merged, first, stop):
        start = marker.start()
        end = merged.find(b"\n", start) + 1 or len(merged)
        kind = merged[start:start + 1]
        line = merged[start:end]
        line_end = b"\r\n" if line.endswith(b"\r\n") else b"\n" if line.endswith(b"\n") else b""
        label = names.get(kind, "").encode("utf-8", "surrogateescape")
        out += [merged[at:start], kind * size + (b" " + label if kind != b"=" else b"") + line_end]
        at = end
    out.append(merged[at:])
    return b"".join(out)


def favour_theirs(merged: bytes, theirs: bytes) -> bytes | None:
    """MERGED (a content merge of THEIRS onto another version, with merge-style conflict markers, from
    versions no line of which is marker-like: `escape`) with each conflict resolved in THEIRS' favour:
    what git writes for the same merge under `-X theirs`. None when MERGED is not made as that assumes."""
    found = _conflicts(merged)
    if found is None:
        return None
    first, stop = found
    out: list[bytes] = [merged[:first]]
    state, at, part_at = "outside", first, first   # at: where the text after the last marker line starts
    ends_with_part = False          # whether OUT ends with a conflict's (non-empty) part of THEIRS
    for marker in _MARKER_LIKE.finditer(merged, first, stop):
        start = marker.start()
        end = merged.find(b"\n", start) + 1 or len(merged)
        kind = merged[start:start + 1]
        if state == "outside" and kind == b"<":
            out.append(merged[at:start])
            state, ends_with_part = "ours", ends_with_part and start == at
        elif state == "ours" and kind == b"=":
            state, part_at = "theirs", end
        elif state == "theirs" and kind == b">":
            out.append(merged[part_at:start])
            state, ends_with_part = "outside", ends_with_part or start > part_at
        else:
            return None
        at = end
    if state != "outside":
        return None
    out.append(merged[at:])
    result = b"".join(out)
    if ends_with_part and at == len(merged) and not theirs.endswith(b"\n"):
        # the merge ends with a part of THEIRS, whose last line is THEIRS' last, which has no line end:
        # the markers needed one after it (LF, or CR LF where the lines end so); -X theirs writes none
        final = theirs[theirs.rfind(b"\n") + 1:]
        for added in (b"\r\n", b"\n"):
            if result.endswith(final + added):
                return result[:-len(added)]
        return None
    return result
