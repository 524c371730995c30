"""Plausibility: flags on a correct result whose numbers cannot be true, decided in the parent from
what the worker measured. Never imports torch.

  implausible_speedup  faster than the ceiling over eager (Settings.max_speedup, default 10x)
  faster_than_light    faster than the problem's bytes and FLOPs allow on this device's datasheet peaks
  reference_slowed     the reference ran slower beside the candidate than in a clean process
  hidden_work          (from the worker) the wall clock saw work the CUDA events did not

These flags exclude a result from fast_p, the geometric mean and "best" (types.EXCLUDING_FLAGS).
"""

from __future__ import annotations

from .facts import datasheet
from .types import Baseline, DeviceInfo, Problem, WorkerReport

SOL_MARGIN = 0.95      # slack for writes still in L2 when the end event fires
SLOW_FACTOR = 1.5      # reference beside the candidate vs in a clean process
SLOW_MIN_MS = 0.05
DTYPE_PEAK = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}


def speed_of_light_ms(problem: Problem, baseline: Baseline | None, device: DeviceInfo, dtype: str) -> float | None:
    """The least time the problem's minimal bytes and FLOPs take at the device's datasheet peaks."""
    if device.target != "cuda":
        return None  # no CPU peaks until they are measured
    bandwidth_gbs, tflops = datasheet(device.name)
    moved = problem.bytes or (baseline and baseline.bytes_moved)
    flops = problem.flops or (baseline and baseline.flops)
    bounds = []
    if bandwidth_gbs and moved:
        bounds.append(moved / (bandwidth_gbs * 1e9) * 1e3)
    if flops and tflops.get(DTYPE_PEAK.get(dtype, "")):
        bounds.append(flops / (tflops[DTYPE_PEAK[dtype]] * 1e12) * 1e3)
    return max(bounds) if bounds else None


def plausibility_flags(problem: Problem, report: WorkerReport, device: DeviceInfo, *, dtype: str,
                       max_speedup: float, baseline: Baseline | None) -> list[str]:
    if report.status != "correct" or not report.runtime or not report.ref_runtime:
        return []
    flags = []
    if report.runtime.median_ms > 0 and report.ref_runtime.median_ms / report.runtime.median_ms > max_speedup:
        flags.append("implausible_speedup")
    bound = speed_of_light_ms(problem, baseline, device, dtype)
    if bound is not None and report.runtime.median_ms < SOL_MARGIN * bound:
        flags.append("faster_than_light")
    if baseline and report.ref_runtime.median_ms > SLOW_FACTOR * baseline.timing.median_ms + SLOW_MIN_MS:
        flags.append("reference_slowed")
    return flags
