"""A lock, or a night record, nested too deep for Python's JSON reader (h228: `[[[...]]]` 100,000 deep written
by hand: RecursionError, exit 70) is read as any unreadable lock or record is: a lock sync only looks back at
is ignored, one a command needs is named as unreadable (exit 2), a record is left out."""

from __future__ import annotations

import json

import pytest

from carrytool.review.nights import _same_lock
from tests.conftest import Cli, Small

DEEP = "[" * 100_000 + "]" * 100_000
OTHERS = {"not-utf8": b'{"lock": 1, "upstream": "\xff"}', "truncated": b'{"lock": 1, "upstream": {"sha": "ab'}


def _synced(cli: Cli, small: Small) -> str:
    """One green night with PR 1 on upstream `one`; upstream then moves on to `two`. Returns `two`."""
    one = small.up.commit({"b.py": "x = 1\ny = 20\nz = 3\n"}, "one", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}])
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    return small.up.commit({"docs/c.txt": "c2\n"}, "two", parent=one, ref="refs/heads/main")


def _record_by_hand(small: Small, data: bytes) -> None:
    """Replace every lock of the night record with DATA, as a hand edit would (a commit of its own)."""
    work = small.work
    ref = "refs/carrytool/dev/nights"
    blob = work.git("hash-object", "-w", "--stdin", input=data)
    listing = [line.split("\t") for line in work.git("ls-tree", ref).splitlines()]
    tree = work.git("mktree", input="".join(
        f"{meta.rsplit(' ', 1)[0]} {blob if name.endswith('.lock') else meta.rsplit(' ', 1)[1]}\t{name}\n"
        for meta, name in listing).encode())
    work.git("update-ref", ref, work.git("commit-tree", tree, "-m", "a hand edit"))


def test_a_deeply_nested_lock_is_unreadable_not_a_traceback(cli: Cli, small: Small) -> None:
    _synced(cli, small)
    lock = small.manifest_path.parent / "manifest.yaml.lock"
    good = small.root / "good.lock"
    good.write_text(lock.read_text())
    lock.write_text(DEEP)
    for command in (["status", "--offline"], ["sync", "--locked"], ["diff", lock, good]):
        result = cli(*command, "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code == 2, (command, result.output)
        assert f"cannot read the lock {lock}: nested too deep" in " ".join(result.stderr.split()), result.stderr
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)     # looked back at only
    assert code == 0 and not [w for w in out["warnings"] if w["kind"] == "upstream-rewound"], out
    assert json.loads(lock.read_text())["result"] == out["result"]["sha"]                 # written anew


def test_a_deeply_nested_night_record_is_left_out(cli: Cli, small: Small) -> None:
    _synced(cli, small)
    _record_by_hand(small, DEEP.encode())
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    assert [(e["id"], e["suggestion"]) for e in out["entries"]] == [("pr/1", "keep")], out


def test_a_deeply_nested_lock_on_disk_is_not_the_committed_one() -> None:
    """`diff` with no lock named compares the lock on disk with the committed one (review/nights.py)."""
    assert _same_lock(DEEP.encode(), b"{}") is False and _same_lock(DEEP.encode(), DEEP.encode()) is True


@pytest.mark.parametrize("kind", OTHERS)
def test_a_lock_not_utf8_or_truncated_is_unreadable_not_a_traceback(cli: Cli, small: Small, kind: str) -> None:
    """The same for the other ways a lock is not JSON (h237): exit 2 naming the lock where a command needs it."""
    _synced(cli, small)
    lock = small.manifest_path.parent / "manifest.yaml.lock"
    good = small.root / "good.lock"
    good.write_text(lock.read_text())
    lock.write_bytes(OTHERS[kind])
    for command in (["status", "--offline"], ["sync", "--locked"], ["diff", lock, good]):
        result = cli(*command, "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code == 2, (command, result.output)
        assert f"cannot read the lock {lock}: " in " ".join(result.stderr.split()), result.stderr
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)     # looked back at only
    assert code == 0 and json.loads(lock.read_text())["result"] == out["result"]["sha"]


@pytest.mark.parametrize("kind", OTHERS)
def test_a_night_record_not_utf8_or_truncated_is_left_out(cli: Cli, small: Small, kind: str) -> None:
    _synced(cli, small)
    _record_by_hand(small, OTHERS[kind])
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    assert [(e["id"], e["suggestion"]) for e in out["entries"]] == [("pr/1", "keep")], out
