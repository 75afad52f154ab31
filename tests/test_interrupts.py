"""Ctrl-C and odd places to start from: an exit code and a line, never a traceback (helper-102, helper-103)."""

from __future__ import annotations

import importlib.abc
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import carrytool
from carrytool.cli.run import Terminated, _run
from carrytool.gitlayer.git import Git
from tests.gitrepo import init_repo, write_manifest


def _raised_while_interrupted() -> int:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise RuntimeError("release unlocked lock") from None   # as Thread.start raised it, in CPython


def test_an_error_raised_while_an_interrupt_unwinds_is_an_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    """helper-103: Ctrl-C while a thread started raised `RuntimeError: release unlocked lock` on the way out:
    exit 70 and a traceback. (`from None` hides the context from the traceback, not from `__context__`.)"""
    with pytest.raises(typer.Exit) as exit_:
        _run(_raised_while_interrupted)
    assert exit_.value.exit_code == 130
    assert capsys.readouterr().err == "carrytool: interrupted; nothing was written\n"


def test_an_error_without_an_interrupt_is_still_a_bug() -> None:
    def broken() -> int:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        _run(broken)


class _InterruptingImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "carrytool.cli":
            raise KeyboardInterrupt


def test_an_interrupt_while_starting_exits_130(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C in the first tenths of a second (importing the CLI) printed a bare `KeyboardInterrupt` trace."""
    from carrytool.__main__ import main

    monkeypatch.delitem(sys.modules, "carrytool.cli")
    monkeypatch.setattr(sys, "meta_path", [_InterruptingImport(), *sys.meta_path])
    monkeypatch.setattr(sys, "argv", ["carrytool", "check"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "carrytool: interrupted; nothing was done\n"


def test_an_interrupted_merge_base_batch_reaps_every_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-103: interrupted inside `communicate()` (after it closed the pipe), the clean-up called it again,
    which raised `ValueError: read of closed file` instead of the interrupt: a traceback."""
    repo = init_repo(tmp_path / "r")
    a = repo.commit({"a": "1\n"}, "a")
    others = [repo.commit({"b": f"{n}\n"}, f"b{n}", parent=a) for n in range(3)]
    started: list[subprocess.Popen] = []
    real = subprocess.Popen.communicate

    def interrupted(self: subprocess.Popen, *args: object, **kwargs: object) -> tuple:
        started.append(self)
        if len(started) == 2:          # the second: its output read and its pipe closed, then Ctrl-C
            self.stdout.read()                       # type: ignore[union-attr]
            self.stdout.close()                      # type: ignore[union-attr]
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    with Git(repo.path) as git:
        monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            git.merge_base_many(a, others)
        monkeypatch.undo()
    assert len(started) == 2 and all(proc.returncode is not None for proc in started)


def test_a_repo_that_is_a_file_is_an_environment_problem(tmp_path: Path) -> None:
    """helper-103: `--repo FILE` was a NotADirectoryError traceback (exit 70) in every command."""
    afile = tmp_path / "afile"
    afile.write_text("")
    manifest = write_manifest(tmp_path / "m.yaml", {"version": 1, "upstream": {"url": "../up", "branch": "main"},
                                                     "fork": {"branch": "dev"}, "entries": [{"pr": 1}]})
    for argv in (["sync", "--offline"], ["verify", "--rebuild", "--offline"], ["explain", "--offline"]):
        proc = subprocess.run([sys.executable, "-m", "carrytool", *argv, "-m", str(manifest), "--repo", str(afile)],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{afile} is not a directory" in proc.stderr


def test_python_m_where_a_carrytool_folder_is(tmp_path: Path) -> None:
    """helper-102: `python -m carrytool` in a bare repository carrytool used (its cache in `carrytool/`)
    imported that folder as the package, ahead of an editable install: an ImportError traceback. (Only an
    editable install's finder loses to the folder, a regular package never does: this tests the checkout
    `make test` installed, helper-104.)"""
    if Path(carrytool.__file__).resolve().parents[1] != Path(__file__).resolve().parents[1]:
        pytest.skip("the carrytool installed is not this checkout's")
    (tmp_path / "carrytool" / "cache").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for argv in (["--version"], ["check", "-m", "nowhere.yaml"]):
        proc = subprocess.run([sys.executable, "-m", "carrytool", *argv], capture_output=True, text=True,
                              cwd=tmp_path, env=env)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == (0 if argv == ["--version"] else 2), proc.stderr
    assert proc.stderr.startswith("carrytool: error: no manifest at nowhere.yaml")
    assert carrytool.__file__ is not None


@pytest.mark.parametrize("ignored", [False, True])
def test_the_sigterm_handler_is_the_callers_again_afterwards(monkeypatch: pytest.MonkeyPatch, ignored: bool) -> None:
    """helper-109: after an in-process call, the caller's SIGTERM raised carrytool's exception; an ignored
    SIGTERM (nohup, a supervisor) was handled all the same."""
    import signal

    from carrytool.__main__ import main

    def callers(signum: int, frame: object) -> None:
        pass

    before = signal.signal(signal.SIGTERM, signal.SIG_IGN if ignored else callers)
    try:
        seen: list[object] = []
        real = signal.signal

        def spy(signum: int, handler: object) -> object:
            seen.append(handler)
            return real(signum, handler)

        monkeypatch.setattr(signal, "signal", spy)
        monkeypatch.setattr(sys, "argv", ["carrytool", "check", "-m", "/nonexistent/manifest.yaml"])
        with pytest.raises(SystemExit):
            main()
        monkeypatch.undo()
        assert signal.getsignal(signal.SIGTERM) is (signal.SIG_IGN if ignored else callers)
        assert len(seen) == (0 if ignored else 2)
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, Terminated])
def test_an_interrupt_while_the_command_line_is_read_exits_130(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str],
                                                                interrupt: type[KeyboardInterrupt]) -> None:
    """Ctrl-C (or SIGTERM) while click read the command line was click's `Aborted!`, exit 1: a failure
    a CI job could not tell from a failed sync."""
    import click

    from carrytool.cli import main

    def interrupted(*args: object) -> None:
        raise interrupt

    monkeypatch.setattr(click.Path, "convert", interrupted)
    monkeypatch.setattr(sys, "argv", ["carrytool", "sync", "--manifest", "m.yaml"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 130
    said = "(SIGTERM)" if interrupt is Terminated else ""
    assert f"carrytool: interrupted{' ' + said if said else ''}; nothing was done\n" in capsys.readouterr().err


def test_a_repo_that_is_a_folder_inside_a_repository_is_refused(tmp_path: Path) -> None:
    """helper-113: `--repo outer/plain` (a folder, not a repository) found `outer` above it and wrote the fork
    branch and every fetched object into `outer/.git`, a repository the user never named. The default
    (`.`) is still found from a folder inside the clone, as git does, unless GIT_CEILING_DIRECTORIES
    (now honoured) stops the search."""
    outer = init_repo(tmp_path / "outer", bare=False)
    (outer.path / "plain").mkdir()
    manifest = write_manifest(tmp_path / "m.yaml", {"version": 1, "upstream": {"url": str(tmp_path / "up"),
                              "branch": "main"}, "fork": {"branch": "dev"}, "entries": [{"pr": 1}]})
    proc = subprocess.run([sys.executable, "-m", "carrytool", "sync", "-m", str(manifest), "--repo", "outer/plain"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert f"outer/plain is not a git repository: it is a folder inside the repository {outer.path}" in proc.stderr
    assert outer.git("for-each-ref") == "" and not (outer.path / ".git" / "carrytool").exists()
    ceiling = {**os.environ, "GIT_CEILING_DIRECTORIES": str(outer.path)}
    proc = subprocess.run([sys.executable, "-m", "carrytool", "sync", "-m", str(manifest)], capture_output=True,
                          text=True, cwd=outer.path / "plain", env=ceiling)
    assert proc.returncode == 4 and ". is not a git repository" in proc.stderr, proc.stderr
    for repo in (str(outer.path), str(outer.path / ".git")):          # the repository itself, either way
        proc = subprocess.run([sys.executable, "-m", "carrytool", "sync", "-m", str(manifest), "--repo", repo],
                              capture_output=True, text=True, cwd=tmp_path)
        assert "not a git repository" not in proc.stderr, proc.stderr


def test_warnings_as_errors_do_not_stop_the_cli(tmp_path: Path) -> None:
    """helper-113: with PYTHONWARNINGS=error a dependency's DeprecationWarning (typer reading a helper click
    deprecates) stopped every command at import: a traceback and exit 1, "verification failed" to CI."""
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    proc = subprocess.run([sys.executable, "-m", "carrytool", "check", "-m", "nowhere.yaml"], capture_output=True,
                          text=True, cwd=tmp_path, env=env)
    assert "Traceback" not in proc.stderr and proc.returncode == 2, proc.stderr
