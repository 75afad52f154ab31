"""`carrytool union status` of a manifest with several unions: what a refold preview says (a hunk left out, one
dropped on purpose) names the union it is about (h245, the trl trial: "dropped on purpose: pr/6444's hunk ..."
came after both unions' lines, naming neither)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.gitrepo import init_repo, write_manifest

BASE = "def f():\n    a = 1\n    return a\n"


def _two_unions(cli: Cli, root: Path) -> tuple[Path, Path]:
    """u1 folds pr/1 and pr/2, which insert different lines at one place of w.py, resolved to pr/2's line alone
    (pr/1's hunk left out: the fold warns); u2 folds pr/3 and pr/4, which change x.py apart (clean)."""
    up = init_repo(root / "up")
    main = up.commit({"w.py": BASE, "x.py": "x = 1\n\n\n\ny = 2\n"}, "base", ref="refs/heads/main")
    up.commit({"w.py": BASE.replace("    a = 1\n", "    a = 1\n    log(a)\n")}, "pr 1", parent=main,
              ref="refs/pull/1/head")
    up.commit({"w.py": BASE.replace("    a = 1\n", "    a = 1\n    check(a)\n")}, "pr 2", parent=main,
              ref="refs/pull/2/head")
    up.commit({"x.py": "x = 10\n\n\n\ny = 2\n"}, "pr 3", parent=main, ref="refs/pull/3/head")
    up.commit({"x.py": "x = 1\n\n\n\ny = 20\n"}, "pr 4", parent=main, ref="refs/pull/4/head")
    work = init_repo(root / "work", bare=True)
    manifest = write_manifest(root / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": n} for n in (1, 2, 3, 4)]})
    args = ("-m", str(manifest), "--repo", str(work.path))
    result = cli("union", "new", "u1", "1", "2", *args)
    assert result.exit_code == 3, result.output
    tree = work.path / "carrytool" / "union" / "u1" / "tree" / "w.py"
    tree.write_text(BASE.replace("    a = 1\n", "    a = 1\n    check(a)\n"))
    result = cli("union", "continue", "u1", *args)
    assert result.exit_code == 0 and "the union lacks pr/1's hunk" in result.stderr, result.output
    result = cli("union", "new", "u2", "3", "4", *args)
    assert result.exit_code == 0, result.output
    return manifest, work.path


def test_each_preview_note_names_its_union(cli: Cli, tmp_path: Path) -> None:
    manifest, work = _two_unions(cli, tmp_path)
    result = cli("union", "status", "-m", str(manifest), "--repo", str(work), "--offline")
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "pr/1's hunk" in line]
    assert said and all(line.startswith("carry/u1: warning: the union lacks pr/1's hunk") for line in said), \
        result.stderr
    # one union named: its notes are as before, under its own header
    result = cli("union", "status", "u1", "-m", str(manifest), "--repo", str(work), "--offline")
    assert result.exit_code == 0 and "\nwarning: the union lacks pr/1's hunk" in "\n" + result.stderr, \
        result.stderr
