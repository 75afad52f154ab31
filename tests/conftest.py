"""Shared fixtures: real repositories in tmp_path, the demo scenario, a CLI runner."""

from __future__ import annotations

import json
import os
import shutil
import zlib
from pathlib import Path

import click
import pytest
import typer.main
from click.testing import CliRunner as ClickRunner
from typer.testing import CliRunner

from carrytool.cli import _app_for, app
from carrytool.demo.scenario import Scenario, build
from tests.gitrepo import Repo, built_once, copy_built, init_repo, write_manifest

# the report schema as the repository ships it (tests depend on nothing outside the repository); the shared
# contract's copy, when it sits beside the clone, must be the same file (tests/test_report_schema.py)


def _second_git() -> str:
    """The bin folder of a second, newer git when this machine has one ("" when not): $CARRYTOOL_SECOND_GIT
    (`none`: no second git, as .ci/run says for its pass on the current git, whose git is that one), else the
    one .ci/build-git.sh builds and caches (once it marked the build complete), else an older cache's place."""
    if os.environ.get("CARRYTOOL_SECOND_GIT") == "none":
        return ""
    ci = Path(os.environ.get("CARRYTOOL_GIT_CACHE", Path.home() / ".cache" / "carrytool-ci" / "git-trixie"))
    built = str(ci / "bin") if (ci / ".complete").exists() else ""
    for folder in (os.environ.get("CARRYTOOL_SECOND_GIT", ""), built, "/root/.cache/git-new/bin"):
        if folder and (Path(folder) / "git").exists():
            return folder
    return ""


SECOND_GIT = _second_git()     # tests that compare two gits skip without it (CI builds one: .ci/run)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """$CARRYTOOL_TEST_SHARD=K/N: collect only the test files of shard K of N (0-based), each file in one shard, by a
    hash of its path: .ci/run runs each pass's shards at once, so that both cores stay busy to the end."""
    shard = os.environ.get("CARRYTOOL_TEST_SHARD", "")
    if not shard or not collection_path.name.startswith("test_") or collection_path.suffix != ".py":
        return None
    k, n = (int(part) for part in shard.split("/"))
    name = collection_path.resolve().relative_to(Path(__file__).resolve().parents[1]).as_posix()
    return True if zlib.crc32(name.encode()) % n != k else None


REPORT_SCHEMA = Path(__file__).resolve().parents[1] / "carrytool" / "schemas" / "report.schema.json"
SHARED_REPORT_SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "report.schema.json"


def isolate_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config, no inherited manifest path: tests see only what they build. (Every test runs
    so; a fixture of a wider scope that runs carrytool runs before that, and calls this itself.)"""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("CARRYTOOL_MANIFEST", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    # a kept plan (pipeline.keptplan) is composed again wherever it is used, and a difference fails the run:
    # every test that explains after a sync checks it (tests/pipeline/test_kept_plan.py uses plans as users do)
    monkeypatch.setenv("CARRYTOOL_CHECK_KEPT_PLANS", "1")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_env(monkeypatch)


@pytest.fixture(scope="session")
def _demo_template(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return build(tmp_path_factory.mktemp("demo-template"))


@pytest.fixture(scope="session")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`carrytool demo --keep DIR` and the files the docs' blocks read beside it (tools/gendocs.py), run
    once a session: the docs' tests each work in a copy (it names its folders by relative paths)."""
    from tools import gendocs

    root = tmp_path_factory.mktemp("kept-demo") / "demo"
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        gendocs.build_demo(root)
    return root


def copy_demo(template: Scenario, root: Path) -> Scenario:
    """A copy of the demo scenario TEMPLATE at ROOT (same SHAs)."""
    shutil.copytree(template.root, root, symlinks=True)
    t = template
    return Scenario(root, root / "upstream.git", root / "fork.git", root / "work.git",
                    root / "carries" / "manifest.yaml", t.upstream_head, t.base, dict(t.prs), t.union)


@pytest.fixture
def demo(_demo_template: Scenario, tmp_path: Path) -> Scenario:
    """A private copy of the demo scenario (same SHAs every time)."""
    return copy_demo(_demo_template, tmp_path / "demo")


_BUILT: dict[tuple[int, ...], click.Command] = {}      # the click commands typer built, kept for the session


def built_command(args: list[str], env: dict[str, str] | None = None) -> click.Command:
    """The click command the console entry runs for ARGS: the app with only the command ARGS names
    (`carrytool.cli._app_for`, as `carrytool.cli.main` chooses it), built by typer once a session. Building
    the whole app from the commands' signatures took ~0.1 s a call, a third of the CPU of the suite's
    in-process runs; a built click command holds no state of a run and is run again as click's own tests do."""
    chosen = app if (env or {}).get("_CARRYTOOL_COMPLETE") else _app_for(args)
    key = tuple(id(c) for c in chosen.registered_commands) + (0,) + tuple(id(g) for g in chosen.registered_groups)
    if key not in _BUILT:
        _BUILT[key] = typer.main.get_command(chosen)
    return _BUILT[key]


class Cli:
    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, env: dict[str, str] | None = None):
        argv = [str(a) for a in args]
        # (click's own runner: typer's would build the app again from its signatures on every call)
        return ClickRunner.invoke(self.runner, built_command(argv, env), argv, env=env,
                                              catch_exceptions=False)

    def json(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
        result = self(*args, "--format", "json", env=env)
        if not result.stdout.strip():
            return result.exit_code, {"stderr": result.stderr}
        return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture
def report_schema() -> dict:
    return json.loads(REPORT_SCHEMA.read_text())


@pytest.fixture
def small(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> "Small":
    """A Small in TMP_PATH: built once a session, each test working in its own copy (the same SHAs)."""
    template = built_once(tmp_path_factory, "small", Small)
    return copy_built(template, template.root, tmp_path)


class Small:
    """A small upstream with a few PRs and an empty bare repo to sync into."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.up = init_repo(root / "up")
        self.base = self.up.commit({
            "a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
            "b.py": "x = 1\ny = 2\nz = 3\n",
            "docs/c.txt": "c\n",
            "csrc/k.cu": "// kernel\n",
        }, "base", ref="refs/heads/main")
        self.work = init_repo(root / "work", bare=True)
        self.manifest_path = root / "carries" / "manifest.yaml"

    def pr(self, number: int, files: dict, *, parent: str | None = None, message: str | None = None) -> str:
        return self.up.commit(files, message or f"pr {number}", parent=parent or self.base,
                              ref=f"refs/pull/{number}/head")

    def manifest(self, entries: list, **extra) -> Path:
        data = {"version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
                "entries": entries}
        data.update(extra)
        return write_manifest(self.manifest_path, data)

    def branch(self) -> str | None:
        return self.work.ref("refs/heads/dev")


__all__ = ["Repo", "init_repo", "write_manifest", "Small", "Cli", "copy_demo", "isolate_env"]
