"""bisect of an assert that guards an entry (`entry:`) which broke it by moving: pr/1 adds the check, night 1
is green, then pr/1 is pushed again without it and night 2 is red. Upstream fails the assert by design and so
does upstream + pr/1 now, so no prefix passes and bisect blamed nobody (h241, on sqlalchemy: pr/13455). sync's
record of the last good night (or the lock beside the manifest) has pr/1 at its earlier head, and upstream +
that head passes: pr/1 broke it itself, `first_bad` names it and `moved` names both heads."""

from __future__ import annotations

import os

import pytest

from tests.conftest import SECOND_GIT, Cli, Small

DROP = "def drop(index):\n    name = index.name\n    return name\n"
CHECKED = DROP.replace("    return", "    if name is None:\n        raise CompileError('unnamed')\n    return")
AGAIN = DROP.replace("index.name\n", "index.name or ''\n")       # pushed again: the check is gone
GUARD = {"name": "drop-rejects-unnamed", "file": "a.py", "in": "drop", "calls": "CompileError", "entry": "pr/1"}


def two_nights(cli: Cli, small: Small) -> tuple[dict, dict]:
    """[pr/1, pr/2]: night 1 green, pr/1 pushed again without what GUARD checks, night 2 red. Their reports."""
    base = small.up.commit({"a.py": DROP}, "base with drop", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": CHECKED}, parent=base)
    small.pr(2, {"b.py": "x = 1\ny = 20\nz = 3\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[GUARD])
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path)
    code, first = cli.json(*args)
    assert code == 0, first
    small.pr(1, {"a.py": AGAIN}, parent=base)
    code, second = cli.json(*args)
    assert code == 1 and second["result"]["sha"] and not second["asserts"][0]["ok"], second
    return first, second


def bisect(cli: Cli, small: Small, rev: str) -> tuple[dict, str]:
    args = ("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--rev", rev)
    code, out = cli.json(*args)
    assert code == 0, out
    return out, cli(*args).stdout


def heads(first: dict, second: dict) -> tuple[str, str]:
    return first["entries"][0]["head"], second["entries"][0]["head"]


def test_an_entry_that_moved_away_from_what_its_assert_checks_is_blamed(cli: Cli, small: Small) -> None:
    first, second = two_nights(cli, small)
    old, new = heads(first, second)
    out, text = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] == "pr/1" and out["alone_bad"] is False and out["interacts_with"] == [], out
    assert out["moved"] == [{"id": "pr/1", "from": old, "to": new, "bad": False,
                             "night": f"refs/carrytool/dev/nights:{first['result']['sha']}.lock"}], out
    assert [c["name"] for c in out["checks"]] == ["drop-rejects-unnamed"] and out["upstream"]["bad"] is True, out
    assert out["next"].startswith("carrytool explain pr/1 "), out
    assert "First bad entry: pr/1 (1 of 2 in the chain)" in text, text
    assert f"  it broke it itself: pr/1 moved from {old[:12]} (the last good night, refs/carrytool/dev/nights:" \
           f"{first['result']['sha']}.lock), where upstream + it passes, to {new[:12]}, where upstream + it fails: " \
           "its new head drops what drop-rejects-unnamed checks" in text, text


def test_a_red_night_in_between_is_not_the_last_good_one(cli: Cli, small: Small) -> None:
    """Night 3 (pr/2 pushed again) is red too: the night before it, night 2, had pr/1 at today's head but fails
    the assert; the last good night is night 1."""
    first, second = two_nights(cli, small)
    small.pr(2, {"b.py": "x = 1\ny = 21\nz = 3\n"}, parent=small.up.rev("refs/heads/main"))
    code, third = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and third["result"]["sha"] != second["result"]["sha"], third
    out, _ = bisect(cli, small, third["result"]["sha"])
    assert out["first_bad"] == "pr/1", out
    assert out["moved"][0]["night"] == f"refs/carrytool/dev/nights:{first['result']['sha']}.lock", out


def test_the_lock_beside_the_manifest_is_the_last_good_night_without_records(cli: Cli, small: Small) -> None:
    """A clone without sync's records (a CI runner's): the lock beside the manifest, the green night's."""
    first, second = two_nights(cli, small)
    small.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    out, _ = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] == "pr/1", out
    assert out["moved"][0]["night"] == str(small.manifest_path.with_name("manifest.yaml.lock")), out


def test_without_a_good_night_nobody_is_blamed(cli: Cli, small: Small) -> None:
    """No record and no lock: nothing says pr/1 ever provided it; upstream itself fails, as before."""
    _, second = two_nights(cli, small)
    small.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    small.manifest_path.with_name("manifest.yaml.lock").unlink()
    out, text = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] is None and out["moved"] == [], out
    assert "the entry no longer provides it" in text, text


def test_same_answer_on_the_second_git(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    if not SECOND_GIT:
        pytest.skip("no second git")
    _, second = two_nights(cli, small)
    answer = bisect(cli, small, second["result"]["sha"])
    monkeypatch.setenv("PATH", SECOND_GIT + os.pathsep + os.environ["PATH"])
    assert bisect(cli, small, second["result"]["sha"]) == answer


def test_a_newer_green_nights_lock_is_not_the_last_good_night_of_an_older_night(cli: Cli, small: Small) -> None:
    """h246 (from the code), h251 (reproduced): `--rev` of night 1, red (pr/1 did not have the check yet), and
    night 2 green (pr/1 pushed with it), whose lock is beside the manifest. No night before night 1 passes, and
    the lock, newer than night 1, was read as its last good night: "pr/1 broke it itself: moved from <night
    2's head>". Only nights older than the one bisected are read: nobody is blamed."""
    base = small.up.commit({"a.py": DROP}, "base with drop", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": AGAIN}, parent=base)
    small.pr(2, {"b.py": "x = 1\ny = 20\nz = 3\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[GUARD])
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path)
    code, first = cli.json(*args)
    assert code == 1 and first["result"]["sha"], first
    small.pr(1, {"a.py": CHECKED}, parent=base)
    code, second = cli.json(*args)
    assert code == 0 and second["result"]["sha"] != first["result"]["sha"], second
    out, text = bisect(cli, small, first["result"]["sha"])
    assert out["first_bad"] is None and out["moved"] == [], out
    assert "broke it itself" not in text and "the entry no longer provides it" in text, text
