"""Text checks: any file, any bytes; a scope narrows a Python file to the definition's lines."""

from __future__ import annotations

import pytest

from carrytool.asserts import AssertOutcome, AssertSpec, evaluate

KERNEL = (
    b"// csrc/scale.cu \xff\xfe not UTF-8 \xc3\x28 here\n"
    b"#include <cuda_runtime.h>\n"
    b"__global__ void scale_kernel(float* out, const float* in, float s) {\n"
    b"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    b"  out[i] = in[i] * s;\n"
    b"}\n"
    b"void launch(cudaStream_t stream) {\n"
    b"  cudaStreamSynchronize(stream);\n"
    b"}\n"
)


def run(check: str, target: str, data: bytes, scope: str | None = None,
        file: str = "csrc/scale.cu") -> AssertOutcome:
    return evaluate(AssertSpec(name="t", file=file, check=check, target=target, scope=scope), data)


@pytest.mark.parametrize("check, target, ok, message, line", [
    ("contains", "cudaStreamSynchronize(stream);", True,
     "`cudaStreamSynchronize(stream);` is present at csrc/scale.cu:8", 8),
    ("contains", "cudaDeviceSynchronize", False, "`cudaDeviceSynchronize` is not in csrc/scale.cu", None),
    ("contains", "not UTF-8", True, "`not UTF-8` is present at csrc/scale.cu:1", 1),
    ("contains", "{\n  int i", True, "`{\\n  int i` is present at csrc/scale.cu:3", 3),
    ("absent", "cudaDeviceSynchronize", True, "`cudaDeviceSynchronize` is absent from csrc/scale.cu", None),
    ("absent", "scale_kernel", False, "`scale_kernel` is present at csrc/scale.cu:3 (want it absent)", 3),
    ("matches", r"^void\s+launch\(", True, r"regex `^void\s+launch\(` matches at csrc/scale.cu:7", 7),
    ("matches", r"^\s+out\[i\] = in\[i\];$", False, r"regex `^\s+out\[i\] = in\[i\];$` matches nothing in csrc/scale.cu",
     None),
    ("matches", r"^launch", False, "regex `^launch` matches nothing in csrc/scale.cu", None),
])
def test_text_checks_on_cuda_with_invalid_utf8(check: str, target: str, ok: bool, message: str,
                                               line: int | None) -> None:
    outcome = run(check, target, KERNEL)
    assert (outcome.ok, outcome.message, outcome.line) == (ok, message, line)


def test_crlf_line_endings_count_lines_like_an_editor() -> None:
    data = KERNEL.replace(b"\n", b"\r\n")
    assert run("contains", "cudaStreamSynchronize", data).line == 8
    assert run("matches", r"^}$", data).message == "regex `^}$` matches at csrc/scale.cu:6"


def test_long_targets_are_shortened_in_messages() -> None:
    outcome = run("contains", "x" * 200, KERNEL)
    assert outcome.message == "`" + "x" * 59 + "…` is not in csrc/scale.cu"


PYTHON = b'''import torch


class CuMemAllocator:
    @torch.no_grad()
    def sleep(self):
        torch.cuda.synchronize()
        self.unmap()

    def wake_up(self):
        self.remap()
        # torch.cuda.synchronize() belongs at the end of wake_up (#45612)
'''


@pytest.mark.parametrize("check, target, scope, ok, message", [
    ("contains", "torch.cuda.synchronize()", "CuMemAllocator.sleep", True,
     "`torch.cuda.synchronize()` is present at vllm/device_allocator/cumem.py:7"),
    ("contains", "torch.cuda.synchronize()", "CuMemAllocator.wake_up", True,  # text checks see comments
     "`torch.cuda.synchronize()` is present at vllm/device_allocator/cumem.py:12"),
    ("contains", "self.remap()", "CuMemAllocator.sleep", False,
     "CuMemAllocator.sleep: `self.remap()` is not in CuMemAllocator.sleep at vllm/device_allocator/cumem.py:6"),
    ("contains", "@torch.no_grad()", "CuMemAllocator.sleep", True, "`@torch.no_grad()` is present at vllm/device_allocator/cumem.py:5"),
    ("absent", "self.unmap()", "CuMemAllocator.wake_up", True, "`self.unmap()` is absent from CuMemAllocator.wake_up"),
    ("absent", "self.unmap()", "CuMemAllocator.sleep", False,
     "CuMemAllocator.sleep: `self.unmap()` is present at vllm/device_allocator/cumem.py:8 (want it absent)"),
    ("matches", r"^\s+self\.remap\(\)$", "CuMemAllocator.wake_up", True,
     r"regex `^\s+self\.remap\(\)$` matches at vllm/device_allocator/cumem.py:11"),
    ("matches", r"^\s+self\.remap\(\)$", "CuMemAllocator.sleep", False,
     r"CuMemAllocator.sleep: regex `^\s+self\.remap\(\)$` matches nothing in CuMemAllocator.sleep at "
     r"vllm/device_allocator/cumem.py:6"),
    ("contains", "x", "CuMemAllocator.slep", False,
     "no scope CuMemAllocator.slep in vllm/device_allocator/cumem.py (defined there: CuMemAllocator.sleep, "
     "CuMemAllocator.wake_up)"),
])
def test_text_checks_in_a_python_scope(check: str, target: str, scope: str, ok: bool, message: str) -> None:
    outcome = run(check, target, PYTHON, scope, file="vllm/device_allocator/cumem.py")
    assert (outcome.ok, outcome.message) == (ok, message)


def test_a_scope_needs_a_parseable_python_file() -> None:
    outcome = run("contains", "scale_kernel", KERNEL, scope="launch")
    assert not outcome.ok
    assert outcome.message == "csrc/scale.cu:1: cannot parse as Python: byte 0xff is not valid utf-8"


def test_same_named_definitions_are_all_searched() -> None:
    data = b"if X:\n    def f():\n        a = 1\nelse:\n    def f():\n        b = 2\n"
    assert run("contains", "b = 2", data, "f", file="m.py").message == "`b = 2` is present at m.py:6"
    assert run("absent", "a = 1", data, "f", file="m.py").message == "f: `a = 1` is present at m.py:3 (want it absent)"
