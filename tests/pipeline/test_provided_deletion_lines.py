"""A PR's pure deletion of several lines, judged line by line (h255).

A deletion was looked for as one block: the tree holding its removed lines together, where the PR removes them,
was the deletion left out. A union keeping one of three lines the PR deletes held no such block, and the deletion
read carried (`verbatim`, exit 0, the line the PR removes still in the fork). Each line that does something is
also looked for on its own (standing.kept_lines), in its def/class, else between the deletion's neighbours."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import git  # noqa: F401 (a fixture: both gits)
from tests.pipeline.test_provided_deletions import M, _sync

F = "import os\n\n\ndef f(a):\n    b = 1\n    x = log(a, 1)\n    y = audit(a)\n    z = 3\n    return x\n"
ONE = F.replace("    x = log(a, 1)\n    y = audit(a)\n    z = 3\n", "")
OTHER = F.replace("import os\n", "import os, sys\n")         # pr/2, apart


def _absent(report: dict) -> list[tuple[str, list[int], str]]:
    return [(w["entry"], w["lines"], w["message"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


@pytest.mark.parametrize(("kept", "base_line"), [("    y = audit(a)\n", 7), ("    x = log(a, 1)\n", 6),
                                                 ("    z = 3\n", 8)], ids=["middle", "first", "last"])
def test_a_union_keeping_one_line_of_a_deletion_is_warned(cli: Cli, small: Small, git: str, kept: str,  # noqa: F811
                                                          base_line: int) -> None:
    union = ONE.replace("    b = 1\n", "    b = 1\n" + kept).replace("import os\n", "import os, sys\n")
    [(entry, lines, message)] = _absent(_sync(cli, small, "m.py", F, {1: ONE, 2: OTHER}, union))
    assert (entry, lines) == ("pr/1", [5, 5])
    assert f"still has the line pr/1 removes at m.py:5 (f) (m.py:{base_line} in its base)" in message, message


def test_a_union_keeping_two_lines_apart_names_both(cli: Cli, small: Small) -> None:
    union = F.replace("    y = audit(a)\n", "").replace("import os\n", "import os, sys\n")
    [(_e, _l, message)] = _absent(_sync(cli, small, "m.py", F, {1: ONE, 2: OTHER}, union))
    assert "(m.py:6-8 in its base)" in message, message


def test_a_union_deleting_every_line_carries_it(cli: Cli, small: Small, git: str) -> None:  # noqa: F811
    union = ONE.replace("import os\n", "import os, sys\n")
    assert _absent(_sync(cli, small, "m.py", F, {1: ONE, 2: OTHER}, union)) == []


def test_a_kept_lines_copy_the_prs_head_has_is_no_loss(cli: Cli, small: Small) -> None:
    # the PR deletes `z = 3` here and writes it again further down: the union doing so too carries it
    one = ONE.replace("    return x\n", "    z = 3\n    return x\n")
    union = one.replace("import os\n", "import os, sys\n")
    assert _absent(_sync(cli, small, "m.py", F, {1: one, 2: OTHER}, union)) == []


def test_a_kept_comment_is_no_loss(cli: Cli, small: Small) -> None:
    text = F.replace("    y = audit(a)\n", "    # audited below\n    y = audit(a)\n")
    one = text.replace("    x = log(a, 1)\n    # audited below\n    y = audit(a)\n    z = 3\n", "")
    union = one.replace("    b = 1\n", "    b = 1\n    # audited below\n").replace("import os\n", "import os, sys\n")
    other = text.replace("import os\n", "import os, sys\n")
    assert _absent(_sync(cli, small, "m.py", text, {1: one, 2: other}, union)) == []


@pytest.mark.parametrize(("gone", "said"), [("FLAG = True\n", "5"), ("B = 2\n", "4-7")], ids=["one", "two-apart"])
def test_a_module_level_line_kept_between_the_deletions_neighbours_is_warned(cli: Cli, small: Small, gone: str,
                                                                             said: str) -> None:
    # pr/1 deletes FLAG, B and C; the union keeps one or two of them (passing over the others it keeps)
    one = M.replace("FLAG = True\nB = 2\n\nC = 3\n", "")
    other = M.replace("Z = 9\n", "Z = 90\n")
    union = M.replace("C = 3\n", "" if gone != "B = 2\n" else "C = 3\n").replace(gone, "").replace("Z = 9\n", "Z = 90\n")
    [(entry, _l, message)] = _absent(_sync(cli, small, "n.py", M, {1: one, 2: other}, union))
    assert entry == "pr/1" and f"(n.py:{said} in its base)" in message, message


def test_a_module_level_line_elsewhere_is_no_loss(cli: Cli, small: Small) -> None:
    one = M.replace("FLAG = True\nB = 2\n", "")
    other = M.replace("Z = 9\n", "Z = 90\n")
    union = one.replace("Z = 9\n", "Z = 90\nB = 2\n")
    assert _absent(_sync(cli, small, "n.py", M, {1: one, 2: other}, union)) == []


def test_outside_python_a_kept_line_is_warned(cli: Cli, small: Small) -> None:
    text = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"
    one = text.replace("gamma\ndelta\nepsilon\n", "")
    other = text.replace("theta\n", "theta!\n")
    union = text.replace("gamma\n", "").replace("epsilon\n", "").replace("theta\n", "theta!\n")
    [(entry, _l, message)] = _absent(_sync(cli, small, "notes.txt", text, {1: one, 2: other}, union))
    assert entry == "pr/1" and "(notes.txt:4 in its base)" in message, message
