"""Validating a manifest's `entries` (PRs and carries, their supersedes and drops) and what no two
entries may share (a PR superseded twice, a path owned twice); for build._Builder."""

from __future__ import annotations

from typing import Any

from carrytool.manifest import paths as pathlib_
from carrytool.manifest.build_keys import MAX_INT, _show
from carrytool.manifest.model import _NAME, Drop, Entry, Supersede, is_dotted
from carrytool.manifest.yamlload import YList, YMap


class _Entries:
    """`entries`: each entry, its supersedes and drops, and what no two entries may share (a mixin of
    build._Builder)."""

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


def _loose_id(item: Any) -> str:
    """Return the id an entry that did not validate was meant to have, when it says."""
    if isinstance(item, YMap) and isinstance(item.get("pr"), int):
        return f"pr/{item['pr']}"
    if isinstance(item, YMap) and isinstance(item.get("carry"), str):
        return f"carry/{item['carry']}"
    return ""
