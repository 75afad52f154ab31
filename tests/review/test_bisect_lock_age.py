"""bisect's last good night next to a recorded night (`--rev`) and a lock beside the manifest that no record
holds (synced in another clone, such as CI's, or before the records): h251 read only the nights recorded before
the one bisected, since a lock holds no date, so such a lock was never read and an entry that broke its assert
by moving was not blamed (h256). git tells its age when it can (its upstream behind the night's, or its commit
beside the manifest made before the night's newest input); when it cannot, bisect says so."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo
from tests.review.test_bisect_moved import AGAIN, CHECKED, DROP, GUARD, bisect

NIGHTS = "refs/carrytool/dev/nights"


def _green(cli: Cli, small: Small) -> tuple[str, dict]:
    """[pr/1, pr/2] with pr/1 adding what GUARD checks: a green night. (upstream's main, its report)."""
    base = small.up.commit({"a.py": DROP}, "base with drop", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": CHECKED}, parent=base)
    small.pr(2, {"b.py": "x = 1\ny = 20\nz = 3\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[GUARD])
    code, first = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, first
    return base, first


def _red(cli: Cli, small: Small, base: str) -> dict:
    """pr/1 pushed again without what GUARD checks: a red night (no lock written; recorded)."""
    small.pr(1, {"a.py": AGAIN}, parent=base)
    code, second = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and not second["asserts"][0]["ok"], second
    return second


def _lock(small: Small) -> str:
    return str(small.manifest_path.with_name("manifest.yaml.lock"))


def test_a_lock_whose_upstream_is_behind_the_nights_is_its_last_good_night(cli: Cli, small: Small) -> None:
    """The green night was synced in another clone (its record is not here); upstream moved on since."""
    base, first = _green(cli, small)
    small.work.git("update-ref", "-d", NIGHTS)
    small.up.commit({"docs/c.txt": "c2\n"}, "upstream moves on", parent="refs/heads/main", ref="refs/heads/main")
    second = _red(cli, small, base)
    out, text = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] == "pr/1", (out, text)
    assert out["moved"] == [{"id": "pr/1", "from": first["entries"][0]["head"], "to": second["entries"][0]["head"],
                             "night": _lock(small), "bad": False}], out
    assert "was not read as the last good night" not in text, text


def test_a_lock_committed_before_the_nights_newest_input_is_its_last_good_night(cli: Cli, small: Small) -> None:
    """The same upstream both nights; the lock is committed beside the manifest before pr/1 was pushed again."""
    base, first = _green(cli, small)
    small.work.git("update-ref", "-d", NIGHTS)
    carries = init_repo(small.manifest_path.parent)
    carries.clock = small.up.clock
    carries.commit({"manifest.yaml": small.manifest_path.read_text(),
                    "manifest.yaml.lock": small.manifest_path.with_name("manifest.yaml.lock").read_text()},
                   "night 1", ref="refs/heads/main")
    small.up.clock = carries.clock         # pr/1 is pushed again after that commit
    second = _red(cli, small, base)
    out, text = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] == "pr/1", (out, text)
    assert out["moved"][0]["night"] == _lock(small) and out["moved"][0]["bad"] is False, out


def test_a_lock_git_cannot_date_is_not_read_and_bisect_says_so(cli: Cli, small: Small) -> None:
    """The same upstream, and the lock in no work tree: it may be a newer night's (h251), so it is not read."""
    base, _ = _green(cli, small)
    small.work.git("update-ref", "-d", NIGHTS)
    second = _red(cli, small, base)
    out, text = bisect(cli, small, second["result"]["sha"])
    assert out["first_bad"] is None and out["moved"] == [], out
    said = " ".join(text.split())
    assert f"the lock beside the manifest ({_lock(small)}) was not read as the last good night: sync's records here " \
           "do not hold its night, and git cannot tell whether it is older than the night bisected (its upstream " \
           "is the night's, and the lock is not in a work tree whose history would date it)" in said, text


def test_a_lock_whose_upstream_is_ahead_is_a_newer_night_and_not_read(cli: Cli, small: Small) -> None:
    """`--rev` of a red night recorded here; the green night after it, on a newer upstream, was synced elsewhere
    (its lock is beside the manifest, its record is not here): newer, so not its last good night."""
    base = small.up.commit({"a.py": DROP}, "base with drop", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": AGAIN}, parent=base)
    small.pr(2, {"b.py": "x = 1\ny = 20\nz = 3\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[GUARD])
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path)
    code, first = cli.json(*args)
    assert code == 1, first
    record = small.work.ref(NIGHTS)
    small.up.commit({"docs/c.txt": "c2\n"}, "upstream moves on", parent="refs/heads/main", ref="refs/heads/main")
    small.pr(1, {"a.py": CHECKED}, parent=base)
    code, second = cli.json(*args)
    assert code == 0, second
    small.work.git("update-ref", NIGHTS, record)
    out, text = bisect(cli, small, first["result"]["sha"])
    assert out["first_bad"] is None and out["moved"] == [], out
    assert "was not read as the last good night" not in text and "broke it itself" not in text, text
