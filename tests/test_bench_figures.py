"""Every performance figure in the prose is quoted from a committed bench result (bench/results/*.md).

The rule:
- A *figure* is a number with a unit of time, ratio or size: `1.77 s`, `45 ms`, `0.50x`, `33 MB`; inside a
  figures region, also any decimal number (table cells such as `4.32 (40.3)`, a score such as `86.6%`).
  Shares outside a region (`about 20% of PRs`, a mutation score in a table) are not performance figures.
- In README.md, docs/*.md and bench/README.md, every figure outside fenced code and outside generated
  regions must sit inside a region `<!-- figures: FILE [FILE ...] -->` ... `<!-- /figures -->`, and
  must appear, as the same number, in one of the FILEs it names.
- A FILE is a result the bench wrote with `--record` (bench/results/NAME.md, its header naming the
  command, date, machine, load and git version), or docs/mutation.md (written by `make mutation`).
So a figure typed by hand, or left behind when a result is replaced, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import gendocs

ROOT = Path(__file__).resolve().parents[1]
PROSE = tuple(d for d in (*gendocs.DOCS, "bench/README.md") if d != "docs/mutation.md")   # mutation.md is a source
SOURCES = ("docs/mutation.md",)            # besides bench/results/*.md: written by `make mutation`
REGION = re.compile(r"^<!-- figures: ([^>]+?) -->\n(.*?)^<!-- /figures -->$", re.M | re.S)
NUMBER = r"(?<![\w.#/-])(\d[\d,]*(?:\.\d+)?)"
UNIT_FIGURE = re.compile(NUMBER + r"(?:\s?(?:ms|s|MB)|x)(?![\w])")
DECIMAL = re.compile(r"(?<![\w.#/-])(\d[\d,]*\.\d+)(?![\w.])")
FENCED = re.compile(r"^(`{3,}).*?^\1$", re.M | re.S)
HEADER = ("- command: `", "- date: ", "- machine: ", "- git: ")   # and the load average, on its own line or the machine's


def without_code(text: str) -> str:
    return FENCED.sub("", gendocs.REGION.sub("", text))


def figures(text: str, *, decimals: bool) -> set[str]:
    text = re.sub(r"`[^`\n]*`", "", text)                  # inline code: options, paths, versions
    found = {m[1] for m in UNIT_FIGURE.finditer(text)}
    if decimals:
        found |= {m[1] for m in DECIMAL.finditer(text)}
    return found


def numbers_in(path: Path) -> set[str]:
    return {m[1] for m in re.finditer(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)", path.read_text())}


def result_files() -> list[Path]:
    return sorted((ROOT / "bench" / "results").glob("*.md"))


def test_every_result_file_says_how_it_was_made() -> None:
    assert result_files(), "no committed bench result under bench/results/"
    for path in result_files():
        text = path.read_text()
        for field in HEADER:
            assert f"\n{field}" in text, f"{path.name}: no '{field.strip()}' line: write results with --record"
        assert re.search(r"^- (load average|machine: .*load average)", text, flags=re.M), \
            f"{path.name}: no load average: write results with --record"
        assert not re.search(r"^- git: unknown", text, flags=re.M), path.name


@pytest.mark.parametrize("doc", PROSE)
def test_every_figure_in_the_prose_is_quoted_from_a_committed_result(doc: str) -> None:
    text = without_code((ROOT / doc).read_text())
    for match in REGION.finditer(text):
        sources = match[1].split()
        for source in sources:
            assert source.startswith("bench/results/") or source in SOURCES, f"{doc}: {source} is not a bench result"
            assert (ROOT / source).is_file(), f"{doc}: figures quoted from {source}, which is not committed"
        known = set().union(*(numbers_in(ROOT / s) for s in sources))
        missing = sorted(figures(match[2], decimals=True) - known)
        assert not missing, f"{doc}: figures {missing} are in none of {sources}: quote the committed results"
    outside = figures(REGION.sub("", text), decimals=False)
    assert not outside, (f"{doc}: figures {sorted(outside)} outside a <!-- figures: bench/results/... --> region: "
                         "quote them from a committed bench result")


def test_the_rule_catches_a_stale_or_unquoted_figure(tmp_path: Path) -> None:
    result = ROOT / "bench" / "results"
    source = next(p for p in result_files() if "```" in p.read_text())
    name = source.relative_to(ROOT)
    some = sorted(figures(source.read_text().split("```", 1)[1], decimals=True))[0]
    quoted = f"<!-- figures: {name} -->\nit takes {some} s\n<!-- /figures -->\n"
    assert not (figures(REGION.sub("", quoted), decimals=False))
    region = REGION.search(quoted)
    assert figures(region[2], decimals=True) <= numbers_in(ROOT / region[1])
    stale = quoted.replace(f"{some} s", "9.87 s")
    assert not figures(REGION.search(stale)[2], decimals=True) <= numbers_in(ROOT / region[1])
    assert figures("plan + overlap map: 1.5 s + 1.9 s, 2.0x sync", decimals=False) == {"1.5", "1.9", "2.0"}
    assert not figures("#45398 x #45612, 20,000 files, git 2.39, `--repeat 2`", decimals=False)
    assert result.is_dir()


def test_the_readme_tables_are_the_ones_bench_readme_makes_from_the_results_it_quotes() -> None:
    """Every row of the README's performance tables is what `python -m bench.readme` prints from the files
    the region names (in their order): a table edited by hand, or left behind when a result is recorded
    again, fails here. The rows may be in any of the three tables, and no generated row may be missing."""
    from bench import readme

    text = (ROOT / "README.md").read_text()
    region = next(m for m in REGION.finditer(text) if "bench/results/real-" in m[1])
    sources = [ROOT / s for s in region[1].split() if re.search(r"/(real|synthetic)-", s)]
    results = [readme.read(p) for p in sources]
    real = [r for r in results if r.workload.startswith("real:")]
    real_rows, explain_rows, synthetic_rows = readme.tables(results)
    rows = real_rows + explain_rows + synthetic_rows
    assert real_rows and explain_rows and synthetic_rows
    table_rows = [line for line in region[2].splitlines() if line.startswith("| ") and "bench/results/" in line]
    assert table_rows == rows, "regenerate with `python -m bench.readme " + " ".join(region[1].split()) + "`"
    # and every row that misses a goal is named with its ratio where the prose lists what was not reached;
    # the rows that reach one are, or the range of their ratios (lowest to highest) is, in 'Reached'
    before, after = region[2].split("\nNot reached", 1)
    not_reached, reached = " ".join(after.split()), " ".join(before.split("\nReached:", 1)[1].split())
    for goal, groups in readme.classified(real):
        for result, ratio in groups["missed"]:
            assert ratio in not_reached, f"{result.path.name} misses '{goal}' ({ratio}): not in 'Not reached'"
        ratios = sorted((ratio for _result, ratio in groups["reached"]), key=lambda v: float(v.rstrip("x")))
        if ratios and f"({ratios[0]} to {ratios[-1]})" not in reached and f"({ratios[0]} to {ratios[-1]};" \
                not in reached:
            absent = [ratio for ratio in ratios if ratio not in reached]
            assert not absent, f"'{goal}' is reached with {absent}: not in 'Reached' (nor the range {ratios[0]} " \
                               f"to {ratios[-1]})"


def test_bench_readme_reads_a_result_file(tmp_path: Path) -> None:
    from bench import readme

    source = ROOT / "bench" / "results" / "real-pytest-git2.39.md"
    result = readme.read(source)
    assert result.git.startswith("2.39")
    corpus = readme.corpus_name(result)
    assert corpus.startswith("pytest-dev/pytest, ") and corpus.endswith(" files")
    row = readme.real_row(result)
    assert row.count(" | ") == 9 and f"**{result.cell(readme.CPU, 'carrytool CPU s')}**" in row
    edited = tmp_path / source.name
    edited.write_text(source.read_text().replace("| real:pytest-dev+pytest", "| real:someone+else", 1))
    assert readme.corpus_name(readme.read(edited)).startswith("someone/else, ")
    # a title paragraph wrapped over two lines still names its table; a result without explain's table
    # (`--no-explain`) is summed up without it; a file with no bench table is named, not a traceback
    text = source.read_text()
    wrapped = tmp_path / "wrapped.md"
    wrapped.write_text(text.replace("CPU time (user + sys", "CPU time\n(user + sys", 1))
    assert readme.read(wrapped).tables[readme.CPU] == result.tables[readme.CPU]
    no_explain = tmp_path / "no-explain.md"
    no_explain.write_text(text.split("\nexplain beside sync")[0] + "\n```\n")
    plain = readme.read(no_explain)
    assert readme.EXPLAIN not in plain.tables and readme.goals([plain], [])
    empty = tmp_path / "empty.md"
    empty.write_text("# nothing\n")
    with pytest.raises(SystemExit, match="empty.md"):
        readme.read(empty)
