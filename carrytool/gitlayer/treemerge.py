"""Tree merges: `merge-tree --write-tree --stdin` in the run's long-lived merge-tree, large batches shared
with a second one, merges in processes of their own (sidemerges), diff3-style merges."""

from __future__ import annotations

import os
from collections.abc import Sequence

from carrytool.errors import EnvironmentProblem, GitError
from carrytool.gitlayer.answers import _answers
from carrytool.gitlayer.env import EMPTY_TREE
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.mergepipe import MergePipe
from carrytool.gitlayer.objects import MergeResult
from carrytool.gitlayer.sidemerges import AsideMerges, LaterMerges, merge_line

SPLIT_MERGES_AT = 8       # a batch of this many independent merges is shared by two merge-tree processes


def _halves(weights: Sequence[int]) -> tuple[list[int], list[int]]:
    """The indices of WEIGHTS in two groups of about equal total weight, each in index order: the
    heaviest first, each to the lighter group so far (ties: the first group). Equal weights alternate."""
    loads, groups = [0, 0], ([], [])  # type: tuple[list[int], tuple[list[int], list[int]]]
    for n in sorted(range(len(weights)), key=lambda n: (-weights[n], n)):
        side = 0 if loads[0] <= loads[1] else 1
        loads[side] += max(weights[n], 1)
        groups[side].append(n)
    return sorted(groups[0]), sorted(groups[1])


def _cores() -> int:
    """CPUs this process may run on (its affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class TreeMerges:
    """Tree merges: batches, chained merges, merges beside the run's, diff3 merges."""

    # Git's state this reads or updates (all of it made in Git.__init__): _merge_pipe, _side_pipe, _diff3_pipe,
    # _later_pipes, _merged, _explicit_bases, _use_quarantine

    # -- merging and diffing ------------------------------------------------------------------------
    def merge_trees(self, pairs: Sequence[tuple[str, str]], *, weights: Sequence[int] | None = None,
                    bases: Sequence[str] | None = None) -> list[MergeResult]:
        """`merge-tree --write-tree --stdin`: merge each (ours, theirs) commit pair; no work tree.

        All pairs go at once to the run's long-lived merge-tree (see merge_one): no process of their own,
        and its caches of inflated blobs are warm for the chained merges. git computes each merge base
        from history (git 2.39 has no `--merge-base`), so callers shape history (see compose.py).
        WEIGHTS (one per pair, e.g. the files both sides changed) say which merges cost the most: a batch
        shared by two processes is shared by weight (see _merge_batch); the answers do not depend on it.
        BASES (one per pair; only when `takes_merge_base()`): merge each pair of trees from that base.
        """
        if not pairs:
            return []
        lines = [f"{a} {b}" for a, b in pairs] if bases is None else \
            [merge_line(a, b, base) for (a, b), base in zip(pairs, bases, strict=True)]
        weight_of: dict[str, int] = {}
        for line, weight in zip(lines, weights if weights is not None else [1] * len(lines)):
            weight_of[line] = max(weight, weight_of.get(line, 0))
        # kept by line (commits never change): explain merges alone what composing merges again
        return _answers(self._merged, lines,
                        lambda missing: self._merge_batch(missing, [weight_of[line] for line in missing]),
                        full=lambda added: len(self._merged) + added > 20000)

    def _merge_batch(self, lines: list[str], weights: Sequence[int] | None = None) -> list[MergeResult]:
        """Independent merges, in order. A batch of at least SPLIT_MERGES_AT is shared by the run's
        merge-tree and a second one, at the same time, when the machine has two cores for it: the work
        is git's, so the two processes run side by side. Each takes about half the WEIGHTS (`_halves`;
        every other line without them). Each answer depends only on its own line, so the results are
        the same either way."""
        if len(lines) < SPLIT_MERGES_AT or _cores() < 2:
            return self._merges().merge_many(lines)
        own, other = _halves(weights if weights is not None else [1] * len(lines))
        first = self._merges()
        if self._side_pipe is None:
            self._side_pipe = self._new_merge_pipe()
        side = self._side_pipe
        self.flush_objects()                  # here, not in two threads at once: the merges write none
        other_half = Later(lambda: side.merge_many([lines[n] for n in other]), name="carrytool-other-half")
        self.join_at_close(other_half.thread)      # a second Ctrl-C in the join below: close waits for it
        failure: list[BaseException] = []
        mine: list[MergeResult] = []
        theirs: list[MergeResult] = []
        try:
            mine = first.merge_many([lines[n] for n in own])
        except BaseException as exc:  # noqa: BLE001 - raised below, after the other half stopped
            failure.append(exc)
        finally:
            other_half.join()
        try:
            theirs = other_half.result()
        except BaseException as exc:  # noqa: BLE001 - raised below, with this half's
            failure.append(exc)
        if failure:   # the more telling error first: a Ctrl-C (git, in the same process group, died of it
            # too), then a full scratch directory, which names itself and TMPDIR
            raise next((e for e in failure if isinstance(e, KeyboardInterrupt)),
                       next((e for e in failure if isinstance(e, EnvironmentProblem)), failure[0]))
        out: list[MergeResult] = [None] * len(lines)  # type: ignore[list-item]
        for indices, results in ((own, mine), (other, theirs)):
            for n, result in zip(indices, results):
                out[n] = result
        return out

    def upstream_has(self, upstream: str, heads: Sequence[str]) -> list[bool]:
        """For each of HEADS, whether merging it onto UPSTREAM changes nothing: upstream already has it (a PR a
        union folds, merged upstream since: `union status`, and sync's word on a PR a union supersedes)."""
        if not heads:
            return []
        tree = self.tree_of(upstream)
        return [result.clean and result.tree == tree for result in self.merge_trees([(upstream, h) for h in heads])]

    def merge_trees_later(self, pairs: Sequence[tuple[str, str]] = ()) -> LaterMerges:
        """merge_trees in a second long-lived merge-tree process that starts on PAIRS now (and on those
        `add`ed later, as they come) and answers when the returned LaterMerges is called: the run goes on
        meanwhile (e.g. composing in the first one), and git merges on another core. The process ends
        once it answered (or at close). Its objects are stored uncompressed in the quarantine (what
        persists is packed from there, compressed).

        The pairs go in chunks (LATER_CHUNK merges each), whose answers can be taken one by one: when
        the caller asks for the answers before git is done, a third merge-tree takes the chunks not
        merged yet from the end while the second goes on from the front (`_meet`); the caller waits on
        both cores instead of one. Each answer depends only on its own line: the results are the same."""
        later = LaterMerges(self)
        later.add(pairs)
        if pairs:
            later.send_rest()
        return later

    def _meet(self, pipe: MergePipe, chunks: list[list[str]]) -> list[list[MergeResult]]:
        """The answers to CHUNKS, which PIPE was sent in order: what it answered so far, and the rest
        from whichever gets there first, PIPE from the front or (when two chunks or more are left and
        the machine has two cores) a helper merge-tree, sent the rest from the end now. The helper only
        saves time: should it fail, PIPE answers everything."""
        done: list[list[MergeResult] | None] = [None] * len(chunks)
        queues: list[tuple[MergePipe, list[int]]] = [(pipe, list(range(len(chunks))))]
        taken = [0]                    # of each queue's chunks, answered so far
        self._take(queues, taken, chunks, done)
        helper: MergePipe | None = None
        try:
            if len(chunks) - taken[0] >= 2 and _cores() >= 2:
                back = list(range(len(chunks) - 1, taken[0], -1))     # from the end; the next one stays PIPE's
                helper = self._helper(pipe, [chunks[n] for n in back])
                if helper is not None:
                    queues.append((helper, back))
                    taken.append(0)
            while None in done:
                with pipe.condition:
                    moved = self._take(queues, taken, chunks, done)
                    if moved or None not in done:
                        continue
                    if all(taken[q] == len(order) for q, (_m, order) in enumerate(queues)):
                        raise GitError("`git merge-tree --stdin` gave fewer answers than merges")
                    if pipe.wait(0.05):
                        continue
                # no answer for a while: should a platform's stdio buffer be larger than expected, one more
                # flush merge after everything each pipe was sent pushes what it holds out (`ready` never
                # reads beyond the chunks), written with the condition released (the readers go on)
                for q, (merges, order) in enumerate(queues):
                    try:
                        if taken[q] < len(order):
                            merges.push()
                    except GitError:
                        if q == 0:
                            raise
                        taken[q] = len(order)      # the helper stopped: the first pipe answers its chunks
        finally:
            if helper is not None:
                helper.close(stop=True)
                self._later_pipes.remove(helper)
        return done  # type: ignore[return-value]

    def _helper(self, pipe: MergePipe, chunks: list[list[str]]) -> MergePipe | None:
        """A merge-tree that shares PIPE's flush merge and condition, sent CHUNKS; None when it cannot start."""
        helper = None
        try:
            helper = MergePipe(self, stored=self._use_quarantine, like=pipe, cond=pipe.condition)
            self._later_pipes.append(helper)
            helper.send_chunks(chunks)
        except (GitError, OSError):
            if helper is not None:
                helper.close(stop=True)
                self._later_pipes.remove(helper)
            return None
        return helper

    @staticmethod
    def _take(queues: list[tuple[MergePipe, list[int]]], taken: list[int], chunks: list[list[str]],
              done: list[list[MergeResult] | None]) -> bool:
        """Take every chunk's answers the pipes of QUEUES have given (a helper that stopped answering is
        dropped: the first pipe answers its chunks too); whether any came."""
        moved = False
        for q, (merges, order) in enumerate(queues):
            try:
                while taken[q] < len(order) and None in done and \
                        (got := merges.ready(len(chunks[order[taken[q]]]))) is not None:
                    if done[order[taken[q]]] is None:        # else the other's: the same answers
                        done[order[taken[q]]] = got
                    taken[q] += 1
                    moved = True
            except GitError:
                if q == 0:
                    raise
                taken[q] = len(order)      # the helper failed: nothing more from it
        return moved

    def merges_aside(self) -> AsideMerges:
        """Merges to send one by one to a merge-tree of their own, beside the run's (see AsideMerges)."""
        return AsideMerges(self)

    def merge_trees_diff3(self, pairs: Sequence[tuple[str, str]], *, bases: Sequence[str] | None = None) -> list[MergeResult]:
        """merge_trees in the run's merge-tree that writes `diff3` style conflicts (started when first
        asked), one batch at a time, not kept: only the structured rule asks it (merge_diff3)."""
        if not pairs:
            return []
        if self._diff3_pipe is None:
            like = self._merge_pipe or self._side_pipe or next(iter(self._later_pipes), None)
            self._diff3_pipe = MergePipe(self, stored=self._use_quarantine, like=like, style="diff3")
        lines = [f"{a} {b}" for a, b in pairs] if bases is None else \
            [merge_line(a, b, base) for (a, b), base in zip(pairs, bases, strict=True)]
        return self._diff3_pipe.merge_many(lines)

    def merge_one(self, ours: str, theirs: str, *, base: str | None = None) -> MergeResult:
        """One merge in the long-lived `merge-tree --write-tree --stdin` (see gitlayer.mergepipe): of two
        commits, their merge base found by git; or, with BASE (only when `takes_merge_base()`), of two
        trees or commits from that base, with no history walked."""
        return self._merges().merge(merge_line(ours, theirs, base))

    def _merges(self) -> MergePipe:
        if self._merge_pipe is None:
            self._merge_pipe = self._new_merge_pipe()
        return self._merge_pipe

    def _new_merge_pipe(self) -> MergePipe:
        """A long-lived merge-tree of this run. With a quarantine it writes stored (uncompressed) objects:
        most of what merges write is never kept, and the quarantine's pack compresses what is. It shares
        the flush merge of a pipe the run already has (the same git, the same answer): no process of its
        own to learn that answer."""
        like = self._merge_pipe or self._side_pipe or next(iter(self._later_pipes), None)
        return MergePipe(self, stored=self._use_quarantine, like=like)

    def takes_merge_base(self) -> bool:
        """Whether this git's `merge-tree --stdin` takes `BASE -- OURS THEIRS` lines of trees (git >= 2.45
        or so): asked once, by merging three empty trees."""
        if self._explicit_bases is None:
            line = f"{EMPTY_TREE} -- {EMPTY_TREE} {EMPTY_TREE}\n".encode()
            proc = self.run("merge-tree", "--write-tree", "--stdin", input=line, check=False)
            self._explicit_bases = proc.returncode == 0 and proc.stdout.startswith(b"1\0" + EMPTY_TREE.encode())
        return self._explicit_bases
