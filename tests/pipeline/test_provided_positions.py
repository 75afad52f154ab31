"""A PR's line judged at its place, as git's merge puts it, not by the copies of its text in the def
(helper-176's review of the union check's copy count).

The check counted a line's copies in its def against the PR's head's and upstream's: upstream's copy beside a
line the same text as the PR's neighbour was taken for the PR's change taken upstream, and another folded PR's
copy elsewhere in the def stood for the PR's; a PR's deletion was counted against its head's copies only, not
upstream's since it branched."""
from __future__ import annotations

from tests.conftest import Cli, Small
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
    assert "still has the lines pr/1 removes at m.py:8 (g) (m.py:9 in its base)" in message, message


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


def test_the_prs_line_kept_where_the_union_deletes_the_defs_other_copy_is_no_loss(cli: Cli, small: Small) -> None:
    # pr/1 flushes at g's top too; the union keeps pr/1's and, of its own, deletes g's trailing flush
    one = FLUSH.replace("    if a:\n", "    req.flush()\n    if a:\n")
    union = _with_two(one.replace("    req.flush()\n    return a\n", "    return a\n"))
    assert union.count("req.flush()") == 1 and union.index("req.flush") < union.index("if a:")
    r = _run(cli, small, one, _with_two(FLUSH), union, base=FLUSH)
    assert _absent(r) == [], r["warnings"]
