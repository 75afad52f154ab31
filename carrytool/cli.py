"""The command line: parse options, call the core, render, pick the exit code. Thin on purpose."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import __version__
from .errors import CarryError

app = typer.Typer(
    name="carrytool",
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
ReportOpt = Annotated[Optional[Path], typer.Option("--report", help="Also write the JSON report to FILE.",
                                                   metavar="FILE")]


class _State:
    quiet = False
    verbose = False


def _version(value: bool) -> None:
    if value:
        typer.echo(f"carrytool {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Only errors and the outcome line.")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show files and details.")] = False,
) -> None:
    _State.quiet, _State.verbose = quiet, verbose


def _diag(message: str) -> None:
    if not _State.quiet:
        print(message, file=sys.stderr)


def _run(body: Callable[[], int]) -> None:
    """Run a command body; map CarryError to its exit code with a message, never a traceback."""
    try:
        code = body()
    except CarryError as exc:
        print(f"carrytool: error: {exc}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        print("carrytool: interrupted; nothing was written", file=sys.stderr)
        raise typer.Exit(130) from None
    raise typer.Exit(code)


def _load(manifest: Optional[Path]):  # noqa: ANN202
    from .manifest import load_manifest, manifest_path

    return load_manifest(manifest_path(manifest))


def _open_git(repo: Path):  # noqa: ANN202
    from .git import Git

    return Git(repo)


def _emit(report, fmt: str, report_file: Optional[Path]) -> None:  # noqa: ANN001
    from .render.text import render_report
    from .report import write_report

    if report_file:
        write_report(report, report_file)
    if fmt == "json":
        sys.stdout.write(report.dumps())
    elif not _State.quiet:
        render_report(report, sys.stdout, verbose=_State.verbose)
    else:
        from .render.text import outcome_line
        print(outcome_line(report))


@app.command()
def sync(
    manifest: ManifestOpt = None,
    repo: RepoOpt = Path("."),
    offline: Annotated[bool, typer.Option("--offline", help="Do not fetch; use what refs/carrytool holds.")] = False,
    locked: Annotated[bool, typer.Option("--locked", help="Compose exactly what <manifest>.lock says.")] = False,
    push: Annotated[bool, typer.Option("--push", help="Push the result to fork.url (with a lease).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Compose and check, but move no branch, "
                                                            "write no lock, push nothing.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="A conflict skipped by on_conflict: skip "
                                                          "fails the run (exit 3).")] = False,
    wait: Annotated[float, typer.Option("--wait", metavar="SECONDS",
                                        help="Wait this long for another sync's lock.")] = 0.0,
    report: ReportOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json (the report on stdout).")] = "text",
) -> None:
    """Compose the fork branch: upstream head + every entry, in memory; move it only when all holds.

    Example: carrytool sync -m carries/manifest.yaml --repo ~/src/vllm --report sync.json
    """
    def body() -> int:
        from .render.text import progress_reporter
        from .repolock import RepoLock
        from .sync import SyncOptions, run_sync

        _check_format(fmt, ("text", "json"))
        loaded = _load(manifest)
        with _open_git(repo) as git, RepoLock(git.git_dir, wait=wait, notify=_diag), \
                progress_reporter(sys.stderr, fmt == "text" and not _State.quiet) as progress:
            options = SyncOptions(offline=offline, locked=locked, push=push, dry_run=dry_run, strict=strict)
            result = run_sync(loaded, git, options, progress, notify=_diag)
            if dry_run:
                result.extra["dry_run"] = True
        _emit(result, fmt, report)
        return result.exit_code

    _run(body)


@app.command()
def check(manifest: ManifestOpt = None) -> None:
    """Validate the manifest (keys, types, ids, refs, paths, asserts) without touching git.

    Example: carrytool check -m carries/manifest.yaml
    """
    def body() -> int:
        loaded = _load(manifest)
        prs = sum(1 for e in loaded.entries if e.kind == "pr")
        print(f"{loaded.path}: ok ({len(loaded.entries)} entries: {prs} PRs, {len(loaded.entries) - prs} carries; "
              f"{len(loaded.asserts)} asserts)")
        return 0

    _run(body)


@app.command()
def verify(
    manifest: ManifestOpt = None,
    repo: RepoOpt = Path("."),
    rev: Annotated[Optional[str], typer.Option("--rev", help="Check the tree of this commit in --repo.")] = None,
    path: Annotated[Optional[Path], typer.Option("--path", help="Check files on disk under DIR "
                                                               "(default: the work tree of --repo).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text, json or github (annotations).")] = "text",
    report: ReportOpt = None,
) -> None:
    """Run the manifest's asserts on a tree, for the fork's own CI.

    Example: carrytool verify --rev intarweb-dev --format github
    """
    def body() -> int:
        from .verify import verify_path, verify_rev

        _check_format(fmt, ("text", "json", "github"))
        if rev and path:
            raise _usage("use either --rev or --path, not both")
        loaded = _load(manifest)
        if rev:
            with _open_git(repo) as git:
                result = verify_rev(loaded, git, rev)
        else:
            result = verify_path(loaded, path or _work_tree(repo))
        if fmt == "github":
            from .render.github import emit_github

            if report:
                from .report import write_report
                write_report(result, report)
            emit_github(result, sys.stdout)
            return result.exit_code
        _emit(result, fmt, report)
        return result.exit_code

    _run(body)


@app.command()
def explain(
    entries: Annotated[Optional[list[str]], typer.Argument(
        metavar="[ENTRY]...", help="Tell the story of these entries: pr/45612, 45612, carry/NAME or NAME.",
        show_default=False)] = None,
    manifest: ManifestOpt = None,
    repo: RepoOpt = Path("."),
    offline: Annotated[bool, typer.Option("--offline", help="Do not fetch; use what refs/carrytool holds.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, markdown, json, or commit-message "
                                                      "(a union's drafted commit message).")] = "text",
    report: ReportOpt = None,
) -> None:
    """Explain the plan for reviewers: every entry and why, the overlap map, union coverage, suggestions.

    Writes no branch and no lock (only git objects). Exit 0 whenever it explains, even a plan
    with conflicts. Example: carrytool explain pr/45612 --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    def body() -> int:
        from contextlib import nullcontext

        from .explain import draft_union_message, explain as run_explain, find_entries, write_explanation
        from .render.explain_text import render_explain
        from .render.markdown import render_markdown
        from .render.text import progress_reporter
        from .repolock import RepoLock

        _check_format(fmt, ("text", "markdown", "json", "commit-message"))
        loaded = _load(manifest)
        wanted = find_entries(loaded, entries or [])
        if fmt == "commit-message" and (len(wanted) != 1 or wanted[0].kind != "carry"):
            raise _usage("--format commit-message needs exactly one carry ENTRY (e.g. carry/wake-path-union)")
        with _open_git(repo) as git:
            lock = RepoLock(git.git_dir, notify=_diag) if not offline else None   # fetching writes refs
            with lock or nullcontext(), progress_reporter(sys.stderr, fmt == "text" and not _State.quiet) as progress:
                result = run_explain(loaded, git, offline=offline, entries=wanted, progress=progress)
            if report:
                write_explanation(result, report)
            if fmt == "json":
                sys.stdout.write(result.dumps())
            elif fmt == "markdown":
                sys.stdout.write(render_markdown(result))
            elif fmt == "commit-message":
                sys.stdout.write(draft_union_message(loaded, result, wanted[0]))
            else:
                render_explain(result, sys.stdout, verbose=_State.verbose)
        return 0

    _run(body)


@app.command()
def demo(
    keep: Annotated[Optional[Path], typer.Option("--keep", help="Build the scenario in DIR and keep it.")] = None,
) -> None:
    """Tell the story on an embedded scenario: the naive cherry-pick loop loses fixes; sync does not."""
    def body() -> int:
        from .demo.run import run_demo

        return run_demo(keep)

    _run(body)


def _work_tree(repo: Path) -> Path:
    from .git import Git

    git = Git(repo)
    if git.bare:
        raise _usage("--repo is bare: pass --rev REV (or --path DIR)")
    top = git.run("rev-parse", "--show-toplevel", cwd=repo).stdout.decode().strip()
    git.close()
    return Path(top)


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise _usage(f"--format must be one of {', '.join(allowed)}, got '{fmt}'")


def _usage(message: str) -> CarryError:
    from .errors import InputError

    return InputError(message)


def main() -> None:
    """Console entry point."""
    try:
        app()
    except SystemExit:
        raise
    except Exception:  # an unexpected bug: show it, as the style asks
        traceback.print_exc()
        sys.exit(70)
