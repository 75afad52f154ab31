"""How often the structured merge rule (issue 19) resolves real text conflicts between PRs, and what it costs.

    python -m bench.structured /work/.mirror/pytest-dev+pytest/repo --prs 300 --within 3000

For the newest PRs of a bare repository (refs/pull/N/head) that merge cleanly onto its default branch
alone, every `.py` file two of them change is merged the way sync composes it (the earlier PR applied
onto upstream = ours, the later PR's merge base = base, its head = theirs), and so is every such file
along the chain (the PRs composed in number order; a PR that conflicts is left out of the chain). For
each file git's text merge leaves conflicted, the rule either resolves every hunk (counted by kind) or
refuses (counted by the first reason). The cost is the rule's CPU time per conflicted hunk the first time
a file is seen (the parse cache emptied) and for the same merge again (its pieces parsed before, as in a
second composition of the same run). Nothing is written to the repository except objects of the
merges (into a private copy of its object store: the work happens in a temporary git dir).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from carrytool.gitlayer.git import Git
from carrytool.pipeline import pyparts
from carrytool.pipeline.structured import resolve

from .generate import clean_env
from .real import default_branch, recent_prs
from .record import Recorder


class Tally:
    def __init__(self) -> None:
        self.files = 0
        self.resolved_files = 0
        self.kinds: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.hunks = 0
        self.seconds = 0.0               # the rule, its parse cache emptied first: the first time a file is seen
        self.again = 0.0                 # the same merge again, the pieces of the file parsed before
        self.parsed = 0

    def add(self, git: Git, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
        merged = git.merge_diff3(ours, base, theirs, 23)
        if merged is None or merged[0]:
            return None
        self.files += 1
        pyparts._cache.clear()
        start = time.process_time()      # CPU time: the machine may be shared, wall time would say little
        resolution = resolve(base, ours, theirs, merged[1])     # the rule alone: git's merge already ran
        self.seconds += time.process_time() - start
        start = time.process_time()
        again = resolve(base, ours, theirs, merged[1])
        self.again += time.process_time() - start
        assert (again.text, again.hunks, again.refused) == (resolution.text, resolution.hunks, resolution.refused)
        self.hunks += merged[1].count(b"\n" + b"<" * 23) + merged[1].startswith(b"<" * 23)
        if not resolution.ok:
            self.refused[resolution.refused[0]] += 1
            return None
        self.resolved_files += 1
        self.kinds.update(h.kind for h in resolution.hunks)
        ast.parse(resolution.text)       # the gate held: parse once more, independently
        self.parsed += 1
        return resolution.text


def _blob(git: Git, tree: str, path: str) -> bytes | None:
    found = git.blob_at(tree, path)
    return git.read_blob(found[1]) if found and found[0] in ("100644", "100755") else None


def measure(repo: Path, count: int, within: int) -> tuple[Tally, Tally, int]:
    branch = default_branch(repo)
    prs = recent_prs(repo, branch, count, within)
    git = Git(repo)
    upstream = git.rev_parse(f"refs/heads/{branch}")
    up_tree = git.tree_of(upstream)
    heads = {n: git.rev_parse(f"refs/pull/{n}/head") for n in prs}
    onto = dict(zip(prs, git.merge_trees([(upstream, heads[n]) for n in prs])))
    clean = [n for n in prs if onto[n].clean]
    bases, files = {}, {}
    diffs = git.diff_trees([(up_tree, onto[n].tree) for n in clean])
    for n, changes in zip(clean, diffs):
        bases[n] = git.tree_of(git.run("merge-base", upstream, heads[n]).stdout.decode().strip())  # type: ignore[arg-type]
        files[n] = {p for c in changes for p in c.paths if p.endswith(".py") and c.status == "M"}
    pairs, chain = Tally(), Tally()
    for i, a in enumerate(clean):
        for b in clean[i + 1:]:
            for path in sorted(files[a] & files[b]):
                sides = [_blob(git, t, path) for t in (bases[b], onto[a].tree, git.tree_of(heads[b]))]
                if None not in sides:
                    pairs.add(git, *sides)  # type: ignore[arg-type]
    tip: dict[str, bytes] = {}
    for n in clean:
        merged: dict[str, bytes] = {}
        for path in sorted(files[n] & set(tip)):
            sides = [_blob(git, bases[n], path), tip[path], _blob(git, git.tree_of(heads[n]), path)]
            if None in sides:
                break
            text = git.merge_diff3(sides[1], sides[0], sides[2], 23)  # type: ignore[arg-type]
            if text is None:
                break
            if text[0]:
                merged[path] = text[1]
                continue
            resolved = chain.add(git, *sides)  # type: ignore[arg-type]
            if resolved is None:
                break
            merged[path] = resolved
        else:
            for path in files[n]:
                tip[path] = merged.get(path) or _blob(git, onto[n].tree, path) or b""
    git.close()
    return pairs, chain, len(clean)


def borrow(repo: Path, where: Path) -> Path:
    """A bare repository that borrows REPO's objects (alternates) and copies its refs: the merges' objects
    go there, never into REPO."""
    subprocess.run(["git", "init", "-q", "--bare", str(where)], check=True, env=clean_env())
    objects = subprocess.run(["git", "rev-parse", "--git-path", "objects"], cwd=repo, capture_output=True,
                             check=True, env=clean_env()).stdout.decode().strip()
    (where / "objects" / "info" / "alternates").write_text(str((repo / objects).resolve()) + "\n")
    refs = subprocess.run(["git", "for-each-ref", "--format=create %(refname) %(objectname)", "refs/heads",
                           "refs/pull"], cwd=repo, capture_output=True, check=True, env=clean_env()).stdout
    subprocess.run(["git", "update-ref", "--stdin"], cwd=where, input=refs, check=True, env=clean_env())
    head = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=repo, capture_output=True, env=clean_env())
    if head.returncode == 0:
        subprocess.run(["git", "symbolic-ref", "HEAD", head.stdout.decode().strip()], cwd=where, check=True,
                       env=clean_env())
    return where


def render(name: str, pairs: Tally, chain: Tally, prs: int) -> str:
    rows = [f"| {name} ({prs} PRs) | conflicted `.py` files | resolved (hunks by kind) | refused (by reason) "
            "| CPU ms per conflicted hunk (the rule): first sight / again |", "|---|---|---|---|---|"]
    for label, t in (("pairs", pairs), ("chain", chain)):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(t.kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        refused = ", ".join(f"{k} {v}" for k, v in sorted(t.refused.items(), key=lambda kv: (-kv[1], kv[0])))
        ms = 1000 * t.seconds / t.hunks if t.hunks else 0.0
        again = 1000 * t.again / t.hunks if t.hunks else 0.0
        rows.append(f"| {label} | {t.files} | {t.resolved_files} ({kinds or '-'}) | "
                    f"{t.files - t.resolved_files} ({refused or '-'}) | {ms:.1f} / {again:.1f} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.structured", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("repo", type=Path, help="a bare repository with refs/pull/N/head")
    p.add_argument("--prs", type=int, default=300, help="how many of the newest PRs (default 300)")
    p.add_argument("--within", type=int, default=3000,
                   help="only PRs branching off the last N commits of the default branch (default 3000)")
    p.add_argument("--record", metavar="NAME", help="also write the output to bench/results/NAME.md")
    args = p.parse_args()
    recorder = Recorder(args.record)
    with tempfile.TemporaryDirectory() as tmp:
        pairs, chain, prs = measure(borrow(args.repo.resolve(), Path(tmp) / "borrowed.git"), args.prs, args.within)
    text = render(args.repo.resolve().name if args.repo.name != "repo" else args.repo.resolve().parent.name,
                  pairs, chain, prs)
    print(text)
    recorder.write(text)


if __name__ == "__main__":
    main()
