"""A PR's line judged at its place, as git's merge puts it, not by the copies of its text in the def
(helper-176's review of the union check's copy count).

The check counted a line's copies in its def against the PR's head's and upstream's: upstream's copy beside a
line the same text as the PR's neighbour was taken for the PR's change taken upstream, and another folded PR's
copy elsewhere in the def stood for the PR's; a PR's deletion was counted against its head's copies only, not
upstream's since it branched; and the union's tree was the final one, weighed against the upstream the union
was made on, not the one sync composes it on: upstream deleting a copy after the union was made called the
PR's line lost every night, and adding one hid a loss."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo, write_manifest
from tests.pipeline.test_provided_repeats import _absent, _run


def _with_two(text: str) -> str:
    """TEXT with pr/2's change (in compute: outside g)."""
    return text.replace("    return a\n\n\ndef g", "    return a + 0\n\n\ndef g")


def _lines(report: dict) -> list[tuple[str, list[int] | None]]:
    return [(entry, lines) for entry, lines, _m in _absent(report)]


# g calls step() twice; pr/1 logs after the second
STEPS = ("def compute(a):\n    return a\n\n\n"
         "def g(a, req):\n    step()\n    a = 1\n    x = 2\n    y = 3\n    step()\n    b = 2\n    return a\n")


def test_upstreams_copy_beside_the_same_neighbour_text_elsewhere_is_not_the_prs(cli: Cli, small: Small) -> None:
    # upstream logs after the first step(): the same neighbour text as pr/1's, not pr/1's place
    one = STEPS.replace("    step()\n    b = 2\n", "    step()\n    log(a)\n    b = 2\n")
    up = STEPS.replace("    step()\n    a = 1\n", "    step()\n    log(a)\n    a = 1\n")
    union = _with_two(up)
    assert union.count("log(a)") == 1
    r = _run(cli, small, one, _with_two(STEPS), union, base=STEPS, up=up)
    assert _lines(r) == [("pr/1", [11, 11])], r["warnings"]


# g sleeps twice
SLEEPS = ("def compute(a):\n    return a\n\n\n"
          "def g(a, req):\n    time.sleep(1)\n    req.open()\n    req.send(a)\n    time.sleep(1)\n    req.close()\n"
          "    return a\n")


def test_a_deletion_lost_where_upstream_deleted_the_defs_other_copy_is_warned(cli: Cli, small: Small) -> None:
    # pr/1 deletes the second sleep; upstream deleted the first since; the union keeps the one pr/1 deletes
    one = SLEEPS.replace("    req.send(a)\n    time.sleep(1)\n", "    req.send(a)\n")
    up = SLEEPS.replace("    time.sleep(1)\n    req.open()\n", "    req.open()\n")
    union = _with_two(up)
    assert union.count("time.sleep(1)") == 1 and union.index("time.sleep") > union.index("req.send")
    r = _run(cli, small, one, _with_two(SLEEPS), union, base=SLEEPS, up=up)
    [(entry, lines, message)] = _absent(r)
    assert (entry, lines) == ("pr/1", [8, 8])
    assert "still has the line pr/1 removes at m.py:8 (g) (m.py:9 in its base)" in message, message


def test_a_deletion_applied_beside_upstreams_new_copy_is_no_loss(cli: Cli, small: Small) -> None:
    # pr/1 deletes g's sleep; upstream added one after req.open() since; the union applies pr/1's deletion
    base = SLEEPS.replace("    time.sleep(1)\n    req.open()\n", "    req.open()\n")
    one = base.replace("    time.sleep(1)\n", "")
    up = base.replace("    req.open()\n", "    req.open()\n    time.sleep(1)\n")
    union = _with_two(up.replace("    req.send(a)\n    time.sleep(1)\n", "    req.send(a)\n"))
    assert union.count("time.sleep(1)") == 1 and union.index("time.sleep") < union.index("req.send")
    r = _run(cli, small, one, _with_two(base), union, base=base, up=up)
    assert _absent(r) == [], r["warnings"]


# pr/1 commits after the insert, pr/2 after the delete
SESSION = ("def compute(a):\n    return a\n\n\n"
           "def g(a, session):\n    session.insert(a)\n    check(a)\n    prepare(a)\n    session.delete(a)\n"
           "    return a\n")


def test_another_folded_prs_copy_elsewhere_in_the_def_does_not_stand_for_the_prs(cli: Cli, small: Small) -> None:
    one = SESSION.replace("    session.insert(a)\n", "    session.insert(a)\n    session.commit()\n")
    two = _with_two(SESSION.replace("    session.delete(a)\n", "    session.delete(a)\n    session.commit()\n"))
    r = _run(cli, small, one, two, two, base=SESSION)      # the union keeps pr/2's commit, drops pr/1's
    assert _lines(r) == [("pr/1", [7, 7])], r["warnings"]


def test_both_prs_adding_the_same_line_at_one_place_are_held_by_one_copy(cli: Cli, small: Small) -> None:
    # pr/2 holds pr/1's change (built on it) and its own: the union's one copy is both's
    one = SESSION.replace("    session.insert(a)\n", "    session.insert(a)\n    session.commit()\n")
    two = _with_two(one)
    r = _run(cli, small, one, two, two, base=SESSION)
    assert _absent(r) == [], r["warnings"]


# g flushes at its end
FLUSH = ("def compute(a):\n    return a\n\n\n"
         "def g(a, req):\n    if a:\n        pass\n    req.flush()\n    return a\n")


def test_no_alarm_when_upstream_deletes_the_defs_other_copy_after_the_union(cli: Cli, small: Small) -> None:
    # pr/1 flushes at g's top too; the union keeps it; upstream then deletes g's trailing flush
    one = FLUSH.replace("    if a:\n", "    req.flush()\n    if a:\n")
    later = FLUSH.replace("    req.flush()\n    return a\n", "    return a\n")
    r = _run(cli, small, one, _with_two(FLUSH), _with_two(one), base=FLUSH, later=later)
    assert [(e["id"], e["status"]) for e in r["entries"]][-1] == ("carry/union", "applied")
    assert _absent(r) == [], r["warnings"]


def test_a_loss_stays_warned_when_upstream_adds_the_line_elsewhere_after_the_union(cli: Cli, small: Small
                                                                                    ) -> None:
    # the union drops pr/1's on_failure before the flush; upstream then adds one at g's top
    one = FLUSH.replace("    req.flush()\n", "    req.on_failure(None)\n    req.flush()\n")
    later = FLUSH.replace("    if a:\n", "    req.on_failure(None)\n    if a:\n")
    r = _run(cli, small, one, _with_two(FLUSH), _with_two(FLUSH), base=FLUSH, later=later)
    assert _lines(r) == [("pr/1", [8, 8])], r["warnings"]


def test_the_prs_line_kept_where_the_union_deletes_the_defs_other_copy_is_no_loss(cli: Cli, small: Small) -> None:
    # pr/1 flushes at g's top too; the union keeps pr/1's and, of its own, deletes g's trailing flush
    one = FLUSH.replace("    if a:\n", "    req.flush()\n    if a:\n")
    union = _with_two(one.replace("    req.flush()\n    return a\n", "    return a\n"))
    assert union.count("req.flush()") == 1 and union.index("req.flush") < union.index("if a:")
    r = _run(cli, small, one, _with_two(FLUSH), union, base=FLUSH)
    assert _absent(r) == [], r["warnings"]


def test_a_later_entrys_copy_elsewhere_in_the_def_does_not_hide_a_loss(cli: Cli, small: Small) -> None:
    # the union drops pr/1's on_failure before the flush; pr/3, composed after the union, adds one at g's top
    one = FLUSH.replace("    req.flush()\n", "    req.on_failure(None)\n    req.flush()\n")
    b = small.base = small.up.commit({"m.py": FLUSH}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": one}, parent=b)
    small.pr(2, {"m.py": _with_two(FLUSH)}, parent=b)
    small.pr(3, {"m.py": FLUSH.replace("    if a:\n", "    req.on_failure(None)\n    if a:\n")}, parent=b)
    commit = small.up.commit({"m.py": _with_two(FLUSH)}, "union", parent=b, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}, {"pr": 3}])
    code, r = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0 and [(e["id"], e["status"]) for e in r["entries"]][-1] == ("pr/3", "applied"), r
    assert _lines(r) == [("pr/1", [8, 8])], r["warnings"]


def test_a_line_two_prs_both_add_moved_by_the_union_within_the_def_is_no_loss(cli: Cli, small: Small) -> None:
    # pr/2 holds pr/1's change (built on it); the union commits after check(a) instead: one copy, both's
    one = SESSION.replace("    session.insert(a)\n", "    session.insert(a)\n    session.commit()\n")
    union = _with_two(SESSION.replace("    check(a)\n", "    check(a)\n    session.commit()\n"))
    r = _run(cli, small, one, _with_two(one), union, base=SESSION)
    assert _absent(r) == [], r["warnings"]


# pr/1 disables reset for the compiler (a decorator, an early return); pr/2 renames an id in reset
RESET = ("class Coordinator:\n    def record(self, m):\n        self.order.append(m)\n\n"
         "    def reset(self):\n        \"\"\"one step done\"\"\"\n        self.clean()\n\n"
         "        if not self.complete():\n            same([m.id for m in self.order])\n        return 1\n")
DISABLED = RESET.replace("    def reset(self):\n", "    @compiler.disable\n    def reset(self):\n").replace(
    "        self.clean()\n", "        if compiling():\n            return\n\n        self.clean()\n")


def _renamed(text: str) -> str:
    """TEXT with pr/2's change (in reset, apart from pr/1's lines)."""
    return text.replace("[m.id for", "[m.ds_id for")


def test_a_prs_line_upstream_took_too_that_the_union_deletes_is_warned(cli: Cli, small: Small) -> None:
    # upstream took pr/1's change since (DeepSpeed #6662's `@compiler.disable`); at a stop the union deletes
    # the decorator, outside any conflict: pr/1's line and upstream's are gone (h179)
    union = _renamed(DISABLED).replace("    @compiler.disable\n", "")
    r = _run(cli, small, DISABLED, _renamed(RESET), union, base=RESET, up=DISABLED)
    [(entry, lines, message)] = _absent(r)
    assert (entry, lines) == ("pr/1", [5, 5]), r["warnings"]
    assert "lacks its hunk m.py:5 (Coordinator.reset), which upstream has too: the union removed upstream's " \
        "lines as well, in no region carry/union reconciled" in message, message


def test_a_prs_line_upstream_took_too_deleted_at_a_stop_is_said_by_continue_and_explain(cli: Cli, tmp_path: Path
                                                                                        ) -> None:
    # the fold stops on c.py; the maintainer also deletes pr/1's decorator in m.py, which upstream has too
    up = init_repo(tmp_path / "up")
    base = up.commit({"m.py": RESET, "c.py": "x = 0\n"}, "base", ref="refs/heads/main")
    up.commit({"m.py": DISABLED, "c.py": "x = 0\n"}, "upstream takes pr/1's m.py", parent=base,
              ref="refs/heads/main")
    up.commit({"m.py": DISABLED, "c.py": "x = 1\n"}, "pr 1", parent=base, ref="refs/pull/1/head")
    up.commit({"m.py": _renamed(RESET), "c.py": "x = 2\n"}, "pr 2", parent=base, ref="refs/pull/2/head")
    work = init_repo(tmp_path / "work", bare=True).path
    manifest = write_manifest(tmp_path / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": 1}, {"pr": 2}, {"carry": "u", "patch": "unions/u.patch", "supersedes": [1, 2]}]})
    args = ["-m", str(manifest), "--repo", str(work)]
    assert cli("union", "compose", "u", *args).exit_code == 3
    tree = work / "carrytool" / "union" / "u" / "tree"
    (tree / "c.py").write_text("x = 2\n")
    assert (tree / "m.py").read_text() == _renamed(DISABLED)
    (tree / "m.py").write_text(_renamed(DISABLED).replace("    @compiler.disable\n", ""))
    result = cli("union", "continue", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert "warning: the union lacks pr/1's hunk m.py:5 (Coordinator.reset), which upstream has too" in out, out
    code, report = cli.json("explain", *args)
    assert code == 0, report
    assert [(w["entry"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"] == \
        [("pr/1", [5, 5])]
    [cov] = [c for c in report["coverage"] if c["pr"] == "pr/1"]
    assert ("m.py", [5, 5], "absent") in [(h["file"], h["lines"], h["status"]) for h in cov["hunks"]]


def test_a_prs_line_upstream_took_too_kept_by_the_union_is_no_loss(cli: Cli, small: Small) -> None:
    r = _run(cli, small, DISABLED, _renamed(RESET), _renamed(DISABLED), base=RESET, up=DISABLED)
    assert _absent(r) == [], r["warnings"]


def test_a_prs_line_upstream_took_that_another_pr_changes_is_reconciled(cli: Cli, small: Small) -> None:
    # pr/2, branched from upstream after it took pr/1's change, changes pr/1's decorator; the union takes pr/2's
    two = _renamed(DISABLED).replace("@compiler.disable\n", "@compiler.disable(recursive=False)\n")
    b = small.base = small.up.commit({"m.py": RESET}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": DISABLED}, parent=b)
    on = small.up.commit({"m.py": DISABLED}, "upstream", parent=b, ref="refs/heads/main")
    small.pr(2, {"m.py": two}, parent=on)
    commit = small.up.commit({"m.py": two}, "union", parent=on, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [1, 2]}])
    code, r = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0 and _absent(r) == [], r["warnings"]


# f, g and h each set a name; two PRs make the same change to f (h183's review)
THREE_DEFS = ("def f():\n    a = 1\n    return a\n\n\ndef g():\n    x = 1\n    return x\n\n\n"
              "def h():\n    y = 1\n    return y\n")


def test_a_change_two_prs_make_alike_that_the_union_drops_is_warned_for_both(cli: Cli, small: Small) -> None:
    # pr/1 and pr/2 both change `a = 1` to `a = 3` (git merges them as one); the union keeps each PR's other
    # change and `a = 1`: each PR's hunk was "reconciled" by the other's identical one, and nothing was said
    one = THREE_DEFS.replace("    a = 1", "    a = 3").replace("    y = 1", "    y = 3")
    two = THREE_DEFS.replace("    a = 1", "    a = 3").replace("    x = 1", "    x = 3")
    union = THREE_DEFS.replace("    x = 1", "    x = 3").replace("    y = 1", "    y = 3")
    r = _run(cli, small, one, two, union, base=THREE_DEFS)
    assert _lines(r) == [("pr/1", [2, 2]), ("pr/2", [2, 2])], r["warnings"]


def test_a_change_two_prs_make_alike_that_the_union_keeps_is_not_warned(cli: Cli, small: Small) -> None:
    one = THREE_DEFS.replace("    a = 1", "    a = 3").replace("    y = 1", "    y = 3")
    two = THREE_DEFS.replace("    a = 1", "    a = 3").replace("    x = 1", "    x = 3")
    union = THREE_DEFS.replace("    a = 1", "    a = 3").replace("    x = 1", "    x = 3").replace("    y = 1", "    y = 3")
    assert _lines(_run(cli, small, one, two, union, base=THREE_DEFS)) == []


LOAD = ("def load(path):\n    limit = 10\n    data = read(path, limit)\n    return data\n\n\n"
        "def save(path, data):\n    write(path, data)\n    return True\n")


def test_a_change_upstream_took_that_the_union_puts_back_is_warned(cli: Cli, small: Small) -> None:
    # pr/1 changes `limit = 10` to `limit = 20`, and upstream made the same change; the union, on upstream, has
    # `limit = 10` again: its own hunk only puts the PR's base line back, not its words for the PR's change
    # (h183's review: "re-expressed", exit 0, nothing said)
    one = LOAD.replace("limit = 10", "limit = 20")
    two = LOAD.replace("    write(path, data)", "    write(path, data, sync=True)")
    r = _run(cli, small, one, two, two, base=LOAD, up=one)
    [(entry, lines, message)] = _absent(r)
    assert (entry, lines) == ("pr/1", [2, 2]), r["warnings"]
    assert "upstream" in message, message


def test_a_change_upstream_took_that_the_union_writes_anew_is_its_own(cli: Cli, small: Small) -> None:
    one = LOAD.replace("limit = 10", "limit = 20")
    two = LOAD.replace("    write(path, data)", "    write(path, data, sync=True)")
    union = two.replace("limit = 10", "limit = 30")
    assert _lines(_run(cli, small, one, two, union, base=LOAD, up=one)) == []
