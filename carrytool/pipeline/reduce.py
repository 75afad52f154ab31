"""A head reduced to some of its files: merges that need to decide only those files merge only those.

A 3-way merge decides each path from its three versions; only renames tie paths together, and a
rename pairs a path one side deletes with a path that side adds. So the head keeps every add, delete
and rename as it is (rename detection sees the same sources and targets on both sides), and each other
path it merely modifies, which the other side still has at the same place (neither a rename source nor
moved away, nor made a directory), goes back to its base version: there the merge takes the other side's version without a
content merge, and every path kept, and every add, delete or rename, merges exactly as in the head's
whole merge.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from carrytool.gitlayer.git import EMPTY_TREE, REGULAR_MODES, Change, Git, Signature


def reduced_head(git: Git, *, head: str, base: str, changes: Sequence[Change], keep: Collection[str],
                 ours_tree: str, sig: Signature, what: str, is_file: Callable[[str], bool] | None = None) -> str | None:
    """A commit (parent BASE) with HEAD's tree but every path outside KEEP that HEAD only modifies (not
    adds, deletes or renames) and that OURS_TREE, the other side, still has as a file, at its base version; None
    when that would change nothing or leave nothing of KEEP to merge. IS_FILE: whether a path outside KEEP
    is a file in OURS_TREE, when the caller knows it without reading that tree."""
    if not any(path in keep for c in changes for path in c.paths):
        return None
    if is_file is None:
        is_file = lambda path: file_at(git, ours_tree, path)  # noqa: E731
    rest = [c for c in changes if c.status == "M" and c.path not in keep and is_file(c.path)]
    if not rest:
        return None
    tree = _reduced_tree(git, head, base, changes, rest)
    return git.write_commit(tree, [base], sig, sig, f"carrytool: {what}, its other files at their base\n")


FROM_BASE = True       # build a reduced tree from the base when that takes fewer edits (tests compare both)


def _reduced_tree(git: Git, head: str, base: str, changes: Sequence[Change], rest: Sequence[Change]) -> str:
    """HEAD's tree with the paths of REST (files it only modifies) at their BASE version: HEAD's tree with REST
    put back, or BASE's tree with every other change of CHANGES (its whole diff) made, whichever is fewer
    edits (helper-96: pairs of 400-file PRs sharing a few files put back 375 paths, 7 ms a head). The same
    paths, modes and blobs either way: a path neither changes is BASE's and HEAD's alike. (A directory git
    stored in another form in BASE than in HEAD, with the same files, as tools of long ago wrote `100664`,
    keeps that form: the trees' bytes may then differ, not what any path holds, and a reduced head only
    decides which paths conflict, from their blobs; helper-99.)"""
    if FROM_BASE and len(changes) - len(rest) < len(rest):
        edits = _edits_from_base(changes, rest)
        if edits is not None:
            return git.edit_tree(git.tree_of(base), edits)
    return git.edit_tree(git.tree_of(head), {c.path: (c.old_mode, c.old_oid) for c in rest})


def _edits_from_base(changes: Sequence[Change], rest: Sequence[Change]) -> dict[str, tuple[str, str] | None] | None:
    """The edits that make BASE's tree HEAD's but for REST: each change of CHANGES outside REST, made. None
    unless each edit names a path of its own (no rename from a path another change adds) and none is a
    folder of another (a file replacing a directory): then they apply in any order."""
    reset = {id(c) for c in rest}
    edits: dict[str, tuple[str, str] | None] = {}
    for change in changes:
        if id(change) in reset:
            continue
        made = [(change.old_path, None)] if change.old_path is not None else []
        made.append((change.path, None if change.status == "D" else (change.new_mode, change.new_oid)))
        for path, value in made:
            if path in edits:
                return None
            edits[path] = value
    folders = {path[:i] for path in edits for i, ch in enumerate(path) if ch == "/"}
    return None if folders & edits.keys() else edits


def files_alone(git: Git, *, base: str, changes: Sequence[Change], keep: Collection[str], ours_tree: str,
                sig: Signature, what: str, is_file: Callable[[str], bool] | None = None,
                entry_at: Callable[[str], tuple[str, str] | None] | None = None) -> tuple[str, str] | None:
    """The merge `reduced_head` gives (its head onto ours, from BASE) with all three sides cut down to the
    files of KEEP the head modifies: (ours, theirs), two commits on one root commit that holds BASE's
    versions of those files. None where that is not exact, or there is no such file.

    Exact when the head (CHANGES, BASE -> head) modifies regular files, adds paths and deletes paths that
    OURS_TREE has exactly as BASE does (the same mode and blob), nothing else (no rename or change of
    kind); every file it modifies outside KEEP goes back to its base version in the reduced head
    (OURS_TREE has it as a file: IS_FILE); every one in KEEP is a regular file in OURS_TREE; and OURS_TREE
    has nothing where it adds a path (no file either where that path's directories go). Then the reduced
    head differs from BASE in those files, each present on all three sides, in paths it adds, and in
    paths it deletes that ours did not change. Rename detection pairs a deleted path with an added one:
    on the head's side, a path it deletes with one it adds, merged from ours' version, which is the
    base's, to the head's (the head's added file, clean, as when it is no rename); on ours' side, only
    paths ours deletes, which the head neither modifies nor deletes (ours has them), and paths ours
    adds, where the head adds nothing. So the merge takes each added path from the head and each deleted
    one away, clean, leaves every other path as ours has it, and decides each shared file from its
    three blobs: a merge of the three trees of those files alone merges the same blobs, conflicts in the
    same files and writes the same merged blobs (conflict markers aside, which name the commits merged).
    Only when the caller's merge is from BASE alone (BASE is the only merge base of ours and the head):
    the caller knows; here BASE is the commits' root. ENTRY_AT: (mode, oid) of a path outside KEEP in
    OURS_TREE, when the caller knows it without reading that tree (a release branch's PR deletes a
    hundred files)."""
    def ours_at(path: str) -> tuple[str, str] | None:
        return entry_at(path) if entry_at is not None and path not in keep else git.blob_at(ours_tree, path)

    for change in changes:
        if change.status == "A":
            if not _nothing_at(git, ours_tree, change.path):
                return None
        elif change.status == "D":
            if ours_at(change.path) != (change.old_mode, change.old_oid):
                return None
        elif change.status != "M" or change.old_mode not in REGULAR_MODES or change.new_mode not in REGULAR_MODES:
            return None
    if is_file is None:
        is_file = lambda path: file_at(git, ours_tree, path)  # noqa: E731
    shared = [c for c in changes if c.status == "M" and c.path in keep]
    if not shared or any(not is_file(c.path) for c in changes if c.status == "M" and c.path not in keep):
        return None
    ours: dict[str, tuple[str, str] | None] = {}
    for change in shared:
        found = ours[change.path] = git.blob_at(ours_tree, change.path)
        if found is None or found[0] not in REGULAR_MODES:
            return None
    root = git.write_commit(git.edit_tree(EMPTY_TREE, {c.path: (c.old_mode, c.old_oid) for c in shared}), [], sig,
                            sig, f"carrytool: the base of {what}, its shared files alone\n")
    return (git.write_commit(git.edit_tree(EMPTY_TREE, ours), [root], sig, sig,
                             f"carrytool: ours for {what}, its shared files alone\n"),
            git.write_commit(git.edit_tree(EMPTY_TREE, {c.path: (c.new_mode, c.new_oid) for c in shared}), [root],
                             sig, sig, f"carrytool: {what}, its shared files alone\n"))


def _nothing_at(git: Git, tree: str, path: str) -> bool:
    """Whether TREE has nothing at PATH, and no file (nothing but directories) where PATH's directories go."""
    parts = path.split("/")
    for depth, part in enumerate(parts):          # down the tree once, one directory at a time
        found = git.blob_at(tree, part)
        if found is None:
            return True
        if depth == len(parts) - 1 or found[0] != "040000":
            return False
        tree = found[1]
    return True


def file_at(git: Git, tree: str, path: str) -> bool:
    """Whether TREE has a file (not a directory) at PATH."""
    found = git.blob_at(tree, path)
    return found is not None and found[0] != "040000"
