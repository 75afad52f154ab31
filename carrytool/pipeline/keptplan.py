"""The settled plan kept on disk by what decides it: explain after the nightly sync composes nothing again.

explain plans as sync does (pipeline.sync's `plan_and_compose`, a dry run). Its plan follows from nothing but
the manifest (its text and what it parsed to), the resolved inputs (upstream, every head and carried commit,
patch bases and messages, what is missing, passed pins: all full SHAs, content addressed), where the
repository's history is cut (a shallow clone's boundary, grafts), the git that merges (its version; the
configuration it reads is pinned: gitlayer.env.PINNED_CONFIG), the carrytool that composes (its version and
a digest of the source that composes, `_code`) and the composer's switches, which tests flip to compare the
ways of composing. A sync that is not a dry run, and an explain, keep what composing settled under them:
each step's state but the diffs (which the facts reread: `facts.gather`, whose answers git keeps for the
evidence too), the composed commit, its trees, the conflicts that fail the run, the landing checks' failures
and the warnings composing added. An explain of the same inputs then reads the facts again and takes the
rest from there (`settle`), as one with nothing kept would have found it. sync itself always composes.

Used only when every object it names (whole runs of hex digits: the composed commits, conflicts' merges)
is in the user's store: a name a reviewer is shown must be there to look at (`git show SHA`), as it is
after the run that composed it (sync keeps every SHA its report names, explain every one it prints). A
value that cannot be written as this file's JSON (`encode`) is not kept. `checking` (tests: the variable
CARRYTOOL_CHECK_KEPT_PLANS=1) composes again on every use and fails when what it finds differs.

One JSON file per git version beside the others (`<git dir>/carrytool/cache/plans-git<X.Y.Z>.json`,
`{"plans": {KEY: state}}`), at most PLANS_MAX plans (the last nights', and the branches' of a review).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from carrytool.gitlayer.objects import Change
from carrytool.gitlayer.quarantine import object_names
from carrytool.manifest.model import Manifest
from carrytool.pipeline.kept import PACKAGE, KeptAnswers
from carrytool.pipeline.plan import Step
from carrytool.pipeline.resolve import Resolved

PLANS_MAX = 4            # plans a file keeps: each is a manifest's steps, their conflicts and landing
RULE = "plan-1"          # bump when what a kept plan holds, or how it is read back, changes
# read again by `facts.gather` (large: a stack of 350-file PRs is thousands of changes), or only the landing
# checks read them (applied_changes), which ran when the plan was kept
REREAD = frozenset({"entry", "changes", "all_changes", "superseded_diffs", "applied_changes"})
# every field but those; and what composing writes on a step beside its fields (the head a union's paths are
# taken out of, `_filtered_commit`, which a story's commands name), as it is
SETTLED = frozenset(f.name for f in dataclasses.fields(Step)) - REREAD
# a field at its default is not written (most are, on most steps: 300 steps wrote 280 KB), and is its default
# again when read back
_FACTORIES: dict[str, Callable[[], Any]] = {
    f.name: f.default_factory if f.default is dataclasses.MISSING else (lambda value=f.default: value)  # type: ignore[misc]
    for f in dataclasses.fields(Step) if f.name in SETTLED}
_DEFAULTS = {name: make() for name, make in _FACTORIES.items()}
_PLAIN = (type(None), bool, int, float, str)
_NO_DEFAULT = object()     # what composing writes beside the fields has none: it is always written
_BESIDE = re.compile(r"_[a-z][a-z0-9_]*")     # such an attribute's name (`_filtered_commit`)
_BUILTINS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict,
                              "tuple": tuple, "set": set, "frozenset": frozenset, "None": type(None)}


def _outer_types(annotation: object) -> tuple[type, ...] | None:
    """The classes a value of ANNOTATION (a Step field's, as written: `str | None`, `list[str]`) is exactly one
    of: (str, NoneType), (list,); None (anything) when a part names another class."""
    if not isinstance(annotation, str):
        return None
    parts, depth, start = [], 0, 0
    for at, char in enumerate(annotation):
        depth += (char == "[") - (char == "]")
        if char == "|" and not depth:
            parts.append(annotation[start:at])
            start = at + 1
    parts.append(annotation[start:])
    found = [_BUILTINS.get(part.strip().split("[", 1)[0]) for part in parts]
    return None if None in found else tuple(found)  # type: ignore[arg-type]


# each settled field's classes, from its annotation: a kept file edited by hand (`"conflicts": 5`) is no plan,
# not a step that fails later, far from the file
_TYPES = {f.name: _outer_types(f.type) for f in dataclasses.fields(Step) if f.name in SETTLED}


def _fits(name: str, value: Any) -> bool:
    """Whether VALUE is of a class Step's field NAME is annotated with (anything goes for what composing writes
    beside the fields, and for a field annotated with another class)."""
    kinds = _TYPES.get(name)
    return kinds is None or type(value) in kinds


def _code() -> tuple[str, ...]:
    """The source files a plan is the answer of: every module of the packages that compose, check and warn
    (composing, the landing checks, the structured rule, the asserts that reject a structured resolution, the
    manifest's model): imports flow downward from review, render, cli, union and demo, never back
    (tests/test_layout.py)."""
    out = ["__init__.py", "errors.py"]
    for package in ("asserts", "gitlayer", "manifest", "pipeline"):
        out += sorted(f"{package}/{e.name}" for e in os.scandir(PACKAGE / package) if e.name.endswith(".py"))
    return tuple(out)


class Unkept(ValueError):
    """A value a kept plan cannot hold (see `encode`)."""


def encode(value: Any) -> Any:
    """VALUE as JSON that `decode` turns back into an equal value of the same types: lists stay lists,
    and every object is tagged (`t` a tuple, `s` a set, `f` a frozenset, `d` a dict as its (key, value)
    pairs in order, `c` a Change). Unkept for anything else."""
    kind = type(value)          # exactly: a subclass (a named tuple, an enum) would come back as its base
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        return [encode(v) for v in value]
    if kind is tuple:
        return {"t": [encode(v) for v in value]}
    if kind in (set, frozenset):
        items = sorted((encode(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return {"s" if kind is set else "f": items}
    if kind is dict:
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is Change:
        return {"c": [value.status, value.path, value.old_path, value.old_mode, value.new_mode,
                      value.old_oid, value.new_oid]}
    raise Unkept(type(value).__name__)


def decode(value: Any) -> Any:
    """What `encode` wrote as VALUE; Unkept when it is not that."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise Unkept("not a tagged value")
    (tag, items), = value.items()
    if not isinstance(items, list):
        raise Unkept("not a tagged value")
    if tag == "t":
        return tuple(decode(v) for v in items)
    if tag in ("s", "f"):
        found = [decode(v) for v in items]
        try:
            return set(found) if tag == "s" else frozenset(found)
        except TypeError:
            raise Unkept("an unhashable member") from None
    if tag == "d":
        try:
            return {decode(k): decode(v) for k, v in items}
        except (TypeError, ValueError):
            raise Unkept("not (key, value) pairs") from None
    if tag == "c" and len(items) == 7 and all(v is None or isinstance(v, str) for v in items):
        return Change(*items)
    raise Unkept(f"unknown tag {tag!r}")


def capture(steps: Sequence[Step], result: str, trees: dict[str, str], failed: Sequence[Step],
            dropped: list[dict[str, Any]], warnings: list[dict[str, Any]],
            abbreviations: Mapping[str, str | None]) -> dict[str, Any] | None:
    """What composing settled, as a kept plan holds it (each step's attributes but REREAD, the fields and any
    other composing wrote); None when a value cannot be kept. ABBREVIATIONS: the commits the run found by the
    abbreviated names it asked (`Git.commit_by_abbreviation`: a union's folded head), whose answers decided it."""
    try:
        return {"steps": [_settled_of(s) for s in steps],
                "result": result, "trees": encode(trees), "failed": [s.id for s in failed],
                "dropped": encode(dropped), "warnings": encode(warnings), "abbreviations": encode(dict(abbreviations))}
    except Unkept:
        return None


def _settled(name: str) -> bool:
    """Whether a kept plan holds a step's attribute NAME: a settled field, or what composing writes beside them."""
    return name in SETTLED or _BESIDE.fullmatch(name) is not None


def _settled_of(step: Step) -> dict[str, Any]:
    """STEP's attributes but REREAD and those at their default, encoded, with its id."""
    out: dict[str, Any] = {"id": step.id}
    for name, value in vars(step).items():
        if name in REREAD:
            continue
        if not _settled(name) or not _fits(name, value):
            raise Unkept(f"Step.{name}")      # what `settle` would refuse: no plan, rather than one never used
        default = _DEFAULTS.get(name, _NO_DEFAULT)
        if type(value) is type(default) and value == default:
            continue
        out[name] = value if type(value) in _PLAIN else encode(value)
    return out


@dataclasses.dataclass
class Settled:
    """A kept plan read back onto freshly planned steps (`settle`)."""

    result: str
    trees: dict[str, str]
    failed: list[Step]
    dropped: list[dict[str, Any]]
    warnings: list[dict[str, Any]]


def settle(state: dict[str, Any], steps: Sequence[Step]) -> Settled | None:
    """STATE (a kept plan) written onto STEPS, planned and read afresh (`plan_static`, `facts.gather`,
    `plan_paths`); None, and STEPS left as they were, when it does not fit them: other entries, another head
    or base (then it is not this plan), or not what `capture` writes."""
    try:
        kept = state["steps"]
        if not isinstance(kept, list) or [k.get("id") if isinstance(k, dict) else None for k in kept] != \
                [s.id for s in steps]:
            return None
        values = [{name: decode(value) for name, value in k.items() if name != "id"} for k in kept]
        if any(not all(_settled(name) for name in value) for value in values):
            return None         # REREAD's, or what composing never writes (a file not as `capture` wrote it)
        if not all(_fits(name, item) for value in values for name, item in value.items()):
            return None         # a field of another class than its annotation says
        for value in values:
            value.update((name, make()) for name, make in _FACTORIES.items() if name not in value)
        if any(v["head"] != s.head or v["base"] != s.base for v, s in zip(values, steps)):
            return None
        by_id = {s.id: s for s in steps}
        settled = Settled(str(state["result"]), decode(state["trees"]), [by_id[i] for i in state["failed"]],
                          decode(state["dropped"]), decode(state["warnings"]))
    except (Unkept, KeyError, TypeError, AttributeError, RecursionError):     # (a file nested deeper than decode goes)
        return None
    if not isinstance(settled.trees, dict) or not isinstance(settled.dropped, list) or \
            not isinstance(settled.warnings, list):
        return None
    for step, value in zip(steps, values):
        for name, item in value.items():
            setattr(step, name, item)
    return settled


def names(state: dict[str, Any]) -> list[str]:
    """Every object STATE names (as `Git.keep_named` reads a report)."""
    return object_names(json.dumps(state))


def _decode_state(raw: object) -> dict | None:
    return raw if isinstance(raw, dict) else None


def _python() -> str:
    """The Python that composes, part of a plan's rule: the structured rule and the landing checks parse with its
    grammar (h270: a plan of Python 3.12, reused by 3.11, applied a PR resolved structurally whose merged file
    3.11 cannot parse)."""
    return f"{sys.implementation.name}{sys.version_info[0]}.{sys.version_info[1]}"


def checking() -> bool:
    """Whether a kept plan is composed again on use, and what is found compared (tests): `KeptPlans.check`, or
    the variable CARRYTOOL_CHECK_KEPT_PLANS=1 (for the commands tests run as processes)."""
    return KeptPlans.check or os.environ.get("CARRYTOOL_CHECK_KEPT_PLANS") == "1"


class KeptPlans(KeptAnswers[dict]):
    """Settled plans by key, in memory and (given FOLDER) on disk for git VERSION."""

    check = False

    def __init__(self, folder: Path | None, version: Sequence[int]) -> None:
        super().__init__(folder, "plans", version, f"{RULE}-{_python()}", _code(), PLANS_MAX, _decode_state,
                         lambda state: state)

    def key(self, manifest: Manifest, resolved: Resolved, switches: Sequence[object], git_dir: Path) -> str:
        """The key of MANIFEST's plan on RESOLVED, by a composer whose switches are SWITCHES, in the repository
        whose common git directory is GIT_DIR: where its history is cut (a shallow clone's `shallow` file, an
        `info/grafts`), merge bases are other ones, and a deepened clone's are others again."""
        inputs = {"upstream": resolved.upstream, "heads": resolved.heads, "commits": resolved.commits,
                  "patch_bases": resolved.patch_bases, "messages": resolved.messages, "missing": resolved.missing,
                  "passed_pins": resolved.passed_pins}
        cuts = []
        for name in ("shallow", "info/grafts"):
            try:
                cuts.append(hashlib.sha1((git_dir / name).read_bytes()).hexdigest())
            except OSError:
                cuts.append("")
        return self.digest(manifest.text, repr(manifest), json.dumps(inputs, sort_keys=True),
                           [str(s) for s in switches], cuts)
