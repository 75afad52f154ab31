"""`python -m bench.explain_cold_parts MANIFEST`: what each of explain's caches saves, on a real corpus.

A cold `explain` (no `<git dir>/carrytool/cache`) costs more than a warm one; this says which cache the
difference comes from. As bench.explain_real: a fresh bare repository is synced once (not timed) and one
untimed `explain --offline` fills the cache, which is kept aside. Then each repeat runs, in rotating order,
`sync --offline --dry-run`, `explain --offline` warm (the whole cache), cold (none) and, for each kind of
cache in the folder (`pairs`, `upstreamhas`, `scopes`, ...: a file's or folder's name up to its first `-`),
warm without that kind. Prints medians of CPU time (the process and its git children) and each run's cost
over warm: a kind's row is what its cache saves.
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


def _kinds(cache: Path) -> list[str]:
    return sorted({path.name.split("-")[0] for path in cache.iterdir()})


def _put(kept: Path, cache: Path, without: str | None) -> None:
    """CACHE as KEPT holds it, less the kind WITHOUT (None: all of it)."""
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(kept, cache)
    for path in cache.iterdir():
        if without is not None and path.name.split("-")[0] == without:
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.explain_cold_parts", description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", metavar="NAME", help="also write the output to bench/results/NAME.md")
    args = parser.parse_args()
    recorder = Recorder(args.record)
    precompile()
    scratch = Path(tempfile.mkdtemp(prefix="bench-explain-parts-"))
    try:
        repo = scratch / "repo.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        base = carrytool_argv()
        tail = ["-m", str(args.manifest), "--repo", str(repo), "--format", "json"]
        subprocess.run(base + ["sync"] + tail, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cache = repo / "carrytool" / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        subprocess.run(base + ["explain", "--offline"] + tail, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kept = scratch / "kept"
        shutil.copytree(cache, kept)
        kinds = _kinds(kept)
        names = ["sync", "explain (warm)", "explain (cold)"] + [f"explain without {kind}" for kind in kinds]
        runs: dict[str, list[float]] = {name: [] for name in names}
        for n in range(args.repeat):
            for name in names[n % len(names):] + names[:n % len(names)]:
                if name == "explain (cold)":
                    shutil.rmtree(cache, ignore_errors=True)
                elif name.startswith("explain"):
                    _put(kept, cache, name.split()[-1] if "without" in name else None)
                command = ["sync", "--offline", "--dry-run"] if name == "sync" else ["explain", "--offline"]
                runs[name].append(time_process(base + command + tail, scratch).cpu_seconds)
        git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[-1]
        cpu = {name: statistics.median(values) for name, values in runs.items()}
        lines = [f"git {git}, median CPU s of {args.repeat} interleaved run(s)", "",
                 "| command | CPU s | over warm s | CPU / sync |", "|---|---|---|---|"]
        for name in names:
            over = "" if name == "sync" else f"{cpu[name] - cpu['explain (warm)']:+.2f}"
            lines.append(f"| {name} | {cpu[name]:.2f} | {over} | {cpu[name] / cpu['sync']:.2f}x |")
        print("\n".join(lines))
        recorder.write("\n".join(lines))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
