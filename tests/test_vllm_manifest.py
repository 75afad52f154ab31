"""carries/vllm-intarweb.yaml: valid, complete against the seed, and its asserts mean what they say.

The asserts are run on a small synthetic vLLM tree written below after the seed's final composition
(the wake-path union with the #45610 hoist f24612b, the cumem.py carries beside it), then on variants
that replay the failures of the seed's history: each must fail exactly the asserts that name it. Last,
the manifest drives a whole `carrytool sync` on a synthetic upstream with all twelve PRs.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from carrytool.manifest.load import load_manifest
from carrytool.manifest.schema import SHIPPED
from carrytool.pipeline.plan import plan_static
from tests.conftest import Cli
from tests.gitrepo import init_repo

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "carries" / "vllm-intarweb.yaml"
SEED_PRS = {45398, 45552, 45554, 45565, 45610, 45611, 45612, 45615, 45617, 45619, 45620, 44778}
SEED_ISSUES = {45519, 45094, 34303}          # issues and RFCs the seed names: not PRs to carry
UNION_SUPERSEDES = {44778, 45617, 45610}     # whole: "This commit is the SOLE provider"
UNION_BY_PATH = {45398, 45619, 45620, 45612}  # "the last word on gpu_worker.py + the #45398 support files"

WORKER = "vllm/v1/worker/gpu_worker.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"
PP_UTILS = "vllm/v1/worker/pp_utils.py"
CUMEM = "vllm/device_allocator/cumem.py"
BACKEND = "vllm/device_allocator/sleep_mode_backend.py"
CONFIG = "vllm/config/model.py"
KERNEL = "csrc/cumem_allocator.cpp"
BARRIER_TEST = "tests/v1/worker/test_gpu_worker_wake_barrier.py"
CUMEM_TEST = "tests/device_allocator/test_cumem_wake_synchronize.py"
SLEEP_DOC = "docs/features/sleep_mode.md"   # a file of #45398 the union does not carry: it applies from the loop


# --------------------------------------------------------------------------------------------------------
# The manifest itself


def test_manifest_passes_check(cli: Cli) -> None:
    result = cli("check", "-m", MANIFEST)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"{MANIFEST}: ok (13 entries: 12 PRs, 1 carry; 24 asserts)"


def test_manifest_validates_against_the_shipped_schema() -> None:
    first = MANIFEST.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../carrytool/schemas/manifest.schema.json"
    assert (MANIFEST.parent / first.split("=", 1)[1]).resolve() == SHIPPED
    jsonschema.validate(yaml.safe_load(MANIFEST.read_text()), json.loads(SHIPPED.read_text()))


def test_manifest_names_every_pr_of_the_seed_and_no_issue() -> None:
    manifest = load_manifest(MANIFEST)
    prs = [e.number for e in manifest.entries if e.kind == "pr"]
    assert sorted(prs) == sorted(SEED_PRS) and len(prs) == len(set(prs))
    assert not SEED_ISSUES & set(prs)
    assert all(e.title for e in manifest.entries)
    assert manifest.upstream.url == "https://github.com/vllm-project/vllm.git" and manifest.upstream.branch == "main"
    assert manifest.fork.branch == "intarweb-dev"
    assert manifest.entry("pr/45612").title == ("[BugFix] Fix cumem_tag PP-broadcast wake race with symmetric gloo "
                                                "wake handshake (#45519)")


def test_every_entry_says_in_a_comment_where_it_comes_from() -> None:
    """Each entry's block (up to the next entry) has a comment, and most quote the seed."""
    blocks = re.split(r"\n(?=  - (?:pr|carry): )", MANIFEST.read_text().split("\nentries:\n", 1)[1]
                      .split("\nasserts:\n", 1)[0])[1:]
    assert len(blocks) == 13
    for block in blocks:
        assert re.search(r"^\s+# \S", block, re.M), block.splitlines()[0]
    assert sum('"' in "".join(l for l in b.splitlines() if l.strip().startswith("#")) for b in blocks) >= 11


def test_the_union_supersedes_owns_and_excludes_what_the_seed_says() -> None:
    manifest = load_manifest(MANIFEST)
    union = manifest.entry("carry/wake-path-union")
    assert union is not None and union.patch == "unions/wake-path-union.patch" and union.commit is None
    assert not (MANIFEST.parent / union.patch).exists(), "the union patch is written by `carrytool union compose`"
    whole = {s.pr for s in union.supersedes if not s.paths}
    assert whole == UNION_SUPERSEDES
    folded = {s.pr: s.head for s in union.supersedes if s.head}
    assert folded == {45610: "f24612b"}          # the hoist head, which replaced 4d20740
    partial = {s.pr: s.paths for s in union.supersedes if s.paths}
    assert set(partial) == UNION_BY_PATH and all(WORKER in paths for paths in partial.values())
    assert partial[45612] == (WORKER, BARRIER_TEST)
    assert set(partial[45398]) >= {BACKEND, CONFIG, "vllm/**/executor/abstract.py"}
    for path in (WORKER, RUNNER, PP_UTILS, BACKEND, CONFIG, "vllm/v1/worker/gpu/model_runner.py",
                 "vllm/v1/worker/gpu/dp_utils.py", "vllm/executor/ray_utils.py", "vllm/v1/executor/abstract.py"):
        assert any(_matches(p, path) for p in union.owns), path
    assert union.excludes == (CUMEM,)
    assert not any(_matches(p, CUMEM) for p in union.owns)
    assert set(manifest.policy.precompiled) >= {"csrc/**", "**/*.cu", "**/*.cuh", "CMakeLists.txt"}


def _matches(pattern: str, path: str) -> bool:
    from carrytool.manifest.paths import matches

    return matches(pattern, path)


def test_the_plan_before_any_diff() -> None:
    """What is decided from the manifest alone: three PRs superseded whole, #45554 and #45611 disabled, the
    gpu_worker.py PRs kept in the loop without what the union provides, the rest to diff."""
    steps = plan_static(load_manifest(MANIFEST), {})
    status = {s.entry.id: (s.status, s.reason, s.superseded_by) for s in steps}
    for number in UNION_SUPERSEDES:
        assert status[f"pr/{number}"] == ("skipped", "superseded", "carry/wake-path-union")
    assert status["pr/45611"][:2] == ("skipped", "disabled")
    assert status["pr/45554"][:2] == ("skipped", "disabled")   # dropped from the final union's carry list
    assert [i for i, (st, _r, _s) in status.items() if st != "skipped"] == \
        ["pr/45552", "pr/45615", "pr/45398", "pr/45619", "pr/45620", "pr/45612", "pr/45565",
         "carry/wake-path-union"]


def test_every_assert_says_why_and_which_entry_it_guards() -> None:
    manifest = load_manifest(MANIFEST)
    assert {a.name for a in manifest.asserts} == set(ALL_ASSERTS)
    for spec in manifest.asserts:
        assert spec.why and spec.entry, spec.name
    checks = {(a.check, a.scope) for a in manifest.asserts}
    assert ("order", "Worker.execute_model") in checks and ("order", "CuMemAllocator.sleep") in checks
    assert ("not_calls", "GPUModelRunner.execute_model") in checks
    gated = next(a for a in manifest.asserts if a.name == "pp-all-reduce-gated")
    assert (gated.file, gated.scope, gated.guarded_by) == (PP_UTILS, "coordinate_cudagraph_mode_across_pp",
                                                           "coordinate_pp_cudagraph_mode")
    # "not mentions": a grep-style marker "passes on both" a good and a broken build
    assert not [a.name for a in manifest.asserts if a.check in ("mentions", "defines")]
    assert all(a.scope for a in manifest.asserts), "every assert is scoped to where its invariant must hold"


def test_every_assumption_is_marked() -> None:
    """What the seed does not say is marked "Assumed" next to the assert or entry that relies on it."""
    text = MANIFEST.read_text()
    for needle in ("_kv_scale_specs", "time.sleep", "assert freed_bytes", "`tags` parameter", "keeps the 4d20740 gate",
                   "replaced by #45615", "does not state its PR", "it raises RuntimeError"):
        at = text.index(needle)
        block = text[text.rfind("\n  - ", 0, at):at]
        assert "ssumed" in block, needle


# --------------------------------------------------------------------------------------------------------
# A synthetic vLLM after the seed's final composition

WORKER_FINAL = '''\
"""GPU worker: the fork's composed sleep/wake and execute_model (a small model of gpu_worker.py)."""

import torch
import torch.distributed as dist

from vllm.device_allocator.sleep_mode_backend import get_sleep_mode_backend
from vllm.distributed.parallel_state import get_pp_group, get_tp_group, get_world_group
from vllm.logger import init_logger
from vllm.v1.worker.pp_utils import coordinate_cudagraph_mode_across_pp

logger = init_logger(__name__)


class Worker:
    def __init__(self, vllm_config, local_rank: int, rank: int) -> None:
        self.vllm_config = vllm_config
        self.model_runner = None
        self._sleep_saved_buffers: dict[str, torch.Tensor] = {}
        self._sleep_mode_backend = None

    def _get_sleep_mode_backend(self):
        # #45398: the pluggable sleep-mode backend
        if self._sleep_mode_backend is None:
            self._sleep_mode_backend = get_sleep_mode_backend(self.vllm_config.model_config.sleep_mode_backend)
        return self._sleep_mode_backend

    def sleep(self, level: int = 1) -> None:
        backend = self._get_sleep_mode_backend()
        free_bytes_before_sleep = torch.cuda.mem_get_info()[0]
        if level == 2:
            model = self.model_runner.model
            self._sleep_saved_buffers = {name: buffer.cpu().clone() for name, buffer in model.named_buffers()}
        backend.suspend(offload_tags=("weights",) if level == 1 else tuple())
        free_bytes_after_sleep, total = torch.cuda.mem_get_info()
        freed_bytes = free_bytes_after_sleep - free_bytes_before_sleep
        if freed_bytes < 0:
            # #45620: another process on a shared GPU freed device-global memory meanwhile; never crash here
            logger.warning("Sleep mode: free memory dropped by %d bytes (shared GPU?)", -freed_bytes)

    def _wake_handshake(self, local_ok: int) -> None:
        # #45612: all-reduce a per-rank success flag on the gloo world group, not a bare barrier
        flag = torch.tensor([local_ok], dtype=torch.int32)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=get_world_group().cpu_group)
        if int(flag.item()) == 0:
            raise RuntimeError("wake_up failed on a peer rank; every rank raises")

    def wake_up(self, tags: list[str] | None = None) -> None:
        backend = self._get_sleep_mode_backend()
        suspended_before_resume = backend.suspended_tags()
        needs_wake_sync = get_world_group().world_size > 1
        if needs_wake_sync:
            error = None
            try:
                backend.resume(tags)
            except Exception as exc:
                error = exc
            self._wake_handshake(0 if error else 1)
            if error is not None:
                raise error
        else:
            backend.resume(tags)

        # #45619: restore the level-2 buffers only when the weights wake
        if len(self._sleep_saved_buffers) and (tags is None or "weights" in tags):
            model = self.model_runner.model
            for name, buffer in model.named_buffers():
                if name in self._sleep_saved_buffers:
                    buffer.data.copy_(self._sleep_saved_buffers[name].data)
            self._sleep_saved_buffers = {}

        if "kv_cache" in suspended_before_resume and (tags is None or "kv_cache" in tags):
            self.model_runner.post_kv_cache_wake_up()

    def execute_model(self, scheduler_output):
        intermediate_tensors = None
        # #45610 hoist (f24612b): agree on the cudagraph mode before any stage blocks in irecv
        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(
            self.model_runner.cudagraph_mode_for(scheduler_output), coordinate_pp_cudagraph_mode=True)
        if not get_pp_group().is_first_rank:
            intermediate_tensors = get_pp_group().irecv_tensor_dict(all_gather_group=get_tp_group())
        output = self.model_runner.execute_model(scheduler_output, intermediate_tensors,
                                                 pp_synced_cudagraph_mode=pp_synced_cudagraph_mode)
        if not get_pp_group().is_last_rank:
            get_pp_group().send_tensor_dict(output.tensors, all_gather_group=get_tp_group())
            return None
        return output

# 45619
# 45620
'''

RUNNER_FINAL = '''\
"""GPU model runner (a small model of the fork's composed gpu_model_runner.py)."""

import torch

from vllm.config import CUDAGraphMode


class GPUModelRunner:
    def __init__(self, vllm_config, device: torch.device) -> None:
        self.vllm_config = vllm_config
        self.device = device
        self.kv_caches: list = []
        self.cudagraph_mode = CUDAGraphMode.FULL

    def cudagraph_mode_for(self, scheduler_output) -> CUDAGraphMode:
        if scheduler_output.total_num_scheduled_tokens > self.vllm_config.max_cudagraph_tokens:
            return CUDAGraphMode.NONE
        return self.cudagraph_mode

    def execute_model(self, scheduler_output, intermediate_tensors=None, pp_synced_cudagraph_mode=None):
        # #45610: the worker agreed on the mode before irecv; the runner only consumes it
        cudagraph_mode = pp_synced_cudagraph_mode
        if cudagraph_mode is None:
            cudagraph_mode = self.cudagraph_mode_for(scheduler_output)
        with self.maybe_capture(cudagraph_mode):
            hidden_states = self.model(scheduler_output.input_ids, intermediate_tensors)
        return self.sample(hidden_states)

    def _dummy_run(self, num_tokens: int) -> None:
        with self.maybe_capture(self.cudagraph_mode):
            self.model(torch.zeros(num_tokens, dtype=torch.long, device=self.device), None)

    def _iter_kv_cache_tensors(self):
        # #44778: KV caches may be nested containers (lists of tuples of tensors)
        stack = list(self.kv_caches)
        while stack:
            item = stack.pop()
            if isinstance(item, torch.Tensor):
                yield item
            else:
                stack.extend(item)

    def _kv_scale_specs(self):
        return [(layer, layer.calibrated_k_scale, layer.calibrated_v_scale) for layer in self.attention_layers]

    def post_kv_cache_wake_up(self) -> None:
        for tensor in self._iter_kv_cache_tensors():
            tensor.zero_()
        # #45617: the calibrated FP8 KV scales come back too
        scale_specs = self._kv_scale_specs()
        for layer, k_scale, v_scale in scale_specs:
            layer._k_scale.fill_(k_scale)
            layer._v_scale.fill_(v_scale)
        torch.cuda.synchronize()
'''

PP_UTILS_FINAL = '''\
"""Pipeline-parallel helpers (a small model of the fork's vllm/v1/worker/pp_utils.py)."""

import torch
import torch.distributed as dist

from vllm.config import CUDAGraphMode
from vllm.distributed.parallel_state import get_pp_group


def coordinate_cudagraph_mode_across_pp(mode: CUDAGraphMode, coordinate_pp_cudagraph_mode: bool = False):
    """Agree on one cudagraph mode across PP stages (MIN), only when the real execute_model asks."""
    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:
        agreed = torch.tensor([int(mode)], dtype=torch.int32)
        dist.all_reduce(agreed, op=dist.ReduceOp.MIN, group=get_pp_group().cpu_group)
        return CUDAGraphMode(int(agreed.item()))
    return mode
'''

CUMEM_UPSTREAM = '''\
"""The cuMem allocator (a small model of vllm/device_allocator/cumem.py)."""

import torch

from vllm.device_allocator.cumem_bindings import create_and_map, unmap_and_release


class CuMemAllocator:
    instance = None

    @staticmethod
    def get_instance() -> "CuMemAllocator":
        if CuMemAllocator.instance is None:
            CuMemAllocator.instance = CuMemAllocator()
        return CuMemAllocator.instance

    def __init__(self) -> None:
        self.pointer_to_data = {}

    def sleep(self, offload_tags: tuple[str, ...] = ()) -> None:
        for ptr, data in self.pointer_to_data.items():
            if data.tag in offload_tags:
                data.cpu_backup_tensor = self._backup(data)
            unmap_and_release(data.handle)

    def _backup(self, data):
        size_in_bytes = data.handle[1]
        cpu_backup_tensor = torch.empty(size_in_bytes, dtype=torch.uint8, device="cpu", pin_memory=True)
        cpu_backup_tensor.copy_(data.as_tensor())
        return cpu_backup_tensor

    def get_current_usage(self) -> int:
        return sum(data.handle[1] for data in self.pointer_to_data.values())

    def wake_up(self, tags: list[str] | None = None) -> None:
        for ptr, data in self.pointer_to_data.items():
            if tags is None or data.tag in tags:
                create_and_map(data.handle)
                if data.cpu_backup_tensor is not None:
                    data.as_tensor().copy_(data.cpu_backup_tensor)
                    data.cpu_backup_tensor = None
'''

SLEEP_SYNC = ("    def sleep(self, offload_tags: tuple[str, ...] = ()) -> None:\n",
              "    def sleep(self, offload_tags: tuple[str, ...] = ()) -> None:\n"
              "        torch.cuda.synchronize()  # drain in-flight kernels before any cuMemUnmap\n")
WAKE_SYNC = ("                    data.cpu_backup_tensor = None\n",
             "                    data.cpu_backup_tensor = None\n        torch.cuda.synchronize()\n")
USAGE_45554 = ("        return sum(data.handle[1] for data in self.pointer_to_data.values())\n",
               "        return sum(data.handle[1] for data in self.pointer_to_data.values() if data.mapped)\n")


def edit(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


CUMEM_FINAL = edit(CUMEM_UPSTREAM, SLEEP_SYNC, WAKE_SYNC)   # #45554 is not in the final carry list

FINAL = {WORKER: WORKER_FINAL, RUNNER: RUNNER_FINAL, PP_UTILS: PP_UTILS_FINAL, CUMEM: CUMEM_FINAL}

ALL_ASSERTS = ("sleep-through-backend", "sleep-no-raw-allocator", "sleep-no-crash-on-free-drop", "resume-once",
               "no-raw-allocator-wake", "kv-snapshot-before-resume", "kv-wake-gated-on-snapshot",
               "wake-handshake-min", "wake-handshake-after-resume", "wake-handshake-failure-raises",
               "wake-local-wake-in-try",
               "level2-restore-gated-on-tags", "pp-consensus-before-irecv", "worker-passes-synced-mode",
               "runner-consumes-synced-mode",
               "runner-no-consensus", "runner-no-all-reduce", "dummy-run-no-all-reduce", "pp-all-reduce-gated",
               "pp-consensus-min-on-gloo", "kv-nested-zero-on-wake", "fp8-scale-restore-on-wake",
               "wake-exit-synchronize", "sync-before-unmap")

# The seed's failures, replayed on the final tree: (what happened, edits per file, the asserts that fail).
CLOBBERS = {
    # "#45612 is cherry-picked onto the composed intarweb-dev with -X theirs": its handshake wraps the raw
    # allocator, and backend.resume is gone.
    "45612-theirs-over-45398": ({WORKER: [("backend.resume(tags)\n            except", "allocator.wake_up(tags)\n"
                                           "            except"),
                                          ("        else:\n            backend.resume(tags)\n",
                                           "        else:\n            allocator.wake_up(tags)\n")]},
                                {"resume-once", "no-raw-allocator-wake", "kv-snapshot-before-resume",
                                 "wake-handshake-after-resume", "wake-local-wake-in-try"}),
    # "NO raw allocator.wake_up Block B double-wake": the raw wake next to backend.resume.
    "block-b-double-wake": ({WORKER: [("        # #45619:", "        allocator.wake_up(tags)\n\n        # #45619:")]},
                            {"no-raw-allocator-wake"}),
    # "sequential -X-theirs drops them": the gpu_model_runner.py hunks of #44778 and #45617.
    "runner-hunks-dropped": ({RUNNER: [("for tensor in self._iter_kv_cache_tensors():", "for tensor in self.kv_caches:"),
                                       ("        scale_specs = self._kv_scale_specs()\n"
                                        "        for layer, k_scale, v_scale in scale_specs:\n"
                                        "            layer._k_scale.fill_(k_scale)\n"
                                        "            layer._v_scale.fill_(v_scale)\n", "")]},
                             {"kv-nested-zero-on-wake", "fp8-scale-restore-on-wake"}),
    # 4d20740, before the hoist: the runner self-issues the consensus, after the worker's irecv.
    "pre-hoist-4d20740": ({WORKER: [("        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(\n"
                                     "            self.model_runner.cudagraph_mode_for(scheduler_output), "
                                     "coordinate_pp_cudagraph_mode=True)\n", ""),
                                    (",\n                                                 "
                                     "pp_synced_cudagraph_mode=pp_synced_cudagraph_mode)",
                                     ", coordinate_pp_cudagraph_mode=True)")],
                           RUNNER: [("pp_synced_cudagraph_mode=None):", "coordinate_pp_cudagraph_mode=False):"),
                                    ("        cudagraph_mode = pp_synced_cudagraph_mode\n"
                                     "        if cudagraph_mode is None:\n"
                                     "            cudagraph_mode = self.cudagraph_mode_for(scheduler_output)\n",
                                     "        cudagraph_mode = self.cudagraph_mode_for(scheduler_output)\n"
                                     "        if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:\n"
                                     "            get_pp_group().all_reduce(cudagraph_mode)\n")]},
                          {"pp-consensus-before-irecv", "runner-no-all-reduce", "worker-passes-synced-mode",
                           "runner-consumes-synced-mode"}),
    # The union before 4d20740: "the prior union carried the ungated version, which wedged TP2/PP2 at startup".
    "ungated-consensus": ({PP_UTILS: [("    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:\n",
                                       "    if get_pp_group().world_size > 1:\n")]},
                          {"pp-all-reduce-gated"}),
    # "Bundling it here would let this commit's `-X theirs` last-apply clobber those carries".
    "union-clobbers-cumem": ({CUMEM: [(SLEEP_SYNC[1], SLEEP_SYNC[0]), (WAKE_SYNC[1], WAKE_SYNC[0])]},
                             {"sync-before-unmap", "wake-exit-synchronize"}),
    # A comment is not a fix: the grep markers survive, the code does not.
    "markers-only-in-comments": ({RUNNER: [("for tensor in self._iter_kv_cache_tensors():",
                                            "for tensor in self.kv_caches:  # _iter_kv_cache_tensors"),
                                           ("        scale_specs = self._kv_scale_specs()\n"
                                            "        for layer, k_scale, v_scale in scale_specs:\n",
                                            "        # scale_specs restore: see #45617\n"
                                            "        for layer, k_scale, v_scale in self._kv_scale_specs():\n")]},
                                 {"kv-nested-zero-on-wake", "fp8-scale-restore-on-wake"}),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def failing(cli: Cli, tree: Path) -> tuple[int, set[str], dict]:
    code, report = cli.json("verify", "-m", MANIFEST, "--path", tree)
    return code, {a["name"] for a in report["asserts"] if not a["ok"]}, report


def test_asserts_hold_on_the_seeds_final_composition(cli: Cli, tmp_path: Path) -> None:
    code, failed, report = failing(cli, write_tree(tmp_path, FINAL))
    assert code == 0 and failed == set(), [a["message"] for a in report["asserts"] if not a["ok"]]
    assert [a["name"] for a in report["asserts"]] == list(ALL_ASSERTS)


@pytest.mark.parametrize("story", sorted(CLOBBERS))
def test_asserts_catch_the_seeds_clobbers(cli: Cli, tmp_path: Path, story: str) -> None:
    edits, expected = CLOBBERS[story]
    files = dict(FINAL)
    for path, changes in edits.items():
        files[path] = edit(files[path], *changes)
    code, failed, report = failing(cli, write_tree(tmp_path, files))
    assert code == 1 and failed == expected, [a["message"] for a in report["asserts"] if not a["ok"]]


def test_missing_files_fail_closed(cli: Cli, tmp_path: Path) -> None:
    """The assumed pp_utils.py helper: if the real union puts the all-reduce elsewhere, the assert says so."""
    files = {k: v for k, v in FINAL.items() if k != PP_UTILS}
    code, failed, report = failing(cli, write_tree(tmp_path, files))
    assert code == 1 and failed == {"pp-all-reduce-gated", "pp-consensus-min-on-gloo"}
    message = next(a["message"] for a in report["asserts"] if a["name"] == "pp-all-reduce-gated")
    assert "vllm/v1/worker/pp_utils.py is not a file in " in message


# --------------------------------------------------------------------------------------------------------
# The whole manifest through `carrytool sync`, on a synthetic upstream with every PR


WORKER_UPSTREAM = '''\
"""GPU worker (a small model of upstream's gpu_worker.py)."""

import torch

from vllm.device_allocator.cumem import CuMemAllocator
from vllm.distributed.parallel_state import get_pp_group, get_tp_group


class Worker:
    def sleep(self, level: int = 1) -> None:
        allocator = CuMemAllocator.get_instance()
        allocator.sleep(offload_tags=("weights",) if level == 1 else tuple())

    def wake_up(self, tags: list[str] | None = None) -> None:
        allocator = CuMemAllocator.get_instance()
        allocator.wake_up(tags)

    def execute_model(self, scheduler_output):
        intermediate_tensors = None
        if not get_pp_group().is_first_rank:
            intermediate_tensors = get_pp_group().irecv_tensor_dict(all_gather_group=get_tp_group())
        return self.model_runner.execute_model(scheduler_output, intermediate_tensors)
'''

UPSTREAM = {
    WORKER: WORKER_UPSTREAM,
    RUNNER: '"""GPU model runner (upstream)."""\n\n\nclass GPUModelRunner:\n    def execute_model(self, s, t=None):\n'
            '        return self.model(s, t)\n',
    CUMEM: CUMEM_UPSTREAM,
    CONFIG: '"""Model config (upstream)."""\n\n\nclass ModelConfig:\n    enable_sleep_mode: bool = False\n',
    KERNEL: '// cuMem allocator bindings\nextern "C" int create_and_map(void) { return 0; }\n',
}

UNION = {**{path: text for path, text in FINAL.items() if path != CUMEM}, BACKEND: '"""Pluggable sleep-mode backends (#45398)."""\n\n\nclass SleepModeBackend:\n'
         '    pass\n', CONFIG: UPSTREAM[CONFIG] + '    sleep_mode_backend: str = "cumem"\n',
         BARRIER_TEST: "def test_handshake_gates_backend_resume():\n    pass  # the fork's 17 cases\n"}

PR_FILES = {
    45552: {CUMEM: edit(CUMEM_UPSTREAM, WAKE_SYNC)},
    45554: {CUMEM: edit(CUMEM_UPSTREAM, USAGE_45554)},
    45615: {CUMEM: edit(CUMEM_UPSTREAM, SLEEP_SYNC)},
    45398: {WORKER: WORKER_UPSTREAM.replace("allocator.wake_up(tags)", "backend.resume(tags)"), BACKEND: UNION[BACKEND],
            SLEEP_DOC: "# Sleep mode\n\n`--sleep-mode-backend=cumem_tag` (#45398)\n"},
    # the stand-ins for #45619's and #45620's own lines: the union, the last word on gpu_worker.py, keeps both
    # (WORKER_FINAL ends with them); its code at the file's end is no form of a comment (pipeline.lineroles)
    45619: {WORKER: WORKER_UPSTREAM + "\n# 45619\n"},
    45620: {WORKER: WORKER_UPSTREAM + "\n# 45620\n"},
    45612: {CUMEM: edit(CUMEM_UPSTREAM, WAKE_SYNC), CUMEM_TEST: "def test_wake_up_synchronizes_last():\n    pass\n",
            WORKER: WORKER_UPSTREAM.replace("allocator.wake_up(tags)", "allocator.wake_up(tags)  # + handshake"),
            BARRIER_TEST: "def test_handshake():\n    pass  # the PR's 15 cases\n"},
    44778: {RUNNER: UPSTREAM[RUNNER] + "\n# 44778\n"},
    45617: {RUNNER: UPSTREAM[RUNNER] + "\n# 45617\n"},
    45610: {RUNNER: UPSTREAM[RUNNER] + "\n# 45610\n", PP_UTILS: PP_UTILS_FINAL},
    45565: {KERNEL: UPSTREAM[KERNEL] + "// retry cuMemCreate on CUDA_ERROR_OUT_OF_MEMORY\n"},
    45611: {"README.md": "45611\n"},
}


def test_sync_composes_the_real_manifest(cli: Cli, tmp_path: Path, report_schema: dict) -> None:
    upstream = init_repo(tmp_path / "upstream.git", bare=True)
    base = upstream.commit(UPSTREAM, "upstream", ref="refs/heads/main")
    for number, files in PR_FILES.items():
        upstream.commit(files, f"PR {number}", parent=base, ref=f"refs/pull/{number}/head")
    union = upstream.commit(UNION, "wake-path union", parent=base)
    carries = tmp_path / "carries"
    (carries / "unions").mkdir(parents=True)
    (carries / "unions" / "wake-path-union.patch").write_text(upstream.git("format-patch", "-1", "--stdout", union)
                                                              + "\n")
    text = MANIFEST.read_text().replace("https://github.com/vllm-project/vllm.git", "../upstream.git")
    manifest = carries / "vllm-intarweb.yaml"
    manifest.write_text(text.replace("git@github.com:intarweb/vllm.git", "../fork.git"))
    init_repo(tmp_path / "fork.git", bare=True)
    work = init_repo(tmp_path / "work.git", bare=True)

    code, report = cli.json("sync", "-m", manifest, "--repo", work.path)
    assert code == 0, json.dumps([report.get("error"), report.get("violations"), report.get("asserts")], indent=1)
    jsonschema.validate(report, report_schema)
    status = {e["id"]: (e["status"], e.get("reason")) for e in report["entries"]}
    assert status == {
        "pr/45552": ("applied", None), "pr/45554": ("skipped", "disabled"), "pr/45615": ("applied", None),
        **{f"pr/{n}": ("skipped", "superseded") for n in UNION_SUPERSEDES},
        # by path: what the union does not carry still applies; a PR wholly covered is reported superseded
        "pr/45398": ("applied", None), "pr/45619": ("skipped", "superseded"), "pr/45620": ("skipped", "superseded"),
        "pr/45612": ("applied", None), "pr/45565": ("skipped", "precompiled"), "pr/45611": ("skipped", "disabled"),
        "carry/wake-path-union": ("applied", None)}
    backend = next(e for e in report["entries"] if e["id"] == "pr/45398")
    assert backend["files"] == [SLEEP_DOC] and backend["filtered"] == [BACKEND, WORKER]
    assert work.show("refs/heads/intarweb-dev", SLEEP_DOC) + "\n" == PR_FILES[45398][SLEEP_DOC]
    partial = next(e for e in report["entries"] if e["id"] == "pr/45612")
    # #45612 without what the union provides: its cumem.py hunk (the same as #45552's) and its cumem test
    assert partial["filtered"] == [BARRIER_TEST, WORKER] and partial["files"] == [CUMEM_TEST, CUMEM]
    assert {(w["entry"], w["other"], w["file"]) for w in report["warnings"] if w["kind"] == "identical-hunk"} == \
        {("pr/45612", "pr/45552", CUMEM)}
    assert all(a["ok"] for a in report["asserts"]) and len(report["asserts"]) == len(ALL_ASSERTS)
    assert [w["pr"] for w in report["warnings"] if w["kind"] == "stale-fold"] == [45610]
    # the union re-expresses #45612's handshake test as the fork's own (renamed, "17 cases" against the
    # PR's 15): nothing it folds is left out (helper-131's review)
    assert not [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    tree = {path: work.show("refs/heads/intarweb-dev", path) + "\n" for path in FINAL}
    assert tree == FINAL
    lock = json.loads((carries / "vllm-intarweb.yaml.lock").read_text())
    assert lock["result"] == report["result"]["sha"]


def test_sync_refuses_a_pr_that_edits_what_the_union_owns(cli: Cli, tmp_path: Path) -> None:
    """A later PR touching gpu_worker.py must be folded into the union, not cherry-picked past it."""
    upstream = init_repo(tmp_path / "upstream.git", bare=True)
    base = upstream.commit(UPSTREAM, "upstream", ref="refs/heads/main")
    upstream.commit({WORKER: WORKER_UPSTREAM + "\n# 45999\n"}, "PR 45999", parent=base, ref="refs/pull/45999/head")
    union = upstream.commit(UNION, "wake-path union", parent=base)
    carries = tmp_path / "carries"
    (carries / "unions").mkdir(parents=True)
    (carries / "unions" / "wake-path-union.patch").write_text(upstream.git("format-patch", "-1", "--stdout", union)
                                                              + "\n")
    data = yaml.safe_load(MANIFEST.read_text())
    data["upstream"]["url"] = "../upstream.git"
    del data["fork"]["url"], data["asserts"]
    data["entries"] = [{"pr": 45999, "title": "a later wake-path PR"}, data["entries"][-1]]
    manifest = carries / "m.yaml"
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    result = cli("sync", "-m", manifest, "--repo", init_repo(tmp_path / "work.git", bare=True).path, "--dry-run")
    assert result.exit_code == 2
    assert "pr/45999 changes vllm/v1/worker/gpu_worker.py, which carry/wake-path-union owns" in result.stdout + \
        result.stderr


def test_the_union_patch_is_not_committed() -> None:
    """`carrytool union compose wake-path-union` writes it from the real PR heads; no stand-in is shipped."""
    assert not (ROOT / "carries" / "unions").exists()
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "carries/unions"], capture_output=True, text=True)
    assert out.stdout == ""


# --------------------------------------------------------------------------------------------------------
# Mutants: the story's correct composition (the demo's union, the cumem.py carries beside it) broken one
# stated invariant at a time. Each must fail exactly the asserts that guard that invariant (an invariant
# whose call also takes part in an `order` fails that order too: a dropped call is "never called").


def demo_composition() -> dict[str, str]:
    """The files the demo's correct composition ends with: upstream + the union + #45552 + the sleep drain."""
    from carrytool.demo import pr_texts as t
    from carrytool.demo import sources as s

    files = dict(s.UPSTREAM_FILES)
    for path, change in s.UNION_FILES_EDITS.items():
        files[path] = change if isinstance(change, str) else s.apply_edits(files[path], change, path)
    files[CUMEM] = s.apply_edits(files[CUMEM], [(t.CUMEM_WAKE_END_OLD, t.CUMEM_WAKE_END_NEW),
                                                 (t.CUMEM_SLEEP_OLD, t.CUMEM_SLEEP_NEW)], CUMEM)
    return files


HANDSHAKE_CALL = "        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=get_world_group().cpu_group)\n"
LOCAL_WAKE_TRY = ("            try:\n                backend.resume(tags)\n            except Exception:\n"
                  "                local_ok = 0\n")
SNAPSHOT = "        suspended_before_resume = backend.suspended_tags()\n"
SCALES = "        scale_specs = self._kv_scale_specs()\n        self._restore_kv_scales(scale_specs)\n"
CONSENSUS = ("        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(\n"
             "            self.model_runner.cudagraph_mode_for(scheduler_output))\n")
IRECV = ("        if not get_pp_group().is_first_rank:\n"
         "            intermediate_tensors = get_pp_group().irecv_tensor_dict(all_gather_group=get_tp_group())\n")
AGREE_HELPER = ("\n    def _agree_mode(self, mode):\n        return get_pp_group().all_reduce(mode)\n\n"
                "    def _dummy_run(self, num_tokens: int) -> None:\n")
WAKE_SYNC_DEMO = ("        # Drain this rank's re-map work before reporting the wake done (#45612 / #45552).\n"
                  "        torch.cuda.synchronize()\n")
WAKE_LOOP = "        for ptr, data in self.pointer_to_data.items():\n            if tags is None or data.tag in tags:\n"
SLEEP_SYNC_DEMO = ("        # Drain in-flight kernels before any cuMemUnmap: an async step may still write (#45554).\n"
                   "        torch.cuda.synchronize()\n")

# invariant -> ({file: [(old, new), ...]}, the asserts that must fail)
MUTANTS = {
    # #45612: the handshake
    "handshake-dropped": ({WORKER: [("            self._wake_handshake(local_ok)\n", "")]},
                          {"wake-handshake-min", "wake-handshake-after-resume", "wake-handshake-failure-raises"}),
    "handshake-result-ignored": ({WORKER: [("        if int(flag.item()) == 0:\n            raise RuntimeError(", "        if False:\n            print(")]},
                                 {"wake-handshake-failure-raises"}),
    "handshake-result-checked-before-the-all-reduce": ({WORKER: [(HANDSHAKE_CALL, ""), ('refusing to continue")\n',
                                                                                      'refusing to continue")\n' + HANDSHAKE_CALL)]},
                                                       {"wake-handshake-failure-raises"}),
    "handshake-before-local-wake": ({WORKER: [("            self._wake_handshake(local_ok)\n", ""),
                                              ("            local_ok = 1\n",
                                               "            local_ok = 1\n            self._wake_handshake(local_ok)\n")]},
                                    {"wake-handshake-after-resume"}),
    "handshake-on-device-group": ({WORKER: [("get_world_group().cpu_group)", "get_world_group().device_group)")]},
                                  {"wake-handshake-min"}),
    "handshake-sum-not-min": ({WORKER: [("op=dist.ReduceOp.MIN, group=get_world_group()",
                                         "op=dist.ReduceOp.SUM, group=get_world_group()")]}, {"wake-handshake-min"}),
    "bare-barrier-not-all-reduce": ({WORKER: [(HANDSHAKE_CALL, "        dist.barrier(group=get_world_group().cpu_group)\n")]},
                                    {"wake-handshake-min", "wake-handshake-after-resume", "wake-handshake-failure-raises"}),
    "local-wake-out-of-try": ({WORKER: [(LOCAL_WAKE_TRY, "            backend.resume(tags)\n")]},
                              {"wake-local-wake-in-try"}),
    # #45398: the backend, and the suspended_tags() snapshot that gates the KV wake
    "resume-twice": ({WORKER: [("        # Restore the buffers", "        backend.resume(tags)\n\n        # Restore the buffers")]},
                     {"resume-once"}),
    "raw-allocator-double-wake": ({WORKER: [("        # Restore the buffers",
                                             "        CuMemAllocator.get_instance().wake_up(tags)\n\n"
                                             "        # Restore the buffers")]}, {"no-raw-allocator-wake"}),
    "snapshot-after-resume": ({WORKER: [(SNAPSHOT, ""), ("        # Restore the buffers", SNAPSHOT + "        # Restore the buffers")]},
                              {"kv-snapshot-before-resume"}),
    "kv-wake-ungated": ({WORKER: [('        if "kv_cache" in suspended_before_resume:\n',
                                   '        if tags is None or "kv_cache" in tags:\n')]}, {"kv-wake-gated-on-snapshot"}),
    "sleep-through-raw-allocator": ({WORKER: [("        self._get_sleep_mode_backend().suspend(offload_tags)\n",
                                               "        CuMemAllocator.get_instance().sleep(offload_tags=offload_tags)\n")]},
                                    {"sleep-through-backend", "sleep-no-raw-allocator"}),
    "sleep-backend-and-raw-allocator": ({WORKER: [("        self._get_sleep_mode_backend().suspend(offload_tags)\n",
                                                   "        self._get_sleep_mode_backend().suspend(offload_tags)\n"
                                                   "        CuMemAllocator.get_instance().sleep(offload_tags=offload_tags)\n")]},
                                        {"sleep-no-raw-allocator"}),
    # #45619, #45620
    "level2-restore-ungated": ({WORKER: [(' and (tags is None or "weights" in tags):\n', ":\n")]},
                               {"level2-restore-gated-on-tags"}),
    "sleep-asserts-on-free-drop": ({WORKER: [("        if freed_bytes < 0:\n",
                                              '        assert freed_bytes >= 0, "Memory usage increased after sleeping."\n'
                                              "        if freed_bytes < 0:\n")]}, {"sleep-no-crash-on-free-drop"}),
    # #45610: the hoist
    "consensus-after-irecv": ({WORKER: [(CONSENSUS, ""), (IRECV, IRECV + CONSENSUS)]}, {"pp-consensus-before-irecv"}),
    "worker-drops-synced-mode": ({WORKER: [("            pp_synced_cudagraph_mode=pp_synced_cudagraph_mode)\n", ")\n")]},
                                 {"worker-passes-synced-mode"}),
    "runner-ignores-synced-mode": ({RUNNER: [("        if pp_synced_cudagraph_mode is not None:\n"
                                              "            cudagraph_mode = pp_synced_cudagraph_mode\n", "")]},
                                   {"runner-consumes-synced-mode"}),
    "runner-calls-consensus-helper": ({RUNNER: [("        if pp_synced_cudagraph_mode is not None:\n",
                                                 "        cudagraph_mode = coordinate_cudagraph_mode_across_pp(cudagraph_mode)\n"
                                                 "        if pp_synced_cudagraph_mode is not None:\n")]},
                                      {"runner-no-consensus"}),
    "runner-all-reduce-through-a-local-helper": ({RUNNER: [("        if pp_synced_cudagraph_mode is not None:\n",
                                                            "        cudagraph_mode = self._agree_mode(cudagraph_mode)\n"
                                                            "        if pp_synced_cudagraph_mode is not None:\n"),
                                                           ("\n    def _dummy_run(self, num_tokens: int) -> None:\n",
                                                            AGREE_HELPER)]}, {"runner-no-all-reduce"}),
    "dummy-run-calls-consensus": ({RUNNER: [("        with self.maybe_capture(self.cudagraph_mode):\n",
                                             "        mode = coordinate_cudagraph_mode_across_pp(self.cudagraph_mode)\n"
                                             "        with self.maybe_capture(mode):\n")]}, {"runner-no-consensus"}),
    "dummy-run-all-reduce-through-a-local-helper": ({RUNNER: [("        with self.maybe_capture(self.cudagraph_mode):\n",
                                                               "        with self.maybe_capture(self._agree_mode(self.cudagraph_mode)):\n"),
                                                              ("\n    def _dummy_run(self, num_tokens: int) -> None:\n",
                                                               AGREE_HELPER)]}, {"dummy-run-no-all-reduce"}),
    "consensus-ungated": ({PP_UTILS: [("    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:\n",
                                       "    if get_pp_group().world_size > 1:\n")]}, {"pp-all-reduce-gated"}),
    "consensus-max-not-min": ({PP_UTILS: [("op=dist.ReduceOp.MIN", "op=dist.ReduceOp.MAX")]}, {"pp-consensus-min-on-gloo"}),
    "consensus-on-device-group": ({PP_UTILS: [("group=get_pp_group().cpu_group", "group=get_pp_group().device_group")]},
                                  {"pp-consensus-min-on-gloo"}),
    # #44778, #45617: the KV wake path
    "flat-kv-zeroing": ({RUNNER: [("for tensor in self._iter_kv_cache_tensors():", "for tensor in self.kv_caches:")]},
                        {"kv-nested-zero-on-wake", "fp8-scale-restore-on-wake"}),
    "fp8-scales-not-restored": ({RUNNER: [(SCALES, "")]}, {"fp8-scale-restore-on-wake"}),
    "fp8-scales-before-zeroing": ({RUNNER: [(SCALES, ""), ("        for tensor in self._iter_kv_cache_tensors():\n",
                                                           SCALES + "        for tensor in self._iter_kv_cache_tensors():\n")]},
                                  {"fp8-scale-restore-on-wake"}),
    "fp8-scales-after-the-drain": ({RUNNER: [(SCALES + "        torch.cuda.synchronize()\n",
                                              "        torch.cuda.synchronize()\n" + SCALES)]}, {"fp8-scale-restore-on-wake"}),
    # cumem.py: #45552 / #45612 wake-exit drain, the sleep-side drain
    "wake-sync-dropped": ({CUMEM: [(WAKE_SYNC_DEMO, "")]}, {"wake-exit-synchronize"}),
    "wake-sync-before-remap": ({CUMEM: [(WAKE_SYNC_DEMO, ""), (WAKE_LOOP, "        torch.cuda.synchronize()\n" + WAKE_LOOP)]},
                               {"wake-exit-synchronize"}),
    "wake-sync-inside-the-remap-loop": ({CUMEM: [(WAKE_SYNC_DEMO, ""), (WAKE_LOOP, WAKE_LOOP + "                torch.cuda.synchronize()\n")]},
                                        {"wake-exit-synchronize"}),
    "sleep-sync-dropped": ({CUMEM: [(SLEEP_SYNC_DEMO, "")]}, {"sync-before-unmap"}),
    "sleep-sync-after-unmap": ({CUMEM: [(SLEEP_SYNC_DEMO, ""), ("    def _backup(self, data):\n",
                                                                "        torch.cuda.synchronize()\n\n    def _backup(self, data):\n")]},
                               {"sync-before-unmap"}),
}


def failing_in_memory(files: dict[str, str]) -> tuple[set[str], dict[str, str]]:
    from carrytool.asserts import evaluate_all

    outcomes = evaluate_all(load_manifest(MANIFEST).asserts,
                            lambda path: files[path].encode() if path in files else None)
    return {o.name for o in outcomes if not o.ok}, {o.name: o.message for o in outcomes}


def test_the_demo_composition_passes_every_assert() -> None:
    """No false failure on the forms the union itself uses: `self._get_sleep_mode_backend().suspend(...)`,
    the handshake in a `_wake_handshake` helper, `CuMemTagBackend` behind the worker."""
    failed, messages = failing_in_memory(demo_composition())
    assert failed == set(), [messages[name] for name in failed]
    assert "sleep-through-backend" in messages and "*.suspend is called exactly 1 time" in messages["sleep-through-backend"]


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_fails_exactly_the_asserts_guarding_its_invariant(mutant: str) -> None:
    edits, expected = MUTANTS[mutant]
    files = demo_composition()
    for path, changes in edits.items():
        files[path] = edit(files[path], *changes)
    failed, messages = failing_in_memory(files)
    assert failed == expected, {name: messages[name] for name in failed ^ expected}


def test_every_assert_guards_an_invariant_a_mutant_breaks() -> None:
    """A new invariant without a mutant is not done: every assert of the manifest is killed by one."""
    guarded = set().union(*(expected for _edits, expected in MUTANTS.values()))
    assert guarded == set(ALL_ASSERTS)


def test_a_mutant_through_the_cli_names_the_assert_and_the_line(cli: Cli, tmp_path: Path) -> None:
    edits, _ = MUTANTS["handshake-on-device-group"]
    files = demo_composition()
    files[WORKER] = edit(files[WORKER], *edits[WORKER])
    code, failed, report = failing(cli, write_tree(tmp_path, files))
    assert code == 1 and failed == {"wake-handshake-min"}
    outcome = next(a for a in report["asserts"] if not a["ok"])
    assert outcome["message"].startswith("Worker.wake_up: all_reduce(op=ReduceOp.MIN, group=cpu_group) is never "
                                         "called on any path through Worker.wake_up")
