"""What `carrytool bisect` found: the first bad entry, alone or with whom, the bases tried, the entries the
asserts guard that the chain left out, the probes; as the contract's JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

from carrytool.review.bisect_chain import Chain
from carrytool.review.probe import Checks, Verdict


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
    # an entry an assert guards whose head moved since the last good night: {"id", "from", "to", "night",
    # "bad"} (upstream + it at `from`: bad, or None when it does not apply there); `moved` in JSON (h241)
    moved: list[dict[str, object]] = field(default_factory=list)
    # why a night was not read as the last good one (the lock beside the manifest, whose age next to the
    # recorded night bisected git cannot tell: h256); text only
    night_notes: list[str] = field(default_factory=list)
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
                "bases": [base.to_json() for base in self.bases], "left_out": self.left_out, "moved": self.moved,
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
