"""`python -m bench.explain_real MANIFEST`: `explain` beside `sync` on a real corpus, interleaved.

MANIFEST is one `python -m bench --real PATH` wrote (bench/out/real-*/manifest.yaml). A fresh bare
repository is synced once (the fetch is not timed); then each repeat runs, in rotating order,
`sync --offline --dry-run`, `explain --offline` with the scope cache of earlier runs (warm) and
`explain --offline` with `<git dir>/carrytool/cache` removed first (cold: every blob parsed); one untimed
`explain` before the timed runs fills the cache, so even the first warm run is warm.
Prints medians of wall and CPU time (the process and its git children) and the ratios to sync.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from .__main__ import precompile
from .record import Recorder
from .runners import carrytool_argv, time_process


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.explain_real", description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", metavar="NAME", help="also write the output to bench/results/NAME.md")
    args = parser.parse_args()
    recorder = Recorder(args.record)
    lines: list[str] = []
    precompile()
    scratch = Path(tempfile.mkdtemp(prefix="bench-explain-"))
    try:
        repo = scratch / "repo.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        base = carrytool_argv()
        subprocess.run(base + ["sync", "-m", str(args.manifest), "--repo", str(repo), "--format", "json"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # one untimed explain fills the scope cache: otherwise the first "warm" run (every run with
        # --repeat 1) parses every blob, as a cold one does
        subprocess.run(base + ["explain", "--offline", "-m", str(args.manifest), "--repo", str(repo), "--format",
                               "json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cmds = {"sync": ["sync", "--offline", "--dry-run"], "explain (warm)": ["explain", "--offline"],
                "explain (cold)": ["explain", "--offline"]}
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cmds}
        names = list(cmds)
        for n in range(args.repeat):
            for name in names[n % 3:] + names[:n % 3]:
                if name.endswith("(cold)"):
                    shutil.rmtree(repo / "carrytool" / "cache", ignore_errors=True)
                argv = base + cmds[name] + ["-m", str(args.manifest), "--repo", str(repo), "--format", "json"]
                timed = time_process(argv, scratch)
                runs[name].append((timed.seconds, timed.cpu_seconds, timed.rss_mb))
        git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[-1]
        sync_wall = statistics.median(r[0] for r in runs["sync"])
        sync_cpu = statistics.median(r[1] for r in runs["sync"])
        lines += [f"git {git}, median of {args.repeat} interleaved run(s)", "",
                  "| command | wall s | CPU s | wall / sync | CPU / sync | RSS MB |", "|---|---|---|---|---|---|"]
        for name, values in runs.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            rss = max(v[2] for v in values)
            lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / sync_wall:.2f}x | {cpu / sync_cpu:.2f}x | {rss:.0f} |")
        print("\n".join(lines))
        recorder.write("\n".join(lines))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
