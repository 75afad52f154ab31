"""What `union continue` takes from the scratch tree beyond the conflicted files, said; and the editor and merge
tool leftovers it refuses (h214's celery trial: vim's `celery/app/.task.py.swp` went into the union's patch and
then into the fork, exit 0, never named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.union.taken import leftover_kind
from tests.conftest import Cli
from tests.union.fold_scenario import A_BASE, Fold, TwoPrs, edited, fresh_fold, resolve_both
from tests.union.test_union_held_back import held_back


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def union(cli: Cli, fold: Fold, verb: str, *args: str):
    return cli("union", verb, "u", *args, *fold.args())


def _patch(fold: Fold) -> str:
    return (fold.manifest.parent / "unions" / "u.patch").read_text()


def _state(fold: Fold) -> dict:
    return json.loads((fold.work / "carrytool" / "union" / "u" / "state.json").read_text())


def _recorded(fold: Fold) -> list[tuple[str, bytes]]:
    """The resolution store's files (next to the manifest) and the fold's state."""
    store = fold.manifest.parent / "resolutions"
    files = sorted(p for p in store.rglob("*") if p.is_file()) if store.exists() else []
    return [(str(p), p.read_bytes()) for p in files] + [("state", json.dumps(_state(fold)).encode())]


def test_continue_names_every_file_it_takes_beyond_the_conflicted_ones(cli: Cli, fold: Fold) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "b.py").write_text("b1\nb2 by hand\nb3\nb4\nb5\nb6 by one\n")
    (fold.scratch / "docs").mkdir()
    (fold.scratch / "docs" / "new.txt").write_text("new\n")
    (fold.scratch / "c.txt").unlink()
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.output
    assert ("continue took from the scratch tree, beyond the files that conflicted: b.py (changed), c.txt (deleted), "
            "docs/new.txt (added)\n") in result.stdout
    assert result.stdout.startswith("continue took from the scratch tree")     # first: before the fold's outcome
    assert "docs/new.txt" in _patch(fold)


def test_continue_refuses_editor_and_merge_tool_leftovers_naming_each_and_what_to_run(cli: Cli, fold: Fold) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / ".a.py.swp").write_bytes(b"b0VIM 8.2\0swap")
    (fold.scratch / "b.py~").write_text("b1\n")
    (fold.scratch / "a.py.orig").write_text("old\n")
    before = _recorded(fold)
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    said = result.stdout + result.stderr
    assert (f"the scratch tree {fold.scratch} holds what an editor or a merge tool leaves behind, which continue "
            "does not take into the union unless you say so: .a.py.swp (a vim swap file), a.py.orig (a merge "
            "backup), b.py~ (an editor's backup); nothing was recorded") in said
    assert f"rm -- {fold.scratch / '.a.py.swp'} {fold.scratch / 'a.py.orig'} '{fold.scratch / 'b.py~'}'" in said
    assert f"then: carrytool union continue u -m {fold.manifest} --repo {fold.work}" in said
    take = f"carrytool union continue u --take .a.py.swp --take a.py.orig --take 'b.py~' -m {fold.manifest}"
    assert take in said
    # nothing recorded: the fold is still stopped, no patch written
    assert _recorded(fold) == before
    assert _state(fold).get("conflict") and not (fold.manifest.parent / "unions" / "u.patch").exists()
    for name in (".a.py.swp", "b.py~", "a.py.orig"):
        (fold.scratch / name).unlink()
    done = union(cli, fold, "continue")
    assert done.exit_code == 0, done.output
    assert ".swp" not in _patch(fold) and "continue took" not in done.stdout


def test_take_keeps_a_leftover_on_purpose(cli: Cli, fold: Fold) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "notes.orig").write_text("kept on purpose\n")
    result = union(cli, fold, "continue", "--take", "notes.orig")
    assert result.exit_code == 0, result.output
    assert "beyond the files that conflicted: notes.orig (added)" in result.stdout
    assert "+kept on purpose" in _patch(fold)


def test_a_leftover_name_the_inputs_track_is_taken(cli: Cli, tmp_path: Path) -> None:
    """Upstream tracks `tools/setup.cfg.orig` on purpose: changed in the scratch tree, it is taken (and named)."""
    fold = Fold(tmp_path, extra={"tools/setup.cfg.orig": "[x]\n"})
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "tools" / "setup.cfg.orig").write_text("[x]\ny = 1\n")
    result = union(cli, fold, "continue")
    assert result.exit_code == 0, result.output
    assert "beyond the files that conflicted: tools/setup.cfg.orig (changed)" in result.stdout


def test_a_leftover_name_an_input_tracks_is_taken_back(cli: Cli, tmp_path: Path) -> None:
    """Upstream tracks `tools/x.orig`, pr/1 deletes it: put back in the scratch tree at pr/2's stop (where the
    tree shown lacks it), it is a file of an input's, taken (and named), not refused."""
    prs = TwoPrs(tmp_path, {"a.py": A_BASE, "tools/x.orig": "kept\n"},
                 {"a.py": edited({3: "line 3 by one\n"}), "tools/x.orig": None},
                 {"a.py": edited({3: "line 3 by two\n"})})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    assert not (prs.scratch / "tools" / "x.orig").exists()
    resolve_both(prs.scratch / "a.py")
    (prs.scratch / "tools").mkdir()
    (prs.scratch / "tools" / "x.orig").write_text("kept\n")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output
    assert "beyond the files that conflicted: tools/x.orig (added)" in result.stdout


def test_the_refusal_repeats_the_drop_edit_given(cli: Cli, fold: Fold) -> None:
    held_back(cli, fold)
    (fold.scratch / ".a.py.swo").write_bytes(b"b0VIM")
    result = union(cli, fold, "continue", "--drop-edit", "a.py")
    assert result.exit_code == 3, result.output
    assert (f"carrytool union continue u --drop-edit a.py --take .a.py.swo -m {fold.manifest} --repo {fold.work}"
            in result.stdout + result.stderr)


@pytest.mark.parametrize(("path", "kind"), [
    ("celery/app/.task.py.swp", "a vim swap file"), (".x.swa", "a vim swap file"), (".x.swq", None),
    ("a/b.py~", "an editor's backup"), ("#b.py#", "an Emacs auto-save file"), (".#b.py", "an Emacs lock file"),
    ("x.py.orig", "a merge backup"), ("x.py.rej", "a patch's rejected hunks"),
    ("x.py.BACKUP.123.py", "a git mergetool file"), ("x_REMOTE_4242.py", "a git mergetool file"),
    ("d/.DS_Store", "macOS Finder's metadata"), ("swp.py", None), ("orig", None), ("README", None),
    ("x_BASE_.py", None),
])
def test_leftover_names(path: str, kind: str | None) -> None:
    assert leftover_kind(path) == kind


@pytest.mark.parametrize(("path", "why"), [
    ("no/such/file.orig", "the scratch tree has no file no/such/file.orig"),
    ("a.py", "a.py is no editor or merge-tool leftover that continue refuses (it takes every other change "
             "without --take)"),
])
def test_take_of_a_path_that_is_no_leftover_is_refused(cli: Cli, fold: Fold, path: str, why: str) -> None:
    """h219 u2: `--take` of a path the scratch tree lacks (a typo) or of a file continue takes anyway was accepted
    silently, exit 0: the leftover meant was not taken, or nothing said the option did nothing."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    before = _recorded(fold)
    result = union(cli, fold, "continue", "--take", path)
    assert result.exit_code == 2, result.output
    said = result.stdout + result.stderr
    assert f"--take {path}: {why}; nothing was recorded" in said
    assert "--take names a file an editor or a merge tool leaves behind" in said
    assert _recorded(fold) == before
    done = union(cli, fold, "continue")
    assert done.exit_code == 0, done.output


def test_continue_refuses_what_running_the_tests_in_the_scratch_tree_leaves(cli: Cli, fold: Fold) -> None:
    """h226: the user checks the resolution by running pytest in the scratch tree; `__pycache__/*.pyc` and
    `.pytest_cache/` went into the union's patch (and the fork) with exit 0, as vim's swap file did (h214)."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "__pycache__").mkdir()
    (fold.scratch / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\0\0\0\0pyc")
    (fold.scratch / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (fold.scratch / ".pytest_cache" / "README.md").write_text("# pytest cache directory #\n")
    (fold.scratch / ".pytest_cache" / "v" / "cache" / "nodeids").write_text("[]\n")
    before = _recorded(fold)
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    said = result.stdout + result.stderr
    assert (".pytest_cache/README.md (a test runner's cache), .pytest_cache/v/cache/nodeids (a test runner's "
            "cache), __pycache__/a.cpython-311.pyc (Python's bytecode cache); nothing was recorded") in said
    assert _recorded(fold) == before
    for path in ("__pycache__/a.cpython-311.pyc", ".pytest_cache/README.md", ".pytest_cache/v/cache/nodeids"):
        (fold.scratch / path).unlink()
    done = union(cli, fold, "continue")
    assert done.exit_code == 0, done.output
    assert "pycache" not in _patch(fold) and "pytest_cache" not in _patch(fold)


@pytest.mark.parametrize(("path", "kind"), [
    ("pkg/__pycache__/m.cpython-312.pyc", "Python's bytecode cache"), ("m.pyc", "Python's bytecode cache"),
    (".pytest_cache/v/cache/lastfailed", "a test runner's cache"), ("sub/.mypy_cache/3.11/m.json", "a type "
     "checker's cache"), (".ruff_cache/CACHEDIR.TAG", "a linter's cache"), ("docs/pycache.md", None),
    ("pytest_cache/x", None),
])
def test_leftover_names_of_tool_caches(path: str, kind: str | None) -> None:
    assert leftover_kind(path) == kind


def test_take_accepts_the_leftover_by_its_path_as_the_refusal_printed_it(cli: Cli, fold: Fold) -> None:
    """h226: the refusal's `rm --` names each leftover by its absolute path; `--take` given that path (or
    `./notes.orig`) was refused with "the scratch tree has no file ...", of a file it has."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "notes.orig").write_text("kept on purpose\n")
    (fold.scratch / "d").mkdir()
    (fold.scratch / "d" / "x.rej").write_text("also kept\n")
    result = union(cli, fold, "continue", "--take", str(fold.scratch / "notes.orig"), "--take", "./d/x.rej")
    assert result.exit_code == 0, result.output
    assert "beyond the files that conflicted: d/x.rej (added), notes.orig (added)" in result.stdout
    assert "+kept on purpose" in _patch(fold) and "+also kept" in _patch(fold)


def test_a_backup_of_the_conflicted_file_is_refused_as_a_leftover_not_sent_to_be_resolved(cli: Cli, fold: Fold) -> None:
    """h226: `cp a.py a.py.orig` before resolving (or a merge tool's backup) keeps the stop's marker lines; continue
    said "conflict markers remain in a.py.orig ... resolve them", sending the user to resolve a backup that the
    leftover refusal then refuses anyway. It is named as the leftover it is, with the commands to go on."""
    assert union(cli, fold, "compose").exit_code == 3
    (fold.scratch / "a.py.orig").write_bytes((fold.scratch / "a.py").read_bytes())
    resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    said = result.stdout + result.stderr
    assert "conflict markers remain" not in said
    assert "unless you say so: a.py.orig (a merge backup); nothing was recorded" in said
    taken = union(cli, fold, "continue", "--take", "a.py.orig")      # taken on purpose: its markers still refuse
    assert taken.exit_code == 3 and "conflict markers remain in a.py.orig" in taken.stdout + taken.stderr
    (fold.scratch / "a.py.orig").unlink()
    assert union(cli, fold, "continue").exit_code == 0


def test_a_conflicted_file_moved_to_a_backup_name_is_not_refused_as_a_leftover_to_remove(cli: Cli, fold: Fold) -> None:
    """h229: `mv a.py a.py.orig` at the stop leaves the stop's only copy of a.py under a leftover's name. continue
    skipped its markers as a backup's and said "remove them (rm -- .../a.py.orig), then: carrytool union continue":
    run as printed, the union deleted a.py (exit 0). A file the stop's markers went to is no backup while a
    conflicted file is gone: its markers refuse, as they did before h226."""
    assert union(cli, fold, "compose").exit_code == 3
    (fold.scratch / "a.py").rename(fold.scratch / "a.py.orig")
    result = union(cli, fold, "continue")
    said = result.stdout + result.stderr
    assert result.exit_code == 3, said
    assert "conflict markers remain in a.py.orig" in said and "rm --" not in said
