"""`union compose` again with nothing changed (the same PRs' heads, upstream and resolutions: the patch, the
manifest and the store all as before) printed `next: commit the manifest folder (...)`, as if there were
something to commit (h265's pylint trial). It says the fold changed nothing instead; a fold that did change
something still says what to commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, fresh_fold, resolve_both


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def _said(result) -> str:
    return " ".join(result.stdout.split())


def test_a_compose_changing_nothing_says_so(cli: Cli, fold: Fold) -> None:
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    resolve_both(fold.scratch / "a.py")
    first = cli("union", "continue", "u", *fold.args())
    assert first.exit_code == 0 and "next: commit the manifest folder" in _said(first), first.output
    patch = (fold.manifest.parent / "unions" / "u.patch").read_bytes()
    manifest = fold.manifest.read_bytes()
    again = cli("union", "compose", "u", *fold.args())
    assert again.exit_code == 0, again.output
    said = _said(again)
    assert "next: commit the manifest folder" not in said, said
    assert "nothing changed: unions/u.patch, the manifest and resolutions/ are as they were" in said, said
    assert "carrytool sync --dry-run" in said, said
    assert (fold.manifest.parent / "unions" / "u.patch").read_bytes() == patch
    assert fold.manifest.read_bytes() == manifest


def test_a_compose_changing_the_patch_still_says_commit(cli: Cli, fold: Fold) -> None:
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0
    (fold.manifest.parent / "unions" / "u.patch").unlink()           # gone: the fold writes it anew
    again = cli("union", "compose", "u", *fold.args())
    assert again.exit_code == 0 and "next: commit the manifest folder" in _said(again), again.output
    assert "nothing changed" not in _said(again)
