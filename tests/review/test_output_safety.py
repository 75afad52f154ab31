"""What carrytool prints can be trusted: quoted commands, escaped control characters and Markdown, the
reasons for a failure even with -q, next steps that repeat -m/--repo, and one entry's story (issue 14)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from carrytool.render.commands import Invocation
from tests.conftest import Cli, Small, init_repo

EVIL = "docs/$(touch PWNED).md"
ESCAPE = "docs/\x1b[2Jclear.md"
A2 = "def f():\n    return 1\n\n\ndef g():\n    return 20\n"


def hostile(small: Small) -> None:
    """pr/4 adds files with hostile names and has a hostile title; pr/5 repeats it (redundant)."""
    small.pr(4, {EVIL: "x\n", ESCAPE: "y\n", "a.py": A2})
    small.pr(5, {EVIL: "x\n"})
    small.manifest([{"pr": 4, "title": "evil | `x` <b>[link](http://e.test) \x1b[31mred"}, {"pr": 5}])


def run(cli: Cli, small: Small, *args: str):  # noqa: ANN201
    return cli(*args, "-m", small.manifest_path, "--repo", small.work.path)


def test_printed_git_commands_quote_file_names(cli: Cli, small: Small, tmp_path: Path) -> None:
    hostile(small)
    result = run(cli, small, "explain", "pr/5")
    assert result.exit_code == 0
    commands = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("git ")]
    assert f"-- {shlex.quote(EVIL)}" in "\n".join(commands)
    for command in commands:                     # pasted into a shell, each runs exactly what it says
        done = subprocess.run(["sh", "-c", command], cwd=small.work.path, capture_output=True, text=True)
        assert done.returncode in (0, 1), (command, done.stderr)
    assert not list(small.work.path.rglob("PWNED")) and not (Path.cwd() / "PWNED").exists()


def test_control_characters_are_escaped_in_text_output(cli: Cli, small: Small) -> None:
    hostile(small)
    for args in (("explain",), ("explain", "pr/4"), ("sync",), ("sync", "-v")):
        result = run(cli, small, *args)
        assert result.exit_code == 0, result.stderr
        assert "\x1b" not in result.stdout and "\x1b" not in result.stderr, args
    assert "\\x1b[31mred" in run(cli, small, "explain", "pr/4").stdout


def test_markdown_escapes_titles_and_file_names(cli: Cli, small: Small) -> None:
    hostile(small)
    md = run(cli, small, "explain", "--format", "markdown").stdout
    row = next(line for line in md.splitlines() if line.startswith("| `pr/4`"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 5                       # four cells, whatever the title holds
    assert "<b>" not in md and not re.search(r"(?<!\\)\]\(http", md) and "\x1b" not in md
    assert r"\<b\>" in row and r"\[link\]" in row
    assert " `x` " in row and "\\`" not in row        # a code span stays one (h262: "\\`x\\`" showed backticks)


def test_quiet_sync_still_says_why_it_failed(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": A2})
    small.manifest([{"pr": 1}], asserts=[{"name": "g-called", "file": "a.py", "in": "g", "calls": "helper"}])
    result = run(cli, small, "sync", "-q")
    assert result.exit_code == 1
    assert "assert failed: g-called: g: helper is never called on any path through g" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith("FAILED (verification failed, exit 1)")
    assert "upstream main at" not in result.stdout                      # quiet hides the rest


def test_quiet_sync_still_names_a_change_in_neither_and_an_assert_on_an_entry_left_out(cli: Cli, small: Small) -> None:
    """--quiet shows a warning that a change is missing from the image (a union superseding pr/1 leaves
    its a.py out), and an assert failing for an entry that was not applied says so (a new user's trial:
    both read as noise or were hidden)."""
    small.pr(1, {"a.py": A2, "b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 20\ny = 2\nz = 3\n"})
    union = small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "union", parent="main", ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [1]},
                    {"pr": 2, "on_conflict": "skip"}],
                   asserts=[{"name": "x-twenty", "file": "b.py", "contains": "x = 20", "entry": "pr/2"}])
    result = run(cli, small, "sync", "-q")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "warning: carry/union supersedes pr/1 but does not change a.py" in result.stdout
    assert "(guards pr/2, which is not applied: conflict)" in result.stdout
    assert "upstream main at" not in result.stdout                      # quiet hides the rest


def test_an_error_is_printed_once_on_stderr(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": A2})
    fork = init_repo(small.root / "fork.git", bare=True)
    hook = fork.path / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho refused by the fork >&2\nexit 1\n")
    hook.chmod(0o755)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": str(fork.path)})
    result = run(cli, small, "sync", "--push")                           # the push fails after planning
    assert result.exit_code == 4, result.stderr
    assert "error" not in result.stdout and "refused" not in result.stdout
    assert result.stderr.count("carrytool: error:") == 1


def test_next_step_commands_repeat_manifest_and_repo_and_run_elsewhere(cli: Cli, small: Small,
                                                                       tmp_path: Path) -> None:
    small.pr(1, {"a.py": A2})
    small.manifest([{"pr": 1}], asserts=[{"name": "g-called", "file": "a.py", "in": "g", "calls": "helper"}])
    result = run(cli, small, "sync")
    assert result.exit_code == 1
    [hint] = [line for line in result.stdout.splitlines() if "carrytool verify --rev" in line]
    [command] = [said for said in hint.split("`")[1::2] if said.startswith("carrytool verify ")]   # after bisect
    assert shlex.split(command)[-4:] == ["-m", str(small.manifest_path.resolve()),
                                         "--repo", str(small.work.path.resolve())]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(command, shell=True, cwd=elsewhere, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "assert failed: g-called" in done.stdout


def test_hints_in_errors_repeat_the_options_too(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": A2})
    small.manifest([{"pr": 1}])
    result = run(cli, small, "sync", "--locked")
    assert result.exit_code == 2
    wanted = shlex.join(["carrytool", "sync", "-m", str(small.manifest_path.resolve()),
                         "--repo", str(small.work.path.resolve())])
    assert f"`{wanted}`" in result.stderr


def test_default_options_are_left_out_and_odd_paths_quoted() -> None:
    assert Invocation.of(None, Path(".")).command("verify", "--rev", "abc") == "carrytool verify --rev abc"
    odd = Invocation(Path("/tmp/my manifests/m.yaml"), None)
    assert odd.command("explain") == "carrytool explain -m '/tmp/my manifests/m.yaml'"
    assert odd.rewrite("run `carrytool sync` once") == "run `carrytool sync -m '/tmp/my manifests/m.yaml'` once"
    # a union command too (helper-114: the stale-fold warning's refold ran elsewhere), unless it says its own
    assert odd.rewrite("`carrytool union compose X`") == "`carrytool union compose X -m '/tmp/my manifests/m.yaml'`"
    assert odd.rewrite("`carrytool union compose X -m m.yaml`") == "`carrytool union compose X -m m.yaml`"
    assert odd.rewrite("`carrytool union compose X --repo=r`") == "`carrytool union compose X --repo=r`"


def test_story_names_an_upstream_conflict_and_no_merge_for_merged_upstream(cli: Cli, small: Small) -> None:
    small.pr(1, {"a.py": A2})
    small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(3, {"docs/c.txt": "c2\n"})
    small.base = small.up.commit({"b.py": "x = 5\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"}, "upstream moves",
                                 parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "skip"}, {"pr": 3}])
    two = run(cli, small, "explain", "pr/2").stdout
    assert "conflicts with upstream alone in b.py: rebase needed" in two
    assert two.startswith("story of pr/2\n") and "pr/1" not in two.split("reproduce")[0].replace("after pr/1", "")
    three = run(cli, small, "explain", "3").stdout
    assert "skipped (merged-upstream)" in three and "merged onto" not in three and "pr/1" not in three


def test_check_escapes_control_characters_of_the_manifest(cli: Cli, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text('version: 1\nupstream: {url: ../up}\nfork: {branch: dev}\n"\\e[2Jkey": 1\n')
    result = cli("check", "-m", manifest)
    assert result.exit_code == 2 and "\x1b" not in result.stderr and "unknown key '\\x1b[2Jkey'" in result.stderr


def test_a_text_assert_with_a_newline_is_one_line_in_explain_as_in_verify(cli: Cli, small: Small) -> None:
    """An `absent:` (or `contains:`) text with a newline: explain printed it raw, which broke its line, where verify
    prints it escaped (`\\n`); the JSON keeps the text as the manifest has it (h185, on sqlalchemy)."""
    small.pr(1, {"a.py": A2})
    small.manifest([{"pr": 1}], asserts=[{"file": "a.py", "absent": "return 20\n", "entry": "pr/1"},
                                         {"file": "a.py", "absent": "foo\nbar", "entry": "pr/1"}])
    verify_lines = run(cli, small, "sync").stdout.splitlines()
    assert any("`return 20\\n` is present" in line for line in verify_lines)
    for args in (("explain",), ("explain", "pr/1"), ("explain", "--format", "markdown"),
                 ("explain", "pr/1", "--format", "markdown"), ("sync", "--dry-run")):
        result = run(cli, small, *args)
        assert result.exit_code in (0, 1), result.output
        lines = result.stdout.splitlines()
        # no line is the tail of a broken one: each text is on the line that names it, escaped
        assert not [line for line in lines if line.startswith((" in a.py", "bar"))], (args, result.stdout)
        said = "\n".join(lines)
        assert "return 20\\n in a.py" in said.replace("\\\\", "\\"), (args, result.stdout)
    code, report = cli.json("explain", "pr/1", "-m", small.manifest_path, "--repo", small.work.path)
    [story] = report["stories"]
    assert {a["name"] for a in story["asserts"]} == {"absent return 20\n in a.py", "absent foo\nbar in a.py"}
