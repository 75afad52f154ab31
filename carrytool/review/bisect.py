"""`carrytool bisect`: the first entry of the composed chain that breaks a check, and with whom.

The chain is one commit per applied entry: composed as sync would (in memory, on_conflict forced to
skip so a red night can still be searched), or read back from a composed commit's `Carry-*` trailers.
A binary search over the chain finds the first bad entry; then it is composed alone onto upstream, and
when it is good there, delta debugging (ddmin) over the earlier entries finds a minimal set it breaks
with. When upstream itself fails (an assert guarding a carry does, by design), a base that passes is
looked for first (the asserts' `entry:`, even one the chain left out for a conflict, the fork's carries, a
prefix; each with what its entries are built on, used only when every entry of it applies) and the rest is
searched on top of it. Every tree is judged once (review.probe; the search with each assert alone reads
the verdicts the search with all of them took), command verdicts are cached across runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from carrytool.errors import InputError
from carrytool.gitlayer.git import EMPTY_TREE, Git
from carrytool.manifest.model import Entry, Manifest
from carrytool.pipeline.compose import Composer
from carrytool.pipeline.plan import APPLIED, CONFLICT, Step
from carrytool.pipeline.sync import plan_and_compose
from carrytool.pipeline.sync_records import SyncOptions
from carrytool.review.probe import Checks, Prober, Verdict

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Link:
    """One applied entry of the chain: its composed commit and the facts to compose it again."""

    id: str
    commit: str
    step: Step


@dataclass(frozen=True)
class Chain:
    upstream: str
    links: tuple[Link, ...]
    # the entries a night composing the manifest did not apply for a conflict (their steps, with the facts to
    # compose them again): an assert's `entry:` among them is searched with all the same (h179)
    left_out: tuple[Step, ...] = ()


@dataclass(frozen=True)
class Base:
    """Entries composed onto upstream to search from (with what they are built on), and whether that tree
    failed the checks: ORIGIN says why they were tried (`entry`: the asserts' `entry:`; `carries`: the fork's
    carries; `carries-alone`: those of them built on no PR that apply on upstream; `prefix`: the first
    entries of the chain). UNAPPLIED: (id, reason) of each entry that did not apply there: the tree is not
    upstream + IDS, so it was skipped unjudged (BAD None; helper-153)."""

    origin: str
    ids: tuple[str, ...]
    bad: bool | None
    unapplied: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"from": self.origin, "entries": list(self.ids), "bad": self.bad,
                "unapplied": [{"id": name, "reason": reason} for name, reason in self.unapplied]}


@dataclass
class BisectResult:
    chain: Chain
    checks: Checks
    first_bad: str | None = None
    alone_bad: bool = False
    interacts_with: list[str] = field(default_factory=list)
    verdict: Verdict | None = None       # the failing checks where the first bad entry came in
    tip_good: bool = False
    upstream_bad: bool | None = None     # None: upstream was not probed
    upstream_verdict: Verdict | None = None
    bases: list[Base] = field(default_factory=list)   # tried when upstream fails (the last: the one used)
    # the entries the asserts searched with guard that are not in the chain, and why (`left_out` in JSON)
    left_out: list[dict[str, object]] = field(default_factory=list)
    probes: int = 0
    cached: int = 0
    # the command run again on the trees the answer rests on: both run again, same verdicts (True); a verdict
    # changed (False: flaky); either not run again (None: no command, a verdict from the cache or a timeout)
    confirmed: bool | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.tip_good else 0

    @property
    def unparsable(self) -> list[str]:
        """The files that do not parse where the verdict was taken: their failing asserts were not judged
        (helper-123: jax's newer grammar on an older Python read as "the entry no longer provides it")."""
        failed = self.verdict.failed if self.verdict else []
        return sorted({o.file for o in failed if o.unparsable})

    @property
    def unjudged(self) -> bool:
        """True when no failing assert was judged: every one is on a file that does not parse."""
        failed = self.verdict.failed if self.verdict else []
        return bool(failed) and all(o.unparsable for o in failed)

    def to_json(self) -> dict[str, object]:
        return {"first_bad": self.first_bad, "alone_bad": self.alone_bad, "interacts_with": self.interacts_with,
                "checks": checks_json(self.verdict), "probes": self.probes, "cached": self.cached,
                "confirmed": self.confirmed, "unparsable": self.unparsable,
                "chain": [{"id": link.id, "commit": link.commit} for link in self.chain.links],
                "upstream": {"sha": self.chain.upstream, "bad": self.upstream_bad,
                             "checks": checks_json(self.upstream_verdict)},
                "bases": [base.to_json() for base in self.bases], "left_out": self.left_out,
                "searched_with": [spec.name for spec in self.checks.asserts] +
                                 ([self.checks.command] if self.checks.command else [])}


def checks_json(verdict: Verdict | None) -> list[dict[str, object]] | dict[str, object]:
    """The contract's `checks`: the failing asserts, or the command's exit code (and last lines)."""
    if verdict is None:
        return []
    if verdict.failed:
        return [{"name": o.name, "ok": False, "message": o.message, "file": o.file, "line": o.line}
                for o in verdict.failed]
    return verdict.command.to_json() if verdict.command else []


def select_checks(manifest: Manifest, names: Sequence[str], command: str | None, timeout: float) -> Checks:
    """The checks to search with: the named asserts (all of them when neither names nor a command)."""
    if names:
        by_name = {spec.name: spec for spec in manifest.asserts}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            known = ", ".join(by_name) or "none"
            raise InputError(f"no assert named {', '.join(unknown)} in the manifest (its asserts: {known})",
                             where=str(manifest.path))
        asserts = tuple(by_name[n] for n in dict.fromkeys(names))
    else:
        asserts = () if command is not None else manifest.asserts
    if not asserts and command is None:
        raise InputError("nothing to bisect with: the manifest has no asserts and no --run CMD was given",
                         where=str(manifest.path), hint="add asserts to the manifest, or pass --run CMD")
    if timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    return Checks(asserts, command, timeout)


def searchable(manifest: Manifest) -> Manifest:
    """MANIFEST with every `on_conflict: fail` turned into skip: a red night's chain can be searched."""
    entries = tuple(dataclasses.replace(e, on_conflict="skip") if e.on_conflict == "fail" else e
                    for e in manifest.entries)
    policy = manifest.policy
    if policy.on_conflict == "fail":
        policy = dataclasses.replace(policy, on_conflict="skip")
    return dataclasses.replace(manifest, entries=entries, policy=policy)


def composed_chain(manifest: Manifest, git: Git, *, offline: bool = False, locked: bool = False,
                   progress: Progress | None = None) -> Chain:
    """Compose MANIFEST as sync would, in memory (only objects are written), conflicts skipped."""
    options = SyncOptions(offline=offline, locked=locked, dry_run=True, locked_as="bisect --locked")
    planned = plan_and_compose(searchable(manifest), git, options, progress, command="bisect")
    links = tuple(Link(s.id, s.commit, s) for s in planned.steps if s.status == APPLIED and s.commit)
    return Chain(planned.resolved.upstream, links, tuple(s for s in planned.steps if s.status == CONFLICT))


def chain_at(manifest: Manifest, git: Git, rev: str) -> Chain:
    """Read the chain of composed commit REV from its `Carry-Entry/Head/Base/Filtered` trailers."""
    sha = git.rev_parse(rev)
    if sha is None:
        raise InputError(f"--rev {rev}: no such commit in this repository")
    found: list[tuple[str, Step]] = []
    current = sha
    while True:
        info = git.commit_info(current)
        trailers = _trailers(str(info["message"]))
        parents = info["parents"]
        if "Carry-Entry" not in trailers or not parents:
            break
        found.append((current, _step_of(manifest, trailers)))
        current = parents[0]  # type: ignore[index]
    if not found:
        raise InputError(f"--rev {rev}: {sha[:12]} is not a commit carrytool composed (no Carry-Entry trailer)",
                         hint="pass the result.sha of a sync report, or the fork branch")
    found.reverse()
    _fill_changes(git, [step for _, step in found])
    return Chain(current, tuple(Link(step.id, commit, step) for commit, step in found))


def _trailers(message: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Carry-"):
            out.setdefault(key, []).append(value.strip())
    return out


def _step_of(manifest: Manifest, trailers: dict[str, list[str]]) -> Step:
    entry_id = trailers["Carry-Entry"][0]
    entry = manifest.entry(entry_id)
    if entry is None:       # an entry since removed from the manifest: still part of that night's chain
        kind, _, rest = entry_id.partition("/")
        entry = Entry("pr", number=int(rest)) if kind == "pr" and rest.isdigit() else Entry("carry", name=rest)
    step = Step(entry, head=_one(trailers, "Carry-Head"), base=_one(trailers, "Carry-Base"))
    for value in trailers.get("Carry-Filtered", []):
        path, _, source = value.rpartition(" (from ")
        step.filtered.append(path)
        step.provided_by[path] = source.rstrip(")")
    return step


def _one(trailers: dict[str, list[str]], key: str) -> str | None:
    values = trailers.get(key)
    return values[0] if values else None


def _fill_changes(git: Git, steps: Sequence[Step]) -> None:
    todo = [s for s in steps if s.head]
    for step, changes in zip(todo, git.diff_trees([(s.base or EMPTY_TREE, s.head) for s in todo])):  # type: ignore[misc]
        step.all_changes = changes
        filtered = set(step.filtered)
        step.changes = [c for c in changes if not set(c.paths) <= filtered] if filtered else list(changes)


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


def bisect(manifest: Manifest, git: Git, checks: Checks, *, rev: str | None = None, offline: bool = False,
           locked: bool = False, narrow: bool = False, progress: Progress | None = None) -> BisectResult:
    """Find the first entry of the chain (composed, or of REV) that breaks CHECKS, and with whom.

    NARROW (the manifest's asserts by default, none named): search with the asserts that fail at the tip,
    and of those, the ones upstream passes when there are any (an entry broke them for sure).
    """
    chain = chain_at(manifest, git, rev) if rev else composed_chain(manifest, git, offline=offline, locked=locked,
                                                                      progress=progress)
    if narrow and checks.asserts:
        checks = narrowed(git, chain, checks)
    if rev:     # the trailers name the entries applied: those the asserts guard, left out, from the manifest
        from carrytool.review.left_out import left_out_steps

        chain = dataclasses.replace(chain, left_out=left_out_steps(
            manifest, git, chain.upstream, {link.id for link in chain.links},
            {spec.entry for spec in checks.asserts if spec.entry}))
    prober = Prober(git, checks)
    search = Search(manifest, git, chain, prober)
    result = search.run()
    if narrow and result.first_bad is None and not result.tip_good and len(checks.asserts) > 1:
        result = _one_by_one(search, prober, result)
    return result


def _one_by_one(whole: Search, prober: Prober, result: BisectResult) -> BisectResult:
    """Upstream fails some of the asserts: search with each alone (in process, cheap) and keep the earliest
    entry that broke one of them (an assert that fails everywhere was never broken by an entry). A tree the
    search with all of them judged (or composed) is not judged (or composed) again: `probes` counts the
    distinct trees judged in the run."""
    order = {link.id: n for n, link in enumerate(whole.chain.links)}
    probers = [Prober(whole.git, Checks((spec,)), known=prober.seen) for spec in prober.checks.asserts]
    found = [Search(whole.manifest, whole.git, whole.chain, one, composed=whole.composed).run() for one in probers]
    named = [r for r in found if r.first_bad is not None]
    best = min(named, key=lambda r: order[r.first_bad]) if named else result   # type: ignore[index]
    best.probes = len(set(prober.seen).union(*(one.seen for one in probers)))
    best.cached = result.cached
    return best


def narrowed(git: Git, chain: Chain, checks: Checks) -> Checks:
    """CHECKS with only the asserts failing at the chain's tip, preferring those upstream passes."""
    from carrytool.asserts import evaluate_all

    def failing(commit: str) -> list[bool]:
        tree = git.tree_of(commit)
        return [not o.ok for o in evaluate_all(checks.asserts, lambda path: git.file_at(tree, path))]

    at_tip = failing(chain.links[-1].commit if chain.links else chain.upstream)
    if not any(at_tip):
        return dataclasses.replace(checks, asserts=() if checks.command else checks.asserts)
    at_upstream = failing(chain.upstream)
    red = [spec for spec, bad in zip(checks.asserts, at_tip) if bad]
    broken = [spec for spec, bad, up in zip(checks.asserts, at_tip, at_upstream) if bad and not up]
    return dataclasses.replace(checks, asserts=tuple(broken or red))
