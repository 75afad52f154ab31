"""`status` of a pinned PR (`head:`) that a union supersedes whole: the pin changes nothing sync composes (the
union's commit carries the PR), so "set `head:` ..., then `carrytool sync`" did nothing there (h251; h248 fixed
sync's `stale-pin` words, not status's). status says what sync says."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.fakeforge import FakeForge
from tests.review.test_status import Forge, forge  # noqa: F401  (the fixture)


def _status_of(cli: Cli, forge: Forge, number: int) -> dict:  # noqa: F811
    with FakeForge() as fake:
        forge.github(fake)
        code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", fake.url)
    assert code == 0, out
    [item] = [e for e in out["entries"] if e["id"] == f"pr/{number}"]
    return item


def test_a_pinned_pr_a_union_refolded_at_its_head_is_told_what_sync_says(cli: Cli, forge: Forge) -> None:  # noqa: F811
    """pr/5's entry pins p5a; union u refolded it at p5b, its head (`union compose` folds the ref)."""
    text = forge.manifest.read_text().replace(f"{{pr: 5, head: {forge.p5a}}}", f"{{pr: 5, head: {forge.p5b}}}")
    forge.manifest.write_text(text + f"  - pr: 5\n    head: {forge.p5a}\n")
    line = len(text.splitlines()) + 1
    item = _status_of(cli, forge, 5)
    assert (item["suggestion"], item["head"]) == ("keep", forge.p5b), item
    assert item["why"] == (
        f"open; pinned to {forge.p5a[:12]} by its entry's `head:` ({forge.manifest}:{line}), but the PR's head is "
        f"now {forge.p5b[:12]}; carry/u provides it whole (`supersedes`), so sync composes the union's fold of it, "
        "not the pin: to carry the new head, refold the union (`carrytool union compose u` folds the PR's head, not "
        f"the pin), and set `head: {forge.p5b}` in the PR's entry or remove `head:`")


def test_a_pinned_pr_no_union_supersedes_is_told_to_move_the_pin(cli: Cli, forge: Forge) -> None:  # noqa: F811
    text = forge.manifest.read_text().replace("  - pr: 4\n", f"  - pr: 4\n    head: {forge.p4a}\n")
    forge.manifest.write_text(text)
    assert "then `carrytool sync`" in _status_of(cli, forge, 4)["why"]


def test_a_local_upstreams_pinned_pr_a_union_supersedes_is_not_sent_to_move_the_pin(cli: Cli, small: Small) -> None:
    """A local-path upstream (`status --offline`, told from this repository) says the union carries the PR, and
    no pin advice (a guard: it never said "move the pin, then sync" there)."""
    from tests.pipeline.test_stale_pin_fold import _union_of_a_pinned_pr
    good, moved, args = _union_of_a_pinned_pr(cli, small)
    assert cli("union", "compose", "u", *args).exit_code == 0
    assert cli("sync", *args).exit_code == 0
    code, out = cli.json("status", *args, "--offline")
    [item] = [e for e in out["entries"] if e["id"] == "pr/1"]
    assert code == 0 and item["head"] == good, item
    assert "then `carrytool sync`" not in item["why"], item["why"]
    assert "carry/u provides it (`supersedes`): sync carries that, not the PR itself" in item["why"], item["why"]


def _sync_says(forge: Forge, number: int, head: str) -> str:  # noqa: F811
    """sync's `stale-pin` words for pr/NUMBER, pinned in the manifest, with its ref at HEAD (the same function)."""
    from carrytool.manifest.load import load_manifest
    from carrytool.pipeline.resolve import Resolved
    from carrytool.pipeline.sync_warnings import stale_pins

    manifest = load_manifest(forge.manifest)
    pin = manifest.entry(f"pr/{number}").head
    resolved = Resolved(upstream=forge.base, heads={number: forge.up.rev(pin)}, passed_pins={number: head})
    [warning] = stale_pins(manifest, resolved)
    return str(warning["message"])


def test_a_stale_fold_of_a_pinned_pr_says_what_to_do_with_the_pin(cli: Cli, forge: Forge) -> None:  # noqa: F811
    """h256: union u folded pr/5 at p5a, the PR is at p5b, and pr/5's entry pins p5a. status said `refold` ("run
    `carrytool union compose u`") and nothing of the pin, which sync's `stale-pin` warns of: the refold folds the
    PR's head, and the pin is to be moved to it or removed. The refold's `why` says what sync says of the pin."""
    text = forge.manifest.read_text()
    forge.manifest.write_text(text + f"  - pr: 5\n    head: {forge.p5a}\n")
    line = len(text.splitlines()) + 1
    item = _status_of(cli, forge, 5)
    assert (item["suggestion"], item["head"]) == ("refold", forge.p5b), item
    pinned = (f"pinned to {forge.p5a[:12]} by its entry's `head:` ({forge.manifest}:{line}), but the PR's head is "
              f"now {forge.p5b[:12]}; carry/u provides it whole (`supersedes`), so sync composes the union's fold of "
              "it, not the pin: to carry the new head, refold the union (`carrytool union compose u` folds the PR's "
              f"head, not the pin), and set `head: {forge.p5b}` in the PR's entry or remove `head:`")
    assert item["why"] == (f"carry/u folded {forge.p5a[:12]}, its head is now {forge.p5b[:12]}: run `carrytool union "
                           f"compose u`; also, {pinned}"), item["why"]
    assert _sync_says(forge, 5, forge.p5b) == f"pr/5 is {pinned}"        # sync's stale-pin: the same words
