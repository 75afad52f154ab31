"""A file git moves aside in a conflict is named by the path it had, in sync's and explain's reports.

Out of a directory's way (file/directory) or beside an entry of another type (distinct types), git moves a
file to `X~<side>`, named after one side of the merge: here one of carrytool's own commits (a stand-in,
an entry alone on upstream), another from merge to merge, and in no tree of the user's. Compared by that
name, the same conflict with upstream looked like a new one in every merge: sync listed it twice (once
under a name nobody has, with no one to blame) and explain blamed an unrelated entry for it. CI runs
this file on git 2.39 and on a current git.
"""

from __future__ import annotations

from carrytool.gitlayer.objects import MergeResult
from tests.conftest import Cli, Small


def _body(name: str, edits: dict[int, str]) -> str:
    return "".join(f"{edits.get(i, f'{name} line {i}')}\n" for i in range(40))


def _scenario(small: Small) -> None:
    base = small.up.commit({"pkg/a.py": _body("a", {})}, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"notes": "a file\n", "kind": "a file\n"}, "upstream adds two files", parent=base,
                    ref="refs/heads/main")
    heads = {1: ({"pkg/a.py": _body("a", {5: "pr 1"})}, None),
             2: ({"pkg/a.py": _body("a", {30: "pr 2"}), "notes/x.md": "under upstream's file\n"}, None),
             3: ({"pkg/a.py": _body("a", {20: "pr 3"}), "plans": "a file of pr 3\n"}, None),
             4: ({"pkg/a.py": _body("a", {35: "pr 4"}), "plans/x.md": "under pr 3's file\n"}, None),
             5: ({"pkg/a.py": _body("a", {10: "pr 5"}), "kind": "pkg/a.py"}, {"kind": "120000"})}
    for number, (files, modes) in heads.items():
        small.up.commit(files, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head", modes=modes)
    small.manifest([{"pr": n} for n in heads], policy={"on_conflict": "skip"})


def test_sync_names_a_file_moved_aside_by_its_path_once(cli: Cli, small: Small) -> None:
    """pr/2 adds a directory where upstream has a file, pr/5 a symlink where upstream has a file: one
    conflict each, with upstream, at the path (before: also `notes~<sha>`, blaming no one). pr/4 adds a
    directory where pr/3 added a file: pr/3 is named, at `plans`."""
    _scenario(small)
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    conflicts = {e["id"]: e.get("conflicts") for e in report["entries"]}
    assert conflicts["pr/2"] == [{"file": "notes", "with": [], "upstream": True}]
    assert conflicts["pr/5"] == [{"file": "kind", "with": [], "upstream": True}]
    assert conflicts["pr/4"] == [{"file": "plans", "with": ["pr/3"]}]
    assert {e["id"]: e["status"] for e in report["entries"]} == {
        "pr/1": "applied", "pr/2": "conflict", "pr/3": "applied", "pr/4": "conflict", "pr/5": "conflict"}
    assert "~" not in str(report["entries"])


def test_explain_blames_no_entry_for_a_file_moved_aside_with_upstream(cli: Cli, small: Small) -> None:
    """pr/2's and pr/5's conflicts are upstream's alone: no pair with pr/1 or pr/3 conflicts there (before,
    pr/1 and pr/2 conflicted in `notes~<sha>`); pr/3 and pr/4 do conflict, at `plans`."""
    _scenario(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in report["overlaps"] if o["kind"] == "conflict"}
    assert conflicts == {("pr/3", "pr/4"): ["plans"]}
    assert report["plan"]["upstream_conflicts"] == {"pr/2": ["notes"], "pr/5": ["kind"]}


def test_conflicted_files_give_the_path_a_file_had() -> None:
    """From merge-tree's answers (git 2.39's and 2.47's are alike): the stages and messages of a
    file/directory and of a distinct-types conflict, and a taken name (`_1`)."""
    moved = MergeResult(False, "t", messages=(
        (("notes~3131fabc", "notes"), "CONFLICT (file/directory)",
         "CONFLICT (file/directory): directory in the way of notes from 3131fabc; moving it to notes~3131fabc"),
        (("t", "t~up_1"), "CONFLICT (distinct modes)",
         "CONFLICT (distinct types): t had different types on each side; renamed one of them"),
        (("a~b.py",), "CONFLICT (contents)", "CONFLICT (content): Merge conflict in a~b.py")))
    assert moved.conflicted_paths == ("notes~3131fabc", "notes", "t", "t~up_1", "a~b.py")
    assert moved.conflicted_files == ("notes", "t", "a~b.py")
    assert moved.moved_aside == {"notes~3131fabc": "notes", "t~up_1": "t"}
    renamed = MergeResult(False, "t", messages=(      # a rename's new name is a file of its own
        (("foo", "foo~old"), "CONFLICT (rename/delete)", "CONFLICT (rename/delete): foo renamed to foo~old in x"),))
    assert renamed.moved_aside == {} and renamed.conflicted_files == ("foo", "foo~old")


def _tree(small: Small) -> str:
    return small.work.git("ls-tree", "-r", "refs/heads/dev")


def test_the_entry_with_the_directory_is_named_too(cli: Cli, small: Small) -> None:
    """Earlier entries add files in `plans/`, a later one a file `plans`: they are named (their own
    files are under the path git moved the file out of), in sync as in explain (an adversarial review's
    case: sync named no one)."""
    base = small.up.commit({"pkg/a.py": _body("a", {})}, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"pkg/a.py": _body("a", {5: "pr 1"}), "plans/a.md": "pr 1\n"}, "pr 1", parent=base,
                    ref="refs/pull/1/head")
    small.up.commit({"pkg/a.py": _body("a", {15: "pr 2"}), "plans/b.md": "pr 2\n"}, "pr 2", parent=base,
                    ref="refs/pull/2/head")
    small.up.commit({"pkg/a.py": _body("a", {30: "pr 3"}), "plans": "a file\n"}, "pr 3", parent=base,
                    ref="refs/pull/3/head")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert report["entries"][2]["conflicts"] == [{"file": "plans", "with": ["pr/1", "pr/2"]}]
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    conflicts = {tuple(o["entries"]): o.get("conflict_files") for o in report["overlaps"] if o["kind"] == "conflict"}
    assert conflicts == {("pr/1", "pr/3"): ["plans"], ("pr/2", "pr/3"): ["plans"]}


def test_theirs_puts_the_entrys_file_at_its_path(cli: Cli, small: Small) -> None:
    """`on_conflict: theirs` where git moved the entry's file aside: the file is at its own path in the
    composed branch (before: at `notes~<the entry's head>`, beside upstream's directory), upstream's
    directory there goes (theirs wins, as for a link or a submodule), and no `~` path is left."""
    base = small.up.commit({"pkg/a.py": _body("a", {})}, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"notes/x.md": "upstream's directory\n"}, "upstream", parent=base, ref="refs/heads/main")
    small.up.commit({"pkg/a.py": _body("a", {30: "pr 1"}), "notes": "the entry's file\n"}, "pr 1", parent=base,
                    ref="refs/pull/1/head")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert report["entries"][0]["resolution"] == {"mode": "theirs", "files": ["notes"]}
    tree = _tree(small)
    assert "~" not in tree and "notes/x.md" not in tree
    assert small.work.git("show", "refs/heads/dev:notes").strip() == "the entry's file"


def test_theirs_takes_the_entrys_file_over_upstreams_link(cli: Cli, small: Small) -> None:
    """Upstream made `t` a symlink, the entry edits the file `t`, `on_conflict: theirs`: `t` is the
    entry's file (before: `t` went and the file sat at `t~<head>`); the reverse keeps the entry's link."""
    base = small.up.commit({"pkg/a.py": _body("a", {}), "t": "x\n"}, "base", parent="main", ref="refs/heads/main")
    small.up.commit({"t": "pkg/a.py"}, "upstream", parent=base, ref="refs/heads/main", modes={"t": "120000"})
    small.up.commit({"pkg/a.py": _body("a", {30: "pr 1"}), "t": "entry edit\n"}, "pr 1", parent=base,
                    ref="refs/pull/1/head")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}], policy={"on_conflict": "skip"})
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    tree = _tree(small)
    assert "~" not in tree and "100644 blob" in next(line for line in tree.splitlines() if line.endswith("\tt"))
    assert small.work.git("show", "refs/heads/dev:t").strip() == "entry edit"


def test_a_file_renamed_to_a_tilde_name_is_a_file_of_its_own(cli: Cli, small: Small) -> None:
    """Upstream deletes `foo`, the entry renames it to `foo~old`: both are named, as git names them (an
    adversarial review's case: `foo~old` was taken for `foo` moved aside)."""
    base = small.up.commit({"pkg/a.py": _body("a", {}), "foo": _body("foo", {})}, "base", parent="main",
                           ref="refs/heads/main")
    small.up.commit({"foo": None}, "upstream deletes foo", parent=base, ref="refs/heads/main")
    small.up.commit({"foo": None, "foo~old": _body("foo", {})}, "pr 1", parent=base, ref="refs/pull/1/head")
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert sorted(c["file"] for c in report["entries"][0]["conflicts"]) == ["foo", "foo~old"]


def test_a_conflict_resolved_in_the_entrys_favour_names_the_path_in_its_commit(cli: Cli, small: Small) -> None:
    """`on_conflict: theirs` on pr/2: the report (and the commit's Carry-Resolution line) name `notes`, not
    git's name for the file moved aside, which names a stand-in commit; the entry's directory stays and
    upstream's file, moved aside, goes."""
    _scenario(small)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}], policy={"on_conflict": "skip"})
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    tree = small.work.git("ls-tree", "-r", "--name-only", "refs/heads/dev").splitlines()
    assert "notes/x.md" in tree and "notes" not in tree and not any("~" in path for path in tree)
    pr2 = report["entries"][1]
    assert pr2["status"] == "applied" and pr2["resolution"] == {"mode": "theirs", "files": ["notes"]}
    assert pr2["conflicts"] == [{"file": "notes", "with": [], "upstream": True}] and "~" not in str(report)
