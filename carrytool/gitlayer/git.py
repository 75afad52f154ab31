"""The only module that talks to git: argv lists, plumbing, long-lived batch processes.

Every call runs with a scrubbed environment (no inherited GIT_* that could change results), hooks
disabled, and the merge/diff configuration pinned. Two places to run:

- the user's repository, for what reads or writes refs or talks to a remote (`IN_REPO`): fetch and
  push honour the user's transport settings (insteadOf, credential helpers, proxies, http headers);
- everything else (merging, diffing, reading and writing objects) in a private git dir made per `Git`,
  which shares the user's object store but has no config, no `info/` and no refs of its own, and reads
  no global or system config: the same inputs give the same objects on any machine, whatever the
  user's configuration and attributes, and none of their drivers or filters runs.

The `Git` object is composed of one mixin per concern, each in a module of its own: running git
(`processes`), writing objects (`objectwrite`), moving them from the quarantine into the user's store
(`quarantine`), reading objects (`objectread`), trees (`trees`), history (`history`), content and tree
merges (`contentmerge`, `treemerge`, `sidemerges`), diffs (`diffs`) and refs (`refs`). Its state is made
here, in `Git.__init__`, and only here.
"""

from __future__ import annotations

import shlex
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from carrytool.errors import EnvironmentProblem
from carrytool.gitlayer.contentmerge import ContentMerges
from carrytool.gitlayer.diffs import Diffs
from carrytool.gitlayer.env import (
    EMPTY_TREE,
    MIN_GIT,
    PINNED_CONFIG,
    ZERO,
    decode_path,
    encode_path,
    git_argv,
    git_version,
    is_sha,
    parse_version,
    scrubbed_env,
)
from carrytool.gitlayer.history import History
from carrytool.gitlayer.later import Later
from carrytool.gitlayer.mergepipe import MergePipe
from carrytool.gitlayer.objectread import ObjectReads
from carrytool.gitlayer.objects import (
    REGULAR_MODES,
    Change,
    ConflictStage,
    MergeResult,
    Signature,
    change_of,
    paths_of,
)
from carrytool.gitlayer.objectwrite import ObjectWrites
from carrytool.gitlayer.processes import IN_REPO, Processes, _Pipe
from carrytool.gitlayer.quarantine import Quarantine, _read_file
from carrytool.gitlayer.refs import Refs, _RefWrite
from carrytool.gitlayer.sidemerges import LATER_CHUNK, AsideMerges, LaterMerges, merge_line
from carrytool.gitlayer.treemerge import SPLIT_MERGES_AT, TreeMerges, _halves
from carrytool.gitlayer.trees import Trees

__all__ = ["Git", "Change", "ConflictStage", "MergeResult", "Signature", "change_of", "paths_of", "EMPTY_TREE", "MIN_GIT",
           "REGULAR_MODES",
           "PINNED_CONFIG", "ZERO", "decode_path", "encode_path", "git_argv", "git_version", "is_sha",
           "parse_version", "scrubbed_env", "IN_REPO", "work_tree_top",
           # what callers import from here, though it lives in the modules of Git's mixins
           "AsideMerges", "LaterMerges", "merge_line", "LATER_CHUNK", "SPLIT_MERGES_AT", "_halves", "_read_file"]


class Git(Processes, Quarantine, ObjectWrites, ObjectReads, Trees, History, ContentMerges, TreeMerges, Diffs,
          Refs):
    """A repository and the git commands carrytool runs in it."""

    def __init__(self, repo: Path | str, *, quarantine: bool = False, exact: bool = False) -> None:
        """QUARANTINE: objects this run writes go to a quarantine first (see migrate_objects): for
        commands that write many objects and name few (sync, explain). Without it every object is
        written into the repository's store at once (what a command that must survive a kill -9
        between writing an object and naming it in a file needs). EXACT: REPO must be a repository (its
        work tree's top or its git dir), not a folder inside one (a `--repo` the user named)."""
        self.version = git_version()
        repo = Path(repo)
        if not repo.exists():
            raise EnvironmentProblem(f"{repo} does not exist", hint="pass --repo DIR of a git repository")
        if not repo.is_dir():           # (helper-103: a file was a NotADirectoryError traceback)
            raise EnvironmentProblem(f"{repo} is not a directory", hint="pass --repo DIR of a git repository")
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--is-bare-repository",
                               "--show-object-format", "--git-common-dir", "--git-path", "objects"],
                              cwd=repo, capture_output=True, env=scrubbed_env())
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if proc.returncode != 0 or len(lines) != 5:
            raise EnvironmentProblem(f"{repo} is not a git repository",
                                     hint="run inside the fork's clone, or pass --repo DIR")
        self.git_dir = Path(lines[0])
        self.bare = lines[1] == "true"
        if exact:
            _refuse_inside(repo, self.git_dir, (repo / lines[3]).resolve(), self.bare)
        self.object_format = lines[2]
        if self.object_format != "sha1":
            raise EnvironmentProblem(
                f"{repo} is a {self.object_format} repository: carrytool reads and writes SHA-1 object names only "
                "(tree parsing, the quarantine's pack, the lock)", hint="run carrytool in a SHA-1 clone of the fork")
        # a linked work tree has its own git dir; refs, objects and the repository lock live in the common dir
        self.common_dir = (repo / lines[3]).resolve()
        self.object_dir = (repo / lines[4]).resolve()
        # sha1 repositories get objects hashed here and written in batches; others one by one
        self._stage_objects = self.object_format == "sha1"
        self._private: Path | None = None
        self._pending: dict[str, tuple[str, bytes]] = {}
        self.repo = repo.resolve()
        self._pipes: dict[str, _Pipe] = {}
        self._tmp: Path | None = None
        self._tmp_owner: int | None = None     # the locked owner file of _tmp (processes.mark_scratch)
        self._trees: dict[str, list[tuple[str, str, str, bytes]]] = {}
        self._layouts: dict[str, tuple[bytes, list[int]]] = {}   # canonical tree -> its bytes, entry offsets
        self._tree_of: dict[str, str] = {}              # commit -> its tree (objects never change)
        self._links: dict[str, list[str]] = {}         # commit this run wrote -> its tree and parents
        self._commits: dict[str, dict[str, object]] = {}  # commit -> commit_info
        self._merge_pipe: MergePipe | None = None
        self._side_pipe: MergePipe | None = None    # a second merge-tree for large batches (see merge_trees)
        self._diff3_pipe: MergePipe | None = None   # the merge-tree that writes diff3 conflicts (merge_diff3)
        self._patches: dict[tuple[str, str], bytes] = {}
        self._prefetch: tuple[list[tuple[str, str]], Later[subprocess.CompletedProcess | None]] | None = None
        self._threads: list[threading.Thread] = []      # callers' threads that run git in the scratch
        self._later_pipes: list[MergePipe] = []     # merge_trees_later's, until they answered
        self._diffs: dict[tuple[str, str, bool], list[Change]] = {}
        self._bases: dict[str, dict[str, str | None]] = {}     # upstream -> head -> merge base
        self._sole: set[tuple[str, str]] = set()      # (upstream, head) whose merge base is their only one
        self._outside: dict[str, dict[str, list[str]]] = {}   # upstream -> the parents of heads' commits not in it
        self._outside_of: dict[tuple[str, str], frozenset[str]] = {}   # (upstream, head) -> `outside`
        self._merged: dict[str, MergeResult] = {}     # merge_trees' answers by stdin line
        self._abbreviations: dict[str, str | None] = {}   # abbreviated commit name -> the commit (commit_by_abbreviation)
        self._explicit_bases: bool | None = None
        self._quarantine: Path | None = None
        self._fans: set[str] = set()       # the quarantine's fan-out directories made so far
        self._written: dict[str, None] = {}    # the objects this run wrote into the quarantine, in order
        self._packed: dict[str, tuple[str, int, int]] = {}   # object in a quarantine pack -> pack, offset, length
        self._pack_count = 0               # the packs written into the quarantine
        # what this run wrote into the quarantine, kept (up to COPIES_BUDGET bytes) so that migrating packs
        # it from memory, not from the loose files read back; merge-tree's own objects are read from disk
        self._copies: dict[str, tuple[bytes, bytes]] = {}
        self._copies_size = 0
        self._use_quarantine = quarantine
        self._contents: dict[tuple[str | None, str | None, str | None], tuple[bool, bytes] | None] = {}
        self._settled: set[str] = set()    # quarantined objects found in the store or migrated there
        self._idx_lookups: dict = {}       # what _not_in_store found in each .idx file (storeindex)
        self._kept: list[str] = []         # commits whose new objects the user's store must get
        # False: objects no kept commit reaches (stand-ins, merges whose result was not used) are left
        # in the quarantine and vanish with it; True: every object written persists
        self.keep_unreferenced = True
        self.before_ref_write: Callable[[], None] | None = None   # a test hook: runs after migrating
        self._keep_files: list[Path] = []  # .keep files of the packs this run wrote into the store
        self._migrating: tuple[tuple[str, ...], Later[subprocess.CompletedProcess]] | None = None   # later
        self._ref_write: _RefWrite | None = None   # fetch_present's update-ref, while it runs (see settle_refs)
        self._refs_later = False                   # within refs_in_background
        if quarantine:
            self._sweep_stale_keeps()

    def __enter__(self) -> Git:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_inside(repo: Path, git_dir: Path, common_dir: Path, bare: bool) -> None:
    """Raise when REPO is a folder inside a repository rather than the repository (helper-113: `--repo
    outer/plain-dir` wrote the fork branch and every fetched object into `outer/.git`, a repository the user
    never named)."""
    where = repo.resolve()
    if where in (git_dir.resolve(), common_dir):
        return
    top = None
    if not bare and not where.is_relative_to(git_dir.resolve()):
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True,
                              env=scrubbed_env())
        top = proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n") if proc.returncode == 0 else None
        if top is not None and Path(top).resolve() == where:
            return
    found = top or str(common_dir)
    raise EnvironmentProblem(f"{repo} is not a git repository: it is a folder inside the repository {found}",
                             hint=f"pass --repo {shlex.quote(found)} to use that one, or make {repo} a repository "
                                  f"of its own (`git init`, `git clone`)")


def work_tree_top(path: Path) -> Path | None:
    """`rev-parse --show-toplevel` run from PATH (a directory): the work tree holding it, or None."""
    if not path.is_dir():           # (helper-98: a traceback for a manifest folder that is not there)
        return None
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, env=scrubbed_env())
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(top) if proc.returncode == 0 and top else None
