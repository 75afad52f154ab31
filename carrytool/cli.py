"""The command line: parse options, call the core, render, pick the exit code. Thin on purpose."""

from __future__ import annotations

import contextlib
import copy
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from carrytool import __version__
from carrytool.errors import CarryError

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


def _diag(message: str) -> None:
    if not _State.quiet:
        _say(message)


def _say(message: str) -> None:
    """A note said even with -q: what a union fold tells (an edit it could not apply, a resolution it did not
    need, the manifest it left as it was) is about the user's work (helper-98: -q hid them all)."""
    from carrytool.render.safe import printable

    print(printable(message), file=sys.stderr)


def _run(body: Callable[[], int], *, interrupted: str = "nothing was written") -> None:
    """Run a command body; map CarryError to its exit code with a message, never a traceback. INTERRUPTED:
    what an interrupt (Ctrl-C) leaves, in words."""
    try:
        code = body()
    except CarryError as exc:
        from carrytool.gitlayer.urls import redact
        from carrytool.render.safe import printable

        # no credential of a URL, ever; control characters escaped; hints repeat the user's -m/--repo
        print(f"carrytool: error: {printable(_invocation().rewrite(redact(str(exc))))}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt as exc:
        _interrupted(exc, interrupted)
    except Exception as exc:
        # what an interrupt raised on its way out (a thread starting, a pipe closed under a read: helper-103)
        cause = _interrupt_in(exc)
        if cause is None:
            raise
        _interrupted(cause, interrupted)
    raise typer.Exit(code)


def _interrupted(exc: KeyboardInterrupt, otherwise: str) -> NoReturn:
    print(f"carrytool: interrupted{_by(exc)}; {_said(exc, otherwise)}", file=sys.stderr)
    exc.carrytool_said = True        # type: ignore[attr-defined]  # (main says it when nothing else did)
    raise typer.Exit(130) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `timeout`): handled as Ctrl-C is, so that every clean-up runs (helper-108:
    without it the process ended on the spot, and bisect's temporary tree stayed)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _by(exc: BaseException) -> str:
    return " (SIGTERM)" if isinstance(exc, Terminated) else ""


def _said(exc: BaseException, otherwise: str) -> str:
    """What the run had done when interrupted: what the code it interrupted noted on the exception
    (`carrytool_done`: sync, after the branch moved or while it pushed), else OTHERWISE."""
    return getattr(exc, "carrytool_done", None) or otherwise


def _interrupt_in(exc: BaseException) -> KeyboardInterrupt | None:
    """The interrupt (Ctrl-C, SIGTERM) being handled when EXC was raised: the first in its context chain."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        if isinstance(found, KeyboardInterrupt):
            return found
        seen.add(id(found))
        found = found.__context__
    return None


def _load(manifest: Optional[Path]):  # noqa: ANN202
    from carrytool.manifest.load import load_manifest, manifest_path

    return load_manifest(manifest_path(manifest))


def _open_git(repo: Path, *, quarantine: bool = False):  # noqa: ANN202
    from carrytool.gitlayer.git import Git

    # a --repo the user named is that repository; the default (`.`) is found from a folder inside it, as git does
    return Git(repo, quarantine=quarantine, exact=repo != Path("."))


def _union_options(manifest: Optional[Path], repo: Path) -> str:
    """The -m/--repo the user gave, as union next-step commands repeat them (nothing for the defaults)."""
    import shlex

    from carrytool.render.commands import Invocation

    options = Invocation.of(manifest, repo).options()
    return " " + shlex.join(options) if options else ""


def _failed_report(command: str, exc: CarryError, report_file: Optional[Path], fmt: str) -> None:
    """A run that stopped before it had a plan still leaves a report (ok: false, the error) for CI."""
    from carrytool.pipeline.report import Report, write_report

    error = {"exit_code": exc.exit_code, "kind": type(exc).__name__, "message": str(exc)}
    failed = Report(command, error=error)
    if report_file:
        write_report(failed, report_file)
    if fmt == "json" and command in ("sync", "verify", "explain"):      # a report's shape, as --report writes
        sys.stdout.write(failed.dumps())
    elif fmt == "json":           # the other commands' documents have no `asserts`/`warnings` of a report's
        import json

        doc = {"carrytool": __version__, "command": command, "ok": False, "exit_code": exc.exit_code, "error": error}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")


@contextmanager
def _report_failure(command: str, report_file: Optional[Path], fmt: str) -> Iterator[None]:
    """A CarryError before the command has its result still leaves the report (`--report`, `--format json`)."""
    try:
        yield
    except CarryError as exc:
        _failed_report(command, exc, report_file, fmt)
        raise


def _error_line(report) -> None:  # noqa: ANN001
    """An error recorded in a report (after planning began) goes to stderr, once."""
    if report.error:
        from carrytool.gitlayer.urls import redact
        from carrytool.render.safe import printable

        message = redact(str(report.error["message"]))
        print(f"carrytool: error: {printable(_invocation().rewrite(message))}", file=sys.stderr)


def _emit(report, fmt: str, report_file: Optional[Path]) -> None:  # noqa: ANN001
    from carrytool.pipeline.report import write_report
    from carrytool.render.text import render_quiet, render_report

    dumped = report.dumps() if fmt == "json" else None     # once, for the file and stdout alike
    unwritten: CarryError | None = None
    if report_file:
        try:
            write_report(report, report_file, dumped)
        except CarryError as exc:       # the run is over: say what it did, then why the file is missing
            unwritten = exc
    if dumped is not None:
        sys.stdout.write(dumped)
    elif not _State.quiet:
        render_report(report, sys.stdout, verbose=_State.verbose, invocation=_invocation(), show_error=False)
    else:  # quiet hides progress and detail, never the reasons for a failure
        render_quiet(report, sys.stdout, invocation=_invocation())
    _error_line(report)
    if unwritten is not None:
        result = report.result or {}
        if result.get("updated"):
            done = f"the run itself finished: {result.get('branch')} moved to {str(result.get('sha'))[:12]}" + \
                   (" and the lock was written" if report.extra.get("lock_written") else "")
        else:
            done = f"the run itself finished (exit {report.exit_code}) and moved no branch"
        raise type(unwritten)(f"{unwritten.message}; {done}", where=unwritten.where,
                              hint="the output above is the report; run again once the file can be written")


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
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Compose the fork branch: upstream head + every entry, in memory; move it only when all holds.

    Example: carrytool sync -m carries/manifest.yaml --repo ~/src/vllm --report sync.json
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from carrytool.pipeline.sync import SyncOptions, run_sync
        from carrytool.render.text import progress_reporter

        _check_format(fmt, ("text", "json"))
        _check_report(report, manifest)
        with _report_failure("sync", report, fmt):
            loaded = _load(manifest)
            with _open_git(repo, quarantine=True) as git, \
                    progress_reporter(sys.stderr, fmt == "text" and not _State.quiet) as progress:
                options = SyncOptions(offline=offline, locked=locked, push=push, dry_run=dry_run, strict=strict,
                                      wait=wait)
                result = run_sync(loaded, git, options, progress, notify=_say)
                git.keep_named(result.names())      # every SHA the report names persists
        if dry_run:
            result.extra["dry_run"] = True
        _emit(result, fmt, report)
        return result.exit_code

    _run(body)


@app.command()
def check(
    files: Annotated[Optional[list[Path]], typer.Argument(help="Manifests to check (default: -m, "
                                                               "$CARRYTOOL_MANIFEST or carries/manifest.yaml).",
                                                          show_default=False)] = None,
    manifest: ManifestOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Validate manifests (keys, types, ids, refs, paths, asserts) without touching git.

    Examples: carrytool check -m carries/manifest.yaml; carrytool check carries/*.yaml (pre-commit)
    """
    _flags(quiet, False)

    def body() -> int:
        from carrytool.errors import CarryError as _Error
        from carrytool.manifest.load import load_manifest, manifest_path

        targets = list(files or []) or [manifest_path(manifest)]
        worst = 0
        for target in targets:
            try:
                loaded = load_manifest(target)
            except _Error as exc:
                from carrytool.render.safe import printable

                print(f"carrytool: error: {printable(str(exc))}", file=sys.stderr)
                worst = max(worst, exc.exit_code)
                continue
            if not _State.quiet:
                prs = sum(1 for e in loaded.entries if e.kind == "pr")
                carries, asserts = len(loaded.entries) - prs, len(loaded.asserts)
                print(f"{loaded.path}: ok ({len(loaded.entries)} entries: {prs} PR{'s' * (prs != 1)}, "
                      f"{carries} carr{'y' if carries == 1 else 'ies'}; {asserts} assert{'s' * (asserts != 1)})")
        return worst

    _run(body)


@app.command()
def schema() -> None:
    """Print the manifest's JSON Schema (for editors: `# yaml-language-server: $schema=...`)."""
    def body() -> int:
        from carrytool.manifest.schema import render_schema

        sys.stdout.write(render_schema())
        return 0

    _run(body)


@app.command()
def verify(
    manifest: ManifestOpt = None,
    repo: ReadRepoOpt = Path("."),
    rev: Annotated[Optional[str], typer.Option("--rev", help="Check the tree of this commit in --repo.")] = None,
    path: Annotated[Optional[Path], typer.Option("--path", help="Check files on disk under DIR "
                                                               "(default: the work tree of --repo).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text, json or github (annotations).")] = "text",
    report: ReportOpt = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Recompose from manifest + lock and fail unless "
                                                            "--rev (default: the fork branch) is exactly it.")] = False,
    offline: Annotated[bool, typer.Option("--offline", help="With --rebuild: do not fetch.")] = False,
    mutants: Annotated[bool, typer.Option("--mutants", help="How strong are the asserts: break the code each "
                                                            "one guards (in memory) and report which asserts "
                                                            "catch which mutants, and the survivors.")] = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run the manifest's asserts on a tree, for the fork's own CI.

    Examples: carrytool verify --format github (the work tree);
    carrytool verify --rev origin/intarweb-dev --rebuild (prove the published branch is the manifest's);
    carrytool verify --mutants --rev intarweb-dev (the mutation score of the asserts)
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)
    if mutants:
        _run(lambda: _verify_mutants(manifest, repo, rev, path, fmt, report, rebuild))
        return

    def body() -> int:
        from carrytool.pipeline.verify import verify_path, verify_rebuild, verify_rev

        _check_format(fmt, ("text", "json", "github"))
        _check_report(report, manifest)
        if rev and path:
            raise _usage("use either --rev or --path, not both")
        if rebuild and path:
            raise _usage("--rebuild compares a commit: use --rev, not --path")
        with _report_failure("verify", report, fmt):
            loaded = _load(manifest)
            if rebuild:
                from contextlib import nullcontext

                from carrytool.gitlayer.repolock import RepoLock

                with _open_git(repo) as git, \
                        (RepoLock(git.git_dir, notify=_say) if not offline else nullcontext()):   # it fetches
                    result = verify_rebuild(loaded, git, rev, offline=offline)
            elif rev:
                with _open_git(repo) as git:
                    result = verify_rev(loaded, git, rev)
            else:
                result = verify_path(loaded, path or _work_tree(repo))
                if path is None:
                    _note_checkout(loaded, repo, result)
        if fmt == "github":
            from carrytool.render.github import emit_github

            if report:
                from carrytool.pipeline.report import write_report
                write_report(result, report)
            emit_github(result, sys.stdout)
            _error_line(result)
        else:
            _emit(result, fmt, report)
        return result.exit_code

    _run(body)


def _verify_mutants(manifest: Optional[Path], repo: Path, rev: Optional[str], path: Optional[Path], fmt: str,
                    report_file: Optional[Path], rebuild: bool) -> int:
    from carrytool.pipeline.verify import mutants_path, mutants_rev
    from carrytool.render.mutants import render_mutants_json, render_mutants_text

    _check_format(fmt, ("text", "json"))
    if rev and path:
        raise _usage("use either --rev or --path, not both")
    if rebuild:
        raise _usage("--mutants judges the asserts on one tree: drop --rebuild")
    _check_report(report_file, manifest)
    with _report_failure("verify --mutants", None, fmt):
        loaded = _load(manifest)
        if rev:
            with _open_git(repo) as git:
                result = mutants_rev(loaded, git, rev)
        else:
            result = mutants_path(loaded, path or _work_tree(repo))
    if report_file:
        import io

        from carrytool.pipeline.atomic import write_atomic

        text = io.StringIO()
        render_mutants_json(result, text)
        write_atomic(report_file, text.getvalue())
    if fmt == "json":
        render_mutants_json(result, sys.stdout)
    else:
        render_mutants_text(result, sys.stdout, verbose=_State.verbose)
    return result.exit_code


@app.command()
def explain(
    entries: Annotated[Optional[list[str]], typer.Argument(
        metavar="[ENTRY]...", help="Tell the story of these entries: pr/45612, 45612, carry/NAME or NAME.",
        show_default=False)] = None,
    manifest: ManifestOpt = None,
    repo: ReadRepoOpt = Path("."),
    offline: Annotated[bool, typer.Option("--offline", help="Do not fetch; use what refs/carrytool holds.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, markdown, json, or commit-message "
                                                      "(a union's drafted commit message).")] = "text",
    report: ReportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Explain the plan for reviewers: every entry and why, the overlap map, union coverage, suggestions.

    Writes no branch and no lock (only git objects). Exit 0 whenever it explains, even a plan
    with conflicts. Example: carrytool explain pr/45612 --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from contextlib import nullcontext

        from carrytool.gitlayer.repolock import RepoLock
        from carrytool.render.explain_text import render_explain
        from carrytool.render.markdown import render_markdown
        from carrytool.render.text import progress_reporter
        from carrytool.review.explain import draft_union_message, find_entries
        from carrytool.review.explain import explain as run_explain
        from carrytool.review.explanation import write_explanation

        _check_format(fmt, ("text", "markdown", "json", "commit-message"))
        _check_report(report, manifest)
        with _report_failure("explain", report, fmt), ExitStack() as stack:
            loaded = _load(manifest)
            wanted = find_entries(loaded, entries or [])
            if fmt == "commit-message" and (len(wanted) != 1 or wanted[0].kind != "carry"):
                # a union of this manifest as the example (helper-102: the demo's name, in every manifest)
                example = next((e.id for e in loaded.entries if e.kind == "carry" and e.supersedes),
                               next((e.id for e in loaded.entries if e.kind == "carry"), "carry/NAME"))
                raise _usage(f"--format commit-message needs exactly one carry ENTRY (e.g. {example})")
            if fmt == "commit-message" and not wanted[0].supersedes:
                # helper-87: a draft "union of " with an empty Carry-Supersedes trailer, which sync reads
                from carrytool.errors import InputError
                raise InputError(f"--format commit-message drafts a union's message: {wanted[0].id} supersedes no "
                                 "PR", hint="list the PRs it stands for under its `supersedes:` (docs/manifest.md), "
                                 "or write a plain carry's message by hand")
            git = stack.enter_context(_open_git(repo, quarantine=True))
            lock = RepoLock(git.git_dir, notify=_say) if not offline else None   # fetching writes refs
            with lock or nullcontext(), progress_reporter(sys.stderr, fmt == "text" and not _State.quiet) as progress:
                result = run_explain(loaded, git, offline=offline, entries=wanted, progress=progress)
            # every SHA the report names persists (read from its compact JSON, which json encodes in C);
            # migrated now, so that a failure to write them into the store is the one thing printed (not a
            # report, then an error). The indented JSON only where it is written (helper-96: 19 MB of it, on
            # 60 polars PRs, for the text format too)
            import json

            data = result.to_json()
            git.keep_named(json.dumps(data))
            git.migrate_objects()
            dumped = result.dumps(data) if report or fmt == "json" else None
            if report:
                write_explanation(result, report, dumped)
            if fmt == "json":
                sys.stdout.write(dumped or "")
            elif fmt == "markdown":
                sys.stdout.write(render_markdown(result, invocation=_invocation()))
            elif fmt == "commit-message":
                sys.stdout.write(draft_union_message(loaded, result, wanted[0]))
            else:
                render_explain(result, sys.stdout, verbose=_State.verbose, invocation=_invocation())
        return 0

    _run(body)


@app.command()
def bisect(
    manifest: ManifestOpt = None,
    repo: ReadRepoOpt = Path("."),
    rev: Annotated[Optional[str], typer.Option("--rev", help="Search the chain of this composed commit (e.g. a "
                                                             "night's result.sha) instead of composing.")] = None,
    asserts: Annotated[Optional[list[str]], typer.Option("--assert", metavar="NAME", help="Search with this "
                                                         "assert of the manifest (repeatable; default: those failing "
                                                         "at the tip, none when --run is given).")] = None,
    run: Annotated[Optional[str], typer.Option("--run", metavar="CMD", help="Also a check: `sh -c CMD` in a "
                                               "temporary copy of each probed tree; non-zero exit is bad.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="S", help="Seconds before --run's command is "
                                           "killed (a timeout counts as bad).")] = 600.0,
    offline: Annotated[bool, typer.Option("--offline", help="Do not fetch; use what refs/carrytool holds.")] = False,
    locked: Annotated[bool, typer.Option("--locked", help="Compose exactly what the lock says.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Find the first entry that breaks a check, whether it breaks alone, and the earlier entries it needs.

    Writes no branch and no lock (only git objects, and the --run verdict cache under the git dir).
    Exit 0 when the search finished, 1 when the tip passes every check (nothing to find).
    Example: carrytool bisect --run "python -m pytest -x -q tests/unit" --format json
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from contextlib import nullcontext

        from carrytool.gitlayer.repolock import RepoLock
        from carrytool.render.bisect import render_bisect_json, render_bisect_text
        from carrytool.render.text import progress_reporter
        from carrytool.review.bisect import bisect as run_bisect
        from carrytool.review.bisect import select_checks

        _check_format(fmt, ("text", "json"))
        if rev and (offline or locked):
            raise _usage("--rev reads the chain of a composed commit: --offline and --locked do not apply")
        with _report_failure("bisect", None, fmt):
            loaded = _load(manifest)
            checks = select_checks(loaded, asserts or [], run, timeout)
            with _open_git(repo) as git:
                fetching = not rev and not offline
                lock = RepoLock(git.git_dir, notify=_say) if fetching else None
                shown = fmt == "text" and not _State.quiet
                with lock or nullcontext(), progress_reporter(sys.stderr, shown) as progress:
                    result = run_bisect(loaded, git, checks, rev=rev, offline=offline, locked=locked,
                                        narrow=not asserts, progress=progress)
        if fmt == "json":
            render_bisect_json(result, sys.stdout, _invocation())
        else:
            render_bisect_text(result, sys.stdout, _invocation())
        return result.exit_code

    # (helper-108: "nothing was written", after it kept verdicts)
    _run(body, interrupted="the verdicts found so far stay in its cache (a rerun takes them); no branch, ref or "
                           "file of yours was written")


@app.command()
def diff(
    old: Annotated[Optional[str], typer.Argument(
        metavar="[OLD]", help="The older lock: a file or REV:PATH (default: the last committed night before "
                              "the lock on disk).",
        show_default=False)] = None,
    new: Annotated[Optional[str], typer.Argument(
        metavar="[NEW]", help="The newer lock: a file or REV:PATH (default: the lock file on disk).",
        show_default=False)] = None,
    manifest: ManifestOpt = None,
    repo: Annotated[Path, typer.Option("--repo", help="The repository whose objects are read (nothing is "
                                                      "fetched or written).")] = Path("."),
    fmt: Annotated[str, typer.Option("--format", help="text, markdown or json.")] = "text",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """What changed between two nights: upstream, each entry (added, removed, moved with a range-diff,
    status, refolded), asserts and resolutions.

    Reads local objects only; a missing one is exit 4 naming the fetch that brings it (a PR head or carry
    commit only a range-diff needs: that range-diff is left out and the fetch named instead).
    Example: carrytool diff --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from carrytool.manifest.load import manifest_path
        from carrytool.render.diff import render_diff_markdown, render_diff_text, summary_line
        from carrytool.render.safe import printable
        from carrytool.review.diff import diff_nights, load_nights

        _check_format(fmt, ("text", "markdown", "json"))
        with _report_failure("diff", None, fmt):
            nights = load_nights(old, new, manifest=manifest_path(manifest), repo=repo)
            with _open_git(repo) as git:
                result = diff_nights(git, *nights)
        for line in result.unavailable():      # said even with -q: the diff is not whole
            print(f"carrytool: warning: range-diff not shown for {printable(line)}", file=sys.stderr)
        if fmt == "json":
            sys.stdout.write(result.dumps())
        elif fmt == "markdown":
            sys.stdout.write(render_diff_markdown(result))
        elif _State.quiet:           # the outcome line alone: what changed, in numbers
            sys.stdout.write(summary_line(result) + "\n")
        else:
            sys.stdout.write(render_diff_text(result, verbose=_State.verbose))
        return 0

    _run(body)


@app.command()
def status(
    manifest: ManifestOpt = None,
    repo: Annotated[Path, typer.Option("--repo", help="The repository whose objects tell whether a merged PR "
                                                      "landed (nothing is fetched or written to it but the "
                                                      "forge cache).")] = Path("."),
    forge: Annotated[Optional[str], typer.Option("--forge", help="github or gitlab (default: guessed from "
                                                                 "upstream.url).", show_default=False)] = None,
    api_url: Annotated[Optional[str], typer.Option("--api-url", help="The forge's REST root (default: "
                                                   "$CARRYTOOL_GITHUB_API / $CARRYTOOL_GITLAB_API, else the "
                                                   "public API).", show_default=False)] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Answer from the cache; no request.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Apply the drops and title updates to the manifest "
                                                        "(in place, keeping comments); nothing else.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """What upstream did with the PRs the fork carries: state, title, labels, head, merge commit, whether
    a merged PR's every hunk landed, and what to do (keep, drop, refold, retitle, investigate).

    Token from $GITHUB_TOKEN / $GITLAB_TOKEN (never printed). Exit 0 whatever it suggests; 4 when the
    forge cannot answer. Example: carrytool status --format json
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from carrytool.manifest.safefile import write_atomic as write_manifest
        from carrytool.pipeline.lock import lock_path, parse_lock
        from carrytool.render.status import render_status_text
        from carrytool.review.forge import ForgeClient, guess_forge
        from carrytool.review.status import apply_status, gather_status

        _check_format(fmt, ("text", "json"))
        if forge not in (None, "github", "gitlab"):
            raise _usage(f"--forge must be github or gitlab, got '{forge}'")
        with _report_failure("status", None, fmt):
            loaded = _load(manifest)
            path = lock_path(loaded)
            lock = parse_lock(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else None
            with _open_git(repo) as git:
                client = ForgeClient(forge or guess_forge(loaded.upstream.url), api_url,
                                     git.common_dir / "carrytool" / "forge-cache.json", offline=offline)
                result = gather_status(loaded, git, client, lock=lock)
            if write:
                from carrytool.errors import InputError
                from carrytool.manifest.load import parse_manifest

                text, result.written = apply_status(loaded, result)
                if text != loaded.text:
                    try:        # what it would write must still be a manifest (an assert may name a dropped PR)
                        parse_manifest(text, loaded.path)
                    except CarryError as exc:
                        raise InputError(f"--write would leave the manifest invalid, so nothing was written: {exc}",
                                         hint="change what the error names by hand (e.g. an assert's `entry:` naming "
                                              "a PR to drop), then run `status --write` again") from None
                    write_manifest(loaded.path, text.encode("utf-8"))   # never through a symlink (helper-85)
        if fmt == "json":
            sys.stdout.write(result.dumps())
        else:
            sys.stdout.write(render_status_text(result, invocation=_invocation(), verbose=_State.verbose))
        return 0

    _run(body)


@app.command()
def demo(
    keep: Annotated[Optional[Path], typer.Option("--keep", help="Build the scenario in DIR and keep it.")] = None,
) -> None:
    """Tell the story on an embedded scenario: the naive cherry-pick loop loses fixes; sync does not."""
    def body() -> int:
        from carrytool.demo.run import run_demo

        return run_demo(keep)

    _run(body)


union_app = typer.Typer(help="Start, compose and refold union commits from the PRs they supersede.",
                        no_args_is_help=True, rich_markup_mode=_HELP_MODE)
app.add_typer(union_app, name="union")
ScratchOpt = Annotated[Optional[Path], typer.Option(
    "--scratch", help="Where a stopped fold is resolved: a missing or empty directory, or one carrytool made "
                      "(default: inside the git dir).", metavar="DIR")]
WaitOpt = Annotated[float, typer.Option("--wait", metavar="SECONDS",
                                        help="Wait this long for another run's repository lock.")]
UnionName = Annotated[str, typer.Argument(help="The carry entry (NAME or carry/NAME).")]


def _union_run(manifest: Optional[Path], repo: Path, name: str, scratch: Optional[Path], wait: float,
               action: Callable, *, aborting: bool = False) -> int:  # noqa: ANN001
    """Run ACTION(union) holding the repository lock; render the outcome it returns. ABORTING: a union whose
    `supersedes` is empty may be aborted (helper-92: emptied during a stop, the fold could not be dropped)."""
    from carrytool.gitlayer.repolock import RepoLock
    from carrytool.union.fold import Union

    loaded = _load(manifest)
    with _open_git(repo) as git, RepoLock(git.git_dir, wait=wait, notify=_say):
        union = Union(loaded, git, name, notify=_say, scratch=Path(os.path.abspath(scratch)) if scratch else None,
                      invocation=_union_options(manifest, repo), aborting=aborting)
        return action(union)


def _union_result(union, outcome) -> int:  # noqa: ANN001
    from carrytool.errors import EXIT_CONFLICT
    from carrytool.render.union import render_outcome

    render_outcome(outcome, sys.stdout, fork_url=union.manifest.fork.url, quiet=_State.quiet)
    return 0 if outcome.done else EXIT_CONFLICT


@union_app.command("new")
def union_new(
    name: Annotated[str, typer.Argument(help="The new carry's name (letters, digits, '.', '_', '-').")],
    prs: Annotated[list[int], typer.Argument(help="The PR numbers it supersedes, in fold order.",
                                             metavar="PR...", show_default=False)],
    manifest: ManifestOpt = None, repo: RepoOpt = Path("."), scratch: ScratchOpt = None, wait: WaitOpt = 0.0,
    paths: Annotated[Optional[list[str]], typer.Option(
        "--paths", metavar="PR=GLOB", help="Supersede PR only for the paths GLOB matches (repeatable).",
        show_default=False)] = None,
    patch: Annotated[Optional[str], typer.Option("--patch", metavar="FILE", help="The patch file the fold "
                                                 "writes, relative to the manifest (default unions/NAME.patch).",
                                                 show_default=False)] = None,
    commit: Annotated[bool, typer.Option("--commit", help="Keep the union as a commit (under refs) "
                                                          "instead of a patch file.")] = False,
    in_place: Annotated[bool, typer.Option("--in-place", help="Put it where the first PR it supersedes stands "
                                                            "(default: the end of the entries).")] = False,
    offline: Annotated[bool, typer.Option("--offline", help="Do not fetch.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Add `- carry: NAME` superseding PRs at the end of the entries, then fold it (exit 3 if it stops).

    Example: carrytool union new wake-path-union 45398 45612 --paths 45612='vllm/v1/worker/*'
    """
    _flags(quiet, False)

    def body() -> int:
        from carrytool.union.new import add_union_entry

        if commit and patch:
            raise _usage("use either --patch FILE or --commit, not both")
        from carrytool.gitlayer.repolock import RepoLock
        from carrytool.union.fold import Union
        from carrytool.union.scratch import Scratch

        loaded = _load(manifest)
        if scratch:
            Scratch(Path(os.path.abspath(scratch)), name).check_usable()     # refuse before the manifest changes
        with _open_git(repo) as git, RepoLock(git.git_dir, wait=wait, notify=_say):
            before = loaded.path.read_bytes()
            updated, place = add_union_entry(loaded, name, prs, paths or [], patch=None if commit else
                                             (patch or f"unions/{name}.patch"),
                                             invocation=_union_options(manifest, repo), in_place=in_place)
            written = updated.path.read_bytes()
            # on stdout, where the fold's outcome follows it (helper-146: on stderr, a reader shown stdout first
            # saw it after the stop message)
            if not _State.quiet:
                from carrytool.render.safe import printable

                print(printable(f"added carry/{name} to {updated.path}, " + (
                    f"before {place.id} (the first of its PRs among the entries): sync applies it in that place"
                    if place else "as the last entry" + (" (none of its PRs is an entry)" if in_place else
                                                         " (`--in-place` puts it where its first PR stands)"))),
                      flush=True)
            union = Union(updated, git, name, notify=_say,
                          scratch=Path(os.path.abspath(scratch)) if scratch else None,
                          invocation=_union_options(manifest, repo))
            try:
                outcome = union.compose(offline=offline, added=(before, written))
            except BaseException as exc:
                _take_back(union, (before, written), theirs=_fold_of_another(exc, updated.path))
                raise
            return _union_result(union, outcome)

    _run(body, interrupted=_union_interrupted(name, manifest, repo))


def _union_interrupted(name: str, manifest: Optional[Path], repo: Path) -> str:
    """What an interrupted union command leaves (helper-88: "nothing was written", after it wrote records,
    the patch or the manifest): each file whole, the fold where it stopped; the commands repeat -m/--repo."""
    import shlex

    bare = shlex.quote(name.removeprefix("carry/")) + _union_options(manifest, repo)
    return (f"what the fold wrote so far stays (each file whole: records, the scratch tree, the patch, the "
            f"manifest): `carrytool union status {bare}` says where it stands; `carrytool union continue {bare}` "
            f"goes on when a fold is under way, `carrytool union abort {bare}` drops it")


def _fold_of_another(exc: BaseException, manifest: Path) -> bool:
    """Whether EXC says a fold of the union is under way from another manifest than MANIFEST (its state is
    not this command's: helper-130); from this one, the entry is that fold's, which `continue` needs
    (helper-131: taken out, `continue` and `union new` sent the user round in a loop)."""
    from carrytool.errors import FoldUnderWay

    return isinstance(exc, FoldUnderWay) and exc.manifest is not None and Path(exc.manifest) != manifest.resolve()


def _take_back(union, texts: tuple[bytes, bytes], *, theirs: bool = False) -> None:  # noqa: ANN001 - union.fold.Union
    """`union new` failed before its fold was done or stopped (a PR upstream does not have, no network):
    the manifest goes back to what it was (TEXTS: before, written), unless the fold saved a state (`union
    continue` needs the entry) or the file is no longer what it wrote (`Union.take_back`). THEIRS: the state
    there is another fold's, under way from another manifest (helper-130: the entry stayed in this one)."""
    import hashlib

    state = union.state_path
    if (theirs or not (state.exists() or state.is_symlink())) and \
            union.take_back(texts[0], hashlib.sha256(texts[1]).hexdigest()):
        _say(f"took {union.entry.id} out of {union.manifest.path} again: its fold did not start")


@union_app.command("compose")
def union_compose(
    name: UnionName, manifest: ManifestOpt = None, repo: RepoOpt = Path("."), scratch: ScratchOpt = None,
    wait: WaitOpt = 0.0, offline: Annotated[bool, typer.Option("--offline", help="Do not fetch.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Merge the current heads of the PRs NAME supersedes onto upstream; stop on a conflict the store cannot resolve.

    Example: carrytool union compose wake-path-union
    """
    _flags(quiet, False)
    _run(lambda: _union_run(manifest, repo, name, scratch, wait,
                            lambda union: _union_result(union, union.compose(offline=offline))),
         interrupted=_union_interrupted(name, manifest, repo))


@union_app.command("continue")
def union_continue(name: UnionName, manifest: ManifestOpt = None, repo: RepoOpt = Path("."),
                   scratch: ScratchOpt = None, wait: WaitOpt = 0.0, quiet: QuietOpt = False) -> None:
    """Take every change made in the scratch tree (recorded for the next fold) and go on with the fold."""
    _flags(quiet, False)
    _run(lambda: _union_run(manifest, repo, name, scratch, wait,
                            lambda union: _union_result(union, union.resume())),
         interrupted=_union_interrupted(name, manifest, repo))


@union_app.command("abort")
def union_abort(name: UnionName, manifest: ManifestOpt = None, repo: RepoOpt = Path("."),
                scratch: ScratchOpt = None, wait: WaitOpt = 0.0, quiet: QuietOpt = False) -> None:
    """Drop a stopped fold and the files carrytool wrote in its scratch tree (recorded resolutions stay)."""
    _flags(quiet, False)

    def action(union) -> int:  # noqa: ANN001
        root, left = union.abort()
        print(f"aborted the fold of carry/{union.name}; removed the files carrytool wrote in {root}")
        if union.took_back:
            print(f"took carry/{union.name} out of {union.manifest.path} again: `union new` added it and its "
                  "fold never finished")
        if left:
            print(f"left in place (not carrytool's): {', '.join(left[:10])}" + (" ..." if len(left) > 10 else ""))
        return 0

    _run(lambda: _union_run(manifest, repo, name, scratch, wait, action, aborting=True),
         interrupted=_union_interrupted(name, manifest, repo))


@union_app.command("status")
def union_status(name: Annotated[Optional[str], typer.Argument(help="The carry entry (default: every union).")] = None,
                 manifest: ManifestOpt = None, repo: RepoOpt = Path("."),
                 offline: Annotated[bool, typer.Option("--offline", help="Do not fetch.")] = False,
                 scratch: ScratchOpt = None, wait: WaitOpt = 0.0,
                 fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
                 quiet: QuietOpt = False) -> None:
    """Stale folds, upstream drift into owned files, PRs merged upstream, and what a refold would reuse and ask."""
    _flags(quiet, False)

    def body() -> int:
        import json as _json
        from contextlib import nullcontext

        from carrytool.gitlayer.repolock import RepoLock
        from carrytool.render.union import render_status
        from carrytool.union.fold import Union
        from carrytool.union.status import status

        _check_format(fmt, ("text", "json"))
        with _report_failure("union status", None, fmt):
            loaded = _load(manifest)
            names = [name] if name else [e.name for e in loaded.entries if e.kind == "carry" and e.supersedes]
            invocation = _union_options(manifest, repo)
            with _open_git(repo) as git:
                lock = RepoLock(git.git_dir, wait=wait, notify=_say) if not offline else None   # fetching: refs
                with lock or nullcontext():
                    reports = [status(Union(loaded, git, n, notify=_say, invocation=invocation,
                                            scratch=Path(os.path.abspath(scratch)) if scratch else None),
                                      offline=offline) for n in names]
        if fmt == "json":
            print(_json.dumps(reports, indent=2))
        else:
            for item in reports:
                render_status(item, sys.stdout, invocation=invocation)
        return 0

    _run(body)


def _note_checkout(manifest, repo: Path, report) -> None:  # noqa: ANN001 - Manifest, Report: imported lazily
    """`verify` with neither --rev nor --path checks the work tree: when the fork branch is not what it has
    checked out, say what was checked and how to check the branch (helper-91: "0/2 hold, FAILED" right after
    a sync, the work tree being upstream's main)."""
    from carrytool.gitlayer.git import Git

    branch = manifest.fork.branch
    with Git(repo) as git:
        head = git.run("symbolic-ref", "--short", "-q", "HEAD", cwd=repo, check=False).stdout.decode().strip()
        if head == branch:
            return
        # a rev this repository has (helper-93: `--rev BRANCH` in a clone without it was exit 2): the branch,
        # else a remote's copy of it (origin first)
        remotes = git.run("for-each-ref", "--format=%(refname:short)", f"refs/remotes/*/{branch}",
                          check=False).stdout.decode().split()
        found = [branch] if git.rev_parse(f"refs/heads/{branch}") is not None else []
        found += sorted(remotes, key=lambda r: (not r.startswith("origin/"), r))
        rev = found[0] if found else None
    where = report.extra.get("target", {}).get("path", str(repo))
    options = _union_options(_State.options[0], repo)
    # no command with this --repo when the branch is not here (helper-94: it was exit 2 as written)
    then = f"`carrytool verify --rev {rev}{options}` checks what sync composed" if rev else \
        f"the fork branch is not in this repository: fetch it, or run `carrytool verify --rev {branch}" \
        f"{_union_options(_State.options[0], Path('.'))}` in the repository sync wrote it to"
    report.warnings.append({
        "kind": "work-tree", "branch": head or None,
        "message": f"checked the files of the work tree {where}, which has {head or 'a detached HEAD'} checked out, "
                   f"not the fork branch {branch}: {then}"})


def _work_tree(repo: Path) -> Path:
    from carrytool.gitlayer.git import Git

    # a folder inside a checkout verifies that checkout's files, as the report's target says: verify writes
    # nothing, and `--repo checkout/sub` is how a user in a subfolder names it (helper-93)
    git = Git(repo)
    if git.bare:
        raise _usage("--repo is bare: pass --rev REV (or --path DIR)")
    # git's own answer from REPO, not under the GIT_DIR the wrapper sets (helper-93: from a subdirectory
    # that directory was taken for the top: the asserts' files were not found, "0/10 hold, FAILED")
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"], capture_output=True, env=env)
    top = found.stdout.decode().strip() if found.returncode == 0 else ""
    if not top:
        top = git.run("rev-parse", "--show-toplevel", cwd=repo).stdout.decode().strip()
    git.close()
    return Path(top)


def _check_report(path: Optional[Path], manifest: Optional[Path]) -> None:
    """A --report path that can never be written, or that holds a file of the user's, is refused before
    anything runs or moves."""
    from carrytool.manifest.load import manifest_path
    from carrytool.pipeline.report import check_report_path

    check_report_path(path, manifest_path(manifest))


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise _usage(f"--format must be one of {', '.join(allowed)}, got '{fmt}'")


def _usage(message: str) -> CarryError:
    from carrytool.errors import InputError

    return InputError(message)


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
