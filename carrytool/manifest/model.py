"""The v1 manifest: frozen dataclasses, loaded and validated once; every error names key path and line.

The accepted keys are declared once, in `SCHEMA`; the validator (build.py) and `carrytool schema`
(JSON Schema) both read it, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from carrytool.asserts.spec import PATHS, AssertSpec
from carrytool.manifest.paths import matches

DEFAULT_MANIFEST = "carries/manifest.yaml"
ON_CONFLICT = ("fail", "skip")
ON_CONFLICT_ENTRY = ("fail", "skip", "theirs")
ON_MISSING = ("fail", "skip")
STACKED = ("whole", "own-commits")
_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def is_dotted(text: object) -> bool:
    """Whether TEXT is a dotted Python name (`Worker.wake_up`): each part an identifier as Python takes it,
    beyond ASCII too (helper-115: `Café.résumé` was refused)."""
    return isinstance(text, str) and all(part.isidentifier() for part in text.split("."))


def is_call_target(text: object) -> bool:
    """Whether TEXT is a call target: a dotted name that may say where a call sits in the chain
    (`get_pp_group().all_reduce`), and `*.suspend`, a method called on any receiver
    (`self._get_sleep_mode_backend().suspend()`)."""
    if not isinstance(text, str):
        return False
    parts = text.removeprefix("*.").split(".")
    return all(part.removesuffix("()").isidentifier() for part in parts)


def pr_id(text: str) -> str:
    """`pr/045398` as the manifest names it, `pr/45398` (a PR number's leading zeros are not part of it);
    any other text as it is."""
    number = text[3:] if text.startswith("pr/") else ""
    return f"pr/{number.lstrip('0') or '0'}" if number.isascii() and number.isdigit() else text


@dataclass(frozen=True)
class Key:
    """One accepted key of a manifest section: its type, whether it is required, and what it means."""

    name: str
    type: str            # str int bool sha url branch ref path pattern regex dotted name enum list map
    doc: str
    required: bool = False
    choices: tuple[str, ...] = ()
    items: str | None = None    # list item type, or the section a map/list-of-maps follows
    default: Any = None


SCHEMA: dict[str, tuple[Key, ...]] = {
    "manifest": (
        Key("version", "int", "Manifest format version; must be 1.", required=True, choices=("1",)),
        Key("upstream", "map", "The repository being forked.", required=True, items="upstream"),
        Key("fork", "map", "The fork: the branch sync writes and where commits come from.", required=True,
            items="fork"),
        Key("identity", "map", "Author/committer of composed commits.", items="identity"),
        Key("policy", "map", "Defaults for conflicts, missing PRs and precompiled paths.", items="policy"),
        Key("entries", "list", "What the fork carries, applied in this order.", items="entry", default=[]),
        Key("asserts", "list", "Hot-path assertions that must hold on the composed tree.", items="assert",
            default=[]),
    ),
    "upstream": (
        Key("url", "url", "Any git URL, or a local path (relative to the manifest's directory).",
            required=True),
        Key("branch", "branch", "The upstream branch the fork builds on.", default="main"),
        Key("pr_ref", "ref", "Where PR heads live; {number} is the PR number "
            "(GitLab: refs/merge-requests/{number}/head).", default="refs/pull/{number}/head"),
    ),
    "fork": (
        Key("url", "url", "Where `commit:` carries are fetched from and where --push goes."),
        Key("branch", "branch", "The branch sync writes.", required=True),
    ),
    "identity": (
        Key("name", "str", "Author and committer name of composed commits.", default="carrytool"),
        Key("email", "str", "Author and committer email of composed commits.", default="carrytool@localhost"),
    ),
    "policy": (
        Key("on_conflict", "enum", "What a conflicting entry does: fail (exit 3) or skip (reported).",
            choices=ON_CONFLICT, default="fail"),
        Key("on_missing", "enum", "What a PR whose ref vanished does: fail (exit 2) or skip (reason missing).",
            choices=ON_MISSING, default="fail"),
        Key("precompiled", "map", "Paths a precompiled build cannot take: PRs touching them are skipped.",
            items="precompiled"),
        Key("structured_merge", "map", "Python files whose conflicts may resolve structurally (both sides only "
            "inserted whole statements or items), verified before they are accepted.", items="structured_merge"),
        Key("stacked", "enum", "A PR built on an earlier PR's head whose whole change conflicts with it: whole (a "
            "conflict, as the plain merge chain) or own-commits (its own commits merged onto that head).",
            choices=STACKED, default="whole"),
    ),
    "structured_merge": (
        Key("paths", "list", "Path patterns of Python files (globs; `**` spans directories), e.g. \"**/*.py\"; "
            "per entry, [] turns it off.", required=True, items="pattern"),
    ),
    "precompiled": (
        Key("paths", "list", "Path patterns (globs; `**` spans directories).", required=True, items="pattern"),
    ),
    "entry": (
        Key("pr", "int", "An upstream pull request number (id pr/N)."),
        Key("carry", "name", "A fork-carried commit or patch (id carry/NAME)."),
        Key("title", "str", "For humans; used in the composed commit's message."),
        Key("head", "sha", "Pin a PR to this head (7 to 40 hex digits)."),
        Key("commit", "sha", "carry: the commit to carry (reachable from fork.url or already in the repo)."),
        Key("patch", "path", "carry: a format-patch file, relative to the manifest, applied 3-way."),
        Key("on_conflict", "enum", "Override: fail, skip, or theirs (resolve conflicting hunks for this entry).",
            choices=ON_CONFLICT_ENTRY),
        Key("on_missing", "enum", "Override of policy.on_missing for this PR.", choices=ON_MISSING),
        Key("enabled", "bool", "false: skipped with reason disabled.", default=True),
        Key("supersedes", "list", "carry: the PRs this entry provides (N, or {pr, head, paths}).",
            items="supersede"),
        Key("owns", "list", "No other applied entry may change these paths.", items="pattern"),
        Key("excludes", "list", "This entry must not touch these paths.", items="pattern"),
        Key("structured_merge", "map", "Override of policy.structured_merge for this entry's conflicts.",
            items="structured_merge"),
    ),
    "supersede": (
        Key("pr", "int", "The PR number provided by this carry.", required=True),
        Key("head", "sha", "The PR head folded into the carry (enables the stale-fold warning)."),
        Key("paths", "list", "Partial: only these paths come from the carry; the rest of the PR applies.",
            items="pattern"),
        Key("drops", "list", "Hunks of the PR the carry leaves out on purpose ({file, in, why}): not warned "
            "provided-absent, shown with their why.", items="drop"),
    ),
    "drop": (
        Key("file", "path", "The PR's file(s) whose left-out hunks are dropped on purpose (a path pattern).",
            required=True),
        Key("in", "dotted", "Scope: only hunks within this def/class (Class.method, function; nested ones "
            "count). Default: every hunk of the file."),
        Key("why", "str", "Why the carry leaves these hunks out: shown by sync and in the report.", required=True),
    ),
    "assert": (
        Key("name", "str", "Unique name; default derived from the check."),
        Key("file", "path", "The file the assertion reads, in the composed tree.", required=True),
        Key("in", "dotted", "Scope: Class.method, function, Outer.Inner.method (default: whole module)."),
        Key("entry", "entry", "The entry this assertion guards (pr/N or carry/NAME, or a bare PR number or "
            "carry name)."),
        Key("why", "str", "Shown on failure."),
        Key("defines", "dotted", "The qualified name is defined (function, async function or class)."),
        Key("mentions", "dotted", "The name is used as an identifier in the scope."),
        Key("reads", "dotted", "The name's value is read in the scope (not only a parameter or an assignment target)."),
        Key("calls", "call", "The call target is called (on some path; with times/min/max on every path)."),
        Key("not_calls", "call", "The call target is not called anywhere inside the scope."),
        Key("order", "list", "Each call comes after every earlier one on every path (dominance).",
            items="call"),
        Key("contains", "str", "Text check: the file (or scope) contains TEXT."),
        Key("absent", "str", "Text check: the file (or scope) does not contain TEXT."),
        Key("matches", "regex", "Text check: a regular expression finds a match (multiline)."),
        Key("times", "int", "calls: exactly N on every path."),
        Key("min", "int", "calls: at least N on every path."),
        Key("max", "int", "calls: at most N on every path."),
        Key("guarded_by", "dotted", "calls: every call sits in the true branch of an if mentioning NAME."),
        Key("paths", "enum", "calls with times/min/max: judge all paths, or only the returning ones (ending by "
            "return or falling off the end, not raise).", choices=PATHS, default="all"),
        Key("through", "enum", "calls/not_calls/order: `local` also follows calls into functions and methods "
            "defined in the same file (bounded depth, no dynamic dispatch).", choices=("local",)),
        Key("args", "map", "calls/not_calls: only calls whose arguments (keyword names, or positions 0, 1, ...) "
            "end with these dotted names count, e.g. {op: ReduceOp.MIN, group: cpu_group}.", items="args"),
        Key("after", "list", "calls: no call of these targets can run once the target was called (it comes "
            "after them, e.g. a synchronize after the re-map loop).", items="call"),
        Key("in_try", "bool", "calls: true, some call of the target sits in the body of a try with an except "
            "handler; false, none does."),
    ),
}


@dataclass(frozen=True)
class Upstream:
    url: str
    branch: str = "main"
    pr_ref: str = "refs/pull/{number}/head"

    def pr_ref_for(self, number: int) -> str:
        return self.pr_ref.replace("{number}", str(number))


@dataclass(frozen=True)
class Fork:
    branch: str
    url: str | None = None


@dataclass(frozen=True)
class Identity:
    name: str = "carrytool"
    email: str = "carrytool@localhost"


@dataclass(frozen=True)
class Policy:
    on_conflict: str = "fail"
    on_missing: str = "fail"
    precompiled: tuple[str, ...] = ()
    structured_merge: tuple[str, ...] = ()
    stacked: str = "whole"


@dataclass(frozen=True)
class Drop:
    """A PR's hunks a union leaves out on purpose: those in FILE (a pattern), within SCOPE when given."""

    file: str
    why: str
    scope: str | None = None
    line: int = 0

    def covers(self, path: str, scopes: tuple[str, ...], *, module: bool = False) -> bool:
        """Whether a hunk at PATH, in the def/classes SCOPES (none: module level), is one of these: in a
        matching file and, with a scope, every def/class it lies in is the scope or nested under it, and no
        line of it at module level (MODULE; a whole file is)."""
        if not matches(self.file, path):
            return False
        if self.scope is None:
            return True
        return bool(scopes) and not module and all(s == self.scope or s.startswith(self.scope + ".") for s in scopes)

    def describe(self) -> str:
        return self.file + (f" in {self.scope}" if self.scope else "")


@dataclass(frozen=True)
class Supersede:
    pr: int
    head: str | None = None
    paths: tuple[str, ...] = ()     # empty: the whole PR
    line: int = 0
    drops: tuple[Drop, ...] = ()

    @property
    def partial(self) -> bool:
        return bool(self.paths)


@dataclass(frozen=True)
class Entry:
    kind: str                       # "pr" | "carry"
    number: int | None = None
    name: str | None = None
    title: str | None = None
    head: str | None = None
    commit: str | None = None
    patch: str | None = None
    on_conflict: str | None = None
    on_missing: str | None = None
    enabled: bool = True
    supersedes: tuple[Supersede, ...] = ()
    owns: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    structured_merge: tuple[str, ...] | None = None    # None: the policy's
    line: int = 0
    index: int = 0

    @property
    def id(self) -> str:
        return f"pr/{self.number}" if self.kind == "pr" else f"carry/{self.name}"


@dataclass(frozen=True)
class Manifest:
    path: Path
    upstream: Upstream
    fork: Fork
    identity: Identity = Identity()
    policy: Policy = Policy()
    entries: tuple[Entry, ...] = ()
    asserts: tuple[AssertSpec, ...] = ()
    version: int = 1
    text: str = field(default="", repr=False, compare=False)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def entry(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    @cached_property
    def _by_id(self) -> dict[str, Entry]:
        """Entry id -> the first entry of that id (explain asks thousands of times: a walk each was 30 ms on 60 PRs)."""
        out: dict[str, Entry] = {}
        for entry in self.entries:
            out.setdefault(entry.id, entry)
        return out

    def find_entry(self, text: str) -> Entry | None:
        """Look an entry up by id (`pr/45612`, `carry/NAME`), bare PR number or bare carry name."""
        text = text.strip()
        for candidate in (pr_id(text), pr_id(f"pr/{text}"), f"carry/{text}"):
            entry = self.entry(candidate)
            if entry:
                return entry
        return None

    def on_conflict(self, entry: Entry) -> str:
        return entry.on_conflict or self.policy.on_conflict

    def structured_paths(self, entry: Entry) -> tuple[str, ...]:
        """The path patterns whose conflicts ENTRY may resolve structurally (empty: none)."""
        return self.policy.structured_merge if entry.structured_merge is None else entry.structured_merge

    def on_missing(self, entry: Entry) -> str:
        return entry.on_missing or self.policy.on_missing
