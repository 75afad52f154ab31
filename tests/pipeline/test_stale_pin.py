"""sync says when a PR moved past the head its entry pins (`head:`): h239's trial on sqlalchemy pinned pr/13455
to its last good head after a force-push; later nights went on composing the pin, and nothing said the PR had
been pushed again (h244). A warning, never a failure: the exit code is the same."""

from __future__ import annotations

from tests.conftest import Cli, Small


def _pinned(small: Small) -> tuple[str, str]:
    good = small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    moved = small.pr(1, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=good, message="pr 1, pushed again")
    small.manifest([{"pr": 1, "head": good}])
    return good, moved


def test_a_pr_pushed_past_its_pin_is_said_with_both_heads_and_the_edit(cli: Cli, small: Small) -> None:
    good, moved = _pinned(small)
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["ok"] and out["entries"][0]["head"] == good, out
    [pin] = [w for w in out["warnings"] if w["kind"] == "stale-pin"]
    assert pin == {
        "kind": "stale-pin", "entry": "pr/1", "pr": 1, "pinned": good, "current": moved, "line": 8,
        "message": f"pr/1 is pinned to {good[:12]} by its entry's `head:` ({small.manifest_path}:8), but the PR's head "
                   f"is now {moved[:12]}: it was pushed since the pin, and sync composes the pin; to carry the new "
                   f"head, set `head: {moved}` in its entry (or remove `head:` to follow the PR), then "
                   "`carrytool sync`"}
    quiet = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q")
    assert quiet.exit_code == 0 and f"warning: pr/1 is pinned to {good[:12]}" in quiet.stdout, quiet.output
    offline = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--offline")[1]
    assert [w["current"] for w in offline["warnings"] if w["kind"] == "stale-pin"] == [moved]
    locked = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked")[1]
    assert locked["ok"] and not [w for w in locked["warnings"] if w["kind"] == "stale-pin"]    # the lock's heads


def test_a_pin_at_the_prs_head_says_nothing(cli: Cli, small: Small) -> None:
    good, moved = _pinned(small)
    small.manifest([{"pr": 1, "head": moved[:10]}])         # a short pin at the PR's head
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and not [w for w in out["warnings"] if w["kind"] == "stale-pin"], out


def test_a_pinned_pr_a_union_provides_whole_is_not_sent_to_move_the_pin_and_sync(cli: Cli, small: Small) -> None:
    """h248 (from h244): the pin of a PR a union supersedes whole has no effect on what sync composes (the
    union's commit carries it): "set `head:` ..., then `carrytool sync`" changed nothing. Said as it is."""
    good, moved = _pinned(small)
    union = small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "the union", parent=small.base, ref="refs/keep/u")
    small.work.git("fetch", "-q", str(small.up.path), union)
    small.manifest([{"pr": 1, "head": good}, {"carry": "u", "commit": union, "supersedes": [1]}])
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and out["entries"][0]["reason"] == "superseded", out
    [pin] = [w for w in out["warnings"] if w["kind"] == "stale-pin"]
    assert pin["superseded_by"] == "carry/u"
    assert pin["message"] == (
        f"pr/1 is pinned to {good[:12]} by its entry's `head:` ({small.manifest_path}:8), but the PR's head is now "
        f"{moved[:12]}; carry/u provides it whole (`supersedes`), so sync composes the union's fold of it, not the "
        "pin: to carry the new head, refold the union (`carrytool union compose u` folds the PR's head, not the "
        f"pin), and set `head: {moved}` in the PR's entry or remove `head:`")
