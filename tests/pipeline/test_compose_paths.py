"""The compose shortcuts give exactly the plain chained merge's result.

Shortcuts: writing an entry's upstream delta, and (git that takes them) explicit merge bases in place of
stand-in commits. The plain chain: every entry merged onto a stand-in commit of the result so far.
CI runs this file on git 2.39 and on a current git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from carrytool.demo.scenario import Scenario
from carrytool.pipeline.compose import Composer
from tests.conftest import Cli, Small
from tests.gitrepo import init_repo, many_prs, write_manifest


def both_ways(cli: Cli, manifest: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    """The dry-run reports of both ways; the README promises the same report, not only the same SHA."""
    fast_code, fast = cli.json("sync", "-m", manifest, "--repo", repo, "--dry-run")
    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    slow_code, slow = cli.json("sync", "-m", manifest, "--repo", repo, "--dry-run")
    assert fast_code == slow_code
    assert fast == slow, "the fast path's report differs from the chained merge's"
    assert fast["result"]["sha"]
    return fast, slow


def _many_overlapping(tmp_path: Path, name: str, count: int, files: int) -> tuple[Path, Path]:
    """A manifest of COUNT overlapping PRs of an upstream with FILES files (tests.gitrepo.many_prs), skipping
    conflicts, and an empty bare repository to compose them in: (manifest, repository)."""
    up = init_repo(tmp_path / name, bare=True)
    many_prs(up, count, files=files)
    repo = init_repo(tmp_path / f"{name}-work", bare=True)
    manifest = write_manifest(tmp_path / f"{name}.yaml", {
        "version": 1, "upstream": {"url": str(up.path)}, "fork": {"branch": "x"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(1, count + 1)]})
    return manifest, repo.path


def test_demo_fast_equals_slow(cli: Cli, demo: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = both_ways(cli, demo.manifest, demo.work, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    assert fast["entries"] == slow["entries"]


def test_many_overlapping_prs_fast_equals_slow(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest, repo = _many_overlapping(tmp_path, "up", 60, 25)
    fast, slow = both_ways(cli, manifest, repo, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    assert fast["entries"] == slow["entries"]          # statuses, conflicts and their culprits, landing
    assert sum(e["status"] == "conflict" for e in fast["entries"]) >= 5
    assert sum(e["status"] == "applied" for e in fast["entries"]) >= 25


def test_directory_and_file_changes_fast_equals_slow(cli: Cli, small: Small,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    small.pr(1, {"docs/c.txt": None, "docs": None, "newdir/x.txt": "x\n"})
    small.pr(2, {"newdir/y.txt": "y\n", "b.py": None})
    small.pr(3, {"lib/old.py": None, "lib/new.py": "print(1)\n"})
    small.pr(4, {"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n", "run.sh": "echo\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}, {"pr": 4}])
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]


def test_shared_files_merged_file_by_file_equal_the_chained_merge(cli: Cli, small: Small,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(12))
    small.base = small.up.commit({"lib/m.py": body, "lib/x.sh": "echo 1\necho 2\necho 3\necho 4\necho 5\n",
                                  "attr/.gitattributes": "*.txt merge=union\n", "attr/u.txt": "a\nb\nc\n"},
                                 "more", parent="main", ref="refs/heads/main")
    for n, i in enumerate((1, 4, 7, 10), start=1):        # four PRs, one function each: clean merges
        small.pr(n, {"lib/m.py": body.replace(f"return {i}\n", f"return {i} * 10\n"),
                     f"docs/pr{n}.txt": f"pr {n}\n"})
    small.pr(5, {"lib/m.py": body.replace("return 4\n", "return -4\n")})                  # conflicts with pr/2
    small.pr(6, {"lib/x.sh": "echo 1\necho two\necho 3\necho 4\necho 5\n"})
    small.up.commit({"lib/x.sh": "echo 1\necho 2\necho 3\necho 4\necho five\n"}, "pr 7: mode + edit",
                    parent=small.base, ref="refs/pull/7/head", modes={"lib/x.sh": "100755"})
    small.pr(8, {"attr/u.txt": "a\nb\nc\nd\n"})
    small.pr(9, {"attr/u.txt": "a\nb\nc\ne\n"})          # merge=union is ignored: a conflict either way
    small.manifest([{"pr": n} for n in range(1, 10)], policy={"on_conflict": "skip"})
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    assert fast["entries"] == slow["entries"]
    statuses = {e["id"]: e["status"] for e in fast["entries"]}
    assert statuses["pr/5"] == "conflict" and statuses["pr/4"] == "applied" and statuses["pr/7"] == "applied"
    assert [statuses[f"pr/{n}"] for n in (1, 2, 3, 4)] == ["applied"] * 4
    assert statuses["pr/9"] == "conflict"


def test_explicit_bases_equal_stand_ins(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no fast path at all, every entry is a chained merge: explicit bases (where git takes them)
    and stand-in commits give the same commits, statuses and conflicts."""
    manifest, repo = _many_overlapping(tmp_path, "up", 40, 10)
    monkeypatch.setattr(Composer, "fast_path", False)
    _, explicit = cli.json("sync", "-m", manifest, "--repo", repo, "--dry-run")
    monkeypatch.setattr(Composer, "explicit_bases", False)
    _, stand_in = cli.json("sync", "-m", manifest, "--repo", repo, "--dry-run")
    assert explicit["result"]["sha"] == stand_in["result"]["sha"]
    assert explicit["entries"] == stand_in["entries"]
    assert sum(e["status"] == "conflict" for e in explicit["entries"]) >= 3


def test_conflicted_chained_merges_resolved_theirs_equal_stand_ins(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`on_conflict: theirs` keeps the conflicted merge's tree: the names of paths moved aside carry the
    merge's labels, so explicit bases must label the sides as the stand-in merge does. Each conflicted
    chained merge is asked once."""
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n", "lib/x": "a file\n"})
    small.pr(2, {"a.py": "def f():\n    return 20\n\n\ndef g():\n    return 2\n", "lib/x/y.txt": "a dir\n"})
    small.pr(3, {"b.py": "x = 10\ny = 2\n"})
    small.pr(4, {"b.py": "x = 40\ny = 2\n", "lib/x/z.txt": "another\n"})
    small.manifest([{"pr": n, "on_conflict": "theirs"} for n in range(1, 5)])
    merges: list[str] = []
    real = Composer._merge_onto

    def counting(self, step, tip, tip_tree):  # noqa: ANN001, ANN202
        merges.append(step.id)
        return real(self, step, tip, tip_tree)

    monkeypatch.setattr(Composer, "fast_path", False)
    monkeypatch.setattr(Composer, "_merge_onto", counting)
    sends: list[int] = []
    from carrytool.gitlayer.mergepipe import MergePipe
    send = MergePipe.send_many

    def sending(self, lines):  # noqa: ANN001, ANN202
        sends.append(len(lines))
        return send(self, lines)

    monkeypatch.setattr(MergePipe, "send_many", sending)
    _, explicit = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    explicit_sends = len(sends)
    monkeypatch.setattr(Composer, "explicit_bases", False)
    _, stand_in = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert explicit["result"]["sha"] == stand_in["result"]["sha"]
    assert explicit["entries"] == stand_in["entries"]
    resolved = [e["id"] for e in explicit["entries"] if "on_conflict: theirs" in (e.get("detail") or "")]
    assert resolved == ["pr/2", "pr/4"], explicit["entries"]
    assert explicit_sends == len(sends) - explicit_sends     # no second merge for the conflicted ones
    assert merges == ["pr/1", "pr/2", "pr/3", "pr/4"] * 2


def body(name: str, edits: dict[int, str]) -> str:
    """A 40-line file of NAME's lines, with EDITS (line index -> text) in place of some."""
    return "".join(f"{edits.get(i, f'{name} line {i}')}\n" for i in range(40))


def test_partial_chained_merges_equal_the_whole_merge(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries of several files that share only some with earlier entries: the chained merge of the shared
    files plus the merged upstream versions of the rest equals the whole chained merge (trees, SHAs,
    conflicts and their culprits), also where upstream changed those other files since the entry's base."""
    names = [f"pkg/m{i}.py" for i in range(6)]
    base = small.up.commit({n: body(n, {}) for n in names}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({n: body(n, {0: f"{n} upstream"}) for n in names}, "upstream edits every file",
                    parent=base, ref="refs/heads/main")
    plan = {1: {"pkg/m0.py": 10, "pkg/m1.py": 10},
            2: {"pkg/m0.py": 20, "pkg/m2.py": 10, "pkg/new2.py": None},         # shares m0 with pr/1
            3: {"pkg/m1.py": 30, "pkg/m3.py": 10, "pkg/m4.py": 10},             # shares m1 with pr/1
            4: {"pkg/m0.py": 10, "pkg/m5.py": 10},                              # conflicts with pr/1 in m0
            5: {"pkg/m2.py": 3, "pkg/m5.py": 30},                               # m2 near upstream's line 0
            6: {"pkg/m3.py": 35, "pkg/m4.py": 35, "pkg/m5.py": 20}}
    for number, files in plan.items():
        change = {n: (f"new file of pr {number}\n" if line is None else body(n, {line: f"pr {number} was here"}))
                  for n, line in files.items()}
        small.up.commit(change, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in plan], policy={"on_conflict": "skip"})
    partial: list[tuple[str, bool]] = []
    real = Composer._merge_partially

    def counting(self, step, *args, **kwargs):  # noqa: ANN001, ANN202
        result = real(self, step, *args, **kwargs)
        partial.append((step.id, result.clean))
        return result

    monkeypatch.setattr(Composer, "_merge_partially", counting)
    named = _names_asked(monkeypatch)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    assert fast["entries"] == slow["entries"]
    statuses = {e["id"]: e["status"] for e in fast["entries"]}
    assert statuses == {"pr/1": "applied", "pr/2": "applied", "pr/3": "applied", "pr/4": "conflict",
                        "pr/5": "applied", "pr/6": "applied"}
    assert [ok for _id, ok in partial].count(True) >= 3 and ("pr/4", False) in partial   # clean ones, pr/4's not
    assert named == [("pr/4", True)]         # its shared files' merge named the conflict: no whole merge


@pytest.mark.parametrize("case", ["skip", "fail", "two-files", "theirs", "structured", "file-directory",
                                  "upstream-too"])
def test_a_conflict_named_by_the_shared_files_merge_is_the_whole_merges(cli: Cli, small: Small, case: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/2 shares files with pr/1 and conflicts with it there, and changes a file of its own as well. Under
    skip or fail, a conflict of contents in shared files is named by the merge of the shared files alone:
    the report (files, culprits, exit code) is the whole chained merge's. Under theirs or a structured
    merge policy (the merged tree is read), or for a conflict that moves a path aside (a file where pr/1
    made a directory), the whole merge is asked, as before; the report is the plain chain's either way."""
    names = [f"pkg/m{i}.py" for i in range(4)]
    base = small.up.commit({n: body(n, {}) for n in names}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({n: body(n, {0: f"{n} upstream"}) for n in names}, "upstream edits every file",
                    parent=base, ref="refs/heads/main")
    first = {"pkg/m0.py": body("pkg/m0.py", {10: "pr 1 was here"}),
             "pkg/m1.py": body("pkg/m1.py", {10: "pr 1 was here"})}
    second = {"pkg/m0.py": body("pkg/m0.py", {10: "pr 2 was here"}),
              "pkg/m3.py": body("pkg/m3.py", {20: "pr 2 was here"})}       # m3: its own
    if case == "two-files":
        second["pkg/m1.py"] = body("pkg/m1.py", {11: "pr 2 next to pr 1"})
    if case == "file-directory":
        first["pkg/d/x.py"] = "pr 1's directory\n"
        second = {"pkg/d": "pr 2's file\n", "pkg/m3.py": second["pkg/m3.py"]}
    if case == "upstream-too":          # pr/2 also conflicts with upstream alone, in a file of its own
        second["pkg/m2.py"] = body("pkg/m2.py", {0: "pr 2 at upstream's line"})
    small.up.commit(first, "pr 1", parent=base, ref="refs/pull/1/head")
    small.up.commit(second, "pr 2", parent=base, ref="refs/pull/2/head")
    entry: dict = {"pr": 2}
    if case == "theirs":
        entry["on_conflict"] = "theirs"
    if case == "structured":
        entry["structured_merge"] = {"paths": ["pkg/*.py"]}
    small.manifest([{"pr": 1}, entry], policy={"on_conflict": "fail" if case == "fail" else "skip"})
    named = _names_asked(monkeypatch)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["entries"] == slow["entries"] and fast["exit_code"] == slow["exit_code"]
    second_entry = fast["entries"][1]
    if case in ("skip", "fail", "two-files"):
        assert named == [("pr/2", True)]
        assert second_entry["status"] == "conflict" and fast["exit_code"] == (3 if case == "fail" else 0)
        files = ["pkg/m0.py", "pkg/m1.py"] if case == "two-files" else ["pkg/m0.py"]
        assert [c["file"] for c in second_entry["conflicts"]] == files
        assert all(c["with"] == ["pr/1"] for c in second_entry["conflicts"])
    elif case == "upstream-too":
        assert named == []          # it conflicts with upstream alone: no partial merge at all
    else:
        assert named == [("pr/2", False)]


@pytest.mark.parametrize("case", ["partial-conflict", "partial-applied", "fast-clean", "fast-conflict"])
def test_a_change_a_chained_merge_moved_through_a_rename_counts_as_touched(cli: Cli, small: Small, case: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream copies A.txt to B.txt; pr/1 deletes A.txt; pr/2 edits A.txt: in the chain, the result so far
    has A renamed to B, so pr/2's edit lands in B.txt, a path of neither entry. pr/3 (on the newer upstream)
    edits B.txt: composing must know the result's B.txt is not upstream's, and merge it (found by an
    adversarial review: the fast path wrote upstream's merged B.txt over pr/2's edit, or named pr/3's
    conflict without B.txt)."""
    base = small.up.commit({"A.txt": body("A", {}), "X.txt": body("X", {})}, "files", parent="main",
                           ref="refs/heads/main")
    up = small.up.commit({"B.txt": body("A", {0: "upstream's B"})}, "upstream copies A to B", parent=base,
                         ref="refs/heads/main")
    small.up.commit({"A.txt": None, "X.txt": body("X", {10: "pr 1"})}, "pr 1", parent=base, ref="refs/pull/1/head")
    small.up.commit({"A.txt": body("A", {30: "pr 2 in A"})}, "pr 2", parent=base, ref="refs/pull/2/head")
    line = 30 if case.endswith("conflict") else 5
    third = {"B.txt": body("A", {0: "upstream's B", line: "pr 3 in B"})}
    if case.startswith("partial"):
        third["X.txt"] = body("X", {20 if case == "partial-applied" else 10: "pr 3"})
    small.up.commit(third, "pr 3", parent=up, ref="refs/pull/3/head")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    third_entry = fast["entries"][2]
    if case.endswith("conflict"):
        assert third_entry["status"] == "conflict"
        # B.txt is in no entry's own diff: pr/2's composed commit is what changed it
        assert {"file": "B.txt", "with": ["pr/2"]} in third_entry["conflicts"]
    else:
        assert third_entry["status"] == "applied"


@pytest.mark.parametrize("case", ["upstream-deletes", "upstream-deletes-nothing", "carried"])
def test_a_file_a_theirs_resolution_removed_counts_as_gone(cli: Cli, small: Small, case: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream adds lib/x, then copies it to lib/q.txt. pr/1 (the oldest base, `theirs`) adds lib/x/y.txt: a
    file/directory conflict moves our lib/x aside, and resolving it in pr/1's favour drops it, although
    pr/1's own diff deletes nothing. pr/2 (which has lib/x) edits lib/x: in the chain the result so far
    has lib/x renamed to lib/q.txt, so the edit lands there. pr/3 edits lib/q.txt and must merge it, not
    write upstream's version with its edit over pr/2's (found by an adversarial review)."""
    c1 = small.up.commit({"lib/x": body("X", {})}, "add lib/x", parent=small.base, ref="refs/heads/main")
    copy = {"lib/q.txt": body("X", {})} | ({"docs/c.txt": None} if case != "upstream-deletes-nothing" else {})
    c2 = small.up.commit(copy, "copy lib/x to lib/q.txt", parent=c1, ref="refs/heads/main")
    first: dict = {"pr": 1, "on_conflict": "theirs"}
    if case == "carried":      # a carried commit off upstream's history
        side = small.up.commit({"side.txt": "side\n"}, "side", parent=small.base)
        carry = small.up.commit({"lib/x/y.txt": "a directory now\n"}, "carry", parent=side, ref="refs/heads/c")
        small.work.git("fetch", "-q", str(small.up.path), "refs/heads/c:refs/heads/c")
        first = {"carry": "c", "commit": carry, "on_conflict": "theirs"}
    else:
        small.up.commit({"lib/x/y.txt": "a directory now\n"}, "pr 1", parent=small.base, ref="refs/pull/1/head")
    small.up.commit({"lib/x": body("X", {5: "pr 2 was here"})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.up.commit({"lib/q.txt": body("X", {30: "pr 3 was here"})}, "pr 3", parent=c2, ref="refs/pull/3/head")
    small.manifest([first, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert [e["status"] for e in fast["entries"]] == ["applied", "applied", "applied"]
    merged = small.work.git("show", f"{fast['result']['sha']}:lib/q.txt")
    assert "pr 2 was here" in merged and "pr 3 was here" in merged


@pytest.mark.parametrize("case", ["upstream-deletes", "upstream-renames", "upstream-has-it"])
def test_a_rename_onto_a_file_an_entry_added_is_the_chains(cli: Cli, small: Small, case: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream deletes lib/x (or renames it to lib/r.txt with edits, or with pr/2's edit too) after pr/2's
    base; pr/1 adds lib/q.txt, an exact copy of lib/x. pr/2 edits lib/x. Onto upstream alone the edit
    conflicts (or follows upstream's rename, or is already there); in the chain the result so far has lib/x
    renamed to pr/1's lib/q.txt, and the edit lands there: composing must ask the chained merge, not take
    the merge onto upstream's word for it (found by an adversarial review)."""
    c1 = small.up.commit({"lib/x": body("X", {})}, "add lib/x", parent=small.base, ref="refs/heads/main")
    renamed = {"upstream-renames": {0: "up", 39: "up"}, "upstream-has-it": {0: "up", 20: "pr 2 was here"}}
    gone = {"lib/x": None} | ({"lib/r.txt": body("X", renamed[case])} if case in renamed else {})
    small.up.commit(gone, "drop lib/x", parent=c1, ref="refs/heads/main")
    small.up.commit({"lib/q.txt": body("X", {})}, "pr 1", parent="main", ref="refs/pull/1/head")
    small.up.commit({"lib/x": body("X", {20: "pr 2 was here"})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    fast = _as_the_plain_chain(cli, small, [1, 2], monkeypatch)
    assert fast["entries"][1]["status"] == "applied"
    assert "pr 2 was here" in small.work.git("show", f"{fast['result']['sha']}:lib/q.txt")


def _as_the_plain_chain(cli: Cli, small: Small, prs: list[int], monkeypatch: pytest.MonkeyPatch) -> dict:
    """Both ways' report (the same), after checking its tree is the plain merge-tree chain's of PRS."""
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    shas = [small.up.git("rev-parse", f"refs/pull/{n}/head").strip() for n in prs]
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/main:refs/heads/up",
                   *[f"{sha}:refs/heads/p{n}" for n, sha in zip(prs, shas)])
    assert small.work.git("rev-parse", f"{fast['result']['sha']}^{{tree}}").strip() == \
        plain_chain_tree(small.work.path, "refs/heads/up", [f"refs/heads/p{n}" for n in prs])
    return fast


@pytest.mark.parametrize("case", ["conflict-alone", "better-target", "upstream-has-it"])
def test_an_entry_changing_a_file_upstream_added_into_a_rename_target(cli: Cli, small: Small, case: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream deletes lib/x after pr/2's base and adds lib/r.txt, unlike it (and lib/q.txt, like it, with
    edits, or with pr/2's edit too); pr/1 makes lib/r.txt an exact copy of lib/x. In the chain pr/2's edit
    of lib/x follows the rename lib/x -> lib/r.txt; onto upstream alone it conflicts, follows lib/q.txt or
    is already there (found by a second adversarial review)."""
    c1 = small.up.commit({"lib/x": body("X", {})}, "add lib/x", parent=small.base, ref="refs/heads/main")
    change: dict = {"lib/x": None, "lib/r.txt": body("R", {})}
    if case != "conflict-alone":
        change["lib/q.txt"] = body("X", {0: "up", 10: "up", 39: "up"} if case == "better-target"
                                   else {0: "up", 20: "pr 2 was here"})
    small.up.commit(change, "drop lib/x", parent=c1, ref="refs/heads/main")
    small.up.commit({"lib/r.txt": body("X", {})}, "pr 1", parent="main", ref="refs/pull/1/head")
    small.up.commit({"lib/x": body("X", {20: "pr 2 was here"})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    fast = _as_the_plain_chain(cli, small, [1, 2], monkeypatch)
    assert fast["entries"][1]["status"] == "applied"


def test_an_entry_whose_delta_makes_an_upstream_file_a_rename_target(cli: Cli, small: Small,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1 (old base) edits lib/r, which upstream renamed to lib/r.txt: only its delta onto upstream turns
    lib/r.txt into a near copy of lib/x, which upstream deleted after pr/2's base (second review)."""
    r = {i: f"r{i}" for i in range(40) if i % 4 != 3}      # lib/r: 30 of lib/x's 40 lines changed
    c1 = small.up.commit({"lib/x": body("X", {}), "lib/r": body("X", r)}, "add", parent=small.base,
                         ref="refs/heads/main")
    small.up.commit({"lib/x": None, "lib/r": None, "lib/r.txt": body("X", r)}, "drop lib/x, move lib/r",
                    parent=c1, ref="refs/heads/main")
    small.up.commit({"lib/r": body("X", {0: "r0"})}, "pr 1", parent=c1, ref="refs/pull/1/head")
    small.up.commit({"lib/x": body("X", {20: "pr 2 was here"})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    _as_the_plain_chain(cli, small, [1, 2], monkeypatch)


def test_an_entry_deleting_a_better_rename_source(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream deletes lib/x and adds lib/q.txt, an exact copy of lib/y (lib/x with one line changed):
    onto upstream alone pr/2's edit of lib/x lands in lib/q.txt; once pr/1 deleted lib/y, lib/y is
    q.txt's exact source in the chain and pr/2 conflicts (second review)."""
    c1 = small.up.commit({"lib/x": body("X", {}), "lib/y": body("X", {0: "y"})}, "add", parent=small.base,
                         ref="refs/heads/main")
    small.up.commit({"lib/x": None, "lib/q.txt": body("X", {0: "y"})}, "x -> q", parent=c1, ref="refs/heads/main")
    small.up.commit({"lib/y": None}, "pr 1", parent="main", ref="refs/pull/1/head")
    small.up.commit({"lib/x": body("X", {20: "pr 2 was here"})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    _as_the_plain_chain(cli, small, [1, 2], monkeypatch)


def test_a_rename_rename_conflict_names_the_other_rename_in_both_targets(cli: Cli, small: Small,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/1 renames lib/x to lib/y, pr/2 renames it to lib/z: pr/2's conflict in its own target lib/z, which
    no earlier entry's diff lists, is with pr/1 too (a third adversarial review saw `"with": []`)."""
    c1 = small.up.commit({"lib/x": body("X", {})}, "add lib/x", parent=small.base, ref="refs/heads/main")
    small.up.commit({"lib/x": None, "lib/y": body("X", {})}, "pr 1", parent=c1, ref="refs/pull/1/head")
    small.up.commit({"lib/x": None, "lib/z": body("X", {})}, "pr 2", parent=c1, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["entries"][1]["conflicts"] == [{"file": "lib/x", "with": ["pr/1"]},
                                               {"file": "lib/y", "with": ["pr/1"]},
                                               {"file": "lib/z", "with": ["pr/1"]}]


def _names_asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """What Composer._names_conflicts answered, entry by entry (the fast path's run only: the plain
    chain never merges partially)."""
    asked: list[tuple[str, bool]] = []
    real = Composer._names_conflicts

    def recording(self, step, *args):  # noqa: ANN001, ANN202
        answer = real(self, step, *args)
        asked.append((step.id, answer))
        return answer

    monkeypatch.setattr(Composer, "_names_conflicts", recording)
    return asked


def plain_chain_tree(repo: Path, upstream: str, heads: list[str]) -> str:
    """The reference: `merge-tree --write-tree TIP HEAD` + `commit-tree` per head, conflicts skipped."""
    def git(*args: str) -> subprocess.CompletedProcess:
        who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                              env={**os.environ, **who}) if args[0] != "merge-tree" else \
            subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)

    tip = git("rev-parse", upstream).stdout.strip()
    for head in heads:
        merged = git("merge-tree", "--write-tree", tip, head)
        if merged.returncode == 0:
            tip = git("commit-tree", merged.stdout.split("\n")[0], "-p", tip, "-m", "carry").stdout.strip()
    return git("rev-parse", f"{tip}^{{tree}}").stdout.strip()


def test_an_entry_upstream_already_has_still_applies_when_an_earlier_entry_undid_it(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    # upstream squash-merged pr/1 (b.py y = 20) and later pr/2, which changed it back (y = 2); the fork
    # carries pr/1's stale branch and then pr/2: merging pr/2 onto upstream alone changes nothing, but after
    # pr/1 it does, and the plain chain takes it (found on pydantic/pydantic's open PRs)
    pr1 = small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n"})
    merged1 = small.up.commit({"b.py": "x = 1\ny = 20\nz = 3\n"}, "pr 1 (squashed)", parent="main",
                              ref="refs/heads/main")
    pr2 = small.pr(2, {"b.py": "x = 1\ny = 2\nz = 3\n"}, parent=merged1)
    small.up.commit({"b.py": "x = 1\ny = 2\nz = 3\n"}, "pr 2 (squashed)", parent="main", ref="refs/heads/main")
    small.pr(3, {"docs/c.txt": "c changed\n"})           # upstream has it, and no entry touches its file
    small.up.commit({"docs/c.txt": "c changed\n"}, "pr 3 (squashed)", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    status = {e["id"]: (e["status"], e.get("reason")) for e in fast["entries"]}
    assert status == {"pr/1": ("applied", None), "pr/2": ("applied", None), "pr/3": ("skipped", "merged-upstream")}
    composed = subprocess.run(["git", "rev-parse", f"{fast['result']['sha']}^{{tree}}"], cwd=small.work.path,
                              capture_output=True, text=True).stdout.strip()
    assert composed == plain_chain_tree(small.up.path, "refs/heads/main", [pr1, pr2, small.up.ref("refs/pull/3/head")])


TEN = "".join(f"line {i}\n" for i in range(1, 11))


def ten(**changes: str) -> str:
    out = [f"line {i}" for i in range(1, 11)]
    for key, value in changes.items():
        out[int(key[1:]) - 1] = value
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("second,policy", [({}, {}), ({"on_conflict": "theirs"}, {}),
                                           ({}, {"structured_merge": {"paths": ["**/*"]}})])
def test_an_entry_upstream_has_whose_chained_merge_conflicts_stays_merged_upstream(
        cli: Cli, small: Small, second: dict, policy: dict) -> None:
    # upstream squash-merged pr/2 (line 4); pr/1, on upstream after that, changes the adjacent line 5: the
    # chained merge of pr/2 conflicts (adjacent edits) though the result already has its change
    small.base = small.up.commit({"f.txt": TEN}, "f", parent="main", ref="refs/heads/main")
    small.pr(2, {"f.txt": ten(l4="line 4 A")})
    merged = small.up.commit({"f.txt": ten(l4="line 4 A")}, "A squashed", parent="main", ref="refs/heads/main")
    small.pr(1, {"f.txt": ten(l4="line 4 A", l5="line 5 B")}, parent=merged)
    small.manifest([{"pr": 1}, {"pr": 2, **second}], policy=policy)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    entry = {e["id"]: e for e in report["entries"]}["pr/2"]
    assert (entry["status"], entry["reason"]) == ("skipped", "merged-upstream")
    assert not entry.get("structured") and not entry.get("conflicts")
    assert not [w for w in report["warnings"] if w.get("entry") == "pr/2"]
    assert small.work.git("show", "refs/heads/dev:f.txt") == ten(l4="line 4 A", l5="line 5 B").rstrip("\n")


def test_an_entry_that_puts_back_what_upstream_has_clobbers_the_stale_entry_loudly(cli: Cli, small: Small) -> None:
    # the pydantic case, end to end: pr/1's stale change is undone by pr/2 (which upstream has): the sync
    # says so (exit 1, nothing moves) rather than ship pr/1's change over upstream's
    small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n"})
    merged1 = small.up.commit({"b.py": "x = 1\ny = 20\nz = 3\n"}, "pr 1 (squashed)", parent="main",
                              ref="refs/heads/main")
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 3\n"}, parent=merged1)
    small.up.commit({"b.py": "x = 1\ny = 2\nz = 3\n"}, "pr 2 (squashed)", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1 and small.branch() is None
    [lost] = {e["id"]: e for e in report["entries"]}["pr/1"]["landing"]["clobbered"]
    assert (lost["by"], lost["file"]) == ("pr/2", "b.py")


@pytest.mark.parametrize("case", ["dir-renamed-upstream", "dir-renamed-by-pr", "file-where-pr-has-dir",
                                  "disjoint", "pr-deletes", "pr-renames", "pr-adds-upstream-deletes",
                                  "same-file"])
def test_merges_onto_upstream_without_merge_tree_equal_merge_tree(cli: Cli, small: Small, case: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry upstream left alone since its base is merged onto upstream by writing its change into
    upstream's tree, even beside a directory a side renamed (an addition stays where it was made); where a
    path both sides changed, merge-tree merges it."""
    lib = {"lib/one.py": "one = 1\n" * 20, "lib/two.py": "two = 2\n" * 20}
    base = small.up.commit(lib, "lib", parent=small.base)
    upstream = {
        "dir-renamed-upstream": {"lib/one.py": None, "lib/two.py": None, "pkg/one.py": lib["lib/one.py"],
                                 "pkg/two.py": lib["lib/two.py"]},
        "dir-renamed-by-pr": {"lib/three.py": "three = 3\n"},
        "file-where-pr-has-dir": {"tools": "a file\n"},
        "disjoint": {"b.py": "x = 10\ny = 2\nz = 3\n"},
        "pr-deletes": {"b.py": "x = 10\ny = 2\nz = 3\n"},
        "pr-renames": {"b.py": "x = 10\ny = 2\nz = 3\n"},
        "pr-adds-upstream-deletes": {"docs/c.txt": None},
        "same-file": {"a.py": "def f():\n    return 9\n\n\ndef g():\n    return 2\n"},
    }[case]
    pr = {
        "dir-renamed-upstream": {"lib/new.py": "new = 1\n"},
        "dir-renamed-by-pr": {"lib/one.py": None, "lib/two.py": None, "src/one.py": lib["lib/one.py"],
                              "src/two.py": lib["lib/two.py"]},
        "file-where-pr-has-dir": {"tools/run.sh": "echo\n"},
        "disjoint": {"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n", "lib/one.py": "one = 11\n"},
        "pr-deletes": {"docs/c.txt": None, "lib/two.py": None},
        "pr-renames": {"lib/one.py": None, "lib/uno.py": lib["lib/one.py"] + "uno = 1\n"},
        "pr-adds-upstream-deletes": {"docs/new.txt": "new\n"},
        "same-file": {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 7\n"},
    }[case]
    small.up.commit(upstream, "upstream", parent=base, ref="refs/heads/main")
    small.pr(1, pr, parent=base)
    small.pr(2, {"csrc/k.cu": "// kernel 2\n"}, parent=base)
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2}])
    direct: list[int] = []
    original = Composer._onto_upstream_directly

    def counted(self: Composer, steps):  # noqa: ANN001, ANN202
        out = original(self, steps)
        direct.append(len(out))
        return out

    monkeypatch.setattr(Composer, "_onto_upstream_directly", counted)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    # directory renames are off (PINNED_CONFIG): a directory one side renamed keeps what the other added
    shortcut = case not in ("file-where-pr-has-dir", "same-file")
    assert direct[0] == (2 if shortcut else 1)        # pr/2 (a file nobody else touches) always


@pytest.mark.parametrize("change", [{"b.py": None, "b.py/inner.py": "x = 1\n"},        # file -> directory
                                    {"docs/c.txt": None, "docs": "now a file\n"}])      # directory -> file
def test_a_file_directory_swap_composes_as_the_chained_merge(cli: Cli, small: Small, change: dict,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    small.pr(1, change)
    small.pr(2, {"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    fast, _slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert [e["status"] for e in fast["entries"]] == ["applied", "applied"]
    heads = [small.up.ref("refs/pull/1/head"), small.up.ref("refs/pull/2/head")]
    composed = subprocess.run(["git", "rev-parse", f"{fast['result']['sha']}^{{tree}}"], cwd=small.work.path,
                              capture_output=True, text=True).stdout.strip()
    assert composed == plain_chain_tree(small.up.path, "refs/heads/main", heads)


def test_modes_only_git_normalizes_compose_as_the_chained_merge(cli: Cli, small: Small,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Old histories hold modes such as 100664, which git reads as 100644: a directory merge-tree writes
    lists them canonically, so a tree the fast path writes must too (same SHAs as the chained merge)."""
    up = small.up
    blob = up.git("hash-object", "-w", "--stdin", input=b"legacy\n")
    odd = up.git("mktree", input=f"100664 blob {blob}\tlegacy.txt\n100644 blob {blob}\tother.txt\n".encode())
    root = up.git("ls-tree", small.base) + f"\n100664 blob {blob}\tlegacy.cfg\n040000 tree {odd}\todd\n"
    tree = up.git("mktree", input=root.encode())
    small.base = up.git("commit-tree", tree, "-p", small.base, "-m", "old modes")
    up.git("update-ref", "refs/heads/main", small.base)
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"odd/other.txt": "other\n"})
    small.pr(3, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 20\n", "odd/new.txt": "n\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}])
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    assert [e["status"] for e in fast["entries"]] == ["applied"] * 3


def _applied_changes_checked(manifest: Path, repo: Path) -> int:
    """Compose; every step whose applied diff composing recorded (the fast path's) has exactly the diff
    `diff-tree` gives of its commit (what the landing checks would otherwise ask). Returns their number."""
    from carrytool.gitlayer.git import Git
    from carrytool.manifest.load import load_manifest
    from carrytool.pipeline.sync import plan_and_compose
    from carrytool.pipeline.sync_records import SyncOptions

    with Git(repo, quarantine=True) as git:
        planned = plan_and_compose(load_manifest(manifest), git, SyncOptions(dry_run=True))
        git._diffs.clear()        # nothing answered from the cache of the deltas composing asked for
        known = [s for s in planned.steps if s.applied_changes is not None]
        for step in known:
            assert step.applied_changes == git.diff_trees([(step.parent, step.commit)])[0], step.id  # type: ignore[list-item]
        return len(known)


def test_the_applied_diffs_composing_records_are_diff_tree_s(tmp_path: Path, small: Small) -> None:
    """The landing checks take a fast-path step's diff from composing (its upstream delta, written into a
    tree whose paths were upstream's) instead of one diff-tree of every composed commit: the same diff,
    with deletions, new directories, a file that becomes a directory, a mode change, a rename, files
    upstream changed since the entry's base, and many overlapping one-file PRs."""
    manifest, repo = _many_overlapping(tmp_path, "many", 60, 25)
    assert _applied_changes_checked(manifest, repo) >= 20
    small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n", "up.txt": "u\n"}, "upstream", parent=small.base,
                    ref="refs/heads/main")
    small.pr(1, {"docs/c.txt": None, "docs": None, "newdir/x.txt": "x\n"})
    small.pr(2, {"newdir/y.txt": "y\n"})
    small.pr(3, {"lib/new.py": "print(1)\n"})
    small.up.commit({"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n", "run.sh": "echo\n"}, "pr 4",
                    parent=small.base, ref="refs/pull/4/head", modes={"a.py": "100755", "run.sh": "100755"})
    small.pr(5, {"c/d/e.txt": "deep\n", "csrc/k.cu": None, "csrc/k.cu/inner.cu": "// inner\n"})
    small.pr(6, {"a.py": None, "moved.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"})
    small.pr(7, {"b.py": "x = 1\ny = 2\nz = 30\n"})       # merged with upstream's b.py: its delta is not its diff
    small.manifest([{"pr": n} for n in range(1, 8)], policy={"on_conflict": "skip"})
    assert _applied_changes_checked(small.manifest_path, small.work.path) >= 6


def _weighed(small: Small) -> None:
    """pr/1 and upstream both changed three files, pr/2 and upstream one; upstream left pr/3's alone."""
    small.up.commit({"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n", "b.py": "x = 5\ny = 2\nz = 3\n",
                     "docs/c.txt": "c upstream\n"}, "upstream", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 7\n", "b.py": "x = 1\ny = 2\nz = 9\n",
                 "docs/c.txt": "c\nmore\n"})
    small.pr(2, {"b.py": "x = 1\ny = 8\nz = 3\n", "new.py": "n = 1\n"})
    small.pr(3, {"csrc/k.cu": "// kernel 3\n"})          # upstream left it alone: written, not merged
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})


def _weights_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The weights of every weighed batch of merges from now on."""
    seen: list[tuple[int, ...]] = []
    from carrytool.gitlayer.git import Git

    original = Git.merge_trees

    def recording(self, pairs, *, weights=None, bases=None):  # noqa: ANN001, ANN202
        if weights is not None:
            seen.append(tuple(weights))
        return original(self, pairs, weights=weights, bases=bases)

    monkeypatch.setattr(Git, "merge_trees", recording)
    return seen


def test_merges_onto_upstream_are_weighed_by_the_files_both_sides_changed(cli: Cli, small: Small,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch of merges onto upstream says what each costs (the files the entry and upstream both
    changed since its base, plus one), so two merge processes share it evenly; the result is the same."""
    _weighed(small)
    seen = _weights_seen(monkeypatch)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    assert seen[0] == (4, 2)                 # pr/1: a.py, b.py, docs/c.txt; pr/2: b.py
    monkeypatch.undo()
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast["result"]["sha"] == report["result"]["sha"]


def test_explain_weighs_its_merges_alone_onto_upstream_as_composing_does(cli: Cli, small: Small,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _weighed(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")     # fetches
    seen = _weights_seen(monkeypatch)
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code in (0, 1), report
    assert seen[0] == (4, 2)                 # pr/3 alone is written into upstream's tree, as composing writes it


def _aside_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The merges composing sends aside (Composer.aside, gitlayer.git.AsideMerges), as merge-tree lines."""
    from carrytool.gitlayer.git import AsideMerges, merge_line

    sent: list[str] = []
    real = AsideMerges.send

    def spy(self, ours, theirs, *, base=None):  # noqa: ANN001, ANN202
        sent.append(merge_line(ours, theirs, base))
        return real(self, ours, theirs, base=base)

    monkeypatch.setattr(AsideMerges, "send", spy)
    return sent


def _misguesses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each Misguessed a compose raised (its caller composes again without merging aside)."""
    from carrytool.pipeline.compose_records import Misguessed

    raised: list[str] = []
    real = Composer.compose

    def spy(self, steps):  # noqa: ANN001, ANN202
        try:
            return real(self, steps)
        except Misguessed as exc:
            raised.append(str(exc))
            raise

    monkeypatch.setattr(Composer, "compose", spy)
    return raised


def test_entries_merged_aside_give_the_chains_report(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries that conflict with upstream alone, in a file of their own, and share shared.txt with earlier
    entries have their chained merge made beside the chain (another merge-tree, another core) while the
    next entries compose on the same tip: the report is the plain chain's, to the byte, and the one
    composing gives without merging aside; some also conflict with an earlier entry in shared.txt, named
    among the entries applied before them only (pr/7, applied later, would meet pr/4's change too)."""
    names = [f"pkg/m{i}.py" for i in range(6)]
    base = small.up.commit({"shared.txt": body("shared", {}), **{n: body(n, {}) for n in names}}, "files",
                           parent="main", ref="refs/heads/main")
    small.up.commit({n: body(n, {0: "upstream"}) for n in names}, "upstream", parent=base, ref="refs/heads/main")
    for number in range(1, 13):
        change = {"shared.txt": body("shared", {number * 3: f"pr {number}"})}
        if number % 2 == 0:                                     # conflicts with upstream alone too
            change[names[number // 2 - 1]] = body(names[number // 2 - 1], {0: f"pr {number}"})
        if number in (4, 10):                                   # and with pr/3, pr/9 in shared.txt
            change["shared.txt"] = body("shared", {(number - 1) * 3: f"pr {number}"})
        if number == 4:             # and next to pr/7's line: were pr/7 an earlier entry, it would be named too
            change["shared.txt"] = body("shared", {9: "pr 4", 20: "pr 4"})
        small.up.commit(change, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in range(1, 13)], policy={"on_conflict": "skip"})
    sent, misguessed = _aside_sends(monkeypatch), _misguesses(monkeypatch)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    _, guessing = cli.json(*args)
    assert len(sent) == 6 and misguessed == []
    conflicts = {e["id"]: [(c["file"], c["with"], c.get("upstream", False)) for c in e["conflicts"]]
                 for e in guessing["entries"] if e["status"] == "conflict"}
    assert conflicts["pr/4"] == [("pkg/m1.py", [], True), ("shared.txt", ["pr/3"], False)], conflicts
    assert len(conflicts) == 6 and all(e["status"] == "applied" for e in guessing["entries"] if e["id"] not in conflicts)
    from carrytool.pipeline import sync as syncmodule

    real = syncmodule._compose
    monkeypatch.setattr(syncmodule, "_compose", lambda *a, **k: real(*a, **{**k, "aside": False}))
    _, not_guessing = cli.json(*args)
    assert len(sent) == 6 and guessing == not_guessing
    monkeypatch.setattr(syncmodule, "_compose", real)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert guessing == fast == slow


def _pr2_repeats_pr1s_fix(small: Small) -> None:
    """pr/2 (on the old base) conflicts with upstream alone at line 10 of a.txt, and edits b.txt; pr/1, on
    upstream, already made line 10 what pr/2 makes it; pr/3 edits b.txt elsewhere. In the chain pr/2
    merges cleanly: guessed to conflict, a wrong guess."""
    base = small.up.commit({"a.txt": body("a", {}), "b.txt": body("b", {})}, "files", parent="main",
                           ref="refs/heads/main")
    up = small.up.commit({"a.txt": body("a", {10: "upstream's line"})}, "upstream", parent=base,
                         ref="refs/heads/main")
    small.up.commit({"a.txt": body("a", {10: "the fix"})}, "pr 1", parent=up, ref="refs/pull/1/head")
    small.up.commit({"a.txt": body("a", {10: "the fix"}), "b.txt": body("b", {5: "pr 2"})}, "pr 2",
                    parent=base, ref="refs/pull/2/head")
    small.up.commit({"b.txt": body("b", {30: "pr 3"})}, "pr 3", parent=base, ref="refs/pull/3/head")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})


def test_an_entry_merged_aside_that_merges_cleanly_composes_again(cli: Cli, small: Small,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """pr/2 (on the old base) conflicts with upstream alone at line 10; pr/1, on upstream, already made
    line 10 what pr/2 makes it: in the chain pr/2 merges cleanly (redundant). Merged aside on the guess
    that it conflicts, it is a wrong guess: composing starts again without guessing, and the report is
    the plain chain's."""
    _pr2_repeats_pr1s_fix(small)
    sent, misguessed = _aside_sends(monkeypatch), _misguesses(monkeypatch)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast == slow
    assert len(sent) == 1 and misguessed == ["pr/2 merged cleanly where its merge onto upstream conflicts"]
    statuses = {e["id"]: e["status"] for e in fast["entries"]}
    assert statuses == {"pr/1": "applied", "pr/2": "applied", "pr/3": "applied"}, fast["entries"]


def test_conflicts_named_aside_fail_in_manifest_order(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under on_conflict: fail, pr/2's conflict (merged aside: it shares b.txt with pr/1) and pr/3's (named
    by its merge onto upstream during the loop) are listed in manifest order, as the plain chain lists
    them: the next steps name pr/2 first."""
    base = small.up.commit({"a.txt": body("a", {}), "b.txt": body("b", {}), "c.txt": body("c", {})}, "files",
                           parent="main", ref="refs/heads/main")
    small.up.commit({"a.txt": body("a", {10: "upstream"}), "c.txt": body("c", {10: "upstream"})}, "upstream",
                    parent=base, ref="refs/heads/main")
    small.up.commit({"b.txt": body("b", {5: "pr 1"})}, "pr 1", parent=base, ref="refs/pull/1/head")
    small.up.commit({"a.txt": body("a", {10: "pr 2"}), "b.txt": body("b", {30: "pr 2"})}, "pr 2", parent=base,
                    ref="refs/pull/2/head")
    small.up.commit({"c.txt": body("c", {10: "pr 3"})}, "pr 3", parent=base, ref="refs/pull/3/head")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "fail"})
    sent = _aside_sends(monkeypatch)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    result = cli(*args)
    assert result.exit_code == 3 and len(sent) == 1
    assert "next: rebase pr/2, pr/3 onto upstream" in result.output, result.output
    monkeypatch.setattr(Composer, "fast_path", False)
    plain = cli(*args)
    assert (plain.exit_code, plain.output) == (result.exit_code, result.output)


def test_a_failed_guess_stops_the_pass_it_spoiled(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Composing asks, between entries, whether an entry merged aside merged cleanly: once it did, the
    rest of that pass is not composed (nor the guesses settled), it starts again. Here git is let finish
    the merge aside before pr/3 is composed, so the failed guess is known there."""
    from carrytool.gitlayer.git import AsideMerges

    _pr2_repeats_pr1s_fix(small)
    real_first, real_settle = AsideMerges.first_clean, Composer._settle_aside
    settled: list[int] = []

    def answered_first(self):  # noqa: ANN001, ANN202
        if self._flushes:
            self.take(len(self._flushes) - 1)       # git answered every merge sent aside
        return real_first(self)

    def settle(self, aside, guessed, *args):  # noqa: ANN001, ANN202
        if aside is not None:
            settled.append(len(guessed))
        return real_settle(self, aside, guessed, *args)

    monkeypatch.setattr(AsideMerges, "first_clean", answered_first)
    monkeypatch.setattr(Composer, "_settle_aside", settle)
    misguessed = _misguesses(monkeypatch)
    fast, slow = both_ways(cli, small.manifest_path, small.work.path, monkeypatch)
    assert fast == slow
    assert misguessed == ["pr/2 merged cleanly where its merge onto upstream conflicts"] and settled == []


def _content_batches(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple]]:
    """The content merges the run asks git (gitlayer.mergepipe.merge_contents_many), one list per batch."""
    from carrytool.gitlayer import contentmerge

    batches: list[list[tuple]] = []
    real = contentmerge.merge_contents_many

    def spy(git, triples):  # noqa: ANN001, ANN202
        batches.append(list(triples))
        return real(git, triples)

    monkeypatch.setattr(contentmerge, "merge_contents_many", spy)
    return batches


def test_conflicts_named_aside_ask_their_content_merges_as_one_batch(cli: Cli, small: Small,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries merged aside that conflict with upstream alone in CHANGES.md, which earlier entries edit too:
    who meets each conflict is asked of git as one batch of content merges before they are named (two
    merge-tree processes may share it), not one batch per entry after the other. The same merges as
    composing without merging aside (three batches there), and the same report: pr/1's line 4 meets the conflicts of pr/2 and
    pr/4 (lines 1 and 3, beside upstream's line 2), not pr/6's (line 1 alone)."""
    base = small.up.commit({"CHANGES.md": body("changes", {})}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"CHANGES.md": body("changes", {2: "upstream"})}, "upstream", parent=base,
                    ref="refs/heads/main")
    edits = {1: {4: "pr 1"}, 2: {1: "pr 2", 3: "pr 2"}, 3: {20: "pr 3"}, 4: {1: "pr 4", 3: "pr 4"},
             5: {30: "pr 5"}, 6: {1: "pr 6"}}
    for number, lines in edits.items():
        small.up.commit({"CHANGES.md": body("changes", lines)}, f"pr {number}", parent=base,
                        ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in edits], policy={"on_conflict": "skip"})
    sent, batches = _aside_sends(monkeypatch), _content_batches(monkeypatch)
    args = ("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    _, guessing = cli.json(*args)
    conflicts = {e["id"]: [(c["file"], c["with"], c.get("upstream", False)) for c in e["conflicts"]]
                 for e in guessing["entries"] if e["status"] == "conflict"}
    assert conflicts == {"pr/2": [("CHANGES.md", ["pr/1"], True)], "pr/4": [("CHANGES.md", ["pr/1"], True)],
                         "pr/6": [("CHANGES.md", [], True)]}, conflicts
    # one batch for the three entries' meetings (pr/1, pr/3, pr/5 alone where they apply); pr/6's conflict
    # against all of its earlier entries together (regions_differ: on the result) is read from its chained
    # merge, which merged the same blobs (tests/pipeline/test_naming_reads.py), not asked again
    assert len(sent) == 3 and [len(batch) for batch in batches] == [6], batches
    asked = sorted(t for batch in batches for t in batch)
    from carrytool.pipeline import sync as syncmodule

    real = syncmodule._compose
    monkeypatch.setattr(syncmodule, "_compose", lambda *a, **k: real(*a, **{**k, "aside": False}))
    batches.clear()
    _, not_guessing = cli.json(*args)
    assert guessing == not_guessing
    assert len(batches) == 3 and sorted(t for batch in batches for t in batch) == asked


def _raw_tree(repo, entries: list[tuple[str, str, str]]) -> str:  # noqa: ANN001 - a tests.gitrepo Repo
    """A tree object written as given (modes git no longer writes included): (mode, name, oid) each."""
    data = b"".join(mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=data)


def _raw_commit(repo, tree: str, parents: list[str], message: str, ref: str | None = None) -> str:  # noqa: ANN001
    repo.tick()
    commit = repo.git("commit-tree", tree, *[a for p in parents for a in ("-p", p)], "-m", message)
    if ref:
        repo.git("update-ref", ref, commit)
    return commit


@pytest.mark.parametrize("case", ["mode", "zero-padded", "second"])
def test_a_directory_a_head_encodes_anew_is_the_chains(cli: Cli, tmp_path: Path, case: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The base's w/ was written with a mode git no longer writes (100664, or a zero-padded 040000 entry);
    the PR's head has the same files in w/ written canonical (its git rewrote it), and changes a.txt.
    diff-tree lists only a.txt, yet merge-tree takes the head's w/ tree whole (upstream left w/ as the base
    has it): the shortcuts that write the entry's diff into a tree kept upstream's w/ and gave another
    tree than the chain's (an adversarial review). Such an entry is merged. SECOND: the same entry after
    one that touches nothing of it (the delta shortcut, `_fast_tree`)."""
    up = init_repo(tmp_path / "up", bare=True)
    blob = lambda text: up.git("hash-object", "-w", "--stdin", input=text.encode())  # noqa: E731
    weird, other, k1, k2, c1, c2 = (blob(t) for t in ("weird\n", "other\n", "k\n", "k2\n", "c\n", "c2\n"))
    a1, a2 = blob("".join(f"line {i}\n" for i in range(10))), blob("".join(f"line {i}\n" for i in range(1, 10)))
    if case == "zero-padded":
        sub = _raw_tree(up, [("100644", "s.txt", other)])
        old_w = _raw_tree(up, [("040000", "sub", sub), ("100644", "weird", weird)])
        new_w = _raw_tree(up, [("40000", "sub", sub), ("100644", "weird", weird)])
    else:
        old_w = _raw_tree(up, [("100664", "weird", weird), ("100644", "x.txt", other)])
        new_w = _raw_tree(up, [("100644", "weird", weird), ("100644", "x.txt", other)])
    root = lambda a, k, w, c: _raw_tree(up, [("100644", "a.txt", a), ("100644", "c.txt", c),  # noqa: E731
                                             ("100644", "k", k), ("40000", "w", w)])
    base = _raw_commit(up, root(a1, k1, old_w, c1), [], "base")
    _raw_commit(up, root(a1, k2, old_w, c1), [base], "upstream changes k", "refs/heads/main")
    _raw_commit(up, root(a2, k1, new_w, c1), [base], "pr 1: a.txt, w/ rewritten", "refs/pull/1/head")
    _raw_commit(up, root(a1, k1, old_w, c2), [base], "pr 2: c.txt", "refs/pull/2/head")
    work = init_repo(tmp_path / "work", bare=True)
    manifest = write_manifest(tmp_path / "m.yaml", {
        "version": 1, "upstream": {"url": str(up.path)}, "fork": {"branch": "x"},
        "entries": [{"pr": 2}, {"pr": 1}] if case == "second" else [{"pr": 1}]})
    fast, slow = both_ways(cli, manifest, work.path, monkeypatch)
    assert fast["result"]["sha"] == slow["result"]["sha"]
    tree = work.git("rev-parse", f"{fast['result']['sha']}^{{tree}}")
    assert work.git("rev-parse", f"{tree}:w") == new_w          # the head's w/, as merge-tree takes it
