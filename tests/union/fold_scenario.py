"""A small union scenario in real repositories: two PRs that conflict in two hunks of a.py."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from carrytool.union.resolutions import ConflictHunk, split_conflicts
from tests.gitrepo import Repo, built_once, init_repo

LINES = [f"line {i}\n" for i in range(1, 25)]
A_BASE = "".join(LINES)


def edited(changes: dict[int, str], base: list[str] = LINES) -> str:
    lines = list(base)
    for number, text in changes.items():
        lines[number - 1] = text
    return "".join(lines)


# two PRs and a union of them kept as a patch (the upstream-edit and continue-check tests)
PATCH_UNION = """\
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev}
entries:
  - pr: 1
  - pr: 2
  - carry: u
    patch: unions/u.patch
    supersedes: [1, 2]
"""

class TwoPrs:
    """upstream `up` with FILES; pr/1 and pr/2 each a commit on it; a bare `work`; the union u of both."""

    def __init__(self, root: Path, base: dict, pr1: dict, pr2: dict) -> None:
        self.up = init_repo(root / "up")
        self.base = self.up.commit(base, "base", ref="refs/heads/main")
        self.pr1 = self.up.commit(pr1, "one", parent=self.base, ref="refs/pull/1/head")
        self.pr2 = self.up.commit(pr2, "two", parent=self.base, ref="refs/pull/2/head")
        self.work = init_repo(root / "work", bare=True).path
        self.manifest = root / "carries" / "manifest.yaml"
        self.manifest.parent.mkdir(parents=True)
        self.manifest.write_text(PATCH_UNION)
        self.scratch = self.work / "carrytool" / "union" / "u" / "tree"

    def args(self) -> list[str]:
        return ["-m", str(self.manifest), "--repo", str(self.work)]


MANIFEST = """\
# the fork's manifest (a comment to keep)
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev%(fork_url)s}
entries:
  - pr: 1   # first fix
  - pr: 2
%(union)s"""

UNION = """\
  - carry: u
    patch: unions/u.patch
    supersedes: [1, 2]
"""


class Fold:
    """upstream `up` (a.py, b.py, c.txt), PRs 1 and 2 both editing a.py lines 3 and 15, a bare `work`."""

    def __init__(self, root: Path, *, union: str = UNION, fork_url: str = "", extra: dict | None = None) -> None:
        self.root = root
        self.up = init_repo(root / "up")
        files = {"a.py": A_BASE, "b.py": "b1\nb2\nb3\nb4\nb5\n", "c.txt": "c\n", **(extra or {})}
        self.base = self.up.commit(files, "base", ref="refs/heads/main")
        self.pr1 = self.up.commit({"a.py": edited({3: "line 3 by one\n", 15: "line 15 by one\n"}),
                                   "b.py": "b1\nb2\nb3\nb4\nb5\nb6 by one\n"}, "one: fix f",
                                  parent=self.base, ref="refs/pull/1/head")
        self.pr2 = self.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"})}, "two: fix g",
                                  parent=self.base, ref="refs/pull/2/head")
        self.work = init_repo(root / "work", bare=True).path
        self.manifest = root / "carries" / "manifest.yaml"
        self.manifest.parent.mkdir(parents=True)
        self.manifest.write_text(MANIFEST % {"union": union, "fork_url": f", url: '{fork_url}'" if fork_url else ""})
        self.scratch = self.work / "carrytool" / "union" / "u" / "tree"

    def args(self) -> list[str]:
        return ["-m", str(self.manifest), "--repo", str(self.work)]

    def copy_to(self, root: Path) -> Fold:
        """A private copy of this scenario, in the state it is in, at ROOT (empty or absent): its folders
        name each other by relative paths, so the copy has the same SHAs and goes on as this one would."""
        shutil.copytree(self.root, root, symlinks=True, dirs_exist_ok=True)
        other = copy.copy(self)
        other.root, other.up = root, Repo(root / "up")
        other.up.clock = self.up.clock                     # the same SHAs for what the test commits next
        other.work, other.manifest = root / "work", root / "carries" / "manifest.yaml"
        other.scratch = other.work / "carrytool" / "union" / "u" / "tree"
        return other

    def ref(self) -> str | None:
        proc = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/carrytool/dev/carry/u"], cwd=self.work,
                              capture_output=True, text=True)
        return proc.stdout.strip() or None

    def show(self, rev: str, path: str) -> bytes:
        return subprocess.run(["git", "cat-file", "-p", f"{rev}:{path}"], cwd=self.work, capture_output=True,
                              check=True).stdout

    def ls(self, rev: str, path: str) -> str:
        return subprocess.run(["git", "ls-tree", rev, "--", path], cwd=self.work, capture_output=True,
                              text=True).stdout

    def run(self, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        """The CLI in its own process (for kills, FIFOs and concurrency)."""
        import os

        full = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "carrytool", *args], capture_output=True, text=True,
                              env=full, timeout=timeout)


def fresh_fold(factory: pytest.TempPathFactory, root: Path) -> Fold:
    """A private copy at ROOT of the default Fold as built (nothing folded yet): built once a session, the same
    SHAs as `Fold(root)`, each test working in its own copy (the `fold` fixture of the union tests)."""
    return built_once(factory, "fold", Fold).copy_to(root)


def resolve_both(path: Path, *, outside: bytes | None = None) -> bytes:
    """Resolve every hunk of PATH as 'ours + theirs'; OUTSIDE also replaces `line 10` (an edit outside the hunks)."""
    parts = split_conflicts(path.read_bytes())
    assert parts is not None
    out = []
    for part in parts:
        if isinstance(part, ConflictHunk):
            out.append(part.ours + b" and " + part.theirs.replace(b"line ", b"").replace(b" by ", b" "))
        else:
            out.append(part)
    data = b"\n".join(out)
    if outside is not None:
        data = data.replace(b"line 10\n", outside)
    path.write_bytes(data)
    return data
