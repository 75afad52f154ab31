"""The long-lived merge-tree answers each chained merge exactly as a merge-tree process of its own does."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from carrytool.errors import GitError
from carrytool.gitlayer.git import SPLIT_MERGES_AT, Git
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.mergepipe import MergePipe
from tests.gitrepo import init_repo, many_prs


def git_runs(monkeypatch) -> list[tuple[str, ...]]:  # noqa: ANN001
    """The argument lists of every `Git.run` from now on (the processes a run starts, one by one)."""
    calls: list[tuple[str, ...]] = []
    real_run = Git.run

    def counting(self, *args, **kwargs):  # noqa: ANN001, ANN202
        calls.append(args)
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Git, "run", counting)
    return calls


def merges_sent(monkeypatch) -> list[list[str]]:  # noqa: ANN001
    """The lines of every batch sent to a merge-tree process from now on."""
    sent: list[list[str]] = []
    real = MergePipe.merge_many

    def spy(self, lines):  # noqa: ANN001, ANN202
        sent.append(list(lines))
        return real(self, lines)

    monkeypatch.setattr(MergePipe, "merge_many", spy)
    return sent


def test_merge_one_equals_one_process_per_merge(tmp_path: Path) -> None:
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 30, files=6)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 31)]
        ours = up.commit({"f/conflict.txt": "ours\n"}, "ours", parent="main", ref="refs/heads/ours")
        theirs = up.commit({"f/conflict.txt": "theirs\n"}, "theirs", parent="main", ref="refs/heads/theirs")
        pairs = [(main, head) for head in heads] + [(heads[n], heads[n + 1]) for n in range(29)]
        pairs += [(ours, theirs), (heads[0], ours), (theirs, ours)]
        alone = [git.merge_trees([pair])[0] for pair in pairs]
        piped = [git.merge_one(*pair) for pair in pairs]
        assert piped == alone
        assert any(not r.clean for r in alone) and any(r.clean for r in alone)
        if git.takes_merge_base():
            for (ours, theirs), want in zip(pairs, alone):
                base = git.merge_base(ours, theirs)
                got = git.merge_one(git.tree_of(ours), git.tree_of(theirs), base=git.tree_of(base))
                assert got.clean == want.clean
                if want.clean:
                    assert got.tree == want.tree


def test_patches_are_read_once_per_tree_pair(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 4, files=4)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        pairs = [(main, git.rev_parse(f"refs/pull/{n}/head")) for n in range(1, 5)]
        first = git.diff_patches(pairs[:2])
        calls = git_runs(monkeypatch)
        again = git.diff_patches(pairs + pairs[:1])
        assert again[:2] == first and again[4] == first[0] and all(again)
        assert [c[0] for c in calls] == ["diff-tree"]          # only the two pairs not read before
        assert calls[0][-1] == "--ignore-submodules=none"
        assert git.diff_patches(pairs) == again[:4] and len(calls) == 1


def test_a_large_batch_shared_by_two_processes_answers_as_one_does(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 30, files=6)
    ours = up.commit({"f/conflict.txt": "ours\n"}, "ours", parent="main", ref="refs/heads/ours")
    theirs = up.commit({"f/conflict.txt": "theirs\n"}, "theirs", parent="main", ref="refs/heads/theirs")
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 31)]
        pairs = [(main, head) for head in heads] + [(heads[n], heads[n + 1]) for n in range(29)]
        pairs += [(ours, theirs), (heads[3], ours), (theirs, ours)]
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 1)
        alone = git.merge_trees(pairs)
        assert git._side_pipe is None
    with Git(up.path) as git:                                 # answers are kept per run: a run of its own
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
        assert git.merge_trees(pairs[:3]) == alone[:3] and git._side_pipe is None   # a small batch: one process
        shared = git.merge_trees(pairs)
        assert git._side_pipe is not None                    # the second process answered half
        assert shared == alone
        assert any(not r.clean for r in shared) and any(r.clean for r in shared)


def test_a_weighted_batch_is_shared_by_weight_and_answers_in_order(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 12, files=4)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        pairs = [(main, git.rev_parse(f"refs/pull/{n}/head")) for n in range(1, 13)]
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 1)
        alone = git.merge_trees(pairs)
    sent = merges_sent(monkeypatch)
    monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
    weights = [1] * 12
    weights[0] = weights[2] = 50              # the two costly merges, both on what would be the first half
    with Git(up.path) as git:
        assert git.merge_trees(pairs, weights=weights) == alone
    halves = [batch for batch in sent if len(batch) > 1]
    assert len(halves) == 2
    heavy = [f"{a} {b}" for a, b in (pairs[0], pairs[2])]
    assert [sum(line in batch for line in heavy) for batch in halves] == [1, 1]   # one costly merge each
    assert sorted(len(batch) for batch in halves) == [6, 6]


@pytest.mark.parametrize(("weights", "groups"), [
    ([1, 1, 1, 1], ([0, 2], [1, 3])),                 # equal weights alternate, as an unweighted batch did
    ([9, 1, 1, 9, 1, 1], ([0, 1, 4], [2, 3, 5])),     # the heaviest two apart, the rest to the lighter
    ([0, 0, 5], ([2], [0, 1])),                       # no weight counts as one
])
def test_halves_share_the_weight(weights: list[int], groups: tuple[list[int], list[int]]) -> None:
    from carrytool.gitlayer.git import _halves

    assert _halves(weights) == groups


def test_a_failing_second_process_is_an_error_not_a_wrong_answer(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 10, files=3)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        pairs = [(main, git.rev_parse(f"refs/pull/{n}/head")) for n in range(1, 11)]
        monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 2)
        git.merge_trees(pairs)
        git._side_pipe._proc.kill()
        git._side_pipe._proc.wait()
        git._merged.clear()                                   # asked again, not answered from the run's memory
        try:
            git.merge_trees(pairs)
        except GitError as exc:
            assert "merge-tree" in str(exc)
        else:
            raise AssertionError("a dead merge-tree gave answers")


def test_prefetched_patches_are_the_ones_diff_patches_reads(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 6, files=4)
    with Git(up.path) as plain:
        main = plain.rev_parse("refs/heads/main")
        pairs = [(main, plain.rev_parse(f"refs/pull/{n}/head")) for n in range(1, 7)]
        want = plain.diff_patches(pairs)
    with Git(up.path) as git:
        git.prefetch_patches(pairs[:4])
        calls = git_runs(monkeypatch)
        assert git.diff_patches(pairs) == want
        assert [c[0] for c in calls] == ["diff-tree"] and calls[0][-1] == "--ignore-submodules=none"
        assert git.diff_patches(pairs[:4]) == want[:4] and len(calls) == 1
    with Git(up.path) as git:               # a prefetch that fails is read again, with git's error
        git.prefetch_patches(pairs[:2])
        git._prefetch[1].join()
        git._prefetch = (git._prefetch[0], Later(lambda: subprocess.CompletedProcess([], 128, b"", b"fatal")))
        assert git.diff_patches(pairs[:2]) == want[:2]


def test_an_interrupted_wait_for_prefetched_patches_leaves_them_for_close(tmp_path: Path) -> None:
    """Ctrl-C while the run waits for a prefetch: it stays known, and close waits for its thread."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 2, files=2)
    git = Git(up.path)
    main = git.rev_parse("refs/heads/main")
    git.prefetch_patches([(main, git.rev_parse(f"refs/pull/{n}/head")) for n in (1, 2)])
    worker = git._prefetch[1].thread
    join = worker.join

    def interrupted(*args: object) -> None:
        worker.join = join
        raise KeyboardInterrupt

    worker.join = interrupted
    with pytest.raises(KeyboardInterrupt):
        git.diff_patches([(main, git.rev_parse("refs/pull/1/head"))])
    assert git._prefetch is not None and git._prefetch[1].thread is worker
    git.close()
    assert git._prefetch is None and not worker.is_alive()


def _later_corpus(tmp_path: Path) -> tuple[object, list[tuple[str, str]]]:
    """A repository and 27 merges, clean and conflicted, each chunk's unlike the others' (4 chunks)."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 12, files=4)
    ours = up.commit({"f/conflict.txt": "ours\n"}, "ours", parent="main", ref="refs/heads/ours")
    theirs = up.commit({"f/conflict.txt": "theirs\n"}, "theirs", parent="main", ref="refs/heads/theirs")
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 13)]
    pairs = [(main, head) for head in heads] + [(heads[n], heads[n + 1]) for n in range(11)]
    pairs[3:3] = [(ours, theirs)]
    pairs += [(ours, theirs), (theirs, ours), (main, ours)]
    return up, pairs


def test_merges_answered_later_equal_merges_answered_now(tmp_path: Path) -> None:
    """merge_trees_later's own merge-tree process merges while the first one keeps answering; its
    answers are merge_trees' own, in order, and close() stops a process nobody asked for its answers."""
    up, pairs = _later_corpus(tmp_path)
    with Git(up.path) as git:
        later = git.merge_trees_later(pairs)
        now = [git.merge_one(*pair) for pair in pairs]         # the run's merge-tree, meanwhile
        assert later() == now == git.merge_trees(pairs)
        assert any(not r.clean for r in now) and any(r.clean for r in now)
        assert git.merge_trees_later([])() == []
        forgotten = git.merge_trees_later(pairs)
        assert len(git._later_pipes) == 1
    assert forgotten is not None and git._later_pipes == []


@pytest.mark.parametrize("slow", ["first", "helper", "none"])
def test_later_merges_are_met_from_both_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: str) -> None:
    """Asked before git is done, merge_trees_later's answers come from its process (from the front) and a
    helper's (the chunks left, sent from the end), whichever answers a chunk first: the answers are
    merge_trees' own, in order, whichever process is slow; both processes are stopped, not waited for."""
    from carrytool.gitlayer import git as gitmodule
    from carrytool.gitlayer import treemerge

    up, pairs = _later_corpus(tmp_path)
    assert len(pairs) > 3 * gitmodule.LATER_CHUNK
    monkeypatch.setattr(treemerge, "_cores", lambda: 2)
    pipes: list[MergePipe] = []
    helpers: list[MergePipe] = []
    sent: list[tuple[MergePipe, list[list[str]]]] = []
    real_init, real_ready, real_send = MergePipe.__init__, MergePipe.ready, MergePipe.send_chunks

    def init(self, git, **kwargs):  # noqa: ANN001, ANN202
        real_init(self, git, **kwargs)
        pipes.append(self)
        self.chunks_answered = 0  # type: ignore[attr-defined]
        if kwargs.get("cond") is not None:      # a helper shares its pipe's condition (every pipe of a
            helpers.append(self)                 # run shares the first one's flush merge: `like`)

    def send(self, chunks):  # noqa: ANN001, ANN202
        sent.append((self, chunks))
        return real_send(self, chunks)

    deadline = time.monotonic() + 20

    def gate() -> None:      # a slow pipe waits for the other, not for ever (a broken helper: fail)
        assert time.monotonic() < deadline, "the other pipe never answered its chunks"

    def ready(self, count):  # noqa: ANN001, ANN202
        # the slow one answers nothing until the other has answered every chunk it was sent
        if slow == "first" and self not in helpers:
            if not helpers and self.chunks_answered == 0:
                self.chunks_answered = -1          # the look before a helper is made
                return None
            assert helpers, "no helper was made"
            if helpers[0].chunks_answered < 3:
                gate()
                return None
        if slow == "helper" and self in helpers:
            return None
        got = real_ready(self, count)
        if got is not None:
            self.chunks_answered += 1
        return got

    with Git(up.path) as git:
        expected = git.merge_trees(pairs)
        pipes.clear()
        monkeypatch.setattr(MergePipe, "__init__", init)
        monkeypatch.setattr(MergePipe, "send_chunks", send)
        if slow != "none":
            monkeypatch.setattr(MergePipe, "ready", ready)
        assert git.merge_trees_later(pairs)() == expected
        assert git._later_pipes == []
        if slow != "none":    # killed: neither was told to end once it merged what it was sent
            assert [p._proc.returncode for p in pipes] == [-signal.SIGKILL] * 2
    chunks = [c for pipe, sends in sent if pipe not in helpers for c in sends]
    assert [len(c) for c in chunks] == [8, 8, 8, 3] and sum(chunks, []) == [f"{a} {b}" for a, b in pairs]
    if slow != "none":    # the helper was sent the chunks left, from the end: all but the first of four
        assert len(helpers) == 1 and [s for pipe, s in sent if pipe in helpers] == [chunks[:0:-1]]
    if slow == "first":
        assert helpers[0].chunks_answered == 3
    assert any(not r.clean for r in expected) and any(r.clean for r in expected)


def test_later_merges_go_on_when_the_helper_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper only saves time: when its process dies, the first one answers every chunk."""
    from carrytool.gitlayer import treemerge

    up, pairs = _later_corpus(tmp_path)
    monkeypatch.setattr(treemerge, "_cores", lambda: 2)
    failed: list[BaseException] = []
    real_helper, real_ready, real_push = Git._helper, MergePipe.ready, MergePipe.push
    deadline = time.monotonic() + 20

    real_send, stopping = MergePipe.send_chunks, []

    def send_chunks(self, chunks):  # noqa: ANN001, ANN202
        if stopping:     # the helper: stopped before its chunks reach it, so it can answer none of them
            os.kill(self._proc.pid, signal.SIGSTOP)     # (a busy machine may not run this thread again
        return real_send(self, chunks)                  # before a running helper answered them all)

    def helper(self, pipe, chunks):  # noqa: ANN001, ANN202
        stopping.append(True)
        try:
            made = real_helper(self, pipe, chunks)
        finally:
            stopping.clear()
        made._proc.kill()
        return made

    def ready(self, count):  # noqa: ANN001, ANN202
        if getattr(self, "is_helper", False):
            try:
                return real_ready(self, count)
            except GitError as exc:
                failed.append(exc)
                raise
        assert failed or time.monotonic() < deadline, "the helper never failed"
        return real_ready(self, count) if failed else None   # the first pipe waits for the helper's end

    def push(self):  # noqa: ANN001, ANN202
        try:            # the helper's end may show first here: a flush merge sent to a dead process
            return real_push(self)
        except GitError as exc:
            if getattr(self, "is_helper", False):
                failed.append(exc)
            raise

    with Git(up.path) as git:
        expected = git.merge_trees(pairs)
        monkeypatch.setattr(Git, "_helper", lambda self, pipe, chunks: _mark(helper(self, pipe, chunks)))
        monkeypatch.setattr(MergePipe, "ready", ready)
        monkeypatch.setattr(MergePipe, "push", push)
        monkeypatch.setattr(MergePipe, "send_chunks", send_chunks)
        assert git.merge_trees_later(pairs)() == expected
        assert git._later_pipes == []
    assert len(failed) == 1


def _mark(pipe: MergePipe) -> MergePipe:
    pipe.is_helper = True  # type: ignore[attr-defined]
    return pipe


def test_later_merges_come_out_of_a_large_stdio_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should git's stdout buffer hold several chunks' answers (a platform with a larger stdio buffer
    than the flush merge's answer), a flush merge pushed after everything sent brings them out: here
    git's answers reach carrytool only in blocks of 64 KiB (the flush merge's answer is about 14 KiB)."""
    from carrytool.gitlayer import mergepipe, treemerge

    up, pairs = _later_corpus(tmp_path)
    monkeypatch.setattr(treemerge, "_cores", lambda: 2)
    with Git(up.path) as git:
        expected = git.merge_trees(pairs)
        monkeypatch.setattr(mergepipe.os, "read", _in_blocks())
        job = Later(lambda: git.merge_trees_later(pairs)(), name="test-large-buffer")
        job.thread.join(timeout=60)
        assert not job.thread.is_alive(), "the answers never came out"
        assert job.result() == expected


def _in_blocks() -> Callable[[int, int], bytes]:
    """os.read as git's stdio would let its output out on a platform with a larger buffer: whole blocks of
    64 KiB, or the end."""
    held: dict[int, bytearray] = {}
    real_read = os.read

    def blocks(fd: int, size: int) -> bytes:
        have = held.setdefault(fd, bytearray())
        while len(have) < 1 << 16:
            chunk = real_read(fd, size)
            if not chunk:
                break
            have += chunk
        out = bytes(have[:1 << 16])
        del have[:1 << 16]
        return out

    return blocks


def test_later_merges_on_one_core_need_no_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from carrytool.gitlayer import treemerge

    up, pairs = _later_corpus(tmp_path)
    monkeypatch.setattr(treemerge, "_cores", lambda: 1)
    made: list[object] = []
    real_init = MergePipe.__init__
    monkeypatch.setattr(MergePipe, "__init__", lambda self, git, **kw: (made.append(kw.get("cond")),
                                                                        real_init(self, git, **kw))[1])
    with Git(up.path) as git:
        expected = git.merge_trees(pairs)
        made.clear()
        assert git.merge_trees_later(pairs)() == expected
        assert git.merge_trees_later(pairs[:5])() == expected[:5]        # one chunk
    assert made == [None, None]             # one pipe each, no helper (which shares its pipe's condition)


def test_raw_diffs_and_merge_bases_are_asked_once(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """explain gathers every entry's base and diff before composing does: composing gets the same
    answers without a second rev-list walk or diff-tree (and lists of its own to change)."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 4, files=4)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 5)]
        pairs = [(main, head) for head in heads]
        first_bases = git.merge_bases(main, heads[:2])
        first = git.diff_trees(pairs[:2])
        runs = git_runs(monkeypatch)
        bases = git.merge_bases(main, heads + heads[:1])
        again = git.diff_trees(pairs + pairs[:1])
        calls = [args[0] for args in runs]
        assert calls == ["rev-list", "diff-tree"]            # only for the heads and pairs not asked before
        assert {h: bases[h] for h in heads[:2]} == first_bases and all(bases.values())
        assert again[:2] == first and again[4] == again[0] and all(again)
        again[0].clear()                                     # a caller's list is its own
        assert git.diff_trees(pairs[:1]) == first[:1] and git.merge_bases(main, heads) == {h: bases[h] for h in heads}
        assert git.diff_trees(pairs[:1], renames=False) == first[:1] and len(runs) == 3


def test_merge_bases_a_walk_cannot_tell_are_asked_side_by_side(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A PR that merged upstream into itself reaches several upstream commits in the walk: `git merge-base`
    decides its base. Those processes run side by side, SIDE_BY_SIDE at a time, and each head gets the
    answer `git merge-base` gives for it alone (the walk's own answers and sole bases unchanged)."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 2, files=4)
    mains = [up.rev("refs/heads/main")]
    for n in range(5):
        mains.append(up.commit({f"up{n}.txt": f"{n}\n"}, f"upstream {n}", parent=mains[-1], ref="refs/heads/main"))
    merged = []
    for n in range(5):       # PR n branches at mains[n] and merges mains[n + 1] in: its base is mains[n + 1]
        own = up.commit({f"pr{n}.txt": "a\n"}, f"pr {n}", parent=mains[n])
        merged.append(up.commit({f"pr{n}.txt": "b\n"}, f"merge main into pr {n}", parent=own,
                                parents=[own, mains[n + 1]]))
    plain = [up.rev(f"refs/pull/{n}/head") for n in (1, 2)]
    heads = [merged[3], plain[0], merged[0], merged[4], plain[1], merged[1], merged[2], mains[2]]
    alone = {h: up.git("merge-base", mains[-1], h) for h in heads}
    assert alone[merged[2]] == mains[3] and alone[mains[2]] == mains[2]
    monkeypatch.setattr("carrytool.gitlayer.history.SIDE_BY_SIDE", 2)       # 5 asked: 2, 2 and 1 at a time
    started: list[list[str]] = []
    events: list[str] = []                 # each merge-base process started (+) and waited for (-)
    real_popen, real_communicate = subprocess.Popen, subprocess.Popen.communicate

    def popen(argv, *args, **kwargs):  # noqa: ANN001, ANN202
        if "merge-base" in argv:
            started.append(list(argv[-2:]))
            events.append("+")
        return real_popen(argv, *args, **kwargs)

    def communicate(self, *args, **kwargs):  # noqa: ANN001, ANN202
        if "merge-base" in self.args:
            events.append("-")
        return real_communicate(self, *args, **kwargs)

    with Git(up.path) as git:
        runs = git_runs(monkeypatch)
        monkeypatch.setattr("carrytool.gitlayer.git.subprocess.Popen", popen)
        monkeypatch.setattr(real_popen, "communicate", communicate)
        bases = git.merge_bases(mains[-1], heads)
        assert bases == alone
        assert [args[0] for args in runs] == ["rev-list"]            # no merge-base through run
        assert "".join(events) == "++--++--+-"                        # two at a time, each batch waited for
        assert sorted(h for _, h in started) == sorted(merged) and all(a == mains[-1] for a, _ in started)
        assert not any(git.sole_merge_base(mains[-1], h) for h in merged)
        assert all(git.sole_merge_base(mains[-1], h) for h in plain + [mains[2]])
        assert git.merge_base_many(mains[-1], []) == [] and git.merge_base_many(mains[-1], [merged[0]]) == [mains[1]]


def test_merge_bases_side_by_side_leave_no_process_behind_when_one_cannot_start(tmp_path: Path,
                                                                               monkeypatch) -> None:  # noqa: ANN001
    """A merge-base process that cannot start (out of processes) fails the call; those started before
    it are stopped and reaped first, as subprocess.run does with its own."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 3, files=4)
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 4)]
        made: list[subprocess.Popen] = []
        real_popen = subprocess.Popen

        def popen(argv, *args, **kwargs):  # noqa: ANN001, ANN202
            if "merge-base" in argv and made:
                raise OSError(11, "Resource temporarily unavailable")
            proc = real_popen(argv, *args, **kwargs)
            if "merge-base" in argv:
                made.append(proc)
            return proc

        monkeypatch.setattr("carrytool.gitlayer.git.subprocess.Popen", popen)
        with pytest.raises(OSError):
            git.merge_base_many(main, heads)
        assert len(made) == 1 and made[0].returncode is not None and made[0].stdout.closed


def test_merges_are_asked_once_and_sole_merge_bases_are_known(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 3, files=4)
    base = up.commit({"x.txt": "x\n"}, "base", parent="main")
    left, right = up.commit({"l.txt": "l\n"}, "left", parent=base), up.commit({"r.txt": "r\n"}, "right", parent=base)
    cross_l = up.commit({"l.txt": "l2\n"}, "cross left", parents=[left, right])
    cross_r = up.commit({"r.txt": "r2\n"}, "cross right", parents=[right, left])
    with Git(up.path) as git:
        main = git.rev_parse("refs/heads/main")
        heads = [git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 4)]
        bases = git.merge_bases(main, heads)
        assert all(git.sole_merge_base(main, h) for h in heads) and all(bases.values())
        git.merge_bases(cross_l, [cross_r])               # two merge bases (left and right): not sole
        assert not git.sole_merge_base(cross_l, cross_r) and not git.sole_merge_base(main, cross_r)
        pairs = [(main, head) for head in heads]
        first = git.merge_trees(pairs)
        sent = merges_sent(monkeypatch)
        again = git.merge_trees(pairs + [(cross_l, cross_r)] + pairs[:1])
        assert again[:3] == first and again[4] == first[0]
        assert sent == [[f"{cross_l} {cross_r}"]]          # only the merge not asked before


@pytest.mark.parametrize("how", ["later", "one", "batch"])
def test_merges_store_their_objects_uncompressed_in_the_quarantine(tmp_path: Path, how: str) -> None:
    """Every merge-tree process of a run with a quarantine (the chained merges', a batch's two, explain's
    pair merges) writes its results there as stored zlib: most are never kept (a conflict, a stand-in's
    merge, a blame merge), and the quarantine's pack compresses what is. The same objects, readable there
    and, once kept, in the user's store."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 1, files=2)
    ours = up.commit({"f/big.txt": "ours\n" + "same line\n" * 3000}, "ours", parent="main", ref="refs/heads/ours")
    theirs = up.commit({"f/big.txt": "theirs\n" + "same line\n" * 3000}, "theirs", parent="main",
                       ref="refs/heads/theirs")
    with Git(up.path, quarantine=True) as git:
        if how == "later":
            [later] = git.merge_trees_later([(ours, theirs)])()
        elif how == "one":
            later = git.merge_one(ours, theirs)
        else:       # a batch two processes share (git.SPLIT_MERGES_AT): the second one's answer, too
            batch = [(ours, ours)] * (SPLIT_MERGES_AT - 1) + [(ours, theirs)]
            later = git.merge_trees(batch)[-1]
        assert not later.clean
        mode, blob = git.blob_at(later.tree, "f/big.txt")  # type: ignore[misc]
        data = (git._quarantine / blob[:2] / blob[2:]).read_bytes()   # type: ignore[operator]
        content = zlib.decompress(data)
        assert content.startswith(b"blob ") and b"<<<<<<< " in content
        assert len(data) > len(content)                     # stored: 30 KB of one line do not shrink
        assert git.merge_trees([(ours, theirs)]) == [later]
        git.keep(later.tree)
        git.migrate_objects()
    shown = subprocess.run(["git", "cat-file", "-p", blob], cwd=up.path, capture_output=True, check=True).stdout
    assert shown == content[content.index(b"\0") + 1:]


def test_a_full_cache_never_loses_the_answers_of_the_call_that_fills_it(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The run keeps merges, content merges and diffs in bounded caches, emptied when full: a call that
    fills one answers from what it found and what it asked, not from the emptied cache (a KeyError)."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 2, files=2)
    with Git(up.path) as git:
        from carrytool.gitlayer import contentmerge

        monkeypatch.setattr(contentmerge, "merge_contents_many",
                            lambda self, triples: [(True, f"{t[0]}".encode()) for t in triples])
        git._contents = {(f"o{n}", "b", "t"): (True, b"old") for n in range(250)}
        kept = ("o0", "b", "t")
        asked = [kept] + [(f"n{n}", "b", "t") for n in range(10)]
        assert git.merge_contents_many(asked) == [(True, b"old")] + [(True, f"n{n}".encode()) for n in range(10)]
        assert len(git._contents) <= 256
        monkeypatch.setattr(Git, "_merge_batch", lambda self, lines, weights=None: [f"merged {x}" for x in lines])
        git._merged = {f"o{n} x": f"old {n}" for n in range(20000)}
        assert git.merge_trees([("o0", "x"), ("new", "x")]) == ["old 0", "merged new x"]
        assert len(git._merged) <= 20001


def test_a_prefetch_that_fails_in_python_is_read_again(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Not only git failing: a prefetch whose read fails in Python (MemoryError under a memory limit) is
    dropped, and diff_patches reads what it is asked for itself, as without a prefetch."""
    import threading

    from carrytool.gitlayer import git as gitlayer

    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 4, files=4)
    real = subprocess.run

    def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if threading.current_thread() is not threading.main_thread():
            raise MemoryError("the whole prefetch at once")
        return real(*args, **kwargs)

    with Git(up.path) as plain:
        main = plain.rev_parse("refs/heads/main")
        pairs = [(main, plain.rev_parse(f"refs/pull/{n}/head")) for n in range(1, 5)]
        want = plain.diff_patches(pairs[:1])
    monkeypatch.setattr(gitlayer.subprocess, "run", run)
    with Git(up.path) as git:
        git.prefetch_patches(pairs)
        assert git.diff_patches(pairs[:1]) == want


def test_merges_aside_answer_as_merge_one_whatever_the_order_taken(tmp_path: Path) -> None:
    """Git.merges_aside: merges sent one at a time to a merge-tree of their own, while the run's own
    answers others; each answer is merge_one's, taken in any order; close() ends its process."""
    up, pairs = _later_corpus(tmp_path)
    with Git(up.path) as git:
        expected = [git.merge_one(*pair) for pair in pairs]
        aside = git.merges_aside()
        tickets = [aside.send(a, b) for a, b in pairs[:5]]
        assert git.merge_one(*pairs[5]) == expected[5]          # the run's merge-tree, meanwhile
        assert aside.take(tickets[4]) == expected[4]            # waits for those before it too
        tickets += [aside.send(a, b) for a, b in pairs[5:]]
        assert [aside.take(t) for t in reversed(tickets)] == expected[::-1]
        assert any(not r.clean for r in expected) and any(r.clean for r in expected)
        pipe = aside._pipe
        assert pipe is not None and git._later_pipes == [pipe]
        aside.close()
        assert git._later_pipes == [] and pipe._proc.returncode is not None
        forgotten = git.merges_aside()
        forgotten.send(*pairs[0])
        assert len(git._later_pipes) == 1
    assert git._later_pipes == []            # closing the run ends one nobody took an answer from


def test_merges_aside_come_out_of_a_large_stdio_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As merge_trees_later's: git's answers reach carrytool only in blocks of 64 KiB, several merges'
    answers each; flush merges pushed while waiting bring them out, and an answer taken later still
    skips exactly the flush answers that follow it."""
    from carrytool.gitlayer import mergepipe

    up, pairs = _later_corpus(tmp_path)
    with Git(up.path) as git:
        expected = git.merge_trees(pairs)
        monkeypatch.setattr(mergepipe.os, "read", _in_blocks())

        def interleaved() -> list:
            aside = git.merges_aside()
            got = {}
            for n, (a, b) in enumerate(pairs):
                ticket = aside.send(a, b)
                if n % 7 == 3:                 # pushes after this one, then more merges are sent
                    got[ticket] = aside.take(ticket)
            return [got.get(t) or aside.take(t) for t in range(len(pairs))]

        job = Later(interleaved, name="test-aside-large-buffer")
        job.thread.join(timeout=120)
        assert not job.thread.is_alive(), "the answers never came out"
        assert job.result() == expected


def test_merges_aside_tell_the_first_clean_answer_without_waiting(tmp_path: Path) -> None:
    """AsideMerges.first_clean: the first merge answered clean among those git has answered (composing
    asks it between entries, to stop a pass a failed guess spoiled), never waiting for more."""
    up, pairs = _later_corpus(tmp_path)
    with Git(up.path) as git:
        results = [git.merge_one(*pair) for pair in pairs]
        conflicted = [pair for pair, r in zip(pairs, results) if not r.clean]
        clean = [pair for pair, r in zip(pairs, results) if r.clean]
        aside = git.merges_aside()
        assert aside.first_clean() is None                      # nothing sent
        tickets = [aside.send(a, b) for a, b in (*conflicted[:2], clean[0], conflicted[2])]
        aside.take(tickets[1])
        assert aside.first_clean() in (None, 2)                 # the clean one may not be answered yet
        aside.take(tickets[3])
        assert aside.first_clean() == 2
        aside.close()
