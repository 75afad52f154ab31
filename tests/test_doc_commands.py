"""Every `carrytool ...` command line in a sh/bash block of README.md, docs/ and bench/README.md is RUN.

Each block runs in the scenario its doc describes, built from the demo (`carrytool demo --keep DIR`):

- `demo`: the kept demo directory itself (`carries/manifest.yaml`, `work.git`, ...), as README's walk-through;
- `nightly`: a clone of the fork's manifest branch (`carries/manifest.yaml` and its lock committed on two
  nights, the fork branch as `origin/intarweb-dev`), as the nightly job of docs/ci.md checks it out;
- `pull-request`: the fork branch checked out (detached) with the manifest and lock in `.carrytool/` and
  `CARRYTOOL_MANIFEST` pointing there, as docs/ci.md's pull-request job.

Each command runs in a fresh copy of its scenario, except in the blocks of SEQUENCES, whose commands go
one after another (a walk-through). A command is expected to exit 0 unless its line says otherwise in a
comment (`# exits 3: ...`); then that code. The few commands that cannot run here are in EXCEPTIONS, each
with the reason; an exception that no doc line matches any more fails too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_examples import carrytool_commands
from tools import gendocs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))), "bench/README.md")
FORK_BRANCH = "intarweb-dev"

# the first command of a block -> the scenario it runs in (default: demo)
SCENARIOS = {
    "carrytool sync --repo . --push --wait 600 --report sync-report.json": "nightly",
    "carrytool check": "pull-request",
    "carrytool verify --rev origin/intarweb-dev --rebuild": "pull-request",
    "carrytool diff": "nightly",
    "carrytool bisect -m carries/naive.yaml --repo work.git --offline --assert resume-once": "demo",
    "carrytool status": "nightly",
    "carrytool check carries/manifest.yaml": "nightly",
}
# blocks whose commands run one after the other in one copy (keyed by their first command)
SEQUENCES = {"carrytool explain -m carries/manifest.yaml --repo work.git --offline",
             "carrytool check carries/manifest.yaml"}
# command lines that cannot run in a test, and why (they are still parsed by tests/test_docs.py)
EXCEPTIONS = {
    "carrytool status": "asks the forge's REST API (api.github.com) for every PR; tests/review use a local fake forge",
    "carrytool status --format json": "asks the forge's REST API, as above",
    "carrytool status --write": "asks the forge's REST API, as above",
}


@dataclass(frozen=True)
class Line:
    doc: str
    block: int            # line number of the block's opening fence
    argv: tuple[str, ...]
    exit_code: int
    comment: str

    @property
    def command(self) -> str:
        return " ".join(self.argv)


def doc_lines() -> list[Line]:
    found = []
    for doc in DOCS:
        text = gendocs.REGION.sub("", (ROOT / doc).read_text())
        for match in re.finditer(r"^```(?:sh|bash)\n(.*?)^```", text, flags=re.M | re.S):
            start = text[:match.start()].count("\n") + 1
            for raw in match[1].replace("\\\n", " ").splitlines():
                comment = raw.split(" #", 1)[1] if " #" in raw else ""
                code = re.search(r"\bexits (\d+)\b", comment)
                for argv in carrytool_commands(raw):
                    found.append(Line(doc, start, tuple(argv), int(code[1]) if code else 0, comment.strip()))
    return found


LINES = doc_lines()


def blocks() -> list[list[Line]]:
    grouped: dict[tuple[str, int], list[Line]] = {}
    for line in LINES:
        grouped.setdefault((line.doc, line.block), []).append(line)
    return list(grouped.values())


# --------------------------------------------------------------------------------------------------------
# Scenarios


def git(*args: str, cwd: Path) -> str:
    env = {**gendocs.clean_env(), "GIT_AUTHOR_NAME": "maintainer", "GIT_AUTHOR_EMAIL": "m@example.com",
           "GIT_COMMITTER_NAME": "maintainer", "GIT_COMMITTER_EMAIL": "m@example.com",
           "GIT_AUTHOR_DATE": "2026-06-20T00:00:00Z", "GIT_COMMITTER_DATE": "2026-06-20T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def clone_fork(demo: Path, dest: Path) -> None:
    """A work-tree repository with the fork branch as origin/intarweb-dev and what sync fetched."""
    git("init", "-q", "-b", "main", str(dest), cwd=demo)
    git("fetch", "-q", str(demo / "work.git"), f"refs/heads/{FORK_BRANCH}:refs/remotes/origin/{FORK_BRANCH}",
        "refs/carrytool/*:refs/carrytool/*", cwd=dest)
    # a clone that has seen both nights: last night's composed commits too (the fork branch has moved on)
    objects = dest / ".git" / "objects"
    (objects / "info" / "alternates").write_text(os.path.relpath(demo / "work.git" / "objects", objects) + "\n")


def link_remotes(demo: Path, manifest_dir: Path) -> None:
    """The manifest names ../upstream.git and ../fork.git: make them resolve from MANIFEST_DIR."""
    manifest_dir.mkdir(parents=True, exist_ok=True)
    for name in ("upstream.git", "fork.git"):        # relative: a copy of the scenario keeps working
        (manifest_dir.parent / name).symlink_to(os.path.relpath(demo / name, manifest_dir.parent))


def copy_carries(demo: Path, dest: Path, lock: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(demo / "carries" / "manifest.yaml", dest / "manifest.yaml")
    shutil.copy(lock, dest / "manifest.yaml.lock")


def build_nightly(demo: Path) -> Path:
    """The manifest branch: last night's lock committed, then tonight's (so HEAD~1 is last night)."""
    root = demo / "nightly"
    clone_fork(demo, root)
    (root / ".git" / "info" / "exclude").write_text("/upstream.git\n/fork.git\n")
    link_remotes(demo, root / "carries")
    copy_carries(demo, root / "carries", demo / "last-night.lock")
    git("add", "carries", cwd=root)
    git("commit", "-q", "-m", "nightly: lock of the first night", cwd=root)
    copy_carries(demo, root / "carries", demo / "carries" / "manifest.yaml.lock")
    git("commit", "-q", "-am", "nightly: lock of the second night", cwd=root)
    return root


def build_pull_request(demo: Path) -> Path:
    """The fork branch checked out (a PR's tree), the manifest branch's files in .carrytool/."""
    root = demo / "pull-request"
    clone_fork(demo, root)
    git("checkout", "-q", "--detach", f"origin/{FORK_BRANCH}", cwd=root)
    (root / ".git" / "info" / "exclude").write_text("/.carrytool/\n")
    link_remotes(demo, root / ".carrytool" / "carries")
    copy_carries(demo, root / ".carrytool" / "carries", demo / "carries" / "manifest.yaml.lock")
    return root


@pytest.fixture(scope="module")
def template(kept_demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = tmp_path_factory.mktemp("doc-commands") / "demo"
    shutil.copytree(kept_demo, demo, symlinks=True)          # gendocs.build_demo's, as the docs show it
    build_nightly(demo)
    build_pull_request(demo)
    return demo


def fresh(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(template, root, symlinks=True)
    return root


def cwd_and_env(scenario: str, root: Path) -> tuple[Path, dict[str, str]]:
    env = gendocs.clean_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if scenario == "pull-request":
        env["CARRYTOOL_MANIFEST"] = ".carrytool/carries/manifest.yaml"
        return root / "pull-request", env
    if scenario == "nightly":
        return root / "nightly", env
    return root, env


def run(line: Line, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "carrytool", *line.argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


# --------------------------------------------------------------------------------------------------------
# Steps a walk-through asks the reader to do by hand between two commands


def resolve_like_the_union(before: subprocess.CompletedProcess, cwd: Path, env: dict[str, str]) -> None:
    """README: 'Resolve the file it names in the scratch tree': write the committed union's version of it."""
    scratch = Path(re.search(r"resolve them in the scratch tree: (\S+)", before.stdout + before.stderr)[1])
    status = subprocess.run([sys.executable, "-m", "carrytool", "union", "status", "wake-path-union",
                             "-m", "carries/manifest.yaml", "--repo", "work.git", "--format", "json"],
                            cwd=cwd, env=env, capture_output=True, text=True, check=True)
    union = json.loads(status.stdout)[0]
    for item in union["refold"]["needs_resolution"]:
        path = item["file"]
        (scratch / path).write_text(git("--git-dir", "work.git", "show", f"{union['commit']}:{path}", cwd=cwd))


def red_night_report(before: subprocess.CompletedProcess, cwd: Path, env: dict[str, str]) -> None:
    """docs/diff.md 'on a red night': tonight's sync failed (the demo's naive manifest: exit 1) with --report."""
    shutil.copy(cwd.parent / "carries" / "naive.yaml", cwd / "carries" / "naive.yaml")
    sync = subprocess.run([sys.executable, "-m", "carrytool", "sync", "-m", "carries/naive.yaml", "--repo", ".",
                           "--report", "sync-report.json"], cwd=cwd, env=env, capture_output=True, text=True)
    assert sync.returncode == 1 and (cwd / "sync-report.json").exists(), sync.stderr


BY_HAND = {"carrytool union continue wake-path-union -m carries/manifest.yaml --repo work.git": resolve_like_the_union,
           "carrytool diff HEAD:carries/manifest.yaml.lock sync-report.json --format markdown": red_night_report}


# --------------------------------------------------------------------------------------------------------


def test_the_collector_finds_the_docs_commands() -> None:
    commands = {line.command for line in LINES}
    assert "carrytool sync -m carries/manifest.yaml --repo work.git" in commands         # README
    assert "carrytool verify --repo . --rev origin/intarweb-dev --rebuild" in commands    # docs/ci.md
    assert len(LINES) >= 20
    assert set(EXCEPTIONS) <= commands, f"exceptions no doc shows any more: {set(EXCEPTIONS) - commands}"


@pytest.mark.parametrize("block", blocks(), ids=[f"{b[0].doc}:{b[0].block}" for b in blocks()])
def test_every_command_in_the_docs_runs_with_the_exit_code_the_doc_gives(block: list[Line], template: Path,
                                                                          tmp_path: Path) -> None:
    scenario = SCENARIOS.get(block[0].command, "demo")
    sequence = block[0].command in SEQUENCES
    root = fresh(template, tmp_path / "0")
    proc = None
    for i, line in enumerate(block):
        if line.command in EXCEPTIONS:
            continue
        if not sequence and i:
            root = fresh(template, tmp_path / str(i))
        cwd, env = cwd_and_env(scenario, root)
        if line.command in BY_HAND:
            BY_HAND[line.command](proc, cwd, env)
        proc = run(line, cwd, env)
        assert proc.returncode == line.exit_code, (
            f"{line.doc}:{line.block} `{line.command}` in the {scenario} scenario exited {proc.returncode}, "
            f"the doc says {line.exit_code}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
