"""explain's union coverage and sync's provided accounting say the same of every hunk (h203).

h197's copy case: pr/1 adds `X = log()` after `b = 2` in f, pr/2 the same line after `g = 6`; the union keeps
pr/2's copy only. Sync warned pr/1's hunk `provided-absent`; explain called it `verbatim`, the union's own diff
adding that text (pr/2's copy). Here small unions (copies, moved lines, stacked PRs, re-expressed lines, upstream
edits next to a PR's line, lines upstream took) are run through both commands, and for each PR hunk: sync warns
it left out exactly where explain's coverage says `absent`, and explain says `verbatim` or `re-expressed` (covered)
of none sync warns."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import Cli, Small

F = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    g = 6\n    return a\n"
H = "\n\ndef h():\n    return 7\n"
BASE = F + H


def after(text: str, line: str, added: str) -> str:
    """TEXT with ADDED (lines) right after its first LINE."""
    assert line in text
    return text.replace(line, line + added, 1)


X = "    X = log()\n"
ONE = after(BASE, "    b = 2\n", X)                        # pr/1: X after b
TWO = after(BASE, "    g = 6\n", X)                        # pr/2: the same text after g
OTHER = after(BASE, "    g = 6\n", "    Y = log()\n")      # pr/2: another line after g
BOTH = after(ONE, "    g = 6\n", X)
LATER = BASE.replace("c = 3", "c = 30")                   # upstream edits the line after pr/1's place
H2 = BASE.replace("return 7", "return 70")                # pr/2 changes h only
THREE = "    p = load(a)\n    q = p.merge(b)\n    r = q.finish()\n"
LOG = after(BASE, "    g = 6\n", X)
LOGS = after(LOG, "    b = 2\n", X)                      # f logs twice: pr/1 deletes one, pr/2 the other
RW = BASE.replace("return a", "return aa")                # upstream rewrites every line of f's body
for _v in "abcdeg":
    RW = RW.replace(f"    {_v} = ", f"    {_v}{_v} = ")
LOGGED = after(BASE, "    b = 2\n", "    X = log(b)\n")  # pr/1 logs b, pr/2 reports d
REPORTED = after(BASE, "    d = 4\n", "    send_report(d, 'weekly')\n")
CLAMPED = BASE.replace("b = 2", "b = clamp(2)")


@dataclass
class Case:
    one: str
    two: str
    union: str
    base: str = BASE
    up: str | None = None          # upstream when the union was made
    later: str | None = None       # upstream after it
    stacked: bool = False          # pr/2 built on pr/1
    two_base: str | None = None    # pr/2 built on upstream's next commit, this (upstream then moved to UP from it)
    skip: bool = False             # the union `on_conflict: skip`
    took: str | None = None        # pr/2 also adds t.py with this text, which upstream took before the union was made
    warned: tuple[str, ...] | None = None   # the PRs sync must warn a hunk of left out (None: not asserted)


CASES = {
    "copy": Case(ONE, TWO, TWO),
    "copy-upstream-later": Case(ONE, TWO, TWO, later=LATER),
    "copy-made-on-upstream": Case(ONE, TWO, TWO.replace("c = 3", "c = 30"), up=LATER),
    "both-copies": Case(ONE, TWO, BOTH),
    "other-line-dropped": Case(ONE, OTHER, OTHER),
    "moved-in-def": Case(ONE, OTHER, after(OTHER, "    d = 4\n", X)),
    "stacked": Case(ONE, after(ONE, X, "    Y = log()\n"), after(ONE, X, "    Y = log()\n"), stacked=True),
    "stacked-lower-dropped": Case(ONE, after(ONE, X, "    Y = log()\n"), after(BASE, "    b = 2\n", "    Y = log()\n"),
                                  stacked=True),
    "re-expressed": Case(after(BASE, "    b = 2\n", THREE), H2,
                         after(H2, "    b = 2\n", THREE.replace("load(a)", "load( a )").replace("finish()",
                                                                                                  "finish(True)"))),
    "reconciled": Case(CLAMPED, BASE.replace("b = 2", "b = 7"), BASE.replace("b = 2", "b = 7"), warned=()),
    # an insertion at the edge of another PR's replacement, either side dropped: both could be kept (h213)
    "insertion-next-to-replacement": Case(ONE, BASE.replace("b = 2", "b = 7"), BASE.replace("b = 2", "b = 7"),
                                          warned=("pr/1",)),
    "insertion-next-to-replacement-kept": Case(ONE, CLAMPED, after(CLAMPED, "    b = clamp(2)\n", X), warned=()),
    "replacement-next-to-insertion": Case(CLAMPED, ONE, ONE, warned=("pr/1",)),
    "insertion-inside-replacement": Case(ONE, CLAMPED.replace("c = 3", "c = clamp(3)"),
                                         CLAMPED.replace("c = 3", "c = clamp(3)"), warned=()),
    "reconciled-copy": Case(ONE, after(BASE.replace("b = 2", "b = 7"), "    g = 6\n", X),
                            after(BASE.replace("b = 2", "b = 7"), "    g = 6\n", X)),
    "upstream-edit-kept": Case(ONE, H2, after(H2, "    b = 2\n", X).replace("c = 3", "c = 30"), up=LATER),
    "upstream-took-it": Case(ONE, H2, H2.replace("    b = 2\n", "    b = 2\n" + X), up=ONE),
    "upstream-took-it-later": Case(ONE, H2, after(H2, "    b = 2\n", X), later=ONE),
    "deletion-copy": Case(LOGS.replace("    b = 2\n" + X, "    b = 2\n"), LOG.replace("    g = 6\n" + X, "    g = 6\n")
                          .replace("    b = 2\n", "    b = 2\n" + X), LOGS.replace("    g = 6\n" + X, "    g = 6\n"),
                          base=LOGS),
    # upstream's later edit conflicts with the union's own line: skipped, it provides nothing (its diff holds both)
    # the union does not change t.py: upstream took pr/2's t.py (h214 on celery: a squash-merged PR's test read
    # `absent`, sync silent, the tree holding it)
    "file-upstream-took": Case(ONE, H2, after(H2, "    b = 2\n", X), took="def test():\n    assert True\n"),
    "union-skipped": Case(ONE, TWO, BOTH.replace("a = 1", "a = 10"), later=BASE.replace("a = 1", "a = 100"),
                          skip=True),
    # on upstream's rewrite: the union's own line merging both PRs' changes (h215), or carrying pr/1's alone (h210)
    "merged-line-on-rewrite": Case(LOGGED, REPORTED, after(RW, "    bb = 2\n", "    report(log(bb), 'weekly')\n"),
                                   up=RW),
    "other-line-on-rewrite-dropped": Case(LOGGED, REPORTED, after(RW, "    bb = 2\n", "    X = log(bb)\n"), up=RW),
    # pr/2 made on upstream's `c = 30`, next to pr/1's `b` and its own `d`; the union drops pr/1's (h206)
    "newer-base-next-to-upstream-edit": Case(CLAMPED, LATER.replace("d = 4", "d = clamp(4)"),
                                             LATER.replace("d = 4", "d = clamp(4)"), up=LATER, two_base=LATER),
}


def _build(small: Small, case: Case) -> None:
    b = small.base = small.up.commit({"m.py": case.base}, "base", parent="main", ref="refs/heads/main")
    one = small.pr(1, {"m.py": case.one}, parent=b)
    took = {"t.py": case.took} if case.took else {}
    b2 = b if case.two_base is None else small.up.commit({"m.py": case.two_base}, "newer", parent=b,
                                                          ref="refs/heads/main")
    small.pr(2, {"m.py": case.two, **took}, parent=one if case.stacked else b2)
    on = b2 if case.up is None and not took else \
        small.up.commit({"m.py": case.up or (case.two_base or case.base), **took}, "upstream", parent=b2,
                        ref="refs/heads/main")
    commit = small.up.commit({"m.py": case.union}, "union", parent=on, ref="refs/heads/union")
    if case.later is not None:
        small.up.commit({"m.py": case.later}, "upstream later", parent=on, ref="refs/heads/main")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    union = {"carry": "union", "commit": commit, "supersedes": [1, 2], **({"on_conflict": "skip"} if case.skip else {})}
    small.manifest([{"pr": 1}, {"pr": 2}, union])


def _left_out(report: dict) -> set[tuple[str, str, tuple[int, ...] | None]]:
    return {(w["entry"], w["file"], tuple(w["lines"]) if w.get("lines") else None)
            for w in report["warnings"] if w["kind"] == "provided-absent"}


def _hunks(report: dict, *statuses: str) -> set[tuple[str, str, tuple[int, ...]]]:
    return {(c["pr"], h["file"], tuple(h["lines"])) for c in report["coverage"] for h in c["hunks"]
            if h["status"] in statuses}


@pytest.mark.parametrize("name", list(CASES))
def test_explains_coverage_says_what_sync_found(cli: Cli, small: Small, name: str) -> None:
    _build(small, CASES[name])
    args = ("-m", small.manifest_path, "--repo", small.work.path)
    code, synced = cli.json("sync", *args, "--dry-run")
    assert code == 0, synced
    code, explained = cli.json("explain", *args)
    assert code == 0, explained
    warned = _left_out(synced)
    assert warned == _left_out(explained)           # one plan: explain's warnings are sync's
    if CASES[name].warned is not None:
        assert sorted({pr for pr, _file, _lines in warned}) == list(CASES[name].warned), synced["warnings"]
    whole = {(pr, file) for pr, file, lines in warned if lines is None}
    absent = {(pr, file, lines) for pr, file, lines in _hunks(explained, "absent")}
    said = {(pr, file, lines) for pr, file, lines in warned if lines} | \
        {hunk for hunk in _hunks(explained, "verbatim", "re-expressed", "reconciled", "absent")
         if hunk[:2] in whole}
    assert absent == said, (warned, explained["coverage"])
    assert not _hunks(explained, "verbatim", "re-expressed") & said, (warned, explained["coverage"])


def test_a_file_upstream_deleted_is_not_verbatim(cli: Cli, small: Small) -> None:
    """Upstream deleted x.py after the PRs' base; pr/2 changes it; the union leaves it alone. Sync says nothing (the
    change went where upstream's deletion took it), and explain's coverage keeps `absent`: the tree has no x.py
    (h219: `has_anyway` made it `verbatim`, from has_change's answer for a file upstream no longer has)."""
    b = small.base = small.up.commit({"m.py": BASE, "x.py": "def helper():\n    return 1\n"}, "base", parent="main",
                                     ref="refs/heads/main")
    small.pr(1, {"m.py": ONE}, parent=b)
    small.pr(2, {"m.py": H2, "x.py": "def helper():\n    return weekly_total()\n"}, parent=b)
    on = small.up.commit({"x.py": None}, "upstream deletes x.py", parent=b, ref="refs/heads/main")
    commit = small.up.commit({"m.py": after(H2, "    b = 2\n", X)}, "union", parent=on, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}])
    args = ("-m", small.manifest_path, "--repo", small.work.path)
    code, synced = cli.json("sync", *args, "--dry-run")
    assert code == 0 and not _left_out(synced), synced
    code, explained = cli.json("explain", *args)
    assert code == 0, explained
    assert ("pr/2", "x.py", (2, 2)) in _hunks(explained, "absent"), explained["coverage"]
