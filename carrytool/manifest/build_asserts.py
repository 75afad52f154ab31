"""Validating a manifest's `asserts`: one check each, its target and modifiers, the entry it names, and
its name (given, or made from the check, unique); for build._Builder."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from carrytool.asserts.calltarget import constant_name
from carrytool.asserts.spec import CHECKS, AssertSpec
from carrytool.manifest import paths as pathlib_
from carrytool.manifest.build_keys import _show
from carrytool.manifest.model import Entry, is_call_target, is_dotted, pr_id
from carrytool.manifest.yamlload import YMap

TEXT_CHECKS = ("contains", "absent", "matches")
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")


class _Asserts:
    """`asserts`: each assert's check, target and modifiers, and its name (a mixin of build._Builder)."""

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
        self.check_python_file(data, keypath, check)
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

    def check_python_file(self, data: YMap, keypath: str, check: str) -> None:
        """A check that reads Python's syntax tree (every one but the text checks, and `in:` for those) on a
        file whose suffix says it is not Python is refused: it fails every verify with a syntax error (h258:
        `defines:` on a Rust file of pola-rs/polars passed check; verify said "run carrytool with a newer
        Python"). A file without a suffix may be a Python script: it is taken."""
        key = check if check not in TEXT_CHECKS else "in" if "in" in data else None
        suffix = PurePosixPath(data["file"]).suffix.lower()
        if key is None or not suffix or suffix in PYTHON_SUFFIXES:
            return
        raise self.fail(f"{keypath}.{key}", data.key_lines[key],
                        f"{data['file']} is not a Python file: '{key}' reads Python's syntax tree",
                        hint="for other files (Rust, C++, YAML, ...) use a text check on the whole file: "
                             "contains, absent or matches")

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
