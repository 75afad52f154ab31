"""`status` of a pinned PR whose entry is disabled (`enabled: false`): sync composes nothing of it and warns no
`stale-pin` for it (sync_warnings.stale_pins), so status does not send the user to move the pin "then `carrytool
sync`" either (h253's review: sync, explain and status agree on stale pins)."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.review.test_status import Forge, forge  # noqa: F401  (the fixture)
from tests.review.test_status_pins import _status_of


def test_a_disabled_pinned_pr_is_not_told_to_move_its_pin(cli: Cli, forge: Forge) -> None:  # noqa: F811
    text = forge.manifest.read_text().replace("  - pr: 4\n", f"  - pr: 4\n    head: {forge.p4a}\n    enabled: false\n")
    forge.manifest.write_text(text)
    item = _status_of(cli, forge, 4)
    assert "pinned to" not in item["why"] and "then `carrytool sync`" not in item["why"], item


def test_an_enabled_pinned_pr_still_is(cli: Cli, forge: Forge) -> None:  # noqa: F811
    """The guard (test_status_pins.py's case, kept beside it)."""
    text = forge.manifest.read_text().replace("  - pr: 4\n", f"  - pr: 4\n    head: {forge.p4a}\n")
    forge.manifest.write_text(text)
    assert "then `carrytool sync`" in _status_of(cli, forge, 4)["why"]


def test_offline_a_disabled_pinned_pr_is_not_told_to_move_its_pin(cli: Cli, small: Small) -> None:
    good = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1, "head": good, "enabled": False}, {"pr": 2}])
    small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=good, message="pr 1, pushed again")
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and not [w for w in out["warnings"] if w["kind"] == "stale-pin"], out
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    [item] = [e for e in out["entries"] if e["id"] == "pr/1"]
    assert code == 0 and "move the pin" not in item["why"] and "then `carrytool sync`" not in item["why"], item
