"""`carrytool demo` / `make demo`: the seed's story on an embedded scenario, in a temporary directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from carrytool.demo import sources
from carrytool.demo.scenario import Scenario, build
from carrytool.errors import InputError
from carrytool.gitlayer.git import Git, scrubbed_env
from carrytool.manifest.load import load_manifest

WAKE_CHECKS = ("resume-once", "wake-handshake", "no-raw-allocator-wake")
KEEP_MARKER = ".carrytool-demo"     # in a --keep directory: the demo made it, a later --keep may replace it


def _say(text: str = "") -> None:
    print(text, flush=True)


def naive_loop(sc: Scenario, order: list[int], where: Path) -> tuple[list[int], Path]:
    """The status quo: a work-tree clone, `git cherry-pick -X theirs` per PR. Returns exit codes and the tree."""
    env = scrubbed_env({"GIT_AUTHOR_NAME": "nightly", "GIT_AUTHOR_EMAIL": "nightly@localhost",
                        "GIT_COMMITTER_NAME": "nightly", "GIT_COMMITTER_EMAIL": "nightly@localhost",
                        "GIT_AUTHOR_DATE": "1781900000 +0000", "GIT_COMMITTER_DATE": "1781900000 +0000"})
    quiet = {"capture_output": True, "env": env}
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "clone", "-q", str(sc.upstream), str(where)],
                   check=True, **quiet)
    codes = []
    for number in order:
        base = sc.base
        proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "rerere.enabled=false",
                               "cherry-pick", "-X", "theirs", "--allow-empty", f"{base}..{sc.head(number)}"],
                              cwd=where, **quiet)
        codes.append(proc.returncode)
        if proc.returncode != 0:
            subprocess.run(["git", "cherry-pick", "--abort"], cwd=where, **quiet)
    return codes, where


def write_naive_manifest(sc: Scenario) -> Path:
    """The naive loop as a manifest: #45398 then #45612 with on_conflict: theirs, no union."""
    text = sc.manifest.read_text()
    head, _, rest = text.partition("entries:\n")
    _entries, _, asserts = rest.partition("asserts:\n")
    entries = "  - pr: 45398\n  - pr: 45612\n    on_conflict: theirs\n"
    asserts = "".join(line + "\n" for line in asserts.splitlines() if not line.startswith("    entry: "))
    path = sc.manifest.with_name("naive.yaml")
    path.write_text(head + "entries:\n" + entries + "asserts:\n" + asserts)
    return path


def keep_hint(root: Path) -> bool:
    """True when ROOT survives the demo (--keep), so its paths are worth printing."""
    return not root.name.startswith("carrytool-demo-")


def _check_naive(manifest_path: Path, tree: Path) -> dict[str, object]:
    from carrytool.pipeline.verify import verify_path

    report = verify_path(load_manifest(manifest_path), tree)
    return {a.name: a for a in report.asserts}


def _bisect_naive(naive: Path, sc: Scenario) -> None:
    """`carrytool bisect` on that red night: which entry lost the fix, and with whom it must be folded."""
    from carrytool.render.bisect import next_command
    from carrytool.render.commands import Invocation
    from carrytool.review.bisect import bisect, select_checks

    manifest = load_manifest(naive)
    checks = select_checks(manifest, ["resume-once"], None, 600.0)
    with Git(sc.work) as git:
        found = bisect(manifest, git, checks, offline=True)
    partners = ", ".join(found.interacts_with) or "nothing earlier"
    _say("   $ carrytool bisect -m carries/naive.yaml --repo work.git --offline --assert resume-once")
    _say(f"   first bad: {found.first_bad}, {'bad alone' if found.alone_bad else f'bad only after {partners}'} "
         f"({found.probes} probes); next: {next_command(found, Invocation())}")


def run_demo(keep: Path | None = None) -> int:
    """Build the scenario, show the naive loop losing fixes, then sync; return sync's exit code."""
    # absolute: the scenario's repositories name each other by path, and git runs inside them
    root = Path(keep).absolute() if keep else Path(tempfile.mkdtemp(prefix="carrytool-demo-"))
    if keep:
        _prepare_keep(root)
    try:
        return _story(root)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _prepare_keep(root: Path) -> None:
    """Make ROOT the --keep directory: missing, empty, or made by an earlier demo; anything else is refused."""
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise InputError(f"--keep {root} is not a directory", hint="pass a missing or empty directory")
    if root.exists() and any(root.iterdir()):
        if not (root / KEEP_MARKER).is_file():
            raise InputError(f"--keep {root} is not empty and was not made by `carrytool demo`: nothing was "
                             "touched", hint="pass a missing or empty directory")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / KEEP_MARKER).write_text("made by `carrytool demo --keep`: a later --keep of this folder replaces it\n")


def _story(root: Path) -> int:
    from carrytool.pipeline.sync import run_sync
    from carrytool.pipeline.sync_records import SyncOptions
    from carrytool.render.text import render_report

    sc = build(root)
    _say("carrytool demo: a fork of a (pared-down) vLLM that carries open upstream PRs.")
    _say(f"  upstream main {sc.upstream_head[:12]}; {len(sc.prs)} open PRs; the fork's union "
         f"{sc.union[:12]}; manifest {sc.manifest.relative_to(root)}")
    _say()
    _say("1. The status quo: `git cherry-pick -X theirs` per open PR, in a work tree.")
    _say("   #45398 (pluggable sleep backend) and #45612 (wake handshake) both rewrite Worker.wake_up.")
    lost_any = False
    for order in ([45398, 45612], [45612, 45398]):
        codes, tree = naive_loop(sc, order, root / f"naive-{order[0]}-first")
        checks = _check_naive(sc.manifest, tree)
        label = " then ".join(f"#{n}" for n in order)
        exits = ", ".join(str(c) for c in codes)
        _say(f"   {label}: cherry-pick exit codes {exits} -> the nightly calls it a success")
        for name in WAKE_CHECKS:
            outcome = checks[name]
            mark = "ok  " if outcome.ok else "LOST"
            lost_any |= not outcome.ok
            _say(f"      {mark} {name}: {outcome.message}")
    _say("   Whichever PR goes second wins the overlap; the other fix is silently gone.")
    _say()
    _say("2. The same two PRs declared in a manifest, the second with `on_conflict: theirs`:")
    naive = write_naive_manifest(sc)
    with Git(sc.work) as git:
        refused = run_sync(load_manifest(naive), git, SyncOptions(retry_delay=0.1, dry_run=True))
    for failure in refused.dropped:
        _say(f"   {failure['message']}")
    for outcome in refused.asserts:
        if outcome.name in WAKE_CHECKS and not outcome.ok:
            _say(f"   assert {outcome.name}: {outcome.message}")
    _say(f"   exit {refused.exit_code}: carrytool refuses to publish it (either order: the loss is found).")
    _bisect_naive(naive, sc)
    _say()
    _say("3. carrytool sync: the manifest declares a union that supersedes the overlapping PRs;")
    _say("   sync composes upstream + entries in memory and moves the branch only when every check holds.")
    _say(f"   $ carrytool sync -m {sc.manifest.relative_to(root)} --repo work.git")
    manifest = load_manifest(sc.manifest)
    with Git(sc.work) as git:
        report = run_sync(manifest, git, SyncOptions(retry_delay=0.1))
    render_report(report, sys.stdout)
    _say()
    with Git(sc.work) as git:
        again = run_sync(manifest, git, SyncOptions(offline=True))
    same = report.result and again.result and report.result["sha"] == again.result["sha"]
    _say(f"4. Run it again (offline): same inputs, same SHA {again.result['sha'][:12] if again.result else '?'}"
         f" -> {'no flapping' if same else 'DIFFERENT (bug!)'}.")
    _say()
    _next_night(sc, manifest, root)
    _say()
    _say("6. carrytool explain: what a reviewer sees (no branch written); the overlap map's conflicts:")
    from carrytool.review.explain import explain

    with Git(sc.work) as git:
        ex = explain(manifest, git, offline=True)
    for overlap in ex.overlap_map.overlaps:
        if overlap.kind == "conflict" and not any(e.startswith("carry/") for e in overlap.entries):
            scopes = f" ({', '.join(overlap.scopes)})" if overlap.scopes else ""
            _say(f"   {overlap.entries[0]} x {overlap.entries[1]}: {', '.join(overlap.conflict_files)}{scopes}")
    unions = [s for s in ex.suggestions if s.get("kind") == "union"]
    for suggestion in unions:
        _say(f"   suggestion: {suggestion.get('message')}")
    if not unions:
        _say("   each conflicting pair is provided by one union (carry/wake-path-union): no new union suggested.")
    _say(f"   Try: cd {root} && carrytool explain pr/45612 -m carries/manifest.yaml --repo work.git --offline"
         if keep_hint(root) else
         "   Try: carrytool demo --keep DIR, then `carrytool explain pr/45612 -m DIR/carries/manifest.yaml "
         "--repo DIR/work.git --offline`")
    if not lost_any:
        _say("   (unexpected: the naive loop lost nothing this time)")
    return report.exit_code


def _next_night(sc: Scenario, manifest, root: Path) -> None:  # noqa: ANN001 - manifest.model.Manifest
    """A PR moves overnight; sync again and show what `carrytool diff` says changed between the two locks."""
    from carrytool.gitlayer.objects import Signature
    from carrytool.pipeline.sync import run_sync
    from carrytool.pipeline.sync_records import SyncOptions
    from carrytool.render.diff import render_diff_text
    from carrytool.review.diff import diff_nights
    from carrytool.review.nights import load_night

    lock = sc.manifest.with_name(sc.manifest.name + ".lock")
    last_night = root / "last-night.lock"
    shutil.copyfile(lock, last_night)
    moved = 45554
    path = "tests/device_allocator/test_cumem_sleep_drain.py"
    with Git(sc.upstream) as up:
        head = sc.head(moved)
        tree = up.tree_of(head)
        blob = up.write_blob(b"def test_sleep_drains_in_flight_kernels_before_any_unmap():\n    ...\n")
        sig = Signature("pr-author", "pr-author@users.noreply.example.com", 1782000000)
        new_head = up.write_commit(up.edit_tree(tree, {path: ("100644", blob)}), [head], sig, sig,
                                   "Address review: a regression test for the drain\n")
        up.update_ref(f"refs/pull/{moved}/head", new_head, head, "demo: the PR moved")
    _say(f"5. The next night: #{moved} got a review fix (a new commit on its PR). sync composes it, and")
    _say("   `carrytool diff` says what changed between the two nights' locks (local objects only):")
    with Git(sc.work) as git:
        tonight = run_sync(manifest, git, SyncOptions(retry_delay=0.1))
        changes = diff_nights(git, load_night(str(last_night), manifest=sc.manifest, repo=sc.work),
                              load_night(str(lock), manifest=sc.manifest, repo=sc.work))
    _say(f"   $ carrytool diff {last_night.relative_to(root)} {lock.relative_to(root)} --repo work.git")
    for line in render_diff_text(changes).splitlines()[1:]:
        _say(f"   {line}")
    _say(f"   sync: exit {tonight.exit_code}, {manifest.fork.branch} -> "
         f"{(tonight.result or {}).get('sha', '?')[:12]}")


__all__ = ["run_demo", "naive_loop", "sources"]
