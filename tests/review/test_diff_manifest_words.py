"""What `diff` says when a night's manifest is not known, read as a new user reads it (h256): "a lock's is the
manifest beside it (the lock's name without `.lock`), and there is none that parses" named neither file, and
"a lock's is" read as a typo. One sentence that names the manifest diff looked for and the lock beside it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.review.test_diff import Nights


def _said(n: Nights, old: str, new: str) -> str:
    result = n.cli("diff", old, new, "-m", n.manifest, "--repo", n.work.path)
    assert result.exit_code == 0, result.output
    return " ".join(result.stdout.split())


def test_a_lock_with_no_manifest_beside_it_names_both_files(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path, cli)
    n.night([{"pr": 1}, {"pr": 2}])
    old = tmp_path / "last-night.lock"
    old.write_text(n.manifest.with_name("manifest.yaml.lock").read_text())
    new = str(n.manifest.with_name("manifest.yaml.lock"))
    assert f"asserts not compared: the older night's manifest, {tmp_path / 'last-night'} (its lock's name without " \
           "`.lock`), is missing or not a valid manifest" in _said(n, str(old), new)
    (tmp_path / "last-night").write_text("version: [")          # there, but not a manifest
    assert f"manifest, {tmp_path / 'last-night'} (its lock's name" in _said(n, str(old), new)
    named = tmp_path / "night.json"
    named.write_text(old.read_text())
    assert "asserts not compared: the older night's manifest is not known: it is read beside its lock, named as " \
           f"the lock without `.lock`, and {named} does not end in `.lock`" in _said(n, str(named), new)
