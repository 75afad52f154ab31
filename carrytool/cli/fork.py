"""The fork branch's commands: sync composes it, verify checks a tree (and how strong the asserts are);
check and schema, the manifest's."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from carrytool.cli.inputs import _check_format, _check_report, _load, _load_kept, _open_git, _usage
from carrytool.cli.options import (
    ManifestOpt,
    QuietOpt,
    ReadRepoOpt,
    RepoOpt,
    ReportOpt,
    VerboseOpt,
    _flags,
    _State,
    _union_options,
    app,
)
from carrytool.cli.report import _emit, _error_line, _report_failure
from carrytool.cli.run import _run, _say


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

        _check_format(fmt, ("text", "json"))
        _check_report(report, manifest)
        with _report_failure("sync", report, fmt):
            git, loaded, kept_yaml = _load_kept(manifest, repo)
            with git, _progress(fmt == "text" and not _State.quiet) as progress:
                options = SyncOptions(offline=offline, locked=locked, push=push, dry_run=dry_run, strict=strict,
                                      wait=wait)
                result = run_sync(loaded, git, options, progress, notify=_say)
                merged = _merged_upstream(git, result, write=not dry_run) if fmt == "text" else None
                git.keep_named(result.names())      # every SHA the report names persists
                if not dry_run:                     # (a dry run writes nothing)
                    kept_yaml.save()
        if dry_run:
            result.extra["dry_run"] = True
        _emit(result, fmt, report, merged)
        return result.exit_code

    _run(body)


def _merged_upstream(git, report, *, write: bool) -> dict[str, str]:  # noqa: ANN001 - Git, Report
    """Of the PRs whose conflict with upstream alone fails the run, the ones upstream likely merged as another
    commit, with what it has of each in explain's words (review.status_has: explain's weighing and its cache), for
    the `next:` that drops them (h262: "rebase" alone, for PRs squash-merged upstream). Text only: the words are
    the `next:` line's. WRITE: the answers weighed are kept on disk (not by `--dry-run`, which writes nothing)."""
    from carrytool.errors import CarryError

    steps = [s for s in report.failed_conflicts if s.entry.kind == "pr" and s.head
             and any(conflict.get("upstream") for conflict in s.conflicts)]
    if not steps or not report.upstream:
        return {}
    from carrytool.review.status_has import has_of, likely_merged, save_kept

    merged = {}
    try:
        for step in steps:
            try:
                had = has_of(git, step.entry, report.upstream["sha"], step.head, write=write)
            except CarryError:          # the advice is then the rebase, as before
                continue
            if had is not None and likely_merged(had):
                merged[step.id] = had.said
    finally:
        save_kept(git, write=write)
    return merged


def _progress(shown: bool):  # noqa: ANN202 - a context manager yielding the progress callback or None
    """The progress bar (render.text, imported only when one may show: `--format json` and -q render no
    text, so a nightly sync loads none of the text renderer)."""
    if not shown:
        from contextlib import nullcontext

        return nullcontext()
    from carrytool.render.text import progress_reporter

    return progress_reporter(sys.stderr, True)


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
        unborn = bool(head) and git.rev_parse(f"refs/heads/{head}") is None
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
    command = f"carrytool verify --rev {rev}{options}" if rev else None
    then = f"`{command}` checks what sync composed" if command else \
        f"the fork branch is not in this repository: fetch it, or run `carrytool verify --rev {branch}" \
        f"{_union_options(_State.options[0], Path('.'))}` in the repository sync wrote it to"
    report.warnings.append({
        "kind": "work-tree", "branch": head or None, "command": command,
        "message": f"checked the files of the work tree {where}, which has "
                   # (a repository sync composed into right after `git init`: nothing checked out at all)
                   + (f"no commit checked out ({head} has none yet)" if unborn else
                      f"{head or 'a detached HEAD'} checked out")
                   + f", not the fork branch {branch}: {then}"})


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
