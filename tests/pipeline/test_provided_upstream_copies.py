"""A PR's line counted against the copies upstream has in its def, not its head's (helper-169's review of
helper-168's copy count).

A line of a PR's hunk stood in the union only beyond the copies the PR's head has in that def. But the union is
built on upstream, not on the PR's head: a copy upstream added since the PR branched made up for the PR's copy
the union deleted (a silent loss), and a copy of the head's that upstream deleted was wanted in the union, so the
PR's own line, kept, was warned `dropped at a stop of the fold?`. The same for each line of a block judged
loosely (pipeline.standing._re_expressed)."""
from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_repeats import _absent, _run

BASE = ("def compute(a):\n    return a\n\n\n"
        "def g(a, req):\n    if a:\n        pass\n    req.flush()\n    return a\n")
TWO = BASE.replace("    return a\n\n\ndef g", "    return a + 0\n\n\ndef g")


def _with_two(text: str) -> str:
    return text.replace("    return a\n\n\ndef g", "    return a + 0\n\n\ndef g")


def test_loss_when_upstream_adds_the_same_statement_elsewhere_in_the_def(cli: Cli, small: Small) -> None:
    # upstream puts req.on_failure(None) in the if-branch; pr/1 adds it before the flush; the union drops pr/1's
    up = BASE.replace("    if a:\n", "    req.on_failure(None)\n    if a:\n")
    one = BASE.replace("    req.flush()\n", "    req.on_failure(None)\n    req.flush()\n")
    union = up.replace("    return a\n\n\ndef g", "    return a + 0\n\n\ndef g")
    assert union.count("req.on_failure(None)") == 1
    r = _run(cli, small, one, TWO, union, base=BASE, up=up)
    assert [(e, lines) for e, lines, _m in _absent(r)] == [("pr/1", [8, 8])], r["warnings"]


def test_false_alarm_when_upstream_deletes_the_heads_other_copy(cli: Cli, small: Small) -> None:
    # pr/1 adds req.flush() in the if-branch; upstream deletes the trailing req.flush(); the union keeps pr/1's
    one = BASE.replace("    if a:\n", "    req.flush()\n    if a:\n")
    up = BASE.replace("    req.flush()\n    return a\n", "    return a\n")
    union = one.replace("    req.flush()\n    return a\n", "    return a\n").replace(
        "    return a\n\n\ndef g", "    return a + 0\n\n\ndef g")
    assert union.count("req.flush()") == 1 and union.index("req.flush") < union.index("if a:")
    r = _run(cli, small, one, TWO, union, base=BASE, up=up)
    assert _absent(r) == [], r["warnings"]


# a block pr/1 adds to g, judged line by line where the union does not keep it as one block
THREE = "    req.task.acks_late = True\n    {}\n    req.task.seen = []\n"


def test_a_block_line_upstream_also_adds_elsewhere_in_the_def_is_still_warned(cli: Cli, small: Small) -> None:
    up = BASE.replace("    if a:\n", "    req.on_failure(None)\n    if a:\n")
    one = BASE.replace("    req.flush()\n", THREE.format("req.on_failure(None)") + "    req.flush()\n")
    union = _with_two(up.replace("    req.flush()\n", THREE.format("req.on_failure(None)").replace(
        "    req.on_failure(None)\n", "") + "    req.flush()\n"))
    assert union.count("req.on_failure(None)") == 1
    [(entry, lines, message)] = _absent(_run(cli, small, one, TWO, union, base=BASE, up=up))
    assert (entry, lines) == ("pr/1", [8, 10])
    assert "lacks line 9 of its hunk m.py:8-10 (g)" in message, message


def test_a_block_line_whose_other_copy_upstream_deleted_stands(cli: Cli, small: Small) -> None:
    # pr/1's block holds req.flush(), which g has at its end; upstream deletes that one; the union keeps pr/1's
    # lines, moving its last after the if-branch (no longer one block: judged line by line)
    one = BASE.replace("    if a:\n", THREE.format("req.flush()") + "    if a:\n")
    up = BASE.replace("    req.flush()\n    return a\n", "    return a\n")
    union = _with_two(up.replace("    if a:\n", THREE.format("req.flush()").replace("    req.task.seen = []\n", "")
                                 + "    if a:\n").replace("        pass\n", "        pass\n    req.task.seen = []\n"))
    assert union.count("req.flush()") == 1
    r = _run(cli, small, one, TWO, union, base=BASE, up=up)
    assert _absent(r) == [], r["warnings"]


def test_a_line_upstream_took_at_the_prs_place_is_one_copy(cli: Cli, small: Small) -> None:
    # upstream took pr/1's line where pr/1 adds it (editing the next line): the union's one copy is pr/1's too
    one = BASE.replace("    req.flush()\n", "    req.on_failure(None)\n    req.flush()\n")
    up = one.replace("    req.flush()\n", "    req.flush(wait=True)\n")
    union = _with_two(up)
    r = _run(cli, small, one, TWO, union, base=BASE, up=up)
    assert _absent(r) == [], r["warnings"]
