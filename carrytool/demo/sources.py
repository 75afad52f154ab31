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
"""

from __future__ import annotations

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

SLEEP_MODE_BACKEND = '''\
"""Pluggable sleep-mode backends (RFC #34303): cumem (default) and cumem_tag."""

from vllm.device_allocator.cumem import CuMemAllocator


class SleepModeBackend:
    def suspend(self, offload_tags: tuple[str, ...]) -> None:
        raise NotImplementedError

    def resume(self, tags: list[str] | None) -> None:
        raise NotImplementedError

    def suspended_tags(self) -> set[str]:
        raise NotImplementedError


class CuMemTagBackend(SleepModeBackend):
    def __init__(self) -> None:
        self.allocator = CuMemAllocator.get_instance()
        self._suspended: set[str] = set()

    def suspend(self, offload_tags: tuple[str, ...]) -> None:
        self.allocator.sleep(offload_tags=offload_tags)
        self._suspended = {"weights", "kv_cache"}

    def resume(self, tags: list[str] | None) -> None:
        self.allocator.wake_up(tags)
        self._suspended -= set(tags or self._suspended)

    def suspended_tags(self) -> set[str]:
        return set(self._suspended)
'''

PP_UTILS = '''\
"""Pipeline-parallel helpers."""

import torch
import torch.distributed as dist

from vllm.config import CUDAGraphMode
from vllm.distributed.parallel_state import get_pp_group


def coordinate_cudagraph_mode_across_pp(mode: CUDAGraphMode, coordinate_pp_cudagraph_mode: bool = True):
    """Agree on one cudagraph mode across PP stages (MIN), so no stage captures alone (#45094)."""
    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:
        agreed = torch.tensor([int(mode)], dtype=torch.int32)
        dist.all_reduce(agreed, op=dist.ReduceOp.MIN, group=get_pp_group().cpu_group)
        return CUDAGraphMode(int(agreed.item()))
    return mode
'''

PP_TEST = '''\
"""The PP cudagraph consensus runs in the worker, before the inter-stage receive."""

import ast
import inspect

from vllm.v1.worker import gpu_worker


def test_consensus_precedes_irecv():
    source = inspect.getsource(gpu_worker.Worker.execute_model)
    assert source.index("coordinate_cudagraph_mode_across_pp") < source.index("irecv_tensor_dict")
    ast.parse(source.strip())
'''

WAKE_BARRIER_TEST = '''\
"""The wake handshake fires on multi-rank configs and makes every rank raise when one fails."""


def test_failed_peer_raises(worker_factory):
    worker = worker_factory(world_size=2, peer_ok=False)
    try:
        worker.wake_up(["weights"])
    except RuntimeError as exc:
        assert "peer" in str(exc)
    else:
        raise AssertionError("a failed peer must make this rank raise")
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

_WAKE_ALLOCATOR = '''\
        allocator = CuMemAllocator.get_instance()
        allocator.wake_up(tags)
'''

PR_45398_WAKE = '''\
        backend = self._get_sleep_mode_backend()
        suspended_before_resume = backend.suspended_tags()
        backend.resume(tags)
'''

PR_45612_WAKE = '''\
        allocator = CuMemAllocator.get_instance()
        needs_wake_sync = self._needs_wake_sync()
        if needs_wake_sync:
            # Symmetric wake handshake (#45519): no rank may reach a device-group collective
            # before every rank finished its local wake; a failed wake fails every rank.
            local_ok = 1
            try:
                allocator.wake_up(tags)
            except Exception:
                local_ok = 0
            self._wake_handshake(local_ok)
        else:
            allocator.wake_up(tags)
'''

UNION_WAKE = '''\
        backend = self._get_sleep_mode_backend()
        suspended_before_resume = backend.suspended_tags()
        needs_wake_sync = self._needs_wake_sync()
        if needs_wake_sync:
            # Symmetric wake handshake (#45519), re-expressed against backend.resume (#45398):
            # no rank may reach a device-group collective before every rank finished its local wake.
            local_ok = 1
            try:
                backend.resume(tags)
            except Exception:
                local_ok = 0
            self._wake_handshake(local_ok)
        else:
            backend.resume(tags)
'''

HANDSHAKE_HELPERS = '''\

    def _needs_wake_sync(self) -> bool:
        return get_world_group().world_size > 1

    def _wake_handshake(self, local_ok: int) -> None:
        """All-reduce a per-rank success flag on the gloo group (MIN): not a bare barrier, so a
        failed local wake cannot strand its peers."""
        flag = torch.tensor([local_ok], dtype=torch.int32)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=get_world_group().cpu_group)
        if int(flag.item()) == 0:
            raise RuntimeError("wake_up failed on this rank or a peer rank; refusing to continue")

    def execute_model(self, scheduler_output):'''

BACKEND_HELPER = '''\

    def _get_sleep_mode_backend(self):
        from vllm.device_allocator.sleep_mode_backend import CuMemTagBackend

        if getattr(self, "_sleep_mode_backend", None) is None:
            self._sleep_mode_backend = CuMemTagBackend()
        return self._sleep_mode_backend

    def execute_model(self, scheduler_output):'''

KV_GATE_OLD = '''\
        if tags is None or "kv_cache" in tags:
            self.model_runner.post_kv_cache_wake_up()
'''
KV_GATE_NEW = '''\
        if "kv_cache" in suspended_before_resume:
            self.model_runner.post_kv_cache_wake_up()
'''

SLEEP_ALLOC_OLD = '''\
        offload_tags = ("weights",) if level == 1 else tuple()
        allocator.sleep(offload_tags=offload_tags)
'''
SLEEP_ALLOC_NEW = '''\
        offload_tags = ("weights",) if level == 1 else tuple()
        self._get_sleep_mode_backend().suspend(offload_tags)
'''
SLEEP_GET_OLD = "        free_bytes_before_sleep = torch.cuda.mem_get_info()[0]\n        allocator = CuMemAllocator.get_instance()\n"
SLEEP_GET_NEW = "        free_bytes_before_sleep = torch.cuda.mem_get_info()[0]\n"

RESTORE_OLD = "        if len(self._sleep_saved_buffers):\n"
RESTORE_NEW = '        if len(self._sleep_saved_buffers) and (tags is None or "weights" in tags):\n'

FREED_OLD = '        assert freed_bytes >= 0, "Memory usage increased after sleeping."\n'
FREED_NEW = '''\
        if freed_bytes < 0:
            # Another process on a shared GPU freed device-global memory meanwhile (#45620).
            logger.warning("Free memory dropped by %d bytes during sleep (shared GPU?)", -freed_bytes)
'''

ZERO_OLD = '''\
        for kv_cache in self.kv_caches:
            kv_cache.zero_()
        torch.cuda.synchronize()
'''
ZERO_44778 = '''\
        for tensor in self._iter_kv_cache_tensors():
            tensor.zero_()
        torch.cuda.synchronize()
'''
ZERO_45617 = '''\
        for kv_cache in self.kv_caches:
            kv_cache.zero_()
        scale_specs = self._kv_scale_specs()
        self._restore_kv_scales(scale_specs)
        torch.cuda.synchronize()
'''
ZERO_BOTH = '''\
        for tensor in self._iter_kv_cache_tensors():
            tensor.zero_()
        scale_specs = self._kv_scale_specs()
        self._restore_kv_scales(scale_specs)
        torch.cuda.synchronize()
'''
ITER_KV = '''
    def _iter_kv_cache_tensors(self):
        """Every KV tensor, also inside nested containers (hybrid models keep lists of tuples)."""
        stack = list(self.kv_caches)
        while stack:
            item = stack.pop()
            if isinstance(item, torch.Tensor):
                yield item
            else:
                stack.extend(item)
'''
KV_SCALES = '''
    def _kv_scale_specs(self):
        """The calibrated FP8 KV scales to restore after wake (#45617)."""
        return [(layer.attn, layer.attn._k_scale_float, layer.attn._v_scale_float) for layer in self.layers]

    def _restore_kv_scales(self, scale_specs) -> None:
        for attn, k_scale, v_scale in scale_specs:
            attn._k_scale.fill_(k_scale)
            attn._v_scale.fill_(v_scale)
'''

RUNNER_EXEC_OLD = '''\
    def execute_model(self, scheduler_output, intermediate_tensors=None):
        cudagraph_mode = self.cudagraph_mode_for(scheduler_output)
'''
RUNNER_EXEC_GATED = '''\
    def execute_model(self, scheduler_output, intermediate_tensors=None, coordinate_pp_cudagraph_mode=False):
        cudagraph_mode = self.cudagraph_mode_for(scheduler_output)
        cudagraph_mode = coordinate_cudagraph_mode_across_pp(cudagraph_mode, coordinate_pp_cudagraph_mode)
'''
RUNNER_EXEC_HOIST = '''\
    def execute_model(self, scheduler_output, intermediate_tensors=None, pp_synced_cudagraph_mode=None):
        cudagraph_mode = self.cudagraph_mode_for(scheduler_output)
        if pp_synced_cudagraph_mode is not None:
            cudagraph_mode = pp_synced_cudagraph_mode
'''
RUNNER_IMPORT_OLD = "from vllm.distributed.parallel_state import get_pp_group\n"
RUNNER_IMPORT_GATED = ("from vllm.distributed.parallel_state import get_pp_group\n"
                       "from vllm.v1.worker.pp_utils import coordinate_cudagraph_mode_across_pp\n")

WORKER_EXEC_OLD = '''\
    def execute_model(self, scheduler_output):
        intermediate_tensors = None
'''
WORKER_EXEC_GATED = '''\
    def execute_model(self, scheduler_output):
        intermediate_tensors = None
        coordinate_pp_cudagraph_mode = True
'''
WORKER_EXEC_HOIST = '''\
    def execute_model(self, scheduler_output):
        # PP cudagraph consensus, hoisted out of the runner (#45610): every stage agrees on the
        # mode BEFORE the inter-stage receive, so no stage waits in irecv while another all-reduces.
        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(
            self.model_runner.cudagraph_mode_for(scheduler_output))
        intermediate_tensors = None
'''
WORKER_CALL_OLD = "        output = self.model_runner.execute_model(scheduler_output, intermediate_tensors)\n"
WORKER_CALL_GATED = ("        output = self.model_runner.execute_model(\n"
                     "            scheduler_output, intermediate_tensors,\n"
                     "            coordinate_pp_cudagraph_mode=coordinate_pp_cudagraph_mode)\n")
WORKER_CALL_HOIST = ("        output = self.model_runner.execute_model(\n"
                     "            scheduler_output, intermediate_tensors,\n"
                     "            pp_synced_cudagraph_mode=pp_synced_cudagraph_mode)\n")
WORKER_IMPORT_OLD = "from vllm.logger import init_logger\n"
WORKER_IMPORT_HOIST = ("from vllm.logger import init_logger\n"
                       "from vllm.v1.worker.pp_utils import coordinate_cudagraph_mode_across_pp\n")

CUMEM_WAKE_END_OLD = '''\
                    data.as_tensor().copy_(data.cpu_backup_tensor)
                    data.cpu_backup_tensor = None
'''
CUMEM_WAKE_END_NEW = '''\
                    data.as_tensor().copy_(data.cpu_backup_tensor)
                    data.cpu_backup_tensor = None
        # Drain this rank's re-map work before reporting the wake done (#45612 / #45552).
        torch.cuda.synchronize()
'''
CUMEM_SLEEP_OLD = '''\
    def sleep(self, offload_tags: tuple[str, ...] = ()) -> None:
        for ptr, data in self.pointer_to_data.items():
'''
CUMEM_SLEEP_NEW = '''\
    def sleep(self, offload_tags: tuple[str, ...] = ()) -> None:
        # Drain in-flight kernels before any cuMemUnmap: an async step may still write (#45554).
        torch.cuda.synchronize()
        for ptr, data in self.pointer_to_data.items():
'''

CPP_OLD = "  CUresult status = cuMemCreate(&handle, size, nullptr, 0);\n"
CPP_NEW = '''\
  CUresult status = cuMemCreate(&handle, size, nullptr, 0);
  for (int retry = 0; status == CUDA_ERROR_OUT_OF_MEMORY && retry < 3; ++retry) {
    status = cuMemCreate(&handle, size, nullptr, 0);
  }
'''

README_OLD = "A pared-down model of vLLM's sleep/wake path, built by `carrytool demo`.\n"
README_NEW = ("A pared-down model of vLLM's sleep/wake path, built by `carrytool demo`.\n\n"
              "See the sleep mode documentation for the `cumem` and `cumem_tag` backends.\n")

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


def resolve_kv_adjacency(hunk) -> bytes:  # noqa: ANN001 - a resolutions.ConflictHunk
    """Both KV fixes in one place: zero through _iter_kv_cache_tensors (#44778), then restore the
    calibrated FP8 scales (#45617); both helper methods kept."""
    ours, theirs = hunk.ours.decode(), hunk.theirs.decode()
    both = ours.replace("            tensor.zero_()\n", "            tensor.zero_()\n"
                        "        scale_specs = self._kv_scale_specs()\n"
                        "        self._restore_kv_scales(scale_specs)\n")
    return (both + "\n" + theirs.split("        torch.cuda.synchronize()\n", 1)[1]).encode()


def apply_edits(text: str, edits: list[tuple[str, str]], where: str) -> str:
    """Apply (old, new) replacements; each old text must occur exactly once."""
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            raise ValueError(f"demo source {where}: expected one occurrence, found {count}: {old[:60]!r}")
        text = text.replace(old, new)
    return text
