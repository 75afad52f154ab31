"""explain's overlap map leaves out the pairs of an entry sync skips as merged upstream (h244, from h239's trial
on sqlalchemy: a PR squashed upstream, skipped `merged-upstream`, was listed as overlapping every PR that
touched its files, in text, Markdown and JSON alike). Its change is upstream's now: no pair of it is composed."""

from __future__ import annotations

import jsonschema

from tests.conftest import Cli, Small


def _squashed(small: Small) -> None:
    p1 = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, f"Squashed #1 ({p1[:7]})", parent="main",
                    ref="refs/heads/main")
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.pr(3, {"b.py": "x = 1\ny = 2\nz = 31\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})


def test_pairs_of_an_entry_merged_upstream_are_left_out_of_the_map(cli: Cli, small: Small,
                                                                   report_schema: dict) -> None:
    _squashed(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    code, out = cli.json(*args)
    assert code == 0 and [(e["id"], e.get("reason")) for e in out["entries"]] == [
        ("pr/1", "merged-upstream"), ("pr/2", None), ("pr/3", "conflict")], out
    assert [(o["entries"], o["kind"]) for o in out["overlaps"]] == [(["pr/2", "pr/3"], "conflict")], out
    assert out["plan"]["overlaps_left_out"] == ["pr/1"]
    jsonschema.Draft202012Validator(report_schema).validate(out)         # the contract's schema, unchanged
    text = cli(*args).stdout
    assert "overlaps (1 pairs share a file; 1 conflict; left out: the pairs of pr/1, which upstream already has " \
        "(merged-upstream))\n  conflict  pr/2 x pr/3  b.py\n\n" in text, text
    assert "pr/1 x" not in text
    markdown = cli(*args, "--format", "markdown").stdout
    assert "pr_1 ===" not in markdown and "pr_1 ---" not in markdown and "`pr/1` ×" not in markdown, markdown
    assert "| `pr/2` × `pr/3` | **conflict** |" in markdown
    assert "Left out: the pairs of `pr/1`, which upstream already has (merged-upstream)." in markdown, markdown


def test_nothing_is_said_left_out_when_no_entry_is_merged_upstream(cli: Cli, small: Small) -> None:
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.pr(3, {"b.py": "x = 1\ny = 2\nz = 31\n"})
    small.manifest([{"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})
    code, out = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["plan"]["overlaps_left_out"] == [] and len(out["overlaps"]) == 1, out
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "overlaps (1 pairs share a file; 1 conflict)\n" in text, text


def test_an_entry_merged_upstream_with_no_pair_is_not_said_left_out(cli: Cli, small: Small) -> None:
    _squashed(small)
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    small.pr(2, {"docs/c.txt": "c2\n"})                 # touches no file of pr/1's
    code, out = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["entries"][0]["reason"] == "merged-upstream", out
    assert out["overlaps"] == [] and out["plan"]["overlaps_left_out"] == [], out
