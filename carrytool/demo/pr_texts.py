"""The PRs' versions of the demo's files (and the fork's union's, beside the PRs' versions of the same lines): the
files a PR adds, written out whole, the (old, new) replacements of upstream's lines (sources.py) and the union's
recorded resolution of the KV adjacency."""

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


def resolve_kv_adjacency(hunk) -> bytes:  # noqa: ANN001 - a resolutions.ConflictHunk
    """Both KV fixes in one place: zero through _iter_kv_cache_tensors (#44778), then restore the
    calibrated FP8 scales (#45617); both helper methods kept."""
    ours, theirs = hunk.ours.decode(), hunk.theirs.decode()
    both = ours.replace("            tensor.zero_()\n", "            tensor.zero_()\n"
                        "        scale_specs = self._kv_scale_specs()\n"
                        "        self._restore_kv_scales(scale_specs)\n")
    return (both + "\n" + theirs.split("        torch.cuda.synchronize()\n", 1)[1]).encode()
