"""The demo's source files: a pared-down model of the vLLM wake path (see ../shared/seed/ of the project).

The upstream files are written out whole; each PR is a list of (old, new) replacements on them, so the
overlaps are exact and easy to read: 45398 and 45612 both rewrite the line that wakes the allocator in
`Worker.wake_up`; 44778 and 45617 rewrite adjacent lines of `post_kv_cache_wake_up`; 45552 and 45612
add the same `torch.cuda.synchronize()` to `CuMemAllocator.wake_up`.

The demo's sleep-side drain (a `torch.cuda.synchronize()` before the unmap loop of `CuMemAllocator.sleep`)
is #45554: the fork's earlier unions name "the independently-carried #45552 / #45554 cumem.py hunks".
The seed's final union names "#45615/#45552" instead, and carries/vllm-intarweb.yaml follows that last
word (#45615 the sleep-side drain, #45554 disabled as dropped). The demo keeps the earlier number: it
models the fork before that change, and renumbering would move every SHA the demo pins (docs/explain.md).

Upstream's files are here, with where each text goes (upstream, each PR's commits, upstream's later
commits, the union); the PRs' versions, and the union's with its recorded resolution, are in pr_texts.py.
"""

from __future__ import annotations

from carrytool.demo.pr_texts import (
    _WAKE_ALLOCATOR,
    BACKEND_HELPER,
    CPP_NEW,
    CPP_OLD,
    CUMEM_SLEEP_NEW,
    CUMEM_SLEEP_OLD,
    CUMEM_WAKE_END_NEW,
    CUMEM_WAKE_END_OLD,
    FREED_NEW,
    FREED_OLD,
    HANDSHAKE_HELPERS,
    ITER_KV,
    KV_GATE_NEW,
    KV_GATE_OLD,
    KV_SCALES,
    PP_TEST,
    PP_UTILS,
    PR_45398_WAKE,
    PR_45612_WAKE,
    README_NEW,
    README_OLD,
    RESTORE_NEW,
    RESTORE_OLD,
    RUNNER_EXEC_GATED,
    RUNNER_EXEC_HOIST,
    RUNNER_EXEC_OLD,
    RUNNER_IMPORT_GATED,
    RUNNER_IMPORT_OLD,
    SLEEP_ALLOC_NEW,
    SLEEP_ALLOC_OLD,
    SLEEP_GET_NEW,
    SLEEP_GET_OLD,
    SLEEP_MODE_BACKEND,
    UNION_WAKE,
    WAKE_BARRIER_TEST,
    WORKER_CALL_GATED,
    WORKER_CALL_HOIST,
    WORKER_CALL_OLD,
    WORKER_EXEC_GATED,
    WORKER_EXEC_HOIST,
    WORKER_EXEC_OLD,
    WORKER_IMPORT_HOIST,
    WORKER_IMPORT_OLD,
    ZERO_44778,
    ZERO_45617,
    ZERO_BOTH,
    ZERO_OLD,
)

GPU_WORKER = '''\
"""A GPU worker: sleep/wake and model execution (a pared-down model of vllm/v1/worker/gpu_worker.py)."""

import torch
import torch.distributed as dist

from vllm.device_allocator.cumem import CuMemAllocator
from vllm.distributed.parallel_state import get_pp_group, get_tp_group, get_world_group
from vllm.logger import init_logger

logger = init_logger(__name__)


class Worker:
    def __init__(self, vllm_config, local_rank: int, rank: int) -> None:
        self.vllm_config = vllm_config
        self.local_rank = local_rank
        self.rank = rank
        self.model_runner = None
        self._sleep_saved_buffers: dict[str, torch.Tensor] = {}

    def sleep(self, level: int = 1) -> None:
        free_bytes_before_sleep = torch.cuda.mem_get_info()[0]
        allocator = CuMemAllocator.get_instance()

        # Save the buffers before level 2 sleep
        if level == 2:
            model = self.model_runner.model
            self._sleep_saved_buffers = {
                name: buffer.cpu().clone() for name, buffer in model.named_buffers()
            }

        offload_tags = ("weights",) if level == 1 else tuple()
        allocator.sleep(offload_tags=offload_tags)

        free_bytes_after_sleep, total = torch.cuda.mem_get_info()
        freed_bytes = free_bytes_after_sleep - free_bytes_before_sleep
        used_bytes = total - free_bytes_after_sleep
        assert freed_bytes >= 0, "Memory usage increased after sleeping."
        logger.info("Sleep mode freed %.2f GiB, %.2f GiB still in use.", freed_bytes / 2**30, used_bytes / 2**30)

    def wake_up(self, tags: list[str] | None = None) -> None:
        allocator = CuMemAllocator.get_instance()
        allocator.wake_up(tags)

        # Restore the buffers after level 2 sleep
        if len(self._sleep_saved_buffers):
            model = self.model_runner.model
            for name, buffer in model.named_buffers():
                if name in self._sleep_saved_buffers:
                    buffer.data.copy_(self._sleep_saved_buffers[name].data)
            self._sleep_saved_buffers = {}

        if tags is None or "kv_cache" in tags:
            self.model_runner.post_kv_cache_wake_up()

    def execute_model(self, scheduler_output):
        intermediate_tensors = None
        if not get_pp_group().is_first_rank:
            intermediate_tensors = get_pp_group().irecv_tensor_dict(all_gather_group=get_tp_group())

        output = self.model_runner.execute_model(scheduler_output, intermediate_tensors)
        if not get_pp_group().is_last_rank:
            get_pp_group().send_tensor_dict(output.tensors, all_gather_group=get_tp_group())
            return None
        return output
'''

GPU_MODEL_RUNNER = '''\
"""The GPU model runner (a pared-down model of vllm/v1/worker/gpu_model_runner.py)."""

import torch

from vllm.config import CUDAGraphMode
from vllm.distributed.parallel_state import get_pp_group


class GPUModelRunner:
    def __init__(self, vllm_config, device: torch.device) -> None:
        self.vllm_config = vllm_config
        self.device = device
        self.kv_caches: list[torch.Tensor] = []
        self.cudagraph_mode = CUDAGraphMode.FULL

    def cudagraph_mode_for(self, scheduler_output) -> CUDAGraphMode:
        if scheduler_output.total_num_scheduled_tokens > self.vllm_config.max_cudagraph_tokens:
            return CUDAGraphMode.NONE
        return self.cudagraph_mode

    def execute_model(self, scheduler_output, intermediate_tensors=None):
        cudagraph_mode = self.cudagraph_mode_for(scheduler_output)
        with self.maybe_capture(cudagraph_mode):
            hidden_states = self.model(scheduler_output.input_ids, intermediate_tensors)
        return self.sample(hidden_states)

    def _dummy_run(self, num_tokens: int) -> None:
        with self.maybe_capture(self.cudagraph_mode):
            self.model(torch.zeros(num_tokens, dtype=torch.long, device=self.device), None)

    def post_kv_cache_wake_up(self) -> None:
        # The KV cache comes back from sleep with garbage in it: zero it.
        for kv_cache in self.kv_caches:
            kv_cache.zero_()
        torch.cuda.synchronize()
'''

CUMEM = '''\
"""The cuMem allocator (a pared-down model of vllm/device_allocator/cumem.py)."""

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

CUMEM_CPP = '''\
// cuMem allocator bindings (a pared-down model of csrc/cumem_allocator.cpp).
#include <cuda.h>

extern "C" CUresult create_and_map(unsigned long long device, size_t size, CUdeviceptr d_mem) {
  CUmemGenericAllocationHandle handle;
  CUresult status = cuMemCreate(&handle, size, nullptr, 0);
  if (status != CUDA_SUCCESS) {
    return status;
  }
  return cuMemMap(d_mem, size, 0, handle, 0);
}
'''

PARALLEL_STATE = '''\
"""Process groups (a pared-down model of vllm/distributed/parallel_state.py)."""

_PP = None
_TP = None
_WORLD = None


def get_pp_group():
    return _PP


def get_tp_group():
    return _TP


def get_world_group():
    return _WORLD
'''

README = '''\
# vllm (demo upstream)

A pared-down model of vLLM's sleep/wake path, built by `carrytool demo`.
'''

WORKER = "vllm/v1/worker/gpu_worker.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"
CUMEM_PY = "vllm/device_allocator/cumem.py"
CUMEM_CU = "csrc/cumem_allocator.cpp"
BACKEND_PY = "vllm/device_allocator/sleep_mode_backend.py"
PP_UTILS_PY = "vllm/v1/worker/pp_utils.py"

UPSTREAM_FILES = {
    "README.md": README,
    WORKER: GPU_WORKER,
    RUNNER: GPU_MODEL_RUNNER,
    CUMEM_PY: CUMEM,
    CUMEM_CU: CUMEM_CPP,
    "vllm/distributed/parallel_state.py": PARALLEL_STATE,
}

# -- the PRs: (number, title, author, [commits]); a commit is {path: [(old, new), ...] or full text} ------

PRS = [
    (45552, "[BugFix] cumem: synchronize at wake exit", [
        {CUMEM_PY: [(CUMEM_WAKE_END_OLD, CUMEM_WAKE_END_NEW)]}]),
    (45554, "[BugFix] cumem: drain in-flight kernels before unmap in sleep()", [
        {CUMEM_PY: [(CUMEM_SLEEP_OLD, CUMEM_SLEEP_NEW)]}]),
    (45398, "[Feature] Pluggable sleep-mode backend (CuMemTagBackend, RFC #34303)", [
        {WORKER: [(SLEEP_GET_OLD, SLEEP_GET_NEW), (SLEEP_ALLOC_OLD, SLEEP_ALLOC_NEW),
                  (_WAKE_ALLOCATOR, PR_45398_WAKE), (KV_GATE_OLD, KV_GATE_NEW),
                  ("\n    def execute_model(self, scheduler_output):", BACKEND_HELPER)],
         BACKEND_PY: SLEEP_MODE_BACKEND}]),
    (45619, "[BugFix] Gate level-2 buffer restore on the weights wake tag", [
        {WORKER: [(RESTORE_OLD, RESTORE_NEW)]}]),
    (45620, "[BugFix] Do not crash sleep() when a shared GPU frees device-global memory", [
        {WORKER: [(FREED_OLD, FREED_NEW)]}]),
    (45612, "[BugFix] Fix cumem_tag PP-broadcast wake race with symmetric gloo wake handshake (#45519)", [
        {WORKER: [(_WAKE_ALLOCATOR, PR_45612_WAKE),
                  ("\n    def execute_model(self, scheduler_output):", HANDSHAKE_HELPERS)],
         CUMEM_PY: [(CUMEM_WAKE_END_OLD, CUMEM_WAKE_END_NEW)],
         "tests/v1/worker/test_gpu_worker_wake_barrier.py": WAKE_BARRIER_TEST}]),
    (44778, "[BugFix] Zero nested-container KV caches on wake (_iter_kv_cache_tensors)", [
        {RUNNER: [(ZERO_OLD, ZERO_44778), ("        torch.cuda.synchronize()\n", "        torch.cuda.synchronize()\n" + ITER_KV)]}]),
    (45617, "[BugFix] Restore calibrated FP8 KV scales on wake (scale_specs)", [
        {RUNNER: [(ZERO_OLD, ZERO_45617), ("        torch.cuda.synchronize()\n", "        torch.cuda.synchronize()\n" + KV_SCALES)]}]),
    (45610, "[BugFix] PP cudagraph-mode consensus (fixes the #45094 split-brain wedge)", [
        # commit 1: the consensus in the runner, gated so the dummy/capture path never all-reduces
        {RUNNER: [(RUNNER_IMPORT_OLD, RUNNER_IMPORT_GATED), (RUNNER_EXEC_OLD, RUNNER_EXEC_GATED)],
         WORKER: [(WORKER_EXEC_OLD, WORKER_EXEC_GATED), (WORKER_CALL_OLD, WORKER_CALL_GATED)],
         PP_UTILS_PY: PP_UTILS},
        # commit 2: hoist it into Worker.execute_model, before irecv_tensor_dict (the folded head)
        {RUNNER: [(RUNNER_IMPORT_GATED, RUNNER_IMPORT_OLD), (RUNNER_EXEC_GATED, RUNNER_EXEC_HOIST)],
         WORKER: [(WORKER_IMPORT_OLD, WORKER_IMPORT_HOIST), (WORKER_EXEC_GATED, WORKER_EXEC_HOIST),
                  (WORKER_CALL_GATED, WORKER_CALL_HOIST)]},
        # commit 3: pushed after the union folded commit 2
        {"tests/v1/worker/test_pp_cudagraph_consensus.py": PP_TEST}]),
    (45565, "[Kernel] cumem: retry cuMemCreate on transient OOM (C++)", [
        {CUMEM_CU: [(CPP_OLD, CPP_NEW)]}]),
    (45499, "[Doc] Mention the sleep-mode backends in the README", [
        {"README.md": [(README_OLD, README_NEW)]}]),
]

# Upstream after the PRs were opened: 45499 squash-merged, plus an unrelated change.
UPSTREAM_LATER = [
    ("[Doc] Mention the sleep-mode backends in the README (#45499)", {"README.md": [(README_OLD, README_NEW)]}),
    ("[Misc] Add process-group world sizes", {"vllm/distributed/parallel_state.py": [
        ("def get_world_group():\n    return _WORLD\n",
         "def get_world_group():\n    return _WORLD\n\n\ndef get_world_size() -> int:\n"
         "    return 1 if _WORLD is None else _WORLD.world_size\n")]}),
]

# The fork's union: every PR that rewrites gpu_worker.py / gpu_model_runner.py, composed once by hand.
UNION_SUPERSEDES = (45398, 45619, 45620, 45612, 44778, 45617, 45610)
UNION_FILES_EDITS = {
    WORKER: [(SLEEP_GET_OLD, SLEEP_GET_NEW), (SLEEP_ALLOC_OLD, SLEEP_ALLOC_NEW), (FREED_OLD, FREED_NEW),
             (_WAKE_ALLOCATOR, UNION_WAKE), (RESTORE_OLD, RESTORE_NEW), (KV_GATE_OLD, KV_GATE_NEW),
             ("\n    def execute_model(self, scheduler_output):", BACKEND_HELPER),
             ("\n    def execute_model(self, scheduler_output):", HANDSHAKE_HELPERS),
             (WORKER_IMPORT_OLD, WORKER_IMPORT_HOIST), (WORKER_EXEC_OLD, WORKER_EXEC_HOIST),
             (WORKER_CALL_OLD, WORKER_CALL_HOIST)],
    RUNNER: [(ZERO_OLD, ZERO_BOTH), ("        torch.cuda.synchronize()\n",
                                     "        torch.cuda.synchronize()\n" + ITER_KV + KV_SCALES),
             (RUNNER_EXEC_OLD, RUNNER_EXEC_HOIST)],
    BACKEND_PY: SLEEP_MODE_BACKEND,
    PP_UTILS_PY: PP_UTILS,
    "tests/v1/worker/test_gpu_worker_wake_barrier.py": WAKE_BARRIER_TEST,
}


def apply_edits(text: str, edits: list[tuple[str, str]], where: str) -> str:
    """Apply (old, new) replacements; each old text must occur exactly once."""
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            raise ValueError(f"demo source {where}: expected one occurrence, found {count}: {old[:60]!r}")
        text = text.replace(old, new)
    return text
