"""`carrytool union`: compose, conflict, resolve, continue, refold with recorded resolutions, abort, status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from carrytool.demo import pr_texts, sources
from carrytool.demo.scenario import Scenario
from carrytool.errors import InputError
from carrytool.manifest.edit import update_union
from carrytool.manifest.load import load_manifest
from carrytool.union.resolutions import (
    NO_LINES,
    ConflictHunk,
    apply_resolutions,
    extract_resolutions,
    split_conflicts,
)
from carrytool.union.store import Store
from tests.conftest import Cli
from tests.gitrepo import Repo

NAME = "wake-path-union"


def union(cli: Cli, demo: Scenario, *args: str):
    return cli("union", *args, "-m", demo.manifest, "--repo", demo.work)


def scratch(demo: Scenario) -> Path:
    return demo.work / "carrytool" / "union" / NAME / "tree"


def resolve_worker(path: Path) -> None:
    """The seed's resolution: the handshake re-expressed against backend.resume, and both helpers kept."""
    parts = split_conflicts(path.read_bytes())
    out, n = [], 0
    for part in parts:
        if isinstance(part, ConflictHunk):
            n += 1
            out.append(pr_texts.UNION_WAKE.rstrip("\n").encode() if n == 1 else part.ours + b"\n\n" + part.theirs)
        else:
            out.append(part)
    path.write_bytes(b"\n".join(out))


def compose_by_hand(cli: Cli, demo: Scenario) -> str:
    result = union(cli, demo, "compose", NAME)
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "vllm/v1/worker/gpu_worker.py  pr/45398, pr/45612" in result.stdout
    assert f"carrytool union continue {NAME}" in result.stdout and str(scratch(demo)) in result.stdout
    worker = scratch(demo) / sources.WORKER
    assert b"<<<<<<< the union so far (upstream main, pr/45398, pr/45619, pr/45620)" in worker.read_bytes()
    assert b">>>>>>> pr/45612" in worker.read_bytes()
    resolve_worker(worker)
    result = union(cli, demo, "continue", NAME)    # the runner adjacency: from the demo's resolution store
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 conflicted file resolved from the store" in result.stdout
    assert "manifest updated in place" in result.stdout
    # the fold merged onto upstream alone: the next step shows it among the other entries (helper-80: it
    # said "sync applies it", and sync then skipped it for a conflict with an earlier fork carry)
    assert f"(the fold merged it onto upstream alone): carrytool sync --dry-run -m {demo.manifest} --repo " \
           f"{demo.work}\n" in result.stdout
    return load_manifest(demo.manifest).entry(f"carry/{NAME}").commit or ""  # type: ignore[union-attr]


def test_without_the_store_the_adjacency_stops_the_fold_too(cli: Cli, demo: Scenario) -> None:
    import shutil

    shutil.rmtree(demo.manifest.parent / "resolutions")
    assert union(cli, demo, "compose", NAME).exit_code == 3
    resolve_worker(scratch(demo) / sources.WORKER)
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code == 3 and "vllm/v1/worker/gpu_model_runner.py  pr/44778, pr/45617" in result.stdout


def test_compose_resolve_continue_then_sync_is_green(cli: Cli, demo: Scenario, report_schema: dict) -> None:
    before = demo.manifest.read_text()
    commit = compose_by_hand(cli, demo)
    after = demo.manifest.read_text()
    assert commit != demo.union and f"commit: {commit}" in after
    assert "# carrytool demo manifest" in after and after.count("\n") == before.count("\n")
    assert f"{{pr: 45610, head: {demo.prs[45610][2]}}}" in after
    assert f"{{pr: 45398, head: {demo.prs[45398][0]}}}" in after
    store = demo.manifest.parent / "resolutions"
    meta = json.loads((store / "store.json").read_text())
    assert meta["git"] and meta["store"] == 1
    assert len(list((store / NAME).glob("*.json"))) == 3
    for path in (store / NAME).glob("*.json"):      # each record says what it resolves, for its reviewer
        record = json.loads(path.read_text())
        assert path.name == record["key"][:16] + ".json" and record["file"] in (sources.WORKER, sources.RUNNER)
        assert record["entries"] and isinstance(record["resolution"], str)
    parents = subprocess.run(["git", "log", "-1", "--format=%P", commit], cwd=demo.work, capture_output=True,
                             text=True).stdout.split()
    assert parents == [demo.upstream_head]
    message = subprocess.run(["git", "log", "-1", "--format=%B", commit], cwd=demo.work, capture_output=True,
                             text=True).stdout
    assert message.startswith("carry: wake-path-union: wake-path union\n")
    assert f"  #45610 PP cudagraph consensus, hoisted before irecv_tensor_dict\n      head {demo.prs[45610][2]}\n" \
        in message
    assert "vllm/device_allocator/cumem.py: excluded by the manifest" in message and "Carry-Union: wake-path-union" in message
    assert not scratch(demo).exists()
    code, report = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0 and all(a["ok"] for a in report["asserts"])
    assert not [w for w in report["warnings"] if w["kind"] == "stale-fold"]


def test_refold_after_a_pr_moved_needs_no_prompt(cli: Cli, demo: Scenario) -> None:
    first = compose_by_hand(cli, demo)
    # pr/45620 gets a new commit upstream (a comment); the recorded resolutions still apply
    old = demo.prs[45620][-1]
    subprocess.run(["git", "fetch", "-q", str(demo.upstream), f"{old}:refs/tmp"], cwd=demo.work, check=True)
    tree = subprocess.run(["git", "rev-parse", f"{old}^{{tree}}"], cwd=demo.upstream, capture_output=True,
                          text=True).stdout.strip()
    moved = subprocess.run(["git", "commit-tree", tree, "-p", old, "-m", "review: no code change"],
                           cwd=demo.upstream, capture_output=True, text=True,
                           env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
                                "GIT_COMMITTER_EMAIL": "x@x", "GIT_AUTHOR_DATE": "1790000000 +0000",
                                "GIT_COMMITTER_DATE": "1790000000 +0000", "PATH": "/usr/bin:/bin"}).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/pull/45620/head", moved], cwd=demo.upstream, check=True)
    status = cli("union", "status", NAME, "-m", demo.manifest, "--repo", demo.work)
    assert f"stale: pr/45620 folded at {old[:12]}, now {moved[:12]}" in status.stdout
    result = union(cli, demo, "compose", NAME)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "2 conflicted files resolved from the store" in result.stdout
    second = load_manifest(demo.manifest).entry(f"carry/{NAME}").commit
    assert second not in (first, demo.union)
    assert f"{{pr: 45620, head: {moved}}}" in demo.manifest.read_text()
    code, report = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0 and report["ok"]
    status = cli("union", "status", NAME, "-m", demo.manifest, "--repo", demo.work)
    assert status.stdout.splitlines()[0].endswith(": up to date")       # on the union's own line


def test_markers_left_in_the_scratch_refuse_to_continue(cli: Cli, demo: Scenario) -> None:
    assert union(cli, demo, "compose", NAME).exit_code == 3
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code == 3 and "conflict markers remain in vllm/v1/worker/gpu_worker.py" in result.stderr
    result = union(cli, demo, "compose", NAME)                  # a fold is already under way: held, as a lock
    assert result.exit_code == 4 and "is already under way" in result.stderr, result.stderr
    result = union(cli, demo, "abort", NAME)
    assert result.exit_code == 0 and not scratch(demo).exists()
    assert union(cli, demo, "continue", NAME).exit_code == 2


@pytest.mark.parametrize("how", ["moved", "backup"])
def test_markers_taken_to_another_file_refuse_to_continue(cli: Cli, demo: Scenario, how: str) -> None:
    """A conflicted file moved elsewhere in the scratch tree (its old path deleted), or a merge tool's
    backup of it (`.orig`) beside the resolved file: its markers went along, and continue took the file
    into the union as it was, markers and all (only the conflicted paths were checked)."""
    assert union(cli, demo, "compose", NAME).exit_code == 3
    worker = scratch(demo) / sources.WORKER
    other = worker.with_name(worker.name + ".orig" if how == "backup" else "worker_moved.py")
    other.write_bytes(worker.read_bytes())
    if how == "backup":
        resolve_worker(worker)
    else:
        worker.unlink()
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code == 3, result.stdout + result.stderr
    named = other.relative_to(scratch(demo)).as_posix()
    # the backup is refused as the leftover it is (remove it, or --take it: its markers then refuse; h226)
    assert (f"{named} (a merge backup); nothing was recorded" if how == "backup" else
            f"conflict markers remain in {named}") in result.stderr
    if how == "moved":
        result = union(cli, demo, "abort", NAME)
        assert result.exit_code == 0 and other.exists(), result.output      # a file carrytool did not write
        return
    other.unlink()                                  # the backup removed: the fold goes on
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code in (0, 3) and "conflict markers remain" not in result.stderr, result.stderr


def test_marker_lines_upstream_already_has_do_not_refuse_to_continue(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    """A file of upstream's holding a line like the stop's markers (documentation of carrytool's output)
    is shown as upstream has it: it refused every continue, with no way out but to edit it (helper-81).
    Only more of them than the fold showed there refuse."""
    doc = b">>>>>>> pr/45612\n<<<<<<< the union so far (upstream main, pr/45398, pr/45619, pr/45620)\n"
    clone = tmp_path / "up"
    env = {"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x",
           "GIT_AUTHOR_DATE": "1790000000 +0000", "GIT_COMMITTER_DATE": "1790000000 +0000", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "clone", "-q", str(demo.upstream), str(clone)], check=True, env=env)
    (clone / "docs").mkdir(exist_ok=True)
    (clone / "docs" / "markers.md").write_bytes(doc)
    for args in (["add", "docs/markers.md"], ["commit", "-q", "-m", "docs: markers"], ["push", "-q", "origin", "HEAD:main"]):
        subprocess.run(["git", *args], cwd=clone, check=True, env=env)
    assert union(cli, demo, "compose", NAME).exit_code == 3
    assert (scratch(demo) / "docs" / "markers.md").read_bytes() == doc
    resolve_worker(scratch(demo) / sources.WORKER)
    (scratch(demo) / "docs" / "markers.md").write_bytes(doc + doc.splitlines(keepends=True)[0])   # one more
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code == 3 and "conflict markers remain in docs/markers.md" in result.stderr, result.stderr
    (scratch(demo) / "docs" / "markers.md").write_bytes(doc)
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code in (0, 3) and "conflict markers remain" not in result.stderr, result.stderr


def test_status_reports_stale_folds_and_what_a_refold_needs(cli: Cli, demo: Scenario) -> None:
    code = cli("union", "status", "-m", demo.manifest, "--repo", demo.work, "--format", "json")
    [report] = json.loads(code.stdout)
    assert report["entry"] == f"carry/{NAME}" and report["commit"] == demo.union
    assert report["stale"] == [{"pr": 45610, "folded": demo.prs[45610][1], "current": demo.prs[45610][2]}]
    assert [c["file"] for c in report["refold"]["needs_resolution"]] == [sources.WORKER]
    assert report["merged_upstream"] == []


def test_each_recorded_hunk_applies_on_its_own() -> None:
    conflicted = b"a\n<<<<<<< x\none\n=======\ntwo\n>>>>>>> y\nb\n<<<<<<< x\nthree\n=======\nfour\n>>>>>>> y\nc"
    resolved = b"a\nONE-TWO\nb\nTHREE-FOUR\nc"
    records = extract_resolutions(conflicted, resolved)
    assert records is not None and sorted(records.values()) == [b"ONE-TWO", b"THREE-FOUR"]
    assert apply_resolutions(conflicted, records) == (resolved, [])
    swapped = conflicted.replace(b"one\n=======\ntwo", b"two\n=======\none")     # sides swapped: same key
    assert apply_resolutions(swapped, records)[0] == resolved
    changed = conflicted.replace(b"four", b"FOUR!")
    content, missing = apply_resolutions(changed, records)       # the other hunk is still resolved
    assert content == b"a\nONE-TWO\nb\n<<<<<<< x\nthree\n=======\nFOUR!\n>>>>>>> y\nc" and len(missing) == 1


def test_resolutions_add_no_line_where_a_conflict_starts_the_file_or_is_taken_out() -> None:
    """A conflict on the file's first line, two conflicts with nothing between them, and a hunk resolved to
    nothing (both sides taken out): the file is rebuilt line for line, with no empty line of its own where
    the common text around a conflict is empty (a new user's trial found one at the top of a file both PRs
    added, in the scratch tree and then in the union)."""
    first = b"<<<<<<< x\none\n=======\ntwo\n>>>>>>> y\n\nClosing\n"
    assert apply_resolutions(first, {}) == (first, [ConflictHunk(b"one", b"two").key])
    key = ConflictHunk(b"one", b"two").key
    assert apply_resolutions(first, {key: b"one"})[0] == b"one\n\nClosing\n"
    assert apply_resolutions(first, {key: NO_LINES})[0] == b"\nClosing\n"
    assert apply_resolutions(first, {key: b""})[0] == b"\n\nClosing\n"           # one empty line
    middle = b"a\n<<<<<<< x\none\n=======\ntwo\n>>>>>>> y\nb\n"
    assert apply_resolutions(middle, {key: NO_LINES})[0] == b"a\nb\n"
    assert apply_resolutions(middle, {key: b""})[0] == b"a\n\nb\n"
    # taken out and one empty line are told apart when recorded, and put back as recorded
    assert extract_resolutions(middle, b"a\nb\n") == {key: NO_LINES}
    assert extract_resolutions(middle, b"a\n\nb\n") == {key: b""}
    assert extract_resolutions(middle, b"a\nb\n")[key] is NO_LINES
    assert extract_resolutions(first, b"\none\n\nClosing\n") == {key: b"\none"}        # a leading empty line kept
    assert apply_resolutions(middle, {key: b"one\ntwo"})[0] == b"a\none\ntwo\nb\n"
    adjacent = b"<<<<<<< x\none\n=======\ntwo\n>>>>>>> y\n<<<<<<< x\nthree\n=======\nfour\n>>>>>>> y\n"
    assert apply_resolutions(adjacent, {})[0] == adjacent
    assert apply_resolutions(adjacent, {key: b"ONE"})[0] == \
        b"ONE\n<<<<<<< x\nthree\n=======\nfour\n>>>>>>> y\n"


def test_a_record_of_an_older_store_at_the_top_of_a_file_is_put_back_as_then(tmp_path: Path) -> None:
    """A store without `lines` (before 0.2) is read as that version wrote it and put back as it put it
    back, its empty line above a hunk on a file's first line included: a union folded then keeps its
    bytes on a refold. Its `lines`, when present, must match."""
    store = Store(tmp_path / "resolutions", "2.39.5")
    key = ConflictHunk(b"one", b"two").key
    folder = tmp_path / "resolutions" / "u"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text(json.dumps({"key": key, "file": "f.txt", "resolution": "one\ntwo"}))
    first = b"<<<<<<< x\none\n=======\ntwo\n>>>>>>> y\n\nClosing\n"
    assert apply_resolutions(first, store.load("u"))[0] == b"\none\ntwo\n\nClosing\n"
    (folder / "a.json").write_text(json.dumps({"key": key, "file": "f.txt", "resolution": "one\ntwo", "lines": 2}))
    assert apply_resolutions(first, store.load("u"))[0] == b"one\ntwo\n\nClosing\n"
    (folder / "a.json").write_text(json.dumps({"key": key, "file": "f.txt", "resolution": "", "lines": 0}))
    assert store.load("u")[key] is NO_LINES
    (folder / "a.json").write_text(json.dumps({"key": key, "file": "f.txt", "resolution": "one", "lines": 3}))
    with pytest.raises(InputError, match="'lines' must be the number of lines"):
        store.load("u")


def test_manifest_edits_keep_comments_and_layout() -> None:
    text = ("# top comment\nversion: 1\nentries:\n  - pr: 1   # keep me\n  - carry: u\n    commit: abcdef0\n"
            "    supersedes:\n      - 1\n      - {pr: 2, paths: [a.py]}\n      - pr: 3\n        paths: [b.py]\n"
            "      - {pr: 4, head: 1234567}\n")
    out = update_union(text, 1, commit="f" * 40, folded={1: "a" * 40, 2: "b" * 40, 3: "c" * 40, 4: "d" * 40})
    assert out == ("# top comment\nversion: 1\nentries:\n  - pr: 1   # keep me\n  - carry: u\n"
                   f"    commit: {'f' * 40}\n    supersedes:\n      - {{pr: 1, head: {'a' * 40}}}\n"
                   f"      - {{pr: 2, paths: [a.py], head: {'b' * 40}}}\n      - pr: 3\n        head: {'c' * 40}\n"
                   f"        paths: [b.py]\n      - {{pr: 4, head: {'d' * 40}}}\n")


def test_a_patch_union_is_written_as_a_patch_file(cli: Cli, demo: Scenario) -> None:
    text = demo.manifest.read_text()
    start = text.index("    commit: ", text.index("carry: wake-path-union"))
    end = text.index("\n", start)
    demo.manifest.write_text(text[:start] + "    patch: unions/wake-path-union.patch" + text[end:])
    compose_by_hand(cli, demo)
    patch = demo.manifest.parent / "unions" / "wake-path-union.patch"
    assert patch.read_text().startswith("From 0000000000000000000000000000000000000000 ")
    # the same bytes from any git: no "-- " signature naming the git version, no diffstat
    assert "\n-- \n" not in patch.read_text() and " files changed" not in patch.read_text()
    assert "patch: unions/wake-path-union.patch" in demo.manifest.read_text()
    code, report = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0, report
    assert next(e for e in report["entries"] if e["id"] == f"carry/{NAME}")["status"] == "applied"


def test_a_patch_union_s_file_names_its_blobs_in_full_whatever_the_repository(cli: Cli, demo: Scenario) -> None:
    """The patch file's `index` lines hold full blob names: git shortens them to a length that grows with the
    repository's object count, so the same fold wrote other bytes in another clone (a fork's CI clone against a
    maintainer's), and a name short enough to be ambiguous in a larger clone left sync's
    `git apply --build-fake-ancestor` without the patch's own base there."""
    text = demo.manifest.read_text()
    start = text.index("    commit: ", text.index("carry: wake-path-union"))
    end = text.index("\n", start)
    demo.manifest.write_text(text[:start] + "    patch: unions/wake-path-union.patch" + text[end:])
    compose_by_hand(cli, demo)
    patch = (demo.manifest.parent / "unions" / "wake-path-union.patch").read_text()
    index = [line for line in patch.splitlines() if line.startswith("index ")]
    assert index and all(len(line.split()[1]) == 2 * 40 + 2 for line in index), index


def test_status_names_upstream_commits_into_owned_files_in_full(cli: Cli, demo: Scenario) -> None:
    """Drift: an upstream commit since the fold that touches a file the union owns, by full SHA and subject."""
    up = Repo(demo.upstream)
    text = up.show("main", sources.WORKER)
    sha = up.commit({sources.WORKER: text + "\n# upstream touched the worker\n"}, "worker: a comment",
                    parent="main", ref="refs/heads/main")
    up.commit({"README.md": "unrelated\n"}, "docs only", parent=sha, ref="refs/heads/main")
    result = cli("union", "status", "-m", demo.manifest, "--repo", demo.work, "--format", "json")
    [report] = json.loads(result.stdout)
    assert report["drift"] == [{"commit": sha, "subject": "worker: a comment"}], report["drift"]
