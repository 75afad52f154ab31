"""A conflicted file deleted from the scratch tree at a stop (`rm a.py`): `union continue` took the deletion with
exit 0 and a warning after it ("the union lacks a.py ... dropped by a side taken at a stop?"), both PRs' changes
to the file gone (h237). It refuses, naming the file, how to restore it and the option that drops it on purpose."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, fresh_fold, resolve_both


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def union(cli: Cli, fold: Fold, verb: str, *args: str):
    return cli("union", verb, "u", *args, *fold.args())


def _recorded(fold: Fold) -> list[tuple[str, bytes]]:
    """The resolution store's files and the fold's state: what a refusal must leave as it was."""
    store = fold.manifest.parent / "resolutions"
    files = sorted(p for p in store.rglob("*") if p.is_file()) if store.exists() else []
    state = fold.work / "carrytool" / "union" / "u" / "state.json"
    return [(str(p), p.read_bytes()) for p in [*files, state]]


def test_a_deleted_conflicted_file_refuses_to_continue(cli: Cli, fold: Fold) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    shown = (fold.scratch / "a.py").read_bytes()
    (fold.scratch / "a.py").unlink()
    before = _recorded(fold)
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    flat = " ".join(result.stderr.split())
    assert f"a.py: a conflicted file (pr/1, pr/2) is gone from the scratch tree {fold.scratch}" in flat, flat
    assert "continue would drop it from the union, and both sides' changes to it with it; nothing was recorded" \
        in flat
    take = f"carrytool union continue u --take a.py -m {fold.manifest} --repo {fold.work}"
    assert f"or, to drop the file from the union on purpose: {take}" in flat, flat
    assert _recorded(fold) == before and "warning" not in result.output
    restore = flat.split("restore it as the stop wrote it (", 1)[1].split("), resolve its conflicts", 1)[0]
    subprocess.run(restore, shell=True, check=True)             # the printed restore restores it
    assert (fold.scratch / "a.py").read_bytes() == shown
    assert f"resolve its conflicts, then: carrytool union continue u -m {fold.manifest}" in flat
    resolved = resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    assert fold.show(fold.ref(), "a.py") == resolved


def test_take_drops_a_deleted_conflicted_file_on_purpose(cli: Cli, fold: Fold) -> None:
    """The refusal's `--take a.py` takes the deletion; recorded, the next refold does not ask again (helper-77)."""
    assert union(cli, fold, "compose").exit_code == 3
    (fold.scratch / "a.py").unlink()
    result = union(cli, fold, "continue", "--take", "a.py")
    assert result.exit_code == 0, result.output
    assert fold.ls(fold.ref(), "a.py") == ""
    again = union(cli, fold, "compose")
    assert again.exit_code == 0, again.output
    assert fold.ls(fold.ref(), "a.py") == ""


def test_take_of_a_missing_file_that_is_not_a_conflicted_one_is_still_refused(cli: Cli, fold: Fold) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue", "--take", "nothere.py")
    assert result.exit_code == 2 and "--take nothere.py: the scratch tree has no file nothere.py" in result.output
    state = json.loads((fold.work / "carrytool" / "union" / "u" / "state.json").read_text())
    assert state.get("conflict"), "still stopped"


def test_a_conflicted_file_made_a_link_refuses_to_continue(cli: Cli, fold: Fold) -> None:
    """h246: `rm a.py && ln -s b.py a.py` at the stop (a conflicted file replaced by a symbolic link) took the link
    with exit 0 and a warning after it, both PRs' changes to a.py gone: as a deletion, it is refused, with the
    command restoring the file; `--take a.py` takes the link on purpose."""
    import os

    assert union(cli, fold, "compose").exit_code == 3
    shown = (fold.scratch / "a.py").read_bytes()
    (fold.scratch / "a.py").unlink()
    os.symlink("b.py", fold.scratch / "a.py")
    before = _recorded(fold)
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    flat = " ".join(result.stderr.split())
    assert f"a.py: a conflicted file (pr/1, pr/2) is a symbolic link in the scratch tree {fold.scratch} now" in flat
    assert _recorded(fold) == before and "warning" not in result.output
    restore = flat.split("restore it as the stop wrote it (", 1)[1].split("), resolve its conflicts", 1)[0]
    subprocess.run(restore, shell=True, check=True)
    assert not (fold.scratch / "a.py").is_symlink() and (fold.scratch / "a.py").read_bytes() == shown
    (fold.scratch / "a.py").unlink()
    os.symlink("b.py", fold.scratch / "a.py")
    taken = union(cli, fold, "continue", "--take", "a.py")
    assert taken.exit_code == 0, taken.output
    assert fold.ls(fold.ref(), "a.py").startswith("120000 ")


def test_a_conflicted_file_made_a_directory_gets_a_restore_that_works(cli: Cli, fold: Fold, tmp_path: Path) -> None:
    """`rm a.py; mkdir a.py` at a stop: refused as a deletion, and the printed restore moved nothing out of the way
    (`cat-file ... > a.py`: "Is a directory", h246). It now moves the directory out of the scratch tree (kept, in a
    new temporary folder: nothing of the user's is deleted), then writes the file as the stop wrote it."""
    assert union(cli, fold, "compose").exit_code == 3
    shown = (fold.scratch / "a.py").read_bytes()
    (fold.scratch / "a.py").unlink()
    (fold.scratch / "a.py").mkdir()
    (fold.scratch / "a.py" / "x").write_text("mine\n")
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    flat = " ".join(result.stderr.split())
    restore = flat.split("restore it as the stop wrote it (", 1)[1].split("), resolve its conflicts", 1)[0]
    elsewhere = tmp_path / "tmp"
    elsewhere.mkdir()
    subprocess.run(restore, shell=True, check=True, env={"TMPDIR": str(elsewhere), "PATH": "/usr/bin:/bin"})
    assert (fold.scratch / "a.py").read_bytes() == shown
    assert [p.read_text() for p in elsewhere.rglob("x")] == ["mine\n"]      # the directory, kept
