"""The console script and `python -m carrytool`: `--version` is answered here, without importing the CLI
(typer and click take most of start-up); everything else goes to `carrytool.cli.main`."""

import os
import sys


def main() -> None:
    """The CLI, returning (or raising SystemExit) as any callable does: for callers in-process."""
    if sys.argv[1:] == ["--version"]:
        from carrytool import __version__

        sys.stdout.write(f"carrytool {__version__}\n")     # what the CLI's own --version prints
        sys.stdout.flush()
        return
    from carrytool.cli import main as cli_main

    cli_main()


def entry() -> None:
    """Console entry point (also `python -m carrytool`): `main`, then out of the process without the
    interpreter's teardown, which frees every object a large run made (25-40 ms after a sync of 60 real PRs)
    for nothing. The work is done by then: every git process was waited for, every file written and closed
    by the command; the standard streams are flushed here. An exit that is not plain (a message instead of
    a status, a stream that cannot be flushed) is left to the interpreter, which reports it as it always has."""
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
    if not isinstance(code, int):
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:      # the reader left (`| head`): the exit code is the run's, whatever is unread
        os._exit(code & 0xFF)
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code & 0xFF)


if __name__ == "__main__":
    entry()
