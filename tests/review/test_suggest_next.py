"""What explain suggests and sync says next, from h254's trial on huggingface/peft.

A fork carry that conflicts with a PR is never proposed for a union: only PRs can be superseded.

On huggingface/peft, a fork fix of `random_pruning` conflicted with pr/3486, which fixes the same lines: explain
said "consider a union of pr/3486, pr/3111, carry/fix-dare-nan" with no command (none exists: `union new`
takes PR numbers), and sync's next step said "fold pr/3486, carry/fix-dare-nan into a union (`carrytool union
new NAME 3486` starts it)", a union of one PR that leaves the carry's conflict where it was. A red sync names
the bisect of its chain, on one line.
"""

from __future__ import annotations

import jsonschema

from tests.conftest import Cli, Small

F5 = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n\n\ndef g():\n    return 2\n"


def _setup(small: Small, prs: dict[int, dict[str, str]], carry: dict[str, str], *, carry_first: bool = False,
           **extra) -> None:
    """PRs (number: replacements in F5) and a fork carry `fix` (CARRY's replacements in F5) on one base."""
    small.base = small.up.commit({"a.py": F5}, "f has five lines", parent="main", ref="refs/heads/main")
    for n, swaps in prs.items():
        small.pr(n, {"a.py": _swap(swaps)})
    fix = small.up.commit({"a.py": _swap(carry)}, "carry: fix", parent=small.base, ref="refs/heads/fix")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/fix:refs/heads/fix")
    entries: list[dict] = [{"pr": n} for n in prs]
    carried = {"carry": "fix", "commit": fix}
    small.manifest([carried, *entries] if carry_first else [*entries, carried], **extra)


def _swap(swaps: dict[str, str]) -> str:
    text = F5
    for old, new in swaps.items():
        text = text.replace(old, new)
    return text


def _explain(cli: Cli, small: Small, *args: str) -> tuple[int, dict]:
    return cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, *args)


def test_a_carry_conflicting_with_a_pr_is_told_to_rebase_not_to_join_a_union(cli: Cli, small: Small,
                                                                            report_schema: dict) -> None:
    _setup(small, {1: {"a = 1": "a = 10"}}, {"a = 1": "a = 11"}, policy={"on_conflict": "skip"})
    code, report = _explain(cli, small)
    assert code == 0
    jsonschema.validate(report, report_schema)
    assert [s for s in report["suggestions"] if s["kind"] == "union"] == []
    [rebase] = [s for s in report["suggestions"] if s["kind"] == "rebase"]
    assert rebase["entries"] == ["carry/fix", "pr/1"] and rebase["files"] == ["a.py"]
    assert rebase["message"].startswith("carry/fix conflicts with pr/1 (in a.py): a fork carry cannot join a "
                                        "union's `supersedes`: rebase its commit onto pr/1 (or drop it if pr/1 does what it does)"), \
        rebase["message"]
    assert "command" not in rebase
    text = cli("explain", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "consider a union" not in text and "union new" not in text, text
    assert "  rebase: carry/fix conflicts with pr/1 (in a.py)" in text, text


def test_prs_still_get_their_union_when_a_carry_also_conflicts(cli: Cli, small: Small) -> None:
    _setup(small, {1: {"a = 1": "a = 10"}, 2: {"a = 1": "a = 20", "d = 4": "d = 41"}}, {"d = 4": "d = 40"},
           policy={"on_conflict": "skip"})
    code, report = _explain(cli, small)
    assert code == 0
    [union] = [s for s in report["suggestions"] if s["kind"] == "union"]
    assert union["entries"] == ["pr/1", "pr/2"], union
    assert union["command"] == f"carrytool union new union-1-2 1 2 -m {small.manifest_path} --repo {small.work.path}"
    [rebase] = [s for s in report["suggestions"] if s["kind"] == "rebase"]
    assert rebase["entries"] == ["carry/fix", "pr/2"]


def test_a_carry_before_the_pr_it_conflicts_with_is_told_to_move_after_it(cli: Cli, small: Small) -> None:
    _setup(small, {1: {"a = 1": "a = 10"}}, {"a = 1": "a = 11"}, carry_first=True, policy={"on_conflict": "skip"})
    code, report = _explain(cli, small)
    assert code == 0
    [rebase] = [s for s in report["suggestions"] if s["kind"] == "rebase"]
    assert "rebase its commit onto pr/1 and move it after pr/1 in the manifest" in rebase["message"], rebase


def test_sync_next_step_for_a_carry_conflict_names_no_union_of_one_pr(cli: Cli, small: Small) -> None:
    _setup(small, {1: {"a = 1": "a = 10"}}, {"a = 1": "a = 11"})
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert result.exit_code == 3, result.output
    assert "union new" not in result.output and "into a union" not in result.output, result.output
    assert ("next: rebase carry/fix onto pr/1 (a fork carry cannot join a union's `supersedes`), or drop it if "
            "pr/1 does what it does, or") in result.output, result.output


def test_sync_next_step_moves_a_carry_standing_before_the_pr_after_it(cli: Cli, small: Small) -> None:
    """h257: carry/fix before pr/1 in the manifest: rebased onto pr/1 where it stands, it applies before pr/1 and
    conflicts again; sync said only "rebase carry/fix onto pr/1" (explain's rebase says to move it after pr/1)."""
    _setup(small, {1: {"a = 1": "a = 10"}}, {"a = 1": "a = 11"}, carry_first=True)
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert result.exit_code == 3, result.output
    assert ("next: rebase carry/fix onto pr/1 and move it after pr/1 in the manifest (a fork carry cannot join a "
            "union's `supersedes`), or drop it if pr/1 does what it does, or") in " ".join(result.output.split())


def test_a_red_sync_names_the_bisect_of_its_chain_and_it_runs(cli: Cli, small: Small) -> None:
    """h254 (peft): a sync failing an assert said only `verify --rev SHA` (which repeats what sync just said);
    the command that names the entry is `bisect --rev SHA`, which verify would print one step later."""
    small.base = small.up.commit({"a.py": F5}, "f has five lines", parent="main", ref="refs/heads/main")
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"a.py": F5.replace("    b = 2\n", "    b = boom()\n")})
    small.manifest([{"pr": 1}, {"pr": 2}], asserts=[{"name": "no-boom", "file": "a.py", "in": "f",
                                                     "not_calls": "boom"}])
    for dry in ([], ["--dry-run"]):
        result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, *dry)
        assert result.exit_code == 1, result.output
        [line] = [x for x in result.stdout.splitlines() if x.startswith("next: `carrytool bisect --rev ")]
        command = line.split("`")[1].split()
        assert command[4:7] == ["--assert", "no-boom", "-m"] and "names the entry of that chain that broke it" in line
        assert "reproduces the failed asserts on the composed result (not published)" in line, line
        code, found = cli.json(*command[1:])
        assert code == 0 and found["first_bad"] == "pr/2", found


def test_a_failed_text_assert_with_a_newline_keeps_the_next_step_on_one_line(cli: Cli, small: Small) -> None:
    """The next step's `bisect --assert NAME` quoted an assert name holding a newline (`absent: "foo\\nbar"`),
    which broke the line in two; without names, bisect searches with every failed assert."""
    small.base = small.up.commit({"a.py": F5}, "f has five lines", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": F5.replace("    b = 2\n", "    b = 2\nfoo\nbar\n")})
    small.manifest([{"pr": 1}], asserts=[{"file": "a.py", "absent": "foo\nbar"}])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert code == 1
    for args in (("sync", "--dry-run"), ("verify", "--rev", report["result"]["sha"])):
        result = cli(*args, "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code == 1, result.output
        [hint] = [line for line in result.stdout.splitlines() if "carrytool bisect" in line]
        assert "--assert" not in hint and hint.endswith(("(not published)", "that broke it")), (args, result.stdout)
        assert not [line for line in result.stdout.splitlines() if line.startswith(("bar", "'"))], result.stdout
