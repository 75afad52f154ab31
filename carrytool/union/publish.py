"""What a fold writes beside its commit: the drafted union message, the patch file of a `patch:` union
(and whether the one on disk was edited by hand), the manifest, and `union new`'s entry taken back out."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import Any

from carrytool.errors import CarryError
from carrytool.manifest.edit import in_its_line_ends, update_union
from carrytool.manifest.load import parse_manifest
from carrytool.manifest.model import Entry
from carrytool.manifest.safefile import write_atomic
from carrytool.pipeline.atomic import crash_point
from carrytool.pipeline.resolve import namespace, patch_message
from carrytool.union.outcome import FoldItem
from carrytool.union.state import manifest_before

_INDEX_LINE = re.compile(rb"^index [0-9a-f]+\.\.[0-9a-f]+(?: [0-7]+)?\r?\n", re.MULTILINE)


def _comparable_patch(data: bytes) -> bytes:
    """A format-patch file without its `index` lines (git shortened their SHAs to a length that grows with the
    repository: helper-92, a patch nobody edited was refused once the repository had fetched more objects; files
    written before `_patch_of` named blobs in full still hold such lines)."""
    return _INDEX_LINE.sub(b"", data)


def _same_patch(disk: bytes, wrote: bytes) -> bool:
    """DISK is WROTE but for `index` lines and, when every line of DISK ends in CRLF (a core.autocrlf
    checkout, which writes git's mixed line ends all CRLF: helper-94), line ends; otherwise a line given a
    CR is an edit (helper-93)."""
    disk, wrote = _comparable_patch(disk), _comparable_patch(wrote)
    if disk.count(b"\r\n") == disk.count(b"\n"):
        disk, wrote = disk.replace(b"\r\n", b"\n"), wrote.replace(b"\r\n", b"\n")
    return disk == wrote


class Publishing:
    """Union's writing of the union message, patch file and manifest (mixed into fold.Union)."""

    def patch_edited(self) -> str | None:
        """Why a `patch:` union's file looks edited by hand since the last fold here wrote it (its message is
        that fold's, its changes are not), else None (helper-88: `union compose` replaced such an edit without
        a word, and `union status` said "up to date"). A patch another fold wrote (a colleague's refold:
        another message) or one this repository has no fold of is not judged."""
        if not self.entry.patch:
            return None
        path = self.manifest.base_dir / self.entry.patch
        last = self.git.ref_value(f"{namespace(self.manifest)}/carry/{self.name}")
        if last is None or path.is_symlink() or not path.is_file():
            return None
        data = path.read_bytes()
        wrote = self._patch_of(last)
        if _same_patch(data, wrote) or patch_message(data.replace(b"\r\n", b"\n")) != \
                patch_message(wrote.replace(b"\r\n", b"\n")):
            return None
        return (f"{self.entry.patch} is not what the last fold of {self.entry.id} wrote ({last[:12]}): the same "
                "message with other changes (edited by hand?)")

    def _patch_of(self, commit: str) -> bytes:
        """The patch file a `patch:` union's fold writes for COMMIT (and patch_edited compares with)."""
        # blobs named in full (`--full-index`): git shortens them to a length that grows with the repository's
        # object count, so the same fold wrote other bytes in another clone, and a shortened name can be ambiguous
        # in a larger one, where sync's `apply --build-fake-ancestor` then misses the patch's own base
        return self.git.run("format-patch", "-1", "--stdout", "--zero-commit", "--no-signature", "--no-stat",
                            "--full-index", commit).stdout

    def message(self, state: dict, items: list[FoldItem]) -> str:
        """The drafted union message (explain's), describing this fold: the heads it just folded."""
        from carrytool.review.evidence import EntryFacts
        from carrytool.review.explain import draft_union_message

        heads = {item.pr: item.head for item in items}
        union = replace(self.entry, supersedes=tuple(replace(s, head=heads.get(s.pr, s.head))
                                                     for s in self.entry.supersedes))
        diffs = self.git.diff_trees([(i.base, i.head) for i in items] + [(state["upstream"], state["tip"])])
        facts = {}
        for item, changes in zip(items, diffs):
            entry = self.manifest.entry(item.id) or Entry(kind="pr", number=item.pr)
            if not entry.title:
                subject = str(self.git.commit_info(item.head)["message"]).split("\n", 1)[0]
                entry = replace(entry, title=subject or None)
            facts[item.id] = EntryFacts(entry, None, item.head, item.base, changes)
        facts[union.id] = EntryFacts(union, None, None, state["upstream"], diffs[-1])
        return draft_union_message(self.manifest, facts, union)

    def written(self) -> str:
        """A digest of what a fold leaves the user to commit: the manifest, the patch file of a `patch:` union, and
        the union's folder of the resolution store. The same before a fold and after it: the fold changed nothing
        (h268: a compose with the same heads, upstream and resolutions said `next: commit the manifest folder`)."""
        digest = hashlib.sha256()
        patch = self.manifest.base_dir / self.entry.patch if self.entry.patch else None
        folder = self.store.root / self.name
        found = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        for path in [self.manifest.path, *([patch] if patch is not None else []), *found]:
            data = path.read_bytes() if path.is_file() else None
            digest.update(f"{path}\0{-1 if data is None else len(data)}\0".encode() + (data or b""))
        return digest.hexdigest()

    def update_manifest(self, commit: str, folded: dict[int, str]) -> bool:
        """Write the patch file (a `patch:` union) and the manifest, each by rename; True if it changed."""
        text = self.manifest.path.read_bytes().decode("utf-8")
        if self.entry.patch:
            write_atomic(self.manifest.base_dir / self.entry.patch, self._patch_of(commit))
            crash_point("finish:patch")
            new_text = in_its_line_ends(text, lambda lf: update_union(lf, self.entry.index, commit=None,
                                                                      folded=folded))
        else:
            new_text = in_its_line_ends(text, lambda lf: update_union(lf, self.entry.index, commit=commit,
                                                                      folded=folded))
        if new_text == text:
            return False
        parse_manifest(new_text, self.manifest.path)      # never write a manifest that does not load
        write_atomic(self.manifest.path, new_text.encode("utf-8"))
        return True

    def take_back(self, before: bytes, written: str) -> bool:
        """Put the manifest back as BEFORE, what it was before `union new` added this entry, when it is still
        what that command wrote (WRITTEN: its SHA-256): a manifest naming a patch nothing wrote fails every
        sync. Whether it did; what stops it (the manifest made a link since) is said."""
        try:
            if hashlib.sha256(self.manifest.path.read_bytes()).hexdigest() != written:
                # edited since: the entry stays, said (helper-88: abort said nothing, and the next sync stopped
                # on a patch no fold wrote)
                # ... unless the fold finished and wrote it itself (helper-92: interrupted right after, the
                # user was told to remove a finished union): then the entry names what the fold made
                patch = self.manifest.base_dir / self.entry.patch if self.entry.patch else None
                unfinished = not patch.exists() if patch is not None else \
                    self.git.ref_value(f"{namespace(self.manifest)}/carry/{self.name}") is None
                if unfinished:
                    missing = f"; it names {self.entry.patch}, which no fold wrote, so sync stops on it (exit 2) " \
                        "until the entry goes or a fold of it finishes" if patch is not None else ""
                    then = f", or {self.command('compose')}" if self.entry.supersedes else ""
                    self.notify(f"left {self.entry.id} in {self.manifest.path}: the manifest was edited since `union "
                                f"new` added the entry{missing}; remove it by hand{then}")
                return False
            write_atomic(self.manifest.path, before)
        except OSError:
            return False
        except CarryError as exc:
            self.notify(f"left {self.entry.id} in {self.manifest.path}: {exc.message}")
            return False
        return True

    def _take_back(self, added: Any) -> bool:
        """`take_back` for the fold being aborted when `union new` started it (ADDED, from the state); the
        fold is aborted all the same."""
        if not isinstance(added, dict):
            return False
        try:
            written = str(added["written"])
            current = self.manifest.path.read_bytes()
            # edited since (`take_back` says so), or what `union new` wrote: the manifest before it, from that
            before = manifest_before(added, current) if hashlib.sha256(current).hexdigest() == written else b""
        except (ValueError, KeyError, TypeError, OSError):
            return False
        return self.take_back(before, written)
