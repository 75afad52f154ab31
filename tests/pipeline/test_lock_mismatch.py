"""`sync --locked` refuses (exit 2, naming what differs) every way the lock can stop matching the manifest,
never rewrites the lock, and a plain sync writes exactly what it resolved (folded PR heads too)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Cli, Small
from tests.gitrepo import Repo, init_repo, write_manifest

A_TWO = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}
B_TEN = {"b.py": "x = 10\ny = 2\nz = 3\n"}
DOCS = {"docs/c.txt": "c\nmore\n"}
K_TWO = {"csrc/k.cu": "// kernel 2\n"}


@dataclass
class Locked:
    small: Small
    fork: Repo
    union: str            # the carried commit
    other: str            # another commit of the fork
    folded: str           # pr/3's head, folded into the union
    entries: list
    lock: Path

    def manifest(self, entries: list | None = None, **extra: object) -> Path:
        data = {"version": 1, "upstream": {"url": "../up", "branch": "main"},
                "fork": {"branch": "dev", "url": "../fork"}, "entries": entries or self.entries}
        data.update(extra)
        return write_manifest(self.small.manifest_path, data)


@pytest.fixture
def locked(cli: Cli, small: Small, tmp_path: Path) -> Locked:
    fork = init_repo(tmp_path / "fork", bare=True)
    fork.git("fetch", "-q", str(small.up.path), "main:main")
    folded = small.pr(3, K_TWO)
    union = fork.commit(K_TWO, "union of pr/3", parent="main", ref="refs/heads/union")
    other = fork.commit({"csrc/k.cu": "// kernel 3\n"}, "another", parent="main", ref="refs/heads/other")
    small.pr(1, A_TWO)
    small.pr(2, DOCS)
    small.up.commit(B_TEN, "patch source", parent="main", ref="refs/heads/p")
    small.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    (small.manifest_path.parent / "fix.patch").write_text(small.up.git("format-patch", "--stdout", "-1", "refs/heads/p")
                                                          + "\n")
    entries = [{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": union, "supersedes": [{"pr": 3, "head": folded}]},
               {"carry": "fix", "patch": "fix.patch"}]
    setup = Locked(small, fork, union, other, folded, entries, small.manifest_path.with_name("manifest.yaml.lock"))
    setup.manifest()
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0, report
    assert report["lock_written"] is True
    return setup


def test_the_lock_records_every_resolved_input(cli: Cli, locked: Locked) -> None:
    doc = json.loads(locked.lock.read_text())
    small = locked.small
    assert doc["lock"] == 1 and doc["upstream"] == {"url": "../up", "branch": "main", "sha": small.base}
    assert doc["fork"] == {"branch": "dev"}
    assert [e["id"] for e in doc["entries"]] == ["pr/1", "pr/2", "carry/union", "carry/fix"]
    assert doc["entries"][0] == {"id": "pr/1", "head": small.up.ref("refs/pull/1/head"),
                                 "settings": "0e1be00abee46782"}
    assert doc["entries"][2] == {"id": "carry/union", "commit": locked.union, "settings": "9f5d0f5facb960d3"}
    assert doc["settings"] == "20be039c903fb348"
    fix = doc["entries"][3]
    assert fix["patch"] == "fix.patch" and len(fix["sha256"]) == 64 and len(fix["commit"]) == 40
    assert doc["superseded_heads"] == {"3": locked.folded}, "a folded PR's head must be locked too"
    assert doc["result"] == small.branch()
    # nothing changed: the lock is not rewritten, and the report says so
    code, again = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and again["lock_written"] is False


def test_locked_keeps_the_folded_heads_of_the_lock(cli: Cli, locked: Locked) -> None:
    """pr/3 moves: with --locked the union's fold is judged against the locked head (no stale-fold)."""
    small = locked.small
    small.up.commit({"csrc/k.cu": "// kernel 4\n"}, "pr 3 moved", parent=locked.folded, ref="refs/pull/3/head")
    code, plain = cli.json("sync", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [w["kind"] for w in plain["warnings"]] == ["stale-fold"]
    code, report = cli.json("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["warnings"] == [], report["warnings"]
    # a lock whose folded head is the moved one: --locked judges the fold against it, and warns
    moved = small.up.ref("refs/pull/3/head")
    doc = json.loads(locked.lock.read_text())
    doc["superseded_heads"]["3"] = moved
    locked.lock.write_text(json.dumps(doc, indent=2) + "\n")
    code, report = cli.json("sync", "--locked", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [(w["kind"], w["current"]) for w in report["warnings"]] == [("stale-fold", moved)]


def _swap(entries: list) -> list:
    return [entries[1], entries[0], *entries[2:]]


MANIFEST_EDITS = {
    "reordered": (lambda s: s.manifest(_swap(s.entries)), "does not match the manifest's entries (reordered)"),
    "removed": (lambda s: s.manifest(s.entries[:1] + s.entries[2:]), "(removed pr/2)"),
    "added": (lambda s: s.manifest(s.entries + [{"pr": 3}]), "(added pr/3)"),
    "upstream-url": (lambda s: s.manifest(upstream={"url": "../up/", "branch": "main"}),
                     "was written for upstream ../up main, the manifest says ../up/ main"),
    "upstream-branch": (lambda s: s.manifest(upstream={"url": "../up", "branch": "p"}),
                        "was written for upstream ../up main, the manifest says ../up p"),
    # helper-103: a lock written for another fork branch was taken as this one's
    "fork-branch": (lambda s: s.manifest(fork={"branch": "other", "url": "../fork"}),
                    "was written for the fork branch dev, the manifest says other"),
    "pinned-head": (lambda s: s.manifest([{"pr": 1, "head": s.small.base[:10]}] + s.entries[1:]),
                    "pr/1 is pinned to"),
    "carry-commit": (lambda s: s.manifest(s.entries[:2] + [{**s.entries[2], "commit": s.other}] + s.entries[3:]),
                     "carry/union names commit"),
    "patch-changed": (lambda s: (s.small.manifest_path.parent / "fix.patch").write_text(
        (s.small.manifest_path.parent / "fix.patch").read_text() + "\n"), "fix.patch changed since the lock"),
    # helper-87: an entry disabled since the lock, --locked moved the branch and verify --rebuild passed it
    "disabled": (lambda s: s.manifest([s.entries[0], {"pr": 2, "enabled": False}] + s.entries[2:]),
                 "pr/2 was disabled since"),
    "enabled-again": (lambda s: _disabled_lock(s, 1), "pr/2 was enabled again since"),
    "title": (lambda s: s.manifest([{"pr": 1, "title": "a new title"}] + s.entries[1:]), "pr/1 changed since"),
    "on-conflict": (lambda s: s.manifest([{"pr": 1, "on_conflict": "skip"}] + s.entries[1:]), "pr/1 changed since"),
    "supersedes-paths": (lambda s: s.manifest(s.entries[:2] + [{**s.entries[2], "supersedes": [
        {"pr": 3, "head": s.folded, "paths": ["csrc/*"]}]}] + s.entries[3:]), "carry/union changed since"),
    "identity": (lambda s: s.manifest(identity={"name": "bot", "email": "bot@example.com"}),
                 "the manifest's identity or policy.precompiled changed since"),
    # helper-90: a PR touching a path made precompiled since is skipped: another commit than the lock's
    "precompiled": (lambda s: s.manifest(policy={"precompiled": {"paths": ["docs/**"]}}),
                    "the manifest's identity or policy.precompiled changed since"),
    "policy": (lambda s: s.manifest(policy={"on_conflict": "skip"}), "pr/1 changed since"),
    "lock-version": (lambda s: s.lock.write_text(s.lock.read_text().replace('"lock": 1,', '"lock": 2,')),
                     "is not a carrytool lock (version 1)"),
}


def _disabled_lock(s: Locked, index: int) -> None:
    """The lock of a night when entries[INDEX] was disabled; the manifest has it enabled since."""
    entries = list(s.entries)
    entries[index] = {**entries[index], "enabled": False}
    s.manifest(entries)
    doc = json.loads(s.lock.read_text())
    from carrytool.manifest.load import load_manifest
    from carrytool.pipeline.lock import entry_settings
    manifest = load_manifest(s.small.manifest_path)
    doc["entries"][index]["settings"] = entry_settings(manifest, manifest.entries[index])
    s.lock.write_text(json.dumps(doc, indent=2) + "\n")
    s.manifest()


@pytest.mark.parametrize("name", list(MANIFEST_EDITS))
def test_locked_refuses_a_lock_that_does_not_match(cli: Cli, locked: Locked, name: str) -> None:
    edit, message = MANIFEST_EDITS[name]
    edit(locked)
    small = locked.small
    before, lock_bytes = small.branch(), locked.lock.read_bytes()
    result = cli("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert message in " ".join(result.stderr.split()), result.stderr
    if name != "lock-version":
        assert f"hint: run `carrytool sync -m {small.manifest_path} --repo {small.work.path}` without --locked to " \
               "re-resolve, and commit the new lock" in " ".join(result.stderr.split()), result.stderr
    assert small.branch() == before and locked.lock.read_bytes() == lock_bytes


def test_locked_never_rewrites_the_lock(cli: Cli, locked: Locked) -> None:
    """A lock in another layout (and written by another git) is used as it is, byte for byte."""
    small = locked.small
    doc = json.loads(locked.lock.read_text())
    doc["git"] = "2.0.0"
    locked.lock.write_text(json.dumps(doc, indent=4))
    text = locked.lock.read_bytes()
    small.work.git("update-ref", "-d", "refs/heads/dev")
    code, report = cli.json("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["result"]["sha"] == doc["result"]
    assert locked.lock.read_bytes() == text
    assert "lock_written" not in report


def test_an_entry_disabled_since_the_lock_fails_the_rebuild_and_an_older_lock_warns(cli: Cli, locked: Locked) -> None:
    """helper-87: `verify --rebuild` passed a branch composed with an entry disabled since the lock (exit 2
    now, as `sync --locked`). A lock written before carrytool recorded settings is not checked for them:
    its result is, as before (the `lock-result` warning)."""
    small = locked.small
    locked.manifest([locked.entries[0], {"pr": 2, "enabled": False}] + locked.entries[2:])
    result = cli("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 2 and "pr/2 was disabled since" in " ".join(result.stderr.split()), result.output
    doc = json.loads(locked.lock.read_text())
    del doc["settings"]
    for item in doc["entries"]:
        del item["settings"]
    locked.lock.write_text(json.dumps(doc, indent=2) + "\n")
    code, report = cli.json("sync", "--locked", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and [w["kind"] for w in report["warnings"]] == ["lock-result"], report


def test_verify_rebuild_warns_when_the_lock_names_another_result(cli: Cli, locked: Locked) -> None:
    """helper-103: a lock whose `result` is not what its inputs compose (hand-edited, or written by an older
    carrytool) got the `lock-result` warning from `sync --locked`, and nothing from `verify --rebuild`."""
    small = locked.small
    doc = json.loads(locked.lock.read_text())
    doc["result"] = locked.other
    locked.lock.write_text(json.dumps(doc, indent=2) + "\n")
    code, report = cli.json("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["rebuild"]["ok"] is True, report
    warned = [w for w in report["warnings"] if w["kind"] == "lock-result"]
    assert [(w["locked"], w["composed"]) for w in warned] == [(locked.other, small.branch())], report["warnings"]
    result = cli("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 0 and "but the lock's result is" in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("edit", [
    {"on_conflict": "fail"}, {"on_missing": "fail"}, {"structured_merge": {"paths": []}}])
def test_an_edit_that_changes_nothing_as_it_takes_effect_is_no_drift(cli: Cli, locked: Locked, edit: dict) -> None:
    """helper-90: the digest read the fields as written: the policy's default written on an entry, or an
    empty structured_merge, was drift (exit 2) though the composed commit is the same. Read as they take effect."""
    small = locked.small
    locked.manifest([{**locked.entries[0], **edit}] + locked.entries[1:])
    code, report = cli.json("sync", "--locked", "--dry-run", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and report["result"]["sha"] == small.branch(), report.get("error")


def test_lock_hints_name_the_command_that_read_the_lock(cli: Cli, locked: Locked) -> None:
    """helper-136: `verify --rebuild` users were told to run sync "without --locked", a flag they never passed.
    sync --locked is told to drop it; verify --rebuild to run a plain sync, then its own command again."""
    small = locked.small
    where = f"-m {small.manifest_path} --repo {small.work.path}"
    locked.manifest(locked.entries + [{"pr": 3}])
    said = cli("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert said.exit_code == 2 and f"hint: run `carrytool sync {where}` without --locked to re-resolve, and commit " \
        "the new lock" in " ".join(said.stderr.split()), said.stderr
    said = cli("verify", "--rebuild", "--rev", "dev", "-m", small.manifest_path, "--repo", small.work.path)
    assert said.exit_code == 2, said.output
    assert f"hint: run `carrytool sync {where}` to re-resolve, and commit the new lock, then `carrytool verify " \
           f"--rebuild --rev dev {where}` again" in " ".join(said.stderr.split()), said.stderr
    assert "--locked" not in said.stderr
    locked.manifest()
    doc = json.loads(locked.lock.read_text())
    doc["result"] = locked.other
    locked.lock.write_text(json.dumps(doc, indent=2) + "\n")
    code, report = cli.json("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    [warned] = [w for w in report["warnings"] if w["kind"] == "lock-result"]
    assert code == 0 and warned["message"].endswith(
        "the lock is left as it is: run `carrytool sync` to write a new one, then `carrytool verify --rebuild` "
        "again"), warned["message"]
    locked.lock.unlink()
    said = cli("verify", "--rebuild", "-m", small.manifest_path, "--repo", small.work.path)
    assert said.exit_code == 2 and f"hint: run `carrytool sync {where}` once to write it, then `carrytool verify " \
        f"--rebuild {where}` again" in " ".join(said.stderr.split()), said.stderr
    said = cli("sync", "--locked", "-m", small.manifest_path, "--repo", small.work.path)
    assert said.exit_code == 2 and f"hint: run `carrytool sync {where}` without --locked once to write it" \
        in " ".join(said.stderr.split()), said.stderr
