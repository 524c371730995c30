"""The gate's verdicts from observations (no torch, no child): every threshold can make a problem fail."""

from pathlib import Path

import pytest

from harness.problems.gate import MARK_MEMORY_GB, assess, uncommented_overrides
from harness.problems.index import parse_problem
from harness.protocol import GateObservation

BODY = '''
import torch
import torch.nn as nn
{constants}

class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.rand(4)]


def get_init_inputs():
    return []
'''

SHAPES = {"outputs": [{"shape": [4096, 4096], "dtype": "float32"}], "inputs": [], "input_bytes": 64 << 20,
          "param_bytes": 0, "output_bytes": 64 << 20, "output_is_plain": True}
STATS = {"numel": 1 << 24, "floating": True, "nonfinite": 0, "near_zero_fraction": 0.0, "mean": 0.5,
         "mean_abs": 0.5, "std": 0.29, "min": 0.0, "max": 1.0, "constant": False, "constant_passes": False}
MEASURED = {"deterministic": [{"ok": True, "mismatch_fraction": 0.0, "message": None}],
            "seed_variation": [{"ok": False, "mismatch_fraction": 0.99, "message": "differs"}],
            "stats": [STATS], "eager_ms": 2.5, "peak_memory_bytes": 4_000_000_000, "atol": 1e-4, "rtol": 1e-4}


def problem(tmp_path: Path, constants: str = 'TAGS = ["elementwise", "memory-bound"]', name: str = "p"):
    path = tmp_path / "level1" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(BODY.format(constants=constants))
    return parse_problem(path, tmp_path)


def static(flops: int = 0, **shapes) -> GateObservation:
    """The static gate's observation of a good problem, with `shapes` changed."""
    return GateObservation.model_validate({"init_inputs": 0, "shapes": {**SHAPES, **shapes}, "flops": flops})


def full(**changes) -> GateObservation:
    """The full gate's observation of a good problem, with `changes` to its measurements (and its stats)."""
    stats = {**STATS, **changes.pop("stats", {})}
    return GateObservation.model_validate({"init_inputs": 0, "shapes": SHAPES, "flops": 0,
                                           "full": {**MEASURED, "stats": [stats], **changes}})


STATIC, FULL = static(), full()


def test_a_good_problem_passes_both_gates(tmp_path):
    p = problem(tmp_path)
    static = assess(p, "static", "cuda", STATIC)
    assert static.passed and static.reasons == () and static.outputs == ("float32[4096, 4096]",)
    assert static.bytes_moved == 128 << 20 and static.flops is None
    result = assess(p, "full", "cuda", FULL)
    assert result.passed, result.reasons
    assert result.eager_ms == 2.5 and result.peak_memory_gb == 4.0


@pytest.mark.parametrize("obs, expected", [
    (full(stats={"near_zero_fraction": 0.97}), "mostly zeros"),
    (full(stats={"constant": True, "std": 0.0}), "constant output"),
    (full(stats={"std": 1e-5}), "nearly constant"),
    (full(stats={"constant_passes": True}), "filled with one value"),
    (full(stats={"mean_abs": 5e-4, "mean": 5e-4}), "weak check"),
    (full(stats={"nonfinite": 3}), "NaN/Inf"),
    (full(deterministic=[{"ok": False, "mismatch_fraction": 0.2, "message": "boom"}]), "not deterministic"),
    (full(seed_variation=[{"ok": False, "mismatch_fraction": 0.001, "message": "x"}]), "the same for every seed"),
    (full(precision=[{"ok": False, "mismatch_fraction": 0.5, "message": "m", "max_abs_err": 1e-3,
                      "max_rel_err": 1e-3}]), "tolerance too tight for fp32"),
    (full(eager_ms=0.2), "too small"),
    (full(eager_ms=5000.0), "too slow"),
    (full(peak_memory_bytes=45_000_000_000), "at most 40 GB"),
    (full(peak_memory_bytes=30_000_000_000), "declare MEMORY_GB = 30"),
    ("importing the problem failed: SyntaxError", "importing the problem failed"),
    (static(outputs=[]), "returns no tensor"),
    (static(output_is_plain=False), "tensor subclass"),
    (static(), "no measurements on the device in the full gate"),
])
def test_each_rule_rejects(tmp_path, obs, expected):
    result = assess(problem(tmp_path), "full", "cuda", obs)
    assert not result.passed
    assert any(expected in reason for reason in result.reasons), result.reasons


def test_cpu_has_its_own_time_window_and_no_memory_limit(tmp_path):
    p = problem(tmp_path)
    assert assess(p, "full", "cpu", full(eager_ms=0.7, peak_memory_bytes=60_000_000_000)).passed
    assert not assess(p, "full", "cpu", full(eager_ms=0.05)).passed


def test_declared_memory_allows_a_large_problem(tmp_path):
    big = full(peak_memory_bytes=int((MARK_MEMORY_GB + 5) * 1e9))
    assert not assess(problem(tmp_path), "full", "cuda", big).passed
    declared = problem(tmp_path, 'TAGS = ["scan", "memory-bound"]\nMEMORY_GB = 30', name="big")
    assert declared.memory_gb == 30.0
    assert assess(declared, "full", "cuda", big).passed


def test_metadata_rules(tmp_path):
    untagged = assess(problem(tmp_path, "", name="a"), "static", "cuda", STATIC)
    assert any("TAGS must name" in r for r in untagged.reasons)
    both = assess(problem(tmp_path, 'TAGS = ["x", "memory-bound", "compute-bound"]', name="b"), "static", "cuda",
                  STATIC)
    assert not both.passed
    compute = problem(tmp_path, 'TAGS = ["matmul", "compute-bound"]', name="c")
    assert any("FLOPS" in r for r in assess(compute, "static", "cuda", STATIC).reasons)
    assert assess(compute, "static", "cuda", static(flops=10**12)).flops_source == "counted"
    declared = problem(tmp_path, 'TAGS = ["scan", "compute-bound"]\nFLOPS = 1000', name="d")
    result = assess(declared, "static", "cuda", STATIC)
    assert result.passed and result.flops == 1000 and result.flops_source == "declared"


def test_meta_failure_is_a_warning_in_the_static_gate(tmp_path):
    result = assess(problem(tmp_path), "static", "cuda",
                    GateObservation(init_inputs=0, meta_error="NotImplementedError: x"))
    assert result.passed and "meta-device analysis failed" in result.warnings[0]


def test_tolerance_overrides_need_a_comment():
    source = ("ATOL = 1e-6  # probabilities are ~1/N\n"
              "# fp32 reassociation over 24 layers\nRTOL = 1e-3\n"
              "TOLERANCE = 1e-2\n"
              "def f():\n    ATOL = 1\n")
    assert uncommented_overrides(source) == ["TOLERANCE"]
    assert uncommented_overrides("MAX_SPEEDUP = 40\n") == ["MAX_SPEEDUP"]
    assert uncommented_overrides("MAX_SPEEDUP = 40  # eager is a scalar loop\n") == []


def test_uncommented_tolerance_fails_the_static_gate(tmp_path):
    p = problem(tmp_path, 'TAGS = ["elementwise", "memory-bound"]\nTOLERANCE = 1e-2', name="tol")
    assert any("without a comment" in r for r in assess(p, "static", "cuda", STATIC).reasons)


WORKLOADS = '''TAGS = ["elementwise", "memory-bound"]
N = 4
WORKLOADS = [
    {"name": "tiny", "set": {"N": 1}, "about": "one element"},
    {"name": "small", "set": {"N": 3}, "about": "small"},
    {"name": "wide", "set": {"N": 9}, "timed": True, "about": "wide"},
]'''


def observed(workload: str, values: dict, obs: GateObservation | None = None, error: str | None = None) -> dict:
    found = {"workload": workload, "values": values, "error": error}
    return {**found, "observation": obs.model_dump(mode="json")} if obs else found


def test_every_workload_passes_the_same_checks_naming_itself_and_its_values(tmp_path):
    p = problem(tmp_path, WORKLOADS)
    degenerate = full(stats={"constant_passes": True})
    quick = full(eager_ms=0.01)  # too small to time, which only a timed workload has to be
    obs = FULL.model_copy(update={"workloads": tuple(GateObservation.model_validate(
        {**FULL.model_dump(mode="json"), "workloads": [observed("tiny", {"N": 1}, degenerate),
                                                       observed("small", {"N": 3}, quick),
                                                       observed("wide", {"N": 9}, quick)]}).workloads)})
    result = assess(p, "full", "cuda", obs)
    assert not result.passed
    tiny, wide = (r for r in result.reasons if r.startswith("workload "))
    assert tiny.startswith("workload tiny {'N': 1}: a tensor filled with one value")
    assert wide.startswith("workload wide {'N': 9}: too small")  # small is not timed: its eager time is its own
    failed = FULL.model_copy(update={"workloads": (GateObservation.model_validate(
        {**FULL.model_dump(mode="json"), "workloads": [observed("tiny", {"N": 1}, error="Model.forward failed: x")]}
    ).workloads)})
    reasons = assess(p, "full", "cuda", failed).reasons
    assert "workload tiny {'N': 1}: Model.forward failed: x" in reasons
    assert "workload small: not observed (a harness bug)" in reasons
