"""The restore `union continue` prints for a conflicted file gone from the scratch tree (h237, h246), where a folder
of the file was replaced at the stop: by a symbolic link, writing the file through it wrote over a file outside
the scratch tree (h253's review); by a file, `mkdir -p` failed. Each printed restore is run here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs

BASE = "".join(f"line {i}\n" for i in range(1, 10))


def _stopped(cli: Cli, root: Path) -> TwoPrs:
    prs = TwoPrs(root, {"pkg/sub/a.py": BASE, "b.py": "b\n"}, {"pkg/sub/a.py": BASE.replace("line 3", "line 3 one")},
                 {"pkg/sub/a.py": BASE.replace("line 3", "line 3 two")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    return prs


def _restore(cli: Cli, prs: TwoPrs, env: dict[str, str] | None = None) -> None:
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 3, result.output
    flat = " ".join(result.stderr.split())
    restore = flat.split("restore it as the stop wrote it (", 1)[1].split("), resolve its conflicts", 1)[0]
    subprocess.run(restore, shell=True, check=True, env=env)


def test_a_folder_made_a_link_is_not_written_through(cli: Cli, tmp_path: Path) -> None:
    prs = _stopped(cli, tmp_path)
    shown = (prs.scratch / "pkg" / "sub" / "a.py").read_bytes()
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "a.py").write_text("the user's own\n")
    shutil.rmtree(prs.scratch / "pkg")
    os.symlink(outside, prs.scratch / "pkg")
    _restore(cli, prs)
    assert (outside / "sub" / "a.py").read_text() == "the user's own\n"       # untouched, the link alone removed
    assert not (prs.scratch / "pkg").is_symlink() and (prs.scratch / "pkg" / "sub" / "a.py").read_bytes() == shown


def test_a_folder_made_a_file_is_moved_out_of_the_way(cli: Cli, tmp_path: Path) -> None:
    prs = _stopped(cli, tmp_path)
    shown = (prs.scratch / "pkg" / "sub" / "a.py").read_bytes()
    shutil.rmtree(prs.scratch / "pkg" / "sub")
    (prs.scratch / "pkg" / "sub").write_text("mine\n")
    elsewhere = tmp_path / "tmp"
    elsewhere.mkdir()
    _restore(cli, prs, env={"TMPDIR": str(elsewhere), "PATH": "/usr/bin:/bin"})
    assert (prs.scratch / "pkg" / "sub" / "a.py").read_bytes() == shown
    assert [p.read_text() for p in elsewhere.rglob("sub")] == ["mine\n"]      # kept


def test_status_says_a_file_under_a_folder_made_a_link_or_a_file_is_gone(cli: Cli, tmp_path: Path) -> None:
    """h257: status read the conflicted file through a folder made a link (a file outside the scratch tree, without
    markers: "resolved"), and said nothing of one under a folder made a file, where continue refuses both as gone."""
    prs = _stopped(cli, tmp_path)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "a.py").write_text("the user's own\n")
    shutil.rmtree(prs.scratch / "pkg")
    os.symlink(outside, prs.scratch / "pkg")
    for _case in ("a folder made a link", "a folder made a file"):
        code, [doc] = cli.json("union", "status", "u", *prs.args())
        assert code == 0 and [f["now"] for f in doc["fold"]["files"]] == ["gone"], doc["fold"]
        refused = cli("union", "continue", "u", *prs.args())
        assert refused.exit_code == 3 and "restore it as the stop wrote it" in " ".join(refused.stderr.split())
        os.unlink(prs.scratch / "pkg")
        (prs.scratch / "pkg").write_text("mine\n")


def test_two_files_under_one_folder_made_a_link_or_a_file_are_both_restored(cli: Cli, tmp_path: Path) -> None:
    """h257: the restore of each conflicted file moved or removed the folder in its way, so the second file's
    undid the first's (`rm pkg` of a directory failed; `mv pkg` moved the first file restored out of the tree)."""
    two = {"pkg/sub/a.py": BASE, "pkg/sub/c.py": BASE}
    prs = TwoPrs(tmp_path, {**two, "b.py": "b\n"}, {p: BASE.replace("line 3", "line 3 one") for p in two},
                 {p: BASE.replace("line 3", "line 3 two") for p in two})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    shown = {p: (prs.scratch / p).read_bytes() for p in two}
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    shutil.rmtree(prs.scratch / "pkg")
    os.symlink(outside, prs.scratch / "pkg")
    _restore(cli, prs)
    assert {p: (prs.scratch / p).read_bytes() for p in two} == shown and not list(outside.rglob("*.py"))
    shutil.rmtree(prs.scratch / "pkg")
    (prs.scratch / "pkg").write_text("mine\n")
    elsewhere = tmp_path / "tmp"
    elsewhere.mkdir()
    _restore(cli, prs, env={"TMPDIR": str(elsewhere), "PATH": "/usr/bin:/bin"})
    assert {p: (prs.scratch / p).read_bytes() for p in two} == shown
    assert [p.read_text() for p in elsewhere.rglob("pkg")] == ["mine\n"]


def test_status_of_a_conflicted_file_made_a_fifo_does_not_wait_on_it(cli: Cli, tmp_path: Path) -> None:
    """h257: status read the conflicted file whatever it was: one made a FIFO (`mkfifo`) waited for a writer forever.
    It says nothing of it (continue refuses it: git cannot store a FIFO)."""
    prs = _stopped(cli, tmp_path)
    (prs.scratch / "pkg" / "sub" / "a.py").unlink()
    os.mkfifo(prs.scratch / "pkg" / "sub" / "a.py")
    done = subprocess.run([sys.executable, "-m", "carrytool", "union", "status", "u", *map(str, prs.args()),
                           "--format", "json"], capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    [doc] = json.loads(done.stdout)
    assert [f["now"] for f in doc["fold"]["files"]] == [None]
