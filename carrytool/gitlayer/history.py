"""Questions about history: merge bases (batched, side by side), ancestry, the commits of a head outside
upstream, where upstream merged or reverted a head, ranges of commits and their pairing (range-diff)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence

from carrytool.gitlayer.env import git_argv
from carrytool.gitlayer.later import Later

SIDE_BY_SIDE = 8           # `git merge-base` processes at a time (Git.merge_base_many)
Pickaxed = tuple[str, str, str, str]      # a commit `Git.pickaxe` names: SHA, subject, the path's blob before, after


class History:
    """History: merge bases, ancestry, merges and reverts in upstream, commit ranges and logs."""

    # Git's state this reads or updates (all of it made in Git.__init__): common_dir, _bases, _sole, _outside,
    # _outside_of

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """`merge-base --is-ancestor`."""
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0

    def merge_bases(self, upstream: str, heads: Sequence[str]) -> dict[str, str | None]:
        """The merge base of each head with UPSTREAM, from one `rev-list --boundary --parents` walk.

        A head whose walk reaches exactly one boundary commit has that as its base (the common case);
        heads reachable from upstream are their own base; anything else asks `git merge-base`.
        """
        known = self._bases.setdefault(upstream, {})     # kept: explain asks for them before composing does
        unique = [head for head in dict.fromkeys(heads) if head not in known]
        if unique:
            known.update(self._merge_bases(upstream, unique))
        return {head: known[head] for head in dict.fromkeys(heads)}

    def _merge_bases(self, upstream: str, unique: list[str]) -> dict[str, str | None]:
        out = self.run("rev-list", "--boundary", "--parents", *unique, f"^{upstream}").stdout.decode()
        parents: dict[str, list[str]] = {}
        boundary: set[str] = set()
        for line in out.splitlines():
            fields = line.split()
            if not fields:
                continue
            if fields[0].startswith("-"):
                boundary.add(fields[0][1:])
            else:
                parents[fields[0]] = fields[1:]
        self._outside.setdefault(upstream, {}).update(parents)
        result: dict[str, str | None] = {}
        ask: list[str] = []                  # heads whose walk reached several upstream commits
        for head in unique:
            if head not in parents:          # reachable from upstream: merged, its own base
                result[head] = head
                self._sole.add((upstream, head))
                continue
            reached, stack, seen = set(), [head], set()
            while stack:
                commit = stack.pop()
                if commit in seen:
                    continue
                seen.add(commit)
                for parent in parents.get(commit, []):
                    if parent in parents:
                        stack.append(parent)
                    else:
                        reached.add(parent)
            if len(reached) == 1:            # every common ancestor is one of that commit's: the only base
                self._sole.add((upstream, head))
                result[head] = reached.pop()
            else:                            # (a PR that merged upstream into itself, most often)
                ask.append(head)
        result.update(zip(ask, self.merge_base_many(upstream, ask)))
        return result

    def is_shallow(self) -> bool:
        """Whether the repository is a shallow clone (its history cut where its `shallow` file says)."""
        return (self.common_dir / "shallow").exists()

    def outside(self, upstream: str, head: str) -> frozenset[str]:
        """The commits of HEAD's history that are not in UPSTREAM's: read from the walk `merge_bases` made of
        the heads it was asked about (no process)."""
        known = self._outside_of.get((upstream, head))       # (facts and the stale-stack check both ask)
        if known is not None:
            return known
        parents = self._outside.get(upstream, {})
        stack, seen = [head], set()
        while stack:
            found = stack.pop()
            if found not in seen and found in parents:
                seen.add(found)
                stack.extend(parents[found])
        if not seen:         # (a head not walked yet, or in upstream: nothing kept, asked again later)
            return frozenset()
        self._outside_of[(upstream, head)] = frozenset(seen)
        return self._outside_of[(upstream, head)]

    def sole_merge_base(self, upstream: str, head: str) -> bool:
        """Whether merge_bases found HEAD's base with UPSTREAM as their only merge base: then git merges
        HEAD onto UPSTREAM from that base alone, as it merges HEAD onto any commit whose only parent it is."""
        return (upstream, head) in self._sole

    def merged_in(self, upstream: str, head: str) -> tuple[str, str] | None:
        """For HEAD in UPSTREAM's history: the commit of upstream's first-parent line that merged it, and the
        base HEAD's change was made from (HEAD's merge base with that merge's first parent). None when HEAD
        came in on the first-parent line itself (a fast-forward, a rebase): its own change is then not told
        apart from upstream's. The merge is the oldest commit of upstream's first-parent line whose history
        holds HEAD: from UPSTREAM, first parents while the commit descends from HEAD (`--ancestry-path`
        with `--first-parent` found nothing when HEAD was below the merge's second parent: a pinned head
        the PR's branch moved on from before upstream merged it)."""
        proc = self.run("rev-list", "--ancestry-path", "--parents", f"{head}..{upstream}", check=False)
        if proc.returncode != 0:
            return None
        descends = {line.split(" ", 1)[0]: line.split()[1:]
                    for line in proc.stdout.decode("ascii", "replace").splitlines()}
        merge, parents = None, []
        found: str | None = upstream                  # (a full SHA, as the run's upstream always is)
        while found in descends:
            merge, parents = found, descends[found]
            found = parents[0] if parents else None
        if merge is None or len(parents) < 2 or parents[0] == head:
            return None
        fork = self.merge_base(parents[0], head)
        return (merge, fork) if fork and fork != head else None

    def revert_suspects(self, upstream: str, heads: Sequence[str]) -> set[str]:
        """Of HEADS (commits of UPSTREAM's history), those a commit of upstream's since may revert: a "This
        reverts commit <sha>" names the head, or a merge whose history beyond its first parent holds the head.
        `merged_in` and `reverted_in` decide, for these alone: each costs a kept merged PR a walk of upstream's
        history since it, every night (0.04 s for each of ten old pytest PRs), where this is one `git log` of
        what upstream has beyond all the heads' common history, for all of them, and one walk per merge a
        revert names. A name git finds ambiguous makes every head a suspect. A name is a commit's object name
        only: git takes a branch or tag named like an abbreviated one first, so such a name is looked up
        among the objects it abbreviates (`_commit_abbreviated`)."""
        heads = list(dict.fromkeys(heads))
        if not heads:
            return set()
        proc = self.run("merge-base", "--octopus", "--all", *heads, check=False)
        common = proc.stdout.decode().split() if proc.returncode == 0 else []   # (none: upstream's whole history)
        proc = self.run("log", "--fixed-strings", "--grep=This reverts commit", "--format=%B", upstream,
                        "--not", *common, check=False)
        if proc.returncode != 0:
            return set(heads)
        named = sorted(set(_REVERTS.findall(proc.stdout.decode("utf-8", "replace"))))
        suspects = {head for head in heads if any(head.startswith(name) for name in named)}
        rest = [head for head in heads if head not in suspects]
        if not rest or not named:
            return suspects
        data = self.run("cat-file", "--batch", input="".join(f"{name}\n" for name in named).encode()).stdout
        merges, shadowed, i = [], [], 0
        for name in named:                        # (one answer each, in order)
            end = data.index(b"\n", i)
            header, i = data[i:end].split(), end + 1
            if header[-1] == b"ambiguous":        # (a short name: a head it may be is not told apart)
                return set(heads)
            if len(header) != 3:
                continue                          # missing: neither a head nor the merge of one
            size = int(header[2])
            if not header[0].decode().startswith(name):
                shadowed.append(name)             # a branch or tag of that name (helper-136): not the commit
            elif header[1] == b"commit":
                parents = [line[7:].decode() for line in data[i:i + size].split(b"\n\n", 1)[0].split(b"\n")
                           if line.startswith(b"parent ")]
                if len(parents) > 1:
                    merges.append((header[0].decode(), parents[0]))
            i += size + 1
        for name in shadowed:
            commit = self._commit_abbreviated(name)
            if commit == "ambiguous":
                return set(heads)
            parents = self.commit_info(commit)["parents"] if commit else []
            if len(parents) > 1:                  # type: ignore[arg-type]
                merges.append((commit, parents[0]))  # type: ignore[index]
        for merge, first in merges:
            if not rest:
                break
            proc = self.run("rev-list", merge, "--not", first, check=False)
            if proc.returncode != 0:              # (a shallow clone cut at the merge: merged_in decides)
                return suspects | set(rest)
            beyond = set(proc.stdout.decode().split())
            suspects.update(head for head in rest if head in beyond)
            rest = [head for head in rest if head not in beyond]
        return suspects

    def _commit_abbreviated(self, prefix: str) -> str | None:
        """The commit whose object name PREFIX (hex) abbreviates, whatever refs are named PREFIX
        (`rev-parse --disambiguate`): None when there is none, "ambiguous" when there are several."""
        proc = self.run("rev-parse", f"--disambiguate={prefix}", check=False)
        names = [oid for oid in proc.stdout.decode().split() if oid.startswith(prefix)] if proc.returncode == 0 else []
        commits = [oid for oid, kind in self.object_types(names).items() if kind == "commit"]
        return commits[0] if len(commits) == 1 else "ambiguous" if commits else None

    def reverted_in(self, merge: str, head: str, upstream: str) -> str | None:
        """The commit of UPSTREAM's history since MERGE that reverts MERGE or HEAD (`git revert` writes "This
        reverts commit <sha>", the forge's revert button too) and that no later commit reverts in turn;
        None when there is none."""
        proc = self.run("log", "--reverse", "--fixed-strings", "--grep=This reverts commit", "--format=%H%x00%B%x00",
                        f"{merge}..{upstream}", check=False)
        fields = proc.stdout.decode("utf-8", "replace").split("\0") if proc.returncode == 0 else []
        reverts = [(sha.strip(), target) for sha, body in zip(fields[0::2], fields[1::2])
                   for target in _REVERTS.findall(body)]          # (the revert, the commit it names), oldest first

        def standing(commit: str) -> str | None:
            """The latest revert naming COMMIT that no later one undoes in turn (a revert of a revert of a
            revert reverts again: helper-127's third revert was taken for none)."""
            return next((sha for sha, target in reversed(reverts) if commit.startswith(target)
                         and standing(sha) is None), None)

        return standing(merge) or standing(head)

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def merge_base_many(self, a: str, others: Sequence[str]) -> list[str | None]:
        """merge_base(A, B) for each B of OTHERS, the `git merge-base` processes side by side
        (SIDE_BY_SIDE at a time): each is a walk of its own, and they answer together in about the time
        of one. What each prints is what it prints alone."""
        if len(others) < 2:
            return [self.merge_base(a, b) for b in others]
        self.flush_objects()
        where, env = self._placement(("merge-base",))
        out: list[str | None] = []
        for start in range(0, len(others), SIDE_BY_SIDE):
            procs: list[subprocess.Popen] = []
            try:
                for b in others[start:start + SIDE_BY_SIDE]:
                    procs.append(subprocess.Popen(git_argv("merge-base", a, b), cwd=where, env=env,
                                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                  stderr=subprocess.DEVNULL))
                answers = [proc.communicate()[0] for proc in procs]
            except BaseException:             # as subprocess.run does: none is left running, nor unreaped
                for proc in procs:
                    proc.kill()
                    proc.wait()               # reaped (helper-103: communicate() again, after an interrupt in
                    if proc.stdout is not None:     # the first, raised on its closed pipe: a traceback)
                        proc.stdout.close()
                raise
            out += [answer.decode().strip() or None if proc.returncode == 0 else None
                    for proc, answer in zip(procs, answers)]
        return out

    def range_diff(self, old: tuple[str, str], new: tuple[str, str]) -> list[str]:
        """`range-diff --no-color -s OLD_BASE..OLD_TIP NEW_BASE..NEW_TIP`: the commit pairing, one line each.

        A range with no commit (a PR whose head upstream merged by fast-forward: its base is its head), which
        git refuses ("need two commit ranges"), pairs nothing: each commit of the other range is listed as
        range-diff lists one only that range has (`N:  <sha> < -:  ----`, or `-:  ---- > N:  <sha>`)."""
        args = ("-c", "core.abbrev=12", "range-diff", "--no-color", "-s", f"{old[0]}..{old[1]}", f"{new[0]}..{new[1]}")
        proc = self.run(*args, check=False)
        sides = [self._range_commits(*old), self._range_commits(*new)] if proc.returncode else []
        if all(sides):                       # answered, or refused for another reason than an empty range
            proc = self.run(*args) if proc.returncode else proc      # that reason raised as git says it
            return [line.rstrip() for line in proc.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
        none = "-" * 12
        return [f"{n}:  {sha[:12]} < -:  {none} {subject}".rstrip() if sides[0] else
                f"-:  {none} > {n}:  {sha[:12]} {subject}".rstrip()
                for n, (sha, subject) in enumerate(sides[0] or sides[1], 1)]

    def _range_commits(self, base: str, tip: str) -> list[tuple[str, str]]:
        """The commits range-diff takes from BASE..TIP (no merges), oldest first: (full SHA, subject)."""
        out = self.run("log", "--no-color", "--no-merges", "--topo-order", "--reverse", "--format=%H %s",
                       "--end-of-options", f"{base}..{tip}").stdout.decode("utf-8", "replace")
        return [(line[:40], line[41:]) for line in out.splitlines() if len(line) >= 40]

    def commits_between(self, base: str, tip: str) -> list[str]:
        """`rev-list BASE..TIP`: the full SHAs of the commits in TIP not in BASE, newest first."""
        out = self.run("rev-list", "--end-of-options", tip, f"^{base}").stdout.decode()
        return out.split()

    def count_commits(self, base: str, tip: str) -> int:
        """`rev-list --count BASE..TIP`."""
        return int(self.out("rev-list", "--count", "--end-of-options", tip, f"^{base}") or 0)

    def log_paths(self, since: str, until: str, pathspecs: Sequence[str]) -> list[tuple[str, str]]:
        """`log SINCE..UNTIL -- PATHSPECS`: (full SHA, subject) of each commit touching them, newest first."""
        if not pathspecs:
            return []
        proc = self.run("log", "--no-color", "--format=%H %s", "--end-of-options", f"{since}..{until}",
                        "--", *pathspecs)
        out = proc.stdout.decode("utf-8", "replace").splitlines()
        return [(line[:40], line[41:]) for line in out if len(line) >= 40]

    def pickaxe(self, since: str, until: str, needle: str, path: str) -> list[Pickaxed] | None:
        """`log --reverse -SNEEDLE --raw SINCE..UNTIL -- PATH` (a literal path, no textconv): (full SHA, subject,
        PATH's blob before, after) of each commit that changed how many times PATH holds NEEDLE, oldest first.
        None when it failed (killed, an error, it could not start): that is no listing, not an empty one (h219)."""
        try:
            proc = self.run(*_pickaxe_args(since, until, needle, path), check=False)
        except OSError:         # e.g. E2BIG: an argument over the kernel's limit
            return None
        return _pickaxe_commits(proc.stdout) if proc.returncode == 0 else None

    def pickaxe_later(self, since: str, until: str, needle: str, path: str
                      ) -> Callable[[], list[Pickaxed] | None]:
        """`pickaxe`, its `git log -S` started now in a thread of its own (it touches nothing of this Git's
        state): several run side by side, each a walk of upstream's history since an entry's base, and answer
        in about the time of one. The function returned waits for it; what it returns is what `pickaxe` does."""
        args = _pickaxe_args(since, until, needle, path)
        self.flush_objects()
        argv, (cwd, env) = git_argv(*args), self._placement(args)

        def read() -> list[Pickaxed] | None:
            try:
                proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
            except OSError:
                return None
            return _pickaxe_commits(proc.stdout) if proc.returncode == 0 else None

        job = Later(read, name="carrytool-pickaxe")
        self.join_at_close(job.thread)            # it runs in the scratch directory: close waits for it
        return job.result


def _pickaxe_args(since: str, until: str, needle: str, path: str) -> tuple[str, ...]:
    return ("log", "--no-color", "--no-textconv", "--reverse", "--no-renames", "--raw", "--no-abbrev",
            "--format=%x00%H %s", f"-S{needle}", "--end-of-options", f"{since}..{until}", "--", f":(literal){path}")


def _pickaxe_commits(stdout: bytes) -> list[Pickaxed]:
    """(SHA, subject, blob before, after) of each commit `git log --format=%x00%H %s --raw` printed."""
    out = []
    for record in stdout.split(b"\0")[1:]:
        head, _, rest = record.partition(b"\n")
        raw = next((line.split() for line in rest.split(b"\n") if line.startswith(b":")), None)
        if len(head) >= 40 and raw is not None and len(raw) >= 4:
            text = head.decode("utf-8", "replace")
            out.append((text[:40], text[41:], raw[2].decode(), raw[3].decode()))
    return out


_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
