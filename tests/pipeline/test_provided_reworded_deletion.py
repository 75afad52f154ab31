"""A line a PR deletes that upstream reworded since, kept by the union in its new words (h236's review).

pr/2 deletes `audit(d)` from f; upstream then rewrote f's body (`d` -> `dd`, `audit(d)` -> `audit(dd)`); the union,
made on the rewrite, keeps `audit(dd)`. The deletion was looked for by its removed text, byte for byte: `audit(d)`
is nowhere, so it read "verbatim", exit 0, though the call pr/2 removes is still in the fork
(reworded.reworded_kept)."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import RW, F, _coverage

FA = F.replace("    d = 4\n", "    d = 4\n    audit(d)\n")
RWA = RW.replace("    dd = 4\n", "    dd = 4\n    audit(dd)\n")
ONE = FA.replace("import os", "import os, sys")         # pr/1: elsewhere, no region of f's
TWO = F                                                 # pr/2 deletes `audit(d)`
ON = RWA.replace("import os", "import os, sys")         # the union: pr/1's line, on upstream's rewrite


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("kept", ["    audit(dd)\n", "    audit(dd, strict=True)\n"], ids=["upstreams", "tweaked"])
def test_a_deleted_line_upstream_reworded_kept_by_the_union_is_lost(cli: Cli, small: Small, command: str,
                                                                    kept: str) -> None:
    union = ON.replace("    audit(dd)\n", kept)
    r = _on_bases(cli, small, ONE, TWO, union, base=FA, base2=None, up=RWA, command=command)
    assert _lines(r) == [("pr/2", [8, 8])], r["warnings"]       # was [] (no warning): `audit(dd)` is still there
    if command == "sync":
        [message] = [w["message"] for w in r["warnings"] if w["kind"] == "provided-absent"]
        # one line, said as one (h259: "the lines"): upstream's line kept is in no region, the tweaked one the
        # union's words for it
        region = "no other PR it folds changes that line or the next ones" if kept == "    audit(dd)\n" else \
            "the union writes lines of its own there doing what the removed line does: it is kept in its words"
        assert "still has the line pr/2 removes at m.py:8 (f) (m.py:9 in its base), in no region carry/union " \
            f"reconciled ({region}" in message, message
    else:
        assert _coverage(r) == [("pr/1", [1, 1], "verbatim"), ("pr/2", [8, 8], "absent")]


@pytest.mark.parametrize("union", [ON.replace("    audit(dd)\n", ""),
                                   ON.replace("    audit(dd)\n", "").replace("    aa = 1\n", "    aa = 1\n    audit(aa)\n")],
                         ids=["deleted", "another-call-elsewhere"])
def test_a_deleted_line_upstream_reworded_deleted_by_the_union_is_verbatim(cli: Cli, small: Small,
                                                                           union: str) -> None:
    r = _on_bases(cli, small, ONE, TWO, union, base=FA, base2=None, up=RWA, command="explain")
    assert _lines(r) == [], r["warnings"]
    assert _coverage(r) == [("pr/1", [1, 1], "verbatim"), ("pr/2", [8, 8], "verbatim")]
