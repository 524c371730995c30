"""Kernel coverage (child/coverage.py) with the real profiler: a builtin function of a module stands in for the
candidate's extension (the profile hook knows functions by their module, as it knows a pybind11 extension's)."""
import zlib

import torch

from harness.child.coverage import measure

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
    # torch._C._nn.gelu is a builtin of module torch._C._nn, and all it does is call aten::gelu
    coverage, _ = measure(lambda: torch._C._nn.gelu(X), frozenset({"torch._C._nn"}), cuda=False)
    assert coverage.calls == 1 and coverage.share is not None and coverage.share < 0.5
    assert coverage.top[0].name == "aten::gelu" and coverage.top[0].owner == "pytorch"


def test_nothing_measurable_has_no_share():
    coverage, out = measure(lambda: 3, frozenset({"zlib"}), cuda=False)
    assert out == 3 and coverage.share is None and coverage.percent == "-"
