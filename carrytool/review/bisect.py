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
from collections.abc import Sequence

from carrytool.errors import InputError
from carrytool.gitlayer.git import Git
from carrytool.manifest.model import Manifest
from carrytool.review.bisect_chain import Chain, Progress, chain_at, composed_chain
from carrytool.review.bisect_result import BisectResult
from carrytool.review.bisect_search import Search
from carrytool.review.probe import Checks, Prober


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
        chain = _with_left_out(manifest, git, chain, checks)
    with Prober(git, checks) as prober:
        search = Search(manifest, git, chain, prober)
        result = search.run()
        if narrow and result.first_bad is None and not result.tip_good and len(checks.asserts) > 1:
            result = _one_by_one(search, prober, result)
    # the entries the asserts guard that could not be tried, whichever search answered (h187: left out unsaid)
    result.left_out += [{"id": one.id, "status": "not-tried", "with": [], "upstream": False, "files": [],
                         "asserts": names, "why": one.why, "fetch": one.fetch} for one in chain.untried
                        if (names := [spec.name for spec in checks.asserts if spec.entry == one.id])]
    composed_with = dict(chain.composed_with)
    for row in result.left_out:     # with --rev: the head each was tried with, and whether the night had it
        if (used := composed_with.get(str(row["id"]))) is not None:
            row.update({"head": used.sha, "night": used.night})
    return result


def _with_left_out(manifest: Manifest, git: Git, chain: Chain, checks: Checks) -> Chain:
    """CHAIN (read from a night's commits) with the entries the asserts guard that it does not hold: with the
    heads (or commits) the night's lock records, else those the repository has now (h193)."""
    from carrytool.review.bisect_night import night_inputs
    from carrytool.review.left_out import left_out_steps

    present = {link.id for link in chain.links}
    wanted = {spec.entry for spec in checks.asserts if spec.entry} - present
    if not wanted:
        return chain
    night = night_inputs(manifest, git, chain.links[-1].commit)
    found = left_out_steps(manifest, git, chain.upstream, present, wanted, night)
    return dataclasses.replace(chain, left_out=found.steps, untried=found.untried,
                               composed_with=found.composed_with)


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
