"""One long-lived `git merge-tree --write-tree --stdin` that answers chained merges one at a time.

A chained merge needs the previous answer before it can ask the next question, but merge-tree writes
its answers through stdio's buffer and never flushes it between merges (git 2.39 to 2.47 at least).
So each question is followed by a *flush merge*: a small merge of two fixed commits that conflict in
a file with a very long name, whose answer is larger than stdio's buffer and so pushes the real answer
out of it. The flush merge's answer is known in advance (asked once, in its own process): the real
answer is everything before it. Should a platform's buffer be larger, another flush merge is sent
after a short wait, until the answer arrives. No process or temporary file per merge: what merges write
are objects (their results, and the flush merge's few), into the run's quarantine where it has one
(sync, explain), else into the repository's store, where nothing refers to them and `git gc` prunes
them.
"""

from __future__ import annotations

import os
import subprocess
import threading
from typing import Any

from carrytool.errors import GitError
from carrytool.gitlayer.env import git_argv, wait_exit
from carrytool.gitlayer.objects import MergeResult, Signature, _parse_merge_tree

Git = Any   # carrytool.gitlayer.git.Git, which imports this module: not imported back (no cycle)

_FLUSH_NAME = b"carrytool-flush/" + b"f" * 2000
_SIG = Signature("carrytool", "carrytool@localhost", 1000000000)


class MergePipe:
    """`merge-tree --write-tree --stdin`, one merge per call, in one process for the whole run."""

    def __init__(self, git: Git, *, stored: bool = False, like: MergePipe | None = None,
                 cond: threading.Condition | None = None, style: str = "merge") -> None:
        """STORED: the merges' objects are written as stored (uncompressed) loose files, for merges whose
        results go to the quarantine and are read there, if at all (the quarantine's pack compresses what
        persists): zlib's work on every merged blob is saved, and most are never kept (a conflicted merge's
        files with their markers, a blame merge, a merge onto upstream the chain merges again). Every merge
        process of a run with a quarantine is one (Git._new_merge_pipe): 13-22% of a sync on four real
        corpora.

        LIKE: a pipe of the same run whose flush merge (and its known answer) this one shares: nothing to
        write or ask first. COND: the condition its reader notifies (one that two pipes share, to wait for
        either: `wait`).

        STYLE: how its conflicts are written (`merge.conflictStyle`): `merge` (the pinned style of every
        merge that composes) or `diff3` (each conflict's base part too, for the structured rule)."""
        self.git = git
        self.style = style
        self._style_config = ("-c", f"merge.conflictStyle={style}") if style != "merge" else ()
        if like is not None and like.style == style:
            self._flush_line, answer = like._flush_line, like._flush_answer
        else:
            self._flush_line = like._flush_line if like is not None else self._flush_commits()
            answer = git.run(*self._style_config, "merge-tree", "--write-tree", "--stdin",
                             input=self._flush_line).stdout
        if not answer.startswith(b"0\0"):
            raise GitError("`git merge-tree` did not answer the flush merge as expected")
        self._flush_answer = answer
        self._marker = answer[:60]
        self._proc = subprocess.Popen(
            git_argv(*(("-c", "core.looseCompression=0") if stored else ()), *self._style_config, "merge-tree",
                     "--write-tree", "--stdin"),
            cwd=git.private_dir(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git.env())
        self._stderr = bytearray()   # its last words, for the error when it stops answering
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self._buf = bytearray()
        self._skip = 0              # bytes of flush answers still to drop from the front of the buffer
        self._eof = False
        self._cond = cond if cond is not None else threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _flush_commits(self) -> bytes:
        """Two commits that conflict in one long-named file, from a common parent: `OURS THEIRS\\n`."""
        def commit(content: bytes, parents: list[str]) -> str:
            blob = self.git.write_object("blob", content)
            inner = self.git.mktree([("100644", "blob", blob, _FLUSH_NAME.split(b"/")[1])])
            tree = self.git.mktree([("040000", "tree", inner, b"carrytool-flush")])
            return self.git.write_commit(tree, parents, _SIG, _SIG, "carrytool: flush merge\n")

        base = commit(b"base\n", [])
        ours, theirs = commit(b"ours\n", [base]), commit(b"theirs\n", [base])
        self.git.flush_objects()
        return f"{ours} {theirs}\n".encode()

    def _read(self) -> None:
        fd = self._proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            with self._cond:
                if chunk:
                    self._buf += chunk
                else:
                    self._eof = True
                self._cond.notify_all()
            if not chunk:
                return

    def _read_stderr(self) -> None:
        fd = self._proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 14)
            except OSError:
                chunk = b""
            if not chunk:
                return
            self._stderr += chunk
            del self._stderr[:-4096]

    def _stopped(self) -> Exception:
        self._stderr_reader.join(timeout=5)
        stderr = bytes(self._stderr)
        return self.git.scratch_problem(stderr) or GitError("`git merge-tree --stdin` stopped answering",
                                                            stderr=stderr.decode("utf-8", "replace"))

    def merge(self, line: str) -> MergeResult:
        """Send one stdin line (`OURS THEIRS` or, git >= 2.40, `BASE -- OURS THEIRS`); return its answer."""
        return self.merge_many([line])[0]

    def merge_many(self, lines: list[str]) -> list[MergeResult]:
        """Send LINES at once (independent merges) and return their answers, in order."""
        self.send_many(lines)
        return self.answers(len(lines))

    def send_many(self, lines: list[str]) -> None:
        """Send LINES (independent merges) without waiting: `answers` collects them. git merges them
        while the caller goes on (another merge-tree process can work on something else meanwhile)."""
        self.git.flush_objects()               # every object the merge names must be on disk
        self._send("".join(f"{line}\n" for line in lines).encode() + self._flush_line)

    def send_chunks(self, chunks: list[list[str]]) -> None:
        """Send CHUNKS of independent merges at once, each followed by a flush merge: the answers to a
        chunk can be taken (`ready`) as soon as git merged it, while it goes on with the next ones."""
        self.git.flush_objects()
        self._send(b"".join("".join(f"{line}\n" for line in chunk).encode() + self._flush_line
                            for chunk in chunks))

    def ready(self, count: int, flushes: int = 1) -> list[MergeResult] | None:
        """The answers to the next chunk sent (`send_chunks`), of COUNT merges, when git has given them;
        else None, without waiting (`wait` waits for more). FLUSHES: the flush merges sent after that chunk
        (its own, and each `push` made while it was the last chunk sent)."""
        with self._cond:
            answer = self._next_answer(flushes)
            if answer is None:
                if self._eof:
                    raise self._stopped()
                return None
        return self._parsed(answer, count)

    @property
    def condition(self) -> threading.Condition:
        """What the pipe's reader notifies when git answered more (`wait`)."""
        return self._cond

    def wait(self, timeout: float) -> bool:
        """Wait at most TIMEOUT seconds for this pipe's reader (or another's that shares its condition)
        to bring more; whether one did."""
        with self._cond:
            return self._cond.wait(timeout=timeout)

    def push(self) -> None:
        """One more flush merge after everything sent: should a platform's stdio buffer be larger than
        expected, it pushes the last chunk's answer out (`ready` never reads beyond the chunks sent)."""
        self._send(self._flush_line)

    def answers(self, count: int) -> list[MergeResult]:
        """The answers to the COUNT merges of the last `send_many`, in order (waits for them)."""
        flushes = 1
        with self._cond:
            while True:
                answer = self._next_answer(flushes)
                if answer is not None:
                    break
                if self._eof:
                    raise self._stopped()
                if not self._cond.wait(timeout=0.05):
                    self._cond.release()
                    try:
                        self._send(self._flush_line)      # a larger stdio buffer than expected: push again
                    finally:
                        self._cond.acquire()
                    flushes += 1
        return self._parsed(answer, count)

    def _next_answer(self, flushes: int) -> bytes | None:
        """With the condition held: what git answered before the next flush merge's answer, once the
        flush answers before it are dropped (their bytes arrive whole); then the FLUSHES flush answers
        that follow it are dropped as they arrive. None while it has not come."""
        if self._skip and len(self._buf) >= self._skip:
            del self._buf[:self._skip]
            self._skip = 0
        at = self._buf.find(self._marker) if not self._skip else -1
        if at < 0:
            return None
        answer = bytes(self._buf[:at])
        del self._buf[:at]
        self._skip = len(self._flush_answer) * flushes
        return answer

    @staticmethod
    def _parsed(answer: bytes, count: int) -> list[MergeResult]:
        results = list(_parse_merge_tree(answer))
        if len(results) != count:
            raise GitError("`git merge-tree --stdin` gave an unexpected answer")
        return results

    def _send(self, data: bytes) -> None:
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except OSError as exc:
            self._proc.wait()
            raise self._stopped() from exc

    def hang_up(self) -> None:
        """Close its stdin: git ends once it merged what it was sent (`close` waits for that). A run
        hangs up on all its processes first, so that they end side by side."""
        try:
            self._proc.stdin.close()
        except OSError:
            pass

    def close(self, *, stop: bool = False) -> None:
        """End the process once it merged what it was sent; with STOP, now (what it was still merging is
        not needed: git writes each object whole or not at all, and the scratch goes at the run's end)."""
        if stop:
            self._proc.kill()
        self.hang_up()
        try:
            wait_exit(self._proc, 10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=10)
        self._stderr_reader.join(timeout=10)
        self._proc.stdout.close()
        self._proc.stderr.close()


def merge_contents(git: Git, ours: str | None, base: str | None, theirs: str | None) -> tuple[bool, bytes] | None:
    """merge-tree's 3-way content merge of three blobs (None: empty), asked of the long-lived merge-tree
    as a one-file tree merge: (clean, merged content with conflict markers), or None for a binary.

    The markers carry merge-tree's labels (object names): callers compare regions, not labels."""
    return merge_contents_many(git, [(ours, base, theirs)])[0]


def merge_contents_many(git: Git, triples: list[tuple[str | None, str | None, str | None]], *,
                        diff3: bool = False) -> list[tuple[bool, bytes] | None]:
    """merge_contents of each (ours, base, theirs) blob triple, asked as one batch of tree merges (which
    two merge-tree processes may share: Git.merge_trees): the answers are those of one merge at a time.
    DIFF3: in the run's merge-tree that writes `diff3` style conflicts (Git.merge_trees_diff3)."""
    out: list[tuple[bool, bytes] | None] = [None] * len(triples)
    asked: list[int] = []
    pairs: list[tuple[str, str]] = []
    bases: list[str] = []
    explicit = git.takes_merge_base()
    binary: dict[str, bool] = {}      # each distinct blob read once (a batch asks the same base many times)
    for n, (ours, base, theirs) in enumerate(triples):
        for oid in (ours, base, theirs):
            if oid and oid not in binary:
                binary[oid] = b"\0" in git.read_blob(oid)[:8000]
        if any(binary.get(oid, False) for oid in (ours, base, theirs) if oid):
            continue
        trees = [git.mktree([("100644", "blob", oid or git.write_object("blob", b""), b"file")])
                 for oid in (ours, base, theirs)]
        if explicit:
            pairs.append((trees[0], trees[2]))
            bases.append(trees[1])
        else:
            root = git.write_commit(trees[1], [], _SIG, _SIG, "carrytool: content merge base\n")
            pairs.append(tuple(git.write_commit(tree, [root], _SIG, _SIG, "carrytool: content merge side\n")  # type: ignore[arg-type]
                               for tree in (trees[0], trees[2])))
        asked.append(n)
    results = (git.merge_trees_diff3 if diff3 else git.merge_trees)(pairs, bases=bases if explicit else None)
    for n, result in zip(asked, results):
        merged = git.blob_at(result.tree, "file")
        out[n] = (result.clean, git.read_blob(merged[1]) if merged else b"")
    return out
