"""How long explain's overlap map takes for many entries (not a timed test: run it and read the figures).

    .venv/bin/python -m bench.explain_overlaps [--entries 500] [--files 2000] [--hot 300] [--keep] [--record NAME]

Builds a synthetic upstream with one `git fast-import` (FILES Python modules of ten small functions,
25 to a directory) and ENTRIES one-to-three-file PRs that each edit one line of a function in the HOT
first modules (one edit in ten in one of five very hot modules), so that many pairs share a file,
some edit the same function and some the same line. Then it times, in
a fresh bare repository: the plan (sync's `plan_and_compose`), the evidence (every entry's diff and
hunks) and the overlap map (sparse pairs, two batched `merge-tree --stdin` processes).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench.record import Recorder
from carrytool.gitlayer.git import Git
from carrytool.manifest.load import load_manifest
from carrytool.pipeline.sync import plan_and_compose
from carrytool.pipeline.sync_records import SyncOptions
from carrytool.review.evidence import Sources, gather_evidence
from carrytool.review.overlap import map_overlaps

T0 = 1_700_000_000


def module(index: int, edits: dict[tuple[int, int], str] | None = None) -> bytes:
    lines = [f'"""Module {index}."""', ""]
    for fn in range(10):
        body = [f"    y = x + {fn}", "    z = y * 2", "    return z"]
        for (f, line), text in (edits or {}).items():
            if f == fn:
                body[line] = text
        lines += ["", f"def f{fn}(x):", *body, ""]
    return ("\n".join(lines) + "\n").encode()


def fast_import(repo: Path, files: int, entries: int, hot: int, seed: int) -> None:
    rng = random.Random(seed)
    out: list[bytes] = []
    mark = 0

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.append(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
        return mark

    def path(index: int) -> str:
        return f"pkg/sub{index // 25}/mod{index}.py"      # directories of 25 modules, like a real tree

    def commit(ref: str, message: str, parent: int | None, changes: dict[int, int], when: int) -> int:
        nonlocal mark
        mark += 1
        text = message.encode()
        head = (f"commit {ref}\nmark :{mark}\nauthor dev <dev@example.com> {when} +0000\n"
                f"committer dev <dev@example.com> {when} +0000\n").encode()
        body = head + b"data %d\n" % len(text) + text + b"\n"
        if parent is not None:
            body += b"from :%d\n" % parent
        body += b"".join(f"M 100644 :{m} {path(i)}\n".encode() for i, m in changes.items())
        out.append(body + b"\n")
        return mark

    base = commit("refs/heads/main", "base", None, {i: blob(module(i)) for i in range(files)}, T0)
    for pr in range(1, entries + 1):
        changes = {}
        for _ in range(rng.choice((1, 1, 2, 3))):
            # one edit in ten goes to one of five very hot modules (a model runner, a worker...)
            index = rng.randrange(5) if rng.random() < 0.1 else rng.randrange(hot)
            fn, line = rng.randrange(10), rng.randrange(3)
            changes[index] = blob(module(index, {(fn, line): f"    pass  # pr {pr}"}))
        commit(f"refs/pull/{pr}/head", f"pr {pr}", base, changes, T0 + pr)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(out), check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=500)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--hot", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the scenario (printed) instead of deleting it")
    parser.add_argument("--record", metavar="NAME", help="also write the output to bench/results/NAME.md")
    args = parser.parse_args()
    recorder = Recorder(args.record)
    root = Path(tempfile.mkdtemp(prefix="carrytool-bench-explain-"))
    for name in ("up.git", "work.git"):
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(root / name)], check=True)
    fast_import(root / "up.git", args.files, args.entries, args.hot, args.seed)
    manifest = root / "manifest.yaml"
    manifest.write_text(yaml.safe_dump({
        "version": 1, "upstream": {"url": "up.git"}, "fork": {"branch": "dev"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(1, args.entries + 1)]}))
    loaded = load_manifest(manifest)
    with Git(root / "work.git") as git:
        plan_and_compose(loaded, git, SyncOptions(dry_run=True))          # fetch once, untimed
        t0 = time.perf_counter()
        planned = plan_and_compose(loaded, git, SyncOptions(dry_run=True, offline=True))
        t1 = time.perf_counter()
        evidence = gather_evidence(git, loaded, planned.resolved, planned.steps)
        t2 = time.perf_counter()
        found = map_overlaps(git, loaded, planned.resolved.upstream, list(evidence.values()), Sources(git))
        t3 = time.perf_counter()
    kinds: dict[str, int] = {}
    for overlap in found.overlaps:
        kinds[overlap.kind] = kinds.get(overlap.kind, 0) + 1
    text = "\n".join([
        f"{args.entries} entries, {args.files} files ({args.hot} hot), git {'.'.join(map(str, git.version))}",
        f"  plan (sync's plan_and_compose, offline): {t1 - t0:6.2f} s",
        f"  evidence (diffs and hunks of every entry): {t2 - t1:6.2f} s",
        f"  overlap map: {t3 - t2:6.2f} s for {found.pairs_merged} pairs sharing a file "
        f"(of {args.entries * (args.entries - 1) // 2} possible): "
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())),
        f"  explain's analysis (evidence + overlap map): {t3 - t1:6.2f} s; plan + analysis: {t3 - t0:6.2f} s"])
    print(text)
    recorder.write(text)
    if args.keep:
        print(f"  scenario kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
