"""`union compose` with policy.structured_merge (issue 19): the runner adjacency needs no recorded resolution."""

from __future__ import annotations

import json
import shutil

import pytest

from carrytool.demo import sources
from carrytool.demo.scenario import Scenario
from tests.conftest import Cli
from tests.pipeline.test_structured_gates import GITS, _env
from tests.union.test_union import NAME, resolve_worker, scratch, union

POLICY = "policy:\n  structured_merge:\n    paths: [\"**/*.py\"]\n"


def test_the_adjacency_resolves_structurally_and_nothing_is_recorded_for_it(cli: Cli, demo: Scenario) -> None:
    store = demo.manifest.parent / "resolutions"
    shutil.rmtree(store)
    text = demo.manifest.read_text()
    demo.manifest.write_text(text.replace("policy:\n", POLICY, 1))
    result = union(cli, demo, "compose", NAME)
    assert result.exit_code == 3, result.stdout + result.stderr    # the genuine gpu_worker.py overlap still stops
    assert "vllm/v1/worker/gpu_worker.py  pr/45398, pr/45612" in result.stdout
    resolve_worker(scratch(demo) / sources.WORKER)
    result = union(cli, demo, "continue", NAME)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ("resolved structurally (not recorded): vllm/v1/worker/gpu_model_runner.py lines 33-36 "
            "(adjacent-edit, pr/45617)") in result.stdout
    recorded = [json.loads(p.read_text()) for p in (store / NAME).glob("*.json")]
    assert recorded and not any(sources.RUNNER in json.dumps(r) for r in recorded)
    code, report = cli.json("sync", "-m", demo.manifest, "--repo", demo.work)
    assert code == 0 and all(a["ok"] for a in report["asserts"])


# -- per hunk: a file with one adjacency and one true conflict -----------------------------------------------

FILLER = "".join(f"\n\ndef helper_{n}():\n    return {n}\n" for n in range(4))
MIXED = "import os\n\n\nclass Runner:\n    def run(self):\n        return 1\n" + FILLER + "\n\ndef limit():\n    return 10\n"


def _with(method: str, limit: str) -> str:
    text = MIXED.replace("        return 1\n", f"        return 1\n\n    def {method}(self):\n        return '{method}'\n")
    return text.replace("return 10\n", f"return {limit}\n")


def _mixed_union(root, policy: bool):  # noqa: ANN001, ANN202 - tmp_path
    from tests.union.fold_scenario import MANIFEST, UNION, Fold

    fold = Fold(root)
    main = fold.up.commit({"m.py": MIXED}, "m", parent=fold.base, ref="refs/heads/main")
    fold.up.commit({"m.py": _with("alpha", "11")}, "one", parent=main, ref="refs/pull/1/head")
    fold.up.commit({"m.py": _with("beta", "12")}, "two", parent=main, ref="refs/pull/2/head")
    text = MANIFEST % {"union": UNION, "fork_url": ""}
    fold.manifest.write_text(text.replace("fork:", POLICY + "fork:", 1)
                             if policy else text)
    return fold


@pytest.mark.parametrize("git", GITS)
def test_a_file_with_an_adjacency_and_a_true_conflict_stops_only_on_the_conflict(cli: Cli, tmp_path, git: str) -> None:
    from carrytool.union.resolutions import ConflictHunk, split_conflicts

    plain = _mixed_union(tmp_path / "plain", policy=False)
    result = cli("union", "compose", "u", *plain.args(), env=_env(git))
    assert result.exit_code == 3, result.stdout + result.stderr
    before = [p for p in split_conflicts((plain.scratch / "m.py").read_bytes()) or [] if isinstance(p, ConflictHunk)]
    assert len(before) == 2                                  # without the policy: both hunks conflict

    fold = _mixed_union(tmp_path / "structured", policy=True)
    result = cli("union", "compose", "u", *fold.args(), env=_env(git))
    assert result.exit_code == 3, result.stdout + result.stderr
    shown = (fold.scratch / "m.py").read_bytes()
    parts = split_conflicts(shown)
    hunks = [p for p in parts or [] if isinstance(p, ConflictHunk)]
    assert [(h.ours, h.theirs) for h in hunks] == [(b"    return 11", b"    return 12")]
    assert hunks[0].key == before[1].key                     # git's own hunk: the same resolution-store key
    assert shown.replace(b"\n<<<<<<< the union so far (upstream main, pr/1)\n    return 11\n=======\n    return 12\n>>>>>>> pr/2",
                         b"\n    return 11") == _with("alpha", "11").replace(
        "        return 'alpha'\n", "        return 'alpha'\n\n    def beta(self):\n        return 'beta'\n").encode()
    assert "resolved structurally (not recorded): m.py lines 8-13 (methods, pr/2)" in result.stdout
    (fold.scratch / "m.py").write_bytes(shown.replace(
        b"<<<<<<< the union so far (upstream main, pr/1)\n    return 11\n=======\n    return 12\n>>>>>>> pr/2", b"    return 13"))
    result = cli("union", "continue", "u", *fold.args(), env=_env(git))
    assert result.exit_code == 0, result.stdout + result.stderr
    records = [json.loads(p.read_text()) for p in (fold.manifest.parent / "resolutions" / "u").glob("*.json")]
    assert [(r["ours"], r["theirs"], r["resolution"]) for r in records] == [
        ("    return 11", "    return 12", "    return 13")]            # nothing recorded for the methods
    fixups = list((fold.manifest.parent / "resolutions" / "u" / "fixups").glob("*.json"))
    assert not [f for f in fixups if "beta" in f.read_text()]
    patch = (fold.manifest.parent / "unions" / "u.patch").read_text()
    assert "+    def alpha(self):" in patch and "+    def beta(self):" in patch and "+    return 13" in patch
    (fold.manifest.parent / "unions" / "u.patch").unlink()
    result = cli("union", "compose", "u", *fold.args(), env=_env(git))      # the next fold re-derives the methods, reuses 13
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "resolved structurally (not recorded): m.py lines 8-13 (methods, pr/2)" in result.stdout
    assert (fold.manifest.parent / "unions" / "u.patch").read_text() == patch
