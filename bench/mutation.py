"""`make mutation`: mutation score of the test suite over the core packages (mutmut 3), sampled or full.

The core packages (`CORE`): pipeline, asserts, union, manifest, and the git layer's ref and redaction code
(urls.py, repolock.py and Git's ref methods, in refs.py and processes.py). All their mutants are
generated once (cheap) in a private copy of the repository under $TMPDIR/carrytool-mutation/core (outside
every git work tree: a mutant that breaks a test repository must never reach this one;
CARRYTOOL_MUTATION_DIR moves it).

Checking every mutant costs hours on a 2-core machine (each runs the tests covering its function), so the
default is a **seeded, stratified random sample**: the same fraction of each package's mutants, drawn with
a fixed seed, the list written to docs/mutation-sample.txt so a rerun checks exactly the same mutants. The
report (docs/mutation.md) gives killed / survived / timeout / no tests per package, the sampled score
with a 95% Wilson interval for the whole population, and every survivor's diff.

Per-mutant cost is kept low by mutmut itself: it runs the whole suite once under its trampolines to learn
which test reaches which function (cached in mutants/mutmut-stats.json, reused by later runs; new tests
are added incrementally), then runs, per mutant, only the tests that reach the mutated function, fastest
first, stopping at the first failure (-x): a killed mutant usually costs one quick test.

    python -m bench.mutation                          # the sample (default size, seed), within a budget
    python -m bench.mutation --size 400 --seed 7      # another sample
    python -m bench.mutation --only-survivors         # recheck the last run's survivors (after new tests)
    python -m bench.mutation --all                    # every mutant of the core packages (hours)
    python -m bench.mutation --list                   # count the mutants per package and module, no run
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("CARRYTOOL_MUTATION_DIR") or Path(tempfile.gettempdir()) / "carrytool-mutation")
SAMPLE_FILE = ROOT / "docs" / "mutation-sample.txt"
RESULTS_FILE = ROOT / "docs" / "mutation-results.json"
NOTES_FILE = ROOT / "bench" / "mutation_notes.json"     # surviving mutant -> why it lives (or what kills it)

# package -> files mutated (globs under carrytool/)
CORE: dict[str, list[str]] = {
    "pipeline": ["pipeline/*"],
    "asserts": ["asserts/*"],
    "union": ["union/*"],
    "manifest": ["manifest/*"],
    "gitlayer": ["gitlayer/urls.py", "gitlayer/repolock.py", "gitlayer/git.py", "gitlayer/refs.py",
                 "gitlayer/processes.py"],
}
# of the Git class's modules (git.py, and refs.py and processes.py, the modules of the mixins that hold its ref
# code) only the ref code is in the population: reading, moving (compare-and-swap), deleting and listing refs,
# and routing ref-taking calls to the user's repository (IN_REPO)
GIT_MODULES = ("git", "refs", "processes")
GIT_REF_FUNCTIONS = ("rev_parse", "ref_value", "update_ref", "delete_ref", "refs", "checked_out_branches",
                     "env", "_subcommand")
# Tests that cannot pass under mutmut's instrumentation, whatever the mutant: every mutated function is
# called through a trampoline, which doubles the stack depth of recursive code, so the tests that analyse
# the deepest code Python parses hit the recursion limit before the code under test does.
# The three `slow` tests are left out too: they build the wheel and install the GitHub Action from a git
# checkout of the repository (the private copy is not one); they test packaging, not the core packages.
# test_two_syncs_at_once_one_writer_one_result, as it was when the committed run started, raced two
# processes and needed them to overlap in time, which they did not under mutmut's slower execution; it is
# deterministic since (CARRYTOOL_PAUSE_AT). It stays deselected until the next full run: changing the
# pytest arguments makes mutmut discard every result and recollect its stats.
DESELECT = ["tests/asserts/test_asserts_robustness.py::test_deeply_nested_calls_fail_cleanly_or_hold",
            "tests/pipeline/test_reliability.py::test_two_syncs_at_once_one_writer_one_result"]
DEFAULT_SIZE = 200
DEFAULT_SEED = 16
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", None: "not checked"}


def package_of(mutant: str) -> str:
    return mutant.split(".")[1]


def in_population(mutant: str) -> bool:
    parts = mutant.split(".")
    if parts[1] != "gitlayer" or parts[2] not in GIT_MODULES:
        return True
    func = re.sub(r"__mutmut_\d+$", "", parts[3]).split("ǁ")[-1]
    return func.removeprefix("x_") in GIT_REF_FUNCTIONS


def _files() -> list[str]:
    """The repository's files as the work tree has them (tracked and new, not ignored): what tests may read."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return sorted(p for p in set(out.split("\0")) if p and (ROOT / p).is_file())


def prepare(work: Path) -> Path:
    """A private copy of the repository (refreshed, keeping mutmut's mutants/ and its cache of stats).

    mutmut runs the tests in work/mutants/, where it copies the sources and `also_copy`: every top-level
    entry of the repository, so that tests reading README.md, docs/ or .pre-commit-hooks.yaml find them."""
    work.mkdir(parents=True, exist_ok=True)
    files = _files()
    tops = sorted({f.split("/", 1)[0] for f in files})
    for top in tops:
        dst = work / top
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
    for f in files:
        (work / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, work / f)
    only = ", ".join(f'"carrytool/{g}"' for globs in CORE.values() for g in globs)
    deselect = ", ".join(f'"--deselect", "{t}"' for t in DESELECT)
    also = ", ".join(f'"{t}"' for t in tops if t not in ("carrytool", "tests", "pyproject.toml"))
    text = (work / "pyproject.toml").read_text()
    text += (f'\n[tool.mutmut]\nsource_paths = ["carrytool"]\nonly_mutate = [{only}]\n'
             f'also_copy = [{also}]\n'
             f'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "--basetemp={work}/tmp", "-m", "not slow", '
             f'{deselect}]\n'
             f'pytest_add_cli_args_test_selection = ["tests"]\n')
    (work / "pyproject.toml").write_text(text)
    return work


GENERATE = """
import os
from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants, set_mutant_under_test, setup_source_paths
set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
copy_src_dir(); copy_also_copy_files(); setup_source_paths(); create_mutants(2)
"""


# `mutmut run NAMES...`, without its second clean run: before checking mutants mutmut runs the tests of
# the chosen mutants once unmutated, which for a sample of the core packages is nearly the whole suite
# again (10-15 minutes here). The first run's stats collection already ran the whole suite unmutated
# (and stops on any failure); `make test` is the check that it passes. Names come from a file (--all
# gives thousands).
RUN = """
import sys
import mutmut.__main__ as m
names = open("mutmut-names.txt").read().split()
make = m.get_mutant_runner
def runner(n):
    r = make(n)
    r.run_clean_tests = lambda tests: 0
    return r
m.get_mutant_runner = runner
sys.argv = ["mutmut", "run", "--max-children", sys.argv[1], *names]
m.cli()
"""


def generate(work: Path) -> None:
    subprocess.run([sys.executable, "-c", GENERATE], cwd=work, check=True, stdout=subprocess.DEVNULL)


def statuses(work: Path) -> dict[str, int | None]:
    """Every generated mutant of the population -> its exit code (None: not checked)."""
    out: dict[str, int | None] = {}
    for meta in sorted((work / "mutants" / "carrytool").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        for name, code in data["exit_code_by_key"].items():
            if in_population(name):
                out[name] = code
    return out


def draw(population: list[str], size: int, seed: int) -> list[str]:
    """Proportional stratified sample: the same fraction of every package, seeded, at least 1 per package."""
    fraction = min(1.0, size / len(population))
    rng = random.Random(seed)
    chosen: list[str] = []
    for pkg in CORE:
        names = sorted(n for n in population if package_of(n) == pkg)
        if names:
            chosen += rng.sample(names, max(1, round(fraction * len(names))))
    return sorted(chosen)


def forget(work: Path, names: list[str]) -> None:
    """Mark NAMES not checked, so a run stopped by the budget reports what it did not reach as such (and
    not a verdict left by an earlier run)."""
    wanted = set(names)
    for meta in (work / "mutants" / "carrytool").rglob("*.py.meta"):
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        if wanted & codes.keys():
            codes.update({n: None for n in wanted & codes.keys()})
            meta.write_text(json.dumps(data, indent=4))


def run_mutmut(work: Path, names: list[str], max_children: int, budget: float | None) -> tuple[float, int | None]:
    forget(work, names)
    start = time.monotonic()
    log = (work / "mutmut-run.log").open("w")
    (work / "mutmut-names.txt").write_text("\n".join(names) + "\n")
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(max_children)],
                            cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        proc.wait(timeout=budget * 60 if budget else None)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return time.monotonic() - start, proc.returncode


SHOW = """
import json, sys
from mutmut.__main__ import find_mutant, get_diff_for_mutant
out = {}
for name in sys.argv[1:]:
    diff = get_diff_for_mutant(name, path=find_mutant(name).path)
    out[name] = "\\n".join(line for line in diff.splitlines()
                           if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))
print(json.dumps(out))
"""


def show_all(work: Path, names: list[str]) -> dict[str, str]:
    """Each mutant's diff (the changed lines), in one process."""
    if not names:
        return {}
    proc = subprocess.run([sys.executable, "-c", SHOW, *names], cwd=work, capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def count(population: dict[str, int | None]) -> dict[str, dict[str, int]]:
    per: dict[str, dict[str, int]] = {}
    for name in population:
        pkg = package_of(name)
        module = name.split(".")[2]
        module = "__init__" if module.startswith("x") and "__mutmut_" in module else module
        per.setdefault(pkg, {}).setdefault(module, 0)
        per[pkg][module] += 1
    return per


def tally(codes: dict[str, int | None]) -> dict[str, int]:
    t = {"killed": 0, "survived": 0, "timeout": 0, "no tests": 0, "not checked": 0, "other": 0}
    for code in codes.values():
        s = STATUS.get(code, "other")
        t[s if s in t else "other"] += 1
    return t


METHOD = """\
`make mutation` (`python -m bench.mutation`, [mutmut](https://pypi.org/project/mutmut/), the optional extra
`carrytool[mutation]`; **not** part of `make test`). Run it before a release and after a large change.

- **Population**: every mutant mutmut generates in the core packages: `carrytool/pipeline`,
  `carrytool/asserts`, `carrytool/union`, `carrytool/manifest`, and the git layer's ref and redaction code
  (`gitlayer/urls.py`, `gitlayer/repolock.py`, and the ref methods of `Git` in `gitlayer/refs.py` and
  `gitlayer/processes.py`: `rev_parse`, `ref_value`, `update_ref`, `delete_ref`, `refs`,
  `checked_out_branches`, `env`, `_subcommand`).
  Generating them takes about a minute; checking them all (`make mutation MUTATION_ARGS=--all`) takes many
  hours on a 2-core machine.
- **Sample**: the same fraction of every package, drawn with a fixed seed; the list is
  `docs/mutation-sample.txt` and a rerun checks exactly those mutants (mutmut names a mutant by function
  and number: after the code of a function changes, its sampled names may mean other mutants; draw a new
  sample with `--seed`). The score of the sample estimates the population's; the 95% interval is Wilson's.
- **Per mutant**: mutmut first runs the whole suite once under its trampolines to learn which test reaches
  which function (cached in `mutants/mutmut-stats.json` in the private copy; new tests are added
  incrementally); then each mutant runs only the tests that reach its function, fastest first, and stops
  at the first failure. One child (see `--max-children` in bench/mutation.py: children sharing a `--basetemp` kill mutants that live). The run happens in a private copy under
  `$TMPDIR/carrytool-mutation/core` (outside every git work tree; `CARRYTOOL_MUTATION_DIR` moves it).
- **Left out of the run** (instrumentation, not the code): the three `slow` tests (they build the wheel and
  install the GitHub Action from a git checkout, which the private copy is not) and
  `test_deeply_nested_calls_fail_cleanly_or_hold` (mutmut's trampolines double the stack depth of every
  mutated function, so the deepest expression Python parses exhausts the stack). Fewer tests can only
  lower the score.
- *killed*: a test failed; *timeout*: the tests ran past mutmut's limit (counted as killed); *survived*:
  every test reaching the function passed; *no tests*: no test reaches the function (counted as not
  killed); *not checked*: the budget ran out first (left out of the score).""".splitlines()


def render(population: dict[str, int | None], sample: list[str], seed: int, size: int, minutes: float,
           survivors: dict[str, str], notes: dict[str, str], header: list[str]) -> str:
    per = count(population)
    lines = ["# Mutation score", "", *header, "", *METHOD, "",
             "| package | mutants (population) | sampled | killed | timeout | survived | no tests | not checked "
             "| score (killed+timeout of checked) | 95% CI |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    all_codes = {n: population[n] for n in sample}
    for pkg in CORE:
        codes = {n: c for n, c in all_codes.items() if package_of(n) == pkg}
        t = tally(codes)
        checked = len(codes) - t["not checked"]
        k = t["killed"] + t["timeout"]
        lo, hi = wilson(k, checked)
        score = f"{k}/{checked} = {100 * k / checked:.1f}%" if checked else "-"
        lines.append(f"| {pkg} | {sum(per.get(pkg, {}).values())} | {len(codes)} | {t['killed']} | {t['timeout']} "
                     f"| {t['survived']} | {t['no tests']} | {t['not checked']} | {score} "
                     f"| {100 * lo:.0f}-{100 * hi:.0f}% |")
    t = tally(all_codes)
    checked = len(all_codes) - t["not checked"]
    k = t["killed"] + t["timeout"]
    lo, hi = wilson(k, checked)
    lines.append(f"| **all** | {len(population)} | {len(all_codes)} | {t['killed']} | {t['timeout']} | "
                 f"{t['survived']} | {t['no tests']} | {t['not checked']} | "
                 f"**{k}/{checked} = {100 * k / max(checked, 1):.1f}%** | {100 * lo:.1f}-{100 * hi:.1f}% |")
    lines += ["", f"Sample: {len(sample)} of {len(population)} mutants, seed {seed}, requested size {size}, "
              f"proportional per package; run time {minutes:.0f} min. The list: `docs/mutation-sample.txt`.", "",
              "Mutants per module (population):", ""]
    for pkg, modules in per.items():
        lines.append(f"- {pkg}: " + ", ".join(f"{m} {c}" for m, c in sorted(modules.items())))
    if survivors:
        lines += ["", "## Sampled mutants not killed", ""]
        for mutant, diff in sorted(survivors.items()):
            status = STATUS.get(population[mutant], "other")
            why = notes.get(mutant, "not yet killed or explained")
            lines += [f"- `{mutant}` ({status}): {why}", "", "  ```diff", *(f"  {d}" for d in diff.splitlines()),
                      "  ```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="mutants in the sample")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--all", action="store_true", help="every mutant of the core packages (hours)")
    parser.add_argument("--list", action="store_true", help="generate and count the mutants, run nothing")
    parser.add_argument("--only-survivors", action="store_true",
                        help="recheck the sampled mutants not killed by the last run (after adding tests)")
    parser.add_argument("--sample-file", type=Path, default=SAMPLE_FILE,
                        help="reuse this list of mutants when it exists (the committed one reproduces the report)")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the report from the results in the private copy (a run still going, or one stopped), "
                             "run nothing")
    # One child by default: the children share pytest's --basetemp, which each pytest session empties when
    # it starts, so a second child deletes the first one's test repositories and its tests fail: mutants
    # "killed" by that, not by the code (the run of 2026-11-30 with 2 children reported 200 of 200 killed;
    # rechecked alone, some were not). More children need a --basetemp per child.
    parser.add_argument("--max-children", type=int, default=1)
    parser.add_argument("--budget", type=float, default=90, metavar="MINUTES",
                        help="stop after this long (mutants not reached: not checked); 0: no limit")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "mutation.md")
    args = parser.parse_args(argv)

    work = WORK / "core"
    if not args.report_only:
        prepare(work)
        print(f"mutation: generating mutants in {work} ...", file=sys.stderr, flush=True)
        generate(work)
    population = statuses(work)
    if args.list:
        for pkg, modules in count(population).items():
            print(f"{pkg}: {sum(modules.values())}  " + ", ".join(f"{m} {c}" for m, c in sorted(modules.items())))
        print(f"total: {len(population)}")
        return 0
    if args.all:
        sample = sorted(population)
    elif args.sample_file.exists() and args.size == DEFAULT_SIZE and args.seed == DEFAULT_SEED:
        sample = [n for n in args.sample_file.read_text().split() if n in population]
    else:
        sample = draw(sorted(population), args.size, args.seed)
        args.sample_file.write_text("\n".join(sample) + "\n")
    previous = json.loads(RESULTS_FILE.read_text()) if RESULTS_FILE.exists() else {}
    to_run = sample
    if args.only_survivors:
        to_run = [n for n in sample if STATUS.get(previous.get(n), "") not in ("killed", "timeout")]
    print(f"mutation: {len(population)} mutants, checking {len(to_run)} ...", file=sys.stderr, flush=True)
    if args.report_only:
        to_run = []
    seconds, rc = run_mutmut(work, to_run, args.max_children, args.budget or None) if to_run else (0.0, 0)
    population = statuses(work)
    results = {n: population[n] for n in sample}
    if args.only_survivors:  # mutants killed before stay killed: tests were only added
        results.update({n: c for n, c in previous.items() if n in results and n not in to_run})
        population.update(results)
    RESULTS_FILE.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    survivors = show_all(work, [n for n, c in results.items()
                                if STATUS.get(c, "other") not in ("killed", "timeout", "not checked")])
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    header = [f"Last run: {datetime.date.today()}, Python {platform.python_version()}, {git}, "
              f"mutmut {_mutmut_version()}, {os.cpu_count()} cores, load average at the end "
              f"{os.getloadavg()[0]:.1f}; mutmut exit {rc}."]
    notes = json.loads(NOTES_FILE.read_text()) if NOTES_FILE.exists() else {}
    args.report.write_text(render(population, sample, args.seed, args.size, seconds / 60, survivors, notes, header))
    print(f"mutation: report in {args.report}", file=sys.stderr)
    return 0


def _mutmut_version() -> str:
    from importlib.metadata import version
    return version("mutmut")


if __name__ == "__main__":
    sys.exit(main())
