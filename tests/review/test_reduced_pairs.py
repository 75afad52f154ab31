"""Merges reduced to the files that decide them (pipeline.reduce) decide exactly as whole merges do.

Checked on both gits in CI: explain's overlap map (pair merges reduced to the pair's shared files) and
sync's conflict culprits (merges reduced to the conflicted file), with and without the reduction.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git, LaterMerges, Signature, paths_of
from carrytool.pipeline import blame, reduce
from carrytool.pipeline.compose import Composer
from carrytool.review.overlap_pairs import PairMerger
from tests.conftest import Cli, Small


def _body(name: str, edits: dict[int, str]) -> str:
    return "".join(f"{edits.get(i, f'{name} line {i}')}\n" for i in range(40))


def _corpus(small: Small) -> None:
    names = [f"pkg/m{i}.py" for i in range(4)]
    files = {n: _body(n, {}) for n in names} | {"pkg/moved.py": _body("moved", {})}
    base = small.up.commit(files, "files", parent="main", ref="refs/heads/main")
    upstream = {n: _body(n, {0: f"{n} upstream"}) for n in names} | {"pkg/moved.py": None,
                                                                     "pkg/renamed.py": _body("moved", {})}
    small.up.commit(upstream, "upstream edits every file and renames one", parent=base, ref="refs/heads/main")
    plan = {1: {"pkg/m0.py": 10, "pkg/m1.py": 10},
            2: {"pkg/m0.py": 10, "pkg/m2.py": 1},        # conflicts with pr/1 in m0 and with upstream in m2
            3: {"pkg/m1.py": 20, "pkg/m2.py": 5, "pkg/m3.py": 10},
            4: {"pkg/m2.py": 1, "pkg/m3.py": 10},        # upstream's conflict in m2, pr/3's in m3
            5: {"pkg/moved.py": 12, "pkg/m1.py": 30},    # upstream moved one of its files
            6: {"pkg/new.py": None, "pkg/m0.py": 30, "pkg/m3.py": 30},
            7: {"pkg/m1.py": 20, "pkg/m3.py": 36}}       # pr/3's line in m1, which pr/1 and pr/5 touch too
    for number, edits in plan.items():
        change = {n: (f"new in pr {number}\n" if line is None else
                      _body("moved" if n == "pkg/moved.py" else n, {line: f"pr {number} was here"}))
                  for n, line in edits.items()}
        small.up.commit(change, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    # heads that delete or rename keep those changes in their reduced merges, only their other edits go
    small.up.commit({"pkg/m3.py": None, "pkg/m0.py": _body("pkg/m0.py", {10: "pr 8 was here"}),
                     "pkg/m1.py": _body("pkg/m1.py", {35: "pr 8 was here"})},
                    "pr 8: deletes m3", parent=base, ref="refs/pull/8/head")
    small.up.commit({"pkg/m2.py": None, "pkg/m2_new.py": _body("pkg/m2.py", {1: "pr 9 was here"}),
                     "pkg/m1.py": _body("pkg/m1.py", {20: "pr 9 was here"}),
                     "pkg/m0.py": _body("pkg/m0.py", {30: "pr 9 was here"})},
                    "pr 9: renames m2", parent=base, ref="refs/pull/9/head")
    small.manifest([{"pr": n} for n in [*plan, 8, 9]], policy={"on_conflict": "skip"})


def _merging(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """{"pair": the pair whose merge explain is making now, as "second beside first"}: the commits it makes
    name no pair (PairMerger.alike_once), so spies on them learn it here."""
    now = {"pair": ""}
    real = PairMerger._on_shared_files

    def named(self, job, pair):  # noqa: ANN001, ANN202
        now["pair"] = f"{pair[1].id} beside {pair[0].id}"
        return real(self, job, pair)

    monkeypatch.setattr(PairMerger, "_on_shared_files", named)
    return now


def test_reduced_pair_merges_give_the_same_overlap_map(cli: Cli, small: Small,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    code, reduced = cli.json(*args)
    monkeypatch.setattr(PairMerger, "shared_files_only", False)
    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    whole_code, whole = cli.json(*args)
    assert code == whole_code
    assert reduced["overlaps"] == whole["overlaps"] and reduced["entries"] == whole["entries"]
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in reduced["overlaps"] if o["kind"] == "conflict"}
    assert conflicts[("pr/1", "pr/2")] == ["pkg/m0.py"] and conflicts[("pr/3", "pr/4")] == ["pkg/m3.py"]
    assert conflicts[("pr/1", "pr/8")] == ["pkg/m0.py"] and conflicts[("pr/3", "pr/9")] == ["pkg/m1.py"]
    assert conflicts[("pr/6", "pr/9")] == ["pkg/m0.py"] and ("pr/8", "pr/9") not in conflicts
    assert reduced["plan"]["upstream_conflicts"]["pr/9"] == ["pkg/m2_new.py"]
    statuses = {e["id"]: e["status"] for e in reduced["entries"]}
    assert statuses["pr/2"] == statuses["pr/4"] == "conflict" and statuses["pr/5"] == "applied"


def test_reduced_merges_name_the_same_culprits(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, reduced = cli.json(*args)
    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    whole_code, whole = cli.json(*args)
    assert code == whole_code and reduced == whole
    by_id = {e["id"]: e for e in reduced["entries"]}
    assert by_id["pr/4"]["conflicts"] and by_id["pr/2"]["conflicts"]
    assert by_id["pr/7"]["conflicts"] == [{"file": "pkg/m1.py", "with": ["pr/3"]}]


def test_heads_that_delete_or_rename_are_reduced_too(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/8 deletes a file and pr/9 renames one: their pair merges still keep only the shared files'
    edits (and the deletion, the rename), so a large diverged head does not merge every file per pair."""
    _corpus(small)
    seen: dict[str, list[str]] = {}
    real, now = reduce.reduced_head, _merging(monkeypatch)

    def spy(git, **kw):  # noqa: ANN001, ANN003, ANN202
        out = real(git, **kw)
        if out is not None:
            changes = git.diff_trees([(kw["base"], out)])[0]
            seen.setdefault(now["pair"], sorted(p for c in changes for p in c.paths))
        return out

    monkeypatch.setattr("carrytool.review.overlap_pairs.reduced_head", spy)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert seen["pr/8 beside pr/3"] == ["pkg/m1.py", "pkg/m3.py"]          # m0's edit went back to base
    assert seen["pr/9 beside pr/6"] == ["pkg/m0.py", "pkg/m2.py", "pkg/m2_new.py"]   # m1's did


def test_which_paths_the_other_side_has_come_from_upstream_once_each(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the first entry alone on upstream still has a path as a file, for a path outside that
    entry's files, is upstream's answer (a clean merge keeps those paths as upstream has them), asked once
    per path: the same reduced heads, to the byte, and the same report as reading each pair's own tree.
    pr/5 modifies a file upstream renamed away: it is no file there, so that edit stays (beside pr/1 it is
    pr/5's only other file: its head is merged whole)."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    heads: dict[str, str | None] = {}
    asked: dict[str, list[str]] = {"upstream": [], "ours": []}
    real, real_file_at, now = reduce.reduced_head, reduce.file_at, _merging(monkeypatch)

    def spy(git, **kw):  # noqa: ANN001, ANN003, ANN202
        heads[now["pair"]] = out = real(git, **kw)
        return out

    def counted(key: str):  # noqa: ANN202
        def file_at(git, tree, path):  # noqa: ANN001, ANN202
            asked[key].append(path)
            return real_file_at(git, tree, path)
        return file_at

    monkeypatch.setattr("carrytool.review.overlap_pairs.reduced_head", spy)
    monkeypatch.setattr("carrytool.review.overlap_pairs.file_at", counted("upstream"))    # _upstream_file's
    monkeypatch.setattr(reduce, "file_at", counted("ours"))                         # each pair's own tree
    code, from_upstream = cli.json(*args)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # every pair decided again
    once, first_heads = list(asked["upstream"]), dict(heads)
    asked["ours"].clear()
    heads.clear()
    monkeypatch.setattr(PairMerger, "files_from_upstream", False)
    own_code, own = cli.json(*args)
    assert (code, from_upstream) == (own_code, own)
    assert first_heads == heads and sum(1 for h in heads.values() if h) >= 5
    assert once and len(once) == len(set(once)) and len(asked["ours"]) > len(once)
    assert "pkg/moved.py" in once and heads["pr/5 beside pr/1"] is None     # nothing of it goes back


def test_a_first_pr_merged_from_several_bases_is_asked_of_its_own_tree(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1 merged both sides of upstream's last merge: git merges it alone from a virtual base, whose p.py
    its own diff (from the base `git merge-base` names, which has none) does not show, and drops p.py,
    which upstream has. Whether ours has p.py is read from ours itself then: pr/2's edit of p.py stays in
    its reduced head and conflicts, as in the whole merge (an adversarial review's case)."""
    up = small.up
    root = up.commit({"s.py": _body("s", {}), "x1.py": _body("x1", {}), "x2.py": _body("x2", {})}, "O", parent="main")
    keeps = up.commit({"x1.py": _body("x1", {3: "bk"}), "p.py": _body("p", {})}, "adds p", parent=root)
    drops = up.commit({"x2.py": _body("x2", {3: "bd"})}, "no p", parent=root)      # newer: merge-base names it
    up.commit({"x2.py": _body("x2", {3: "bd"})}, "upstream merges both (has p)", parent=keeps, parents=[keeps, drops],
              ref="refs/heads/main")
    both = up.commit({"x1.py": _body("x1", {3: "bk"}), "p.py": None}, "pr 1 merges both, drops p", parent=drops,
                     parents=[drops, keeps])
    up.commit({"s.py": _body("s", {10: "pr 1"})}, "pr 1", parent=both, ref="refs/pull/1/head")
    up.commit({"s.py": _body("s", {20: "pr 2"}), "p.py": _body("p", {5: "pr 2"})}, "pr 2", parent=keeps,
              ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, read = cli.json(*args)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    monkeypatch.setattr(PairMerger, "shared_files_only", False)
    whole_code, whole = cli.json(*args)
    assert (code, read["overlaps"]) == (whole_code, whole["overlaps"])
    assert [(o["entries"], o.get("conflict_files")) for o in read["overlaps"]] == [(["pr/1", "pr/2"], ["p.py"])]



def _reduced_and_whole(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    """Explain's JSON with its pair merges reduced, and with every pair merged whole (cache dropped)."""
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    code, reduced = cli.json(*args)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache", ignore_errors=True)
    monkeypatch.setattr(PairMerger, "shared_files_only", False)
    whole_code, whole = cli.json(*args)
    assert code == whole_code
    return reduced, whole


def test_an_edit_upstream_moved_is_kept_in_the_pair_merge(cli: Cli, small: Small,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream renamed x.py to p.py after pr/1's base: pr/1's edit of x.py lands in p.py on upstream, a
    path outside its own files, where pr/2 edits the same line. The pair merge keeps p.py (ours is not
    upstream's there), so it conflicts as the whole merge does, and as sync says (an adversarial review
    found the reduced merge dropping p.py and calling the pair a mere same-file overlap)."""
    up = small.up
    old = up.commit({"x.py": _body("x", {}), "s.py": _body("s", {})}, "x and s", parent="main")
    up.commit({"x.py": None, "p.py": _body("x", {})}, "upstream renames x to p", parent=old, ref="refs/heads/main")
    up.commit({"x.py": _body("x", {5: "pr 1"}), "s.py": _body("s", {1: "pr 1"})}, "pr 1", parent=old,
              ref="refs/pull/1/head")
    up.commit({"p.py": _body("x", {5: "pr 2"}), "s.py": _body("s", {30: "pr 2"})}, "pr 2", parent="main",
              ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    reduced, whole = _reduced_and_whole(cli, small, monkeypatch)
    assert reduced["overlaps"] == whole["overlaps"]
    assert [(o["entries"], o["kind"], o["files"], o.get("conflict_files")) for o in reduced["overlaps"]] == \
        [(["pr/1", "pr/2"], "conflict", ["s.py", "p.py"], ["p.py"])]      # files: where both land too
    second = next(e for e in reduced["entries"] if e["id"] == "pr/2")
    assert second["status"] == "conflict" and second["conflicts"] == [{"file": "p.py", "with": ["pr/1"]}]


def test_a_line_a_criss_cross_merge_dropped_is_kept_in_the_pair_merge(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1's head and upstream have two merge bases; pr/1 merged them dropping one side's line of t.py.
    Merged alone onto upstream (from git's virtual base) it drops that line again: it changes t.py,
    which its diff from the base `git merge-base` names does not list. pr/2 edits that line: the pair
    merge keeps t.py and conflicts there, as the whole merge does (an adversarial review's case)."""
    up = small.up
    root = up.commit({"t.py": _body("t", {}), "s.py": _body("s", {})}, "t and s", parent="main")
    one = up.commit({"t.py": _body("t", {1: "one"})}, "one", parent=root)
    two = up.commit({"t.py": _body("t", {30: "two"})}, "two", parent=root)
    both = up.commit({"t.py": _body("t", {1: "one", 30: "two"})}, "upstream merges both", parent=one,
                     parents=[one, two], ref="refs/heads/main")
    dropped = up.commit({"t.py": _body("t", {30: "two"})}, "pr 1 merges both, drops one", parent=two,
                        parents=[two, one])
    up.commit({"s.py": _body("s", {5: "pr 1"})}, "pr 1", parent=dropped, ref="refs/pull/1/head")
    up.commit({"t.py": _body("t", {1: "pr 2", 30: "two"}), "s.py": _body("s", {25: "pr 2"})}, "pr 2",
              parent=both, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    reduced, whole = _reduced_and_whole(cli, small, monkeypatch)
    assert reduced["overlaps"] == whole["overlaps"]
    assert [(o["entries"], o["kind"], o.get("conflict_files")) for o in reduced["overlaps"]] == \
        [(["pr/1", "pr/2"], "conflict", ["t.py"])]

def _explain_pairs(git: Git) -> tuple[dict, Signature, list[tuple]]:
    """The corpus's heads, a signature, and every pair explain merges: (first, the first alone on
    upstream, its paths, second, the second's base, the second's changes from that base)."""
    upstream = git.rev_parse("refs/heads/main")
    assert upstream is not None
    heads = {n: git.rev_parse(f"refs/pull/{n}/head") for n in range(1, 10)}
    sig = Signature("t", "t@example.com", 1700000000)
    alone, changes = {}, {}
    for n, head in heads.items():
        result = git.merge_trees([(upstream, head)])[0]
        if result.clean:
            alone[n] = git.write_commit(result.tree, [upstream], sig, sig, f"pr {n} alone\n")
        base = git.merge_base(upstream, head)
        changes[n] = (base, git.diff_trees([(base, head)])[0])
    pairs = []
    for first, ours in alone.items():
        keep = set(paths_of(changes[first][1]))
        for second, (base, second_changes) in changes.items():
            if second != first and keep & set(paths_of(second_changes)):
                pairs.append((first, ours, keep, second, base, second_changes))
    return heads, sig, pairs


def test_a_reduced_merge_differs_from_the_whole_merge_only_on_the_paths_it_reset(
        small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pair of the corpus, merged as explain does (the second's head onto the first alone on
    upstream): the reduced merge's tree and conflicts equal the whole merge's on every path but those
    the reduction put back at their base version, whatever the head deletes or renames. The reduced tree
    is the same built from the head (its other files put back) as from the base (its changes made)."""
    _corpus(small)
    git = Git(small.up.path)
    try:
        heads, sig, pairs = _explain_pairs(git)
        reduced = from_base = 0
        for first, ours, keep, second, base, second_changes in pairs:
            kwargs = dict(head=heads[second], base=base, changes=second_changes, keep=keep,
                          ours_tree=git.tree_of(ours), sig=sig, what=f"pr {second}")
            head = reduce.reduced_head(git, **kwargs)
            if head is None:
                continue
            monkeypatch.setattr(reduce, "FROM_BASE", False)
            assert git.tree_of(reduce.reduced_head(git, **kwargs)) == git.tree_of(head), (first, second)
            monkeypatch.setattr(reduce, "FROM_BASE", True)
            rest = sum(c.status == "M" and c.path not in keep for c in second_changes)
            from_base += len(second_changes) - rest < rest
            reduced += 1
            reset = set(paths_of(git.diff_trees([(heads[second], head)])[0]))
            assert reset and not reset & keep
            assert reset <= {c.path for c in second_changes if c.status == "M"}   # adds, deletes, renames stay
            whole, part = git.merge_trees([(ours, heads[second]), (ours, head)])
            conflicted = set(part.conflicted_paths)
            assert set(whole.conflicted_paths) - reset == conflicted, (first, second)
            # a conflicted file's markers name the merged commits: its stages are compared instead
            differ = set(paths_of(git.diff_trees([(whole.tree, part.tree)], renames=False)[0]))
            assert differ <= reset | conflicted, (first, second)
            assert {s for s in whole.stages if s.path not in reset} == set(part.stages), (first, second)
        assert reduced >= 15 and from_base >= 3, (reduced, from_base)
    finally:
        git.close()


def _alone_uses(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """A spy on explain's merges of the shared files alone: pair ("second beside first") -> whether it was one."""
    used: dict[str, bool] = {}
    real, now = reduce.files_alone, _merging(monkeypatch)

    def spy(git, **kw):  # noqa: ANN001, ANN003, ANN202
        out = real(git, **kw)
        used[now["pair"]] = out is not None
        return out

    monkeypatch.setattr("carrytool.review.overlap_pairs.files_alone", spy)
    return used


def test_pairs_merged_on_their_shared_files_alone_decide_as_the_reduced_heads_do(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pair merges of the shared files' trees alone (a root commit of the base's versions, ours' and the
    head's on it) where the head only modifies files and adds paths: the same overlap map, to the byte,
    as the reduced heads onto the first alone on upstream, and as the whole merges. Heads that delete
    (pr/8) or rename (pr/9), or modify a file upstream moved away (pr/5), are merged as before."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    used = _alone_uses(monkeypatch)
    code, alone = cli.json(*args)
    assert sum(used.values()) >= 10 and not any(used[k] for k in used if k.startswith(("pr/8 ", "pr/9 ")))
    assert used["pr/5 beside pr/1"] is False and used["pr/3 beside pr/1"] and used["pr/6 beside pr/1"]   # pr/6 adds
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # every pair decided again
    monkeypatch.setattr(PairMerger, "shared_files_alone", False)
    reduced_code, reduced = cli.json(*args)
    assert (code, alone) == (reduced_code, reduced)
    monkeypatch.setattr(PairMerger, "shared_files_only", False)
    whole_code, whole = cli.json(*args)
    assert (code, alone["overlaps"]) == (whole_code, whole["overlaps"])


def test_a_head_adding_where_ours_has_a_file_is_merged_whole(cli: Cli, small: Small,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding a path ours has (add/add), or one under a path ours has as a file (file/directory), is a
    conflict the shared files' trees alone do not hold: such heads are merged as before, and the overlap
    map is the same with and without the merges of the shared files alone (pr/4 adds a new path: alone)."""
    base = small.up.commit({"pkg/a.py": _body("a", {})}, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"notes": "a file\n", "pkg/both.py": "upstream's\n"}, "upstream adds two paths",
                    parent=base, ref="refs/heads/main")
    heads = {1: {"pkg/a.py": _body("a", {5: "pr 1"})},
             2: {"pkg/a.py": _body("a", {30: "pr 2"}), "notes/x.md": "under a file\n"},
             3: {"pkg/a.py": _body("a", {15: "pr 3"}), "pkg/both.py": "pr 3's\n"},
             4: {"pkg/a.py": _body("a", {6: "pr 4"}), "pkg/new4.py": "new\n"}}
    for number, files in heads.items():
        small.up.commit(files, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in heads], policy={"on_conflict": "skip"})
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    used = _alone_uses(monkeypatch)
    code, alone = cli.json(*args)
    assert used == {"pr/2 beside pr/1": False, "pr/3 beside pr/1": False, "pr/4 beside pr/1": True,
                    "pr/2 beside pr/4": False, "pr/3 beside pr/4": False}
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    monkeypatch.setattr(PairMerger, "shared_files_alone", False)
    reduced_code, reduced = cli.json(*args)
    assert (code, alone) == (reduced_code, reduced)
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in alone["overlaps"] if o["kind"] == "conflict"}
    assert conflicts == {("pr/1", "pr/4"): ["pkg/a.py"]}
    assert sorted(alone["plan"]["upstream_conflicts"]) == ["pr/2", "pr/3"]


def test_a_merge_of_the_shared_files_alone_merges_as_the_reduced_head_does(small: Small) -> None:
    """Every pair of the corpus, merged as explain does (the second's head onto the first alone on
    upstream) and of its shared files alone where `files_alone` takes it: the same conflicted files with
    the same stages and conflict regions, and the same merged blob for every file it merges cleanly."""
    _corpus(small)
    git = Git(small.up.path)
    try:
        heads, sig, pairs = _explain_pairs(git)
        taken = conflicted = 0
        for first, ours, keep, second, base, second_changes in pairs:
            kw = dict(base=base, changes=second_changes, keep=keep, ours_tree=git.tree_of(ours), sig=sig,
                      what=f"pr {second}")
            cut = reduce.files_alone(git, **kw)
            if cut is None:
                continue
            taken += 1
            head = reduce.reduced_head(git, head=heads[second], **kw) or heads[second]
            whole, part = git.merge_trees([(ours, head), cut])
            assert whole.conflicted_paths == part.conflicted_paths, (first, second)
            assert set(whole.stages) == set(part.stages), (first, second)
            merged = [c.path for c in second_changes if c.status == "M" and c.path in keep]
            for path in merged:
                if path in part.conflicted_paths:
                    conflicted += 1
                    regions = blame.regions_in(git, whole, path, *_stage_oids(whole, path))
                    assert regions and regions == blame.regions_in(git, part, path, *_stage_oids(part, path))
                else:
                    assert git.blob_at(whole.tree, path) == git.blob_at(part.tree, path), (first, second, path)
        assert taken >= 10 and conflicted >= 2
    finally:
        git.close()


def _stage_oids(merge, path: str) -> tuple[str, str, str]:  # noqa: ANN001
    """(ours, base, theirs) blobs of PATH's conflict stages in MERGE."""
    stages = {s.stage: s.oid for s in merge.stages if s.path == path}
    return stages[2], stages[1], stages[3]


def test_shared_files_alone_only_where_ours_has_regular_files(small: Small) -> None:
    """A shared file the first entry made a symlink (ours has it as another type) is not cut down to the
    shared files' trees: that merge is left to git whole."""
    base = small.up.commit({"pkg/a.py": _body("a", {}), "pkg/b.py": _body("b", {})}, "base", parent="main",
                           ref="refs/heads/main")
    ours = small.up.commit({"pkg/a.py": "pkg/b.py"}, "a is a link", parent=base, modes={"pkg/a.py": "120000"})
    head = small.up.commit({"pkg/a.py": _body("a", {3: "edited"}), "pkg/new.py": "new\n"}, "edits a", parent=base)
    git = Git(small.up.path)
    try:
        changes = git.diff_trees([(base, head)])[0]
        sig = Signature("t", "t@example.com", 1700000000)
        kw = dict(base=base, changes=changes, keep={"pkg/a.py"}, sig=sig, what="edits a")
        assert reduce.files_alone(git, ours_tree=git.tree_of(ours), **kw) is None
        assert reduce.files_alone(git, ours_tree=git.tree_of(base), **kw) is not None     # a regular file there
    finally:
        git.close()


def _deleting(small: Small) -> dict[int, str]:
    """Upstream renamed pkg/old.py to pkg/moved.py and deleted pkg/dropped.py since the base; every PR edits
    pkg/a.py (pr/1 and pr/2 line 5: a conflict), and pr/2, pr/3 and pr/4 each delete one file: pr/2 one
    upstream left as the base had it (and pr/5, composed first, edits), pr/3 the one upstream renamed, pr/4 the
    one upstream deleted too."""
    files = {"pkg/a.py": _body("a", {}), "pkg/gone.py": _body("gone", {}), "pkg/old.py": _body("old", {}),
             "pkg/dropped.py": _body("dropped", {})}
    base = small.up.commit(files, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"pkg/old.py": None, "pkg/moved.py": _body("old", {39: "moved"}), "pkg/dropped.py": None,
                     "pkg/a.py": _body("a", {0: "upstream"})}, "upstream renames one file and deletes another",
                    parent=base, ref="refs/heads/main")
    heads = {1: {"pkg/a.py": _body("a", {5: "pr 1"})},
             2: {"pkg/a.py": _body("a", {5: "pr 2"}), "pkg/gone.py": None},
             3: {"pkg/a.py": _body("a", {15: "pr 3"}), "pkg/old.py": None},
             4: {"pkg/a.py": _body("a", {25: "pr 4"}), "pkg/dropped.py": None},
             5: {"pkg/a.py": _body("a", {35: "pr 5"}), "pkg/gone.py": _body("gone", {3: "pr 5"})}}
    small.manifest([{"pr": n} for n in (5, 1, 2, 3, 4)], policy={"on_conflict": "skip"})
    return {n: small.up.commit(files, f"pr {n}", parent=base, ref=f"refs/pull/{n}/head") for n, files in heads.items()}


def test_a_head_deleting_a_file_ours_has_unchanged_is_merged_on_its_shared_files_alone(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A head that deletes a file ours has as the head's base had it: its deletion merges clean whatever
    rename detection pairs it with, so the pair is merged on its shared files alone, and decides as the
    reduced head does. One that deletes a file upstream renamed (a rename/delete conflict) or deleted too
    (the same, should either side's rename detection pair it) is merged as before; so is one beside an
    entry that edits the file it deletes (a modify/delete conflict)."""
    heads = _deleting(small)
    git = Git(small.up.path)
    try:
        upstream = git.rev_parse("refs/heads/main")
        sig = Signature("t", "t@example.com", 1700000000)
        ours = git.write_commit(git.merge_trees([(upstream, heads[1])])[0].tree, [upstream], sig, sig, "pr 1 alone\n")
        for number, taken in ((2, True), (3, False), (4, False)):
            base = git.merge_base(upstream, heads[number])
            kw = dict(base=base, changes=git.diff_trees([(base, heads[number])])[0], keep={"pkg/a.py"},
                      ours_tree=git.tree_of(ours), sig=sig, what=f"pr {number}")
            cut = reduce.files_alone(git, **kw)
            assert (cut is not None) == taken, number
            whole = git.merge_trees([(ours, reduce.reduced_head(git, head=heads[number], **kw) or heads[number])])[0]
            if cut is not None:
                part = git.merge_trees([cut])[0]
                assert list(whole.conflicted_paths) == list(part.conflicted_paths) == ["pkg/a.py"]
                assert set(whole.stages) == set(part.stages)
                assert blame.regions_in(git, whole, "pkg/a.py", *_stage_oids(whole, "pkg/a.py")) == \
                    blame.regions_in(git, part, "pkg/a.py", *_stage_oids(part, "pkg/a.py"))
            elif number == 3:       # why not: the whole merge conflicts where the cut one holds nothing
                assert "pkg/moved.py" in whole.conflicted_paths
    finally:
        git.close()
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    used = _alone_uses(monkeypatch)
    code, alone = cli.json(*args)
    assert {k: v for k, v in used.items() if k.endswith(("beside pr/1", "pr/2 beside pr/5"))} == \
        {"pr/2 beside pr/1": True, "pr/3 beside pr/1": False, "pr/4 beside pr/1": False, "pr/2 beside pr/5": False}
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    monkeypatch.setattr(PairMerger, "shared_files_alone", False)
    reduced_code, reduced = cli.json(*args)
    assert (code, alone) == (reduced_code, reduced)
    assert [(o["entries"], o.get("conflict_files")) for o in alone["overlaps"] if o["kind"] == "conflict"] == \
        [(["pr/5", "pr/2"], ["pkg/gone.py"]), (["pr/1", "pr/2"], ["pkg/a.py"])]


def test_entries_that_meet_only_where_upstream_moved_a_file_are_a_pair(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream renamed x.py to p.py after pr/1's base; pr/1 edits x.py, pr/2 (on today's upstream) the same
    line of p.py. Their diffs share no path, yet pr/1's edit lands in p.py and sync names the conflict with
    pr/1. The overlap map pairs entries by where their changes land on upstream (their merges alone), so
    the pair is there, a conflict in p.py, and explain's union suggestion has it (it had neither)."""
    up = small.up
    old = up.commit({"x.py": _body("x", {})}, "x", parent="main")
    up.commit({"x.py": None, "p.py": _body("x", {})}, "upstream renames x to p", parent=old, ref="refs/heads/main")
    up.commit({"x.py": _body("x", {5: "pr 1"})}, "pr 1", parent=old, ref="refs/pull/1/head")
    up.commit({"p.py": _body("x", {5: "pr 2"})}, "pr 2", parent="main", ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    reduced, whole = _reduced_and_whole(cli, small, monkeypatch)
    assert reduced["overlaps"] == whole["overlaps"]
    assert [(o["entries"], o["kind"], o["files"], o.get("conflict_files")) for o in reduced["overlaps"]] == \
        [(["pr/1", "pr/2"], "conflict", ["p.py"], ["p.py"])]
    second = next(e for e in reduced["entries"] if e["id"] == "pr/2")
    assert second["status"] == "conflict" and second["conflicts"] == [{"file": "p.py", "with": ["pr/1"]}]
    assert any(s["kind"] == "union" and {"pr/1", "pr/2"} <= set(s["entries"]) for s in reduced["suggestions"])


def _renamed_upstream(small: Small) -> str:
    """Upstream renamed x.py to p.py (and has s.py); the commit before the rename."""
    old = small.up.commit({"x.py": _body("x", {}), "s.py": _body("s", {})}, "x and s", parent="main")
    small.up.commit({"x.py": None, "p.py": _body("x", {})}, "upstream renames x to p", parent=old,
                    ref="refs/heads/main")
    return old


def test_a_union_carrying_a_moved_edit_provides_the_pr_it_supersedes_for_the_old_path(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """carry/u, on today's upstream, carries pr/1's x.py edit in p.py and supersedes pr/1 for x.py (the
    path pr/1's own diff names). Their changes land together in p.py: the pair is provided by the union,
    and no union is suggested (an adversarial review: the pair read as a conflict to fold)."""
    old = _renamed_upstream(small)
    small.up.commit({"x.py": _body("x", {5: "pr 1"}), "s.py": _body("s", {3: "pr 1"})}, "pr 1", parent=old,
                    ref="refs/pull/1/head")
    union = small.up.commit({"p.py": _body("x", {5: "pr 1 and more"})}, "union", parent="main",
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "u", "commit": union, "supersedes": [{"pr": 1, "paths": ["x.py"]}]}],
                   policy={"on_conflict": "skip"})
    reduced, whole = _reduced_and_whole(cli, small, monkeypatch)
    assert reduced["overlaps"] == whole["overlaps"]
    assert [(o["entries"], o["files"], o.get("provided_by")) for o in reduced["overlaps"]] == \
        [(["pr/1", "carry/u"], ["p.py"], "carry/u")]
    assert not [s for s in reduced["suggestions"] if s["kind"] == "union"]


def test_an_entry_resolved_theirs_pairs_where_its_change_lands(cli: Cli, small: Small,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1 conflicts with upstream alone in s.py (resolved `theirs`) and its x.py edit lands in p.py,
    where pr/2 edits the same line: sync names pr/2's conflict with pr/1, and the overlap map has the pair
    (its merge alone, conflicted, still says where it lands; an adversarial review found no pair)."""
    old = small.up.commit({"x.py": _body("x", {}), "s.py": _body("s", {})}, "x", parent="main")
    small.up.commit({"x.py": None, "p.py": _body("x", {}), "s.py": _body("s", {3: "upstream"})},
                    "upstream renames x to p", parent=old, ref="refs/heads/main")
    small.up.commit({"x.py": _body("x", {5: "pr 1"}), "s.py": _body("s", {3: "pr 1"})}, "pr 1", parent=old,
                    ref="refs/pull/1/head")
    small.up.commit({"p.py": _body("x", {5: "pr 2"})}, "pr 2", parent="main", ref="refs/pull/2/head")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}, {"pr": 2}], policy={"on_conflict": "skip"})
    reduced, whole = _reduced_and_whole(cli, small, monkeypatch)
    assert reduced["overlaps"] == whole["overlaps"]
    assert [(o["entries"], o["kind"], o["files"]) for o in reduced["overlaps"]] == \
        [(["pr/1", "pr/2"], "conflict", ["p.py"])]
    second = next(e for e in reduced["entries"] if e["id"] == "pr/2")
    assert second["conflicts"] == [{"file": "p.py", "with": ["pr/1"]}]


@pytest.mark.parametrize("twist", ["plain", "dir-to-file", "rename-over-add"])
def test_a_reduced_tree_from_the_base_is_the_one_from_the_head(small: Small, monkeypatch: pytest.MonkeyPatch,
                                                               twist: str) -> None:
    """A head that modifies many files and keeps few of them (helper-96: 400-file PRs) is reduced from its
    base, its other changes made (adds, deletes, a rename, a mode change, a submodule): the same tree as its
    head with the modified files put back, whichever way it is built. Where an edit's path is another's
    folder, or two edits name one path, the head's way is taken."""
    files = {f"pkg/f{i}.py": _body(f"f{i}", {}) for i in range(8)} | {
        "gone.txt": "gone\n", "old/name.py": _body("moved", {}), "tool.sh": "echo\n", "dir/inside.txt": "in\n"}
    base = small.up.commit(files, "base", parent="main")
    change = {f"pkg/f{i}.py": _body(f"f{i}", {3: f"head {i}"}) for i in range(8)} | {
        "gone.txt": None, "old/name.py": None, "new/name.py": _body("moved", {}), "added.txt": "new\n",
        "tool.sh": "echo\n", "sub": "1" * 40}
    modes = {"tool.sh": "100755", "sub": "160000"}
    if twist == "dir-to-file":
        change |= {"dir/inside.txt": None, "dir": "a file where a folder was\n"}
    head = small.up.commit(change, "head", parent=base, modes=modes)
    git = Git(small.up.path)
    try:
        changes = git.diff_trees([(base, head)])[0]
        if twist == "rename-over-add":       # two changes naming one path: no order makes them right
            changes = changes + [c for c in changes if c.status == "R"]
        assert any(c.status == "R" for c in changes) and any(c.status == "D" for c in changes)
        keep = {"pkg/f0.py", "tool.sh"}         # tool.sh: its mode change is made from the base
        kwargs = dict(head=head, base=base, changes=changes, keep=keep, ours_tree=git.tree_of(base),
                      sig=Signature("t", "t@example.com", 1700000000), what="the head")
        rest = [c for c in changes if c.status == "M" and c.path not in keep]
        from_base = reduce._edits_from_base(changes, rest)
        assert (from_base is None) == (twist != "plain"), from_base
        built = git.tree_of(reduce.reduced_head(git, **kwargs))
        monkeypatch.setattr(reduce, "FROM_BASE", False)
        assert git.tree_of(reduce.reduced_head(git, **kwargs)) == built
        if twist == "plain":
            listing = git.run("ls-tree", "-r", built).stdout.decode().splitlines()
            shown = {line.split("\t")[1]: line.split("\t")[0] for line in listing}
            assert "gone.txt" not in shown and "old/name.py" not in shown and shown["sub"].startswith("160000 commit")
            assert shown["tool.sh"].startswith("100755") and shown["pkg/f0.py"] != shown["pkg/f1.py"]
            assert shown["pkg/f1.py"].split()[2] == next(c.old_oid for c in changes if c.path == "pkg/f1.py")
    finally:
        git.close()


def test_a_stack_beside_one_pr_makes_one_pair_merge(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/2 and pr/3 are one branch (pr/3 is pr/2 and one more commit, on files pr/1 does not touch), and pr/1
    edits a file of theirs: beside pr/1 both reduce to that file, alike, so the two pairs are one merge, asked
    of git once (a stack of seven 350-file polars PRs beside each of 15 others: 199 pair merges, 110 distinct).
    The report is the one of merging each pair: pr/5 reduces alike beside every PR, but conflicts with pr/4
    alone (pr/4's file upstream renamed keeps its reduced merges, onto each first, apart)."""
    base = small.up.commit({"pkg/m.py": _body("m", {}), "pkg/n.py": _body("n", {}), "pkg/o.py": _body("o", {}),
                            "pkg/moved.py": _body("moved", {})}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"pkg/m.py": _body("m", {0: "upstream"}), "pkg/moved.py": None,
                     "pkg/renamed.py": _body("moved", {})}, "upstream", parent=base, ref="refs/heads/main")
    small.up.commit({"pkg/m.py": _body("m", {10: "pr 1"})}, "pr 1", parent=base, ref="refs/pull/1/head")
    two = small.up.commit({"pkg/m.py": _body("m", {10: "pr 2"}), "pkg/n.py": _body("n", {3: "pr 2"})}, "pr 2",
                          parent=base, ref="refs/pull/2/head")
    small.up.commit({"pkg/o.py": _body("o", {7: "pr 3"})}, "pr 3 on pr 2", parent=two, ref="refs/pull/3/head")
    small.up.commit({"pkg/m.py": _body("m", {20: "pr 4"}), "pkg/moved.py": _body("moved", {9: "pr 4"})}, "pr 4",
                    parent=base, ref="refs/pull/4/head")
    small.up.commit({"pkg/m.py": _body("m", {20: "pr 5"})}, "pr 5", parent=base, ref="refs/pull/5/head")
    small.manifest([{"pr": n} for n in (1, 2, 3, 4, 5)], policy={"on_conflict": "skip"})
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    batches: list[int] = []          # the merges each batch of pair merges asks (one batch per run)
    real = LaterMerges.__call__

    def spy(self: LaterMerges):  # noqa: ANN202
        batches.append(len(self._pending) + sum(map(len, self._chunks)))
        return real(self)

    monkeypatch.setattr(LaterMerges, "__call__", spy)
    code, once = cli.json(*args)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # every pair decided again
    monkeypatch.setattr(PairMerger, "alike_once", False)
    each_code, each = cli.json(*args)
    assert (code, once) == (each_code, each)
    assert once["plan"]["pairs_merged"] == 10 and batches == [8, 10]     # (1,2) (1,3) one merge, (2,5) (3,5) one
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in once["overlaps"] if o["kind"] == "conflict"}
    assert conflicts == {("pr/1", "pr/2"): ["pkg/m.py"], ("pr/1", "pr/3"): ["pkg/m.py"], ("pr/4", "pr/5"): ["pkg/m.py"]}
