"""`verify --mutants` as text: the score, each assert's kills, the surviving mutants, then the outcome."""

from __future__ import annotations

import json
from typing import TextIO

from carrytool.pipeline.hunks import counted
from carrytool.pipeline.verify import MutantsReport


def render_mutants_json(report: MutantsReport, stream: TextIO) -> None:
    """Write the report in the contract's JSON shape (plus `failing`, `target`, `kills`)."""
    stream.write(json.dumps(report.to_json(), indent=2) + "\n")


def render_mutants_text(report: MutantsReport, stream: TextIO, *, verbose: bool = False) -> None:
    """Write the score, a table of asserts, the survivors (and with verbose, who killed what)."""
    judged = report.judged
    where = report.target.get("rev") or report.target.get("path", "")
    total = len(judged.mutants)
    print(f"Mutation score: {judged.killed}/{total} mutants killed ({_percent(judged.score)}) in {where}",
          file=stream)
    for outcome in report.failing:
        print(f"  FAIL {outcome.name}: {outcome.message} (fails on the unmutated tree: it kills nothing)",
              file=stream)
    rows = judged.per_assert()
    width = max([len(str(row["name"])) for row in rows] + [6])
    print(f"\n  {'assert'.ljust(width)}  kills  own mutants killed", file=stream)
    for row in rows:
        own = f"{row['own_killed']}/{row['mutants']}" + (f" ({_percent(row['score'])})" if row["mutants"] else "")
        print(f"  {str(row['name']).ljust(width)}  {str(row['killed']).rjust(5)}  {own}", file=stream)
    survivors = judged.survivors()
    if survivors:
        print(f"\nSurvivors ({len(survivors)}): no assert fails on these mutants of the guarded code", file=stream)
        for mutant in survivors:
            print(f"  {_at(mutant)}  {mutant.scope or '-'}  {mutant.mutation}: {mutant.description}", file=stream)
    if verbose:
        print("\nKills:", file=stream)
        for mutant, names in zip(judged.mutants, judged.killers):
            if names:
                print(f"  {_at(mutant)}  {mutant.mutation}: {mutant.description} <- {', '.join(names)}", file=stream)
    print("", file=stream)
    if report.failing:
        fail = "fails" if len(report.failing) == 1 else "fail"
        print(f"verify --mutants: {counted(len(report.failing), 'assert')} already {fail} on the unmutated tree "
              "(exit 1)",
              file=stream)
    elif not total:
        print("verify --mutants: no mutant could be derived (these asserts guard no call: defines, mentions and "
              "text checks are not mutated), so the score 0% says nothing is proven", file=stream)
    else:
        print(f"verify --mutants: score {_percent(judged.score)} ({judged.killed} of {total} killed, "
              f"{len(survivors)} survive)", file=stream)


def _at(mutant) -> str:  # noqa: ANN001 - asserts.mutants.Mutant
    return f"{mutant.file}:{mutant.line}"


def _percent(value: object) -> str:
    return f"{float(value) * 100:.0f}%" if isinstance(value, (int, float)) else "-"
