"""Merges in a merge-tree process of their own, beside the run's: in chunks, answered when asked
(`LaterMerges`), or one at a time, each taken when needed (`AsideMerges`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carrytool.gitlayer.mergepipe import MergePipe
from carrytool.gitlayer.objects import MergeResult

Git = Any   # carrytool.gitlayer.git.Git, which imports this module: not imported back (no cycle)


LATER_CHUNK = 8           # merge_trees_later's merges per chunk (each one costs a flush merge)


class LaterMerges:
    """Merges sent to a merge-tree process of their own as they come (Git.merge_trees_later), in chunks of
    LATER_CHUNK; calling it returns every answer, in order."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._pipe: MergePipe | None = None
        self._chunks: list[list[str]] = []      # sent
        self._pending: list[str] = []           # not a whole chunk yet
        self._answered = False

    def add(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Merge PAIRS (commits) too: each whole chunk is sent to git now."""
        self._pending += [f"{a} {b}" for a, b in pairs]
        whole = len(self._pending) - len(self._pending) % LATER_CHUNK
        if whole:
            self._send([self._pending[n:n + LATER_CHUNK] for n in range(0, whole, LATER_CHUNK)])
            del self._pending[:whole]

    def send_rest(self) -> None:
        """Send what is not a whole chunk too: nothing more will be added."""
        if self._pending:
            self._send([self._pending])
            self._pending = []

    def _send(self, chunks: list[list[str]]) -> None:
        if self._pipe is None:
            self._pipe = self._git._new_merge_pipe()
            self._git._later_pipes.append(self._pipe)
        self._pipe.send_chunks(chunks)
        self._chunks += chunks

    def __call__(self) -> list[MergeResult]:
        if self._answered:
            raise RuntimeError("merge_trees_later's answers were taken already")
        self._answered = True
        self.send_rest()
        pipe = self._pipe
        if pipe is None:
            return []
        try:
            return [result for chunk in self._git._meet(pipe, self._chunks) for result in chunk]
        finally:
            pipe.close(stop=True)
            self._git._later_pipes.remove(pipe)
            self._pipe = None


def merge_line(ours: str, theirs: str, base: str | None = None) -> str:
    """A `merge-tree --stdin` line: `OURS THEIRS`, or with BASE (git that takes it) `BASE -- OURS THEIRS`."""
    return f"{base} -- {ours} {theirs}" if base else f"{ours} {theirs}"


class AsideMerges:
    """Merges sent one at a time to a merge-tree process of their own (Git.merges_aside), each as soon as
    it is known, and answered in the order sent: the caller goes on meanwhile (composing, in the run's
    own merge-tree) and git merges on another core. `take` waits for an answer; `close` ends the process
    (what it was still merging is not needed)."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._pipe: MergePipe | None = None
        self._flushes: list[int] = []           # per merge sent: the flush merges after it (MergePipe.ready)
        self._answers: list[MergeResult] = []

    def send(self, ours: str, theirs: str, *, base: str | None = None) -> int:
        """Merge as Git.merge_one would (BASE only where git takes it); its ticket for `take`."""
        if self._pipe is None:
            self._pipe = self._git._new_merge_pipe()
            self._git._later_pipes.append(self._pipe)
        self._pipe.send_chunks([[merge_line(ours, theirs, base)]])
        self._flushes.append(1)
        return len(self._flushes) - 1

    def take(self, ticket: int) -> MergeResult:
        """The answer to merge TICKET (waiting for it, and for those sent before it)."""
        pipe = self._pipe
        assert pipe is not None and ticket < len(self._flushes)
        while True:
            with pipe.condition:        # held from the look to the wait: no answer arrives unseen between
                self._collect(pipe)
                if len(self._answers) > ticket:
                    return self._answers[ticket]
                if pipe.wait(0.05):
                    continue
            # no answer for a while: should a platform's stdio buffer be larger than expected, one more
            # flush merge after everything sent pushes what it holds out (its answer follows the last
            # merge sent: `ready` drops it with that merge's own)
            pipe.push()
            self._flushes[-1] += 1

    def first_clean(self) -> int | None:
        """The first merge answered clean so far, if any: what git has answered is taken, without waiting."""
        if self._pipe is not None:
            self._collect(self._pipe)
        return next((n for n, answer in enumerate(self._answers) if answer.clean), None)

    def _collect(self, pipe: MergePipe) -> None:
        """Take every answer git has given so far, in order, without waiting."""
        while len(self._answers) < len(self._flushes):
            got = pipe.ready(1, self._flushes[len(self._answers)])
            if got is None:
                return
            self._answers += got

    def close(self) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.close(stop=True)
            if pipe in self._git._later_pipes:      # (an interrupt may have come before it was listed)
                self._git._later_pipes.remove(pipe)
