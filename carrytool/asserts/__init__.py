"""The assertion engine: pure functions judging hot-path assertions on source text.

`evaluate` judges one `AssertSpec` on a file's bytes; `evaluate_all` judges many, reading and parsing
each file once. See docs/assertions.md for what every check means. The engine is imported on first
use, so reading a manifest (which needs only the spec types) stays cheap. `mutants.judge_mutants`
breaks the code the asserts guard, in memory, and says which asserts catch which break.
"""

from __future__ import annotations

from typing import Any

from carrytool.asserts.spec import CHECKS, AssertOutcome, AssertSpec

__all__ = ["AssertSpec", "AssertOutcome", "evaluate", "evaluate_all", "CHECKS"]


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "evaluate_all"):
        from carrytool.asserts import engine

        return getattr(engine, name)
    raise AttributeError(name)
