"""What the union check reads of a call a PR's hunk changes many argument lines of (h264's review of 235a6a1).

A PR's line continuing a call opened above its hunk is that call's change (carried._continued): the call read whole
as the PR's base had it and as it makes it. That was read again for each such line, and the call's first line's
calls again for each (line_carries' forms): a PR changing 100 argument lines of a 1,500-line call at the end of
mypy's checker.py took 9.7 s to explain, 1.6 s before 235a6a1. Now each call is read once a hunk."""
from __future__ import annotations

import pytest

from carrytool.pipeline import callspan
from tests.conftest import Cli, Small
from tests.pipeline.test_provided_repeats import _absent, _run

N, K = 120, 40          # the call's argument lines, those pr/1 changes


def _texts() -> tuple[str, str, str, str, str]:
    call = "TABLE = build(\n" + "".join(f"    'k{i}',\n" for i in range(N)) + ")\n"
    base = "import os\n\n\n" + call + "\n\ndef g(b):\n    return b\n"
    one = base
    for i in range(10, 10 + K):
        one = one.replace(f"    'k{i}',\n", f"    'k{i}_x',\n")
    up = base.replace(f"    'k{N - 1}',\n)\n", f"    'k{N - 1}',\n) or 0\n")
    union = up.replace(") or 0\n", ") or fb(0)\n").replace("    return b\n", "    return b + 1\n")
    for i in range(10, 10 + K, 2):          # the union keeps the base's values, two a line: pr/1's change lost
        union = union.replace(f"    'k{i}',\n    'k{i + 1}',\n", f"    'k{i}', 'k{i + 1}',\n")
    return base, one, base.replace("    return b\n", "    return b + 1\n"), up, union


def test_a_call_many_argument_lines_of_a_pr_continue_is_read_once(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    base, one, two, up, union = _texts()
    reads: list[int] = []
    statement = callspan._statement

    def counted(lines, at, opened, **kw):  # type: ignore[no-untyped-def]
        if lines[at].startswith(b"TABLE = build("):
            reads.append(at)
        return statement(lines, at, opened, **kw)

    monkeypatch.setattr(callspan, "_statement", counted)
    report = _run(cli, small, one, two, union, base=base, up=up, command="explain")
    assert [(pr, lines) for pr, lines, _m in _absent(report)] == [("pr/1", [15, 15 + K - 1])], report["warnings"]
    assert len(reads) <= 12, len(reads)         # not one or more a line of the PR's (K)
