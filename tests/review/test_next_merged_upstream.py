"""The `next:` of a PR that conflicts with upstream alone because upstream likely merged it as another commit
(h262: pola-rs/polars, squash-merged PRs): sync and explain said "rebase pr/N onto upstream main", while explain's
story said upstream already had most of it and to remove it. The next step names what upstream has and how to
drop the PR first, the rebase as the other way."""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.review.test_explain_upstream_has import build

DROP = "if upstream's version of it is what you carry it for (`carrytool status` shows whether upstream merged it), " \
       "drop it: remove its entry from the manifest"


def test_sync_and_explain_say_to_drop_a_pr_upstream_likely_merged(cli: Cli, small: Small) -> None:
    merged, _ = build(small)
    small.manifest([{"pr": 1}])                     # on_conflict: fail: the conflict fails the run
    args = ("-m", small.manifest_path, "--repo", small.work.path)
    for command in (("sync", "--dry-run"), ("explain",)):
        result = cli(*command, *args)
        assert result.exit_code == (3 if command[0] == "sync" else 0), result.output
        flat = " ".join(result.stdout.split())
        assert f"next: pr/1 conflicts with upstream alone, and upstream already has 1 of its 2 hunks (a.py: 1 of 1, " \
               f"line 6): likely merged upstream as {merged[:10]} \"Reset the flushing state (#1)\"; {DROP}; else " \
               "rebase it onto upstream main" in flat, (command, result.stdout)
        assert "next: rebase pr/1 onto upstream main" not in flat, command
    quiet = cli("sync", "--dry-run", "-q", *args)
    assert quiet.exit_code == 3 and DROP in " ".join(quiet.stdout.split()), quiet.stdout


def test_a_pr_upstream_has_none_of_is_still_rebased(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"a.py": "x = 1\n"}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": "x = 2\n"})
    small.up.commit({"a.py": "x = 3\n"}, "upstream's own", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}])
    result = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 3 and "next: rebase pr/1 onto upstream main" in result.stdout, result.stdout
    assert "drop it" not in result.stdout


def test_sync_dry_run_keeps_no_weighing_and_sync_keeps_it(cli: Cli, small: Small) -> None:
    """`--dry-run` writes nothing: the weighing behind the `next:` is kept on disk by a sync that is no dry run."""
    build(small)
    small.manifest([{"pr": 1}])
    args = ("-m", small.manifest_path, "--repo", small.work.path)
    cache = small.work.path / "carrytool" / "cache"
    assert cli("sync", "--dry-run", *args).exit_code == 3
    # nor explain's answers the weighing asked (h263: upstreamhas-*.json was written by the dry run)
    assert not [p for p in cache.parent.rglob("*") if p.is_file()], sorted(map(str, cache.parent.rglob("*")))
    assert cli("sync", *args).exit_code == 3
    assert [p.name for p in cache.glob("statushas-*.json")], sorted(p.name for p in cache.iterdir())


def test_a_pr_upstream_made_a_part_of_is_rebased_whatever_the_commits_subject(cli: Cli, small: Small) -> None:
    """h263: whether upstream likely merged it was read as the words "likely merged upstream" anywhere in what
    upstream has of it, the subject of the commit that made a part of it too: a PR upstream has 1 of 3 hunks of,
    made by `Say "likely merged upstream" (#1)`, was told to be dropped first."""
    from tests.review.test_explain_upstream_has import A_PR, A_UP, T_PR, T_UP, A, T

    c = "def h():\n    return 3\n"
    small.base = small.up.commit({"a.py": A, "test_a.py": T, "c.py": c}, "base", parent="main",
                                 ref="refs/heads/main")
    small.pr(1, {"a.py": A_PR, "test_a.py": T_PR, "c.py": c.replace("3", "4")}, message="Reset the flushing state")
    small.up.commit({"a.py": A_UP, "test_a.py": T_UP}, 'Say "likely merged upstream" (#1)', parent="main",
                    ref="refs/heads/main")
    small.manifest([{"pr": 1}])
    result = cli("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    flat = " ".join(result.stdout.split())
    assert result.exit_code == 3 and "next: rebase pr/1 onto upstream main" in flat, result.stdout
    assert "drop it" not in flat, result.stdout
