"""The command line: parse options, call the core, render, pick the exit code. Thin on purpose.

The typer app and its top-level options live in `options`; each command in the module of its kind (`fork`:
sync, check, schema, verify; `review`: explain, bisect, diff, status, demo; `union`: the union sub-app), on
helpers that run a command body and map errors and interrupts to exit codes (`run`), load its inputs
(`inputs`) and write its report (`report`); `completion` answers `--show-completion`. This module is the
console entry (`main`), building only the command the command line names. The CLI may import every other
package of carrytool; beyond `carrytool.errors` and the version, only lazily, inside a command's body:
importing it (for `--help`, say) loads typer and click and nothing of the core.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys

import typer

from carrytool.cli import fork, review, union  # noqa: F401 - registers the commands, in the order help lists them
from carrytool.cli.completion import _completion_shell, _show_completion
from carrytool.cli.options import app
from carrytool.cli.run import _by, _interrupt_in, _terminated

# the top-level options that take no value: before a command's name they leave the choice to that name
_TOP_FLAGS = frozenset({"-q", "--quiet", "-v", "--verbose"})


def _app_for(argv: list[str]) -> typer.Typer:
    """APP with only the command ARGV runs registered, when ARGV names one (after top-level flags alone);
    else APP itself. typer converts every registered command's signature into click parameters before
    parsing anything (~2 ms a command); a command's run, help and errors never show its siblings. The top
    level's help, a misspelt name (click suggests the near ones) and shell completion see every command."""
    name = next((arg for arg in argv if arg not in _TOP_FLAGS), None)
    if name is None or name.startswith("-") or os.environ.get("_CARRYTOOL_COMPLETE"):
        return app
    commands = [c for c in app.registered_commands
                if (c.name or typer.main.get_command_name(c.callback.__name__)) == name]  # type: ignore[union-attr]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return only


def main() -> None:
    """Console entry point (`carrytool --version` is answered before this, in `carrytool.__main__`)."""
    import signal

    before = None
    with contextlib.suppress(ValueError):          # (not in the main thread: a caller embedding the CLI)
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:      # an ignored SIGTERM stays ignored
            before = signal.signal(signal.SIGTERM, _terminated)
    try:
        _main()
    finally:
        if before is not None:                     # (helper-109: an in-process caller's SIGTERM raised ours)
            signal.signal(signal.SIGTERM, before)


def _main() -> None:
    shell = _completion_shell(sys.argv[1:])
    if shell is not None:
        _show_completion(shell)
    try:
        _app_for(sys.argv[1:])()
    except SystemExit as exc:
        cause = _interrupt_in(exc)
        if cause is not None and not getattr(cause, "carrytool_said", False):
            # Ctrl-C or SIGTERM while click read the command line: typer's silent exit 130 (older: "Aborted!", 1)
            print(f"carrytool: interrupted{_by(cause)}; nothing was done", file=sys.stderr)
            sys.exit(130)
        raise
    except Exception:  # an unexpected bug: show it, as the style asks
        import traceback

        traceback.print_exc()
        sys.exit(70)
