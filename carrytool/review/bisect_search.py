"""The search over a chain: a binary search for the first bad entry, then alone on upstream, then delta
debugging (ddmin) over the earlier entries; when upstream itself fails, the same on a base that passes (an
entry the asserts guard that the chain left out among them, where the manifest puts it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence

from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.plan import APPLIED, Step
from carrytool.review.bisect_chain import Chain, Link, searchable
from carrytool.review.bisect_result import Base, BisectResult
from carrytool.review.probe import Prober


class Search:
    """Binary search over a chain, then alone-on-upstream, then ddmin over the earlier entries; when upstream
    itself fails, the same on top of a base that passes."""

    def __init__(self, manifest: Manifest, git: Git, chain: Chain, prober: Prober,
                 composed: dict[tuple[str, ...], tuple[str, dict[str, Step]]] | None = None) -> None:
        self.manifest = searchable(manifest)
        self.git = git
        self.chain = chain
        self.prober = prober
        self._position: dict[str, float] = {link.id: n for n, link in enumerate(chain.links)}
        # the entries the asserts guard that are not in the chain (they conflicted): composed where the
        # manifest puts them, after the links before them (h179)
        guarded = {spec.entry for spec in prober.checks.asserts if spec.entry}
        self.outside = [Link(step.id, "", step) for step in chain.left_out if step.id in guarded]
        order = {entry.id: n for n, entry in enumerate(manifest.entries)}
        for link in self.outside:
            before = [n for n, lower in enumerate(chain.links) if order.get(lower.id, -1) < order.get(link.id, -1)]
            self._position[link.id] = max(before, default=-1) + 0.5
        # entries composed in chain order -> (tree, {id: step} of those that did not apply); COMPOSED: another
        # search's of the same chain
        self.composed: dict[tuple[str, ...], tuple[str, dict[str, Step]]] = {} if composed is None else composed
        self._below: dict[str, frozenset[str]] | None = None

    def prefix_tree(self, k: int) -> str:
        """The tree after the first K entries of the chain (0: upstream)."""
        commit = self.chain.links[k - 1].commit if k else self.chain.upstream
        return self.git.tree_of(commit)

    def subset_tree(self, links: Sequence[Link], *, applies: Link | None = None) -> str | None:
        """The tree of upstream + LINKS composed in chain order (a prefix of the chain: its commit's tree),
        in memory; None when APPLIES, one of them, does not apply there (it conflicts, or is redundant)."""
        tree, unapplied = self._compose(links)
        return tree if applies is None or applies.id not in unapplied else None

    def unapplied(self, links: Sequence[Link]) -> dict[str, str]:
        """{id: reason} of the LINKS that do not apply composed onto upstream in chain order (none for a prefix
        of the chain: its commits applied each)."""
        return {name: step.reason or step.status for name, step in self._compose(links)[1].items()}

    def _compose(self, links: Sequence[Link]) -> tuple[str, dict[str, Step]]:
        ordered = sorted(links, key=lambda link: self._position[link.id])
        key = tuple(link.id for link in ordered)
        if key == tuple(link.id for link in self.chain.links[:len(key)]):
            return self.prefix_tree(len(key)), {}
        if key not in self.composed:
            steps = [_fresh(link.step) for link in ordered]
            comp = Composer(self.git, self.manifest, self.chain.upstream).compose(steps)
            self.composed[key] = (self.git.tree_of(comp.result),
                                  {step.id: step for step in steps if step.status != APPLIED})
        return self.composed[key]

    def bad(self, tree: str | None) -> bool:
        return tree is not None and self.prober.judge(tree).bad

    def run(self) -> BisectResult:
        """The tip first (good: nothing to find), a binary search, then the culprit alone on upstream
        (and upstream itself when that is bad), then ddmin over the entries before it. When the search
        ends on upstream failing, it is searched again on a base that passes (`on_a_good_base`)."""
        result = BisectResult(self.chain, self.prober.checks)
        n = len(self.chain.links)
        if not self.bad(self.prefix_tree(n)):
            result.tip_good = True
            return self._counted(result)
        lo, hi = self.first_bad([], list(self.chain.links))
        if hi == 0 or (hi == 1 and self.bad(self.prefix_tree(0))):
            return self._counted(self.on_a_good_base(result))
        culprit = self.chain.links[hi - 1]
        result.first_bad = culprit.id
        result.verdict = self.prober.judge(self.prefix_tree(hi))
        result.confirmed = self._confirmed([self.prefix_tree(hi - 1), self.prefix_tree(hi)])
        # bad alone: upstream is good and upstream + the culprit is bad (when upstream is bad too, the
        # culprit broke what earlier entries had made good: that is an interaction)
        result.alone_bad = hi == 1 or (self.bad(self.subset_tree([culprit]))
                                       and not self.bad(self.prefix_tree(0)))
        if not result.alone_bad:
            minimal = ddmin(list(self.chain.links[:hi - 1]), lambda subset: self.breaks_with(subset, culprit))
            result.interacts_with = [link.id for link in minimal]
        return self._counted(result)

    def moved(self, result: BisectResult) -> bool:
        """No base passes, and an assert searched with guards an entry of the chain (`entry:`): when the last
        good night had that entry at another head, upstream + the entry at that head (with what it is built on)
        passes and at its head now fails, the entry broke it itself, by moving (h241): it is `first_bad`
        (alone_bad stays false: upstream fails without it), and `moved` names both heads. True when so."""
        from carrytool.review.bisect_moved import last_good_head, step_at

        for link in self.chain.links:
            specs = [spec for spec in self.prober.checks.asserts if spec.entry == link.id]
            earlier = last_good_head(self.manifest, self.git, self.chain.links[-1].commit, link.id, specs,
                                     result.night_notes) \
                if specs and link.step.head else None
            if earlier is None or earlier.sha == link.step.head:
                continue
            base = self._closed({link.id})
            now = self.subset_tree(base)
            if not self.bad(now):       # upstream + it (as the chain has it) passes: not its doing
                continue
            then = self._with_step(base, step_at(self.git, self.chain.upstream, link.step, earlier.sha))
            row: dict[str, object] = {"id": link.id, "from": earlier.sha, "to": link.step.head,
                                      "night": earlier.where, "bad": None if then is None else self.bad(then)}
            result.moved.append(row)
            if row["bad"] is False:
                result.first_bad = link.id
                result.verdict = self.prober.judge(now)     # type: ignore[arg-type]
                result.confirmed = self._confirmed([then, now])     # type: ignore[list-item]
                return True
        return False

    def _with_step(self, links: Sequence[Link], step: Step) -> str | None:
        """The tree of upstream + LINKS composed in chain order with STEP in place of its entry's link; None
        when one of them does not apply there (it is not that tree)."""
        ordered = sorted(links, key=lambda link: self._position[link.id])
        steps = [_fresh(step if link.id == step.id else link.step) for link in ordered]
        comp = Composer(self.git, self.manifest, self.chain.upstream).compose(steps)
        return self.git.tree_of(comp.result) if all(s.status == APPLIED for s in steps) else None

    def first_bad(self, base: Sequence[Link], rest: Sequence[Link]) -> tuple[int, int]:
        """Binary search: (LO, HI) with upstream + BASE + the first LO of REST good (LO = 0: taken as good)
        and the first HI bad, HI - LO <= 1 (BASE + all of REST is the tip, known bad)."""
        lo, hi = 0, len(rest)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.bad(self.subset_tree([*base, *rest[:mid]])):
                hi = mid
            else:
                lo = mid
        return lo, hi

    def on_a_good_base(self, result: BisectResult) -> BisectResult:
        """Upstream fails (an assert guarding a carry does by design: helper-146): the first base that passes
        (`bases`), and the first entry of the rest, composed onto it in chain order, that makes it fail,
        with the minimal set of the base and earlier entries it fails with. No base passes: upstream itself
        fails, and the verdict quoted is the tip's (where the user asked), upstream's beside it."""
        found: list[Link] | None = None
        for origin, base in self.bases():
            ids = tuple(link.id for link in base)
            unapplied = self.unapplied(base)
            if unapplied:       # helper-153: not the tree it names (upstream + the rest of it): not judged
                result.bases.append(Base(origin, ids, None, tuple(unapplied.items())))
                continue
            good = not self.bad(self.subset_tree(base))
            result.bases.append(Base(origin, ids, not good))
            if good:
                found = base
                break
        # a base holding an entry the chain left out, with the rest of the chain, is the night's tree again:
        # bad (unless the manifest changed since; then there is nothing to search on it)
        if found is not None and any(link in self.outside for link in found) and \
                not self.bad(self.subset_tree([*found, *(link for link in self.chain.links if link not in found)])):
            found = None
        if found is None:
            result.verdict = self.prober.judge(self.prefix_tree(len(self.chain.links)))
            if not self.moved(result):
                result.confirmed = self._confirmed([self.prefix_tree(0)])
            return result
        base = found
        chosen = {link.id for link in base}
        rest = [link for link in self.chain.links if link.id not in chosen]
        lo, hi = self.first_bad(base, rest)
        culprit = rest[hi - 1]
        result.first_bad = culprit.id
        result.verdict = self.prober.judge(self.subset_tree([*base, *rest[:hi]]))     # type: ignore[arg-type]
        result.confirmed = self._confirmed([self.subset_tree([*base, *rest[:lo]]),  # type: ignore[list-item]
                                            self.subset_tree([*base, *rest[:hi]])])
        earlier = sorted([*base, *rest[:hi - 1]], key=lambda link: self._position[link.id])
        minimal = ddmin(earlier, lambda subset: self.breaks_with(subset, culprit))
        result.interacts_with = [link.id for link in minimal]
        return result

    def bases(self) -> Iterator[tuple[str, list[Link]]]:
        """The bases to try, each once, each with the entries its entries are built on, in chain order: the
        entries the asserts searched with guard (`entry:`); the fork's carries; those of them built on no PR
        that apply onto upstream together; then (asserts only: each probe is in process) the prefixes of the
        chain ending on an entry that changes an asserted file, shortest first (a prefix holds what its
        entries are built on, and each of them applied)."""
        links = self.chain.links
        carries = {link.id for link in links if link.step.entry.kind == "carry"}
        guarded = {spec.entry for spec in self.prober.checks.asserts if spec.entry}
        tried: set[tuple[str, ...]] = set()
        # (carries-alone composes once, in memory: only when the bases before it did not pass)
        for origin, wanted in (("entry", lambda: guarded), ("carries", lambda: carries),
                               ("carries-alone", lambda: self._carries_alone(carries))):
            base = self._closed(wanted())
            ids = tuple(link.id for link in base)
            if base and ids not in tried:
                tried.add(ids)
                yield origin, base
        if self.prober.checks.command is not None or not self.prober.checks.asserts:
            return
        files = {spec.file for spec in self.prober.checks.asserts}
        for k in range(1, len(links)):
            if files & set(self.git.changed_paths(self.prefix_tree(k - 1), self.prefix_tree(k))) and \
                    tuple(link.id for link in links[:k]) not in tried:
                yield "prefix", list(links[:k])

    def _carries_alone(self, carries: set[str]) -> set[str]:
        """Of CARRIES, those built on no PR of the chain, less those that do not apply composed onto upstream
        together (a carry made on a PR's earlier push needs it, though its history does not say so) and those
        built on one of them."""
        below = self.built_on()
        alone = [link for link in self.chain.links if link.id in carries and below[link.id] <= carries]
        unapplied = self.unapplied(alone) if alone else {}
        return {link.id for link in alone if link.id not in unapplied and not below[link.id] & unapplied.keys()}

    def _closed(self, ids: set[str]) -> list[Link]:
        """The links of IDS with every link they are built on, and what that is built on, in chain order (an
        entry the chain left out, where the manifest puts it)."""
        below = self.built_on()
        every = self._every()
        wanted = {link.id for link in every if link.id in ids}
        for link in reversed(every):      # built on earlier links only: one pass closes it
            if link.id in wanted:
                wanted |= below[link.id]
        return [link for link in every if link.id in wanted]

    def _every(self) -> list[Link]:
        """The chain's links and the guarded entries it left out, in chain order."""
        return sorted([*self.chain.links, *self.outside], key=lambda link: self._position[link.id])

    def built_on(self) -> dict[str, frozenset[str]]:
        """For each link (and each entry the chain left out that is searched with), the earlier links it is
        built on: those whose head its history holds beyond upstream (a PR's `built_over`; a carry committed
        on a PR's head, which facts do not note, and any entry of a chain read from `--rev`). One `rev-list`
        walk at most (git caches it)."""
        if self._below is None:
            links = self._every()
            heads = [link.step.head for link in links if link.step.head]
            if heads:
                self.git.merge_bases(self.chain.upstream, heads)
            self._below = {}
            for n, link in enumerate(links):
                history = self.git.outside(self.chain.upstream, link.step.head) if link.step.head else frozenset()
                self._below[link.id] = frozenset(
                    lower.id for lower in links[:n]
                    if lower.id in link.step.built_over or (lower.step.head and lower.step.head != link.step.head
                                                            and lower.step.head in history))
        return self._below

    def _confirmed(self, trees: Sequence[str]) -> bool | None:
        """The command run again on TREES (the boundary the answer rests on): False when a verdict changed;
        True only when every one was run again and held; None otherwise (one came from the cache or a
        timeout, or its rerun timed out: helper-97, a timed-out first bad tree, never run again, was
        "confirmed" by the good tree's rerun alone)."""
        answers = [self.prober.confirm(tree) for tree in trees]
        if False in answers:
            return False
        return None if None in answers else True

    def breaks_with(self, subset: Sequence[Link], culprit: Link) -> bool:
        """True when upstream + SUBSET is good and adding CULPRIT (composed in chain order, and applying)
        makes it bad."""
        return self.bad(self.subset_tree([*subset, culprit], applies=culprit)) and \
            not self.bad(self.subset_tree(subset))

    def left_out(self, link: Link) -> dict[str, object]:
        """Why LINK, an entry the asserts guard, is not in the chain: composed after the links before it, its
        status there, the files it conflicts in, and with which entries (and upstream), as sync says it."""
        before = [lower for lower in self.chain.links if self._position[lower.id] < self._position[link.id]]
        step = self._compose([*before, link])[1].get(link.id)
        conflicts = step.conflicts if step is not None else []
        return {"id": link.id, "status": step.status if step is not None else APPLIED,
                "with": list(dict.fromkeys(name for c in conflicts for name in c["with"])),  # type: ignore[attr-defined]
                "upstream": any(c.get("upstream") for c in conflicts),
                "files": [c["file"] for c in conflicts]}

    def _counted(self, result: BisectResult) -> BisectResult:
        result.left_out = [self.left_out(link) for link in self.outside]
        result.probes, result.cached = self.prober.probes, self.prober.cached
        upstream = self.prober.seen.get(self.prefix_tree(0))
        result.upstream_bad = upstream.bad if upstream else None
        result.upstream_verdict = upstream if upstream and upstream.bad else None
        return result


def _fresh(step: Step) -> Step:
    """A pending copy of STEP with the facts gathered for it (head, base, diffs, filtered paths)."""
    entry = step.entry
    if entry.on_conflict == "fail":      # a chain read from --rev holds the manifest's own entries
        entry = dataclasses.replace(entry, on_conflict="skip")
    return Step(entry, head=step.head, base=step.base, changes=list(step.changes),
                all_changes=list(step.all_changes), filtered=list(step.filtered),
                provided_by=dict(step.provided_by), merged_in=step.merged_in, reverted_in=step.reverted_in,
                built_order=step.built_order)


def ddmin(items: list, fails: Callable[[list], bool]) -> list:
    """Zeller's delta debugging: a 1-minimal sublist of ITEMS (kept in order) for which FAILS holds,
    given that it holds for ITEMS; the empty list when ITEMS is empty."""
    n = 2
    while len(items) >= 2:
        chunks = _split(items, n)
        smaller = next((c for c in chunks if fails(c)), None)
        if smaller is not None:
            items, n = smaller, 2
            continue
        if n > 2 or len(chunks) > 2:
            rest = next((r for r in ([x for x in items if x not in c] for c in chunks) if fails(r)), None)
            if rest is not None:
                items, n = rest, max(n - 1, 2)
                continue
        if n >= len(items):
            break
        n = min(len(items), 2 * n)
    return items


def _split(items: list, n: int) -> list[list]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return [c for c in out if c]
