"""Where bisect's `--run` command runs: one directory per bisect, moved from probed tree to probed tree, that
holds exactly the tree of each probe, whatever the command before it made, changed or deleted (h201)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.review.probe import CommandTrees
from tests.conftest import Cli, Small
from tests.gitrepo import Repo, init_repo

# prints what the command sees in its directory, `{path: "d" | "l:TARGET" | "f:MODE:BLOB"}`, into $1/TREE.json
LISTER = """
import hashlib, json, os, sys
seen = {}
for top, dirs, files in os.walk("."):
    for name in dirs + files:
        path = os.path.join(top, name)[2:]
        if os.path.islink(path):
            seen[path] = "l:" + os.readlink(path)
        elif os.path.isdir(path):
            seen[path] = "d"
        else:
            data = open(path, "rb").read()
            mode = "755" if os.stat(path).st_mode & 0o100 else "644"
            seen[path] = f"f:{mode}:" + hashlib.sha1(b"blob %d\\0" % len(data) + data).hexdigest()
json.dump(seen, open(os.path.join(sys.argv[1], os.environ["CARRYTOOL_BISECT_TREE"] + ".json"), "w"))
"""

# then leaves behind all it can: untracked and ignored files, directories, repositories (a `.git` at the top
# and inside a tracked directory), a link out of the tree; tracked files changed, deleted, made executable,
# a tracked directory made a file and a file made a directory, a file in a submodule's directory
VANDAL = ("echo junk > untracked.txt; echo x > .gitignore-d; mkdir -p newdir/deep; echo y > newdir/deep/y; "
          "git init -q . ; git init -q nested; mkdir -p d/.git; ln -s / escape; "
          "echo changed >> a.txt; chmod +x a.txt; rm -f gone.txt; rm -rf d/e; echo file > d/e; "
          "rm -f swap; mkdir swap; echo inside > swap/x; mkdir -p sub; echo x > sub/made; exit 0")


def trees(repo: Repo) -> list[str]:
    """Trees a bisect could move between: files added, changed, deleted (a whole directory), a file made a
    directory and back, a mode changed, a link, a submodule; attributes that would convert a checkout's files."""
    one = repo.commit({".gitattributes": "* text eol=crlf ident\n", "id.txt": "$Id$\nline\n", "a.txt": "a\n",
                       "gone.txt": "g\n", "d/e/f.txt": "f\n", "d/keep.txt": "k\n", "swap": "s\n",
                       "run.sh": "#!/bin/sh\n", "link": "a.txt", "old/x.txt": "x\n"}, "one",
                      modes={"run.sh": "100755", "link": "120000"})
    two = repo.commit({"a.txt": "a2\n", "old/x.txt": None, "swap": None, "swap/inner.txt": "i\n", "new/n.txt": "n\n",
                       "run.sh": "#!/bin/sh\necho\n", "link": "d/keep.txt", "sub": one}, "two", parent=one,
                      modes={"run.sh": "100644", "sub": "160000"})
    three = repo.commit({"d/e/f.txt": None, "d/keep.txt": None, "a.txt": "a\n"}, "three", parent=two)
    return [repo.rev(f"{c}^{{tree}}") for c in (one, two, three)]


def expected(repo: Repo, tree: str) -> dict[str, str]:
    """What a checkout of TREE holds, in LISTER's words."""
    seen = {}
    for line in repo.git("ls-tree", "-r", "-t", tree).splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind in ("tree", "commit"):
            seen[path] = "d"
        elif mode == "120000":
            seen[path] = "l:" + repo.git("cat-file", "blob", oid)
        else:
            seen[path] = f"f:{'755' if mode == '100755' else '644'}:{oid}"
    return seen


def test_each_probe_sees_exactly_its_tree_whatever_the_command_before_left(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The directory is moved from tree to tree (only what differs written): what a command made, changed or
    deleted never reaches the next probe, forwards, backwards or on the same tree again."""
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    lister, seen_dir, scratch = tmp_path / "list.py", tmp_path / "seen", tmp_path / "tmp"
    lister.write_text(LISTER)
    seen_dir.mkdir()
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    command = f"{sys.executable} {lister} {seen_dir} && {VANDAL}"
    with Git(repo.path) as git, CommandTrees(git) as where:
        for tree in [*order, order[0], order[2], order[1], order[1]]:
            verdict = where.run(tree, command, timeout=60)
            assert verdict.exit_code == 0, verdict
            assert json.loads((seen_dir / f"{tree}.json").read_text()) == expected(repo, tree), tree
            (seen_dir / f"{tree}.json").unlink()
        assert len(list(scratch.iterdir())) == 1        # one directory for the whole run
    assert list(scratch.iterdir()) == []                 # removed at close


def test_consecutive_probes_write_only_the_files_that_differ(tmp_path: Path) -> None:
    """Each probe wrote its whole tree into a fresh directory (h201: 0.33 s of CPU a probe on sqlalchemy's 932
    files); a file two probed trees share is now left as it is."""
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    stamps = tmp_path / "stamps"
    command = f"stat -c '%i %y' gone.txt >> {stamps}"
    with Git(repo.path) as git, CommandTrees(git) as where:
        first = where.run(order[0], command, timeout=60)
        again = where.run(order[1], command, timeout=60)         # run.sh changed, old/x.txt deleted
        where.run(order[0], command, timeout=60)
    assert first.exit_code == again.exit_code == 0
    lines = stamps.read_text().splitlines()
    assert len(lines) == 3 and lines[0] == lines[1] == lines[2]     # gone.txt: never written again


def test_a_tree_git_will_not_check_out_is_written_blob_by_blob(tmp_path: Path) -> None:
    """A tree holding `.git` (git refuses to check it out) gets a directory of its own, written as before, and
    the probe after it a checkout again."""
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    config = repo.git("hash-object", "-w", "--stdin", input=b"[core]\n\tfsmonitor = touch /tmp/pwned\n")
    git_dir = repo.git("mktree", input=f"100644 blob {config}\tconfig\n".encode())
    hostile = repo.git("mktree", input=(repo.git("ls-tree", order[2]) + f"\n040000 tree {git_dir}\t.git\n").encode())
    lister, seen_dir = tmp_path / "list.py", tmp_path / "seen"
    lister.write_text(LISTER)
    seen_dir.mkdir()
    with Git(repo.path) as git, CommandTrees(git) as where:
        for tree in (order[0], hostile, order[0]):
            assert where.run(tree, f"{sys.executable} {lister} {seen_dir} && {VANDAL}", timeout=60).exit_code == 0
            want = expected(repo, tree)
            want.pop(".git", None), want.pop(".git/config", None)
            assert json.loads((seen_dir / f"{tree}.json").read_text()) == want


def test_the_search_is_the_same_when_each_command_leaves_a_file_behind(cli: Cli, small: Small, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that fails when it finds what an earlier probe's command left: only the first bad entry's trees
    fail, and the run's directory is gone at the end."""
    base = small.up.commit({"a.py": "x = 1\n", "data/old.txt": "o\n"}, "base", parent=small.base,
                           ref="refs/heads/main")
    for n in range(1, 7):
        files = {f"f{n}.txt": f"{n}\n"}
        if n == 4:
            files = {"broken": "yes\n", "data/old.txt": None}
        small.up.commit(files, f"pr {n}", parent=base, ref=f"refs/pull/{n}/head")
    small.manifest([{"pr": n} for n in range(1, 7)])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)
    command = ("test ! -e left-behind || exit 9; test \"$(cat a.py)\" = 'x = 1' || exit 8; test -e broken && exit 1; "
               "test -e data/old.txt || exit 7; touch left-behind; echo more >> a.py; rm -rf data")
    code, out = cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--run", command)
    assert code == 0, out
    assert (out["first_bad"], out["alone_bad"], out["checks"]["exit_code"]) == ("pr/4", True, 1)
    assert out["confirmed"] is True and out["probes"] <= math_ceil_log2(6) + 3
    assert os.listdir(scratch) == []


def math_ceil_log2(n: int) -> int:
    return (n - 1).bit_length()


@pytest.mark.parametrize("replace", ["dir", "root"])
def test_a_checkout_the_command_replaced_with_a_link_is_left_alone(tmp_path: Path, replace: str) -> None:
    """A command that replaces its directory (or the checkout's root) with a link to a directory elsewhere: the
    next probe neither removes nor writes anything through the link (helper-213: its prune and read-tree
    followed it, deleting the outside directory's files and writing the tree there); it gets a checkout of its
    own, holding exactly its tree."""
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("precious\n")
    lister, seen_dir = tmp_path / "list.py", tmp_path / "seen"
    lister.write_text(LISTER)
    seen_dir.mkdir()
    target = '"$d"' if replace == "dir" else '"$(dirname "$d")"'
    hijack = f'd=$(pwd); cd /; rm -rf {target}; ln -s {outside} {target}'
    with Git(repo.path) as git, CommandTrees(git) as where:
        assert where.run(order[0], hijack, timeout=60).exit_code == 0
        assert where.run(order[1], f"{sys.executable} {lister} {seen_dir}", timeout=60).exit_code == 0
    assert sorted(os.listdir(outside)) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "precious\n"
    assert json.loads((seen_dir / f"{order[1]}.json").read_text()) == expected(repo, order[1])


def test_a_killed_bisects_directory_is_removed_by_the_next_bisect(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A bisect killed (SIGKILL: close never runs) left its directory, a whole checkout, in TMPDIR for good. It is
    marked as the run's scratch directory is: the next bisect removes it once its process is gone; one whose
    process runs, and one without the mark, stay."""
    import subprocess

    from carrytool.gitlayer.env import hostname

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    ended = subprocess.Popen(["true"])
    ended.wait()
    made = {}
    for name, pid in {"dead": ended.pid, "running": os.getppid(), "unmarked": None}.items():
        folder = made[name] = scratch / f"carrytool-bisect-{name}"
        (folder / "tree").mkdir(parents=True)
        if pid is not None:
            (folder / ".carrytool-owner").write_text(f"carrytool-scratch pid {pid} host {hostname()}\n")
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    with Git(repo.path) as git, CommandTrees(git) as where:
        assert where.run(order[0], "true", timeout=60).exit_code == 0
        mine = [p for p in scratch.iterdir() if p.name.startswith("carrytool-bisect-") and p not in made.values()]
        assert len(mine) == 1 and (mine[0] / ".carrytool-owner").read_text().startswith(
            f"carrytool-scratch pid {os.getpid()} host ")
    assert not made["dead"].exists()
    assert made["running"].exists() and made["unmarked"].exists()
    assert not mine[0].exists()


def test_a_bisects_directory_is_locked_while_it_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bisect's directory's owner file is flocked while the directory lives: a carrytool run in another pid
    namespace, which cannot see this pid, does not take a running bisect's checkout (h219: a false verdict)."""
    import subprocess

    from tests.gitlayer.test_quarantine import FLOCK_TRY

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    repo = init_repo(tmp_path / "r")
    order = trees(repo)
    with Git(repo.path) as git, CommandTrees(git) as where:
        assert where.run(order[0], "true", timeout=60).exit_code == 0
        [mine] = [p for p in scratch.iterdir() if p.name.startswith("carrytool-bisect-")]
        owner = mine / ".carrytool-owner"
        assert subprocess.run([sys.executable, "-c", FLOCK_TRY, str(owner)]).returncode == 1
    assert not mine.exists()
