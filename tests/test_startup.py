"""Start-up: `--version` imports no CLI framework; a command builds only itself; what either prints is the
same as the whole CLI prints (speed itself is measured by `python -m bench --runners startup`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

import carrytool
from carrytool.cli import _app_for, app, main
from tests.conftest import Small

HEAVY = ("typer", "click", "rich", "yaml", "git", "carrytool.cli", "carrytool.pipeline", "carrytool.gitlayer",
         "carrytool.manifest", "carrytool.render", "carrytool.review")


def _imported_by(code: str) -> tuple[str, set[str]]:
    """Run CODE in a fresh interpreter; its stdout and the modules it had imported when it ended."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    probe = f"import sys\ntry:\n    {code}\nfinally:\n    sys.stderr.write(' '.join(sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    return proc.stdout, set(proc.stderr.split())


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_version_imports_neither_the_cli_nor_its_frameworks() -> None:
    out, modules = _imported_by("sys.argv = ['carrytool', '--version']; from carrytool.__main__ import main; main()")
    assert out == f"carrytool {carrytool.__version__}\n"
    assert "carrytool" in modules and _heavy(modules) == set()


def test_version_prints_what_the_cli_s_own_option_prints() -> None:
    assert CliRunner().invoke(app, ["--version"]).stdout == f"carrytool {carrytool.__version__}\n"
    out, modules = _imported_by("sys.argv = ['carrytool', '--version', '-q']; from carrytool.__main__ import main; "
                                "main()")
    assert out == f"carrytool {carrytool.__version__}\n" and "typer" in modules     # anything else: the CLI


def test_a_command_s_help_imports_no_core_and_no_rich() -> None:
    out, modules = _imported_by("sys.argv = ['carrytool', 'sync', '--help']; from carrytool.__main__ import main; "
                                "main()")
    assert out.startswith("Usage: carrytool sync [OPTIONS]")
    # the CLI is a package (carrytool/cli/): its own modules, typer and click, and nothing else heavy
    assert _heavy(modules) == {"typer", "click", "carrytool.cli"} | {m for m in modules if m.startswith(
        ("typer.", "click.", "carrytool.cli."))}


def _names(group: typer.Typer) -> list[str]:
    return [c.name or typer.main.get_command_name(c.callback.__name__) for c in group.registered_commands]  # type: ignore[union-attr]


COMMANDS = _names(app) + ["union"] + [f"union {name}" for name in _names(app.registered_groups[0].typer_instance)]


@pytest.mark.parametrize("argv", [[*c.split(), "--help"] for c in COMMANDS] + [
    ["--help"], [], ["-q", "sync", "--help"], ["-v", "union"], ["snyc"], ["sync", "--bogus"], ["-q", "--help"]])
def test_what_the_entry_point_runs_prints_what_the_whole_cli_prints(argv: list[str]) -> None:
    only = CliRunner().invoke(_app_for(argv), argv, prog_name="carrytool")
    whole = CliRunner().invoke(app, argv, prog_name="carrytool")
    assert (only.stdout, only.stderr, only.exit_code) == (whole.stdout, whole.stderr, whole.exit_code)
    assert whole.stdout or whole.stderr


def test_a_command_builds_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """typer turns every registered command into click's before parsing: a command's run builds one."""
    built: list[str] = []
    real = typer.main.get_command_from_info
    monkeypatch.setattr(typer.main, "get_command_from_info",
                        lambda **kw: built.append(kw["command_info"].callback.__name__) or real(**kw))
    for argv, expected in ((["sync", "--help"], ["sync"]), (["-q", "status", "--help"], ["status"]),
                           (["union", "new", "--help"], ["union_new", "union_compose", "union_continue",
                                                         "union_abort", "union_status"])):
        built.clear()
        monkeypatch.setattr(sys, "argv", ["carrytool", *argv])
        with pytest.raises(SystemExit):
            main()
        assert built == expected
    assert _app_for(["--help"]) is app and _app_for(["snyc"]) is app and _app_for(["--version", "sync"]) is app


def _entry(code: str, *argv: str, cwd: str | None = None, call: str = "entry") -> subprocess.CompletedProcess:
    """Run `carrytool.__main__.entry` (or CALL) in a fresh interpreter after CODE; an exit handler registered
    first says whether the interpreter's teardown ran."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    probe = ("import atexit, sys\natexit.register(lambda: sys.stderr.write('[teardown]'))\n"
             f"sys.argv = ['carrytool', *{list(argv)!r}]\nimport carrytool.__main__ as m\n{code}\nm.{call}()\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=cwd)


def test_the_entry_point_leaves_without_teardown_and_with_the_command_s_status(tmp_path) -> None:  # noqa: ANN001
    """The console script skips the interpreter's teardown (a large run's objects freed for nothing), with
    every byte printed and the exit status the command gave."""
    helped, plain = _entry("", "sync", "--help"), _entry("", "sync", "--help", call="main")
    assert (helped.returncode, helped.stderr) == (0, "") and plain.stderr == "[teardown]"
    assert helped.stdout == plain.stdout and helped.stdout.startswith("Usage: carrytool sync [OPTIONS]")
    failed = _entry("", "check", "-m", "missing.yaml", cwd=str(tmp_path))
    plain = _entry("", "check", "-m", "missing.yaml", cwd=str(tmp_path), call="main")
    assert failed.returncode == plain.returncode == 2
    assert failed.stderr + "[teardown]" == plain.stderr and "missing.yaml" in failed.stderr
    assert _entry("", "--version").stdout == f"carrytool {carrytool.__version__}\n"


@pytest.mark.parametrize(("exit_with", "status", "stderr"), [("'no such thing'", 1, "no such thing\n[teardown]"),
                                                             ("None", 0, "[teardown]")])
def test_an_exit_that_is_not_a_plain_status_is_left_to_the_interpreter(exit_with: str, status: int,
                                                                        stderr: str) -> None:
    """SystemExit with a message (printed by the interpreter), and a stdout that cannot be flushed, keep
    Python's own exit; None is status 0 (here through a handler that cannot flush)."""
    if exit_with == "None":      # stdout closed under the command: the interpreter's exit reports it
        ran = _entry("m.main = lambda: (sys.stdout.close(), sys.exit(None))")
    else:
        ran = _entry(f"m.main = lambda: sys.exit({exit_with})")
    assert (ran.returncode, ran.stderr) == (status, stderr)


@pytest.mark.parametrize("closed", [">&-", "2>&-", ">&- 2>&-"])
def test_a_closed_standard_stream_is_no_traceback(closed: str, tmp_path) -> None:  # noqa: ANN001
    """helper-77: `carrytool --version >&-` (Python has no sys.stdout then) ended in a traceback, exit 120."""
    err = tmp_path / "err"
    proc = subprocess.run(["sh", "-c", f'"$0" -m carrytool --version {closed}' + ("" if "2>" in closed else f" 2>{err}"),
                           sys.executable])
    assert proc.returncode == 0
    assert "2>" in closed or err.read_text() == ""


# what only a union's checks need (pipeline.landing_provided imports it when a union is there: h212)
UNION_ONLY = ("carrytool.pipeline.provided", "carrytool.pipeline.drops", "carrytool.pipeline.regions",
              "carrytool.pipeline.scopes", "carrytool.pipeline.standing", "carrytool.pipeline.spancache",
              "carrytool.pipeline.pyparts", "carrytool.manifest.edit", "carrytool.union", "carrytool.review")


def test_a_sync_without_a_union_imports_none_of_a_union_s_checks(small: Small) -> None:
    small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n", "a.py": "def f():\n    return {'k': 1}\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}])
    argv = ["carrytool", "sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--format", "json"]
    out, modules = _imported_by(f"sys.argv = {argv!r}; from carrytool.cli import main; main()")
    assert json.loads(out)["entries"][0]["status"] == "applied"
    assert "carrytool.pipeline.landing" in modules and "carrytool.pipeline.dictkeys" in modules   # the checks ran
    assert {m for m in modules if m.startswith(UNION_ONLY)} == set()


# what only landing's parsing checks need: imported when a landed hunk adds a definition or a dict key, or a
# `theirs` step overrode upstream lines (pipeline.landing_parsed; issue 17: ~10 ms of a sync's start-up)
PARSING_ONLY = ("carrytool.pipeline.dictkeys", "carrytool.pipeline.shadowed", "carrytool.pipeline.unbound",
                "carrytool.pipeline.pystrings", "carrytool.asserts.pyscope", "carrytool.asserts.bydesign",
                "symtable")


def test_a_sync_whose_prs_add_no_definition_or_key_imports_none_of_the_parsing_checks(small: Small) -> None:
    small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n"})
    small.pr(2, {"c.txt": "{'k': 1}\ndef f():\n"})           # (not Python: nothing a parsing check reads)
    small.manifest([{"pr": 1}, {"pr": 2}])
    argv = ["carrytool", "sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--format", "json"]
    out, modules = _imported_by(f"sys.argv = {argv!r}; from carrytool.cli import main; main()")
    assert [e["status"] for e in json.loads(out)["entries"]] == ["applied", "applied"]
    assert "carrytool.pipeline.landing" in modules and "carrytool.pipeline.pyadds" in modules
    assert {m for m in modules if m.startswith(PARSING_ONLY)} == set()
    assert {m for m in modules if m.startswith("carrytool.render")} == set()     # json: no text renderer, no bar
