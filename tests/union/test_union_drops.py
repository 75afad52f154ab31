"""A union's hunks left out on purpose (`drops` on a supersedes item): not warned provided-absent, shown with
their why by sync (text and the union's report entry), a drop that matches nothing is a `stale-drop`, and
`union continue`/`compose` say how to declare one and keep the declarations (helper-135)."""

from __future__ import annotations

from pathlib import Path

import jsonschema

from tests.conftest import Cli
from tests.gitrepo import init_repo, write_manifest
from tests.union.test_union_left_out import ThreePrs, _take_theirs

# Worker.sleep and Worker.wake_up far enough apart that pr/1's two lines are two hunks
PAD = "".join(f"    def pad{k}(self):\n        return {k}\n\n" for k in range(4))
WORKER = ("import torch\n\n\nclass Worker:\n    def sleep(self):\n        self.offload()\n        self.level = 1\n\n" + PAD +
          "    def wake_up(self, tags=None):\n        self.reload(tags)\n        self.ready = True\n\n"
          "    def other(self):\n        return 1\n")
PR1 = WORKER.replace("        self.offload()\n", "        self.offload()\n        torch.cuda.empty_cache()\n") \
            .replace("        self.reload(tags)\n", "        self.reload(tags)\n        torch.cuda.synchronize()\n")
PR2 = WORKER.replace("        return 1\n", "        return 2\n")


def _sync(cli: Cli, root: Path, drops: list[dict] | None, *, text: bool = False):
    """Sync pr/1 (a line in Worker.sleep, one in Worker.wake_up) and pr/2 (Worker.other) under a union committed
    by hand that holds pr/2's change only, pr/1's item declaring DROPS: the JSON report (or the text run)."""
    up = init_repo(root / "up")
    main = up.commit({"w.py": WORKER}, "base", ref="refs/heads/main")
    up.commit({"w.py": PR1}, "pr 1", parent=main, ref="refs/pull/1/head")
    up.commit({"w.py": PR2}, "pr 2", parent=main, ref="refs/pull/2/head")
    commit = up.commit({"w.py": PR2}, "carry: union", parent=main, ref="refs/heads/union")
    work = init_repo(root / "work", bare=True)
    work.git("fetch", "-q", str(up.path), "refs/heads/union:refs/heads/union")
    first = {"pr": 1, "drops": drops} if drops is not None else 1
    manifest = write_manifest(root / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": commit, "supersedes": [first, 2]}]})
    if text:
        return cli("sync", "-m", str(manifest), "--repo", str(work.path))
    code, report = cli.json("sync", "-m", str(manifest), "--repo", str(work.path))
    assert code == 0, report.get("error")
    return report


def _absent(report: dict) -> list[tuple[str, str, list[int]]]:
    return [(w["entry"], w["file"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


def _union(report: dict) -> dict:
    return next(e for e in report["entries"] if e["id"] == "carry/union")


def test_without_drops_both_hunks_of_the_pr_are_warned(cli: Cli, tmp_path: Path) -> None:
    report = _sync(cli, tmp_path, None)
    assert _absent(report) == [("pr/1", "w.py", [7, 7]), ("pr/1", "w.py", [24, 24])]
    [sleep, _wake] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "if on purpose, write its supersedes item as `{pr: 1, head: a918284984b579c0be632733b9dd3874ada735ab, " \
           'drops: [{file: w.py, in: Worker.sleep, why: "..."}]}`' in sleep["message"]


def test_a_declared_drop_silences_that_hunk_only_and_the_report_says_why(cli: Cli, tmp_path: Path,
                                                                       report_schema: dict) -> None:
    why = "upstream synchronizes in reload() since #999"
    report = _sync(cli, tmp_path, [{"file": "w.py", "in": "Worker.wake_up", "why": why}])
    jsonschema.validate(report, report_schema)
    assert _absent(report) == [("pr/1", "w.py", [7, 7])]          # Worker.sleep's hunk: still warned
    assert _union(report)["dropped_on_purpose"] == [
        {"pr": 1, "file": "w.py", "lines": [24, 24], "scopes": ["Worker.wake_up"], "in": "Worker.wake_up", "why": why}]
    assert not [w for w in report["warnings"] if w["kind"] == "stale-drop"]
    assert "dropped_on_purpose" not in next(e for e in report["entries"] if e["id"] == "pr/1")


def test_a_drop_of_an_enclosing_class_or_a_whole_file_covers_every_hunk_under_it(cli: Cli, tmp_path: Path) -> None:
    report = _sync(cli, tmp_path / "class", [{"file": "w.py", "in": "Worker", "why": "not needed"}])
    assert _absent(report) == [] and len(_union(report)["dropped_on_purpose"]) == 2
    report = _sync(cli, tmp_path / "file", [{"file": "*.py", "why": "not needed"}])
    assert _absent(report) == [] and [d["lines"] for d in _union(report)["dropped_on_purpose"]] == [[7, 7], [24, 24]]


def test_sync_prints_one_line_per_drop_with_its_why(cli: Cli, tmp_path: Path) -> None:
    result = _sync(cli, tmp_path, [{"file": "w.py", "in": "Worker", "why": "upstream fixed it another way"}], text=True)
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("dropped on purpose:")]
    assert lines == [
        "dropped on purpose: carry/union leaves out pr/1's hunk w.py:7 (Worker.sleep): upstream fixed it another way",
        "dropped on purpose: carry/union leaves out pr/1's hunk w.py:24 (Worker.wake_up): upstream fixed it another way"]
    assert "provided-absent" not in result.stdout and "stale" not in result.stdout


def test_a_drop_that_matches_no_hunk_left_out_is_a_stale_drop(cli: Cli, tmp_path: Path, report_schema: dict) -> None:
    report = _sync(cli, tmp_path, [{"file": "w.py", "in": "Worker.other", "why": "was wrong"},
                                   {"file": "v.py", "why": "moved"},
                                   {"file": "w.py", "in": "Worker.wake_up", "why": "upstream has it"}])
    jsonschema.validate(report, report_schema)
    stale = [{k: w[k] for k in ("entry", "pr", "file", "in")} for w in report["warnings"] if w["kind"] == "stale-drop"]
    assert stale == [{"entry": "carry/union", "pr": 1, "file": "w.py", "in": "Worker.other"},
                     {"entry": "carry/union", "pr": 1, "file": "v.py", "in": None}]
    message = next(w["message"] for w in report["warnings"] if w["kind"] == "stale-drop")
    assert "carry/union declares pr/1's hunks in w.py in Worker.other dropped on purpose (manifest line" in message
    assert _absent(report) == [("pr/1", "w.py", [7, 7])]
    assert [d["lines"] for d in _union(report)["dropped_on_purpose"]] == [[24, 24]]


MANIFEST_DROPPED = """\
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev}
policy:
  structured_merge: {paths: ["**/*.py"]}
entries:
  - pr: 101
  - pr: 102
  - pr: 104
  - carry: u
    patch: unions/u.patch
    supersedes:
      - 101
      - pr: 102   # describe() is upstream's business now
        drops:
          - {file: agent.py, in: Agent.describe, why: "upstream adds describe() itself"}
      - 104
"""


def test_continue_says_how_to_declare_a_drop_and_compose_keeps_the_declaration(cli: Cli, tmp_path: Path) -> None:
    prs = ThreePrs(tmp_path)
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _take_theirs(prs.scratch / "agent.py")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "if on purpose, write its supersedes item as `{pr: 102, head: ed11754399c49105cf8b0c904e77f845dece434c, " \
           'drops: [{file: agent.py, in: Agent.describe, why: "..."}]}`' in result.stdout + result.stderr
    prs.manifest.write_text(MANIFEST_DROPPED)
    result = cli("union", "compose", "u", *prs.args())     # a refold: the recorded resolution is reused
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "dropped on purpose: pr/102's hunk agent.py:5-7 (Agent.describe): upstream adds describe() itself" in out
    assert "warning: the union lacks" not in out
    text = prs.manifest.read_text()
    assert "      - pr: 102   # describe() is upstream's business now\n        head: " in text
    assert '        drops:\n          - {file: agent.py, in: Agent.describe, why: "upstream adds describe() itself"}\n' \
        in text
    code, report = cli.json("sync", *prs.args())
    assert code == 0, report.get("error")
    assert not [w for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")]
    union = next(e for e in report["entries"] if e["id"] == "carry/u")
    assert [(d["pr"], d["file"], d["lines"]) for d in union["dropped_on_purpose"]] == [(102, "agent.py", [5, 7])]
