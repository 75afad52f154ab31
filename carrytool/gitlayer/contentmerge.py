"""Content merges of three blobs or texts, asked of the run's long-lived merge-tree (no process, no
temporary file): clean or with markers, relabelled, in diff3 style, or resolved in theirs' favour."""

from __future__ import annotations

from collections.abc import Sequence

from carrytool.errors import GitError
from carrytool.gitlayer import markers
from carrytool.gitlayer.answers import _answers
from carrytool.gitlayer.mergepipe import merge_contents_many


class ContentMerges:
    """Content merges: three blobs or texts merged by merge-tree, kept by blob triple."""

    # Git's state this reads or updates (all of it made in Git.__init__): _contents

    def merge_theirs(self, ours: str | None, base: str | None, theirs: str | None) -> bytes | None:
        """The content merge of three blobs (None: empty) with each conflicting hunk resolved in THEIRS'
        favour, as git's `-X theirs` resolves it (gitlayer.markers): asked of the long-lived merge-tree
        (merge_contents), no process and no temporary file. None for a binary (git takes THEIRS whole)."""
        oids: Sequence[str | None] = [ours, base, theirs]
        blobs = [self.read_blob(oid) if oid else b"" for oid in oids]
        if any(b"\0" in blob[:8000] or len(blob) > markers.MAX_XDIFF_SIZE for blob in blobs):
            return None                     # git merges binaries (-X theirs: takes theirs whole)
        escaped, prefix = markers.escape(blobs)
        if prefix:      # a line that looks like a marker: merged as one that does not, taken back after
            if any(len(blob) > markers.MAX_XDIFF_SIZE for blob in escaped):
                raise GitError(f"{theirs}: within a few bytes of the largest file git merges as text, and "
                               "holding lines that look like conflict markers: carrytool cannot resolve "
                               "it in the entry's favour as git would", hint="resolve the file in a union")
            oids = [self.write_blob(blob) for blob in escaped]
        merged = self.merge_contents(*oids)
        if merged is None:
            return None
        resolved = merged[1] if merged[0] else markers.favour_theirs(merged[1], escaped[2])
        if resolved is None:
            raise GitError("`git merge-tree` wrote conflict markers carrytool cannot read back "
                           f"(merging {theirs or 'an empty file'} onto {ours or 'an empty file'})",
                           hint="report it to carrytool's maintainers with the blobs named")
        return markers.unescape(resolved, prefix)

    def merge_contents(self, ours: str | None, base: str | None, theirs: str | None) -> tuple[bool, bytes] | None:
        """merge-tree's content merge of three blobs in the long-lived merge process (no process, no
        temporary file): (clean, merged), or None for a binary. See gitlayer.mergepipe.merge_contents_many.
        Kept by blob triple: blame asks the same merge for every earlier entry it weighs."""
        return self.merge_contents_many([(ours, base, theirs)])[0]

    def merge_contents_many(self, triples: Sequence[tuple[str | None, str | None, str | None]]) -> list[tuple[bool, bytes] | None]:
        """merge_contents of each (ours, base, theirs), the ones not known yet asked as one batch."""
        return _answers(self._contents, triples, lambda missing: merge_contents_many(self, missing),
                        full=lambda added: len(self._contents) + added > 256)

    def merge_texts(self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]) -> tuple[bool, bytes] | None:
        """The content merge of three texts as merge-tree makes it, its conflicts' markers labelled LABELS
        (ours, base, theirs: what `git merge-file -L` would write): (clean, merged), or None for a binary.
        In the run's long-lived merge-tree: no process, no temporary file."""
        return self._merge_texts((ours, base, theirs), labels, markers.SIZE, diff3=False)

    def merge_diff3(self, ours: bytes, base: bytes, theirs: bytes, marker_size: int) -> tuple[bool, bytes] | None:
        """merge_texts with each conflict's base part shown (`diff3` style) and markers of MARKER_SIZE,
        labelled ours, base, theirs: what `git merge-file --diff3 --marker-size=N` writes, from merge-tree's
        content merge, in a long-lived merge-tree of its own (the only one of a run that writes diff3)."""
        return self._merge_texts((ours, base, theirs), ("ours", "base", "theirs"), marker_size, diff3=True)

    def _merge_texts(self, blobs: tuple[bytes, bytes, bytes], labels: tuple[str, str, str], marker_size: int, *,
                     diff3: bool) -> tuple[bool, bytes] | None:
        """BLOBS (ours, base, theirs) merged by merge-tree, lines that look like markers escaped for the merge
        (gitlayer.markers), the markers rewritten to MARKER_SIZE and LABELS: (clean, merged), or None for a
        merge git makes of binaries (a NUL in the first 8000 bytes, a side too large to diff)."""
        if any(b"\0" in blob[:8000] or len(blob) > markers.MAX_XDIFF_SIZE for blob in blobs):
            return None
        escaped, prefix = markers.escape(blobs)
        if any(len(blob) > markers.MAX_XDIFF_SIZE for blob in escaped):
            return None
        merged = merge_contents_many(self, [tuple(self.write_blob(blob) for blob in escaped)],  # type: ignore[list-item]
                                     diff3=diff3)[0] if diff3 else \
            self.merge_contents(*(self.write_blob(blob) for blob in escaped))
        if merged is None:
            return None
        clean, text = merged
        if not clean:
            relabelled = markers.relabel(text, marker_size, labels)
            if relabelled is None:          # a conflict without markers: git merged binaries
                return None
            text = relabelled
        return clean, markers.unescape(text, prefix)
