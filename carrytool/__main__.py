"""The console script and `python -m carrytool`: `--version` is answered here, without importing the CLI
(typer and click take most of start-up); everything else goes to `carrytool.cli.main`."""

import sys


def main() -> None:
    """Console entry point."""
    if sys.argv[1:] == ["--version"]:
        from carrytool import __version__

        sys.stdout.write(f"carrytool {__version__}\n")     # what the CLI's own --version prints
        sys.stdout.flush()
        return
    from carrytool.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
