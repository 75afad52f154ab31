"""The overlap map's merges: every entry alone onto upstream, then each pair that shares a file, the later
entry merged onto the earlier one alone (its head reduced to the paths that decide), decided by sync's rule
(pipeline.blame) and kept by what decides it (review.paircache)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from carrytool.gitlayer.git import Git, MergeResult, Signature, paths_of
from carrytool.manifest.model import Manifest
from carrytool.pipeline.blame import meets_conflict
from carrytool.pipeline.compose_upstream import UpstreamSince, direct_edits, merge_weights, upstream_since
from carrytool.pipeline.reduce import file_at, files_alone, reduced_head
from carrytool.pipeline.structured_tree import resolve_merge
from carrytool.review.evidence import EntryFacts
from carrytool.review.paircache import Decision, PairDecisions


class PairMerger:
    """Entries applied alone onto upstream, then pairwise, in the run's long-lived merge-tree."""

    shared_files_only = True     # tests turn it off to check the reduced pair merges decide the same
    files_from_upstream = True   # which paths ours has as files, from upstream's tree (tests compare both)
    concurrently = True          # pair merges in a merge-tree process of their own (tests compare both)
    regions_from_merges = True   # blame reads conflict regions from the merges made (tests compare both)
    share_with_compose = True    # PRs alone onto upstream as composing merges them (tests compare both)
    keep_decisions = True        # pair decisions kept on disk by what decides them (review.paircache)
    settle_unchanged = True      # a pair whose first changes nothing on upstream is not merged (_changes_nothing)
    shared_files_alone = True    # pair merges of the shared files' trees alone where exact (tests compare both)
    alike_once = True            # pairs whose merges are the same merge ask git once (tests compare both)
    alone_directly = True        # merges alone that need no merge are written into upstream's tree (`_directly`)

    def __init__(self, git: Git, manifest: Manifest, upstream: str) -> None:
        self.git = git
        self.manifest = manifest
        self.upstream = upstream
        self.structurally: set[tuple[str, str]] = set()     # (first, second) pairs the structured rule resolves
        info = git.commit_info(upstream)
        self.upstream_tree: str = info["tree"]  # type: ignore[assignment]
        when: int = info["committer_time"]  # type: ignore[assignment]
        self.sig = Signature(manifest.identity.name, manifest.identity.email, when)
        self.commits: dict[str, str] = {}          # entry id -> its change alone on upstream, as a commit
        self.alone_results: dict[str, MergeResult] = {}
        self.alone_lines: dict[str, tuple[str, str]] = {}   # entry id -> (ours, theirs) of its merge alone
        self.on_upstream: dict[str, frozenset[str]] = {}   # entry id -> the paths its merge alone changed (`_changed`)
        folder = git.common_dir / "carrytool" / "cache" if self.keep_decisions else None
        self.decisions = PairDecisions(folder, git.version)
        self._upstream_files: dict[str, bool] = {}     # path -> a file in upstream (_upstream_file)
        self._upstream_entries: dict[str, tuple[str, str] | None] = {}   # path -> (mode, oid) in upstream
        self._stand_ins: set[str] = set()          # the stand-ins PRs are merged alone from (`_alone_pair`)

    def theirs(self, item: EntryFacts, ours: str, ours_tree: str) -> tuple[str, str]:
        """The (ours, theirs) commits whose merge applies ITEM's whole change onto OURS (see compose.py)."""
        assert item.head is not None
        if item.entry.kind == "pr":
            return ours, item.head
        parents = [ours] + ([item.base] if item.base else [])
        shaped = self.git.write_commit(ours_tree, parents, self.sig, self.sig,
                                       f"carrytool explain: merge base for {item.id}\n")
        return shaped, item.head

    def alone(self, order: Sequence[EntryFacts]) -> list[MergeResult]:
        lines = [self._alone_pair(f) for f in order]
        self.alone_lines = {f.id: line for f, line in zip(order, lines)}
        direct = self._directly(order, lines) if self.alone_directly else {}
        todo = [n for n in range(len(order)) if n not in direct]
        merged = iter(self.git.merge_trees([lines[n] for n in todo], weights=merge_weights(
            self.git, self.upstream_tree, [(order[n].base, order[n].changes) for n in todo])))
        results = [direct[n] if n in direct else next(merged) for n in range(len(order))]
        for item, result in zip(order, results):
            if result.clean:
                self.commits[item.id] = self.git.write_commit(
                    result.tree, [self.upstream], self.sig, self.sig,
                    f"carrytool explain: {item.id} alone on upstream\n")
        self.alone_results = {f.id: r for f, r in zip(order, results)}
        return results

    def _directly(self, order: Sequence[EntryFacts], lines: Sequence[tuple[str, str]]) -> dict[int, MergeResult]:
        """The merges alone (their indexes in ORDER) that need no merge: composing's shortcut
        (compose_upstream.direct_edits). A PR merged from the stand-in (`_alone_pair`: upstream's tree, the
        PR's base as only parent) whose paths upstream left alone since that base merges as its own change
        written into upstream's tree, the tree merge-tree gives; unless its head encodes a directory anew
        (Git.reencoded_dirs: merge-tree then takes the head's tree object). One batched diff-tree of each base
        to upstream (merge_weights asks the same, which Git keeps), none of the merges."""
        candidates = [n for n, (item, line) in enumerate(zip(order, lines))
                      if line[0] in self._stand_ins and item.base and item.changes]
        bases = list(dict.fromkeys(order[n].base for n in candidates))
        since: dict[str | None, UpstreamSince] = {
            base: upstream_since(changes) for base, changes in
            zip(bases, self.git.diff_trees([(base, self.upstream_tree) for base in bases], renames=False))}  # type: ignore[misc]
        found: dict[int, dict[str, tuple[str, str] | None]] = {}
        for n in candidates:
            edits = direct_edits(order[n].changes, since[order[n].base])
            if edits is not None:
                found[n] = edits
        if not found:
            return {}
        checked = sorted(found)
        dirs = self.git.reencoded_dirs([(order[n].base, order[n].head) for n in checked])()  # type: ignore[misc]
        return {n: MergeResult(True, self.git.edit_tree(self.upstream_tree, found[n]))
                for n, moved in zip(checked, dirs) if not moved}

    def _alone_pair(self, item: EntryFacts) -> tuple[str, str]:
        """The merge of ITEM alone onto upstream. For a PR whose base is its only merge base with upstream,
        the stand-in composing merges it onto (upstream's tree, the base as only parent; compose_chain.py's
        `_pair`): the same merge, and the same line, whose answer the run then keeps for composing."""
        if item.entry.kind == "pr" and item.base and item.head and self.share_with_compose and \
                self.git.sole_merge_base(self.upstream, item.head):
            stand_in = self.git.write_commit(self.upstream_tree, [item.base], self.sig, self.sig,
                                             "carrytool: stand-in for the result so far\n")
            self._stand_ins.add(stand_in)
            return stand_in, item.head
        return self.theirs(item, self.upstream, self.upstream_tree)

    def pairs(self, pairs: Sequence[tuple[EntryFacts, EntryFacts]]) -> list[tuple[list[str] | None, Any]]:
        """For each pair: the paths where it conflicts ([] when it merges; None when undecidable), and
        ((first id, second id), (ours, theirs)) of the merge that decided it."""
        return self.start_pairs(pairs)()

    def start_pairs(self, pairs: Sequence[tuple[EntryFacts, EntryFacts]]) -> Callable[[], list[tuple[list[str] | None, Any]]]:
        """`pairs` in two halves: the merges start now, in a merge-tree process of their own; the
        function returned waits for them and decides each pair."""
        jobs: list[tuple[str, str]] = []
        plan: list[tuple[EntryFacts, EntryFacts] | None] = []
        for a, b in pairs:
            first, second = (a, b) if a.id in self.commits else (b, a)
            if first.id not in self.commits:
                plan.append(None)
                continue
            ours = self.commits[first.id]
            jobs.append(self.theirs(second, ours, self.git.tree_of(ours)))
            plan.append((first, second))
        decided = [p for p in plan if p is not None]
        self.read_changed([first for first, _second in decided])
        # each merge goes to git as soon as it is known (in chunks), while the next ones are prepared
        later = self.git.merge_trees_later() if self.concurrently else None
        keys: list[str] = []
        known: list[Decision | None] = []
        todo: list[tuple[str, str]] = []
        slots: dict[tuple[str, str], int] = {}    # a merge -> its place in TODO: each distinct one asked once
        asked: list[int] = []                     # per pair to merge, in order: the place of its merge
        for job, pair in zip(jobs, decided):
            if self._changes_nothing(pair):
                keys.append("")
                known.append(([], False))
                continue
            keys.append(self._key(job, pair))
            known.append(self.decisions.get(keys[-1]))
            if known[-1] is None:        # only then the merge the pair is decided by (its head reduced)
                merge = self._on_shared_files(job, pair)
                if merge not in slots or not self.alike_once:
                    slots[merge] = len(todo)
                    todo.append(merge)
                    if later is not None:
                        later.add([merge])
                asked.append(slots[merge])
        if not todo:          # every pair decided before: no merge-tree process at all
            answers: Callable[[], list[MergeResult]] = list
        elif later is not None:
            later.send_rest()
            answers = later
        else:
            answers = lambda: self.git.merge_trees(todo)  # noqa: E731
        return lambda: self._decide(plan, jobs, list(zip(keys, known)), _spread(answers(), asked))

    def read_changed(self, firsts: Sequence[EntryFacts]) -> None:
        """Read which paths each of FIRSTS changed on upstream, merged alone (one batched diff-tree, no
        renames): its own files, and what else the merge gave it. A rename upstream made since its base
        carries its edit to the new path; merged from several bases (git's virtual one), it can change a
        path its diff from the base `git merge-base` names does not show (adversarial review's cases)."""
        todo = list({f.id: f for f in firsts if f.id not in self.on_upstream and f.id in self.alone_results}.values())
        trees = [self.alone_results[f.id].tree for f in todo]     # a conflicted merge's too: where it lands
        for item, changes in zip(todo, self.git.diff_trees([(self.upstream_tree, t) for t in trees], renames=False)):
            self.on_upstream[item.id] = frozenset(paths_of(changes))

    def own_paths(self, item: EntryFacts, files: Sequence[str]) -> list[str]:
        """FILES (where ITEM and another entry land) as ITEM's own diff names them: the ones it changes, and,
        for a path its change only lands on, its files upstream no longer has there (moved or deleted
        since its base: its edit went where upstream moved the file)."""
        own = [p for p in files if p in item.files]
        if len(own) < len(files):
            own += [p for p in item.files if p not in own and not self._upstream_file(p)]
        return own

    def lands(self, item: EntryFacts) -> frozenset[str]:
        """The paths where ITEM's change lands on upstream: its own files, and every path its merge alone
        changed (conflicted too: where an entry resolved `theirs` lands) (`_changed`: upstream renamed a file it edits since its base, and its edit
        is at the new path). Two entries whose changes land on a common path are a pair: their diffs may
        share no path (one from before upstream's rename, one from after) and conflict all the same."""
        return frozenset(item.files) | self.on_upstream.get(item.id, frozenset())

    def _changes_nothing(self, pair: tuple[EntryFacts, EntryFacts]) -> bool:
        """Whether PAIR is decided without merging: the first changes nothing on upstream (merged alone, it
        gives upstream's tree: upstream has it), and the second is a PR merged alone from its sole merge
        base with upstream. Then the pair merge is the second's own merge onto upstream (the same base,
        upstream's tree as ours, its head or that head reduced to the shared files as theirs): it conflicts
        only where the second conflicts with upstream alone, and there the first's change, which is none,
        meets nothing (sync's rule, pipeline.blame): the pair does not conflict. Nor does a pair whose second
        upstream has (`_upstream_has`): composing never merges it (a trial on python/mypy: an earlier PR
        rewriting the lines of one upstream had merged "conflicted" with it every morning)."""
        first, second = pair
        if not self.settle_unchanged:
            return False
        if self._upstream_has(second):
            return True
        return self._upstream_has(first) and second.entry.kind == "pr" and bool(second.base) and \
            second.head is not None and self.git.sole_merge_base(self.upstream, second.head)

    def _upstream_has(self, item: EntryFacts) -> bool:
        """Whether ITEM, merged alone onto upstream, gives upstream's tree. As the later of a pair, it then
        conflicts with nothing: composing never merges it (pipeline.compose settles an entry upstream has as
        merged-upstream, even where its merge onto the entries before it conflicts)."""
        alone = self.alone_results.get(item.id)
        return alone is not None and alone.clean and alone.tree == self.upstream_tree

    def _key(self, job: tuple[str, str], pair: tuple[EntryFacts, EntryFacts]) -> str:
        """What decides PAIR, whose whole merge is JOB (review.paircache): JOB's two commits (the earlier
        entry alone on upstream, the later one's head or its stand-in), both entries' base and head (the
        earlier's own change, which sync's rule reads; the later's base, its reduced head's parent), the
        later entry's merge alone onto upstream, its structured-merge patterns and this class's switches.
        The merge the pair is decided by (its head reduced to the paths that decide it,
        `_on_shared_files`) follows from them, so a pair decided before builds none (helper-96: 1.6 s of a
        warm explain of 60 polars PRs, stacks of 350 files, went to the reduced heads of pairs it knew)."""
        first, second = pair
        patterns = self.manifest.structured_paths(second.step.entry) if second.step else ()
        switches = (self.shared_files_only, self.regions_from_merges, self.share_with_compose, self.shared_files_alone,
                    self.files_from_upstream)
        inputs = [*job, first.base or "", first.head or "", second.base or "", second.head or ""]
        return self.decisions.key(inputs, self.alone_lines.get(second.id), list(patterns), switches)

    def _decide(self, plan: list[tuple[EntryFacts, EntryFacts] | None], jobs: list[tuple[str, str]],
                known: list[tuple[str, Decision | None]], merged: list[MergeResult]) -> list[tuple[list[str] | None, Any]]:
        results = iter(merged)
        job_iter = iter(jobs)
        known_iter = iter(known)
        out: list[tuple[list[str] | None, Any]] = []
        for item in plan:
            if item is None:
                out.append((None, None))
                continue
            job = next(job_iter)
            key, found = next(known_iter)
            if found is None:
                found = self._decide_one(item, next(results))
                self.decisions.put(key, found)
            conflicted, structurally = found
            if structurally:
                self.structurally.add((item[0].id, item[1].id))
            out.append((list(conflicted), ((item[0].id, item[1].id), job)))
        return out

    def _decide_one(self, item: tuple[EntryFacts, EntryFacts], result: MergeResult) -> Decision:
        """The paths where the pair ITEM conflicts, given RESULT (its merge), and whether the structured
        rule resolves them."""
        own = set(self.alone_results[item[1].id].conflicted_files)
        conflicted = [p for p in result.conflicted_files if p not in own or self._meets(item, p, result)] \
            if not result.clean else []
        patterns = self.manifest.structured_paths(item[1].step.entry) if item[1].step else ()
        structurally = bool(conflicted and patterns and resolve_merge(self.git, result, patterns).tree is not None)
        return conflicted, structurally

    def _on_shared_files(self, job: tuple[str, str], pair: tuple[EntryFacts, EntryFacts]) -> tuple[str, str]:
        """JOB with the second PR's head reduced to the paths where ours, the first alone on upstream, is
        not upstream (the first's files, and what else its merge alone changed: `_changed`;
        pipeline.reduce): a pair conflicts only there (elsewhere the second meets upstream's version alone,
        decided by its merge onto upstream). Where the PR only modifies files, adds paths and deletes files ours
        has as the base had them, and its base is its only merge base with upstream (ours is a commit on
        upstream: the pair merges from that base alone), the merge of those files' trees alone
        (`files_alone`): git then neither walks history for the merge base nor reads upstream's other
        changes since that base, nor does this build the reduced head's whole tree. Not under a structured merge policy, which judges the whole merge."""
        first, second = pair
        if not self.shared_files_only or second.entry.kind != "pr" or not second.base or not second.head or \
                (second.step and self.manifest.structured_paths(second.step.entry)):
            return job
        ours_tree = self.git.tree_of(job[0])
        is_file = self._upstream_file if self.files_from_upstream else None
        # every path where ours is not upstream's: elsewhere the pair merges as the second alone on upstream
        # the commits made name no entry: pairs whose reduced merges hold the same trees then are the same merge,
        # asked once (polars: a stack of seven 350-file PRs, reduced to the files of each PR beside them alike)
        what = "the later entry of a pair" if self.alike_once else f"{second.id} beside {first.id}"
        keep = set(first.files) | self.on_upstream[first.id]
        if self.shared_files_alone and self.git.sole_merge_base(self.upstream, second.head):
            alone = files_alone(self.git, base=second.base, changes=second.changes, keep=keep,
                                ours_tree=ours_tree, sig=self.sig, what=what, is_file=is_file,
                                entry_at=self._upstream_entry if self.files_from_upstream else None)
            if alone is not None:
                return alone
        reduced = reduced_head(self.git, head=second.head, base=second.base, changes=second.changes,
                               keep=keep, ours_tree=ours_tree, sig=self.sig, what=what, is_file=is_file)
        return job if reduced is None else (job[0], reduced)

    def _upstream_entry(self, path: str) -> tuple[str, str] | None:
        """(mode, oid) of PATH in upstream's tree, asked once per path: for a path the pair does not keep,
        ours' (see `_upstream_file`)."""
        if path not in self._upstream_entries:
            self._upstream_entries[path] = self.git.blob_at(self.upstream_tree, path)
        return self._upstream_entries[path]

    def _upstream_file(self, path: str) -> bool:
        """Whether upstream has a file at PATH, asked once per path. For a path the pair does not keep
        (outside the first entry's files and every path its merge alone changed on upstream, `_changed`),
        the same as in the first alone on upstream (ours), which has upstream's version there:
        `reduced_head` need not read each pair's ours."""
        found = self._upstream_files.get(path)
        if found is None:
            found = self._upstream_files[path] = file_at(self.git, self.upstream_tree, path)
        return found

    def _meets(self, pair: tuple[EntryFacts, EntryFacts], path: str, merged: MergeResult | None = None) -> bool:
        """Whether the first's change meets the lines where the second conflicts with upstream alone in
        PATH (the rule sync names entries by: pipeline.blame). The second's merge alone onto upstream and
        MERGED, the pair's, hold the conflict regions blame compares when they merged the same blobs."""
        first, second = pair
        if not second.base or not second.head:
            return False
        merges = (self.alone_results.get(second.id), merged) if self.regions_from_merges else (None, None)
        return meets_conflict(self.git, path, base_tree=self.git.tree_of(second.base),
                              head_tree=self.git.tree_of(second.head), upstream_tree=self.upstream_tree,
                              other_tree=self.git.tree_of(self.commits[first.id]), merges=merges)


def _spread(answers: Sequence[MergeResult], asked: Sequence[int]) -> list[MergeResult]:
    """The answer of each pair merged, in order, from ANSWERS (one per distinct merge) and ASKED (per pair,
    its merge's place among them)."""
    return [answers[slot] for slot in asked]
