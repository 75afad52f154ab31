"""The whole-file gates of the structured merge (pipeline.structured): the resolved file is refused when a
name would be bound twice, an added line gives a dict key twice, spreads a dict or imports `*`, a line a
side added is lost, or the other order gives other definitions."""

from __future__ import annotations

import ast
import bisect
from collections import Counter

from carrytool.pipeline import pyparts
from carrytool.pipeline.structured_segments import _assemble, _Conflict, split_lines

# -- whole-file gates --------------------------------------------------------------------------------

def _gates(base: bytes, ours: bytes, theirs: bytes, lines: list[bytes], segments,  # noqa: ANN001
           parsed: pyparts.Parsed, inserted: set[int], *, refused_as: str = "ours") -> str | tuple[str, str] | None:
    """The reason the resolved file is refused (alone, or with a sentence naming what is at fault), or None:
    shadowing, a lost line, order dependence. Refused conflicts (in TEXT as REFUSED_AS) still hold both
    sides' lines: they count as present."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    result = parsed.definitions(spans)
    added = sorted(inserted)
    unsafe = _unsafe_insertion(parsed.tree, added)
    if unsafe:
        return unsafe
    twice = {key for key, n in result.items()
             if n > 1 and any(bisect.bisect_left(added, a) < bisect.bisect_right(added, b) for a, b in spans.get(key, ()))}
    if twice:       # parse the sides only when a name bound twice is bound in a resolved hunk
        # the statements binding it must be those of one side, the same text as many times: then the
        # resolution binds it as that side did. A count alone let a side that binds it twice hide the other
        # side's binding it overrides (helper-84: ours edits `T = 5` to `T = 10`, theirs adds `T = 30`)
        whole = pyparts.parse(lines, spans=True)
        sides = [(pyparts.parse(side_lines, spans=True), side_lines)
                 for side_lines in (split_lines(ours), split_lines(theirs))]
        mine = _bindings(whole, lines, twice)
        side_bindings = [_bindings(p, side_lines, twice) for p, side_lines in sides]
        for scope, name in sorted(key for key in twice if mine[key] not in [b[key] for b in side_bindings]):
            where = f" in `{scope}`" if scope else ""
            return "shadows", f"two definitions of `{name}`{where}: the later one would override the other side's"
    rewritten = Counter(line for s in segments if isinstance(s, _Conflict) and s.merged_import is not None
                        for line in s.ours + s.theirs)
    held = Counter(line for s in segments if isinstance(s, _Conflict) and s.refused for line in s.ours + s.theirs)
    have = Counter(lines) + rewritten + held
    for side in (ours, theirs):
        if _added(base, side) - have:
            return "lost-line"
    other, _ = _assemble(segments, theirs_first=True, refused_as=refused_as)
    if other == lines:
        return None
    other_parsed = pyparts.parse(other)
    if not other_parsed.ok or other_parsed.definitions() != result:
        return "order-dependent"
    return None


def _bindings(parsed: pyparts.Parsed, lines: list[bytes], keys: set[tuple[str, str]]
              ) -> dict[tuple[str, str], Counter[bytes]]:
    """For each of KEYS, the statements that bind it in PARSED (a parse of LINES with every span), by their text
    (each line stripped), counted; nothing when it does not parse."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    if parsed.ok:
        parsed.definitions(spans)
    return {key: Counter(b"\n".join(line.strip() for line in lines[a - 1:b]) for a, b in spans.get(key, ()))
            for key in keys}


def _unsafe_insertion(tree: ast.Module | None, added: list[int]) -> str | None:
    """What no count of bound names sees, in the statements that meet the lines ADDED (sorted, 1-based):
    a `from M import *` (it binds names no one can list: helper-83, a def it overrode was kept beside it),
    a dict display with a key twice where one of them is on an added line (the later value wins at run
    time: helper-83, two PRs' values for one key both kept)."""
    if tree is None:
        return None

    def meets(node: ast.AST) -> bool:
        first = node.lineno  # type: ignore[attr-defined]
        at = bisect.bisect_left(added, first)
        return at < len(added) and added[at] <= (node.end_lineno or first)  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) and meets(node):
            return "star-import"
        if isinstance(node, ast.Dict) and meets(node):
            seen: dict[object, ast.expr] = {}
            spreads = [v for k, v in zip(node.keys, node.values) if k is None]
            if any(meets(v) for v in spreads) and sum(1 for k, v in zip(node.keys, node.values)
                                                     if meets(v) or (k is not None and meets(k))) > 1:
                return "dict-spread"        # `**X` beside other added items: which wins depends on the order
            for key in node.keys:
                if key is None:             # `**spread`
                    continue
                name = _key_name(key)
                if name in seen and (meets(key) or meets(seen[name])):
                    return "duplicate-key"
                seen.setdefault(name, key)
    return None


def _key_name(key: ast.expr) -> object:
    """What a dict display's KEY is equal to: its value where it is a literal (`1`, `True` and `-0 + 1`
    alike; an f-string of constants is its string), else its syntax."""
    if isinstance(key, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in key.values):
        return ("value", "".join(str(v.value) for v in key.values))   # type: ignore[attr-defined]
    try:
        value = ast.literal_eval(key)
        hash(value)                 # a list is no key: its syntax stands for it
        return ("value", value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        try:
            return ("expr", ast.dump(key))
        except RecursionError:
            return ("at", key.lineno, key.col_offset)


def _added(base: bytes, side: bytes) -> Counter[bytes]:
    """The lines SIDE has more often than BASE (each extra copy counts): what it added."""
    return Counter(split_lines(side)) - Counter(split_lines(base))
