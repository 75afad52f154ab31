"""`carrytool diff` of sync's record of a night when the manifest lies outside any git work tree (h257): the hint of
`diff` names that record (night_hint, h245), and the diff it runs said "the older night's manifest,
refs/carrytool/dev/nights:<sha> (its lock's name without `.lock`), is missing or not a valid manifest", a path no
manifest is at: a record holds the lock alone."""

from __future__ import annotations

import shlex

from tests.conftest import Cli, Small

ASSERTS = [{"name": "x", "file": "a.py", "in": "f", "not_calls": "nothing"}]


def test_the_diff_of_a_record_the_hint_names_says_it_holds_no_manifest(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}], asserts=ASSERTS)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    small.pr(2, {"b.py": "x = 1\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=ASSERTS)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    refused = cli("diff", "-m", small.manifest_path, "--repo", small.work.path)
    assert refused.exit_code == 2 and "as sync recorded it in --repo" in refused.output, refused.output
    hinted = " ".join(refused.output.split()).split("in --repo: `carrytool ", 1)[1].split("`", 1)[0]
    record = shlex.split(hinted)[1]
    result = cli(*shlex.split(hinted))
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert f"asserts not compared: the older night is sync's record {record}, which holds the lock alone and no " \
        "manifest" in said, said
    assert "is missing or not a valid manifest" not in said


def test_a_red_night_after_the_only_night_is_named_outside_a_work_tree(cli: Cli, small: Small) -> None:
    """h265: one green night, then a red one (no lock written), the manifest outside any work tree: the hint named
    no record; it names the red night's, and the command it gives runs."""
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}], asserts=ASSERTS)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    small.manifest([{"pr": 1}], asserts=[{"name": "y", "file": "a.py", "in": "f", "not_calls": "print"}] + ASSERTS)
    small.pr(1, {"a.py": "def f():\n    return print(10)\n"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 1
    refused = cli("diff", "-m", small.manifest_path, "--repo", small.work.path)
    said = " ".join(refused.output.split())
    assert refused.exit_code == 2 and "after it and wrote no lock (a red night)" in said, said
    hinted = said.split("as sync recorded it: `carrytool ", 1)[1].split("`", 1)[0]
    result = cli(*shlex.split(hinted))
    assert result.exit_code == 0 and "upstream" in result.stdout, result.output
