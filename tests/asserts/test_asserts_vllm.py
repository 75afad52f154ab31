"""The recipes of the vLLM fork story, on sources modelled on the real files."""

from __future__ import annotations

import textwrap

import pytest

from carrytool.asserts import AssertOutcome, AssertSpec, evaluate

WORKER = "vllm/v1/worker/gpu_worker.py"
CUMEM = "vllm/device_allocator/cumem.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"

WAKE_UP = """
class Worker(WorkerBase):
    def sleep(self, level: int = 1) -> None:
        backend = self._get_sleep_mode_backend()
        backend.suspend(level)

    def wake_up(self, tags: list[str] | None = None) -> None:
        backend = self._get_sleep_mode_backend()
        suspended_before_resume = backend.suspended_tags()
        needs_wake_sync = get_world_group().world_size > 1
        if needs_wake_sync:
            # Symmetric handshake (#45612): a failed local wake must not strand the peers.
            ok = 1
            try:
                backend.resume(tags)
            except Exception:
                logger.exception("local wake failed")
                ok = 0
            flag = torch.tensor([ok], dtype=torch.int32)
            torch.distributed.all_reduce(flag, op=ReduceOp.MIN, group=get_world_group().cpu_group)
            if int(flag.item()) != 1:
                raise RuntimeError("wake_up failed on at least one rank")
        else:
            backend.resume(tags)
        if tags is None or "kv_cache" in suspended_before_resume:
            self.model_runner.post_kv_cache_wake_up()
"""

# Cherry-picking #45612 onto the composed tree re-added the raw allocator wake after the backend's.
CLOBBERED = WAKE_UP.replace(
    "        if tags is None or",
    "        allocator = CuMemAllocator.get_instance()\n        allocator.wake_up(tags)\n        if tags is None or")

DOUBLE_RESUME = WAKE_UP.replace(
    "            flag = torch.tensor",
    "            backend.resume(tags)\n            flag = torch.tensor")

SLEEP = """
class CuMemAllocator:
    def sleep(self, offload_tags: tuple[str, ...] | str | None = None) -> None:
        if offload_tags is None:
            offload_tags = (CuMemAllocator.default_tag,)
        elif isinstance(offload_tags, str):
            offload_tags = (offload_tags,)
        assert isinstance(offload_tags, tuple)
        # Drain in-flight kernels before any cuMemUnmap (#45552).
        torch.cuda.synchronize()
        total_bytes = 0
        for ptr, data in self.pointer_to_data.items():
            handle = data.handle
            total_bytes += handle[1]
            if data.tag in offload_tags:
                cpu_backup_tensor = torch.empty(handle[1], dtype=torch.uint8, device="cpu")
                libcudart.cudaMemcpy(cpu_backup_tensor.data_ptr(), ptr, handle[1])
                data.cpu_backup_tensor = cpu_backup_tensor
            unmap_and_release(handle)
        gc.collect()
        torch.cuda.empty_cache()
"""

SLEEP_ONLY_SOMETIMES = SLEEP.replace(
    "        torch.cuda.synchronize()\n",
    "        if self.async_scheduling:\n            torch.cuda.synchronize()\n")

RUNNER_SOURCE = """
class GPUModelRunner:
    def _iter_kv_cache_tensors(self):
        for kv_cache in self.kv_caches:
            if isinstance(kv_cache, (list, tuple)):
                yield from kv_cache
            else:
                yield kv_cache

    def post_kv_cache_wake_up(self) -> None:
        for tensor in self._iter_kv_cache_tensors():
            tensor.zero_()
        for layer, spec in self.scale_specs.items():
            layer.restore_scale(spec)

    def execute_model(self, scheduler_output, intermediate_tensors=None, pp_synced_cudagraph_mode=None):
        cudagraph_mode = pp_synced_cudagraph_mode or self.cudagraph_mode
        return self._model_forward(scheduler_output, intermediate_tensors, cudagraph_mode)


def coordinate_cudagraph_mode_across_pp(mode, coordinate_pp_cudagraph_mode=False):
    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:
        agreed = torch.tensor([mode.value], dtype=torch.int32)
        get_pp_group().all_reduce(agreed, op=ReduceOp.MIN)
        return CUDAGraphMode(int(agreed.item()))
    return mode
"""

# The pre-hoist runner issued the PP consensus itself, and ungated: the startup deadlock.
RUNNER_PRE_HOIST = RUNNER_SOURCE.replace(
    "        cudagraph_mode = pp_synced_cudagraph_mode or self.cudagraph_mode\n",
    "        agreed = torch.tensor([self.cudagraph_mode.value])\n"
    "        get_pp_group().all_reduce(agreed, op=ReduceOp.MIN)\n"
    "        cudagraph_mode = CUDAGraphMode(int(agreed.item()))\n").replace(
    "    if coordinate_pp_cudagraph_mode and get_pp_group().world_size > 1:",
    "    if get_pp_group().world_size > 1:")

EXECUTE = """
class Worker(WorkerBase):
    @torch.inference_mode()
    def execute_model(self, scheduler_output):
        intermediate_tensors = None
        forward_pass = scheduler_output.total_num_scheduled_tokens > 0
        # Agree on the cudagraph mode across PP stages before any stage blocks in irecv (#45610 hoist).
        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(
            self.model_runner.cudagraph_mode_for(scheduler_output), coordinate_pp_cudagraph_mode=True)
        if forward_pass and not get_pp_group().is_first_rank:
            intermediate_tensors = IntermediateTensors(
                get_pp_group().irecv_tensor_dict(all_gather_group=get_tp_group()))
        return self.model_runner.execute_model(
            scheduler_output, intermediate_tensors, pp_synced_cudagraph_mode=pp_synced_cudagraph_mode)
"""

EXECUTE_LATE_CONSENSUS = EXECUTE.replace(
    "        pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(\n"
    "            self.model_runner.cudagraph_mode_for(scheduler_output), coordinate_pp_cudagraph_mode=True)\n",
    "").replace(
    "        return self.model_runner",
    "        if forward_pass:\n"
    "            pp_synced_cudagraph_mode = coordinate_cudagraph_mode_across_pp(mode)\n"
    "        return self.model_runner")


def run(file: str, source: str, check: str, target: str | tuple[str, ...], scope: str | None = None,
        **bounds: object) -> AssertOutcome:
    spec = AssertSpec(name="recipe", file=file, check=check, target=target, scope=scope,  # type: ignore[arg-type]
                      why="see the fork story", entry="carry/wake-path-union", **bounds)
    return evaluate(spec, textwrap.dedent(source).lstrip("\n").encode())


def line_of(source: str, text: str, nth: int = 0) -> int:
    """Return the 1-based number of the `nth` line containing `text` (as `run` numbers lines)."""
    lines = textwrap.dedent(source).lstrip("\n").split("\n")
    return [number for number, line in enumerate(lines, 1) if text in line][nth]


def test_resume_exactly_once_on_every_path_of_wake_up() -> None:
    outcome = run(WORKER, WAKE_UP, "calls", "backend.resume", "Worker.wake_up", times=1)
    assert outcome.ok, outcome.message
    # 2 (try: no exception, handler) x 2 (flag check raises or not) + 1 (else); the 3 ending normally
    # fork twice more at `if tags is None or ...` (the `or` may short-circuit, the `if` may be skipped).
    assert outcome.message == ("backend.resume is called exactly 1 time on every path (14 paths) "
                               "through Worker.wake_up")
    assert outcome.line == line_of(WAKE_UP, "backend.resume(tags)")
    assert (outcome.why, outcome.entry) == ("see the fork story", "carry/wake-path-union")


def test_clobbered_wake_up_calls_the_raw_allocator() -> None:
    assert run(WORKER, WAKE_UP, "not_calls", "allocator.wake_up", "Worker.wake_up").ok
    outcome = run(WORKER, CLOBBERED, "not_calls", "allocator.wake_up", "Worker.wake_up")
    assert not outcome.ok
    line = line_of(CLOBBERED, "allocator.wake_up(tags)")
    assert outcome.message == f"Worker.wake_up: allocator.wake_up is called at vllm/v1/worker/gpu_worker.py:{line} (want no calls)"
    assert outcome.line == line
    assert outcome.why == "see the fork story"


def test_double_resume_names_the_handshake_branch() -> None:
    outcome = run(WORKER, DOUBLE_RESUME, "calls", "backend.resume", "Worker.wake_up", times=1)
    assert not outcome.ok
    line = line_of(DOUBLE_RESUME, "if needs_wake_sync:")
    assert outcome.message == (f"Worker.wake_up: backend.resume is called 2 times on the path through the "
                               f"`if needs_wake_sync` branch at vllm/v1/worker/gpu_worker.py:{line} (want exactly 1)")
    assert outcome.line == line


def test_handshake_all_reduce_is_guarded_by_needs_wake_sync() -> None:
    outcome = run(WORKER, WAKE_UP, "calls", "torch.distributed.all_reduce", "Worker.wake_up",
                  guarded_by="needs_wake_sync", times=None)
    assert outcome.ok, outcome.message


@pytest.mark.parametrize("source, ok", [(SLEEP, True), (SLEEP_ONLY_SOMETIMES, False)])
def test_synchronize_before_unmap_in_sleep(source: str, ok: bool) -> None:
    outcome = run(CUMEM, source, "order", ("torch.cuda.synchronize", "unmap_and_release"), "CuMemAllocator.sleep")
    assert outcome.ok is ok, outcome.message
    if ok:
        assert outcome.message == ("torch.cuda.synchronize is called before unmap_and_release on every path "
                                   "through CuMemAllocator.sleep")
    else:
        unmap = line_of(source, "unmap_and_release(handle)")
        branch = line_of(source, "if self.async_scheduling:")
        assert outcome.message == (
            f"CuMemAllocator.sleep: unmap_and_release at vllm/device_allocator/cumem.py:{unmap} is reachable without "
            f"torch.cuda.synchronize (on the path that skips the `if self.async_scheduling` at vllm/device_allocator/cumem.py:{branch})")
        assert outcome.line == unmap


@pytest.mark.parametrize("check, target, scope", [
    ("defines", "GPUModelRunner._iter_kv_cache_tensors", None),
    ("mentions", "scale_specs", "GPUModelRunner"),
    ("mentions", "_iter_kv_cache_tensors", "GPUModelRunner.post_kv_cache_wake_up"),
    ("calls", "_iter_kv_cache_tensors", "GPUModelRunner.post_kv_cache_wake_up"),
    ("not_calls", "all_reduce", "GPUModelRunner.execute_model"),
])
def test_runner_markers(check: str, target: str, scope: str | None) -> None:
    outcome = run(RUNNER, RUNNER_SOURCE, check, target, scope)
    assert outcome.ok, outcome.message
    if check == "not_calls":     # the broken runner is the one that calls it
        broken = RUNNER_PRE_HOIST
    else:
        broken = RUNNER_SOURCE.replace("scale_specs", "scales").replace("_iter_kv_cache_tensors", "_kv_tensors")
    assert not run(RUNNER, broken, check, target, scope).ok


def test_runner_must_not_self_issue_the_consensus() -> None:
    outcome = run(RUNNER, RUNNER_PRE_HOIST, "not_calls", "all_reduce", "GPUModelRunner.execute_model")
    line = line_of(RUNNER_PRE_HOIST, "get_pp_group().all_reduce(agreed, op=ReduceOp.MIN)")
    assert not outcome.ok
    assert outcome.message == (f"GPUModelRunner.execute_model: all_reduce is called at vllm/v1/worker/gpu_model_runner.py:{line} "
                               f"(want no calls)")


def test_pp_all_reduce_only_under_coordinate_pp_cudagraph_mode() -> None:
    scope = "coordinate_cudagraph_mode_across_pp"
    good = run(RUNNER, RUNNER_SOURCE, "calls", "get_pp_group().all_reduce", scope,
               guarded_by="coordinate_pp_cudagraph_mode")
    assert good.ok, good.message
    bad = run(RUNNER, RUNNER_PRE_HOIST, "calls", "get_pp_group().all_reduce", scope,
              guarded_by="coordinate_pp_cudagraph_mode")
    assert not bad.ok
    line = line_of(RUNNER_PRE_HOIST, "get_pp_group().all_reduce(agreed, op=ReduceOp.MIN)", nth=1)
    assert bad.message == (f"{scope}: get_pp_group().all_reduce at vllm/v1/worker/gpu_model_runner.py:{line} is not guarded by "
                           f"coordinate_pp_cudagraph_mode: no enclosing `if` tests coordinate_pp_cudagraph_mode")


def test_pp_all_reduce_is_never_run_by_the_module_top_level() -> None:
    # Module scope runs top-level statements only: the call inside a function does not count as called.
    outcome = run(RUNNER, RUNNER_SOURCE, "calls", "all_reduce", None)
    assert not outcome.ok
    assert "is not run by the scope" in outcome.message


@pytest.mark.parametrize("source, ok, fragment", [
    (EXECUTE, True, "coordinate_cudagraph_mode_across_pp is called before irecv_tensor_dict on every path"),
    (EXECUTE_LATE_CONSENSUS, False, "irecv_tensor_dict at vllm/v1/worker/gpu_worker.py:9 is reachable without "
                                    "coordinate_cudagraph_mode_across_pp"),
])
def test_consensus_before_irecv_in_execute_model(source: str, ok: bool, fragment: str) -> None:
    outcome = run(WORKER, source, "order", ("coordinate_cudagraph_mode_across_pp", "irecv_tensor_dict"),
                  "Worker.execute_model")
    assert outcome.ok is ok, outcome.message
    assert fragment in outcome.message
