"""A bare `diff` after a red night names the diff of that night's report from the lock the diff ends at (h244's
`red_night`): that is the lock on disk, which a green night wrote and nobody committed yet, not HEAD's (h253's
review: the command compared HEAD's older lock with the red night, two nights' changes said as one). A lock
HEAD has as it is keeps `HEAD:<lock>` (tests/review/test_diff_order_of_nights.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.conftest import Cli
from tests.review.test_diff import Nights, _diff

LOCK = "carries/manifest.yaml.lock"


def test_the_red_nights_command_names_the_uncommitted_lock_on_disk(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}])
    n.second_day()
    lock = n.manifest.with_name("manifest.yaml.lock")
    green = cli("sync", "-m", n.manifest, "--repo", n.work.path)           # green, its lock left uncommitted
    assert green.exit_code == 0 and lock.read_text() != n.fork.show("HEAD", LOCK), green.output
    n.up.commit({"c.txt": "c3\n"}, "pr 2 again", parent=n.base, ref="refs/pull/2/head")
    n.manifest.write_text(n.manifest.read_text() + "asserts:\n- {name: no-c3, file: c.txt, absent: c3}\n")
    report = tmp_path / "sync-report.json"
    code, red = cli.json("sync", "-m", n.manifest, "--repo", n.work.path, "--report", report)
    assert code == 1, red
    code, out = _diff(n)
    assert code == 0 and out["locks"]["new"] != f"HEAD:{LOCK}", out         # the bare diff ends at the lock on disk
    options = ["-m", str(n.manifest.resolve()), "--repo", str(n.work.path.resolve())]
    assert out["red_night"]["command"] == shlex.join(["carrytool", "diff", str(lock.resolve()), "REPORT.json",
                                                      *options]), out["red_night"]
    code, that = _diff(n, str(lock.resolve()), str(report))                  # as printed: one night's change
    assert code == 0 and that["upstream"]["commits"] == 0, that
