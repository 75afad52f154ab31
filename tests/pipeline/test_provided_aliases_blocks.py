"""A module alias bound again inside a block of the module's own (`if`, `try`, `for`, `with`) is no alias after it
(h262: `module_bindings` read top-level lines only, so `sr` stayed send_report after `if X: sr = make()`, and the
union's `sr(dd, 'weekly')` was taken for pr/2's `send_report(d, 'weekly')`). A def's or class's body stays its own."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_aliases import _case, _with
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import F, _coverage

MINE = "    sr(dd, 'weekly')\n"
THEIRS = "    send_report(d, 'weekly')\n"
CASES = {
    "rebound-in-an-if": ("sr = send_report\nif os.environ:\n    sr = make()\n", False),
    "rebound-in-a-try": ("sr = send_report\ntry:\n    import x\nexcept ImportError:\n    sr = None\n", False),
    "bound-in-an-if-only": ("rs = send_report\nif os.environ:\n    sr = send_report\n", False),   # may be: none
    "bound-in-a-def-of-its-own": ("sr = send_report\n\n\ndef other():\n    sr = make()\n    return sr\n\n\n", True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_module_alias_bound_again_in_a_block(cli: Cli, small: Small, name: str) -> None:
    top, carried = CASES[name]
    base, up, two, union = _case(top, "", THEIRS, MINE)
    line = 9 + top.count("\n")
    r = _on_bases(cli, small, _with(F, top).replace("    b = 2\n", "    b = 2\n    X = log(b)\n"), two, union,
                  base=base, base2=None, up=up, command="explain")
    assert _lines(r) == ([] if carried else [("pr/2", [line, line])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")
