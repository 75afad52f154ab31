"""explain's text fits its content, not the widest cell or the terminal (h262: on pola-rs/polars every line of
the overlap table ran to some 170 columns: a pair's long note padded the entries column of every row in a pipe,
and rich padded each line with blanks to the terminal's edge)."""

from __future__ import annotations

import io
import re

import pytest

from carrytool.demo.scenario import Scenario
from carrytool.gitlayer.git import Git
from carrytool.manifest.load import load_manifest
from carrytool.render.explain_text import render_explain
from carrytool.review.explain import explain
from tests.conftest import Cli


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_line_ends_in_blanks_on_a_terminal(demo: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "200")
    with Git(demo.work) as git:
        ex = explain(load_manifest(demo.manifest), git)
    term = _Terminal()
    render_explain(ex, term)  # type: ignore[arg-type]
    lines = re.sub(r"\x1b\[[0-9;]*m", "", term.getvalue()).splitlines()
    assert "\x1b[" in term.getvalue() and any("pr/45552" in line for line in lines)
    assert [line for line in lines if line != line.rstrip()] == []


def test_a_long_pair_does_not_pad_every_row_in_a_pipe(cli: Cli, demo: Scenario) -> None:
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work)
    assert result.exit_code == 0, result.output
    # the union's pairs carry a note "(the union provides it)": it runs on in its own row, not in the others
    assert "  pr/45552 x pr/45554  vllm/device_allocator/cumem.py\n" in result.stdout, result.stdout
    assert "pr/45398 x carry/wake-path-union (the union provides it)  vllm/v1/worker/gpu_worker.py (conflicts)" \
        in result.stdout
    assert [line for line in result.stdout.splitlines() if line != line.rstrip()] == []
