"""`make mutation`: mutation score of the test suite over the core modules (mutmut 3), one module at a time.

Each module is mutated in a private copy of the repository (under $TMPDIR/carrytool-mutation/, outside
every git work tree: a mutant that breaks a test repository must never reach this one), with only the tests
that exercise it selected, so a module's run fits a 2-core machine: mutmut first runs those tests once to
learn which test covers which function, then runs, for each mutant, only the tests covering it.
The summary goes to docs/mutation.md (killed / survived / timeout / no tests, per module); survivors are
listed with their diff so each can be killed by a test or explained as equivalent.

    python -m bench.mutation                      # every module of MODULES (before a release)
    python -m bench.mutation lock urls            # some of them (after changing them)
    python -m bench.mutation --max-children 2 --report docs/mutation.md
"""

from __future__ import annotations

import argparse
import os
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

P = "tests/pipeline/"
# module (path under carrytool/) -> the tests that exercise it
MODULES: dict[str, tuple[str, list[str]]] = {
    "urls": ("gitlayer/urls.py", [P + "test_tokens.py", "tests/gitlayer/test_isolation.py"]),
    "lock": ("pipeline/lock.py", [P + "test_lock_mismatch.py", P + "test_lock_robustness.py", P + "test_tokens.py"]),
    "plan": ("pipeline/plan.py", [P + "test_landing_promises.py", P + "test_sync.py"]),
    "landing": ("pipeline/landing.py", [P + "test_landing.py", P + "test_landing_promises.py",
                                         P + "test_hard_cases.py"]),
    "sync": ("pipeline/sync.py", [P + "test_sync.py", P + "test_sync_promises.py", P + "test_lock_mismatch.py",
                                   P + "test_fail_closed.py"]),
    "resolve": ("pipeline/resolve.py", [P + "test_sync.py", P + "test_fail_closed.py", P + "test_tokens.py"]),
    "repolock": ("gitlayer/repolock.py", ["tests/gitlayer/test_repolock.py"]),
    "asserts-paths": ("asserts/paths.py", ["tests/asserts"]),
    "manifest-build": ("manifest/build.py", ["tests/manifest"]),
}
COPY = ["carrytool", "tests", "bench", "docs", "examples", "carries", "README.md", "Makefile", "pyproject.toml"]


def prepare(name: str, module: str, tests: list[str]) -> Path:
    """A private copy of the repository whose pyproject tells mutmut to mutate MODULE, testing with TESTS."""
    work = WORK / name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for item in COPY:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, work / item, ignore=shutil.ignore_patterns("__pycache__", "out"))
        else:
            shutil.copy2(src, work / item)
    text = (work / "pyproject.toml").read_text()
    quoted = ", ".join(f'"{t}"' for t in tests)
    text += (f'\n[tool.mutmut]\nsource_paths = ["carrytool"]\nonly_mutate = ["carrytool/{module}"]\n'
             f'also_copy = ["README.md", "docs", "examples", "carries", "bench", "Makefile"]\n'
             f'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "--basetemp={work}/tmp"]\n'
             f'pytest_add_cli_args_test_selection = [{quoted}]\n')
    (work / "pyproject.toml").write_text(text)
    return work


_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+): (\S.*)$")


def results(work: Path) -> dict[str, str]:
    """Mutant name -> status (killed, survived, timeout, no tests, ...) as `mutmut results --all` says."""
    proc = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=work,
                          capture_output=True, text=True)
    out = {}
    for line in proc.stdout.splitlines():
        m = _RESULT.match(line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def show(work: Path, mutant: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "mutmut", "show", mutant], cwd=work, capture_output=True,
                          text=True)
    return "\n".join(line for line in proc.stdout.splitlines() if line.startswith(("+", "-"))
                     and not line.startswith(("+++", "---")))


def run_module(name: str, max_children: int, budget: float | None, tests: list[str] | None = None) -> dict:
    """Mutate one module; past BUDGET minutes stop, and the mutants not yet run count as "not checked"."""
    module, default_tests = MODULES[name]
    tests = tests or default_tests
    work = prepare(name, module, tests)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)], cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=budget * 60 if budget else None)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
    seconds = time.monotonic() - start
    status = results(work)
    survivors = {m: show(work, m) for m, s in status.items() if s == "survived"}
    return {"name": name, "module": module, "tests": tests, "seconds": seconds, "status": status,
            "survivors": survivors, "rc": proc.returncode, "stderr": stderr[-2000:]}


def render(runs: list[dict], notes: dict[str, str]) -> str:
    lines = ["# Mutation score", "",
             "Generated by `make mutation` (`python -m bench.mutation`, mutmut 3): each module is mutated alone,",
             "tested by the tests listed for it in `bench/mutation.py`. A mutant is *killed* when a test fails.", "",
             "| module | checked | killed | survived | timeout | no tests | not checked | score (of checked) | minutes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total = killed_all = 0
    for r in runs:
        counts: dict[str, int] = {}
        for s in r["status"].values():
            counts[s] = counts.get(s, 0) + 1
        n = len(r["status"]) - counts.get("not checked", 0)
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        total, killed_all = total + n, killed_all + killed
        score = f"{100 * killed / n:.1f}%" if n else "-"
        lines.append(f"| {r['module']} | {n} | {counts.get('killed', 0)} | {counts.get('survived', 0)} | "
                     f"{counts.get('timeout', 0)} | {counts.get('no tests', 0)} | {counts.get('not checked', 0)} | {score} | {r['seconds'] / 60:.0f} |")
    if total:
        lines += ["", f"**Total: {killed_all} of {total} checked mutants killed ({100 * killed_all / total:.1f}%).**"]
    for r in runs:
        if not r["survivors"]:
            continue
        lines += ["", f"## Survivors in carrytool/{r['module']}", ""]
        for mutant, diff in sorted(r["survivors"].items()):
            why = notes.get(mutant, "not yet killed or explained")
            lines += [f"- `{mutant}`: {why}", "", "  ```diff", *(f"  {d}" for d in diff.splitlines()), "  ```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation")
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(MODULES)} (default: all)")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--budget", type=float, default=None, metavar="MINUTES",
                        help="stop each module after this long (its remaining mutants: not checked)")
    parser.add_argument("--tests", nargs="+", default=None, metavar="PATH",
                        help="test files to select instead of the module's own list (a quicker, partial run)")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "mutation.md")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; known: {', '.join(MODULES)}")
    runs = []
    for name in args.modules or list(MODULES):
        print(f"mutation: {name} ...", file=sys.stderr, flush=True)
        result = run_module(name, args.max_children, args.budget, args.tests)
        runs.append(result)
        print(f"mutation: {name}: {len(result['status'])} mutants, {len(result['survivors'])} survived, "
              f"{result['seconds'] / 60:.1f} min", file=sys.stderr, flush=True)
        args.report.write_text(render(runs, {}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
