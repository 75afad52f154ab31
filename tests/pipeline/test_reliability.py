"""Kill it, race it, feed it garbage: nothing of the user's changes, one writer, nothing executed."""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo, many_prs, write_manifest

CARRYTOOL = [sys.executable, "-m", "carrytool"]


def run(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    return subprocess.run([*CARRYTOOL, *args], capture_output=True, text=True, env=full, **kw)


@pytest.fixture
def long_sync(tmp_path: Path) -> tuple[Path, Path]:
    """A user's non-bare repository with staged and unstaged work, and a manifest of 160 PRs."""
    up = init_repo(tmp_path / "up", bare=True)
    many_prs(up, 160)
    user = init_repo(tmp_path / "user")
    user.git("fetch", "-q", str(up.path), "main:refs/heads/work")
    user.git("checkout", "-q", "work")
    user.git("branch", "feature")
    (user.path / "src" / "f0001.py").write_text("my unstaged edit\n")
    (user.path / "staged.txt").write_text("staged\n")
    user.git("add", "staged.txt")
    manifest = write_manifest(tmp_path / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up"}, "fork": {"branch": "nightly"},
        "policy": {"on_conflict": "skip"}, "entries": [{"pr": n} for n in range(1, 161)]})
    return user.path, manifest


def user_state(repo: Path) -> tuple:
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, capture_output=True, text=True).stdout  # noqa: E731
    return (git("rev-parse", "HEAD"), git("status", "--porcelain"), git("ls-files", "-s"),
            git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/work", "refs/heads/feature"),
            (repo / "src" / "f0001.py").read_text(), git("diff"), git("diff", "--cached"))


CRASH_POINTS = ["sync:composed", "sync:lock-staged", "sync:branch-moved"]


def test_kill_9_at_every_write_leaves_the_user_repo_as_it_was(long_sync: tuple[Path, Path]) -> None:
    """Killed (SIGKILL, through the CARRYTOOL_CRASH_AT hook) at each named point of its writes: the user's
    repository is untouched, the branch is absent or whole, no lock is half-written, and the next run
    finishes the job."""
    repo, manifest = long_sync
    before = user_state(repo)
    lock = manifest.with_name("manifest.yaml.lock")
    seen = {}
    for point in CRASH_POINTS:
        proc = run("sync", "-m", str(manifest), "--repo", str(repo), "-q", env={"CARRYTOOL_CRASH_AT": point})
        assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr)
        assert user_state(repo) == before
        fsck = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
        seen[point] = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/nightly"], cwd=repo,
                                     capture_output=True, text=True).stdout.strip()
        assert not lock.exists(), f"the lock was published before the branch moved ({point})"
    done = run("sync", "-m", str(manifest), "--repo", str(repo), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert user_state(repo) == before
    sha = report["result"]["sha"]
    assert seen == {"sync:composed": "", "sync:lock-staged": "", "sync:branch-moved": sha}
    assert report["result"]["previous"] == sha and report["lock_written"] is True
    assert json.loads(lock.read_text())["result"] == sha
    assert sum(e["status"] == "applied" for e in report["entries"]) >= 40


def test_stale_lock_of_a_dead_process_is_cleared_with_a_message(small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = small.work.path / "carrytool.lock"
    lock.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "since": "then"}))
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path))
    assert result.returncode == 0 and "stale lock" in result.stderr and not lock.exists()


def test_a_live_lock_makes_the_second_run_exit_4_naming_the_holder(small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    holder = subprocess.Popen(          # a live run: it holds the lock (flock), not just a file naming it
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from carrytool.gitlayer.repolock import RepoLock\n"
         "with RepoLock(Path(sys.argv[1])):\n    print('held', flush=True); sys.stdin.readline()",
         str(small.work.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--wait", "0.3")
        assert result.returncode == 4 and f"pid {holder.pid}" in result.stderr
        assert small.branch() is None
        # -q too (helper-143: a CI log could not explain a pause of up to --wait seconds)
        waiter = subprocess.Popen([*CARRYTOOL, "sync", "-q", "-m", str(small.manifest_path), "--repo",
                                   str(small.work.path), "--wait", "120"], stderr=subprocess.PIPE, text=True,
                                  stdout=subprocess.DEVNULL)
        notice = waiter.stderr.readline()        # it says it waits once it found the lock held: release now
        assert "waiting up to 120s" in notice and f"pid {holder.pid}" in notice, notice
        assert small.branch() is None
        holder.stdin.close()
        _, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, err
        assert small.branch() is not None
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def _meet(fifo: Path, proc: subprocess.Popen) -> int:
    """Open FIFO for writing once PROC has reached its pause point and opened it (no sleeps, no timing:
    until then there is no reader and the open fails with ENXIO). Gives up only if PROC ended first."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        if proc.poll() is not None:
            raise AssertionError(f"the first run ended (exit {proc.returncode}) before its pause point")
        select.select([], [], [], 0.01)


def test_two_syncs_at_once_one_writer_one_result(long_sync: tuple[Path, Path], tmp_path: Path) -> None:
    """The second sync starts while the first is paused (CARRYTOOL_PAUSE_AT) after composing, holding the
    repository's lock: it is refused (exit 4, naming the holder) and the first one finishes alone."""
    repo, manifest = long_sync
    fifo = tmp_path / "pause"
    os.mkfifo(fifo)
    first = subprocess.Popen([*CARRYTOOL, "sync", "-m", str(manifest), "--repo", str(repo), "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "CARRYTOOL_PAUSE_AT": f"sync:composed={fifo}"})
    writer = _meet(fifo, first)
    try:
        second = run("sync", "-m", str(manifest), "--repo", str(repo), "--format", "json", "--wait", "0")
        assert second.returncode == 4 and "another carrytool run holds" in second.stderr, second.stderr
        assert f"pid {first.pid}" in second.stderr
        assert subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/nightly"], cwd=repo,
                              capture_output=True).returncode != 0        # nothing moved yet
    finally:
        os.close(writer)
    out, err = first.communicate()
    assert first.returncode == 0, err
    winner = json.loads(out)
    again = run("sync", "-m", str(manifest), "--repo", str(repo), "--format", "json", "--offline")
    assert json.loads(again.stdout)["result"]["sha"] == winner["result"]["sha"]


def test_a_transient_fetch_failure_is_retried(small: Small, tmp_path: Path) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    state = tmp_path / "failed-once"
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text("#!/bin/sh\n"
                        f"if [ ! -f {state} ]; then touch {state}; "
                        "echo 'ssh: connect to host example.invalid port 22: Connection refused' >&2; exit 255; fi\n"
                        'for last; do :; done\nexec sh -c "$last"\n')
    fake_ssh.chmod(0o755)
    small.manifest([{"pr": 1}], upstream={"url": f"ssh://git@example.invalid{small.up.path}"})
    env = {"GIT_SSH_COMMAND": str(fake_ssh), "CARRYTOOL_RETRY_DELAY": "0.05"}
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), env=env)
    assert result.returncode == 0, result.stderr
    assert state.exists() and small.branch()


def test_a_persistent_network_failure_is_exit_4_and_hides_tokens(small: Small, tmp_path: Path) -> None:
    secret = "ghp_0123456789abcdefSECRET"
    small.manifest([{"pr": 1}], upstream={"url": f"https://x-access-token:{secret}@github.invalid/o/r.git"})
    report = tmp_path / "r.json"
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--report", str(report),
                 env={"CARRYTOOL_RETRY_DELAY": "0"})
    assert result.returncode == 4 and "cannot fetch from https://***@github.invalid" in result.stderr
    assert secret not in result.stderr + result.stdout
    written = json.loads(report.read_text())
    assert written["ok"] is False and written["exit_code"] == 4 and written["error"]["kind"] == "FetchError"
    assert secret not in report.read_text()


def test_hooks_and_filters_never_run(small: Small, tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    hooks = small.work.path / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("reference-transaction", "post-update", "pre-push", "post-checkout", "post-merge"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    small.work.git("config", "filter.evil.clean", f"touch {marker}")
    small.work.git("config", "filter.evil.smudge", f"touch {marker}")
    small.pr(1, {".gitattributes": "* filter=evil\n", "b.py": "x = 10\ny = 2\nz = 3\n"})
    fork = init_repo(tmp_path / "fork", bare=True)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": "../fork"})
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--push")
    assert result.returncode == 0, result.stderr
    assert not marker.exists() and fork.ref("refs/heads/dev")


HOSTILE = [
    ("option injection in a branch name", {"fork": {"branch": "--upload-pack=touch${IFS}MARKER"}}, 2, "fork.branch"),
    ("option injection in a URL", {"upstream": {"url": "--upload-pack=touch MARKER"}}, 2, "upstream.url"),
    ("ext transport", {"upstream": {"url": "ext::sh -c touch% MARKER"}}, 2, "ext::"),
    ("path traversal", {"entries": [{"carry": "x", "patch": "../../etc/passwd"}]}, 2, "leaves the tree"),
    ("absolute owned path", {"entries": [{"pr": 1, "owns": ["/etc"]}]}, 2, "absolute"),
    ("non-numeric PR", {"entries": [{"pr": "12; rm -rf /"}]}, 2, "must be an integer"),
    ("duplicate entries", {"entries": [{"pr": 1}, {"pr": 1}]}, 2, "duplicate entry pr/1"),
    ("unknown PR", {"entries": [{"pr": 4242}]}, 2, "pr/4242"),
    ("unreachable upstream", {"upstream": {"url": "../no/such/repo"}, "entries": [{"pr": 1}]}, 4, "cannot fetch"),
    ("a ref template that escapes refs/", {"upstream": {"url": "../up", "pr_ref": "HEAD{number}"}}, 2, "pr_ref"),
]


@pytest.mark.parametrize("name,change,code,words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_manifests(small: Small, tmp_path: Path, name: str, change: dict, code: int, words: str) -> None:
    marker = tmp_path / "executed"
    change = json.loads(json.dumps(change).replace("MARKER", str(marker)))
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    data = {"version": 1, "upstream": {"url": "../up"}, "fork": {"branch": "dev"}, "entries": []}
    for key, value in change.items():
        data[key] = {**data[key], **value} if isinstance(data.get(key), dict) else value
    write_manifest(small.manifest_path, data)
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path),
                 env={"CARRYTOOL_RETRY_DELAY": "0"})
    assert result.returncode == code, result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr
    assert not marker.exists()


def test_python_object_tag_never_constructs(small: Small, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    small.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    small.manifest_path.write_text(f"version: 1\nupstream: !!python/object/apply:os.system ['touch {marker}']\n"
                                   "fork: {branch: dev}\n")
    result = run("check", "-m", str(small.manifest_path))
    assert result.returncode == 2 and "not allowed" in result.stderr and not marker.exists()


def test_cli_usage_errors_are_exit_2(cli: Cli, small: Small) -> None:
    small.manifest([])
    assert cli("sync", "--bogus").exit_code == 2
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--format", "xml").exit_code == 2
    assert cli("verify", "-m", small.manifest_path, "--rev", "x", "--path", ".").exit_code == 2


def test_a_transient_push_failure_is_retried(small: Small, tmp_path: Path) -> None:
    fork = init_repo(tmp_path / "fork", bare=True)
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    state = tmp_path / "push-failed-once"
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text("#!/bin/sh\n"
                        'for last; do :; done\n'
                        f'case "$last" in git-receive-pack*) if [ ! -f {state} ]; then touch {state}; '
                        "echo 'ssh: connect to host example.invalid port 22: Connection timed out' >&2; exit 255; fi;; esac\n"
                        'exec sh -c "$last"\n')
    fake_ssh.chmod(0o755)
    small.manifest([{"pr": 1}], fork={"branch": "dev", "url": f"ssh://git@example.invalid{fork.path}"})
    env = {"GIT_SSH_COMMAND": str(fake_ssh), "CARRYTOOL_RETRY_DELAY": "0.05"}
    result = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--push", env=env)
    assert result.returncode == 0, result.stderr
    assert state.exists() and fork.ref("refs/heads/dev") == small.branch()


def test_an_interrupt_after_the_branch_moved_says_what_moved(small: Small, tmp_path: Path) -> None:
    """helper-109: SIGTERM (a cancelled CI job) after the branch moved and before the lock was written said
    "nothing was written"; SIGTERM itself ended the run on the spot (no clean-up)."""
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.manifest([{"pr": 1}])
    fifo = tmp_path / "pause"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*CARRYTOOL, "sync", "-m", str(small.manifest_path), "--repo", str(small.work.path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "CARRYTOOL_PAUSE_AT": f"sync:branch-moved={fifo}"})
    writer = _meet(fifo, proc)
    try:
        _reading(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
    finally:
        os.close(writer)
    sha = small.branch()
    assert proc.returncode == 130 and sha is not None, err
    assert err == f"carrytool: interrupted (SIGTERM); dev was moved to {sha[:12]}, but the lock was not written: " \
                  "run sync again, which writes it\n", err
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    assert not lock.exists() and not list(lock.parent.glob(".manifest.yaml.lock.*"))    # the staged one removed
    again = run("sync", "-m", str(small.manifest_path), "--repo", str(small.work.path), "--format", "json")
    assert again.returncode == 0 and json.loads(lock.read_text())["result"] == sha


def _reading(pid: int) -> None:
    """Wait until PID sits in read(2) (Linux: /proc/PID/syscall), so that a signal interrupts that read:
    Python 3.10 runs the handler of a signal that arrived just before a blocking call only once the call
    returns, which a pause point's never does (CI: the test hung there, on 3.10 alone)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/syscall").read_text().split()[0] in ("0", "63"):     # read: x86-64, arm64
                return
        except (OSError, IndexError):
            time.sleep(0.5)            # no /proc: give it time
            return
        time.sleep(0.01)
