"""A key one entry adds to a dict display that another entry, or upstream, writes again in the same display:
both hunks land, the merges are clean, and one value is dead (helper-133: sympy's pr/30138 and pr/30192 each
added 'sinh', 'cosh', 'tanh' to `handlers_dict` in sympy/assumptions/refine.py, and sync said nothing)."""

from __future__ import annotations

import ast

import pytest

from carrytool.pipeline.dictkeys import _dicts, _found, _suspect
from carrytool.pipeline.pyadds import adds_key, written_keys
from tests.conftest import Cli, Small
from tests.pipeline.test_sync import sync

HANDLERS = "".join(f"    'h{n}': refine_h{n},\n" for n in range(14))
MODULE = "def refine_abs(expr):\n    return expr\n\n\nhandlers_dict = {\n" + HANDLERS + "}\n\n\n" + \
    "OTHER = {\n" + "".join(f"    {n}: 'o{n}',\n" for n in range(10)) + "}\n"


def _between(text: str, anchor: str, block: str) -> str:
    at = text.index(anchor)
    return text[:at] + block + text[at:]


def _keys(report: dict) -> list[dict]:
    return [w for w in report["warnings"] if w["kind"] == "duplicate-key"]


def _base(small: Small, text: str = MODULE) -> None:
    small.base = small.up.commit({"refine.py": text}, "a module", parent="main", ref="refs/heads/main")


def test_two_prs_adding_one_key_to_one_dict_at_different_places(cli: Cli, small: Small) -> None:
    _base(small)
    small.pr(1, {"refine.py": _between(MODULE, "    'h2':", "    'sinh': refine_sinh,\n")})
    small.pr(2, {"refine.py": _between(MODULE, "    'h11':", '    "sinh": refine_sinh_too,\n')})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied", "applied"], report
    [warning] = _keys(report)
    composed = small.work.git("show", "dev:refine.py").splitlines()
    assert [composed[n - 1].split(":")[0].strip() for n in warning["lines"]] == ["'sinh'", '"sinh"']
    assert {k: warning[k] for k in ("entry", "file", "dict", "key", "by")} == \
        {"entry": "pr/1", "file": "refine.py", "dict": "handlers_dict", "key": "'sinh'", "by": ["pr/1", "pr/2"]}
    first, second = warning["lines"]
    assert warning["message"] == (f"refine.py: the dict handlers_dict holds the key 'sinh' 2 times (line {first} by "
                                  f"pr/1, line {second} by pr/2): the last, pr/2's, wins when the module runs, and "
                                  "pr/1's value is dead")
    text = cli("sync", "-q", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert "holds the key 'sinh' 2 times" in " ".join(text.output.split()), text.output


def test_a_key_upstream_added_since_in_a_function_and_a_pr_adds_too(cli: Cli, small: Small) -> None:
    inner = "def table():\n    return {\n" + "".join(f"        ({n}, 'x'): {n},\n" for n in range(12)) + "    }\n"
    _base(small, inner)
    small.pr(1, {"refine.py": _between(inner, "        (9, 'x')", "        (20, 'x'): 'pr',\n")})
    small.up.commit({"refine.py": _between(inner, "        (1, 'x')", "        (20, 'x'): 'up',\n")},
                    "upstream adds (20, 'x')", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    [warning] = _keys(report)
    assert (warning["entry"], warning["dict"], warning["key"], warning["by"]) == \
        ("pr/1", "the dict at line 2 (in table)", "(20, 'x')", ["upstream", "pr/1"])
    assert "the last, pr/1's, wins when the module runs, and upstream's value is dead" in warning["message"]


def test_keys_twice_in_two_dicts_by_one_entry_or_by_upstream_are_not_said(cli: Cli, small: Small) -> None:
    upstream_twice = _between(MODULE, "    'h9':", "    'h1': again,\n")             # upstream's own pair
    _base(small, upstream_twice)
    one = _between(upstream_twice, "    'h3':", "    'own': 1,\n")
    small.pr(1, {"refine.py": _between(one, "    'h12':", "    'own': 2,\n")})   # twice, by pr/1 alone
    small.pr(2, {"refine.py": _between(upstream_twice, "    5:", "    'own': 3,\n")})   # 'own', in OTHER
    # pr/3 rewrites upstream's second 'h1' (a new value): the pair stays upstream's
    small.pr(3, {"refine.py": upstream_twice.replace("    'h1': again,\n", "    'h1': again_and_again,\n")})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    code, report = sync(cli, small)
    assert code == 0 and [e["status"] for e in report["entries"]] == ["applied"] * 3, report
    assert _keys(report) == []


def test_the_scan_parses_only_where_a_key_has_two_owners() -> None:
    """A file is parsed only where a key an entry landed is written again by another side (upstream, another
    entry): a key written twice by one entry alone, in two dicts, cannot be said, and parsing each such file
    cost a sync of 60 accelerate PRs 0.09 s for no warning. The rule is `_owner`'s: a key the entry's hunk
    removed where it landed stays upstream's."""
    data = b"a = {\n    'own': 1,\n}\nb = {\n    'own': 2,\n    'up': 3,\n}\nc = {'up': 4}\n"
    pr1 = ("pr/1", frozenset())
    assert not _suspect(data, {2: pr1, 5: pr1})                        # 'own' twice, by pr/1 alone
    assert _suspect(data, {2: pr1})                                    # 'own' again at line 5: upstream's
    assert _suspect(data, {2: pr1, 5: ("pr/2", frozenset())})          # and by another entry
    assert _suspect(data, {6: pr1})                                    # 'up' at line 8: upstream's
    assert _suspect(data, {6: ("pr/1", frozenset({"up"})), 8: pr1})    # 6 rewritten (upstream's), 8 pr/1's
    assert not _suspect(data, {6: ("pr/1", frozenset({"up"}))})        # 6 rewritten, 8: both upstream's
    assert not _suspect(data, {})


@pytest.mark.parametrize(("added", "removed", "adds"), [
    ([b"    'sinh': refine_sinh,"], [], True),
    ([b"    'sinh': refine_sinh_new,"], [b"    'sinh': refine_sinh,"], False),
    ([b"x = d['a']", b"y = lambda v: v", b"z = s[1:2]"], [], False),
    ([b"    (1, b'k'): 2, 7: 'seven'"], [], True),
])
def test_adds_key(added: list[bytes], removed: list[bytes], adds: bool) -> None:
    assert adds_key(added, removed) is adds


def test_written_keys_compares_by_value() -> None:
    assert written_keys([b"{'a': 1, \"a\": 2, 3: 4, (1, 'b'): 5, True: 6}"]) == {"a", 3, (1, "b")}


def test_a_module_nesting_deeper_than_the_recursion_limit_is_read(cli: Cli, small: Small) -> None:
    """helper-140: a module that parses but nests some thousand levels (a long `1 + 1 + ...`, generated
    code), beside a key written twice: the dict walk recursed, RecursionError, sync exit 70 with a traceback."""
    deep = "D = {\n    'a': 1,\n    'b': 0,\n}\n\nBIG = " + " + ".join(["1"] * 1500) + "\n"
    _base(small, deep)
    small.pr(1, {"refine.py": deep.replace("    'b': 0,\n", "    'b': 0,\n    'a': 5,\n")})
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    [warning] = _keys(report)
    assert (warning["dict"], warning["key"], warning["by"]) == ("D", "'a'", ["upstream", "pr/1"]), warning


def test_a_key_python_will_not_write_out_is_left_out(cli: Cli, small: Small) -> None:
    """helper-153: an integer key past Python's 4,300 digits written twice (upstream's own pair) in a module the
    scan reads for another key: repr() raised ValueError, sync exit 70. The other key is still said."""
    huge = "0x" + "f" * 3700
    text = f"H = {{\n    {huge}: 1,\n    {huge}: 2,\n}}\n\nD = {{\n    'a': 1,\n    'b': 0,\n}}\n"
    _base(small, text)
    small.pr(1, {"refine.py": text.replace("    'b': 0,\n", "    'b': 0,\n    'a': 5,\n")})
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report
    [warning] = _keys(report)
    assert (warning["dict"], warning["key"], warning["by"]) == ("D", "'a'", ["upstream", "pr/1"]), warning


def _dicts_walked_whole(node: ast.AST, scope: str) -> list[tuple[int, str]]:
    """`_dicts` as it was before h212: every node walked into with `ast.iter_child_nodes` (the reference)."""
    out, stack = [], [(node, scope)]
    while stack:
        parent, outer = stack.pop()
        later = []
        for child in ast.iter_child_nodes(parent):
            inner = outer
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{outer}.{child.name}" if outer else child.name
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and isinstance(child.value, ast.Dict):
                target = child.targets[0] if isinstance(child, ast.Assign) else child.target
                out.append((child.value.lineno, f"{ast.unparse(target)} (in {outer})" if outer else ast.unparse(target)))
                later.append((child.value, outer))
                continue
            if isinstance(child, ast.Dict):
                out.append((child.lineno, f"the dict at line {child.lineno} (in {outer})" if outer else
                            f"the dict at line {child.lineno}"))
            later.append((child, inner))
        stack.extend(reversed(later))
    return out


# every place a dict display can hide: annotations, defaults, decorators, keywords, lambdas, comprehensions,
# f-strings, slices, starred, await/yield, with/except/match, subscripts, attribute bases, del/global/import beside
TRICKY = '''
import os
from a import b as c
T = {'a': 1, 'a': 2}
x: {'k': 1, 'k': 2} = {'v': 1, 'v': 2}
@deco({'d': 1, 'd': 2})
def f(p: {'ann': 1} = {'dflt': 1, 'dflt': 2}, *a: {1: 2}, k={'kw': 3}, **kw) -> {'ret': 1, 'ret': 1}:
    global G
    g = lambda q={'lam': 1, 'lam': 2}: {'body': q, 'body': 2}
    return [{'c': i, 'c': -i} for i in {'it': 1, 'it': 2} if {'if': 1}]
class K(Base, meta={'m': 1, 'm': 2}):
    attr = {('t', 1): 0, ('t', 1): 1, b'b': 2, b'b': 3}
    async def m(self):
        async with ctx({'w': 1, 'w': 2}) as v:
            await w({'aw': 1, 'aw': 2})
        yield {'y': 1, 'y': 2}
        del self.x[{'del': 1}.get('del')]
    def n(self):
        try:
            pass
        except E({'e': 1, 'e': 2}) as err:
            raise X({'r': 1, 'r': 2}) from err
        match {'s': 1, 's': 2}:
            case {'pat': 1, 'pat': 2}:
                print(f"{ {'fs': 1, 'fs': 2}['fs'] !r:>{ {'w': 1}['w'] }}")
            case [*rest] if {'g': 1, 'g': 2}:
                pass
        return a[{'sl': 1, 'sl': 2}['sl']:2], (*{'st': 1, 'st': 2},), {**o, 'sp': 1, 'sp': 2}, -{'u': 1}['u'] + 1
        while {'wh': 1}:
            break
        for i in range(1):
            continue
        assert {'as': 1, 'as': 2}, {'msg': 1}
        nonlocal_ = obj.attr({'call': 1, 'call': 2}).other[{'sub': 1, 'sub': 2}]
        z = 1 if {'ifx': 1, 'ifx': 2} else {'els': 1}
        x += {'aug': 1, 'aug': 2}['aug']
'''


def test_the_walk_finds_every_dict_display_in_the_order_the_whole_walk_does() -> None:
    module = ast.parse(TRICKY)
    walked = [(node.lineno, where) for node, where in _dicts(module, "")]
    assert walked == _dicts_walked_whole(module, "") and len(walked) == 37
    found = _found(module)
    assert [key for _where, key, _lines in found].count("'a'") == 1 and len(found) == 28
