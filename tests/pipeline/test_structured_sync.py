"""Structured merge in sync (issue 19): resolved adjacencies are green and reported, everything else stays a
conflict, the asserts and landing gate them, and without the policy nothing changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from carrytool.demo import pr_texts
from carrytool.gitlayer.git import Git
from tests.conftest import Small

BASE = "import os\n\n\nclass Runner:\n    def run(self):\n        return 1\n"
WITH_A = BASE + "\n    def alpha(self):\n        return 'a'\n"
WITH_B = BASE + "\n    def beta(self):\n        return 'b'\n"
POLICY = {"structured_merge": {"paths": ["**/*.py"]}}


def _sync(cli, small: Small, manifest: Path) -> tuple[int, dict]:
    return cli.json("sync", "-m", manifest, "--repo", small.work.path)


def _two_prs(small: Small, a: str, b: str) -> None:
    small.up.commit({"r.py": BASE}, "runner", parent=small.base, ref="refs/heads/main")
    main = small.up.rev("refs/heads/main")
    small.pr(1, {"r.py": a}, parent=main)
    small.pr(2, {"r.py": b}, parent=main)


def test_adjacent_methods_resolve_in_manifest_order_and_are_reported(cli, small: Small, report_schema) -> None:
    _two_prs(small, WITH_A, WITH_B)
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 0, report
    jsonschema.validate(report, report_schema)
    second = report["entries"][1]
    assert second["status"] == "applied"
    assert second["structured"] == [{"file": "r.py", "lines": [7, 12], "kind": "methods"}]
    assert [w for w in report["warnings"] if w["kind"] == "structured-merge"] == [
        {"kind": "structured-merge", "entry": "pr/2", "file": "r.py", "lines": [7, 12], "rule": "methods",
         "message": "pr/2: r.py lines 7-12 resolved structurally (methods): both sides kept; review it"}]
    text = small.work.show("refs/heads/dev", "r.py")
    assert text + "\n" == BASE + "\n    def alpha(self):\n        return 'a'\n\n    def beta(self):\n        return 'b'\n"
    assert "Carry-Structured: r.py lines 7-12 (methods)" in small.work.git("log", "-1", "--format=%B", "dev")
    manifest = small.manifest_path
    text = cli("sync", "-m", manifest, "--repo", small.work.path).stdout
    assert "ok: dev already at" in text and "(1 conflict hunk resolved structurally: see the warnings)" in text
    assert "pr/2: r.py lines 7-12 resolved structurally (methods)" in text
    code, explained = cli.json("explain", "-m", manifest, "--repo", small.work.path, "--offline")
    assert [(o["entries"], o["kind"], o.get("resolved")) for o in explained["overlaps"]] == \
        [(["pr/1", "pr/2"], "conflict", "structurally")]
    assert "pr/1 x pr/2 (resolved structurally)" in cli("explain", "-m", manifest, "--repo", small.work.path,
                                                         "--offline").stdout


def test_without_the_policy_it_is_the_conflict_it_always_was(cli, small: Small) -> None:
    _two_prs(small, WITH_A, WITH_B)
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}]))
    assert code == 3 and report["entries"][1]["status"] == "conflict"
    assert "structured" not in report["entries"][1]
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2, "structured_merge": {"paths": []}}],
                                                    policy=POLICY))
    assert code == 3 and report["entries"][1]["status"] == "conflict"


def test_an_assert_the_structured_result_breaks_sends_it_back_to_a_conflict(cli, small: Small) -> None:
    _two_prs(small, WITH_A, WITH_B)
    asserts = [{"file": "r.py", "absent": "def beta"}]     # holds on either PR alone, not on both
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY, asserts=asserts))
    assert code == 3, report
    assert report["entries"][1]["status"] == "conflict" and "structured" not in report["entries"][1]
    assert report["entries"][1]["detail"].endswith("its structured resolution was rejected: an assert failed on it")
    assert not [w for w in report["warnings"] if w["kind"] == "structured-merge"]
    # the rejected composition (composed again without the resolution) left nothing in the store
    resolved = BASE + "\n    def alpha(self):\n        return 'a'\n\n    def beta(self):\n        return 'b'\n"
    blob = small.work.git("hash-object", "--stdin", input=resolved.encode())
    assert small.work.git("cat-file", "-t", blob, check=False).strip() != "blob"


def test_a_shadowing_insertion_stays_a_conflict_and_says_why(cli, small: Small, report_schema) -> None:
    """helper-128: the report, the detail and the text said only `conflicts in r.py (with pr/1)`."""
    _two_prs(small, WITH_A, BASE + "\n    def alpha(self):\n        return 'b'\n")
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 3 and report["entries"][1]["status"] == "conflict"
    jsonschema.validate(report, report_schema)
    why = "two definitions of `alpha` in `Runner`: the later one would override the other side's"
    assert report["entries"][1]["conflicts"] == [
        {"file": "r.py", "with": ["pr/1"], "structured": {"refused": "shadows", "why": why}}]
    assert report["entries"][1]["detail"] == f"conflicts in r.py (with pr/1; the structured merge refused: {why})"
    text = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run").stdout
    assert f"the structured merge refused: {why}" in text
    assert f"conflict: pr/2 in r.py with pr/1 (the structured merge refused: {why})" in text    # the failure line
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}]))      # not asked: nothing said
    assert report["entries"][1]["conflicts"] == [{"file": "r.py", "with": ["pr/1"]}]


# helper-128: two insertions at one place where one reads what the other binds were kept in one order, git's
# conflict silently decided; the other order gives another value
ORDERED = [
    ("module", "UrlT: TypeAlias = str | bytes\n", "\n\ndef f():\n    pass\n", "UrlT = str\n", "_URL_TYPES = UrlT\n",
     "one insertion reads `UrlT`"),
    ("function", "def f(url, parts):\n    parts = parse(url)\n", "    return parts\n", "    url = url.strip()\n",
     "    host = parts.netloc or url\n", "one insertion reads `url`"),
    ("call", "import os\n", "\n\ndef f():\n    pass\n", "def set_x():\n    global X\n    X = 1\n\n\nDONE = set_x()\n",
     "X = 2\n", "an insertion calls `set_x`"),       # helper-134: it runs at the insertion, binding X
    # helper-139: pr/2's `y: str` after pr/1's `x: int = 0` is a TypeError; the other order, C(a, y, x=0)
    ("dataclass", "from dataclasses import dataclass\n\n\n@dataclass\nclass C:\n    a: int\n", "\n\nC(1, 'y')\n",
     "    x: int = 0\n", "    y: str\n", "both insertions bind names in the body of class `C`"),
    ("enum", "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n", "\n\nBY_VALUE = Color(2)\n",
     "    GREEN = 2\n", "    VERT = 2\n", "both insertions bind names in the body of class `Color`"),
    ("registration", "import typer\n\napp = typer.Typer()\n", "\n\nif __name__ == '__main__':\n    app()\n",
     "\n\n@app.command()\ndef build():\n    pass\n", "\n\n@app.command()\ndef clean():\n    pass\n",
     "both insertions are decorated, `app.command()`"),
]


@pytest.mark.parametrize(("where", "head", "tail", "one", "two", "why"), ORDERED, ids=[o[0] for o in ORDERED])
def test_insertions_whose_order_matters_stay_a_conflict(cli, small: Small, where: str, head: str, tail: str,
                                                        one: str, two: str, why: str) -> None:
    small.up.commit({"m.py": head + tail}, "m", parent=small.base, ref="refs/heads/main")
    main = small.up.rev("refs/heads/main")
    small.pr(1, {"m.py": head + one + tail}, parent=main)
    small.pr(2, {"m.py": head + two + tail}, parent=main)
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 3 and report["entries"][1]["status"] == "conflict", report
    assert "structured" not in report["entries"][1]
    [conflict] = report["entries"][1]["conflicts"]
    assert conflict["structured"]["refused"] == "order-dependent"
    assert conflict["structured"]["why"].startswith(why)


def test_the_demo_runner_adjacency_composes_without_a_recorded_resolution(cli, demo) -> None:
    data = yaml.safe_load(demo.manifest.read_text())
    data["entries"] = [e for e in data["entries"] if e.get("pr") in (44778, 45617)]
    data["asserts"] = [a for a in data["asserts"] if a.get("entry") in ("pr/44778", "pr/45617")]
    plain = demo.manifest.with_name("adjacency.yaml")
    plain.write_text(yaml.safe_dump(data))
    code, report = cli.json("sync", "-m", plain, "--repo", demo.work, "--dry-run")
    assert code == 3 and report["entries"][1]["status"] == "conflict"
    data["policy"]["structured_merge"] = {"paths": ["**/*.py"]}
    structured = demo.manifest.with_name("structured.yaml")
    structured.write_text(yaml.safe_dump(data))
    code, report = cli.json("sync", "-m", structured, "--repo", demo.work)
    assert code == 0, report
    assert [a["ok"] for a in report["asserts"]] == [True, True]
    assert report["entries"][1]["structured"] == [
        {"file": "vllm/v1/worker/gpu_model_runner.py", "lines": [33, 36], "kind": "adjacent-edit"},
        {"file": "vllm/v1/worker/gpu_model_runner.py", "lines": [38, 56], "kind": "methods"}]
    said = [w["message"] for w in report["warnings"] if w["kind"] == "structured-merge"]
    assert said == ["pr/45617: vllm/v1/worker/gpu_model_runner.py lines 33-36 resolved structurally (adjacent-edit): "
                    "one side's rewrite kept with the other's insertion beside it; review it",   # not "both sides"
                    "pr/45617: vllm/v1/worker/gpu_model_runner.py lines 38-56 resolved structurally (methods): "
                    "both sides kept; review it"], said
    git = Git(demo.work)
    try:
        runner = git.file_at(report["result"]["sha"], "vllm/v1/worker/gpu_model_runner.py").decode()
    finally:
        git.close()
    assert pr_texts.ZERO_BOTH in runner                  # what the fork's recorded resolution says
    assert runner.index("def _iter_kv_cache_tensors") < runner.index("def _kv_scale_specs")
    assert report["result"]["sha"] == "c7c73fc54dc97c059f3c7e601f8861c679ec6db8"   # git 2.39 and 2.47


def test_the_demo_composes_to_the_same_sha_when_the_policy_selects_nothing(cli, demo) -> None:
    code, before = cli.json("sync", "-m", demo.manifest, "--repo", demo.work, "--dry-run")
    data = yaml.safe_load(demo.manifest.read_text())
    data["policy"]["structured_merge"] = {"paths": ["nothing/**"]}
    other = demo.manifest.with_name("nothing.yaml")
    other.write_text(yaml.safe_dump(data))
    code2, after = cli.json("sync", "-m", other, "--repo", demo.work, "--dry-run")
    assert (code, before["result"]["sha"]) == (code2, after["result"]["sha"])
    assert [e.get("commit") for e in before["entries"]] == [e.get("commit") for e in after["entries"]]


CASES = [
    ("functions", "import os\n\n\ndef f():\n    return 1\n", "\n\ndef g():\n    return 2\n", "\n\ndef h():\n    return 3\n"),
    ("imports", "import os\nimport sys\n", "import re\n", "import json\n"),
    ("items", "NAMES = [\n    'a',\n]\n", "    'b',\n", "    'c',\n"),
    ("definitions", "from dataclasses import dataclass, field\n\n\n@dataclass\nclass C:\n    a: int = 0\n",
     "    b: list = field(default_factory=list)\n", "\n    def m(self):\n        return 1\n"),     # helper-134
]


@pytest.mark.parametrize(("kind", "base", "one", "two"), CASES, ids=[c[0] for c in CASES])
def test_adjacent_insertions_are_green_with_both_in_manifest_order(cli, small: Small, kind: str, base: str,
                                                                   one: str, two: str) -> None:
    def insert(text: str) -> str:
        at = base.index("import sys") if kind == "imports" else base.index("]") if kind == "items" else len(base)
        return base[:at] + text + base[at:]

    small.up.commit({"m.py": base}, "m", parent=small.base, ref="refs/heads/main")
    main = small.up.rev("refs/heads/main")
    small.pr(1, {"m.py": insert(one)}, parent=main)
    small.pr(2, {"m.py": insert(two)}, parent=main)
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 0, report
    assert [h["kind"] for h in report["entries"][1]["structured"]] == [kind]
    assert small.work.show("refs/heads/dev", "m.py") + "\n" == insert(one + two)


def test_a_conflict_with_a_mode_change_is_not_resolved_structurally(cli, small: Small) -> None:
    """pr/2 also makes r.py executable: the stages differ in mode, so the structured merge refuses (the kept
    mode would silently be one side's) and the adjacency stays the conflict it was."""
    small.up.commit({"r.py": BASE}, "runner", parent=small.base, ref="refs/heads/main")
    main = small.up.rev("refs/heads/main")
    small.pr(1, {"r.py": WITH_A}, parent=main)
    small.up.commit({"r.py": WITH_B}, "pr 2", parent=main, ref="refs/pull/2/head", modes={"r.py": "100755"})
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 3 and report["entries"][1]["status"] == "conflict", report["entries"][1]
    assert "structured" not in report["entries"][1]
    assert small.branch() is None


def test_a_conflict_with_upstream_names_an_entry_resolved_structurally_there(cli, small: Small) -> None:
    """Upstream adds alpha to Runner; pr/1, on the old base, adds beta: a conflict with upstream that the
    structured rule resolves (both kept). pr/2, on the old base and without the policy, adds gamma: its
    conflict with upstream meets pr/1's beta, so pr/1 is named, weighed by its merge onto upstream resolved
    structurally as the chain resolved it (it was left out: its merge onto upstream had conflict markers)."""
    small.up.commit({"r.py": BASE}, "runner", parent=small.base, ref="refs/heads/main")
    old = small.up.rev("refs/heads/main")
    small.up.commit({"r.py": WITH_A}, "upstream: alpha", parent=old, ref="refs/heads/main")
    small.pr(1, {"r.py": WITH_B}, parent=old)
    small.pr(2, {"r.py": BASE + "\n    def gamma(self):\n        return 'g'\n"}, parent=old)
    manifest = small.manifest([{"pr": 1}, {"pr": 2, "structured_merge": {"paths": []}, "on_conflict": "skip"}],
                              policy=POLICY)
    code, report = cli.json("sync", "-m", manifest, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    first, second = report["entries"]
    assert first["status"] == "applied" and first["structured"], first
    assert second["conflicts"] == [{"file": "r.py", "with": ["pr/1"], "upstream": True}], second


@pytest.mark.parametrize("upstream_o", ["up\n", None])
@pytest.mark.parametrize("policy", ["fail", "theirs"])
def test_an_entry_resolved_structurally_is_named_where_its_other_conflict_with_upstream_was_settled(
        cli, small: Small, policy: str, upstream_o: str | None) -> None:
    """As above, and pr/1 also changes o.txt (which the policy does not select), which upstream changed or
    deleted: its merge onto upstream conflicts there too, so that merge does not resolve structurally as a
    whole. pr/3, first, makes pr/1's o.txt its own: the chain resolves pr/1 structurally. At r.py pr/1 is
    weighed by its merge onto upstream with r.py resolved so (adversarial reviews' cases: left out, or,
    under `theirs`, weighed by theirs, which drops upstream's alpha where the chain kept it)."""
    small.up.commit({"r.py": BASE, "o.txt": "x\n"}, "runner", parent=small.base, ref="refs/heads/main")
    old = small.up.rev("refs/heads/main")
    small.up.commit({"r.py": WITH_A, "o.txt": upstream_o}, "upstream: alpha", parent=old, ref="refs/heads/main")
    small.pr(3, {"r.py": WITH_A, "o.txt": "one\n"}, parent=small.up.rev("refs/heads/main"))
    small.pr(1, {"r.py": WITH_B, "o.txt": "one\n"}, parent=old)
    small.pr(2, {"r.py": BASE + "\n    def gamma(self):\n        return 'g'\n"}, parent=old)
    manifest = small.manifest([{"pr": 3}, {"pr": 1, "on_conflict": policy},
                               {"pr": 2, "structured_merge": {"paths": []}, "on_conflict": "skip"}], policy=POLICY)
    code, report = cli.json("sync", "-m", manifest, "--repo", small.work.path, "--dry-run")
    assert code == 0, report
    _, first, second = report["entries"]
    assert first["status"] == "applied" and first["structured"], first
    assert second["conflicts"] == [{"file": "r.py", "with": ["pr/1"], "upstream": True}], second


def test_structured_merges_run_no_merge_file_process(cli, small: Small, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The diff3 merge the structured rule reads comes from a long-lived merge-tree (Git.merge_diff3), as
    every other merge of a run: no `git merge-file` process, no temporary files."""
    _two_prs(small, WITH_A, WITH_B)
    log, folder = tmp_path / "git.log", tmp_path / "wrapped"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    code, report = _sync(cli, small, small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY))
    assert code == 0 and report["entries"][1]["structured"] == [{"file": "r.py", "lines": [7, 12], "kind": "methods"}]
    calls = log.read_text()
    assert "merge.conflictStyle=diff3 merge-tree" in calls and " merge-file " not in calls
