"""Regression corpus of issue 14 (pipeline items): each scenario was wrong or crashed on main.

Real repositories in tmp_path; every test failed before its fix.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

from carrytool.gitlayer import contentmerge
from carrytool.gitlayer import git as git_module
from carrytool.pipeline.blame import meets_conflict
from carrytool.pipeline.compose import Composer
from tests.conftest import SECOND_GIT, Cli, Small
from tests.gitrepo import Repo, init_repo, many_prs, write_manifest

NEW_GIT = SECOND_GIT    # a newer git (2.47), when this machine has it

# nine lines: changes two lines apart merge cleanly, changes to the same line conflict
NINE = "".join(f"v{i} = {i}\n" for i in range(1, 10))


def nine(**lines: str) -> dict[str, str]:
    text = NINE
    for name, value in lines.items():
        text = text.replace(f"{name} = {name[1:]}\n", f"{name} = {value}\n")
    return {"n.py": text}


def by_id(report: dict) -> dict[str, dict]:
    return {e["id"]: e for e in report["entries"]}


def _blame_repo(small: Small) -> None:
    """Upstream moved v1 after the PRs' base; pr/2 edits v1 too (conflicts with upstream alone)."""
    base = small.up.commit(nine(), "nine", parent="main", ref="refs/heads/main")
    small.up.commit(nine(v1="'upstream'"), "upstream moves v1", parent=base, ref="refs/heads/main")
    small.pr(5, nine(v4="'five'"), parent=base)                  # far from every conflicting line
    small.pr(1, nine(v7="'one'"), parent=base)                   # meets pr/2's own change at v7
    small.pr(2, nine(v1="'two'", v7="'two'"), parent=base)       # v1: upstream alone; v7: with pr/1
    small.pr(3, nine(v1="'three'"), parent=base)                 # v1 only: upstream alone


def test_conflict_with_upstream_alone_blames_upstream_not_an_earlier_entry(cli: Cli, small: Small,
                                                                           report_schema: dict) -> None:
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    e = by_id(report)
    assert e["pr/3"]["conflicts"] == [{"file": "n.py", "with": [], "upstream": True}]
    assert e["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}]
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert "conflict: pr/3 in n.py with upstream main alone" in result.stdout
    assert "conflict: pr/2 in n.py with upstream main and pr/1" in result.stdout
    assert "with pr/5" not in result.stdout


@pytest.mark.parametrize("kind", ["deleted", "link", "submodule", "directory"])
def test_conflict_with_upstream_names_an_earlier_entry_that_took_the_file_away(cli: Cli, small: Small, kind: str,
                                                                              report_schema: dict) -> None:
    """Upstream moved v1; pr/1, on upstream, deletes n.py (or makes it a link, a submodule, a directory); pr/2, on the
    old base, edits v1. pr/2's conflict with upstream in n.py is pr/1's doing too, though no line of pr/1
    meets it: in the result so far n.py is no file to merge into (as `union` names it)."""
    base = small.up.commit(nine(), "nine", parent="main", ref="refs/heads/main")
    moved = small.up.commit(nine(v1="'upstream'"), "upstream moves v1", parent=base, ref="refs/heads/main")
    gone = {"deleted": {"n.py": None}, "link": {"n.py": "elsewhere.py"}, "submodule": {"n.py": base},
            "directory": {"n.py": None, "n.py/inner.py": "x = 1\n"}}[kind]
    small.up.commit(gone, "pr 1", parent=moved, ref="refs/pull/1/head",
                    modes={"n.py": "160000" if kind == "submodule" else "120000"})
    small.pr(2, nine(v1="'two'"), parent=base)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    e = by_id(report)
    assert e["pr/1"]["status"] == "applied", e["pr/1"]
    assert e["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}], e["pr/2"]


def test_conflict_with_upstream_names_an_entry_whose_own_conflict_with_upstream_was_in_another_file(
        cli: Cli, small: Small) -> None:
    """Upstream moved m.py's v5, then n.py's v1. pr/3 (on the first, `theirs`) changes n.py's v1, a conflict
    with upstream it resolves its way, and m.py's v6; pr/4, on the old base, changes m.py's v5: pr/3's v6 is
    in that conflict. pr/3 merged onto upstream cleanly in m.py, so it is weighed there (it was not: its
    conflict in n.py left it out everywhere)."""
    both = {"n.py": NINE, "m.py": NINE}
    base = small.up.commit(both, "nine", parent="main", ref="refs/heads/main")
    first = small.up.commit({"m.py": nine(v5="'upstream'")["n.py"]}, "upstream moves m.py v5", parent=base)
    small.up.commit(nine(v1="'upstream'"), "upstream moves n.py v1", parent=first, ref="refs/heads/main")
    small.pr(3, {**nine(v1="'three'"), "m.py": nine(v5="'upstream'", v6="'three'")["n.py"]}, parent=first)
    small.pr(4, {"m.py": nine(v5="'four'")["n.py"]}, parent=base)
    small.manifest([{"pr": 3, "on_conflict": "theirs"}, {"pr": 4, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    e = by_id(report)
    assert e["pr/3"]["status"] == "applied" and e["pr/3"]["conflicts"] == [
        {"file": "n.py", "with": [], "upstream": True}], e["pr/3"]
    assert e["pr/4"]["conflicts"] == [{"file": "m.py", "with": ["pr/3"], "upstream": True}], e["pr/4"]


@pytest.mark.parametrize("kind", ["content", "deleted", "directory"])
def test_conflict_with_upstream_names_a_theirs_entry_by_what_it_left_there(cli: Cli, small: Small,
                                                                          kind: str) -> None:
    """Upstream moved v1 of n.py; pr/1, on the old base under `theirs`, conflicts with upstream there and
    wins: its own v1, n.py deleted, or n.py made a directory. pr/2, on the old base, edits v1 (and v9):
    its conflict with upstream is pr/1's doing too. pr/1's merge onto upstream conflicted at n.py, so it is
    weighed by that merge resolved its way, as the chain resolved it (an adversarial review's case: it
    was left out, `with: []`)."""
    base = small.up.commit(nine(), "nine", parent="main", ref="refs/heads/main")
    small.up.commit(nine(v1="'upstream'"), "upstream moves v1", parent=base, ref="refs/heads/main")
    wins = {"content": nine(v1="'one'"), "deleted": {"n.py": None},
            "directory": {"n.py": None, "n.py/inner.py": "x = 1\n"}}[kind]
    small.pr(1, wins, parent=base)
    small.pr(2, nine(v1="'two'", v9="'two'"), parent=base)
    small.manifest([{"pr": 1, "on_conflict": "theirs"}, {"pr": 2, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    # pr/1 loses upstream's change to v1: sync says so; its deletion landed where the file is gone, a
    # directory there too (helper-124: "did not land", exit 1, its removed lines being the old base's)
    assert code == 0, report
    assert report["entries"][0]["landing"]["dropped"] == [], report["entries"][0]
    assert [w["kind"] for w in report["warnings"]] == ["upstream-loss"], report
    e = by_id(report)
    assert e["pr/1"]["status"] == "applied" and e["pr/1"]["conflicts"][0]["upstream"], e["pr/1"]
    assert e["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}], e["pr/2"]


def test_blame_reads_upstream_regions_from_the_merge_onto_upstream(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Who an upstream conflict is with: the entry's own conflict regions with upstream are read from its
    merge onto upstream (made anyway), not merged again; the report is the same."""
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    merged: list[tuple] = []
    real = contentmerge.merge_contents_many

    def spy(git, triples):  # noqa: ANN001, ANN202
        merged.extend(triples)
        return real(git, triples)

    monkeypatch.setattr(contentmerge, "merge_contents_many", spy)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, read = cli.json(*args)
    read_merges = list(merged)
    monkeypatch.setattr(Composer, "regions_from_merges", False)
    monkeypatch.setattr(Composer, "regions_from_chain", False)
    merged.clear()
    again_code, again = cli.json(*args)
    assert (code, read["entries"]) == (again_code, again["entries"])
    assert by_id(read)["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}]
    # pr/3 and pr/2 each weigh pr/5 and pr/1 (a merge each) and pr/3, met by neither, the result so far
    # (one more, merged again only with the chained merge not read: tests/pipeline/test_naming_reads.py);
    # their own conflicts with upstream are read from their merges onto it, not merged again
    assert len(read_merges) == 4 and len(merged) == 7


def test_blame_asks_the_merges_onto_each_earlier_entry_in_one_batch(cli: Cli, small: Small,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Who an upstream conflict is with: the merges of the entry onto each earlier entry that touched the
    file are asked together (one batch, which two merge processes may share), not one after another;
    the report is the one of asking them one at a time."""
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    batches: list[int] = []
    real = git_module.Git.merge_contents_many

    def spy(self, triples):  # noqa: ANN001, ANN202
        batches.append(len(triples))
        return real(self, triples)

    monkeypatch.setattr(git_module.Git, "merge_contents_many", spy)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, together = cli.json(*args)
    assert batches.count(2) == 2            # pr/3 and pr/2, each onto pr/5 and onto pr/1
    assert batches[0] == 4                  # both asked before either is named (merged aside: _ask_meetings)
    batches.clear()
    def one_by_one(git, path, *, other_trees, alone, **sides):  # noqa: ANN001, ANN202
        return [meets_conflict(git, path, other_tree=tree, merges=(alone, None), **sides) for tree in other_trees]

    monkeypatch.setattr("carrytool.pipeline.compose_conflicts.meets_conflict_many", one_by_one)
    monkeypatch.setattr("carrytool.pipeline.compose.Composer._ask_meetings", lambda self, guessed: None)
    again_code, one_by_one = cli.json(*args)
    assert set(batches) == {1}
    assert (code, together["entries"]) == (again_code, one_by_one["entries"])
    assert by_id(together)["pr/2"]["conflicts"] == [{"file": "n.py", "with": ["pr/1"], "upstream": True}]


def _read_ahead(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The heads whose patches each read-ahead (Git.prefetch_patches) asks for, from now on."""
    ahead: list[list[str]] = []
    real = git_module.Git.prefetch_patches

    def spy(self, pairs):  # noqa: ANN001, ANN202
        ahead.append([head for _base, head in pairs])
        return real(self, pairs)

    monkeypatch.setattr(git_module.Git, "prefetch_patches", spy)
    return ahead


def test_patches_are_read_ahead_only_for_entries_that_may_apply(cli: Cli, small: Small,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The landing checks' patches are read while composing, once the merges onto upstream are known: not
    for an entry that conflicts with upstream alone under `skip`. An entry that does not conflict there
    but does in the chain, or one left out that applies after all, is read by the landing itself: the
    report is the one of reading none ahead."""
    _blame_repo(small)
    small.pr(6, nine(v1="'upstream'", v9="'six'"), parent=small.up.rev("main~1"))   # upstream's v1 too: merges
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"},
                    {"pr": 6}])
    ahead = _read_ahead(monkeypatch)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, read_ahead = cli.json(*args)
    heads = {n: small.up.rev(f"refs/pull/{n}/head") for n in (1, 2, 3, 5, 6)}
    assert ahead == [[heads[5], heads[1], heads[6]]]
    monkeypatch.setattr(git_module.Git, "prefetch_patches", lambda self, pairs: None)
    again_code, none_ahead = cli.json(*args)
    assert (code, read_ahead) == (again_code, none_ahead)
    assert by_id(read_ahead)["pr/6"]["status"] == "applied"
    landing = by_id(read_ahead)["pr/6"]["landing"]
    assert landing["hunks"] == landing["landed"] == 2


def test_an_entry_left_out_of_the_read_ahead_that_applies_is_still_checked(cli: Cli, small: Small,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/3 conflicts with upstream alone, so its patch is not read ahead; but pr/8 puts v1 back to its
    base value first, so pr/3 applies in the chain: the landing reads its patch itself and checks it.
    (Merged aside on the guess that it conflicts, pr/3 merges cleanly: everything is composed again, and
    the read-ahead asked again, for the same patches.)"""
    _blame_repo(small)
    small.pr(8, nine(), parent="main")                           # v1 back to its base value
    small.manifest([{"pr": 8}, {"pr": 3, "on_conflict": "skip"}])
    ahead = _read_ahead(monkeypatch)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert ahead == [[small.up.rev("refs/pull/8/head")]] * 2
    e = by_id(report)
    assert e["pr/3"]["status"] == "applied"
    assert e["pr/3"]["landing"]["hunks"] == e["pr/3"]["landing"]["landed"] == 1
    # and the check caught what pr/3 did to pr/8's line: the run fails (exit 1), read ahead or not
    assert code == 1 and [c["by"] for c in e["pr/8"]["landing"]["clobbered"]] == ["pr/3"]


def test_under_fail_the_next_step_for_an_upstream_conflict_is_a_rebase(cli: Cli, small: Small) -> None:
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 3}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 3
    assert "conflict: pr/3 in n.py with upstream main alone" in result.stdout
    assert "into a union" not in result.stdout and "rebase pr/3" in result.stdout


def test_explain_agrees_with_sync_on_blame(cli: Cli, small: Small) -> None:
    _blame_repo(small)
    small.manifest([{"pr": 5}, {"pr": 1}, {"pr": 3, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    _, synced = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, ex = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/2", "pr/3")
    assert code == 0, ex
    assert [e.get("conflicts") for e in ex["entries"]] == [e.get("conflicts") for e in synced["entries"]]
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in ex["overlaps"] if o["kind"] == "conflict"}
    assert conflicts == {("pr/1", "pr/2"): ["n.py"]}
    assert ex["plan"]["upstream_conflicts"] == {"pr/3": ["n.py"], "pr/2": ["n.py"]}
    stories = {s["id"]: s for s in ex["stories"]}
    assert stories["pr/3"]["entry"]["conflicts"] == [{"file": "n.py", "with": [], "upstream": True}]
    assert stories["pr/3"]["summary"][0] == "pr/3: conflict: conflicts in n.py (with upstream alone)"
    assert stories["pr/2"]["summary"][0] == "pr/2: conflict: conflicts in n.py (with upstream and pr/1)"


def test_union_suggestions_do_not_chain_through_an_upstream_conflict(cli: Cli, small: Small) -> None:
    """pr/2 conflicts with upstream by itself (n.py), with pr/1 in a.py and with pr/4 in b.py: it needs a
    rebase; pr/1 and pr/4 do not conflict, so no union of the three is suggested."""
    _blame_repo(small)
    base = small.up.rev("refs/pull/5/head^")
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}, parent=base)
    small.pr(4, {"b.py": "x = 11\ny = 2\nz = 3\n"}, parent=base)
    small.pr(2, {**nine(v1="'two'"), "a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n",
                 "b.py": "x = 12\ny = 2\nz = 3\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 4}, {"pr": 2, "on_conflict": "skip"}])
    code, ex = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, ex
    assert ex["plan"]["upstream_conflicts"] == {"pr/2": ["n.py"]}
    assert [s for s in ex["suggestions"] if s["kind"] == "union"] == []


# -- 2. a PR ref that is not a commit --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["tree", "blob", "tag-of-tree"])
def test_a_pr_ref_that_is_not_a_commit_is_bad_input_naming_the_entry(cli: Cli, small: Small, kind: str) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    head = small.pr(7, {"a.py": "changed\n"})
    tree = small.up.rev(f"{head}^{{tree}}")
    target = {"tree": tree, "blob": small.up.rev(f"{head}:a.py"),
              "tag-of-tree": small.up.git("mktag", input=(f"object {tree}\ntype tree\ntag t\ntagger T <t@x> "
                                                           "1700000000 +0000\n\nt\n").encode())}[kind]
    small.up.git("update-ref", "refs/pull/7/head", target)
    small.manifest([{"pr": 1}, {"pr": 7}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2, result.output
    assert "pr/7" in result.stderr and "not a commit" in result.stderr and "Traceback" not in result.output
    assert small.branch() is None
    result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "pr/7" in result.stderr


def test_an_annotated_tag_of_a_commit_is_its_commit(cli: Cli, small: Small) -> None:
    head = small.pr(7, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    tag = small.up.git("mktag", input=(f"object {head}\ntype commit\ntag t\ntagger T <t@x> "
                                       "1700000000 +0000\n\nt\n").encode())
    small.up.git("update-ref", "refs/pull/7/head", tag)
    small.manifest([{"pr": 7}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    assert by_id(report)["pr/7"]["status"] == "applied" and by_id(report)["pr/7"]["head"] == head


def test_a_pinned_head_wins_over_a_pr_ref_that_is_not_a_commit(cli: Cli, small: Small) -> None:
    head = small.pr(7, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.up.git("update-ref", "refs/pull/7/head", small.up.rev(f"{head}^{{tree}}"))
    small.work.git("fetch", "-q", str(small.up.path), f"{head}:refs/heads/keep")
    small.manifest([{"pr": 7, "head": head}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    assert by_id(report)["pr/7"]["head"] == head


# -- 6. a conflict on a submodule pointer ------------------------------------------------------------

GITS = ["system"] + (["2.47"] if NEW_GIT else [])


def _git_env(which: str) -> dict[str, str] | None:
    return None if which == "system" else {"PATH": f"{NEW_GIT}:{os.environ['PATH']}"}


def _submodule_repo(small: Small) -> None:
    sub = {"modes": {"sub": "160000"}}
    base = small.up.commit({"sub": "1" * 40}, "add a submodule", parent="main", ref="refs/heads/main", **sub)
    small.up.commit({"sub": "2" * 40}, "upstream bumps it", parent=base, ref="refs/heads/main", **sub)
    small.up.commit({"sub": "3" * 40}, "pr 1", parent=base, ref="refs/pull/1/head", **sub)
    small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n"}, parent=base)


@pytest.mark.parametrize("git", GITS)
def test_a_submodule_conflict_is_a_conflict_like_any_other(cli: Cli, small: Small, git: str, tmp_path: Path,
                                                           report_schema: dict) -> None:
    _submodule_repo(small)
    env = _git_env(git)
    small.manifest([{"pr": 1}, {"pr": 2}])
    out = tmp_path / "report.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", out, env=env)
    assert result.exit_code == 3, result.output
    assert "conflict: pr/1 in sub with upstream main alone" in result.stdout
    jsonschema.validate(json.loads(out.read_text()), report_schema)
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, env=env)
    assert code == 0, report
    assert by_id(report)["pr/1"]["conflicts"] == [{"file": "sub", "with": [], "upstream": True}]
    assert by_id(report)["pr/2"]["status"] == "applied"
    code, ex = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1", env=env)
    assert code == 0, ex
    assert ex["plan"]["upstream_conflicts"] == {"pr/1": ["sub"]}


@pytest.mark.parametrize("git", GITS)
def test_a_submodule_conflict_between_entries(cli: Cli, small: Small, git: str) -> None:
    sub = {"modes": {"sub": "160000"}}
    base = small.up.commit({"sub": "1" * 40}, "add a submodule", parent="main", ref="refs/heads/main", **sub)
    small.up.commit({"sub": "2" * 40}, "pr 1", parent=base, ref="refs/pull/1/head", **sub)
    small.up.commit({"sub": "3" * 40}, "pr 3", parent=base, ref="refs/pull/3/head", **sub)
    small.manifest([{"pr": 1}, {"pr": 3, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, env=_git_env(git))
    assert code == 0, report
    assert by_id(report)["pr/3"]["conflicts"] == [{"file": "sub", "with": ["pr/1"]}]
    code, ex = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, env=_git_env(git))
    assert code == 0, ex
    assert [o["kind"] for o in ex["overlaps"]] == ["conflict"]


# -- 3. push: first with the lease, then the local branch and the lock ---------------------------------

B_TEN = {"b.py": "x = 10\ny = 2\nz = 3\n"}
A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}


def _pushed_fork(cli: Cli, small: Small, tmp_path: Path) -> tuple[Repo, dict]:
    fork = init_repo(tmp_path / "fork", bare=True)
    small.pr(1, B_TEN)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": "../fork"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push")
    assert code == 0 and report["result"]["pushed"] is True, report
    return fork, report


def test_a_push_over_commits_pushed_by_hand_names_and_keeps_them(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-75 and helper-76: `sync --push` force-pushed over a hotfix pushed to the fork by hand, without
    a word, from the documented CI job (a fresh clone: no local branch to compare) as from a kept one: the
    fork's branch as fetched is checked too, and its old tip kept here, before the push."""
    fork, first = _pushed_fork(cli, small, tmp_path)
    hotfix = fork.commit({"x": "y"}, "HOTFIX pushed by hand", parent="dev", ref="refs/heads/dev")
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    fresh = init_repo(tmp_path / "ci.git", bare=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", fresh.path, "--push")
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert code == 0 and report["result"]["pushed"] is True and report["result"]["previous"] is None
    assert (warning["remote"], warning["previous"], warning["commits"], warning["carried"]) == (True, hotfix, [hotfix], [])
    assert warning["message"].startswith("the fork's dev has 1 commit that sync did not make")
    assert warning["message"].endswith(f"as refs/carrytool/dev/replaced/{hotfix} here and on the fork")
    assert fresh.rev(f"refs/carrytool/dev/replaced/{hotfix}") == hotfix and fork.rev("dev") != hotfix
    # helper-79: the CI runner's clone is thrown away: the fork keeps the old tip too, in the same push
    assert fork.rev(f"refs/carrytool/dev/replaced/{hotfix}") == hotfix
    # helper-82: `previous` is the local branch's, null in a fresh clone: the fork's is beside it, and said
    assert report["result"]["fork_previous"] == hotfix
    night = fork.rev("dev")
    small.up.commit({"c.txt": "more again\n"}, "upstream moves again", parent="main", ref="refs/heads/main")
    text = cli("sync", "-m", small.manifest_path, "--repo", init_repo(tmp_path / "ci2.git", bare=True).path, "--push")
    assert text.exit_code == 0 and f"ok: dev (new) -> {fork.rev('dev')[:12]} (pushed; the fork's dev was " \
        f"{night[:12]})" in text.stdout, text.stdout
    # h258 (pola-rs/polars): a night where nothing moved, in a fresh clone, said "ok: dev (new) -> SHA" as if
    # it had published something: the fork already had it, and nothing was pushed
    text = cli("sync", "-m", small.manifest_path, "--repo", init_repo(tmp_path / "ci3.git", bare=True).path, "--push")
    assert text.exit_code == 0 and f"ok: dev (new) -> {fork.rev('dev')[:12]} (the fork's dev was already at it: " \
        "nothing pushed)" in text.stdout, text.stdout


def test_a_failed_push_run_says_it_replaced_nothing(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-82: a red night (an assert fails: nothing moves) said it kept the fork's old tip under
    refs/carrytool/.../replaced/, a ref it never wrote. It says this run replaced nothing; and the text
    says where the fork's branch was left, and that the local one was not created (a fresh clone has none: h227,
    "left at (absent)")."""
    fork, _ = _pushed_fork(cli, small, tmp_path)
    hotfix = fork.commit({"x": "y"}, "HOTFIX pushed by hand", parent="dev", ref="refs/heads/dev")
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": "../fork"},
                   asserts=[{"name": "never", "file": "b.py", "contains": "no such text"}])
    fresh = init_repo(tmp_path / "ci.git", bare=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", fresh.path, "--push")
    assert code == 1 and report["result"]["pushed"] is False and report["result"]["fork_previous"] == hotfix
    [warning] = [w for w in report["warnings"] if w["kind"] == "replaced-commits"]
    assert warning["message"].endswith(f"This run did not replace the fork's dev (nothing moved); a run that "
                                       f"replaces it keeps its old tip {hotfix[:12]} as refs/carrytool/dev/"
                                       f"replaced/{hotfix} here and on the fork"), warning["message"]
    assert fresh.git("for-each-ref", "refs/carrytool/dev/replaced") == "" and fork.rev("dev") == hotfix
    text = cli("sync", "-m", small.manifest_path, "--repo", init_repo(tmp_path / "ci2.git", bare=True).path, "--push")
    assert text.exit_code == 1
    assert f"FAILED (verification failed, exit 1); dev not created (it does not exist here yet), nothing pushed; " \
           f"the fork's dev left at {hotfix[:12]}" in text.stdout, text.stdout


def test_locked_fetches_a_carried_commit_from_the_fork_as_sync_does(cli: Cli, small: Small, tmp_path: Path) -> None:
    """helper-76: a `commit:` carry that only the fork has: plain sync fetches it from fork.url, but
    `sync --locked` and `verify --rebuild` in a fresh clone asked upstream alone, and failed (exit 2) with
    "run without --offline", which they were. They ask the fork too; the hint says what was asked."""
    fork = init_repo(tmp_path / "fork", bare=True)
    small.pr(1, B_TEN)
    fork.git("fetch", "-q", str(small.up.path), "main:refs/heads/upstream")
    fix = fork.commit({"fix.txt": "fork-only\n"}, "fork fix", parent="upstream", ref="refs/heads/carries")
    small.manifest([{"pr": 1}, {"carry": "fix", "commit": fix}], fork={"branch": "dev", "url": "../fork"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    for command in (["sync", "--locked", "--dry-run"], ["verify", "--rebuild", "--rev", "refs/heads/dev"]):
        fresh = init_repo(tmp_path / f"fresh-{command[0]}.git", bare=True)
        if command[0] == "verify":       # CI's clone has the published branch (here: fetched from the sync's)
            fresh.git("fetch", "-q", str(small.work.path), "dev:dev")
        result = cli(*command, "-m", small.manifest_path, "--repo", fresh.path)
        assert result.exit_code == 0, (command, result.output)


def test_a_fork_that_refuses_the_kept_tip_is_not_pushed_over(cli: Cli, small: Small, tmp_path: Path) -> None:
    """The kept tip goes in the same atomic push as the branch: a fork that refuses refs/carrytool/ (a hook)
    refuses both, and the hand-pushed commit stays on its branch (exit 4, nothing moved)."""
    fork, first = _pushed_fork(cli, small, tmp_path)
    hotfix = fork.commit({"x": "y"}, "HOTFIX pushed by hand", parent="dev", ref="refs/heads/dev")
    hook = fork.path / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do case $ref in refs/carrytool/*) exit 1;; esac; done\n")
    hook.chmod(0o755)
    small.up.commit({"c.txt": "more\n"}, "upstream moves", parent="main", ref="refs/heads/main")
    fresh = init_repo(tmp_path / "ci.git", bare=True)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", fresh.path, "--push", env={"CARRYTOOL_RETRY_DELAY": "0"})
    assert code == 4 and report["result"]["pushed"] is False and fork.rev("dev") == hotfix


def test_locked_push_republishes_the_lock_over_a_hand_pushed_branch(cli: Cli, small: Small, tmp_path: Path) -> None:
    fork, first = _pushed_fork(cli, small, tmp_path)
    by_hand = fork.commit({"x": "y"}, "pushed by hand", parent="dev", ref="refs/heads/dev")
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked", "--push")
    assert code == 0, report
    assert report["result"]["pushed"] is True and report["result"]["sha"] == first["result"]["sha"]
    assert fork.ref("refs/heads/dev") == first["result"]["sha"] != by_hand


def test_a_push_of_a_branch_already_in_place_says_pushed(cli: Cli, small: Small, tmp_path: Path) -> None:
    """The text agrees with the report: the local branch was already there, the fork got it (pushed)."""
    fork, first = _pushed_fork(cli, small, tmp_path)
    by_hand = fork.commit({"x": "y"}, "pushed by hand", parent="dev", ref="refs/heads/dev")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked", "--push")
    assert result.exit_code == 0, result.output
    sha = first["result"]["sha"]
    assert fork.ref("refs/heads/dev") == sha != by_hand
    assert f"ok: dev already at {sha[:12]}, pushed to the fork" in result.stdout


def test_a_rejected_push_moves_nothing_local_and_says_so(cli: Cli, small: Small, tmp_path: Path) -> None:
    fork, first = _pushed_fork(cli, small, tmp_path)
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    lock_before = lock.read_text()
    other = fork.commit({"x": "y"}, "someone else", parent="dev", ref="refs/heads/dev")
    small.manifest([{"pr": 1}], identity={"name": "changed", "email": "c@x"}, fork={"branch": "dev", "url": "../fork"})
    out = tmp_path / "report.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push", "--offline",
                 "--report", out)
    assert result.exit_code == 4 and "moved since it was fetched" in result.stderr
    previous = first["result"]["sha"]
    assert fork.ref("refs/heads/dev") == other
    assert small.branch() == previous and lock.read_text() == lock_before
    report = json.loads(out.read_text())
    assert report["result"]["updated"] is False and report["result"]["pushed"] is False
    assert f"dev left at {previous[:12]}, nothing pushed" in result.stdout


def test_a_push_after_a_repack_dropped_objects_the_store_had_still_sends_them(
        cli: Cli, small: Small, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dry run leaves the composed objects in the store, named by nothing; the next sync finds them
    there (so does not pack them again) and keeps its own copies in the quarantine. A `git repack -a -d`
    (or `gc --prune=now`) between that and the push drops them from the store: the push reads the
    quarantine too, and sends them (an adversarial review: a push that read the store alone failed,
    "bad object", and was reported as a moved branch)."""
    from carrytool.pipeline import sync as syncmod

    fork = init_repo(tmp_path / "fork", bare=True)
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.manifest([{"pr": 1}, {"pr": 2}], fork={"branch": "dev", "url": "../fork"})
    code, dry = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, dry
    real_push = syncmod.push

    def push_after_repack(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=small.work.path, check=True)
        subprocess.run(["git", "prune", "--expire=now"], cwd=small.work.path, check=True)
        assert subprocess.run(["git", "cat-file", "-e", dry["result"]["sha"]], cwd=small.work.path).returncode
        return real_push(*args, **kwargs)

    monkeypatch.setattr(syncmod, "push", push_after_repack)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push", "--offline")
    assert code == 0, report
    assert fork.ref("refs/heads/dev") == report["result"]["sha"] == dry["result"]["sha"]


@pytest.mark.parametrize("prune", [True, False])
def test_a_push_after_a_repack_dropped_the_parent_of_a_kept_commit_still_sends_it(
        cli: Cli, small: Small, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prune: bool) -> None:
    """The dry run's chain (entries 1, 2) stays in the store, named by nothing; the next sync composes it
    again (found in the store, not packed again) and a third entry on top (packed). A repack before the
    push drops the first two commits, not the third: what is checked again before the push is packed
    again exactly, not by a walk from the kept commit, which is still there (an adversarial review: the
    walk found nothing, and the push failed, "could not read")."""
    from carrytool.gitlayer.git import Git

    fork = init_repo(tmp_path / "fork", bare=True)
    small.pr(1, A_TWO)
    small.pr(2, B_TEN)
    small.pr(3, {"docs/c.txt": "c changed\n"})
    small.manifest([{"pr": 1}, {"pr": 2}], fork={"branch": "dev", "url": "../fork"})
    code, dry = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, dry
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], fork={"branch": "dev", "url": "../fork"})
    real_run, repacked = Git.run, []

    def run(self: Git, *args: str, **kwargs: object):  # noqa: ANN202
        if args[:1] == ("push",) and not repacked:
            repacked.append(True)
            subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=small.work.path, check=True)
            if prune:
                subprocess.run(["git", "prune", "--expire=now"], cwd=small.work.path, check=True)
            assert subprocess.run(["git", "cat-file", "-e", dry["result"]["sha"]], cwd=small.work.path).returncode
        return real_run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", run)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push",
                            env={"CARRYTOOL_RETRY_DELAY": "0"})
    assert repacked and code == 0, report
    assert fork.ref("refs/heads/dev") == report["result"]["sha"]
    subprocess.run(["git", "fsck", "--connectivity-only"], cwd=fork.path, check=True, capture_output=True)


def test_a_push_the_remote_refuses_is_not_taken_for_a_moved_branch(cli: Cli, small: Small, tmp_path: Path) -> None:
    """`[remote rejected]` (here: the fork has the branch checked out) says why in git's words; only a
    lease refusal or a branch that moved on is "moved since it was fetched"."""
    fork = init_repo(tmp_path / "fork")
    fork.commit({"x": "y"}, "the fork", ref="refs/heads/dev")
    fork.git("symbolic-ref", "HEAD", "refs/heads/dev")
    stderr = _push_refused_by_the_remote(cli, small)
    assert "remote rejected" in stderr
    assert small.branch() is None


def test_what_a_remote_hook_prints_is_not_taken_for_a_moved_branch(cli: Cli, small: Small, tmp_path: Path) -> None:
    """Only git's own status line says the lease refused the push: a hook that declines it with words
    like "fetch first" is a refusal of the remote's (an adversarial review)."""
    fork = init_repo(tmp_path / "fork", bare=True)
    hook = fork.path / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'dev is frozen for the release: fetch first the notes, stale info' >&2\nexit 1\n")
    hook.chmod(0o755)
    assert "pre-receive hook declined" in _push_refused_by_the_remote(cli, small)


def _push_refused_by_the_remote(cli: Cli, small: Small) -> str:
    """Sync one entry and push it to ../fork, which refuses it: exit 4, reported as a push that failed,
    not as a moved branch; carrytool's stderr."""
    small.pr(1, B_TEN)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": "../fork"})
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push",
                 env={"CARRYTOOL_RETRY_DELAY": "0"})
    assert result.exit_code == 4, result.output
    assert "moved since it was fetched" not in result.stderr
    assert "cannot push to" in result.stderr
    return result.stderr


# -- 5. URLs and refs ------------------------------------------------------------------------------------

def test_a_branch_that_cannot_be_written_is_reported_with_its_cause(cli: Cli, small: Small) -> None:
    """refs/heads/dev/x exists, so refs/heads/dev cannot: not "changed while composing"."""
    small.pr(1, B_TEN)
    small.work.git("fetch", "-q", str(small.up.path), "main:refs/heads/dev/x")
    small.manifest([{"pr": 1}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 4, result.output
    assert "changed while" not in result.stderr and "refs/heads/dev/x" in result.stderr
    assert "cannot" in result.stderr and small.branch() is None


def _fake_ssh(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An ssh that logs the host it was asked for and runs the remote command locally."""
    log = tmp_path / "ssh.log"
    fake = tmp_path / "fake-ssh"
    fake.write_text("#!/bin/sh\n"
                    f'for arg; do last="$arg"; done\necho "$@" >> {log}\n'
                    'exec sh -c "$last"\n')
    fake.chmod(0o755)
    return {"GIT_SSH_COMMAND": str(fake)}, log


def test_an_scp_like_url_without_a_user_goes_to_ssh(cli: Cli, small: Small, tmp_path: Path) -> None:
    env, log = _fake_ssh(tmp_path)
    small.pr(1, B_TEN)
    small.manifest([{"pr": 1}], upstream={"url": f"example.com:{small.up.path}", "branch": "main"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, env=env)
    assert code == 0, report
    assert by_id(report)["pr/1"]["status"] == "applied"
    assert "example.com git-upload-pack" in log.read_text()


def test_local_paths_with_a_colon_after_a_slash_stay_local(cli: Cli, small: Small, tmp_path: Path) -> None:
    env, log = _fake_ssh(tmp_path)
    small.up.path.rename(tmp_path / "up:stream")
    small.up.path = tmp_path / "up:stream"
    small.pr(1, B_TEN)
    small.manifest([{"pr": 1}], upstream={"url": "../up:stream", "branch": "main"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, env=env)
    assert code == 0, report
    small.manifest([{"pr": 1}], upstream={"url": str(tmp_path / "up:stream"), "branch": "main"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, env=env)
    assert code == 0, report
    assert not log.exists()


def test_url_locality_follows_gits_rule() -> None:
    from carrytool.gitlayer.urls import is_local

    remote = ["example.com:org/repo.git", "host:/abs/path", "git@github.com:o/r.git", "h:r", "ssh://h/r",
              "https://h/r.git", "file:///tmp/r"]
    local = ["../up", "./a:b", "/abs/pa:th", "dir/with:colon", "repo", "~/r", "a/b:c/d"]
    assert [u for u in remote if is_local(u)] == []
    assert [u for u in local if not is_local(u)] == []


# -- 14. --dry-run writes nothing, so a checked-out fork branch does not stop it -----------------------

def test_dry_run_runs_on_a_checked_out_fork_branch(cli: Cli, small: Small, tmp_path: Path) -> None:
    work = init_repo(tmp_path / "checkout")
    work.git("fetch", "-q", str(small.up.path), "main:dev")
    work.git("symbolic-ref", "HEAD", "refs/heads/dev")
    before = work.rev("refs/heads/dev")
    small.pr(1, B_TEN)
    small.manifest([{"pr": 1}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", work.path, "--dry-run")
    assert code == 0, report
    assert report["result"]["updated"] is False and work.rev("refs/heads/dev") == before
    assert not small.manifest_path.with_name("manifest.yaml.lock").exists()
    result = cli("sync", "-m", small.manifest_path, "--repo", work.path)
    assert result.exit_code == 4 and "checked out" in result.stderr


def test_a_pin_or_carried_commit_naming_a_tree_says_so(cli: Cli, small: Small) -> None:
    head = small.pr(1, B_TEN)
    tree = small.up.rev(f"{head}^{{tree}}")
    small.work.git("fetch", "-q", str(small.up.path), f"{head}:refs/heads/keep")
    small.manifest([{"pr": 1, "head": tree}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "pr/1: pinned head" in result.stderr and "is a tree, not a commit" in result.stderr
    small.manifest([{"carry": "fix", "commit": tree}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "carry/fix: commit" in result.stderr and "is a tree, not a commit" in result.stderr


def test_blame_is_the_same_on_the_fast_path_and_the_chained_merge(cli: Cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """60 PRs in reverse order; upstream then moved lines 7 and 9 of the files PRs 7 and 9 edit there."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 60, files=25)
    moved = {f"src/f{n:04d}.py": (up.show("main", f"src/f{n:04d}.py") + "\n")   # show() strips the newline
             .replace(f"line {n}\n", f"line {n} upstream\n") for n in (7, 9)}
    up.commit(moved, "upstream moves two lines", parent="main", ref="refs/heads/main")
    repo = init_repo(tmp_path / "work", bare=True)
    manifest = write_manifest(tmp_path / "m.yaml", {
        "version": 1, "upstream": {"url": str(up.path)}, "fork": {"branch": "x"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(60, 0, -1)]})
    _, fast = cli.json("sync", "-m", manifest, "--repo", repo.path, "--dry-run")
    monkeypatch.setattr(Composer, "fast_path", False)
    _, slow = cli.json("sync", "-m", manifest, "--repo", repo.path, "--dry-run")
    assert fast["result"]["sha"] == slow["result"]["sha"] and fast["entries"] == slow["entries"]
    e = by_id(fast)
    assert e["pr/7"]["conflicts"] == [{"file": "src/f0007.py", "with": ["pr/57"], "upstream": True}]
    assert e["pr/9"]["conflicts"] == [{"file": "src/f0009.py", "with": ["pr/59"], "upstream": True}]
    assert e["pr/32"]["conflicts"] == [{"file": "src/f0007.py", "with": ["pr/57"]}]


def test_an_upstream_conflict_that_two_earlier_entries_meet_only_together_names_both(cli: Cli, small: Small) -> None:
    """Repeated lines (found by a search): pr/1 alone and pr/4 alone leave pr/2's conflict regions as on
    upstream; both together change them, so both are named, besides upstream."""
    def lines(text: str) -> dict[str, str]:
        return {"r.txt": "".join(f"{word}\n" for word in text.split())}

    base = small.up.commit(lines("b a b c c c c a"), "base", parent="main", ref="refs/heads/main")
    small.up.commit(lines("z a b c c c c a"), "upstream", parent=base, ref="refs/heads/main")
    small.pr(1, lines("b a c c c c a"), parent=base)
    small.pr(4, lines("b a b c c c a"), parent=base)
    small.pr(2, lines("y b a b c y c c a"), parent=base)
    small.manifest([{"pr": 1}, {"pr": 4}, {"pr": 2, "on_conflict": "skip"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    assert by_id(report)["pr/1"]["status"] == by_id(report)["pr/4"]["status"] == "applied"
    assert by_id(report)["pr/2"]["conflicts"] == [{"file": "r.txt", "with": ["pr/1", "pr/4"], "upstream": True}]


def test_a_push_a_failed_assert_stops_is_reported_as_not_pushed(cli: Cli, small: Small, tmp_path: Path) -> None:
    """`--push` asked: the report's result says `pushed: false` when a failed assert stopped the run before
    the push (the key was missing then; docs/ci.md lists it among result's keys)."""
    fork, first = _pushed_fork(cli, small, tmp_path)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": "../fork"},
                   asserts=[{"name": "h", "file": "a.py", "defines": "h"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--push")
    assert code == 1 and report["result"]["pushed"] is False and report["result"]["updated"] is False
    assert fork.ref("refs/heads/dev") == first["result"]["sha"]
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and "pushed" not in report["result"]          # not asked: not said
