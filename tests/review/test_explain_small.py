"""explain on small real repositories: overlap kinds, sparse pairs, suggestions, drift, upstream conflicts."""

from __future__ import annotations

import jsonschema

from tests.conftest import Cli, Small

F5 = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n\n\ndef g():\n    return 2\n"


def explain(cli: Cli, small: Small, *args: str) -> tuple[int, dict]:
    return cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, *args)


def kinds(report: dict) -> dict[tuple[str, ...], list[str]]:
    return {tuple(o["entries"]): o["kinds"] for o in report["overlaps"]}


def with_f5(small: Small) -> None:
    small.base = small.up.commit({"a.py": F5}, "f has five lines", parent="main", ref="refs/heads/main")


def test_same_scope_clean_merge_and_conflict_in_one_function(cli: Cli, small: Small, report_schema: dict) -> None:
    with_f5(small)
    small.pr(1, {"a.py": F5.replace("a = 1", "a = 10")})
    small.pr(2, {"a.py": F5.replace("d = 4", "d = 40")})           # two lines away: merges cleanly
    small.pr(3, {"a.py": F5.replace("a = 1", "a = 11")})           # the same line as #1
    small.pr(4, {"a.py": F5.replace("return 2", "return 20")})     # another function
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3, "on_conflict": "skip"}, {"pr": 4}])
    code, report = explain(cli, small)
    assert code == 0
    jsonschema.validate(report, report_schema)
    found = kinds(report)
    assert found[("pr/1", "pr/2")] == ["same-scope", "same-file"]
    assert found[("pr/1", "pr/3")] == ["conflict", "same-scope", "same-file"]
    assert found[("pr/1", "pr/4")] == ["same-file"]
    [one_two] = [o for o in report["overlaps"] if o["entries"] == ["pr/1", "pr/2"]]
    assert one_two["scopes"] == ["f"] and one_two["files"] == ["a.py"] and "conflict_files" not in one_two


def test_identical_hunk_outranks_scope_but_not_conflict(cli: Cli, small: Small) -> None:
    with_f5(small)
    small.pr(1, {"a.py": F5.replace("a = 1", "a = 10")})
    small.pr(2, {"a.py": F5.replace("a = 1", "a = 10").replace("d = 4", "d = 40")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = explain(cli, small)
    assert code == 0
    [overlap] = report["overlaps"]
    assert overlap["kinds"] == ["identical-hunk", "same-scope", "same-file"]
    assert overlap["identical_hunks"] == [{"file": "a.py", "lines": [2, 2]}]


def test_only_pairs_that_share_a_file_are_compared(cli: Cli, small: Small) -> None:
    entries = []
    for n in range(1, 13):
        small.pr(n, {f"pkg/m{n}.py": f"x = {n}\n"})
        entries.append({"pr": n})
    small.pr(20, {"pkg/m1.py": "x = 100\n", "b.py": "x = 5\ny = 2\nz = 3\n"})
    small.pr(21, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.manifest(entries + [{"pr": 20, "on_conflict": "skip"}, {"pr": 21}])
    code, report = explain(cli, small)
    assert code == 0
    assert report["plan"]["pairs_merged"] == 2
    assert kinds(report) == {("pr/1", "pr/20"): ["conflict", "same-file"], ("pr/20", "pr/21"): ["same-file"]}


def test_conflicting_prs_without_a_union_get_a_suggestion(cli: Cli, small: Small) -> None:
    with_f5(small)
    for n in (1, 2, 3):
        small.pr(n, {"a.py": F5.replace("a = 1", f"a = {n}0")})
    small.pr(4, {"b.py": "x = 4\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3}, {"pr": 4}], policy={"on_conflict": "skip"})
    code, report = explain(cli, small)
    assert code == 0
    [group] = [s for s in report["suggestions"] if s["kind"] == "union"]
    assert group["entries"] == ["pr/1", "pr/2", "pr/3"] and group["files"] == ["a.py"]
    assert group["message"].startswith("consider a union of pr/1, pr/2, pr/3")


def test_a_union_suggestion_gives_the_command_bisect_gives(cli: Cli, small: Small, report_schema: dict) -> None:
    """helper-159: explain said "consider a union of pr/10389, pr/10438" and no command, where bisect printed
    a ready `carrytool union new union-10389-10438 10389 10438 ...`: the same command, in every format."""
    with_f5(small)
    for n in (1, 2):
        small.pr(n, {"a.py": F5.replace("a = 1", f"a = {n}0")})
    small.manifest([{"pr": 2}, {"pr": 1}], policy={"on_conflict": "skip"})
    code, report = explain(cli, small)
    assert code == 0
    jsonschema.validate(report, report_schema)
    where = f"-m {small.manifest_path} --repo {small.work.path}"
    command = f"carrytool union new union-1-2 1 2 {where}"
    [group] = [s for s in report["suggestions"] if s["kind"] == "union"]
    assert group["command"] == command
    _, story = explain(cli, small, "pr/1")
    assert [s.get("command") for s in story["stories"][0]["suggestions"]] == [command]
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert f"  union: consider a union of pr/2, pr/1 (they conflict in a.py)\n      run: {command}\n" in text, text
    markdown = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--format", "markdown").stdout
    assert f"consider a union of pr/2, pr/1 (they conflict in a.py)\n\n  ```sh\n  {command}\n  ```" in markdown, \
        markdown


def test_a_union_covers_its_prs_and_is_asked_to_fold_an_outsider(cli: Cli, small: Small) -> None:
    with_f5(small)
    for n in (1, 2, 3):
        small.pr(n, {"a.py": F5.replace("a = 1", f"a = {n}0")})
    union = small.up.commit({"a.py": F5.replace("a = 1", "a = 120")}, "union of 1 and 2", parent="main",
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3, "on_conflict": "skip"},
                    {"carry": "u", "commit": union, "supersedes": [1, 2]}])
    code, report = explain(cli, small)
    assert code == 0
    assert kinds(report)[("pr/1", "pr/2")][0] == "conflict"          # covered by carry/u: no suggestion for it
    [group] = [s for s in report["suggestions"] if s["kind"] == "union"]
    assert group["entries"] == ["pr/3", "carry/u"]
    assert group["message"].startswith("consider folding pr/3 into carry/u")
    assert "command" not in group       # `union new` makes a union of PRs, not a fold into one


def test_disabled_and_precompiled_entries_are_mapped_but_not_suggested(cli: Cli, small: Small) -> None:
    with_f5(small)
    small.pr(1, {"a.py": F5.replace("a = 1", "a = 10")})
    small.pr(2, {"a.py": F5.replace("a = 1", "a = 20")})
    small.manifest([{"pr": 1}, {"pr": 2, "enabled": False}])
    code, report = explain(cli, small)
    assert code == 0 and kinds(report)[("pr/1", "pr/2")][0] == "conflict"
    assert [s for s in report["suggestions"] if s["kind"] == "union"] == []


def test_drift_lists_upstream_commits_on_owned_paths(cli: Cli, small: Small) -> None:
    union = small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    moved = small.up.commit({"b.py": "x = 1\ny = 2\nz = 30\n"}, "upstream edits b.py", parent="main",
                            ref="refs/heads/main")
    small.up.commit({"docs/c.txt": "c9\n"}, "upstream edits docs", parent=moved, ref="refs/heads/main")
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}, {"carry": "u", "commit": union, "supersedes": [1], "owns": ["b.py"]}])
    code, report = explain(cli, small, "carry/u")
    assert code == 0
    [drift] = [s for s in report["suggestions"] if s["kind"] == "drift"]
    assert drift["entry"] == "carry/u" and drift["base"] == small.base and drift["paths"] == ["b.py"]
    assert drift["commits"] == [{"sha": moved, "subject": "upstream edits b.py"}]
    [story] = report["stories"]
    assert any(line.startswith("upstream changed carry/u's owned paths in 1 commit ") for line in story["summary"])


def test_an_entry_conflicting_with_upstream_alone(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 3\n"})
    small.up.commit({"a.py": "def f():\n    return 30\n\n\ndef g():\n    return 2\n"}, "upstream moved",
                    parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2}])
    code, report = explain(cli, small, "1")
    assert code == 0
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]}
    [overlap] = report["overlaps"]
    assert overlap["kinds"] == ["same-file"]                   # decided by merging pr/1 onto pr/2's commit
    [story] = report["stories"]
    assert story["entry"]["status"] == "conflict"
    assert any(c["purpose"].startswith("the merge that conflicts") for c in story["commands"])


def test_explain_takes_quiet_and_verbose_like_the_other_commands(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}])
    base = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    quiet, verbose = cli(*base, "-q"), cli(*base, "-v")
    assert (quiet.exit_code, verbose.exit_code) == (0, 0), quiet.stderr + verbose.stderr
    assert "pr/1" in quiet.stdout and "pr/1" in verbose.stdout
    assert cli("-q", *base).exit_code == 0


def test_hunks_of_only_blank_lines_are_no_identical_hunk_evidence(cli: Cli, small: Small) -> None:
    """Two PRs that each add the same blank line (and change different functions) share no change."""
    body = "".join(f"    x{i} = {i}\n" for i in range(8))
    base = f"def f():\n{body}    return 1\n\n\ndef g():\n{body}    return 2\n"
    small.base = small.up.commit({"a.py": base}, "longer", parent="main", ref="refs/heads/main")
    blank = base.replace("    x7 = 7\n    return 1\n", "    x7 = 7\n\n    return 1\n")
    small.pr(1, {"a.py": blank.replace("    x0 = 0\n", "    x0 = 100\n", 1)})
    small.pr(2, {"a.py": blank.replace("    return 2\n", "    return 20\n")})
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    code, report = explain(cli, small)
    assert code == 0
    [overlap] = report["overlaps"]
    assert "identical-hunk" not in overlap["kinds"] and "identical_hunks" not in overlap, overlap
    assert overlap["files"] == ["a.py"]


def test_a_pair_not_merged_says_so_in_text_and_markdown(cli: Cli, small: Small) -> None:
    """Two PRs that each conflict with upstream alone in the file they share are not merged as a pair:
    whether they conflict together is not known. The JSON said `"merged": false`; text and Markdown showed
    the pair as its other kinds (identical-hunk), read as harmless (helper-80's trial on pallets/click)."""
    base = small.base
    small.pr(1, {"a.py": "def f():\n    return 10\n", "b.py": "x = 1\ny = 2\nz = 9\n"}, parent=base)
    small.pr(2, {"a.py": "def f():\n    return 10\n", "b.py": "x = 1\ny = 2\nz = 8\n"}, parent=base)
    small.up.commit({"a.py": "def f():\n    return 11\n"}, "upstream moves f", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    _, report = explain(cli, small)
    [pair] = report["overlaps"]
    assert pair["merged"] is False and pair["kind"] != "conflict", pair
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    text = cli(*args).stdout
    assert "1 not merged: both conflict with upstream alone)" in text
    assert "pr/1 x pr/2 (not merged: both conflict with upstream alone)" in text
    markdown = cli(*args, "--format", "markdown").stdout
    assert " (not merged: both conflict with upstream alone) |" in markdown


def test_a_same_file_pair_not_merged_is_not_put_away_in_markdown(cli: Cli, small: Small) -> None:
    """A pair not merged whose only other kind is same-file went to the collapsed same-file block under
    "No conflicts, identical hunks or shared scopes." (helper-81)."""
    small.pr(1, {"t.txt": "one\ntwo\n"})
    small.pr(2, {"t.txt": "uno\ndos\n"})
    small.up.commit({"t.txt": "eins\nzwei\n"}, "upstream", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}, {"pr": 2, "on_conflict": "skip"}])
    _, report = explain(cli, small)
    [pair] = report["overlaps"]
    assert (pair["kind"], pair["merged"]) == ("same-file", False), pair
    markdown = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--format", "markdown").stdout
    assert "No conflicts, identical hunks or shared scopes." not in markdown and "Same-file overlaps" not in markdown
    assert "| `pr/1` × `pr/2` | same-file (not merged: both conflict with upstream alone) |" in markdown
    assert "pr_1 ---|same-file; not merged| pr_2" in markdown


def test_a_pair_conflicting_in_one_of_its_shared_files_says_which(cli: Cli, small: Small) -> None:
    """helper-87: a pair conflicting in one file of the two it shares was shown "conflict (+same-scope)
    ... a.py, b.py [f]" in text, Markdown and the stories, though only a.py conflicts (the JSON's
    `conflict_files` said so). The file it conflicts in is marked; the others are "also shared"."""
    with_f5(small)
    small.pr(1, {"a.py": F5.replace("a = 1", "a = 10"), "b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"a.py": F5.replace("a = 1", "a = 20"), "b.py": "x = 1\ny = 2\nz = 30\n"})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}])
    code, report = explain(cli, small)
    [overlap] = report["overlaps"]
    assert code == 0 and overlap["files"] == ["a.py", "b.py"] and overlap["conflict_files"] == ["a.py"]
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "pr/1 x pr/2  a.py (conflicts), b.py [f]" in text, text
    story = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/2").stdout
    assert "conflict with pr/1 in a.py; also shares b.py (f)" in story, story
    markdown = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--format", "markdown").stdout
    assert "| `a.py` (conflicts), `b.py` |" in markdown, markdown


def test_a_commit_message_is_drafted_for_a_union_only(cli: Cli, small: Small) -> None:
    """helper-87: `--format commit-message` for a carry that supersedes nothing drafted "union of " with an
    empty `Carry-Supersedes:` trailer (exit 0), which sync reads if committed: exit 2, saying why."""
    fix = small.up.commit({"b.py": "x = 1\ny = 2\nz = 4\n"}, "fork fix", parent="main", ref="refs/heads/fix")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/fix:refs/heads/fix")
    small.manifest([{"carry": "audit", "commit": fix}])
    result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--format", "commit-message",
                 "carry/audit")
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "drafts a union's message: carry/audit supersedes no PR" in result.stderr
    assert "Traceback" not in result.stderr
    # no ENTRY: the example is a carry of this manifest (helper-102: the demo's carry/wake-path-union)
    result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--format", "commit-message")
    assert result.exit_code == 2 and "needs exactly one carry ENTRY (e.g. carry/audit)" in result.stderr, \
        result.stderr


def test_the_first_line_says_when_sync_would_not_publish_the_plan(cli: Cli, small: Small) -> None:
    """helper-100: "the plan composes dev = X" on the first line, "sync would exit 3" on the last: a plan sync
    would not publish says so where it is named."""
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n"})
    for policy, said in (("fail", True), ("skip", False)):
        small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": policy})
        result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code == 0, result.output
        first = result.stdout.splitlines()[0]
        assert ("which sync would not publish (it would exit 3)" in first) == said, first


def test_two_prs_built_on_one_branch_are_said_so_and_kept_short(cli: Cli, small: Small, report_schema: dict,
                                                                monkeypatch) -> None:
    """60 polars PRs, a dozen of them built on one 350-file branch: each pair of those listed every shared
    file on its explain line and every identical hunk in the JSON (1.2 MB of text, 19 MB of JSON, 99,857
    identical hunks). The pair says it shares the branch's commits; the text names the first files and how
    many more; the JSON lists the first identical hunks and their total."""
    from carrytool.review import overlap as overlap_module
    monkeypatch.setattr(overlap_module, "IDENTICAL_SHOWN", 3)
    branch = small.up.commit({f"m{i:02}.py": f"x = {i}\n" for i in range(12)}, "a branch of twelve modules",
                             parent=small.base, ref="refs/heads/feature")
    small.pr(1, {"a.py": "def f():\n    return 10\n"}, parent=branch)
    small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n"}, parent=branch)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = explain(cli, small)
    assert code == 0
    jsonschema.validate(report, report_schema)
    [pair] = report["overlaps"]
    assert pair["files"] == [f"m{i:02}.py" for i in range(12)] and pair["kind"] == "identical-hunk"
    assert pair["shared_commits"] == 1 and pair["identical_hunks_total"] == 12
    assert pair["identical_hunks"] == [{"file": f"m{i:02}.py", "lines": [1, 1]} for i in range(3)]
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path)
    text = cli(*args).stdout
    assert "pr/1 x pr/2 (both built on one branch: 1 commit beyond upstream in common)" in text, text
    assert "m07.py, ... (+4 more files)" in text and "m08.py" not in text, text
    markdown = cli(*args, "--format", "markdown").stdout
    assert "`m07.py`, ... (+4 more files)" in markdown and "m08.py" not in markdown, markdown
    assert "(both built on one branch: 1 commit beyond upstream in common)" in markdown, markdown


def test_prs_on_their_own_bases_share_no_commits(cli: Cli, small: Small) -> None:
    with_f5(small)
    small.pr(1, {"a.py": F5.replace("a = 1", "a = 10")})
    small.pr(2, {"a.py": F5.replace("a = 1", "a = 10").replace("d = 4", "d = 40")})
    small.manifest([{"pr": 1}, {"pr": 2}])
    _, report = explain(cli, small)
    [pair] = report["overlaps"]
    assert "shared_commits" not in pair and "identical_hunks_total" not in pair, pair
    assert "built on one branch" not in cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout


SLEEP = "class Worker:\n    def sleep(self):\n" + "".join(f"        self.a{k} = {k}\n" for k in range(10))


def _union_changing_the_def_elsewhere(small: Small, drops: list | None = None) -> None:
    """pr/1 adds a line near the top of Worker.sleep; the union (supersedes 1) changes the same def near its
    end and does not hold pr/1's line: it changes the scope, so its diff alone reads `re-expressed`."""
    small.base = small.up.commit({"w.py": SLEEP}, "a worker", parent="main", ref="refs/heads/main")
    small.pr(1, {"w.py": SLEEP.replace("        self.a1 = 1\n", "        self.a1 = 1\n        self.flush()\n")})
    union = small.up.commit({"w.py": SLEEP.replace("self.a8 = 8", "self.a8 = 80")}, "union", parent=small.base,
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    item = {"pr": 1, "drops": drops} if drops else 1
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [item]}])


def test_coverage_takes_syncs_verdict_of_a_hunk_the_union_left_out(cli: Cli, small: Small) -> None:
    """helper-141 on xarray: a hunk the maintainer left out read `re-expressed` in explain's coverage (the union
    changed its def elsewhere) while sync's check of the composed tree found it absent (`provided-absent`
    with its lines). Coverage says what sync found."""
    _union_changing_the_def_elsewhere(small)
    code, report = explain(cli, small)
    assert code == 0, report
    assert [(w["entry"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"] == \
        [("pr/1", [5, 5])], report["warnings"]
    [cov] = report["coverage"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([5, 5], "absent")], cov
    assert (cov["re_expressed"], cov["absent"], cov["dropped"]) == (0, 1, 0)


def test_coverage_says_a_hunk_the_union_drops_on_purpose_with_its_why(cli: Cli, small: Small) -> None:
    _union_changing_the_def_elsewhere(small, [{"file": "w.py", "in": "Worker.sleep", "why": "flushed by upstream"}])
    code, report = explain(cli, small)
    assert code == 0, report
    [cov] = report["coverage"]
    assert [(h["status"], h.get("why")) for h in cov["hunks"]] == [("dropped", "flushed by upstream")], cov
    assert (cov["absent"], cov["dropped"]) == (0, 1)
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "carry/union carries pr/1: 0 verbatim, 0 re-expressed, 0 absent, 1 dropped on purpose" in text, text
    assert "dropped: w.py:5-5 (Worker.sleep): flushed by upstream" in text, text


def test_coverage_says_a_deletion_the_union_leaves_out_is_absent_or_dropped(cli: Cli, small: Small) -> None:
    """helper-144: pr/1 only deletes a line of Worker.sleep; the union changes the def elsewhere and keeps that
    line. Coverage read `re-expressed` and sync said nothing; a drop declaring it was called stale."""
    small.base = small.up.commit({"w.py": SLEEP}, "a worker", parent="main", ref="refs/heads/main")
    small.pr(1, {"w.py": SLEEP.replace("        self.a1 = 1\n", "")})
    union = small.up.commit({"w.py": SLEEP.replace("self.a8 = 8", "self.a8 = 80")}, "union", parent=small.base,
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [1]}])
    code, report = explain(cli, small)
    assert code == 0, report
    assert [(w["entry"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"] == \
        [("pr/1", [3, 3])], report["warnings"]
    [cov] = report["coverage"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([3, 3], "absent")], cov
    drop = {"file": "w.py", "in": "Worker.sleep", "why": "a1 stays"}
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [{"pr": 1, "drops": [drop]}]}])
    code, report = explain(cli, small)
    assert code == 0, report
    [cov] = report["coverage"]
    assert [(h["lines"], h["status"], h.get("why")) for h in cov["hunks"]] == [([3, 3], "dropped", "a1 stays")], cov
    assert not [w for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")], report["warnings"]
