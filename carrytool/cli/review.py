"""The commands that tell: explain (the plan, for reviewers), bisect (the entry that breaks a check), diff
(two nights), status (what upstream did with the PRs); and demo, the story on an embedded scenario."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Optional

import typer

from carrytool.cli.inputs import _check_format, _check_report, _load, _open_git, _usage
from carrytool.cli.options import (
    ManifestOpt,
    QuietOpt,
    ReadRepoOpt,
    ReportOpt,
    VerboseOpt,
    _flags,
    _invocation,
    _State,
    app,
)
from carrytool.cli.report import _report_failure
from carrytool.cli.run import _run, _say
from carrytool.errors import CarryError


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

            from carrytool.render.commands import with_suggestion_commands

            data = with_suggestion_commands(result.to_json(), _invocation())
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
    status (also a PR whose head went), refolded (also its settings alone)), asserts and resolutions.

    Reads local objects only; a missing one is exit 4 naming the fetch that brings it (a PR head or carry
    commit only a range-diff needs: that range-diff is left out and the fetch named instead).
    Example: carrytool diff --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    _flags(quiet, verbose)
    _State.options = (manifest, repo)

    def body() -> int:
        from carrytool.manifest.load import manifest_path
        from carrytool.render.commands import Invocation
        from carrytool.render.diff import render_diff_markdown, render_diff_text, summary_line
        from carrytool.render.safe import printable
        from carrytool.review.diff import diff_nights
        from carrytool.review.diff_order import said
        from carrytool.review.nights import load_nights

        _check_format(fmt, ("text", "markdown", "json"))
        with _report_failure("diff", None, fmt):
            nights = load_nights(old, new, manifest=manifest_path(manifest), repo=repo)
            with _open_git(repo) as git:
                result = diff_nights(git, *nights, options=Invocation.of(manifest, repo).options(),
                                     on_disk=new is None)
        for line in result.unavailable():      # said even with -q: the diff is not whole
            print(f"carrytool: warning: range-diff not shown for {printable(line)}", file=sys.stderr)
        if result.newest_first:                # said even with -q and JSON: the diff reads them as given
            print(f"carrytool: warning: {printable(said(result.newest_first, result.old))}", file=sys.stderr)
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
        from carrytool.pipeline.lock import lock_path, parse_lock_file
        from carrytool.render.status import render_status_text
        from carrytool.review.forge import ForgeClient, guess_forge
        from carrytool.review.status import apply_status, gather_status

        _check_format(fmt, ("text", "json"))
        if forge not in (None, "github", "gitlab"):
            raise _usage(f"--forge must be github or gitlab, got '{forge}'")
        with _report_failure("status", None, fmt):
            loaded = _load(manifest)
            path = lock_path(loaded)
            lock = parse_lock_file(path) if path.is_file() else None
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
