"""A pinned PR (`head:`) that a union supersedes whole: the union folds the PR's ref, not the pin (`union
compose`), so whether its fold is stale is read against the PR's ref too (h251, from h248: after a refold at the
PR's new head, sync warned `stale-fold` "its head is now <the pin>" until the pin moved, while `stale-pin` said
the pin changes nothing there). Both warnings now say the same thing: the fold follows the PR."""

from __future__ import annotations

from tests.conftest import Cli, Small


def _union_of_a_pinned_pr(cli: Cli, small: Small) -> tuple[str, str, tuple[str, ...]]:
    """pr/1 pinned to GOOD, folded by union u with pr/2 (apart: no conflict), then pushed again to MOVED."""
    good = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n"})
    small.manifest([{"pr": 1, "head": good}, {"pr": 2}])
    args = ("-m", str(small.manifest_path), "--repo", str(small.work.path))
    result = cli("union", "new", "u", "1", "2", *args)
    assert result.exit_code == 0, result.output
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=good, message="pr 1, pushed again")
    return good, moved, args


def _said(out: dict, kind: str) -> list[dict]:
    return [w for w in out["warnings"] if w["kind"] == kind]


def test_a_union_refolded_at_the_prs_new_head_is_not_stale_for_its_pin(cli: Cli, small: Small) -> None:
    good, moved, args = _union_of_a_pinned_pr(cli, small)
    result = cli("union", "compose", "u", *args)
    assert result.exit_code == 0, result.output
    assert f"head: {moved}" in small.manifest_path.read_text()          # the fold took the PR's ref
    code, out = cli.json("sync", *args)
    assert code == 0 and out["ok"], out
    assert _said(out, "stale-fold") == [], out                          # it said "its head is now <the pin>"
    [pin] = _said(out, "stale-pin")
    assert pin["superseded_by"] == "carry/u" and pin["pinned"] == good and pin["current"] == moved


def test_a_union_folded_at_the_pin_is_stale_once_the_pr_moved_on(cli: Cli, small: Small) -> None:
    """The union folded the pin's head; the PR was pushed since: the fold is stale (the pin does not hold the
    union back), as the stale-pin warning says: refold the union."""
    good, moved, args = _union_of_a_pinned_pr(cli, small)
    code, out = cli.json("sync", *args)
    assert code == 0 and out["ok"], out
    [fold] = _said(out, "stale-fold")
    assert (fold["entry"], fold["folded"], fold["current"]) == ("carry/u", good, moved), fold
    assert fold["message"] == (f"carry/u folded pr/1 at {good[:12]}, but its head is now {moved[:12]}: refold the "
                               "union (`carrytool union compose u`)")
    [pin] = _said(out, "stale-pin")
    assert pin["superseded_by"] == "carry/u" and "refold the union" in pin["message"]


def test_offline_and_locked_nights_agree(cli: Cli, small: Small) -> None:
    good, moved, args = _union_of_a_pinned_pr(cli, small)
    assert cli("union", "compose", "u", *args).exit_code == 0
    assert cli.json("sync", *args)[0] == 0
    for how in ("--offline", "--locked"):
        code, out = cli.json("sync", *args, how)
        assert code == 0 and out["ok"], out
        assert _said(out, "stale-fold") == [], (how, out)
