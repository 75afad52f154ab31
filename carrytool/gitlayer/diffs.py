"""Diffs: changes between trees (`diff-tree --raw`), zero-context patches (kept, prefetched in the
background), directories re-encoded without a change, patch ids."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence

from carrytool.errors import GitError
from carrytool.gitlayer.answers import _answers
from carrytool.gitlayer.env import git_argv
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.objects import Change, _is_echo, _parse_diff_stdin

# zero-context patches with full blob names, for the landing checks and explain's evidence
_PATCH_ARGS = ("diff-tree", "-r", "-p", "-U0", "--stdin", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
               "--full-index", "--ignore-submodules=none")


class Diffs:
    """Diffs: changes and patches between trees, patch ids."""

    # Git's state this reads or updates (all of it made in Git.__init__): _patches, _prefetch, _diffs

    def patch_ids_later(self, commits: Sequence[str]) -> Callable[[], dict[str, str]]:
        """commit -> `git patch-id --stable` of its change without context lines (`-U0`: the same change made
        where the lines around it differ, a rebase onto a moved upstream, has the same id; merges and empty
        commits have none), for each of COMMITS: `log -p` piped into `patch-id`, started now in a thread (it
        touches nothing of this Git's state: a run reads them while it composes); the function returned
        waits for them."""
        if not commits:
            return dict
        self.flush_objects()
        log = ("log", "-p", "-U0", "--no-walk=unsorted", "--no-merges", "--no-color", "--no-ext-diff",
               "--format=commit %H", "--stdin")
        argv, (cwd, env) = git_argv(*log), self._placement(log)
        ids = git_argv("patch-id", "--stable")
        names = "".join(f"{sha}\n" for sha in commits).encode()

        def read() -> bytes:
            with subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL) as diff, \
                    subprocess.Popen(ids, cwd=cwd, env=env, stdin=diff.stdout, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL) as patch:
                assert diff.stdin is not None and diff.stdout is not None
                diff.stdout.close()               # patch-id holds it: log sees a closed pipe if patch-id ends
                try:
                    diff.stdin.write(names)
                    diff.stdin.close()
                except BrokenPipeError:
                    pass
                return patch.communicate()[0]

        job = Later(read, name="carrytool-patch-ids")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it

        def answer() -> dict[str, str]:
            out = job.result().decode("ascii", "replace")
            return {commit: patch for patch, commit in (line.split() for line in out.splitlines()
                                                        if len(line.split()) == 2)}

        return answer

    def diff_trees(self, pairs: Sequence[tuple[str, str]], *, renames: bool = True) -> list[list[Change]]:
        """`diff-tree -r -z --raw --stdin`: changes from each old to new tree or commit, one process."""
        if not pairs:
            return []
        args = ["diff-tree", "-r", "-z", "--raw", "--stdin", "--no-ext-diff", "--no-textconv",
                "--ignore-submodules=none", "-M" if renames else "--no-renames"]
        wanted = [(self.tree_of(old), self.tree_of(new), renames) for old, new in pairs]
        def ask(missing: list[tuple[str, str, bool]]) -> list[list[Change]]:
            out = self.run(*args, input=self._pair_lines([(old, new) for old, new, _ in missing])).stdout
            return _parse_diff_stdin(out, len(missing))

        # kept by tree pair, as patches are: explain and composing diff the same entries
        return [list(changes) for changes in
                _answers(self._diffs, wanted, ask, full=lambda added: len(self._diffs) + added > 20000)]

    def reencoded_dirs(self, pairs: Sequence[tuple[str, str]]) -> Callable[[], list[set[str]]]:
        """For each (old, new) tree or commit pair, the directories whose tree object differs with no file
        changed below them: the same files, encoded otherwise (a mode git no longer writes, `100664` or a
        zero-padded `040000`, in old, rewritten canonical in new). diff-tree reads modes canonical and
        lists no file there; merge-tree takes such a side's tree object whole. One `diff-tree -r -t`
        process, started now in a thread (it touches nothing of this Git's state); the function returned
        waits for it and answers."""
        if not pairs:
            return list
        self.flush_objects()
        args = ("diff-tree", "-r", "-t", "-z", "--raw", "--stdin", "--no-renames", "--ignore-submodules=none")
        argv, (cwd, env) = git_argv(*args), self._placement(args)
        lines = self._pair_lines([(self.tree_of(old), self.tree_of(new)) for old, new in pairs])
        job = Later(lambda: subprocess.run(argv, cwd=cwd, input=lines, capture_output=True, env=env),
                    name="carrytool-reencoded")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it

        def answer() -> list[set[str]]:
            proc = job.result()
            if proc.returncode != 0:
                raise GitError(f"`git diff-tree -t` failed (exit {proc.returncode})",
                               stderr=proc.stderr.decode("utf-8", "replace"))
            out = []
            for changes in _parse_diff_stdin(proc.stdout, len(pairs)):
                dirs = {c.path for c in changes if c.status == "M" and c.old_mode == c.new_mode == "040000"}
                for change in changes:
                    if change.new_mode != "040000" or change.old_mode != "040000":   # a file, or a kind change
                        parts = change.path.split("/")
                        dirs.difference_update("/".join(parts[:n]) for n in range(1, len(parts)))
                out.append(dirs)
            return out
        return answer

    def diff_patches(self, pairs: Sequence[tuple[str, str]]) -> list[bytes]:
        """`diff-tree -p -U0 --stdin`: the zero-context patch from each old to new tree, one process for
        the pairs not read before (patches are kept by tree pair: explain's evidence and the landing
        checks ask for the same entries' diffs)."""
        if not pairs:
            return []
        self._await_prefetch()
        wanted = [(self.tree_of(old), self.tree_of(new)) for old, new in pairs]
        return _answers(self._patches, wanted, self._read_patches,     # bounded: a cache, not an object store
                        full=lambda added: sum(len(p) for p in self._patches.values()) > 64 << 20)

    def prefetch_patches(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Start reading the patches of PAIRS (as diff_patches would) in the background: one `diff-tree`
        process that runs beside the caller's work (composing) on a second core; diff_patches takes its
        answer when it is asked for them. Only for objects already in the store (a PR's own commits): the
        process is started now and the caller may write objects meanwhile."""
        self._await_prefetch()
        wanted = list(dict.fromkeys((self.tree_of(old), self.tree_of(new)) for old, new in pairs))
        missing = [pair for pair in wanted if pair not in self._patches]
        if not missing:
            return
        self.flush_objects()
        argv, payload = git_argv(*_PATCH_ARGS), self._pair_lines(missing)
        cwd, env = self._placement(_PATCH_ARGS)

        def read() -> subprocess.CompletedProcess | None:
            try:
                return subprocess.run(argv, cwd=cwd, input=payload, capture_output=True, env=env)
            except Exception:  # noqa: BLE001 - git not started, memory: diff_patches reads them itself,
                return None    # and says what failed

        self._prefetch = (missing, Later(read))

    def patches_later(self, pairs: Sequence[tuple[str, str]]) -> Callable[[], list[bytes]]:
        """diff_patches in two halves, for another thread: the `diff-tree` process is started now (in the
        background, on another core, as prefetch_patches's), and the function returned, in any thread, waits
        for it and gives each pair's patch. It touches nothing of this Git's state: the patches are not kept
        (explain's parsing thread takes them, while the caller composes; the landing checks read their own).
        Only for objects already in the store (a PR's own commits). Raises GitError as diff_patches would."""
        if not pairs:
            return list
        self.flush_objects()
        trees = [(self.tree_of(old), self.tree_of(new)) for old, new in pairs]
        argv, payload = git_argv(*_PATCH_ARGS), self._pair_lines(trees)
        cwd, env = self._placement(_PATCH_ARGS)
        job = Later(lambda: subprocess.run(argv, cwd=cwd, input=payload, capture_output=True, env=env),
                    name="carrytool-patches")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it

        def answer() -> list[bytes]:
            proc = job.result()
            if proc.returncode != 0:
                raise GitError(f"`git diff-tree -p` failed (exit {proc.returncode})",
                               stderr=proc.stderr.decode("utf-8", "replace"))
            return self._split_patches(proc.stdout, trees)
        return answer

    def _await_prefetch(self) -> None:
        """Take a prefetch's patches into the cache (a failed one is dropped: asked again, with its error)."""
        if self._prefetch is None:
            return
        trees, job = self._prefetch
        job.join()                         # interrupted: still known, close waits for it
        self._prefetch = None
        proc = job.result()
        if proc is None or proc.returncode != 0:
            return
        try:
            self._patches.update(zip(trees, self._split_patches(proc.stdout, trees)))
        except GitError:
            pass

    @staticmethod
    def _pair_lines(trees: Sequence[tuple[str, str]]) -> bytes:
        """`OLD NEW` lines, the `--stdin` input of diff-tree."""
        return "".join(f"{old} {new}\n" for old, new in trees).encode()

    def _read_patches(self, trees: Sequence[tuple[str, str]]) -> list[bytes]:
        return self._split_patches(self.run(*_PATCH_ARGS, input=self._pair_lines(trees)).stdout, trees)

    @staticmethod
    def _split_patches(out: bytes, trees: Sequence[tuple[str, str]]) -> list[bytes]:
        echoes = {f"{old} {new}".encode() for old, new in trees}
        chunks: list[list[bytes]] = []
        # every patch without its last newline, the last one too: a patch is the same bytes wherever in a
        # batch it was read
        for line in (out[:-1] if out.endswith(b"\n") else out).split(b"\n"):
            if line in echoes and (not chunks or len(chunks) < len(trees)) and _is_echo(line):
                chunks.append([])
            elif chunks:
                chunks[-1].append(line)
        if len(chunks) != len(trees):
            raise GitError("`git diff-tree -p --stdin` gave an unexpected answer")
        return [b"\n".join(chunk) for chunk in chunks]

    def diff_patch(self, old: str, new: str, paths: Sequence[str] = (), *, context: int = 0,
                   renames: bool = True) -> bytes:
        """`diff-tree -p`: the unified diff from OLD to NEW (trees or commits), optionally for PATHS."""
        args = ["diff-tree", "-r", "-p", f"-U{context}", "--no-color", "--no-ext-diff", "--no-textconv",
                "--full-index", "-M" if renames else "--no-renames", old, new]
        if paths:
            args += ["--", *(":(literal)" + p for p in paths)]
        return self.run(*args).stdout
