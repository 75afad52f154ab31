"""A PR's call the union writes in its words, read beyond the one line (h243; the case of test_provided_rewrite).

Upstream rewrote f's whole body, pr/1 adds `X = log(b)`, pr/2 a call; the union, made on the rewrite, keeps pr/1's
line in a new form (`X = log(bb)`) and writes a form of pr/2's call where it was, or not. Two gaps of the
one-line reading (pipeline.lineroles, h235):
- a call spanning lines had no argument count, so a union dropping an argument passed (`send_report(\\n d,\\n
  'weekly',\\n)` carried as `send_report(dd)`, exit 0): its arguments are counted on its whole text, read from the
  blob (pipeline.callspan), unknown only for `*args`/`**kw`;
- a name bound to the function earlier in the enclosing def, outside the union's hunk (`sr = send_report`), was not
  read: `sr(dd, 'weekly')` was warned dropped (pipeline.callspan.bindings_before)."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, F, _coverage

KEEP = "    X = log(bb)\n"


def _two(lines: str) -> str:
    """pr/2: F with LINES after `d = 4`."""
    return F.replace("    d = 4\n", "    d = 4\n" + lines)


def _union(two: str, on: str = RW) -> str:
    """The union on ON (upstream's rewrite): pr/1's line in a new form, TWO where pr/2's line was."""
    return on.replace("    bb = 2\n", "    bb = 2\n" + KEEP).replace("    dd = 4\n", "    dd = 4\n" + two)


def _verdicts(cli: Cli, small: Small, two: str, union: str, up: str = RW, command: str = "explain"
              ) -> tuple[list, dict]:
    r = _on_bases(cli, small, ONE, two, union, base=F, base2=None, up=up, command=command)
    return _lines(r), r


SPLIT = _two("    send_report(\n        d,\n        'weekly',\n    )\n")           # pr/2's call over four lines
TRICKY = _two("    send_report(\n        d,  # the day, as given (sic)\n        'weekly, (or so',\n    )\n")

COUNTED = {
    # pr/2's call spans lines: two arguments, counted on its whole text
    "theirs-split-one-argument-written": (SPLIT, "    send_report(dd)\n", False),
    "theirs-split-both-written": (SPLIT, "    send_report(dd, 'weekly')\n", True),
    "theirs-split-comments-and-strings": (TRICKY, "    send_report(dd)\n", False),
    "theirs-split-comments-and-strings-both": (TRICKY, "    send_report(dd, 'weekly')\n", True),
    # the union's call spans lines (it was uncounted: any such call carried pr/2's)
    "mine-split-one-argument": (_two("    send_report(d, 'weekly')\n"), "    send_report(\n        dd)\n", False),
    "mine-split-both": (_two("    send_report(d, 'weekly')\n"), "    send_report(\n        dd,\n        'weekly')\n",
                        True),
    "mine-split-a-star": (_two("    send_report(d, 'weekly')\n"), "    send_report(\n        *args,\n    )\n", True),
    "both-split": (SPLIT, "    send_report(dd,\n                'weekly')\n", True),
}


@pytest.mark.parametrize("name", list(COUNTED))
def test_a_call_spanning_lines_has_its_arguments_counted(cli: Cli, small: Small, name: str) -> None:
    two, written, carried = COUNTED[name]
    lines, r = _verdicts(cli, small, two, _union(written))
    n = two.count("\n") - F.count("\n")
    assert lines == ([] if carried else [("pr/2", [9, 8 + n])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")


def test_a_call_spanning_lines_dropping_an_argument_is_warned_by_sync(cli: Cli, small: Small) -> None:
    lines, r = _verdicts(cli, small, SPLIT, _union("    send_report(dd)\n"), command="sync")
    assert lines == [("pr/2", [9, 12])], r["warnings"]
    [message] = [w["message"] for w in r["warnings"] if w["kind"] == "provided-absent"]
    # no line of the union's own does what the hunk does: the whole of it, as for the call on one line
    assert "lacks its hunk m.py:9-12 (f), in no region carry/union reconciled" in message, message


TWO = _two("    send_report(d, 'weekly')\n")


def _bound(binding: str) -> str:
    """Upstream's rewrite with BINDING at the top of f's body, outside the union's hunk."""
    return RW.replace("def f():\n", "def f():\n" + binding)


BOUND = {
    "bound-above": ("    sr = send_report\n", "    sr(dd, 'weekly')\n", True),
    "bound-to-a-modules-function": ("    sr = reporting.send_report\n", "    sr(dd, period='weekly')\n", True),
    "bound-dropping-an-argument": ("    sr = send_report\n", "    sr(dd)\n", False),
    "bound-to-another-function": ("    sr = log\n", "    sr(dd, 'weekly')\n", False),
    "bound-then-rebound": ("    sr = send_report\n    sr = log\n", "    sr(dd, 'weekly')\n", False),
    "bound-then-assigned": ("    sr = send_report\n    sr = make()\n", "    sr(dd, 'weekly')\n", False),
    "bound-in-a-nested-def": ("    def inner():\n        sr = send_report\n        sr(aa)\n",
                              "    sr(dd, 'weekly')\n", False),
    "bound-in-a-branch": ("    if aa:\n        sr = send_report\n", "    sr(dd, 'weekly')\n", True),
    "bound-in-a-string": ('    """\n    sr = send_report\n    """\n', "    sr(dd, 'weekly')\n", False),
}


@pytest.mark.parametrize("name", list(BOUND))
def test_a_name_bound_above_in_the_def_calls_what_it_is_bound_to(cli: Cli, small: Small, name: str) -> None:
    binding, written, carried = BOUND[name]
    up = _bound(binding)
    lines, r = _verdicts(cli, small, TWO, _union(written, up), up=up)
    assert lines == ([] if carried else [("pr/2", [9, 9])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")


def test_a_name_bound_in_another_def_is_not_read(cli: Cli, small: Small) -> None:
    up = RW.replace("import os\n", "import os\n\n\ndef g():\n    sr = send_report\n    return sr\n")
    lines, r = _verdicts(cli, small, TWO, _union("    sr(dd, 'weekly')\n", up), up=up)
    assert lines == [("pr/2", [9, 9])], r["warnings"]
