"""`--show-completion [SHELL]`: the shell's completion script, for the shell named or the one running."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _completion_shell(argv: list[str]) -> str | None:
    """The shell `--show-completion [SHELL]` asks for; None when the option is absent.

    click 8.5 parses typer's option as a flag, so typer ignores a named shell and guesses from the
    parent process (`sh -c ...` gives "Shell sh not supported", no shell at all a traceback). Here a
    named shell wins, then a supported parent shell, then $SHELL.
    """
    for i, arg in enumerate(argv):
        if arg.startswith("--show-completion="):
            return arg.split("=", 1)[1]
        if arg == "--show-completion":
            if i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                return argv[i + 1]
            try:
                import shellingham

                detected = shellingham.detect_shell()[0]
            except Exception:  # noqa: BLE001 - no shell among the parents: fall back to $SHELL
                detected = ""
            return detected if detected in _SHELLS else Path(os.environ.get("SHELL", "")).name
    return None


def _show_completion(shell: str) -> None:
    from typer._completion_shared import get_completion_script

    if shell not in _SHELLS:
        sys.stderr.write(f"carrytool: no completion for shell {shell!r}; name one of: {', '.join(_SHELLS)} "
                         "(carrytool --show-completion bash)\n")
        sys.exit(2)
    sys.stdout.write(get_completion_script(prog_name="carrytool", complete_var="_CARRYTOOL_COMPLETE",
                                           shell=shell) + "\n")
    sys.exit(0)
