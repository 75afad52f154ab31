"""`--record NAME`: a bench run writes what it printed to bench/results/NAME.md, with where and how it ran.

The docs quote their performance figures from these files only (tests/test_bench_figures.py checks it):
a figure in prose that no committed result file contains is stale. Each file starts with the command,
the date, the machine (CPU model and count, load average before and after), git, Python and the
carrytool commit; then the run's own output, verbatim.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]


def _out(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def command_line() -> list[str]:
    """How this process was started, as a user would type it (`python -m bench ...`)."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    if spec is not None and spec.name:
        return ["python", "-m", spec.name.removesuffix(".__main__"), *sys.argv[1:]]
    return ["python", *sys.argv]


@dataclass
class Recorder:
    """Started before the run (load, date), written after it."""

    name: str | None
    argv: list[str] = field(default_factory=lambda: command_line())
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    load_before: str = field(default_factory=load)

    def path(self) -> Path | None:
        if not self.name:
            return None
        return Path(self.name) if "/" in self.name else RESULTS / f"{self.name}.md"

    def header(self) -> str:
        # bench/results is left out: a recording run rewrites the results it recorded before
        changed = _out(["git", "status", "--porcelain", "--untracked-files=no", "--", "carrytool", "bench",
                        ":(exclude)bench/results"])
        dirty = " (with uncommitted changes to carrytool/ or bench/)" if changed else ""
        command = shlex.join(self.argv).replace(str(Path.home()), "~")
        return "\n".join([
            f"# bench result: {Path(self.name or '').name.removesuffix('.md')}",
            "",
            "Written by the bench (`--record`); the docs quote their figures from this file. Do not edit.",
            "",
            f"- command: `{command}`",
            f"- date: {self.started}",
            f"- machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu_model()})",
            f"- load average (1, 5, 15 min): {self.load_before} before, {load()} after",
            f"- git: {_out(['git', '--version']).removeprefix('git version ')} "
            f"(`{str(shutil.which('git')).replace(str(Path.home()), '~')}`)",
            f"- python: {platform.python_version()}",
            f"- carrytool: {_out(['git', 'rev-parse', '--short=12', 'HEAD'])}{dirty}",
            "",
        ])

    def write(self, text: str) -> Path | None:
        """Write the header and TEXT (what the run printed) to the result file, if one was asked for."""
        path = self.path()
        if path is None:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.header() + "\n```\n" + text.rstrip("\n") + "\n```\n")
        print(f"recorded in {path}", file=sys.stderr)
        return path
