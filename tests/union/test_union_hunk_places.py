"""A hunk's record judged at each place of its key, and an older record's kept lines (helper-166's review of
helper-162's guard).

One key, two places: pr/1 and pr/2 conflict in f(), and upstream (since) and pr/2 in g(), with the same two
sides; both resolved to pr/2's line. The record said what was true of g() only (the last place recorded), and
once upstream merged pr/1, the replay replaced its line in f() (upstream's now) without a word. A record made
before carrytool kept upstream's lines: a line it kept that upstream has since deleted was put back unasked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from carrytool.errors import InputError
from carrytool.union.recorded_upstream import HunkUpstream, Place, RecordedUpstream, merged_upstream
from carrytool.union.store import Store
from carrytool.union.upstream_hunks import around_hunks, judge
from tests.conftest import Cli
from tests.union.fold_scenario import PATCH_UNION, TwoPrs

HUNK = re.compile(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", re.S)
TWO = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
ONE = "def g():\n    x = 1\n    return x\n"


def _resolve_all(path: Path, lines: str, hunks: int | None = None) -> None:
    text = path.read_text()
    assert hunks is None or len(HUNK.findall(text)) == hunks, text
    path.write_text(HUNK.sub(lambda _m: lines, text))


def _records(prs: TwoPrs) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))]


def _merge_pr1(prs: TwoPrs, files: dict, main: str) -> None:
    """Upstream (at MAIN) merges pr/1, its files then MAIN's with FILES; the union keeps pr/2 only."""
    prs.up.commit(files, "Merge pr/1", parent=main, parents=[main, prs.pr1], ref="refs/heads/main")
    prs.manifest.write_text(PATCH_UNION.replace("supersedes: [1, 2]", "supersedes: [2]"))


def _twice_in_one_file(root: Path, cli: Cli) -> tuple[TwoPrs, list[str], str]:
    prs = TwoPrs(root, {"m.py": TWO}, {"m.py": TWO.replace("x = 1", "x = 2", 1)},
                 {"m.py": TWO.replace("x = 1", "x = 3")})
    up = TWO.replace("x = 1\n    return x\n", "x = 2\n    return x\n").replace("x = 2", "x = 1", 1)
    main = prs.up.commit({"m.py": up}, "g is 2", parent=prs.base, ref="refs/heads/main")
    return prs, prs.args(), main


def _twice_in_two_files(root: Path, cli: Cli) -> tuple[TwoPrs, list[str], str]:
    prs = TwoPrs(root, {"m.py": ONE, "n.py": ONE}, {"m.py": ONE.replace("1", "2")},
                 {"m.py": ONE.replace("1", "3"), "n.py": ONE.replace("1", "3")})
    main = prs.up.commit({"n.py": ONE.replace("1", "2")}, "n is 2", parent=prs.base, ref="refs/heads/main")
    return prs, prs.args(), main


@pytest.mark.parametrize(("build", "files"), [(_twice_in_one_file, {"m.py": 2}),
                                              (_twice_in_two_files, {"m.py": 1, "n.py": 1})],
                         ids=["one-file", "two-files"])
def test_a_key_met_at_two_places_is_judged_at_each(cli: Cli, tmp_path: Path, build, files: dict) -> None:
    prs, args, main = build(tmp_path, cli)
    assert cli("union", "compose", "u", *args).exit_code == 3
    for name, count in files.items():
        _resolve_all(prs.scratch / name, "    x = 3\n", count)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    [record] = _records(prs)                     # one key: one record, each place of it named
    assert [(p["file"], p["hunk"], p["upstream_removed"]) for p in record["upstream_at"]] == \
        ([("m.py", 0, []), ("m.py", 1, ["    x = 2"])] if len(files) == 1 else
         [("m.py", 0, []), ("n.py", 0, ["    x = 2"])])
    assert record["upstream_removed"] == []      # what every place drops: an older carrytool asks more, not less
    again = cli("union", "compose", "u", *args)  # as recorded: nothing to ask
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr
    # upstream merges pr/1: f()'s (m.py's) `x = 2` is upstream's now
    merged = {"m.py": TWO.replace("x = 1", "x = 2")} if len(files) == 1 else {"m.py": ONE.replace("1", "2")}
    _merge_pr1(prs, merged, main)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    # was 0, the patch `-    x = 2` in f(): judged by g()'s place (n.py's), which dropped upstream's `x = 2` then
    assert result.exit_code == 3, out
    assert ("m.py: your recorded resolution of a conflict hunk is not replayed: it would drop 1 line upstream main "
            "has there now, which it did not drop as upstream's when you resolved it (upstream merged a PR since?):\n"
            "        x = 2\n") in out
    # decided again (pr/2's line over upstream's, at both places): recorded, and the next fold asks nothing
    for name in files:
        _resolve_all(prs.scratch / name, "    x = 3\n")
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    patch = (prs.manifest.parent / "unions" / "u.patch").read_text()
    assert patch.count("-    x = 2\n+    x = 3\n") == 2, patch
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr


def _older(path: Path) -> None:
    """PATH as a carrytool before helper-162 wrote it: nothing said of upstream's lines."""
    doc = json.loads(path.read_text())
    for name in ("upstream_removed", "upstream_kept", "upstream_at"):
        doc.pop(name, None)
    path.write_text(json.dumps(doc))


def test_an_older_record_keeping_a_line_upstream_deleted_since_asks_once(cli: Cli, tmp_path: Path) -> None:
    """pr/1 deletes `b` and changes `a`, pr/2 changes `a` (its side keeps `b`); the resolution keeps both `a`s
    and `b`. Upstream merges pr/1: an older record's replay put `b` back (exit 0, `+    b = 2`)."""
    base = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
    pr1 = base.replace("a = 1", "a = one(x)").replace("    b = 2\n", "")
    prs = TwoPrs(tmp_path, {"m.py": base}, {"m.py": pr1}, {"m.py": base.replace("a = 1", "a = two(x)")})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_all(prs.scratch / "m.py", "    a = one(x)\n    a2 = two(x)\n    b = 2\n", 1)
    assert cli("union", "continue", "u", *args).exit_code == 0
    [path] = (prs.manifest.parent / "resolutions" / "u").glob("*.json")
    _older(path)
    again = cli("union", "compose", "u", *args)     # upstream as recorded: `b` is upstream's there, nothing asked
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr
    _merge_pr1(prs, {"m.py": pr1}, prs.base)
    _older(path)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    patch = (prs.manifest.parent / "unions" / "u.patch").read_text()
    assert "+    b = 2\n" not in patch
    # `b` only: `a2 = two(x)` is the maintainer's own line, `a = one(x)` the fold's side's
    assert ("it would keep 1 line of the file the PR branched from that upstream main does not have there, which "
            "the record (made by an older carrytool) does not say were upstream's then (upstream deleted them "
            "since?):\n        b = 2\nthe scratch file") in out, out
    _resolve_all(prs.scratch / "m.py", "    a = one(x)\n    a2 = two(x)\n    b = 2\n", 1)   # kept on purpose
    assert cli("union", "continue", "u", *args).exit_code == 0
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr
    assert "+    b = 2\n" in (prs.manifest.parent / "unions" / "u.patch").read_text()


# -- on strings ----------------------------------------------------------------------------------------------
F = b"def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
CONFLICT = b"def f(x):\n<<<<<<< ours\n    a = one(x)\n=======\n    a = two(x)\n    b = 2\n>>>>>>> theirs\n    c = 3\n"


@pytest.mark.parametrize(("resolution", "asked"), [
    (b"    a = one(x)\n    b = 2", (b"    b = 2",)),          # pr/2's context line, deleted upstream since
    (b"    a = one(x)\n    a = 1", (b"    a = 1",)),          # a line of the PR's base, typed back
    (b"    a = two(one(x))", ()),                             # the maintainer's own line
    (b"    a = two(x)\n    a = one(x)", ()),                  # the PR's line and the fold's
])
def test_an_older_record_asks_about_kept_lines_of_the_prs_base(resolution: bytes, asked: tuple) -> None:
    [now] = around_hunks(F.replace(b"    a = 1\n    b = 2\n", b"    a = one(x)\n"), CONFLICT)   # pr/1 merged
    assert judge(now, resolution, HunkUpstream(), tuple(F.split(b"\n"))).puts_back == asked
    assert not judge(now, resolution, HunkUpstream((), ()), tuple(F.split(b"\n"))).puts_back   # said: not asked
    [then] = around_hunks(F, CONFLICT)                        # upstream as recorded: `a = 1`, `b = 2` are its
    assert not judge(then, resolution, HunkUpstream(), tuple(F.split(b"\n"))).puts_back


def test_places_are_kept_per_file_and_read_back(tmp_path: Path) -> None:
    store, key = Store(tmp_path, "2.39.0"), "a" * 64
    f_, g_ = HunkUpstream((), ()), HunkUpstream((b"x = 2",), (b"y",))
    store.record("u", "m.py", key, None, b"x = 3", ["pr/1", "pr/2"], [f_, g_])
    store.record("u", "n.py", key, None, b"x = 3", ["pr/2"], [g_])
    [recorded] = store.load_upstream("u").values()
    assert recorded.at == {("m.py", 0): f_, ("m.py", 1): g_, ("n.py", 0): g_}
    assert recorded.whole == HunkUpstream((), (b"y",)) == merged_upstream([f_, g_])
    assert recorded.of(Place("o.py", 0, 1)) == recorded.whole   # a place not recorded: what every one says
    assert recorded.of(Place("m.py", 1, 2)) == g_               # as many hunks as places: its own place
    assert recorded.of(Place("m.py", 0, 1)) == recorded.whole   # fewer (helper-169): which place is unknown
    assert recorded.of(Place("m.py", 2, 3)) == recorded.whole   # more
    store.record("u", "m.py", key, None, b"x = 3", ["pr/1", "pr/2"], [g_])   # m.py again: its places replaced
    assert store.load_upstream("u")[key].at == {("m.py", 0): g_, ("n.py", 0): g_}
    # a record of helper-162's carrytool (no places): what it says, wherever its key is met
    path = next(tmp_path.glob("u/*.json"))
    doc = json.loads(path.read_text())
    doc.pop("upstream_at")
    path.write_text(json.dumps(doc))
    assert store.load_upstream("u")[key] == RecordedUpstream(g_)
    doc["upstream_at"] = [{"file": "m.py"}]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="upstream_at"):
        store.load_upstream("u")
