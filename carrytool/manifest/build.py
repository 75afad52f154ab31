"""Validation of a manifest document, key by key: every error names its key path and line.

The keys themselves are declared in manifest.SCHEMA; this module checks values against it and builds
the frozen dataclasses of model.py. It reports every error in one pass: each section, entry and assert
is validated on its own (the first error inside one stops only that one), and the errors are raised
together as one ManifestError.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from carrytool.asserts.calltarget import constant_name
from carrytool.asserts.spec import CHECKS, AssertSpec
from carrytool.errors import ManifestError
from carrytool.gitlayer.urls import refname_problem, url_problem
from carrytool.manifest import paths as pathlib_
from carrytool.manifest.model import (
    _HEX,
    _NAME,
    SCHEMA,
    Drop,
    Entry,
    Fork,
    Identity,
    Key,
    Manifest,
    Policy,
    Supersede,
    Upstream,
    is_call_target,
    is_dotted,
    pr_id,
)
from carrytool.manifest.yamlload import YList, YMap

T = TypeVar("T")
MAX_INT = 2**63 - 1     # PR numbers and counts: what every forge and git can hold


def build_manifest(data: Any, text: str, path: Path) -> Manifest:
    """Validate the YAML DATA read from PATH and build the Manifest."""
    return _Builder(path).build(data, text)


class _Builder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[ManifestError] = []
        self.failed_ids: set[str] = set()   # ids of entries that did not validate: asserts may still name them

    def collect(self, build: Callable[[], T]) -> T | None:
        """Validate one independent part; record its errors (None) and let the caller go on."""
        try:
            return build()
        except ManifestError as exc:
            self.errors += exc.errors
            return None

    # -- error helpers ---------------------------------------------------------------------------------
    def fail(self, keypath: str, line: int | None, message: str, hint: str | None = None) -> ManifestError:
        where = f"{self.path}:{line}" if line else str(self.path)
        return ManifestError(f"{keypath}: {message}" if keypath else message, where=where, hint=hint)

    def section(self, data: Any, name: str, keypath: str, line: int | None) -> YMap:
        problems = self.section_problems(data, name, keypath, line)
        if problems:
            raise ManifestError.of([error for _, error in problems])
        return data

    def section_problems(self, data: Any, name: str, keypath: str,
                         line: int | None) -> list[tuple[str, ManifestError]]:
        """Return every (key, error) of a mapping: unknown keys, missing required keys, wrong types."""
        if not isinstance(data, YMap):
            return [("", self.fail(keypath, getattr(data, "line", line), f"must be a mapping, got {_kind(data)}"))]
        keys = {k.name: k for k in SCHEMA[name]}
        problems: list[tuple[str, ManifestError]] = []
        for key in data:
            if key not in keys:
                close = difflib.get_close_matches(key, list(keys), n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(keys)}"
                problems.append((key, self.fail(_join(keypath, key), data.key_lines[key], f"unknown key '{key}'",
                                                hint)))
        for key in keys.values():
            if key.required and key.name not in data:
                problems.append((key.name, self.fail(_join(keypath, key.name), data.line,
                                                     f"is required (in {keypath or 'the manifest'})")))
        for key, value in data.items():
            if key in keys:
                try:
                    self.check_type(keys[key], value, _join(keypath, key), data.key_lines[key], data.raw.get(key))
                except ManifestError as exc:
                    problems.append((key, exc))
        return problems

    def check_type(self, key: Key, value: Any, keypath: str, line: int, raw: str | None) -> None:
        expected = {"int": "an integer", "bool": "true or false", "map": "a mapping", "list": "a list"}
        if key.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(keypath, line, f"must be {expected['int']}, got {_show(value, raw)}")
            if value < 0:
                raise self.fail(keypath, line, f"must not be negative, got {value}")
            if value > MAX_INT:
                raise self.fail(keypath, line, f"is too large ({len(str(value))} digits; at most {MAX_INT})")
        elif key.type == "bool":
            if not isinstance(value, bool):
                raise self.fail(keypath, line, f"must be {expected['bool']}, got {_show(value, raw)}")
        elif key.type == "map":
            if not isinstance(value, YMap):
                raise self.fail(keypath, line, f"must be {expected['map']}, got {_kind(value)}")
        elif key.type == "list":
            if not isinstance(value, YList):
                raise self.fail(keypath, line, f"must be {expected['list']}, got {_kind(value)}")
        elif key.type == "entry":      # `entry: 14260` is read as a number by YAML (helper-91: refused)
            # a number as written in decimal digits (helper-93: 0x1F read as pr/31, 010 as pr/8)
            text = raw if raw is not None and isinstance(value, int) else str(value)
            if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip() \
                    or (isinstance(value, int) and not re.fullmatch(r"[0-9]+", text)):
                raise self.fail(keypath, line, f"must be an entry (pr/N, carry/NAME, or a bare PR number in decimal "
                                               f"digits or carry name), got {_show(value, raw)}")
        elif key.type == "sha":
            text = raw if raw is not None and not isinstance(value, str) else value
            if not isinstance(text, (str, int)) or isinstance(text, bool) or not _HEX.match(str(text)):
                raise self.fail(keypath, line, f"must be a commit SHA of 7 to 40 hex digits, got {_show(value, raw)}")
        else:
            if not isinstance(value, str):
                raise self.fail(keypath, line, f"must be a string, got {_show(value, raw)}")
            if key.type == "enum" and value not in key.choices:
                raise self.fail(keypath, line, f"must be one of {', '.join(key.choices)}, got '{value}'")
            if key.type in ("str", "name", "dotted", "call", "regex") and not value.strip():
                # (helper-115: an empty `matches` passed check: an empty expression matches every file)
                raise self.fail(keypath, line, "must not be empty", hint="write the text or expression the file "
                                "must have" if keypath.rsplit(".", 1)[-1] in ("contains", "absent", "matches") else None)

    def text_value(self, data: YMap, key: str) -> str | None:
        """A sha-like value as text, even when YAML read digits as a number."""
        if key not in data:
            return None
        value = data[key]
        return (value if isinstance(value, str) else data.raw.get(key, str(value))).lower()

    # -- sections -------------------------------------------------------------------------------------
    def build(self, data: Any, text: str) -> Manifest:
        if data is None:
            raise self.fail("", 1, "the manifest is empty", hint="start from docs/manifest.md")
        if not isinstance(data, YMap):
            self.section(data, "manifest", "", 1)
        top: YMap = data
        problems = self.section_problems(top, "manifest", "", 1)
        self.errors += [error for _, error in problems]
        bad = {key for key, _ in problems}

        def part(key: str, build: Callable[[Any], T], default: Any = None) -> T | None:
            if key in bad:
                return None
            return self.collect(lambda: build(top.get(key, default)))

        if "version" not in bad and top["version"] != 1:
            self.errors.append(self.fail("version", top.key_lines["version"], f"unsupported version "
                                         f"{top['version']}; this carrytool reads version 1"))
        upstream = part("upstream", self.upstream)
        fork = part("fork", self.fork)
        identity = part("identity", self.identity)
        policy = part("policy", self.policy)
        entries = part("entries", lambda items: self.entries(items, top), YList()) or ()
        asserts = part("asserts", lambda items: self.asserts(items, top, entries), YList()) or ()
        if self.errors:
            raise ManifestError.of(self.errors)
        assert upstream and fork and identity and policy  # each is built, or an error was recorded
        return Manifest(self.path, upstream, fork, identity, policy, entries, asserts, 1, text)

    def upstream(self, data: Any) -> Upstream:
        data = self.section(data, "upstream", "upstream", None)
        url = self.url(data, "upstream")
        branch = self.branch(data, "upstream")
        pr_ref = data.get("pr_ref", "refs/pull/{number}/head")
        line = data.key_lines.get("pr_ref", data.line)
        if pr_ref.count("{number}") != 1 or re.search(r"[{}]", pr_ref.replace("{number}", "")):
            raise self.fail("upstream.pr_ref", line, f"must contain {{number}} exactly once, got '{pr_ref}'",
                            hint="GitHub: refs/pull/{number}/head; GitLab: refs/merge-requests/{number}/head")
        sample = pr_ref.replace("{number}", "1")
        problem = refname_problem(sample)
        if problem or not sample.startswith("refs/"):
            raise self.fail("upstream.pr_ref", line, f"is not a valid ref under refs/: {problem or pr_ref}")
        return Upstream(url, branch, pr_ref)

    def fork(self, data: Any) -> Fork:
        data = self.section(data, "fork", "fork", None)
        url = self.url(data, "fork") if "url" in data else None
        return Fork(self.branch(data, "fork"), url)

    def url(self, data: YMap, keypath: str) -> str:
        url = data["url"]
        problem = url_problem(url)
        if problem:
            raise self.fail(f"{keypath}.url", data.key_lines["url"], f"refused: {problem}")
        return url

    def branch(self, data: YMap, keypath: str) -> str:
        branch = data.get("branch", "main")
        if branch.startswith("refs/"):
            branch = branch[len("refs/heads/"):] if branch.startswith("refs/heads/") else branch
        problem = refname_problem(branch, branch=True)
        if problem:
            raise self.fail(f"{keypath}.branch", data.key_lines.get("branch", data.line),
                            f"is not a valid branch name: {problem}")
        return branch

    def identity(self, data: Any) -> Identity:
        if data is None:
            return Identity()
        data = self.section(data, "identity", "identity", None)
        values = {}
        for key in ("name", "email"):
            if key in data:
                if re.search(r"[<>\n\r\0]", data[key]):
                    raise self.fail(f"identity.{key}", data.key_lines[key], "must not contain <, > or newlines")
                values[key] = data[key].strip()
        return Identity(**values)

    def policy(self, data: Any) -> Policy:
        if data is None:
            return Policy()
        data = self.section(data, "policy", "policy", None)
        precompiled: tuple[str, ...] = ()
        if "precompiled" in data:
            pre = self.section(data["precompiled"], "precompiled", "policy.precompiled", data.key_lines["precompiled"])
            precompiled = self.patterns(pre["paths"], "policy.precompiled.paths")
        structured = self.structured_merge(data, "policy") if "structured_merge" in data else ()
        return Policy(data.get("on_conflict", "fail"), data.get("on_missing", "fail"), precompiled, structured,
                      data.get("stacked", "whole"))

    def structured_merge(self, data: YMap, keypath: str) -> tuple[str, ...]:
        section = self.section(data["structured_merge"], "structured_merge", f"{keypath}.structured_merge",
                               data.key_lines["structured_merge"])
        return self.patterns(section["paths"], f"{keypath}.structured_merge.paths")

    def patterns(self, items: YList, keypath: str) -> tuple[str, ...]:
        out = []
        for i, item in enumerate(items):
            line = items.item_lines[i]
            if not isinstance(item, str):
                raise self.fail(f"{keypath}[{i}]", line, f"must be a path, got {_kind(item)}")
            problem = pathlib_.glob_problem(item)
            if problem:
                raise self.fail(f"{keypath}[{i}]", line, f"refused: {problem}")
            out.append(pathlib_.normalize(item))
        return tuple(out)

    def entries(self, items: Any, top: YMap) -> tuple[Entry, ...]:
        if items is None:
            return ()
        out: list[Entry] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            entry = self.collect(lambda: self.entry(item, f"entries[{i}]", items.item_lines[i], i))
            if entry is None:
                self.failed_ids.add(_loose_id(item))
                continue
            if entry.id in seen:
                self.errors.append(self.fail(f"entries[{i}]", entry.line, f"duplicate entry {entry.id} "
                                             f"(first at line {seen[entry.id]})"))
                continue
            seen[entry.id] = entry.line
            out.append(entry)
        self.check_supersessions(out)
        self.check_owners(out)
        return tuple(out)

    def entry(self, data: Any, keypath: str, line: int, index: int) -> Entry:
        data = self.section(data, "entry", keypath, line)
        kinds = [k for k in ("pr", "carry") if k in data]
        if len(kinds) != 1:
            raise self.fail(keypath, data.line, "an entry needs exactly one of 'pr: N' or 'carry: NAME'"
                            + (", got both" if len(kinds) == 2 else ""))
        kind = kinds[0]
        values: dict[str, Any] = {"kind": kind, "line": data.line, "index": index}
        if kind == "pr":
            values["number"] = data["pr"]
            if data["pr"] < 1:
                raise self.fail(f"{keypath}.pr", data.key_lines["pr"], f"must be a PR number above 0, got {data['pr']}")
            for key in ("commit", "patch", "supersedes"):
                if key in data:
                    raise self.fail(f"{keypath}.{key}", data.key_lines[key], f"'{key}' belongs to a carry entry, "
                                    "not a PR", hint="use 'carry: NAME' for fork-carried commits and unions")
        else:
            name = data["carry"]
            if not _NAME.match(name):
                raise self.fail(f"{keypath}.carry", data.key_lines["carry"], f"'{name}' is not a valid carry name "
                                "(letters, digits, '.', '_', '-'; not starting with '.' or '-')")
            values["name"] = name
            sources = [k for k in ("commit", "patch") if k in data]
            if len(sources) != 1:
                raise self.fail(keypath, data.line, f"carry/{name} needs exactly one of 'commit' or 'patch'")
            if "head" in data:
                raise self.fail(f"{keypath}.head", data.key_lines["head"], "'head' pins a PR; a carry names its "
                                "'commit'")
            if "commit" in data:
                values["commit"] = self.text_value(data, "commit")
            else:
                patch = data["patch"]
                problem = pathlib_.path_problem(patch)
                if problem:
                    raise self.fail(f"{keypath}.patch", data.key_lines["patch"], f"refused: {problem}")
                values["patch"] = patch
            values["supersedes"] = self.supersedes(data.get("supersedes", YList()), f"{keypath}.supersedes")
        for key in ("on_conflict", "on_missing", "enabled"):
            if key in data:
                values[key] = data[key]
        if "title" in data:
            values["title"] = " ".join(data["title"].split())
        if "head" in data:
            values["head"] = self.text_value(data, "head")
        for key in ("owns", "excludes"):
            if key in data:
                values[key] = self.patterns(data[key], f"{keypath}.{key}")
        if "structured_merge" in data:
            values["structured_merge"] = self.structured_merge(data, keypath)
        entry = Entry(**values)
        clash = [p for p in entry.owns if any(pathlib_.matches(x, p) or pathlib_.matches(p, x) for x in entry.excludes)]
        if clash:
            raise self.fail(f"{keypath}.excludes", data.key_lines.get("excludes", data.line),
                            f"{entry.id} both owns and excludes {clash[0]}")
        return entry

    def supersedes(self, items: YList, keypath: str) -> tuple[Supersede, ...]:
        out: list[Supersede] = []
        for i, item in enumerate(items):
            line = items.item_lines[i]
            if isinstance(item, YMap):
                self.section(item, "supersede", f"{keypath}[{i}]", line)
                paths = self.patterns(item["paths"], f"{keypath}[{i}].paths") if "paths" in item else ()
                if "paths" in item and not paths:
                    raise self.fail(f"{keypath}[{i}].paths", line, "must list at least one path (omit it to "
                                    "supersede the whole PR)")
                drops = self.drops(item["drops"], f"{keypath}[{i}].drops", paths) if "drops" in item else ()
                sup = Supersede(item["pr"], self.text_value(item, "head"), paths, line, drops)
            elif isinstance(item, int) and not isinstance(item, bool) and 0 <= item <= MAX_INT:
                sup = Supersede(item, None, (), line)
            else:
                raise self.fail(f"{keypath}[{i}]", line, f"must be a PR number or {{pr, head, paths, drops}}, got "
                                f"{_show(item, items.raw[i])}")
            if any(s.pr == sup.pr for s in out):
                raise self.fail(f"{keypath}[{i}]", line, f"pr/{sup.pr} is listed twice")
            out.append(sup)
        return tuple(out)

    def drops(self, items: YList, keypath: str, paths: tuple[str, ...]) -> tuple[Drop, ...]:
        """A supersedes item's `drops`: each {file, in, why}; a file its PATHS (a partial item's) cannot reach is
        refused, as is a drop listed twice."""
        out: list[Drop] = []
        for i, item in enumerate(items):
            where, line = f"{keypath}[{i}]", items.item_lines[i]
            data = self.section(item, "drop", where, line)
            file_line = data.key_lines["file"]
            problem = pathlib_.glob_problem(data["file"])
            if problem:
                raise self.fail(f"{where}.file", file_line, f"refused: {problem}")
            file = pathlib_.normalize(data["file"])
            if paths and not any(pathlib_.matches(p, file) or pathlib_.matches(file, p) for p in paths):
                raise self.fail(f"{where}.file", file_line, f"{file} is not among this PR's paths ({', '.join(paths)}):"
                                " the union provides nothing of it to drop", hint="name a file under its `paths`")
            scope = data.get("in")
            if scope is not None and not is_dotted(scope):
                raise self.fail(f"{where}.in", data.key_lines["in"], f"'{scope}' is not a dotted Python name "
                                "(Class.method, function)")
            drop = Drop(file, " ".join(data["why"].split()), scope, data.line)
            twice = next((d for d in out if (d.file, d.scope) == (drop.file, drop.scope)), None)
            if twice is not None:
                raise self.fail(where, data.line, f"drops {drop.describe()} twice (first at line {twice.line})",
                                hint="keep one, with both reasons in its why")
            out.append(drop)
        return tuple(out)

    def check_supersessions(self, entries: list[Entry]) -> None:
        """A PR is provided whole by at most one carry, and no path of it by two."""
        claims: dict[int, list[tuple[Entry, Supersede]]] = {}
        for entry in entries:
            for sup in entry.supersedes:
                for other_entry, other in claims.get(sup.pr, []):
                    overlap = (not sup.partial or not other.partial
                               or any(pathlib_.matches(a, b) or pathlib_.matches(b, a)
                                      for a in sup.paths for b in other.paths))
                    if overlap and entry.enabled and other_entry.enabled:
                        self.errors.append(self.fail(
                            f"entries[{entry.index}].supersedes", sup.line,
                            f"pr/{sup.pr} is superseded by both {other_entry.id} (line {other.line}) and {entry.id} "
                            "for the same paths", hint="give each union its own 'paths', or keep one union"))
                        break
                claims.setdefault(sup.pr, []).append((entry, sup))

    def check_owners(self, entries: list[Entry]) -> None:
        """No path is owned by two enabled entries (an index keeps this near linear in the patterns)."""
        owners: pathlib_.PatternIndex[Entry] = pathlib_.PatternIndex()
        for entry in entries:
            if not entry.enabled:
                continue
            for pattern in entry.owns:
                found = owners.first_overlap(pattern)
                if found is not None:
                    self.errors.append(self.fail(f"entries[{entry.index}].owns", entry.line,
                                                 f"{entry.id} and {found[1].id} both own {pattern}"))
                owners.add(pattern, entry)

    def asserts(self, items: Any, top: YMap, entries: tuple[Entry, ...]) -> tuple[AssertSpec, ...]:
        out: list[AssertSpec] = []
        names: dict[str, int] = {}
        ids = {e.id for e in entries} | self.failed_ids
        for i, item in enumerate(items or ()):
            keypath = f"asserts[{i}]"
            data = self.collect(lambda: self.section(item, "assert", keypath, items.item_lines[i]))
            spec = self.collect(lambda: self.assert_spec(data, keypath, ids)) if data is not None else None
            if data is None or spec is None:
                continue
            name = spec.name
            if name in names:
                if "name" in data:
                    self.errors.append(self.fail(f"{keypath}.name", data.key_lines["name"],
                                                 f"duplicate assert name '{name}' (first at line {names[name]})"))
                    continue
                n = 2
                while f"{name}#{n}" in names:
                    n += 1
                name = f"{name}#{n}"
                spec = AssertSpec(**{**spec.__dict__, "name": name})
            names[name] = data.line
            out.append(spec)
        return tuple(out)

    def assert_spec(self, data: YMap, keypath: str, ids: set[str]) -> AssertSpec:
        checks = [k for k in CHECKS if k in data]
        if len(checks) != 1:
            found = ", ".join(checks) or "none"
            raise self.fail(keypath, data.line, f"an assert needs exactly one check key ({', '.join(CHECKS)}); "
                            f"found {found}")
        check = checks[0]
        line = data.key_lines[check]
        file_problem = pathlib_.path_problem(data["file"])
        if file_problem:
            raise self.fail(f"{keypath}.file", data.key_lines["file"], f"refused: {file_problem}")
        target: str | tuple[str, ...] = data[check]
        if check == "order":
            if len(target) < 2 or not all(isinstance(t, str) and is_call_target(t) for t in target):
                raise self.fail(f"{keypath}.order", line, "must list at least two call targets (dotted names)")
            twice = repeated(target)
            if twice:
                # (helper-115: `order: [a, a]` passed check and failed every verify)
                raise self.fail(f"{keypath}.order", line, f"lists {twice} twice: a call cannot come after itself, so "
                                "the assert can never hold", hint=f"keep one {twice}; for how many times it is called, "
                                f"use `calls: {twice}` with `times`, `min` or `max`")
            target = tuple(target)
        elif check in ("defines", "mentions", "reads") and not is_dotted(target):
            raise self.fail(f"{keypath}.{check}", line, f"'{target}' is not a dotted Python name")
        elif check in ("calls", "not_calls") and not is_call_target(target):
            raise self.fail(f"{keypath}.{check}", line, f"'{target}' is not a call target (a dotted name, "
                            "optionally with () where the chain calls: get_pp_group().all_reduce)")
        elif check == "matches":
            try:
                pattern = re.compile(target, re.MULTILINE)
            except re.error as exc:
                raise self.fail(f"{keypath}.matches", line, f"invalid regular expression: {exc}") from None
            if pattern.search(""):
                # it finds a match in any text, so the assert can never fail (helper-115)
                raise self.fail(f"{keypath}.matches", line, f"'{target}' matches the empty text, so it holds on every "
                                "file", hint="make a part the line must have required (not optional: no `?`, `*` or "
                                "empty alternative around all of it)")
        for key in ("in", "guarded_by"):
            if key in data and not is_dotted(data[key]):
                raise self.fail(f"{keypath}.{key}", data.key_lines[key], f"'{data[key]}' is not a dotted Python name")
        self.check_call_modifiers(data, keypath, check)
        modifiers = [k for k in ("times", "min", "max", "guarded_by", "paths") if k in data]
        if modifiers and check != "calls":
            raise self.fail(f"{keypath}.{modifiers[0]}", data.key_lines[modifiers[0]],
                            f"'{modifiers[0]}' only goes with 'calls'")
        if data.get("paths", "all") != "all" and not any(k in data for k in ("times", "min", "max")):
            raise self.fail(f"{keypath}.paths", data.key_lines["paths"],
                            "'paths: returning' needs 'times', 'min' or 'max' (it says which paths they judge)")
        if "times" in data and ("min" in data or "max" in data):
            raise self.fail(f"{keypath}.times", data.key_lines["times"], "use either 'times' or 'min'/'max'")
        if "min" in data and "max" in data and data["min"] > data["max"]:
            raise self.fail(f"{keypath}.min", data.key_lines["min"], f"min {data['min']} is above max {data['max']}")
        entry = data.get("entry")
        if entry is not None:
            entry = data.raw.get("entry", str(entry)) if isinstance(entry, int) else entry
            # leading zeros go as digits (pr_id), not through int(): no limit on length (helper-94: 5,000 nines
            # crashed)
            entry = pr_id(entry if "/" in entry else
                          f"pr/{entry}" if entry.isascii() and entry.isdigit() else f"carry/{entry}")
            if entry not in ids:
                raise self.fail(f"{keypath}.entry", data.key_lines["entry"], f"no entry {entry} in this manifest")
        name = data.get("name") or _default_name(check, target, data.get("in"), data["file"])
        return AssertSpec(
            name=name, file=pathlib_.normalize(data["file"]), check=check, target=target, scope=data.get("in"),
            times=data.get("times"), min=data.get("min"), max=data.get("max"), guarded_by=data.get("guarded_by"),
            paths=data.get("paths", "all"), why=data.get("why"), entry=entry, line=data.line,
            through=data.get("through"), args=_args(data["args"]) if "args" in data else None,
            after=tuple(data["after"]) if "after" in data else None, in_try=data.get("in_try"))

    def check_call_modifiers(self, data: YMap, keypath: str, check: str) -> None:
        """`through`, `args`, `after`, `in_try`: where each may go, and the shape of their values."""
        allowed = {"through": ("calls", "not_calls", "order"), "args": ("calls", "not_calls"),
                   "after": ("calls",), "in_try": ("calls",)}
        for key, checks in allowed.items():
            if key in data and check not in checks:
                raise self.fail(f"{keypath}.{key}", data.key_lines[key],
                                f"'{key}' only goes with {' or '.join(repr(c) for c in checks)}")
        if "after" in data and (not data["after"] or not all(isinstance(t, str) and is_call_target(t)
                                                                for t in data["after"])):
            raise self.fail(f"{keypath}.after", data.key_lines["after"], "must list call targets (dotted names)")
        for name, value in (data.get("args") or {}).items():
            name_ok = (isinstance(name, int) and not isinstance(name, bool) and name >= 0) or (
                isinstance(name, str) and (name.isidentifier() or name.isdigit()))
            if name_ok and not isinstance(value, str) and constant_name(value) is None:
                # (helper-115: `{n: 3}` said "must name a dotted name" and no more)
                raise self.fail(f"{keypath}.args.{name}", data.key_lines["args"],
                                f"got {_show(value, None)}: a value is a dotted name its argument ends with "
                                "(op: ReduceOp.MIN) or one of true, false or null (the constants True, False, None)")
            if not name_ok or (isinstance(value, str) and not is_dotted(value)):
                raise self.fail(f"{keypath}.args.{name}", data.key_lines["args"],
                                f"'{name}: {value}' must name an argument (a keyword, or a position 0, 1, ...) "
                                "and a dotted name its value ends with, e.g. op: ReduceOp.MIN")
        if "args" in data and not data["args"]:
            raise self.fail(f"{keypath}.args", data.key_lines["args"], "must name at least one argument")


def _args(args: YMap) -> tuple[tuple[str | int, str], ...]:
    """ARGS as the spec holds them: YAML's true, false and null as the constants' names (helper-115: `polar:
    True` was refused though True compares as the constant)."""
    return tuple((key, value if isinstance(value, str) else constant_name(value) or str(value))
                 for key, value in args.items())


def repeated(names: list[str] | tuple[str, ...]) -> str | None:
    """The first name NAMES lists twice (as written, spaces aside), or None."""
    seen: set[str] = set()
    for name in names:
        if name.strip() in seen:
            return name.strip()
        seen.add(name.strip())
    return None


def _default_name(check: str, target: str | tuple[str, ...], scope: str | None, file: str) -> str:
    shown = " < ".join(target) if isinstance(target, tuple) else target
    if check in ("contains", "absent", "matches") and len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{check} {shown} in {scope or file}"


def _loose_id(item: Any) -> str:
    """Return the id an entry that did not validate was meant to have, when it says."""
    if isinstance(item, YMap) and isinstance(item.get("pr"), int):
        return f"pr/{item['pr']}"
    if isinstance(item, YMap) and isinstance(item.get("carry"), str):
        return f"carry/{item['carry']}"
    return ""


def _join(keypath: str, key: str) -> str:
    return f"{keypath}.{key}" if keypath else key


def _kind(value: Any) -> str:
    if isinstance(value, YMap) or isinstance(value, dict):
        return "a mapping"
    if isinstance(value, YList) or isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"


def _show(value: Any, raw: str | None) -> str:
    if isinstance(value, (YMap, YList, dict, list)) or value is None:
        return _kind(value)
    text = repr(raw if raw is not None else value)
    return text if len(text) <= 60 else text[:57] + "..."
