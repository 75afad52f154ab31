"""The assertion engine: pure functions judging hot-path assertions on source text.

`evaluate` judges one `AssertSpec` on a file's bytes; `evaluate_all` judges many, reading and parsing
each file once. See docs/assertions.md for what every check means.
"""

from __future__ import annotations

from carrytool.asserts.engine import evaluate, evaluate_all
from carrytool.asserts.spec import CHECKS, AssertOutcome, AssertSpec

__all__ = ["AssertSpec", "AssertOutcome", "evaluate", "evaluate_all", "CHECKS"]
