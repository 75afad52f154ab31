"""`carrytool union`: new, compose, continue, abort and status of the union commits a manifest carries."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from carrytool.cli.inputs import _check_format, _load, _open_git, _usage
from carrytool.cli.options import _HELP_MODE, ManifestOpt, QuietOpt, RepoOpt, _flags, _State, _union_options, app
from carrytool.cli.report import _report_failure
from carrytool.cli.run import _run, _say

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
    """Run ACTION(union) holding the repository lock; render the outcome it returns (and then what the fold
    said on the way). ABORTING: a union whose `supersedes` is empty may be aborted (helper-92: emptied
    during a stop, the fold could not be dropped)."""
    from carrytool.gitlayer.repolock import RepoLock
    from carrytool.union.fold import Union

    loaded = _load(manifest)
    with _open_git(repo) as git, RepoLock(git.git_dir, wait=wait, notify=_say), _held() as notify:
        union = Union(loaded, git, name, notify=notify, scratch=Path(os.path.abspath(scratch)) if scratch else None,
                      invocation=_union_options(manifest, repo), aborting=aborting)
        return action(union)


@contextmanager
def _held() -> Iterator[Callable[[str], None]]:
    """A notify that holds what a fold says until the command's own output (its header first) is written,
    then says it (h179: "a.py: 2 conflict hunk(s) resolved from the store; 1 not in the resolution store"
    came before `union status`'s and `union compose`'s header line)."""
    held: list[str] = []
    try:
        yield held.append
    finally:
        sys.stdout.flush()      # (stdout to a pipe is buffered: what it holds goes first)
        for message in held:
            _say(message)


def _naming(notify: Callable[[str], None], name: str, several: bool) -> Callable[[str], None]:
    """NOTIFY, each message led by the union's id when `union status` reports SEVERAL: they are said after
    every union's lines (h245: "dropped on purpose: pr/6444's hunk ..." named neither union)."""
    return (lambda message: notify(f"carry/{name}: {message}")) if several else notify


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
                   scratch: ScratchOpt = None, wait: WaitOpt = 0.0, quiet: QuietOpt = False,
                   drop_edit: Annotated[Optional[list[str]], typer.Option(
                       "--drop-edit", metavar="FILE", show_default=False,
                       help="Drop from the store the recorded edit this stop held back in FILE (it did not apply "
                            "beside the new hunks) instead of redoing it; the file as you left it is recorded "
                            "(repeatable).")] = None,
                   take: Annotated[Optional[list[str]], typer.Option(
                       "--take", metavar="FILE", show_default=False,
                       help="Take FILE, which an editor or merge tool leaves behind (a swap file, `*~`, `*.orig`, "
                            "...), into the union on purpose, or the deletion of a conflicted FILE removed from the "
                            "scratch tree; without it continue refuses either (repeatable).")] = None) -> None:
    """Take every change made in the scratch tree (recorded for the next fold) and go on with the fold; the
    files taken beyond the conflicted ones are named."""
    _flags(quiet, False)
    _run(lambda: _union_run(manifest, repo, name, scratch, wait,
                            lambda union: _union_result(union, union.resume(drop=drop_edit or [], take=take or []))),
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
        with _held() as notify:     # (what the refold previews say: after the header)
            with _report_failure("union status", None, fmt):
                loaded = _load(manifest)
                names = [name] if name else [e.name for e in loaded.entries if e.kind == "carry" and e.supersedes]
                invocation = _union_options(manifest, repo)
                with _open_git(repo) as git:
                    lock = RepoLock(git.git_dir, wait=wait, notify=_say) if not offline else None  # fetching: refs
                    with lock or nullcontext():
                        reports = [status(Union(loaded, git, n, notify=_naming(notify, n, len(names) > 1),
                                                invocation=invocation,
                                                scratch=Path(os.path.abspath(scratch)) if scratch else None),
                                          offline=offline) for n in names]
            if fmt == "json":
                print(_json.dumps(reports, indent=2))
            else:
                for item in reports:
                    render_status(item, sys.stdout, invocation=invocation)
        return 0

    _run(body)
