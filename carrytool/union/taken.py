"""What `union continue` takes from the scratch tree beside the conflicted files, and the editor and merge-tool
leftovers it refuses to take.

Every change made in the scratch tree goes into the union; h214's trial on celery found vim's swap file
`celery/app/.task.py.swp` taken into the union's patch, and then into the fork, with exit 0 and never named. So
continue names every file it takes beyond the conflicted ones, and refuses a file an editor or a merge tool
leaves behind (added, and tracked by none of the fold's inputs) unless the user takes it by name (`--take`). A `--take` naming anything else (a path the scratch tree lacks, a
typo; a file continue takes anyway) is refused: h219 found it accepted silently, the leftover meant not taken.
A conflicted file deleted from the scratch tree is refused as well, unless taken by name: h237 found both sides'
changes to it dropped with exit 0.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from carrytool.errors import ConflictError, InputError

# (pattern of the file's name, what leaves it): well-known names, matched case-sensitively
LEFTOVERS = (
    (".*.sw[a-p]", "a vim swap file"),
    ("*~", "an editor's backup"),
    ("#*#", "an Emacs auto-save file"),
    (".#*", "an Emacs lock file"),
    ("*.orig", "a merge backup"),
    ("*.rej", "a patch's rejected hunks"),
    ("*.BACKUP.*", "a git mergetool file"), ("*.BASE.*", "a git mergetool file"),
    ("*.LOCAL.*", "a git mergetool file"), ("*.REMOTE.*", "a git mergetool file"),
    ("*_BACKUP_[0-9]*", "a git mergetool file"), ("*_BASE_[0-9]*", "a git mergetool file"),
    ("*_LOCAL_[0-9]*", "a git mergetool file"), ("*_REMOTE_[0-9]*", "a git mergetool file"),
    (".DS_Store", "macOS Finder's metadata"),
    ("*.py[co]", "Python's bytecode cache"),
)
# (a directory's name, what leaves it): every file under one is such a leftover (h226: the user's check of the
# resolution, pytest run in the scratch tree, went into the union as `__pycache__/*.pyc` and `.pytest_cache/*`)
LEFTOVER_DIRS = {"__pycache__": "Python's bytecode cache", ".pytest_cache": "a test runner's cache",
                 ".mypy_cache": "a type checker's cache", ".ruff_cache": "a linter's cache"}


def leftover_kind(path: str) -> str | None:
    """What editor, merge tool or tool run leaves a file named as PATH's last component, or in a directory
    named as one of PATH's others; None: none known."""
    *folders, name = path.split("/")
    return next((LEFTOVER_DIRS[folder] for folder in folders if folder in LEFTOVER_DIRS), None) or \
        next((kind for pattern, kind in LEFTOVERS if fnmatch.fnmatchcase(name, pattern)), None)


def in_scratch(given: Collection[str], root: Path) -> list[str]:
    """The --take or --drop-edit paths GIVEN as the scratch tree ROOT names its files: an absolute path under
    ROOT (as the refusals print them; h226: "the scratch tree has no file" of a file it has; h228: "no recorded
    edit is held back there") or one that starts with `./`, made relative; any other as given (refused, when
    the scratch tree has no such file)."""
    out = []
    for path in given:
        if os.path.isabs(path):
            folder, name = os.path.split(path)
            try:
                path = str((Path(os.path.realpath(folder)) / name).relative_to(root.resolve()))
            except ValueError:
                pass
        while path.startswith("./"):
            path = path[2:]
        out.append(path)
    return out


def taken_files(edits: Mapping[str, object | None], shown: Collection[str], conflicted: Collection[str]
                ) -> list[dict[str, str]]:
    """`[{"file", "change": "added|changed|deleted"}]`: the files of EDITS (path -> new content, None when
    deleted) beyond the CONFLICTED ones, against the tree the stop SHOWN in the scratch tree; sorted."""
    out = []
    for path in sorted(p for p in edits if p not in conflicted):
        change = "deleted" if edits[path] is None else "changed" if path in shown else "added"
        out.append({"file": path, "change": change})
    return out


def refuse_unknown_takes(taken: list[dict[str, str]], *, tracked: Callable[[str], bool], take: Collection[str],
                         present: Collection[str], deleted: Collection[str] = (), root: Path,
                         command: Callable[[list[str]], str]) -> None:
    """InputError (nothing recorded) naming each path of TAKE that is not a leftover continue refuses (added,
    named as an editor or merge tool names its files, TRACKED by no input of the fold) nor a conflicted file
    DELETED from the scratch tree (refuse_deleted_conflicts): a path the scratch tree (files PRESENT) lacks, or
    a file continue takes without --take. COMMAND(extra options): the continue to run, with the options given
    but --take."""
    refused = {item["file"] for item in taken if item["change"] == "added" and leftover_kind(item["file"])
               and not tracked(item["file"])} | set(deleted)
    wrong = [(path, f"the scratch tree has no file {path}" if path not in present else
              f"{path} is no editor or merge-tool leftover that continue refuses (it takes every other change "
              "without --take)") for path in dict.fromkeys(take) if path not in refused]
    if not wrong:
        return
    raise InputError("; ".join(f"--take {path}: {why}" for path, why in wrong) + "; nothing was recorded",
                     hint=f"--take names a file an editor or a merge tool leaves behind in the scratch tree {root} "
                          "(its path there, e.g. `a.py.orig`), which continue refuses unless taken on purpose, or "
                          "a conflicted file deleted there, to drop it from the union; "
                          f"without it: {command([])}")


def refuse_leftovers(taken: list[dict[str, str]], *, tracked: Callable[[str], bool], take: Collection[str],
                     root: Path, command: Callable[[list[str]], str]) -> None:
    """ConflictError (nothing recorded) naming each file of TAKEN that an editor or merge tool leaves behind,
    added and TRACKED by none of the fold's inputs, unless TAKE names it; the hint says how to go on: remove
    them, or take one on purpose. COMMAND(extra options) is the continue to run, with the options given."""
    found = [(item["file"], kind) for item in taken if item["change"] == "added" and item["file"] not in take
             for kind in [leftover_kind(item["file"])] if kind and not tracked(item["file"])]
    if not found:
        return
    named = ", ".join(f"{path} ({kind})" for path, kind in found)
    removal = "rm -- " + " ".join(shlex.quote(str(root / path)) for path, _kind in found)
    takes = [word for path, _kind in found for word in ("--take", path)]
    raise ConflictError(
        f"the scratch tree {root} holds what an editor or a merge tool leaves behind, which continue does not take "
        f"into the union unless you say so: {named}; nothing was recorded",
        hint=f"remove them ({removal}), then: {command([])}; or, to take them on purpose (the union then "
             f"carries them): {command(takes)}")


def continue_command(name: str, invocation: str, drop: Collection[str],
                     take: Collection[str]) -> Callable[[list[str]], str]:
    """`carrytool union continue NAME` with the --drop-edit and --take options given, then EXTRA's, and the
    -m/--repo INVOCATION: the refusal's commands run as printed (h209)."""
    def command(extra: list[str]) -> str:
        words = [word for path in drop for word in ("--drop-edit", path)]
        words += [word for path in take for word in ("--take", path)] + extra
        return f"carrytool union continue {shlex.quote(name)}" + "".join(f" {shlex.quote(w)}" for w in words) + \
            invocation
    return command


def refuse_deleted_conflicts(conflicts: list[dict], present: Mapping[str, tuple[str, bytes]], *,
                             take: Collection[str], root: Path, shown: Mapping[str, tuple[str, str]], git_dir: Path,
                             command: Callable[[list[str]], str]) -> list[str]:
    """The conflicted files (CONFLICTS: the stop's records) deleted from the scratch tree ROOT (not in PRESENT)
    that continue takes: those TAKE names. A conflicted file deleted and not taken by name is a ConflictError
    (nothing recorded): continue dropped it from the union, and both sides' changes to it, with exit 0 and a
    warning after (h237). So is one made a symbolic link there (h246: `ln -sf b.py a.py` took the link, exit 0,
    a warning after). A conflict the stop asked to decide by deleting the file (one of another kind, a
    recorded deletion: `deletes_file`) is no such file. The hint restores each as the stop wrote it (SHOWN:
    path -> (mode, blob) in GIT_DIR's store); COMMAND(extra options): the continue to run, with the options given."""
    linked = {c["file"] for c in conflicts if _link_now(c["file"], present, shown)}
    gone = [c for c in conflicts if c["kind"] != "other" and not c.get("deletes_file")
            and (c["file"] not in present or c["file"] in linked)]
    missing = [c for c in gone if c["file"] not in take]
    if missing:
        cleared: set[Path] = set()      # a folder in the way of two files is moved once (h257)
        restores = [step for c in missing for step in [_restore(git_dir, shown.get(c["file"]), root / c["file"],
                                                                c["file"] in linked, root, cleared)] if step]
        takes = [word for c in missing for word in ("--take", c["file"])]
        raise ConflictError(
            "".join(f"{c['file']}: a conflicted file ({', '.join(c['entries'])}) is "
                    + (f"a symbolic link in the scratch tree {root} now: continue would put the link in the union in "
                       "its place, and drop both sides' changes to it; " if c["file"] in linked else
                       f"gone from the scratch tree {root}: continue would drop it from the union, and both sides' "
                       "changes to it with it; ")
                    for c in missing) + "nothing was recorded",
            hint=(f"restore it as the stop wrote it ({' && '.join(restores)}), " if len(restores) == len(missing)
                  else "restore it as the stop wrote it, ")
                 + f"resolve its conflicts, then: {command([])}; or, to drop the file from the union on purpose: "
                   f"{command(takes)}")
    return [c["file"] for c in gone]


def _link_now(path: str, present: Mapping[str, tuple[str, bytes]], shown: Mapping[str, tuple[str, str]]) -> bool:
    """Whether the conflicted file PATH, a regular file as the stop wrote it (SHOWN), is a symbolic link in the
    scratch tree now (PRESENT): `ln -sf` over it drops both sides' changes as `rm` does (h246)."""
    return path in present and present[path][0] == "120000" and shown.get(path, ("",))[0] in ("100644", "100755")


def _restore(git_dir: Path, entry: tuple[str, str] | None, target: Path, linked: bool = False,
             root: Path | None = None, cleared: set[Path] | None = None) -> str | None:
    """The shell command writing the blob of ENTRY (mode, oid) to TARGET (LINKED: removing the link there
    first; a directory there is moved into a new temporary folder, not removed); None for no regular file. A
    folder of it under ROOT (the scratch tree) made a symbolic link is removed (the link only: writing through it
    wrote over a file outside the scratch tree, h253's review), one made a file is moved as a directory is, and
    the folders made again; CLEARED: such folders an earlier restore of the same command moved or removed (then
    made again: a second `rm` or `mv` of it failed, or moved that file out of the tree; h257), to which it adds."""
    if entry is None or entry[0] not in ("100644", "100755"):
        return None
    path = shlex.quote(str(target))
    folders = [] if root is None else [root / part for part in _folders(target.relative_to(root))]
    blocked = next((folder for folder in folders if folder.is_symlink() or folder.exists() and not folder.is_dir()),
                   None)
    if blocked is not None:
        first = [] if cleared is not None and blocked in cleared else \
            [f"rm {shlex.quote(str(blocked))}" if blocked.is_symlink() else f'mv {shlex.quote(str(blocked))} "$(mktemp -d)"']
        if cleared is not None:
            cleared.add(blocked)
        steps = [*first, f"mkdir -p {shlex.quote(str(target.parent))}"]
    elif linked:
        steps = [f"rm {path}"]
    elif target.is_dir():       # made a directory at the stop: kept, moved out of the scratch tree (h246)
        steps = [f'mv {path} "$(mktemp -d)"']
    else:
        steps = [] if target.parent.is_dir() else [f"mkdir -p {shlex.quote(str(target.parent))}"]
    steps.append(f"git --git-dir {shlex.quote(str(git_dir))} cat-file blob {entry[1]} > {path}")
    return " && ".join(steps + ([f"chmod +x {path}"] if entry[0] == "100755" else []))


def _folders(relative: Path) -> list[Path]:
    """The folders of RELATIVE (a path in the scratch tree), outermost first: `pkg`, `pkg/sub` of pkg/sub/a.py."""
    return [Path(*relative.parts[:n]) for n in range(1, len(relative.parts))]
