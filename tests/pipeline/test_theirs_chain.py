"""`on_conflict: theirs` entries compose to the tree of git's own chain of `merge-tree -X theirs` merges.

Each PR is merged onto the result so far from its base, its conflicting hunks (with upstream and with the
PRs before it) resolved in its favour; git >= 2.43 does that itself with `-X theirs`. The PRs here only
edit lines of files every side has (content conflicts, which `-X theirs` resolves), some of them lines
that look like conflict markers, some files without a last line end. CI runs this file on git 2.39 (the
oracle is then the current git it builds) and on that current git.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SECOND_GIT, Cli, Small


def _x_theirs_git() -> str | None:
    """A git whose merge-tree takes `-X theirs` (>= 2.43): this machine's, or the second one CI builds."""
    for folder in ("", SECOND_GIT):
        git = shutil.which("git") if not folder else str(Path(folder) / "git")
        usage = subprocess.run([git, "merge-tree", "-h"], capture_output=True) if git else None
        if usage is not None and b"strategy-option" in usage.stdout + usage.stderr:
            return git
    return None


LINES = ["x = 1\n", "    return 1\n", "=======\n", "<<<<<<< HEAD\n", "def f():\n", "\n", "pass\n", "# note\n"]


def _edited(rng: random.Random, lines: list[str], tag: str) -> str:
    """LINES with a few of them replaced, inserted or deleted (TAG marks what is new); sometimes no last
    line end."""
    lines = list(lines)
    for n in range(rng.randint(1, 3)):
        at = rng.randrange(len(lines))
        what = rng.random()
        if what < 0.5:
            lines[at] = f"{tag} {n}\n"
        elif what < 0.8:
            lines.insert(at, rng.choice(LINES) if rng.random() < 0.3 else f"{tag} new {n}\n")
        elif len(lines) > 3:
            del lines[at]
    text = "".join(lines)
    return text[:-1] if rng.random() < 0.25 else text


@pytest.mark.skipif(_x_theirs_git() is None, reason="needs a git whose merge-tree takes -X (>= 2.43)")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_theirs_entries_compose_to_gits_x_theirs_chain(cli: Cli, small: Small, seed: int) -> None:
    oracle = _x_theirs_git()
    assert oracle is not None
    rng = random.Random(seed)
    files = {f"m{k}.py": [rng.choice(LINES) if rng.random() < 0.3 else f"line {k}.{i}\n" for i in range(12)]
             for k in range(3)}
    start = small.up.commit({path: "".join(lines) for path, lines in files.items()}, "files", parent="main",
                           ref="refs/heads/main")
    small.up.commit({path: _edited(rng, lines, "upstream") for path, lines in files.items()}, "upstream moved",
                    parent="main", ref="refs/heads/main")
    heads = []
    for n in range(1, 6):
        chosen = rng.sample(sorted(files), rng.randint(1, 2))
        heads.append(small.pr(n, {path: _edited(rng, files[path], f"pr{n}") for path in chosen}, parent=start))
    small.manifest([{"pr": n, "on_conflict": "theirs"} for n in range(1, 6)])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code in (0, 1), report           # a PR that overwrites an earlier one's lines is a clobber: exit 1
    assert all(e["status"] == "applied" for e in report["entries"]), report["entries"]
    assert any(e.get("resolution") for e in report["entries"])         # conflicts were resolved
    composed = subprocess.run(["git", "rev-parse", f"{report['result']['sha']}^{{tree}}"], cwd=small.work.path,
                              capture_output=True, text=True, check=True).stdout.strip()

    def tree_of(rev: str) -> str:
        return subprocess.run([oracle, "rev-parse", f"{rev}^{{tree}}"], cwd=small.up.path, capture_output=True,
                              text=True, check=True).stdout.strip()

    tip = tree_of("refs/heads/main")
    for head in heads:
        merged = subprocess.run([oracle, "merge-tree", "--write-tree", "-X", "theirs", "--merge-base", start, tip,
                                 head], cwd=small.up.path, capture_output=True, text=True)
        assert merged.returncode == 0, merged.stdout
        tip = merged.stdout.split()[0]
    assert composed == tip


def test_a_conflict_the_diff_algorithms_split_otherwise_resolves_as_x_theirs(cli: Cli, small: Small) -> None:
    # merge-tree's content merge (histogram) and `git merge-file` (myers) split this conflict differently;
    # `-X theirs` (git's, and carrytool's) gives the entry's `d x y`, then upstream's `y d`
    start = small.up.commit({"f.txt": "d\ny\n\nc\n"}, "f", parent="main", ref="refs/heads/main")
    small.up.commit({"f.txt": "\ny\nd\n\n"}, "upstream moved", parent="main", ref="refs/heads/main")
    small.pr(1, {"f.txt": "d\nx\ny\n\nc\n"}, parent=start)
    small.manifest([{"pr": 1, "on_conflict": "theirs"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0 and report["entries"][0]["resolution"] == {"mode": "theirs", "files": ["f.txt"]}
    shown = subprocess.run(["git", "cat-file", "blob", f"{report['result']['sha']}:f.txt"], cwd=small.work.path,
                           capture_output=True, check=True).stdout
    assert shown == b"d\nx\ny\n\ny\nd\n\n"
    oracle = _x_theirs_git()
    if oracle is not None:
        merged = subprocess.run([oracle, "merge-tree", "--write-tree", "-X", "theirs", "--merge-base", start,
                                 "refs/heads/main", "refs/pull/1/head"], cwd=small.up.path, capture_output=True,
                                text=True, check=True).stdout.split()[0]
        assert subprocess.run([oracle, "cat-file", "blob", f"{merged}:f.txt"], cwd=small.up.path,
                              capture_output=True, check=True).stdout == shown
