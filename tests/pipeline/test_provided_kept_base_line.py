"""h240's review of the union accounting's per-line rules (h235, h238, and the lead's `changed` rule).

A PR hunk's line equal to a base line another PR's hunk there removes is reconciled only where the union took that
other PR's side: it holds one of that PR's lines there, or that PR only deletes. The seed's union (#45612 keeps
`allocator.wake_up(tags)` in both branches of its handshake, #45398 makes it `backend.resume(tags)`) writes
#45398's call: reconciled. A union writing the handshake with neither call lost the wake-up of both PRs: the kept
line read as "the other side taken", the other side's line as "reconciled" by #45612's hunk, exit 0."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite_dropped_line import W_BACKEND, W_SYNC, W


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_kept_base_line_is_lost_where_the_union_drops_both_sides_of_it(cli: Cli, small: Small,
                                                                           command: str) -> None:
    union = W_SYNC.replace("            allocator.wake_up(tags)\n", "            pass\n").replace(
        "        allocator.wake_up(tags)\n", "        pass\n").replace(
        "# symmetric handshake", "# symmetric handshake, resume later")          # the union's own words
    assert "wake_up" not in union and "resume(" not in union and "handshake(ok)" in union
    r = _on_bases(cli, small, W_BACKEND, W_SYNC, union, base=W, base2=None, up=W, command=command)
    assert _lines(r), r["warnings"]          # was [] (exit 0, nothing said): no wake-up call left at all


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_kept_base_line_another_pr_deletes_is_reconciled_where_the_union_deletes_it(cli: Cli, small: Small,
                                                                                       command: str) -> None:
    gone = W.replace("    allocator.wake_up(tags)\n", "")                  # pr/1 deletes the call outright
    union = W_SYNC.replace("            allocator.wake_up(tags)\n", "            pass\n").replace(
        "        allocator.wake_up(tags)\n", "        pass\n").replace(
        "# symmetric handshake", "# symmetric handshake, no wake-up any more")
    r = _on_bases(cli, small, gone, W_SYNC, union, base=W, base2=None, up=W, command=command)
    assert _lines(r) == [], r["warnings"]
