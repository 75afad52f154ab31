"""`python -m bench`: generate (or reuse) workloads, run the runners side by side, print the tables.

Modes (one per run): a named or custom workload (default), `--scale`, `--real PATH`, `--explain`
(explain's overlap map for many entries), `--verify` (100 asserts on a large file).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from .generate import load_or_generate
from .real import real_inputs
from .record import Recorder
from .report import render_compare, render_scale, write_json
from .runners import RUNNERS, Inputs
from .session import Summary, measure
from .workloads import DEFAULT_WORKLOAD, WORKLOADS, Workload, scale_workloads

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; runner names are checked here, so a typo fails before any work."""
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--workload", choices=sorted(WORKLOADS), default=DEFAULT_WORKLOAD,
                      help=f"a named synthetic workload (default: {DEFAULT_WORKLOAD})")
    mode.add_argument("--scale", action="store_true",
                      help="chain and carrytool as entries grow (fixed tree) and as the tree grows (fixed entries)")
    mode.add_argument("--real", type=Path, metavar="BARE_REPO",
                      help="a real bare repository with refs/pull/N/head: carry its newest --prs PRs")
    mode.add_argument("--explain", action="store_true",
                      help="time explain's plan and overlap map for --prs entries (default 500)")
    mode.add_argument("--verify", action="store_true", help="time verify with 100 asserts on a large file")
    g = p.add_argument_group("workload parameters (override the named workload)")
    g.add_argument("--files", type=int, help="files in upstream's tree")
    g.add_argument("--prs", type=int, help="PRs to carry (with --real: how many, default 60)")
    g.add_argument("--pr-files", type=int, help="mean files per PR")
    g.add_argument("--change-lines", type=int, help="lines each change rewrites")
    g.add_argument("--overlap", type=float, help="fraction of PRs touching a file an earlier PR touches")
    g.add_argument("--conflict", type=float, help="fraction of overlapping PRs that conflict")
    g.add_argument("--seed", type=int, help="the generator's seed")
    p.add_argument("--no-explain", action="store_true", help="with --real: do not also time `explain --offline`")
    p.add_argument("--with-explain", action="store_true",
                   help="on a synthetic workload: also time `explain --offline` (with --real it is timed by default)")
    p.add_argument("--within", type=int, default=300, metavar="N",
                   help="with --real: only PRs whose merge base is among the branch's last N commits")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="interleaved runs per runner (median)")
    p.add_argument("--runners", default=",".join(RUNNERS), help=f"comma-separated, of {', '.join(RUNNERS)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where workloads are generated and cached")
    p.add_argument("--fresh", action="store_true", help="regenerate cached workloads")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every measurement as JSON")
    p.add_argument("--record", metavar="NAME", help="also write the output, with machine, load, git version, date and "
                   "command, to bench/results/NAME.md (what the docs quote)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-run progress on stderr")
    args = p.parse_args(argv)
    args.runner_names = [r for r in args.runners.split(",") if r]
    unknown = [r for r in args.runner_names if r not in RUNNERS]
    if unknown or args.repeat < 1:
        p.error(f"unknown runner(s) {', '.join(unknown)}" if unknown else "--repeat must be >= 1")
    return args


def custom_workload(args: argparse.Namespace) -> Workload:
    """The named workload with the parameters given on the command line."""
    base = WORKLOADS[args.workload]
    keys = ("files", "prs", "pr_files", "change_lines", "overlap", "conflict", "seed")
    changes = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    return replace(base, **changes) if changes else base


def synthetic_inputs(w: Workload, args: argparse.Namespace) -> Inputs:
    """Generate W (or reuse it from the cache) and describe it as runner inputs."""
    if not args.quiet:
        print(f"workload {w.describe()} (seed {w.seed})", file=sys.stderr, flush=True)
    g = load_or_generate(w, args.out, fresh=args.fresh)
    return Inputs(w.name, g.upstream, g.manifest, g.prs, files=w.files, explain=args.with_explain)


def run_workload(args: argparse.Namespace) -> tuple[list[Summary], str]:
    """The default mode: every runner on one synthetic workload, side by side."""
    inputs = synthetic_inputs(custom_workload(args), args)
    summary = measure(inputs, args.runner_names, args.repeat, args.out / "scratch", verbose=not args.quiet)
    return [summary], render_compare([summary], args.repeat)


def run_scale(args: argparse.Namespace) -> tuple[list[Summary], str]:
    """--scale: chain and carrytool (naive is too slow to sweep; start-up does not depend on size) over the entries and files sweeps."""
    runners = [r for r in args.runner_names if r not in ("naive", "startup")]
    summaries = []
    for group, w in scale_workloads():
        inputs = synthetic_inputs(w, args)
        summaries.append(measure(inputs, runners, args.repeat, args.out / "scratch", group=group,
                                 verbose=not args.quiet))
    return summaries, render_scale(summaries, args.repeat)


def run_real(args: argparse.Namespace) -> tuple[list[Summary], str]:
    """--real PATH: every runner on the newest PRs of a real bare repository."""
    repo: Path = args.real
    out = args.out / f"real-{repo.resolve().parent.name}-{repo.name}"
    inputs = replace(real_inputs(repo, out, count=args.prs or 60, within=args.within), explain=not args.no_explain)
    if not args.quiet:
        print(f"real corpus {repo}: {len(inputs.prs)} PRs, {inputs.files:,} files", file=sys.stderr, flush=True)
    summary = measure(inputs, args.runner_names, args.repeat, args.out / "scratch", verbose=not args.quiet)
    return [summary], render_compare([summary], args.repeat)


def run_explain(args: argparse.Namespace) -> tuple[list[Summary], str]:
    """--explain: the plan, evidence and sparse overlap map for many entries (bench/explain_overlaps.py)."""
    proc = subprocess.run([sys.executable, "-m", "bench.explain_overlaps", "--entries", str(args.prs or 500),
                           *(["--files", str(args.files)] if args.files else [])], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    return [], proc.stdout + proc.stderr


def run_verify(args: argparse.Namespace) -> tuple[list[Summary], str]:
    """--verify: 100 asserts on a ~6,000-line file, engine and whole process."""
    from .verify_speed import run

    return [], run()


Mode = Callable[[argparse.Namespace], "tuple[list[Summary], str]"]


def pick_mode(args: argparse.Namespace) -> Mode:
    """The mode the flags ask for."""
    if args.explain:
        return run_explain
    if args.verify:
        return run_verify
    if args.scale:
        return run_scale
    if args.real is not None:
        return run_real
    return run_workload


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen mode, print its table (stdout; progress goes to stderr), optionally write JSON."""
    args = parse_args(argv)
    recorder = Recorder(args.record)
    precompile()
    summaries, text = pick_mode(args)(args)
    print(text)
    recorder.write(text)
    if args.json:
        write_json(summaries, args.json)
    return 0


def precompile() -> None:
    """Byte-compile carrytool first, as an installed wheel is: a run must not pay for compiling its own
    modules (PYTHONDONTWRITEBYTECODE would make every run pay)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "carrytool"), quiet=1)


if __name__ == "__main__":
    sys.exit(main())
