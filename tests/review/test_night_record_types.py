"""A night record (`refs/carrytool/<branch>/nights`) edited by hand to JSON of the wrong types: `status --offline`
read its `result` as a commit, and `"result": 7` ended in a traceback (TypeError, exit 70; h246). A record that
is not a lock as sync writes it is left out, as one that is not JSON is."""

from __future__ import annotations

import json
import subprocess

import pytest

from carrytool.gitlayer.git import Git
from carrytool.manifest.load import load_manifest
from carrytool.pipeline.night_record import recorded_locks
from tests.conftest import Cli, Small
from tests.review.test_status_local import build

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "1700000000 +0000",
       "GIT_COMMITTER_DATE": "1700000000 +0000"}
REF = "refs/carrytool/dev/nights"


def _git(small: Small, *args: str, data: bytes | None = None) -> str:
    import os

    return subprocess.run(["git", *args], cwd=small.work.path, input=data, capture_output=True, check=True,
                          env={**os.environ, **ENV}).stdout.decode().strip()


def edit_record(small: Small, edit) -> dict:
    """Rewrite the newest night record with EDIT(document); the original document."""
    tree = _git(small, "ls-tree", REF).splitlines()
    name = next(line.split("\t")[1] for line in tree if line.endswith(".lock"))
    doc = json.loads(_git(small, "cat-file", "blob", f"{REF}:{name}"))
    changed = json.loads(json.dumps(doc))
    edit(changed)
    blob = _git(small, "hash-object", "-w", "--stdin", data=json.dumps(changed).encode())
    lines = [f"100644 blob {blob}\t{name}" if line.endswith(name) else line for line in tree]
    commit = _git(small, "commit-tree", _git(small, "mktree", data=("\n".join(lines) + "\n").encode()), "-m", "edit")
    _git(small, "update-ref", REF, commit)
    return doc


@pytest.mark.parametrize("value", [7, True, 1.5, ["x"], {"a": 1}])
def test_a_record_result_of_the_wrong_type_is_no_traceback(cli: Cli, small: Small, value: object) -> None:
    build(cli, small)
    edit_record(small, lambda doc: doc.update(result=value))
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    by_id = {e["id"]: e for e in out["entries"]}
    assert by_id["pr/1"]["suggestion"] == "keep", by_id     # the lock file, as without records


def test_a_record_that_is_not_a_lock_is_left_out(cli: Cli, small: Small) -> None:
    build(cli, small)
    doc = edit_record(small, lambda doc: doc["entries"][0].update(head=["not", "a", "sha"]))
    with Git(small.work.path) as git:
        assert recorded_locks(load_manifest(small.manifest_path), git) == []
    edit_record(small, lambda changed: changed.update(doc))
    with Git(small.work.path) as git:
        assert [d for _w, d in recorded_locks(load_manifest(small.manifest_path), git)] == [doc]
