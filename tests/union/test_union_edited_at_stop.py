"""h248 (from h244): a recorded edit the store applies at a step where the fold stops (on another file) was not
noted as gone in (`edited`), so the continue that finishes the fold missed the warning of an edit that went in
beside a resolution no longer needed (helper-88)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, edited, fresh_fold, resolve_both
from tests.union.test_union_scenarios import by_hand, union


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, cli: Cli) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def test_an_edit_applied_at_a_stop_is_warned_about_when_its_resolution_went(cli: Cli, fold: Fold) -> None:
    by_hand(cli, fold)          # pr/1 with pr/2 resolved in a.py, and pr/2's edit of line 10 recorded
    # pr/1 leaves the union, pr/3 comes in before pr/2, and pr/2, pushed again, now conflicts with it in c.txt:
    # pr/2's step applies its a.py edit (a.py merges, the resolution with pr/1 is not needed) and stops on c.txt
    fold.up.commit({"c.txt": "c by three\n"}, "three", parent=fold.base, ref="refs/pull/3/head")
    fold.up.commit({"c.txt": "c by two\n", "a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"})},
                   "two again", parent=fold.pr2, ref="refs/pull/2/head")
    text = fold.manifest.read_text()
    text = text.replace("  - pr: 1   # first fix\n", "  - pr: 3\n")        # folded in entry order: 3, then 2
    fold.manifest.write_text(re.sub(r"supersedes: .*", "supersedes: [3, 2]", text))
    stopped = union(cli, fold, "compose")
    assert stopped.exit_code == 3 and "c.txt" in stopped.output, stopped.output
    assert "  c.txt  pr/3, pr/2  " in stopped.output, stopped.output
    assert b"line 10 edited by hand\n" in (fold.scratch / "a.py").read_bytes()     # the edit went in at the stop
    resolve_both(fold.scratch / "c.txt")
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.output
    assert "warning: a.py: your recorded edit outside the conflict hunks went into the union, but a resolution " \
        "you recorded in a.py with a PR that left the union was not needed" in result.stdout, result.stdout
