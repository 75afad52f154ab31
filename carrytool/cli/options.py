"""The typer app, its top-level options (--version, -q, -v), the option types commands share, and what a run
remembers of its command line (-m and --repo, repeated in the next steps it names)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from carrytool import __version__

# help is rich on a terminal, plain click text in pipes and under NO_COLOR (stable for scripts and docs)
_HELP_MODE = "rich" if sys.stdout.isatty() and not os.environ.get("NO_COLOR") else None
if _HELP_MODE is None:
    import typer.core

    typer.core.HAS_RICH = False     # else typer escapes "[default: ...]" for rich markup it will not render

app = typer.Typer(
    name="carrytool",
    rich_markup_mode=_HELP_MODE,
    help="Keep a fork building on top of upstream: carry PRs and fork fixes from a manifest, "
         "deterministically, and prove nothing was lost.\n\n"
         "Exit codes: 0 ok, 1 verification failed, 2 bad input, 3 conflict, 4 environment.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

ManifestOpt = Annotated[Optional[Path], typer.Option(
    "-m", "--manifest", help="The manifest (default: $CARRYTOOL_MANIFEST, else carries/manifest.yaml).",
    show_default=False)]
RepoOpt = Annotated[Path, typer.Option(
    "--repo", help="The repository to fetch into and write the fork branch of (bare works too).")]
ReadRepoOpt = Annotated[Path, typer.Option(
    "--repo", help="The repository to read (bare works too); fetches go into its refs/carrytool/ namespace, "
                   "no branch is written.")]
ReportOpt = Annotated[Optional[Path], typer.Option("--report", help="Also write the JSON report to FILE.",
                                                   metavar="FILE")]


class _State:
    quiet = False
    verbose = False
    options: tuple[Optional[Path], Optional[Path]] = (None, None)   # -m and --repo, repeated in next steps


def _invocation():  # noqa: ANN202 - render.commands.Invocation, imported lazily
    from carrytool.render.commands import Invocation

    return Invocation.of(*_State.options)


QUIET_HELP = ("Only problems (errors, conflicts, failed checks, warnings that a change is missing or stale) and "
              "the outcome line.")
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help=QUIET_HELP)]
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose", help="Show files and details.")]


def _flags(quiet: bool, verbose: bool) -> None:
    """-q/-v work before or after the command name."""
    _State.quiet = _State.quiet or quiet
    _State.verbose = _State.verbose or verbose


def _version(value: bool) -> None:
    if value:
        typer.echo(f"carrytool {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help=QUIET_HELP)] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show files and details.")] = False,
) -> None:
    _State.quiet, _State.verbose = quiet, verbose
    _State.options = (None, None)


def _union_options(manifest: Optional[Path], repo: Path) -> str:
    """The -m/--repo the user gave, as union next-step commands repeat them (nothing for the defaults)."""
    import shlex

    from carrytool.render.commands import Invocation

    options = Invocation.of(manifest, repo).options()
    return " " + shlex.join(options) if options else ""
