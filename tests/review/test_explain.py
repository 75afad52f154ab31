"""`carrytool explain` on the demo scenario: the plan, the overlap map, coverage, stale folds, stories."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from carrytool.demo import sources
from carrytool.demo.scenario import Scenario
from carrytool.gitlayer.git import Git
from carrytool.manifest.load import load_manifest
from carrytool.review.explain import draft_union_message, explain, find_entries
from tests.conftest import Cli, copy_demo, isolate_env

UNION = "carry/wake-path-union"


def run(cli: Cli, demo: Scenario, *args: str) -> tuple[int, dict]:
    return cli.json("explain", "-m", demo.manifest, "--repo", demo.work, *args)


def pair(report: dict, a: str, b: str) -> dict:
    [found] = [o for o in report["overlaps"] if set(o["entries"]) == {a, b}]
    return found


def git_out(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


@pytest.fixture(scope="module")
def _explained(_demo_template: Scenario, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`explain pr/45612` on a copy of the demo, once for this file: explain writes nothing (below), so
    every test reading its report reads what its own run would have printed."""
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        code, report = run(Cli(), copy_demo(_demo_template, tmp_path_factory.mktemp("explained") / "demo"),
                           "pr/45612")
    assert code == 0, report
    return report


@pytest.fixture
def demo_json(_explained: dict) -> dict:
    return copy.deepcopy(_explained)


def test_conflict_pairs_are_the_two_wake_up_rewrites_and_the_adjacent_kv_prs(demo_json: dict) -> None:
    wake = pair(demo_json, "pr/45398", "pr/45612")
    assert wake["kind"] == "conflict" and wake["conflict_files"] == [sources.WORKER]
    assert "Worker.wake_up" in wake["scopes"] and wake["kinds"][0] == "conflict"
    kv = pair(demo_json, "pr/44778", "pr/45617")
    assert kv["kind"] == "conflict" and kv["files"] == [sources.RUNNER]
    assert kv["scopes"] == ["GPUModelRunner.post_kv_cache_wake_up"]


def test_clean_merge_in_the_same_function_is_same_scope(demo_json: dict) -> None:
    both = pair(demo_json, "pr/45619", "pr/45612")
    assert both["kind"] == "same-scope" and both["kinds"] == ["same-scope", "same-file"]
    assert both["scopes"] == ["Worker.wake_up"] and both["files"] == [sources.WORKER]


def test_identical_hunk_outranks_same_scope_and_different_functions_are_same_file(demo_json: dict) -> None:
    same = pair(demo_json, "pr/45552", "pr/45612")
    assert same["kinds"] == ["identical-hunk", "same-scope", "same-file"]
    assert same["identical_hunks"][0]["file"] == sources.CUMEM_PY
    assert same["scopes"] == ["CuMemAllocator.wake_up"]
    apart = pair(demo_json, "pr/45552", "pr/45554")
    assert apart["kind"] == "same-file" and apart["scopes"] == []


def test_a_union_overlapping_the_prs_it_provides_is_marked(demo_json: dict) -> None:
    assert pair(demo_json, "pr/45398", UNION)["provided_by"] == UNION
    assert pair(demo_json, "pr/45612", UNION)["provided_by"] == UNION     # partial: only its union paths shared
    assert "provided_by" not in pair(demo_json, "pr/45398", "pr/45612")


def test_map_includes_superseded_entries_but_only_pairs_sharing_a_file(demo_json: dict) -> None:
    ids = {i for o in demo_json["overlaps"] for i in o["entries"]}
    assert {"pr/45398", "pr/44778", "pr/45610", UNION} <= ids        # superseded PRs are in the map
    assert "pr/45565" not in ids and "pr/45499" not in ids             # nobody else touches their files
    assert demo_json["plan"]["pairs_merged"] == len(demo_json["overlaps"])
    for overlap in demo_json["overlaps"]:
        assert overlap["files"], overlap


def test_json_validates_and_keeps_sync_entries(demo_json: dict, report_schema: dict) -> None:
    jsonschema.validate(demo_json, report_schema)
    assert demo_json["command"] == "explain" and demo_json["result"]["updated"] is False
    assert [e["id"] for e in demo_json["entries"]][:3] == ["pr/45552", "pr/45554", "pr/45398"]
    assert {"entries", "warnings", "overlaps", "suggestions", "coverage", "stories"} <= set(demo_json)


def test_entries_equal_sync_dry_run(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    text = demo.manifest.read_text()
    # sync runs the asserts, whose engine may be absent here: compare on the same manifest without them
    no_asserts = demo.manifest.with_name("no-asserts.yaml")
    no_asserts.write_text(text[:text.index("asserts:")])
    code, synced = cli.json("sync", "-m", no_asserts, "--repo", demo.work, "--dry-run")
    assert code == 0, synced
    code, explained = cli.json("explain", "-m", no_asserts, "--repo", demo.work, "--offline")
    assert code == 0
    assert explained["entries"] == synced["entries"]
    assert explained["warnings"] == synced["warnings"] and explained["upstream"] == synced["upstream"]
    assert explained["result"]["sha"] == synced["result"]["sha"]


def test_writes_no_branch_and_no_lock(cli: Cli, demo: Scenario) -> None:
    code, _ = run(cli, demo)
    assert code == 0
    assert git_out(demo.work, "for-each-ref", "refs/heads").stdout == ""
    assert not demo.manifest.with_name("manifest.yaml.lock").exists()
    assert not (demo.work / "carrytool.lock").exists()


def test_stale_fold_shows_the_old_head_and_what_moved(demo_json: dict, demo: Scenario) -> None:
    [stale] = [s for s in demo_json["suggestions"] if s["kind"] == "stale-fold"]
    assert stale["entry"] == UNION and stale["pr"] == 45610
    assert stale["folded"] == demo.prs[45610][1] and stale["current"] == demo.head(45610)
    assert stale["files"] == ["tests/v1/worker/test_pp_cudagraph_consensus.py"]
    assert any(" = 2:  " + demo.prs[45610][1][:12] in line for line in stale["range_diff"])
    assert any(line.startswith("-:  ") and demo.head(45610)[:12] in line for line in stale["range_diff"])
    [cov] = [c for c in demo_json["coverage"] if c["pr"] == "pr/45610"]
    assert cov["folded"] == demo.prs[45610][1] and cov["absent"] == 1


def test_union_coverage_finds_the_re_expressed_handshake_and_its_guards(demo_json: dict) -> None:
    [cov] = [c for c in demo_json["coverage"] if c["pr"] == "pr/45612"]
    assert cov["union"] == UNION and cov["paths"] == [sources.WORKER, "tests/v1/worker/test_gpu_worker_wake_barrier.py"]
    [redone] = [h for h in cov["hunks"] if h["status"] == "re-expressed"]
    assert redone["file"] == sources.WORKER and redone["scopes"] == ["Worker.wake_up"]
    assert redone["asserts"] == ["resume-once", "no-raw-allocator-wake", "wake-handshake"]
    assert all(h["file"] != sources.CUMEM_PY for h in cov["hunks"])     # the partial supersession's other path
    kv = {c["pr"]: c for c in demo_json["coverage"]}
    assert kv["pr/44778"]["verbatim"] == 2 and kv["pr/44778"]["re_expressed"] == 0
    assert kv["pr/45398"]["re_expressed"] == 1


def test_story_of_45612(demo_json: dict, demo: Scenario) -> None:
    [story] = demo_json["stories"]
    assert story["id"] == "pr/45612" and story["entry"] == next(e for e in demo_json["entries"]
                                                                if e["id"] == "pr/45612")
    assert story["provided"] == [{"by": UNION, "paths": ["tests/v1/worker/test_gpu_worker_wake_barrier.py",
                                                         sources.WORKER]}]
    assert story["applies"] == [sources.CUMEM_PY]
    assert story["entry"]["reason"] == "redundant" and story["entry"]["redundant_with"] == ["pr/45552"]
    kinds = {(tuple(o["entries"]), o["kind"]) for o in story["overlaps"]}
    assert (("pr/45398", "pr/45612"), "conflict") in kinds and (("pr/45552", "pr/45612"), "identical-hunk") in kinds
    guards = {a["name"]: a for a in story["asserts"]}
    assert set(guards) == {"resume-once", "no-raw-allocator-wake", "wake-handshake"}
    assert guards["wake-handshake"]["because"] == "declared for pr/45612"
    text = "\n".join(story["summary"])
    assert f"{UNION} provides tests/v1/worker/test_gpu_worker_wake_barrier.py, {sources.WORKER}" in text
    assert "left to apply: vllm/device_allocator/cumem.py" in text and "redundant with pr/45552" in text


def test_story_commands_reproduce_the_decision(cli: Cli, demo: Scenario) -> None:
    code, demo_json = run(cli, demo, "pr/45612")      # here: its commands read what explain fetched
    assert code == 0, demo_json
    [story] = demo_json["stories"]
    commands = {c["command"].split()[1]: c for c in story["commands"]}
    upstream, head, base = demo_json["upstream"]["sha"], demo.head(45612), story["base"]
    assert commands["merge-base"]["command"] == f"git merge-base {upstream} {head}"
    assert git_out(demo.work, "merge-base", upstream, head).stdout.strip() == base
    for item in story["commands"]:
        assert all(len(w) == 40 for w in item["command"].split() if re.fullmatch(r"[0-9a-f]{7,}", w))
    [redundant] = [c for c in story["commands"] if c["purpose"].startswith("applying it changes nothing")]
    tree = git_out(demo.work, *redundant["command"].split()[1:]).stdout.strip()
    assert tree == git_out(demo.work, "rev-parse", f"{story['onto']}^{{tree}}").stdout.strip()
    [conflict] = [c for c in story["commands"] if c["purpose"].startswith("conflicts with pr/45398")]
    proc = git_out(demo.work, *conflict["command"].split()[1:])
    assert proc.returncode == 1 and f"CONFLICT (content): Merge conflict in {sources.WORKER}" in proc.stdout


def test_entry_forms_and_unknown_entries(cli: Cli, demo: Scenario) -> None:
    code, _ = run(cli, demo)
    assert code == 0
    manifest = load_manifest(demo.manifest)
    assert [e.id for e in find_entries(manifest, ["45612", "pr/45612", "#45612", "wake-path-union", UNION])] == \
        ["pr/45612", UNION]
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "4561")
    assert result.exit_code == 2 and "no entry '4561'" in result.stderr and "did you mean pr/45619" in result.stderr
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "carry/wake-path")
    assert result.exit_code == 2 and f"did you mean {UNION}" in result.stderr
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "--format", "yaml")
    assert result.exit_code == 2


def test_text_is_plain_in_a_pipe(cli: Cli, demo: Scenario) -> None:
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work)
    assert result.exit_code == 0 and "\x1b[" not in result.stdout
    out = result.stdout
    assert re.search(r"conflict \(\+same-scope\)\s+pr/45398 x pr/45612\s+vllm/v1/worker/gpu_worker.py "
                     r"\[Worker.wake_up\]\n", out)
    assert "stale-fold: carry/wake-path-union folded pr/45610 at " + demo.prs[45610][1][:12] in out
    assert out.rstrip().endswith("sync would exit 0")
    again = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline")
    assert again.stdout == out                                          # stable: same input, same text


def test_explain_entry_prints_only_its_story(cli: Cli, demo: Scenario) -> None:
    # issue 14: the story of one entry, not the whole plan and every pair before it
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "45612")
    out = result.stdout
    assert result.exit_code == 0 and out.startswith("story of pr/45612\n  pr/45612 (symmetric gloo wake handshake):")
    assert "git merge-base " in out and "conflict with pr/45398 in vllm/v1/worker/gpu_worker.py (Worker.wake_up)\n" \
        in out
    # the union's conflict is expected, as the overlaps table says (helper-105: unexplained in the story)
    assert "conflict with carry/wake-path-union in vllm/v1/worker/gpu_worker.py; also shares " \
           "tests/v1/worker/test_gpu_worker_wake_barrier.py (Worker._needs_wake_sync, Worker._wake_handshake, " \
           "Worker.wake_up, test_failed_peer_raises) (the union provides it)\n" in out, out
    assert "overlaps (" not in out and "plan\n" not in out and "sync would exit" not in out
    assert "pr/44778" not in out                                         # a pair it is not part of
    again = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "45612")
    assert again.stdout == out


def test_markdown_has_the_table_the_graph_and_details(cli: Cli, demo: Scenario) -> None:
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--format", "markdown", "pr/45612")
    assert result.exit_code == 0
    md = result.stdout
    assert "| entry | status | why | files |" in md and "| `pr/45612` symmetric gloo wake handshake |" in md
    graph = md[md.index("```mermaid"):md.index("```", md.index("```mermaid") + 3)]
    assert "graph LR" in graph
    assert "pr_45398 ===|conflict| pr_45612" in graph and "pr_44778 ===|conflict| pr_45617" in graph
    assert "pr_45619 ---|same-scope| pr_45612" in graph
    assert "carry_wake_path_union -.->|supersedes| pr_45398" in graph
    assert "carry_wake_path_union -.->|supersedes paths| pr_45612" in graph
    assert re.search(r"linkStyle [0-9,]+ stroke:#d73a49", graph)
    assert "| `pr/45398` × `pr/45612` | **conflict** |" in md and "`Worker.wake_up`" in md
    assert "<details><summary>Story of <code>pr/45612</code></summary>" in md and "```sh" in md
    assert "<details><summary>Union coverage</summary>" in md
    assert "<details><summary>Same-file overlaps (10)</summary>" in md
    assert md.index("| `pr/45552` × `pr/45554` | same-file |") > md.index("Same-file overlaps")


def test_report_file_and_exit_0_with_conflicts(cli: Cli, demo: Scenario, tmp_path: Path, report_schema: dict) -> None:
    text = demo.manifest.read_text()
    # without the union, 45398 and 45612 collide in the plan itself: sync would exit 3, explain exits 0
    start = text.index("  - carry: wake-path-union")
    broken = demo.manifest.with_name("broken.yaml")
    broken.write_text(text[:start] + text[text.index("asserts:"):].replace("    entry: carry/wake-path-union\n", ""))
    out = tmp_path / "explain.json"
    result = cli("explain", "-m", broken, "--repo", demo.work, "--report", out)
    assert result.exit_code == 0
    import json

    report = json.loads(out.read_text())
    jsonschema.validate(report, report_schema)
    assert report["plan"]["sync_exit_code"] == 3
    assert any(e["status"] == "conflict" for e in report["entries"])
    groups = [(s["entries"], s["files"]) for s in report["suggestions"] if s["kind"] == "union"]
    assert groups == [(["pr/45398", "pr/45612"], [sources.WORKER]), (["pr/44778", "pr/45617"], [sources.RUNNER])]


def test_drafted_union_message(cli: Cli, demo: Scenario) -> None:
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--format", "commit-message", UNION)
    assert result.exit_code == 0
    msg = result.stdout
    assert msg.startswith("carry: wake-path-union: wake-path union\n\n")
    assert f"  #45398 pluggable sleep-mode backend\n      head {demo.head(45398)}\n" in msg
    assert f"head {demo.prs[45610][1]} (folded; the PR is now at {demo.head(45610)[:12]})" in msg
    assert f"  {sources.WORKER}: #45398 #45619 #45620 #45612 #45610\n" in msg
    assert f"  {sources.CUMEM_PY}: excluded by the manifest" in msg
    assert f"  {sources.CUMEM_PY} of #45612: stays outside the union (pr/45612's own entry carries it)" in msg
    assert "  resume-once: vllm/v1/worker/gpu_worker.py Worker.wake_up calls backend.resume times 1\n" in msg
    assert msg.rstrip().endswith("Carry-Supersedes: 45398 45619 45620 45612:vllm/v1/worker/gpu_worker.py,"
                                 "tests/v1/worker/test_gpu_worker_wake_barrier.py 44778 45617 45610")
    again = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "--format", "commit-message",
                "wake-path-union")
    assert again.stdout == msg
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline", "--format", "commit-message",
                 "pr/45612")
    assert result.exit_code == 2 and "exactly one carry ENTRY" in result.stderr


def test_draft_union_message_from_the_api(demo: Scenario) -> None:
    manifest = load_manifest(demo.manifest)
    with Git(demo.work) as git:
        ex = explain(manifest, git)
        full = draft_union_message(manifest, ex, UNION)
        assert draft_union_message(manifest, ex.evidence, manifest.entry(UNION)) .startswith(full.split("\n")[0])
        from_plan = draft_union_message(manifest, ex.planned, UNION)
    assert from_plan.split("\n")[0] == full.split("\n")[0] and "Carry-Supersedes:" in from_plan


class _Terminal:
    """A stream that says it is a terminal, so the renderer chooses rich."""

    def __init__(self) -> None:
        import io

        self.buffer = io.StringIO()

    def write(self, text: str) -> int:
        return self.buffer.write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_rich_tables_on_a_terminal(demo: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    from carrytool.render.explain_text import render_explain

    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm-256color")
    manifest = load_manifest(demo.manifest)
    with Git(demo.work) as git:
        ex = explain(manifest, git)
    term = _Terminal()
    render_explain(ex, term)  # type: ignore[arg-type]
    out = term.buffer.getvalue()
    assert "\x1b[" in out and "overlaps (23 pairs share a file; 6 conflict)" in out


def test_environment_and_input_problems(cli: Cli, demo: Scenario, tmp_path: Path) -> None:
    result = cli("explain", "-m", demo.manifest, "--repo", tmp_path)
    assert result.exit_code == 4 and "not a git repository" in result.stderr
    result = cli("explain", "-m", demo.manifest, "--repo", demo.work, "--offline")
    assert result.exit_code == 2 and "no fetched upstream" in result.stderr
    result = cli("explain", "-m", tmp_path / "absent.yaml", "--repo", demo.work)
    assert result.exit_code == 2
