"""`union status` and `union compose` say a file's partial reuse of the resolution store after their own
header line, not before it (h179, DeepSpeed: "<file>: 2 conflict hunk(s) resolved from the store; 1 not
in the resolution store" came first)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, edited, fresh_fold, resolve_both

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def carrytool(*args: str) -> tuple[int, str]:
    """Run carrytool as a terminal user does: stdout and stderr to one place, in the order they come."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(ROOT)}  # (a pipe)
    proc = subprocess.run([sys.executable, "-m", "carrytool", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env)
    return proc.returncode, proc.stdout


def test_the_store_notice_comes_after_the_header(cli: Cli, fold: Fold) -> None:
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two, v2\n"})}, "two: v2",
                   parent=fold.pr2, ref="refs/pull/2/head")
    notice = "a.py: 1 conflict hunk resolved from the store; 1 not in the resolution store"
    code, out = carrytool("union", "status", "u", *fold.args())
    assert code == 0 and notice in out, out
    assert out.index("carry/u from unions/u.patch on upstream") < out.index(notice), out
    code, out = carrytool("union", "compose", "u", *fold.args())
    assert code == 3 and notice in out, out
    assert out.index("union carry/u: the fold stopped") < out.index(notice), out
