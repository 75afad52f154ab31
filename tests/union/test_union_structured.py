"""`union compose` with policy.structured_merge (issue 19): the runner adjacency needs no recorded resolution."""

from __future__ import annotations

import json
import shutil

from carrytool.demo import sources
from carrytool.demo.scenario import Scenario
from tests.conftest import Cli
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
