"""Markdown prose keeps its own code spans (h262: the polars trial's `diff --format markdown` wrote "\\`sync
--report FILE\\`", which GitHub shows as literal backticks around plain text): a `span` in carrytool's words,
or in an assert's message, is a code span; the rest stays literal text, its Markdown specials escaped."""

from __future__ import annotations

from carrytool.render.safe import md_prose


def test_code_spans_stay_code_and_the_rest_is_escaped() -> None:
    assert md_prose("each night's `sync --report FILE`: carrytool diff OLD.json NEW.json") == \
        "each night's `sync --report FILE`: carrytool diff OLD.json NEW.json"
    assert md_prose("LazyFrame.with_row_index: `non-deterministic` is not in *it*") == \
        "LazyFrame.with\\_row\\_index: `non-deterministic` is not in \\*it\\*"


def test_what_a_span_holds_cannot_leave_it_and_a_lone_backtick_is_literal() -> None:
    assert md_prose("a `x | y` and [link](u)") == "a <code>x &#124; y</code> and \\[link\\](u)"
    assert md_prose("`<img src=x>` then one ` alone") == "<code>&lt;img src=x&gt;</code> then one \\` alone"
    assert md_prose("no spans *here*") == "no spans \\*here\\*"
