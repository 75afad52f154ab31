"""carrytool diff says a pin (`head:`) added, changed or removed between two nights (h244: h239's trial on
sqlalchemy pinned pr/13455 to its last good head after a force-push, and the diff of that night said
"unchanged", nothing of the pin that now holds the fork back)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.review.test_diff import Nights, _diff


def _pin(out: dict, entry_id: str) -> tuple[str, object]:
    item = next(e for e in out["entries"] if e["id"] == entry_id)
    return item["change"], item.get("pin")


def test_a_pin_added_changed_or_removed_is_said(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path, cli)
    n.night([{"pr": 1}, {"pr": 2}])
    n.second_day()                                         # pr/1 pushed again: p1b -> p1c
    n.night([{"pr": 1, "head": n.p1b}, {"pr": 2}])         # pinned at the head of the night before
    code, out = _diff(n)
    assert code == 0 and _pin(out, "pr/1") == ("unchanged", {"from": None, "to": n.p1b}), out
    assert _pin(out, "pr/2") == ("unchanged", None)
    text = cli("diff", "-m", n.manifest, "--repo", n.work.path).stdout
    assert f"  pr/1: unchanged: pinned to {n.p1b[:12]} (`head:` added)\n" in text, text
    markdown = cli("diff", "-m", n.manifest, "--repo", n.work.path, "--format", "markdown").stdout
    assert f"| `pr/1` | unchanged | pinned to {n.p1b[:12]} (`head:` added) |" in markdown, markdown

    n.night([{"pr": 1, "head": n.p1c[:10]}, {"pr": 2}])    # the pin moved (written short)
    code, out = _diff(n)
    assert code == 0 and _pin(out, "pr/1") == ("moved", {"from": n.p1b, "to": n.p1c}), out
    text = cli("diff", "-m", n.manifest, "--repo", n.work.path).stdout
    assert f"  pr/1: moved: head {n.p1b[:12]} -> {n.p1c[:12]}; pin {n.p1b[:12]} -> {n.p1c[:12]} (`head:`)\n" \
        in text, text

    n.night([{"pr": 1}, {"pr": 2}])                        # unpinned, at the same head: the same lock
    nights = ("HEAD~1:carries/manifest.yaml.lock", "HEAD:carries/manifest.yaml.lock")
    code, out = _diff(n, *nights)
    assert code == 0 and _pin(out, "pr/1") == ("unchanged", {"from": n.p1c, "to": None}), out
    text = cli("diff", *nights, "-m", n.manifest, "--repo", n.work.path).stdout
    assert f"  pr/1: unchanged: pin {n.p1c[:12]} removed (`head:`): follows the PR's head\n" in text, text


def test_a_pin_is_not_compared_when_a_nights_manifest_is_not_known(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path, cli)
    n.night([{"pr": 1}, {"pr": 2}])
    away = tmp_path / "old.lock"                          # no manifest beside it
    away.write_text(n.manifest.with_name("manifest.yaml.lock").read_text())
    n.night([{"pr": 1, "head": n.p1b}, {"pr": 2}])
    code, out = _diff(n, str(away), str(n.manifest.with_name("manifest.yaml.lock")))
    assert code == 0 and _pin(out, "pr/1") == ("unchanged", None), out
