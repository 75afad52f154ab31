"""The README's performance tables, and which goal each row reaches, from committed bench results.

    python -m bench.readme bench/results/real-*-git2.*.md bench/results/synthetic-issue7-git2.*.md

prints the three tables of README.md's "Figures" section (real corpora side by side, explain beside
sync, the synthetic workload), then the rows that reach or miss each goal of issue 17, with their
figures. Every number is copied from the files named, so the prose that quotes them passes
tests/test_bench_figures.py. Real corpora come in the order of the files given.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

HEADER_GIT = re.compile(r"^- git: (\S+)", re.M)


@dataclass
class Result:
    path: Path
    git: str
    tables: dict[str, dict[str, str]] = field(default_factory=dict)   # table title -> column -> cell
    workload: str = ""

    @property
    def link(self) -> str:
        return f"[{self.path.name}](bench/results/{self.path.name})"

    def cell(self, table: str, column: str) -> str:
        return self.tables[table][column]


def _tables(text: str) -> dict[str, dict[str, str]]:
    """Each markdown table of TEXT (its one data row), by the first words of the paragraph before it (its
    first line: the words before a comma, colon or parenthesis)."""
    out: dict[str, dict[str, str]] = {}
    title = ""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        starts = n == 0 or not lines[n - 1].strip() or lines[n - 1].startswith(("|", "```"))
        if line.strip() and not line.startswith(("|", "```")) and starts:
            title = re.split(r"[,:(]", line)[0].strip()
        if line.startswith("| workload") and n + 2 < len(lines):
            head = [c.strip() for c in line.strip("|").split("|")]
            row = [c.strip() for c in lines[n + 2].strip("|").split("|")]
            out[title] = dict(zip(head, row))
    return out


def read(path: Path) -> Result:
    try:
        text = path.read_text()
    except OSError as exc:
        raise SystemExit(f"{path}: {exc.strerror}") from None
    git = HEADER_GIT.search(text)
    result = Result(path, git[1] if git else "?", _tables(text))
    if WALL not in result.tables:
        raise SystemExit(f"{path}: no side-by-side table of the bench (`python -m bench ... --record`)")
    result.workload = result.tables[WALL]["workload"]
    return result


WALL, CPU, EXPLAIN, STARTUP = "wall time", "CPU time", "explain beside sync", "CLI start-up"


def _pair(r: Result, cpu_column: str, wall_column: str, bold: bool = False) -> str:
    cpu = r.cell(CPU, cpu_column)
    return f"{'**' + cpu + '**' if bold else cpu} ({r.cell(WALL, wall_column)})"


def corpus_name(r: Result) -> str:
    """`real:python+mypy (1,921 files, 60 PRs)` -> `python/mypy, 1,921 files`."""
    m = re.match(r"real:([^ ]+) \(([\d,]+ files)", r.workload)
    return f"{m[1].replace('+', '/')}, {m[2]}" if m else r.workload


def real_row(r: Result) -> str:
    cells = [f"{corpus_name(r)} ({r.link})", r.git,
             _pair(r, "naive CPU s", "naive s"), _pair(r, "chain CPU s", "chain s"),
             _pair(r, "carrytool CPU s", "carrytool s", bold=True), _pair(r, "(warm) CPU s", "(warm) s"),
             f"{_pair(r, 'naive/carrytool', 'naive/carrytool', bold=True)}; "
             f"warm {_pair(r, 'naive/(warm)', 'naive/(warm)')}",
             f"{_pair(r, 'carrytool/chain', 'carrytool/chain', bold=True)}; "
             f"warm {_pair(r, '(warm)/chain', '(warm)/chain')}",
             f"{r.cell(WALL, 'applied chain')}, {r.cell(WALL, 'applied carrytool')}; "
             f"{r.cell(WALL, 'same tree as chain')}",
             r.cell(WALL, "carrytool RSS MB")]
    return "| " + " | ".join(cells) + " |"


def explain_row(r: Result) -> str:
    e = r.tables[EXPLAIN]
    short = corpus_name(r).split(",")[0]
    cells = [f"{short} ({r.link})", r.git, f"{e['sync CPU s']} ({e['sync s']})",
             f"{e['explain (warm) CPU s']} ({e['explain (warm) s']}), **{e['explain (warm)/sync CPU']}** "
             f"({e['explain (warm)/sync']})",
             f"{e['explain CPU s']} ({e['explain s']}), **{e['explain/sync CPU']}** ({e['explain/sync']})",
             e["explain RSS MB"]]
    return "| " + " | ".join(cells) + " |"


def synthetic_row(r: Result) -> str:
    cells = [r.link, r.git, _pair(r, "chain CPU s", "chain s"), _pair(r, "carrytool CPU s", "carrytool s", bold=True),
             _pair(r, "(warm) CPU s", "(warm) s"), _pair(r, "carrytool/chain", "carrytool/chain"),
             r.cell(WALL, "carrytool RSS MB")]
    return "| " + " | ".join(cells) + " |"


def _who(rows: list[tuple[Result, str]]) -> str:
    return "; ".join(f"{corpus_name(r).split(',')[0]} git {r.git} ({what})" for r, what in rows) or "none"


# (label, table, column, the test a ratio passes, the limit itself: a rounded ratio there is neither)
GOALS = (("sync <= 0.7x chain, wall", WALL, "carrytool/chain", lambda v: v < 0.7, 0.7),
         ("sync <= 0.7x chain, CPU", CPU, "carrytool/chain", lambda v: v < 0.7, 0.7),
         ("naive >= 4x sync, wall", WALL, "naive/carrytool", lambda v: v > 4, 4.0),
         ("naive >= 4x sync, CPU", CPU, "naive/carrytool", lambda v: v > 4, 4.0),
         ("explain warm <= 1.5x sync, wall", EXPLAIN, "explain (warm)/sync", lambda v: v < 1.5, 1.5),
         ("explain warm <= 1.5x sync, CPU", EXPLAIN, "explain (warm)/sync CPU", lambda v: v < 1.5, 1.5),
         ("explain cold <= 1.5x sync, wall", EXPLAIN, "explain/sync", lambda v: v < 1.5, 1.5),
         ("explain cold <= 1.5x sync, CPU", EXPLAIN, "explain/sync CPU", lambda v: v < 1.5, 1.5))


def _ratio(cell: str) -> float:
    return float(cell.rstrip("x"))


def classified(real: list[Result]) -> list[tuple[str, dict[str, list[tuple[Result, str]]]]]:
    """Per goal (GOALS' order): its label and the rows, with their ratio, that reach it ("reached"), sit
    exactly at its limit ("limit": a rounded ratio, counted neither way) and miss it ("missed")."""
    out = []
    for label, table, column, test, limit in GOALS:
        groups: dict[str, list[tuple[Result, str]]] = {"reached": [], "limit": [], "missed": []}
        for r in real:
            if table in r.tables:
                ratio = r.cell(table, column)
                kind = "limit" if _ratio(ratio) == limit else "reached" if test(_ratio(ratio)) else "missed"
                groups[kind].append((r, ratio))
        out.append((label, groups))
    return out


def tables(results: list[Result]) -> tuple[list[str], list[str], list[str]]:
    """The rows of the README's three tables: real corpora side by side, explain beside sync (the real
    corpora recorded with it), the synthetic workload."""
    real = [r for r in results if r.workload.startswith("real:")]
    return ([real_row(r) for r in real], [explain_row(r) for r in real if EXPLAIN in r.tables],
            [synthetic_row(r) for r in results if not r.workload.startswith("real:")])


def goals(real: list[Result], synthetic: list[Result]) -> list[str]:
    out = []
    for label, groups in classified(real):
        total = sum(len(rows) for rows in groups.values())
        out.append(f"- {label}: reached on {len(groups['reached'])} of {total}: {_who(groups['reached'])}")
        out.append(f"  at the limit (a rounded ratio, counted neither way): {_who(groups['limit'])}")
        out.append(f"  missed: {_who(groups['missed'])}")
    same = [r for r in real if r.cell(WALL, "same tree as chain") != "yes" or
            r.cell(WALL, "applied chain") != r.cell(WALL, "applied carrytool")]
    out.append(f"- same PRs and tree as the chain: {len(real) - len(same)} of {len(real)}")
    for r in synthetic:
        out.append(f"- synthetic git {r.git}: sync {r.cell(WALL, 'carrytool s')} s wall "
                   f"({r.cell(CPU, 'carrytool CPU s')} s CPU), warm {r.cell(WALL, '(warm) s')} s")
    everything = real + synthetic
    version = _measured(r.cell(STARTUP, "--version s") for r in everything if STARTUP in r.tables)
    helps = _measured(r.cell(STARTUP, "sync --help s") for r in everything if STARTUP in r.tables)
    if version and helps:
        out.append(f"- start-up: --version {version[0]}-{version[-1]} s, sync --help {helps[0]}-{helps[-1]} s")
    rss = _measured(r.cell(WALL, "carrytool RSS MB") for r in everything)
    explain_rss = _measured(r.tables[EXPLAIN]["explain RSS MB"] for r in real if EXPLAIN in r.tables)
    out.append(f"- RSS: sync {rss[0] if rss else '-'}-{rss[-1] if rss else '-'} MB, "
               f"explain at most {explain_rss[-1] if explain_rss else '-'} MB")
    return out


def _measured(cells: Iterable[str]) -> list[str]:
    """The cells that hold a number (not `-`), in numeric order."""
    return sorted((c for c in cells if re.fullmatch(r"\d+(\.\d+)?", c)), key=float)


def main(argv: list[str]) -> int:
    results = [read(Path(p)) for p in argv]
    real = [r for r in results if r.workload.startswith("real:")]
    for rows in tables(results):
        print("\n".join(rows), end="\n\n")
    print("\n".join(goals(real, [r for r in results if r not in real])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
