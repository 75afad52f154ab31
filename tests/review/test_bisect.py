"""`carrytool bisect` on real repositories: the first bad entry, alone or with whom, probes and the cache."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.review.bisect_search import ddmin
from carrytool.review.probe import TAIL_BYTES, run_in_tree
from tests.conftest import Cli, Small
from tests.gitrepo import init_repo

F_BODY = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n"
H_EARLY = "def f():\n    a = 1\n    h()\n    b = 2\n    c = 3\n    d = 4\n    return a\n"
H_LATE = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    h()\n    return a\n"
RUNNING = f"Python {sys.version_info.major}.{sys.version_info.minor}"
H_ONCE = {"name": "h-once", "file": "a.py", "in": "f", "calls": "h", "max": 1}
DEFINES_F = {"name": "f-defined", "file": "a.py", "defines": "f"}


def build(small: Small, count: int, special: dict[int, dict], asserts: list[dict] | None = None,
          **extra) -> Path:
    """COUNT PRs on a base where a.py holds F_BODY: PR n adds n.txt, or changes what SPECIAL[n] says."""
    base = small.up.commit({"a.py": F_BODY}, "base with f", parent=small.base, ref="refs/heads/main")
    for n in range(1, count + 1):
        small.up.commit(special.get(n, {f"f{n}.txt": f"{n}\n"}), f"pr {n}", parent=base,
                        ref=f"refs/pull/{n}/head")
    return small.manifest([{"pr": n} for n in range(1, count + 1)],
                          **({"asserts": asserts} if asserts else {}), **extra)


def bisect(cli: Cli, small: Small, *args: str) -> tuple[int, dict]:
    return cli.json("bisect", "-m", small.manifest_path, "--repo", small.work.path, *args)


def test_an_assert_broken_by_one_entry_alone(cli: Cli, small: Small) -> None:
    build(small, 8, {5: {"a.py": "def g():\n    return 1\n"}}, [DEFINES_F, H_ONCE])
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/5" and out["alone_bad"] is True and out["interacts_with"] == []
    assert [c["name"] for c in out["checks"]] == ["f-defined", "h-once"]
    assert all(c["ok"] is False and c["message"] for c in out["checks"])
    assert [c["id"] for c in out["chain"]] == [f"pr/{n}" for n in range(1, 9)]
    assert out["probes"] <= math.log2(8) + 3 and out["cached"] == 0
    assert out["next"].startswith("carrytool explain pr/5 -m ")
    # --assert picks one: the other never fails, and the text names the failing assert and the next step
    result = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--assert", "f-defined")
    assert result.exit_code == 0
    assert "First bad entry: pr/5 (5 of 8 in the chain)" in result.stdout
    assert "FAIL f-defined" in result.stdout and "h-once" not in result.stdout
    assert "Next: carrytool explain pr/5" in result.stdout


def test_an_assert_broken_only_with_an_earlier_entry(cli: Cli, small: Small) -> None:
    build(small, 9, {3: {"a.py": H_EARLY}, 7: {"a.py": H_LATE}}, [H_ONCE])
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/7" and out["alone_bad"] is False
    assert out["interacts_with"] == ["pr/3"]
    assert out["checks"][0]["name"] == "h-once" and "h" in out["checks"][0]["message"]
    assert out["next"].startswith("carrytool union new union-3-7 3 7 -m ")


def test_run_finds_the_entry_in_few_probes_and_a_rerun_is_cached(cli: Cli, small: Small, tmp_path: Path) -> None:
    count = 16
    build(small, count, {11: {"broken": "yes\n"}})
    marker = tmp_path / "runs.log"
    command = f"echo \"$PWD\" >> '{marker}'; test -f a.py && test ! -e broken"
    code, out = bisect(cli, small, "--run", command)
    assert code == 0, out
    assert out["first_bad"] == "pr/11" and out["alone_bad"] is True
    assert out["checks"]["command"] == command and out["checks"]["exit_code"] == 1
    assert out["probes"] <= math.log2(count) + 3 and out["cached"] == 0
    runs = marker.read_text().splitlines()
    assert len(runs) == out["probes"] + 2 and out["confirmed"] is True  # and the boundary's two trees again
    assert all(not run.startswith(str(small.work.path)) for run in runs)     # never in the user's repository
    assert json.loads((small.work.path / "carrytool" / "bisect-cache.json").read_text())["version"] == 1
    code, again = bisect(cli, small, "--run", command)
    assert code == 0 and again["first_bad"] == "pr/11"
    assert again["cached"] == again["probes"] == out["probes"]
    assert len(marker.read_text().splitlines()) == len(runs)                 # nothing ran again


def test_run_reports_exit_code_and_last_lines_as_text(cli: Cli, small: Small) -> None:
    build(small, 4, {2: {"broken": "yes\n"}})
    result = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path,
                 "--run", "if test -e broken; then echo it broke; exit 7; fi")
    assert result.exit_code == 0
    assert "First bad entry: pr/2" in result.stdout and "exit 7" in result.stdout
    assert "| it broke" in result.stdout and "Probes: " in result.stdout


def test_rev_reads_the_chain_of_a_composed_commit(cli: Cli, small: Small) -> None:
    build(small, 6, {2: {"a.py": H_EARLY}, 5: {"a.py": H_LATE}}, [H_ONCE])
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 1                           # the night is red: the assert fails
    sha = report["result"]["sha"]
    code, out = bisect(cli, small, "--rev", sha)
    assert code == 0, out
    assert out["first_bad"] == "pr/5" and out["interacts_with"] == ["pr/2"]
    commits = {e["id"]: e["commit"] for e in report["entries"]}
    assert out["chain"] == [{"id": f"pr/{n}", "commit": commits[f"pr/{n}"]} for n in range(1, 7)]
    # the text's next command (explain) reads today's plan: the night's commits of the entries it names, and
    # the command that shows each (h245)
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--rev", sha)
    heads = {e["id"]: e["head"] for e in report["entries"]}
    for entry in ("pr/2", "pr/5"):
        assert (f"the night {sha[:12]} composed {entry} at head {heads[entry][:12]} as {commits[entry][:12]}: "
                f"`git -C {Path(small.work.path).resolve()} show {commits[entry]}`") in text.stdout, text.stdout
    composed = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert "First bad entry: pr/5" in composed.stdout and "the night" not in composed.stdout


def test_a_good_tip_exits_1(cli: Cli, small: Small) -> None:
    build(small, 3, {}, [H_ONCE])
    code, out = bisect(cli, small)
    assert code == 1
    assert out["first_bad"] is None and out["checks"] == [] and out["probes"] == 1


def test_upstream_already_bad_names_no_entry(cli: Cli, small: Small) -> None:
    build(small, 3, {}, [{"name": "g", "file": "a.py", "defines": "g"}])
    code, out = bisect(cli, small)
    assert code == 0 and out["first_bad"] is None and out["upstream"]["bad"] is True


def test_a_command_failing_on_upstream_too_says_so(cli: Cli, small: Small) -> None:
    """A command that cannot pass on any tree (it needs a `.git`; every probe times out) read as upstream's
    own failure (helper-83): the text says the command fails on upstream's tree as well."""
    build(small, 2, {})
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--run", "git rev-parse HEAD")
    assert text.exit_code == 0 and "itself fails" in text.stdout
    assert "  the command fails on upstream's own tree too (exit 128): if upstream's code is not what fails, it " \
           "needs what a probed tree does not have (a `.git`, an install step, more time)" in text.stdout, text.stdout
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--run", "sleep 5", "--timeout", "0.2")
    assert "the command fails on upstream's own tree too (timed out after 0.2 s)" in text.stdout, text.stdout
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, "--run", "true")
    assert "the command fails" not in text.stdout


def test_a_later_entry_clobbering_what_an_earlier_one_fixed(cli: Cli, small: Small) -> None:
    """Upstream fails the check, pr/2 makes it hold, pr/5 (on_conflict: theirs) takes it away again."""
    clobber = {"a.py": F_BODY.replace("a = 1", "a = 10")}
    build(small, 6, {2: {"a.py": H_EARLY}, 5: clobber}, [{"name": "h-called", "file": "a.py", "in": "f",
                                                          "calls": "h"}])
    text = small.manifest_path.read_text().replace("- pr: 5\n", "- pr: 5\n  on_conflict: theirs\n")
    small.manifest_path.write_text(text)
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/5" and out["alone_bad"] is False and out["interacts_with"] == ["pr/2"]
    assert out["upstream"]["bad"] is True
    result = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert "upstream fails without it too; it breaks the check together with: pr/2" in result.stdout


def test_by_default_the_asserts_failing_at_the_tip_and_passing_on_upstream(cli: Cli, small: Small) -> None:
    never = {"name": "never", "file": "a.py", "defines": "nowhere"}          # fails on every tree
    build(small, 6, {4: {"a.py": "def g():\n    return 1\n"}}, [never, DEFINES_F, H_ONCE])
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/4" and out["alone_bad"] is True
    assert out["searched_with"] == ["f-defined", "h-once"]     # h-once: pr/4 removed f, its scope
    code, out = bisect(cli, small, "--assert", "never", "--assert", "f-defined")    # named: as given
    assert code == 0 and out["first_bad"] is None and out["upstream"]["bad"] is True


@pytest.mark.parametrize("args, words", [
    (["--assert", "nope"], "no assert named nope"),
    (["--rev", "main"], "not a commit carrytool composed"),
    (["--rev", "no-such-rev"], "no such commit"),
    (["--format", "yaml"], "format"),
    (["--timeout", "0", "--run", "true"], "--timeout"),
])
def test_bad_input_exits_2(cli: Cli, small: Small, args: list[str], words: str) -> None:
    build(small, 2, {}, [H_ONCE])
    small.work.git("fetch", "-q", str(small.up.path), "main:main")
    result = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path, *args)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert words in result.stderr


def test_no_check_at_all_is_bad_input(cli: Cli, small: Small) -> None:
    build(small, 2, {})
    result = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "nothing to bisect with" in result.stderr


@pytest.mark.parametrize("bad, expected", [
    ({3}, [3]), ({2, 7}, [2, 7]), ({0, 5, 9}, [0, 5, 9]), (set(), []),
])
def test_ddmin_finds_a_one_minimal_subset(bad: set[int], expected: list[int]) -> None:
    seen: list[list[int]] = []

    def fails(subset: list[int]) -> bool:
        seen.append(subset)
        return bad <= set(subset) and bool(bad)

    items = list(range(10))
    assert ddmin(items, fails) == (expected or items)


def test_the_probed_tree_is_written_whole_modes_and_links_kept_no_git_dir(small: Small, tmp_path: Path) -> None:
    from carrytool.gitlayer.git import Git
    from carrytool.review.probe import materialise

    sha = small.up.commit({"bin/run.sh": "#!/bin/sh\necho ran\n", "link": "bin/run.sh", "d/e/f.txt": "f\n"},
                          "tree", parent=small.base, modes={"bin/run.sh": "100755", "link": "120000"})
    tree = small.up.git("rev-parse", f"{sha}^{{tree}}")
    config = small.up.git("hash-object", "-w", "--stdin", input=b"[core]\n\tfsmonitor = touch /tmp/pwned\n")
    git_dir = small.up.git("mktree", input=f"100644 blob {config}\tconfig\n".encode())
    hostile = small.up.git("mktree", "--missing", input=(small.up.git("ls-tree", tree) +
                                                         f"\n040000 tree {git_dir}\t.git\n").encode())
    with Git(small.up.path) as git:
        for name in (tree, hostile):
            root = tmp_path / name[:8]
            root.mkdir()
            materialise(git, name, root)
            assert (root / "bin/run.sh").stat().st_mode & 0o111 and (root / "link").is_symlink()
            assert (root / "link").read_text() == "#!/bin/sh\necho ran\n" and (root / "d/e/f.txt").read_text() == "f\n"
            assert not (root / ".git").exists()


def test_a_command_running_past_the_timeout_is_bad_and_never_cached(cli: Cli, small: Small) -> None:
    build(small, 2, {2: {"slow": "yes\n"}})
    command = "if test -e slow; then exec sleep 30; fi"
    code, out = bisect(cli, small, "--run", command, "--timeout", "0.5")
    assert code == 0 and out["first_bad"] == "pr/2" and out["alone_bad"] is True
    assert out["checks"]["timed_out"] is True and out["checks"]["exit_code"] is None
    # the first bad tree timed out: never run again, so the good tree's rerun alone confirms nothing (helper-97)
    assert out["confirmed"] is None
    code, again = bisect(cli, small, "--run", command, "--timeout", "0.5")
    assert again["first_bad"] == "pr/2" and again["probes"] == out["probes"] == 4
    assert again["cached"] == 2                    # the good trees; the timed-out ones ran again


def test_an_assert_of_what_an_entry_adds_names_that_entry(cli: Cli, small: Small) -> None:
    """helper-79: an assert that checks what pr/2 adds (`entry: pr/2`) fails on upstream by design; once pr/2
    stopped providing it (a force-push), bisect said "upstream itself fails" and named nothing. It names
    the entry the assert guards, and explains it next."""
    build(small, 3, {}, [{"name": "g", "file": "a.py", "defines": "g", "entry": "pr/2"}])
    code, out = bisect(cli, small)
    assert code == 0 and out["first_bad"] is None and out["upstream"]["bad"] is True
    assert out["next"].startswith("carrytool explain pr/2 ")
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path)
    assert "the asserts searched with check what pr/2 adds (their `entry:`), which upstream alone never has" \
        in text.stdout, text.stdout
    # the first line does not say "upstream itself fails" as if nothing were to be done (helper-100)
    assert text.stdout.startswith("Upstream ") and "fails the asserts, and so did every prefix of the chain " \
        "probed: what they check is to come from pr/2 (their `entry:`)." in text.stdout.splitlines()[0], text.stdout


def test_an_assert_on_a_file_that_does_not_parse_is_not_judged(cli: Cli, small: Small) -> None:
    """helper-123: jax (Python >= 3.12) bisected by carrytool on 3.11: its api.py (PEP 695) parsed nowhere, and
    the assert guarding pr/2's def failed on upstream and every prefix, so bisect said "the entry no longer
    provides it (moved, rebased, or skipped)" of an entry that applied. It says the file does not parse with
    this Python: no entry is to blame, nothing to explain. (`def f(:` stands for newer grammar: it fails on
    every Python.)"""
    unparsable = "def f(:\n    pass\n"
    base = small.up.commit({"a.py": unparsable}, "base", parent=small.base, ref="refs/heads/main")
    for n in (1, 2, 3):
        small.up.commit({"a.py": unparsable + "\n\ndef g():\n    pass\n"} if n == 2 else {f"f{n}.txt": "x\n"},
                        f"pr {n}", parent=base, ref=f"refs/pull/{n}/head")
    small.manifest([{"pr": n} for n in (1, 2, 3)],
                   asserts=[{"name": "g", "file": "a.py", "defines": "g", "entry": "pr/2"}])
    code, out = bisect(cli, small)
    assert code == 0 and out["first_bad"] is None and out["unparsable"] == ["a.py"]
    assert out["next"] is None
    assert out["checks"][0]["message"].startswith("a.py:1: syntax error: invalid syntax (the file does not parse "
                                                  f"with {RUNNING}, the Python carrytool runs on")
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "no longer provides" not in text and "Next:" not in text, text
    assert text.splitlines()[0].endswith(f"fails the asserts, and so did every prefix of the chain probed, but none "
                                         f"of them was judged: a.py does not parse with {RUNNING}, the Python "
                                         "carrytool runs on: no entry is to blame."), text
    assert "if the project needs a newer Python, install carrytool with it and run this bisect again" in text
    # beside an assert that was judged (and fails everywhere), the unjudged one is said to be so, and its
    # entry is not the one the judged assert's message blames
    small.manifest([{"pr": n} for n in (1, 2, 3)],
                   asserts=[{"name": "g", "file": "a.py", "defines": "g", "entry": "pr/2"},
                            {"name": "h", "file": "b.py", "defines": "h", "entry": "pr/3"}])
    code, out = bisect(cli, small)
    assert out["unparsable"] == ["a.py"] and out["next"].startswith("carrytool explain pr/3 "), out
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "what they check is to come from pr/3 (their `entry:`)." in text.splitlines()[0], text
    assert f"  not judged: the asserts on a.py, which does not parse with {RUNNING}, the Python carrytool runs on" \
        in text.splitlines(), text


def test_a_flaky_command_is_not_confirmed_and_its_cache_is_dropped(cli: Cli, small: Small, tmp_path: Path) -> None:
    """An older note: a flaky `--run` gave a confident wrong answer, and its failures stayed in the cache.
    The command runs again on the trees the answer rests on (the last good and the first bad prefix): a
    deterministic one confirms; one that passes the second time on a tree is said to be flaky (exit 0 still:
    the search finished), and the first bad tree's cached verdict is dropped. A rerun answered from the cache
    runs nothing, confirms nothing."""
    build(small, 6, {4: {"a.py": "def g():\n    return 1\n"}})
    steady = "grep -q 'def f' a.py"
    code, out = bisect(cli, small, "--run", steady)
    assert code == 0 and out["first_bad"] == "pr/4" and out["confirmed"] is True, out
    code, again = bisect(cli, small, "--run", steady)
    assert again["cached"] == again["probes"] and again["confirmed"] is None
    seen = tmp_path / "seen"
    seen.mkdir()
    # a tree's first run is the real check; the second always passes
    flaky = f"f={seen}/$CARRYTOOL_BISECT_TREE; if [ -e $f ]; then exit 0; fi; touch $f; grep -q 'def f' a.py"
    code, out = bisect(cli, small, "--run", flaky)
    assert code == 0 and out["first_bad"] == "pr/4" and out["confirmed"] is False, out
    assert out["next"] is None            # helper-97: no next step (`explain`, `union new`) on an untrusted answer
    bad_tree = small.work.git("rev-parse", out["chain"][3]["commit"] + "^{tree}")
    good_tree = small.work.git("rev-parse", out["chain"][2]["commit"] + "^{tree}")
    cache = json.loads((small.work.path / "carrytool" / "bisect-cache.json").read_text())["verdicts"]
    trees = {key.split()[0] for key, row in cache.items() if row["command"] == flaky}
    assert good_tree in trees and bad_tree not in trees, (trees, bad_tree)
    # a rerun slower than --timeout says nothing of flakiness (helper-95: reported flaky, a good verdict dropped)
    slow = seen / "slow"
    slow.mkdir()
    slower = f"f={slow}/$CARRYTOOL_BISECT_TREE; [ -e $f ] && sleep 3; touch $f; grep -q 'def f' a.py"
    code, out = bisect(cli, small, "--run", slower, "--timeout", "1")
    assert code == 0 and out["first_bad"] == "pr/4" and out["confirmed"] is None, out


# ---- run_in_tree: the shell's exit is the verdict; nothing it started outlives it (helper-108) ----------

def _tree(tmp_path: Path) -> tuple[Git, str]:
    repo = init_repo(tmp_path / "r")
    commit = repo.commit({"a.txt": "a\n"}, "a")
    git = Git(repo.path)
    return git, git.tree_of(commit)


def test_a_job_left_in_the_background_neither_holds_the_verdict_nor_outlives_it(tmp_path: Path) -> None:
    """A background job kept the output pipe open: every tree was a timeout (a wrong answer), and one that
    left its session hung the run past --timeout; then it ran on in the tree carrytool removed."""
    git, tree = _tree(tmp_path)
    marker = tmp_path / "late"
    with git:
        started = time.monotonic()
        verdict = run_in_tree(git, tree, f"(sleep 2; echo late > {marker}) & echo done; exit 3", timeout=20)
        assert time.monotonic() - started < 10
        assert (verdict.exit_code, verdict.timed_out, verdict.output) == (3, False, "done")
        escaped = run_in_tree(git, tree, "setsid sleep 30 & exit 0", timeout=20)
        assert escaped.exit_code == 0 and time.monotonic() - started < 15
    time.sleep(2.5)
    assert not marker.exists()


def test_output_without_end_is_read_from_its_end(tmp_path: Path) -> None:
    """50 MB of output was kept whole, in memory, in the verdict cache and the JSON."""
    git, tree = _tree(tmp_path)
    with git:
        verdict = run_in_tree(git, tree, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last; exit 1", 20)
    assert verdict.exit_code == 1 and verdict.output.endswith("\nlast")
    assert len(verdict.output) <= TAIL_BYTES + 3 and verdict.output.startswith("...x")


def test_an_interrupt_kills_the_command_and_removes_its_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C never reaches a command in a session of its own: it ran on after carrytool exited, in a
    removed tree."""
    git, tree = _tree(tmp_path)
    marker = tmp_path / "ran"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    real_wait = subprocess.Popen.wait

    def interrupted(self: subprocess.Popen, timeout: float | None = None) -> int:
        if timeout == 20:
            raise KeyboardInterrupt
        return real_wait(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", interrupted)
    with git, pytest.raises(KeyboardInterrupt):
        run_in_tree(git, tree, f"sleep 1; echo ran > {marker}", timeout=20)
    monkeypatch.undo()
    time.sleep(1.5)
    assert not marker.exists() and list((tmp_path / "tmp").iterdir()) == []


def test_git_in_the_command_finds_no_repository_above_the_tree(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With TMPDIR inside a repository, the command's git worked on the user's repository."""
    git, tree = _tree(tmp_path)
    user = init_repo(tmp_path / "user")
    (user.path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(user.path / "tmp"))
    with git:
        verdict = run_in_tree(git, tree, "git rev-parse --show-toplevel", timeout=20)
    assert verdict.exit_code != 0 and "not a git repository" in verdict.output, verdict


def test_sigterm_is_an_interrupt_that_cleans_up(small: Small, tmp_path: Path) -> None:
    """helper-108: a cancelled CI job (SIGTERM) ended carrytool on the spot: bisect's temporary tree stayed,
    and its command ran on. It is handled as Ctrl-C is: exit 130, everything cleaned."""
    build(small, 2, {})
    marker, tmp = tmp_path / "ran", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "carrytool", "bisect", "-m", str(small.manifest_path), "--repo",
                             str(small.work.path), "--run", f"sleep 3; echo ran > {marker}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith("carrytool-bisect-") for p in tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)                                           # the command started in the tree
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert err.startswith("carrytool: interrupted (SIGTERM); the verdicts found so far stay in its cache"), err
    time.sleep(3.5)
    assert not marker.exists() and not [p for p in tmp.iterdir() if p.name.startswith("carrytool-bisect-")]


# ---- an assert that fails on upstream by design (it guards a carry): a good base first (helper-146) --------

STEP = "def step(opt, fast):\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    opt.step()\n    return a\n"
STEP_BARRIER = STEP.replace("    opt.step()\n", "    barrier()\n    opt.step()\n") + "\n\ndef barrier():\n    pass\n"
STEP_FAST = STEP.replace("    a = 1\n", "    a = 1\n    if fast:\n        opt.step()\n        return a\n")
BARRIER = {"name": "barrier-before-step", "file": "a.py", "in": "step", "order": ["barrier", "opt.step"]}


def build_guarded(small: Small, count: int, culprit: int, *, carry_files: dict | None = None,
                  assert_extra: dict | None = None) -> Path:
    """COUNT PRs (pr/CULPRIT adds a path to opt.step() without the barrier), then carry/barrier, which adds
    the barrier before opt.step() (CARRY_FILES: what it commits instead), guarded by BARRIER."""
    base = small.up.commit({"a.py": STEP}, "base with step", parent=small.base, ref="refs/heads/main")
    for n in range(1, count + 1):
        small.up.commit({"a.py": STEP_FAST} if n == culprit else {f"f{n}.txt": f"{n}\n"}, f"pr {n}", parent=base,
                        ref=f"refs/pull/{n}/head")
    carry = small.up.commit(carry_files or {"a.py": STEP_BARRIER}, "carry: barrier", parent=base,
                            ref="refs/heads/barrier")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/barrier:refs/heads/barrier")
    entries = [*({"pr": n} for n in range(1, count + 1)), {"carry": "barrier", "commit": carry},
               {"carry": "docs", "commit": small.up.commit({"docs/d.txt": "d\n"}, "carry: docs", parent=base,
                                                          ref="refs/heads/docs")}]
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/docs:refs/heads/docs")
    return small.manifest(entries, asserts=[{**BARRIER, **(assert_extra or {})}])


@pytest.mark.parametrize("extra", [{}, {"entry": "carry/barrier"}])
def test_an_assert_guarding_a_carry_finds_the_pr_that_broke_it(cli: Cli, small: Small, extra: dict) -> None:
    """helper-146 (DeepSpeed): `barrier-before-step` guards carry/step-barrier, so it fails on upstream by
    design; pr/6950 added a path to optimizer.step() without the barrier. bisect said "upstream itself fails"
    (quoting upstream's message), and with `entry: carry/step-barrier` blamed the carry, applied and unchanged:
    "the entry no longer provides it". It starts from a base that passes (the assert's entry, else the
    fork's carries) and finds pr/3, breaking the check with carry/barrier."""
    build_guarded(small, 8, 3, assert_extra=extra)
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/3" and out["alone_bad"] is False, out
    assert out["interacts_with"] == ["carry/barrier"] and out["upstream"]["bad"] is True
    assert "barrier" in out["checks"][0]["message"] and "never called" not in out["checks"][0]["message"], out
    assert out["next"].startswith("carrytool explain carry/barrier pr/3 "), out
    how = "entry" if extra else "carries"
    assert out["bases"][-1] == {"from": how, "entries": ["carry/barrier"] if extra else ["carry/barrier",
                                                                                       "carry/docs"], "bad": False,
                                "unapplied": []}
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "First bad entry: pr/3 (3 of 10 in the chain)" in text, text
    assert "it breaks the check together with: carry/barrier" in text
    assert "no longer provides" not in text and "itself fails" not in text


def test_a_guard_nothing_makes_hold_says_upstream_fails_with_the_tips_message(cli: Cli, small: Small) -> None:
    """No base passes (the carry lost its barrier): upstream fails, and the FAIL line is the tip's message,
    upstream's (a different one) beside it, labelled."""
    late = STEP.replace("    opt.step()\n", "    opt.step()\n    barrier()\n") + "\n\ndef barrier():\n    pass\n"
    build_guarded(small, 4, 2, carry_files={"a.py": late}, assert_extra={"entry": "carry/barrier"})
    code, out = bisect(cli, small)
    assert code == 0 and out["first_bad"] is None and out["upstream"]["bad"] is True, out
    assert all(base["bad"] for base in out["bases"]) and out["bases"][0]["from"] == "entry", out
    assert "never called" not in out["checks"][0]["message"], out         # the tip's, not upstream's
    assert "never called" in out["upstream"]["checks"][0]["message"], out
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "upstream + carry/barrier (with what it is built on) fails them too" in text, text


def test_a_good_prefix_the_binary_search_stepped_over_is_found(cli: Cli, small: Small) -> None:
    """No carry, no `entry:`: pr/6 adds the barrier, pr/7 adds a path without it; the binary search probes
    prefixes 4, 2, 1 (all bad, as upstream is) and stepped over the good prefix 6. The prefixes that change
    the assert's file are tried, smallest first."""
    base = small.up.commit({"a.py": STEP}, "base with step", parent=small.base, ref="refs/heads/main")
    for n in range(1, 9):
        files = {6: {"a.py": STEP_BARRIER}, 7: {"a.py": STEP_FAST}}.get(n, {f"f{n}.txt": f"{n}\n"})
        small.up.commit(files, f"pr {n}", parent=base, ref=f"refs/pull/{n}/head")
    small.manifest([{"pr": n} for n in range(1, 9)], asserts=[BARRIER])
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "pr/7" and out["interacts_with"] == ["pr/6"], out
    assert out["bases"] == [{"from": "prefix", "entries": [f"pr/{n}" for n in range(1, 7)], "bad": False,
                             "unapplied": []}], out


def build_stacked_carry(small: Small, *, rebased: bool = False) -> None:
    """[pr/1 (a = 1 -> a = 10), pr/2, carry/fast, carry/barrier], asserted by BARRIER (no `entry:`): carry/fast,
    committed on pr/1's head, adds a path to opt.step() without the barrier. REBASED: on a commit with pr/1's
    change that is not pr/1's head (pr/1 pushed again since), so its history does not say it needs pr/1."""
    base = small.up.commit({"a.py": STEP}, "base with step", parent=small.base, ref="refs/heads/main")
    p1 = STEP.replace("    a = 1\n", "    a = 10\n")
    pr1 = small.up.commit({"a.py": p1}, "pr 1", parent=base, ref="refs/pull/1/head")
    small.up.commit({"f2.txt": "2\n"}, "pr 2", parent=base, ref="refs/pull/2/head")
    under = small.up.commit({"a.py": p1}, "pr 1, first push", parent=base) if rebased else pr1
    fast = small.up.commit({"a.py": p1.replace("    a = 10\n", "    a = 10\n    if fast:\n        opt.step()\n"
                                                               "        return a\n")},
                           "carry: fast", parent=under, ref="refs/heads/fast")
    bar = small.up.commit({"a.py": STEP_BARRIER}, "carry: barrier", parent=base, ref="refs/heads/barrier")
    for name in ("fast", "barrier"):
        small.work.git("fetch", "-q", str(small.up.path), f"refs/heads/{name}:refs/heads/{name}")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "fast", "commit": fast}, {"carry": "barrier", "commit": bar}],
                   asserts=[BARRIER])


def test_a_carry_built_on_a_pr_is_searched_with_it_and_blamed(cli: Cli, small: Small) -> None:
    """helper-153: carry/fast is built on pr/1 (its commit's parent is pr/1's head). The fork's carries were
    tried as the base without pr/1, carry/fast did not apply there, so the base was really upstream +
    carry/barrier, called "upstream + carry/fast, carry/barrier passes"; adding pr/1 made carry/fast apply and
    pr/1 was blamed. A base holds what its entries are built on (here it then fails: carry/fast is in it);
    the carries built on no PR pass, and carry/fast is blamed, with pr/1 and carry/barrier."""
    build_stacked_carry(small)
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "carry/fast" and out["alone_bad"] is False, out
    assert out["interacts_with"] == ["pr/1", "carry/barrier"], out
    assert out["bases"] == [
        {"from": "carries", "entries": ["pr/1", "carry/fast", "carry/barrier"], "bad": True, "unapplied": []},
        {"from": "carries-alone", "entries": ["carry/barrier"], "bad": False, "unapplied": []}], out
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "First bad entry: carry/fast (3 of 4 in the chain)" in text, text
    assert "it breaks the check together with: pr/1, carry/barrier" in text, text
    assert "upstream + carry/barrier (the fork's carries built on no PR that apply on upstream) passes" in text, text
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, again = bisect(cli, small, "--rev", report["result"]["sha"])    # the chain read from its trailers
    assert (again["first_bad"], again["interacts_with"], again["bases"]) == \
        (out["first_bad"], out["interacts_with"], out["bases"]), again


def test_a_base_an_entry_of_which_does_not_apply_is_skipped(cli: Cli, small: Small) -> None:
    """carry/fast was made on pr/1's first push: its history does not name pr/1, and without pr/1 it does not
    apply. The carries' base (carry/fast, carry/barrier) is then not the tree it says: skipped, unjudged,
    with why; the carries that apply without the PRs pass, and carry/fast is blamed."""
    build_stacked_carry(small, rebased=True)
    code, out = bisect(cli, small)
    assert code == 0, out
    assert out["first_bad"] == "carry/fast" and out["interacts_with"] == ["pr/1", "carry/barrier"], out
    assert out["bases"] == [
        {"from": "carries", "entries": ["carry/fast", "carry/barrier"], "bad": None,
         "unapplied": [{"id": "carry/fast", "reason": "conflict"}]},
        {"from": "carries-alone", "entries": ["carry/barrier"], "bad": False, "unapplied": []}], out
    text = cli("bisect", "-m", small.manifest_path, "--repo", small.work.path).stdout
    assert "upstream + carry/fast, carry/barrier (the fork's carries) skipped: carry/fast does not apply there " \
           "(conflict)" in text, text
