"""One error for every way a kept file's text is not a JSON document (h237): json.loads raised RecursionError
for `[[[...` nested 100,000 deep and MemoryError for one too large, beside the ValueError every reader caught;
a reader that caught ValueError alone (the repository lock, a fold's state, resolution records) ended the
command in a traceback, exit 70."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from carrytool.gitlayer.jsonread import load_json, read_json
from carrytool.gitlayer.repolock import RepoLock
from tests.gitrepo import init_repo

DEEP = "[" * 100_000 + "]" * 100_000
UNREADABLE = {"deep": DEEP.encode(), "not-utf8": b'{"pid": "\xff\xfe"}', "truncated": b'{"pid": 12, "host": "h',
              "empty": b""}


@pytest.mark.parametrize("kind", UNREADABLE)
def test_every_way_a_text_is_not_json_is_a_value_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "kept.json"
    path.write_bytes(UNREADABLE[kind])
    with pytest.raises(ValueError) as err:
        read_json(path)
    assert ("nested too deep to read" in str(err.value)) == (kind == "deep")
    with pytest.raises(ValueError):
        load_json(UNREADABLE[kind])
    with pytest.raises(ValueError):
        load_json(UNREADABLE[kind].decode("utf-8", "replace") if kind != "not-utf8" else UNREADABLE[kind])


def test_json_is_read_and_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text('{"a": [1, 2]}')
    assert read_json(tmp_path / "ok.json") == {"a": [1, 2]} and load_json(b"[1]") == [1]
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "missing.json")


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_repository_lock_file_is_taken_over(tmp_path: Path, kind: str) -> None:
    """A `carrytool.lock` left with such text (no process holds its flock) is a lock file that says nothing:
    the lock is taken; held by another process, it is named `another process`. A deep one was a traceback."""
    repo = init_repo(tmp_path / "r", bare=True)
    path = repo.path / "carrytool.lock"
    path.write_bytes(UNREADABLE[kind])
    with RepoLock(repo.path) as lock:
        assert lock.held
    path.write_bytes(UNREADABLE[kind])
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert RepoLock(repo.path)._who() == "another process"
    finally:
        os.close(fd)


def test_a_document_too_large_to_hold_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """MemoryError (a document larger than memory: not built here, json.loads is made to raise it)."""
    import carrytool.gitlayer.jsonread as jsonread

    def too_large(data: object) -> object:
        raise MemoryError

    monkeypatch.setattr(jsonread.json, "loads", too_large)
    with pytest.raises(ValueError, match="too large to read"):
        load_json("[]")
