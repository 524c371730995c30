"""Kernel coverage (child/coverage.py) with the real profiler: a builtin function of a module stands in for the
candidate's extension (the profile hook knows functions by their module, as it knows a pybind11 extension's)."""
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import torch

from harness.child.coverage import measure, median_by_share
from harness.evidence import Coverage

ROOT = Path(__file__).resolve().parents[2]

DATA = bytes(range(256)) * 20000  # ~5 MB: tens of milliseconds of zlib.compress, outside any PyTorch operator
X = torch.randn(512, 512)


def test_the_candidates_own_work_against_pytorchs():
    def forward():
        compressor = zlib.compress  # reached through an alias: the hook sees the call, not the name
        compressor(DATA, 9)
        return torch.relu(torch.mm(X, X))

    coverage, out = measure(forward, frozenset({"zlib"}), cuda=False)
    assert torch.equal(out, torch.relu(torch.mm(X, X)))
    assert coverage.calls == 1 and coverage.candidate_ms > 0 and coverage.pytorch_ms > 0
    assert 0 < coverage.share < 1
    owners = {k.name: k.owner for k in coverage.top}
    assert owners["compress"] == "candidate" and owners["aten::mm"] == "pytorch"


def test_a_decoy_extension_never_called_covers_nothing():
    coverage, _ = measure(lambda: torch.relu(X), frozenset({"zlib"}), cuda=False)
    assert coverage.calls == 0 and coverage.share == 0.0 and coverage.pytorch_ms > 0
    assert "none of your extension's functions ran" in coverage.feedback()


def test_pytorch_called_from_inside_the_candidates_function_is_pytorchs_work():
    # torch._C._nn.gelu is a builtin of module torch._C._nn, and all it does is call aten::gelu (on 4M values: a
    # call's few microseconds of its own stay a small share on loaded cores, where 512 x 512 once read 0.73)
    big = torch.randn(2048, 2048)
    coverage, _ = measure(lambda: torch._C._nn.gelu(big), frozenset({"torch._C._nn"}), cuda=False)
    assert coverage.calls == 1 and coverage.share is not None and coverage.share < 0.5
    assert coverage.top[0].name == "aten::gelu" and coverage.top[0].owner == "pytorch"


def test_the_median_call_by_share_counts_not_an_interrupted_one():
    def call(share):
        return Coverage(share=share, candidate_ms=share or 0.0, pytorch_ms=1.0, calls=1)
    # one call interrupted inside the candidate's range (0.9), one inside PyTorch's (0.1): neither is the verdict
    shares = [0.3, 0.9, 0.28, 0.1, 0.31]
    assert median_by_share([call(s) for s in shares]).share == 0.3
    assert median_by_share([call(None), call(0.2), call(0.4)]).share == 0.2
    assert median_by_share([call(0.7)]).share == 0.7


def test_nothing_measurable_has_no_share():
    coverage, out = measure(lambda: 3, frozenset({"zlib"}), cuda=False)
    assert out == 3 and coverage.share is None and coverage.percent == "-"


TRITON_FORWARD = """
import os, sys
os.environ["TRITON_INTERPRET"] = "1"  # Triton's interpreter: its kernels run on CPU tensors
import torch, triton, triton.language as tl
from harness.child.coverage import measure

@triton.jit
def relu_kernel(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.maximum(tl.load(x + i, mask=i < n), 0.0), mask=i < n)

X = torch.randn(1 << 14)
def forward():
    y = torch.empty_like(X)
    relu_kernel[(triton.cdiv(X.numel(), 1024),)](X, y, X.numel(), BLOCK=1024)
    return torch.relu(y) if sys.argv[1] == "also-pytorch" else y

coverage, out = measure(forward, frozenset(), cuda=False)
assert torch.equal(out, torch.relu(X))
print(coverage.model_dump_json())
"""


def test_a_triton_kernel_launched_in_forward_is_the_candidates_own(tmp_path):
    pytest.importorskip("triton")
    script = tmp_path / "forward.py"
    script.write_text(TRITON_FORWARD)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def coverage(how: str) -> Coverage:
        proc = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, env=env, check=True)
        return Coverage.model_validate_json(proc.stdout.splitlines()[-1])

    alone, beside = coverage("alone"), coverage("also-pytorch")
    assert alone.calls == 1 and alone.triton_launches == 1 and alone.share > 0.9, alone
    assert alone.top[0].name == "relu_kernel", alone
    assert beside.calls == 1 and "aten::relu" in {k.name for k in beside.top if k.owner == "pytorch"}, beside


def test_an_operator_the_candidate_registers_is_its_own():
    from harness.child.coverage import op_namespaces

    known = op_namespaces()
    library = torch.library.Library("coverage_test_ns", "DEF")  # what TORCH_LIBRARY does from C++
    library.define("pack(Tensor x) -> Tensor")
    library.impl("pack", lambda x: torch.frombuffer(bytearray(zlib.compress(DATA, 9)), dtype=torch.uint8), "CPU")
    own = op_namespaces() - known
    coverage, _ = measure(lambda: torch.ops.coverage_test_ns.pack(X), frozenset(), cuda=False, namespaces=own)
    assert own == {"coverage_test_ns"}
    assert coverage.calls == 1 and coverage.share > 0.5, coverage


class Event:
    """A profiler event as attribute() reads it (the boundary: on the GPU these come from CUPTI)."""

    def __init__(self, id_, name, parent=None, cuda=False, us=0.0):
        self.id, self.name, self.cpu_parent = id_, name, parent
        self.device_type = torch.autograd.DeviceType.CUDA if cuda else torch.autograd.DeviceType.CPU
        self.is_user_annotation = False
        self.time_range = type("Range", (), {"start": 0.0, "end": us})()


def test_a_kernel_launched_by_neither_pytorch_nor_the_candidate_is_not_the_candidates_own():
    """torch.compile's kernels are launched from its generated code, outside every operator and candidate range:
    they count against the candidate, as PyTorch's own do."""
    from harness.child.coverage import CANDIDATE, attribute

    forward = Event(1, "harness::forward")
    op = Event(2, "aten::mm", forward)
    mine = Event(3, CANDIDATE + "relu_kernel", forward)
    compiled = Event(4, "triton_poi_fused_abs_add_div_0", forward)  # inductor's range, no namespace
    launches = [Event(10, "cudaLaunchKernel", op), Event(11, "cuLaunchKernelEx", mine),
                Event(12, "cuLaunchKernelEx", compiled)]
    kernels = [Event(10, "sgemm", cuda=True, us=300.0), Event(11, "relu_kernel", cuda=True, us=100.0),
               Event(12, "triton_poi_fused_abs_add_div_0", cuda=True, us=600.0)]
    coverage = attribute([forward, op, mine, compiled, *launches, *kernels], cuda=True)
    assert coverage.share == pytest.approx(0.1)
    assert (coverage.candidate_ms, coverage.pytorch_ms, coverage.other_ms) == pytest.approx((0.1, 0.3, 0.6))
    assert {k.name: k.owner for k in coverage.top}["triton_poi_fused_abs_add_div_0"] == "other"
    assert "torch.compile generated did the rest: triton_poi_fused_abs_add_div_0 60%" in coverage.model_copy(
        update={"calls": 1}).feedback()


def test_code_torch_compile_generated_is_not_the_candidates_own_on_the_cpu():
    """A token call of the candidate's own beside a torch.compile'd function doing the work: the compiled region's
    time is `other`, so the share is the token's."""
    fused = torch.compile(lambda x: torch.relu(x) * 2.0 + 1.0)
    big = torch.randn(2048, 2048)

    def forward():
        zlib.compress(DATA[:1000])  # the candidate's token work
        return fused(big)

    forward()  # compiled before it is profiled, as the checked trials do
    coverage, out = measure(forward, frozenset({"zlib"}), cuda=False)
    assert torch.allclose(out, torch.relu(big) * 2.0 + 1.0)
    assert [k.owner for k in coverage.top if k.name.startswith("Torch-Compiled Region")] == ["other"], coverage.top
    assert coverage.other_ms > coverage.candidate_ms and coverage.share < 0.5, coverage
