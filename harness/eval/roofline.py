"""Speed of light: the least time a problem can take on a device, from its minimal bytes and FLOPs and
the device's peaks. Never imports torch.

The ceiling is the physical limit a result cannot beat. On a GPU, the datasheet where known, or what was measured
if higher (a kernel may beat torch's copy, never the memory bus); on a CPU, the cores' theoretical FLOP/s and the
fastest uncontended copy with headroom (cpu_ceiling.py), never a peak measured while other processes used the cores.
One ceiling answers both questions asked of it:
  faster_than_light   a time more than SOL_MARGIN under the ceiling is flagged (plausibility.py, beats_light)
  % of the speed of light   the ceiling's time over the result's (sol_share): at most 100 %, since a time it beats
            is the flag's business, not a share; a peak measured under load gave shares above 100 % (issue 58)
"""

from __future__ import annotations

from harness.eval.cpu_ceiling import (
    ceiling_bandwidth_gbs,
    ceiling_tflops,
    machine_tflops,
)
from harness.facts import datasheet
from harness.types import Baseline, DeviceInfo, Peaks

DTYPE_PEAK = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
SOL_MARGIN = 0.95  # slack for writes still in L2 when the end event fires


def bound_ms(bytes_moved: int | None, flops: int | None, bandwidth_gbs: float | None, tflops: dict[str, float],
             dtype: str) -> float | None:
    """max(bytes / bandwidth, FLOPs / peak FLOP/s of the dtype), in ms; None when neither is known."""
    bounds = []
    if bandwidth_gbs and bytes_moved:
        bounds.append(bytes_moved / (bandwidth_gbs * 1e9) * 1e3)
    peak = tflops.get(DTYPE_PEAK.get(dtype, ""))
    if peak and flops:
        bounds.append(flops / (peak * 1e12) * 1e3)
    return max(bounds) if bounds else None


def ceiling_ms(baseline: Baseline | None, peaks: Peaks | None, device: DeviceInfo, dtype: str) -> float | None:
    """The time no correct result can beat: below it, a result is flagged faster_than_light."""
    if baseline is None:
        return None
    if device.target == "cuda":
        bandwidth, tflops = datasheet(device.name)
        measured = peaks or Peaks()
        bandwidth = max(filter(None, (bandwidth, measured.bandwidth_gbs)), default=None)
        tflops = {k: max(tflops.get(k, 0.0), measured.tflops.get(k, 0.0)) for k in {*tflops, *measured.tflops}}
        return bound_ms(baseline.bytes_moved, baseline.flops, bandwidth, tflops, dtype)
    theoretical, _ = machine_tflops()
    if peaks is None and not theoretical:
        return None
    return bound_ms(baseline.bytes_moved, baseline.flops, ceiling_bandwidth_gbs(peaks),
                    ceiling_tflops(peaks, theoretical), dtype)


def beats_light(ceiling: float | None, runtime_ms: float | None) -> bool:
    """Whether a time is faster than the ceiling allows, beyond the margin: the flag faster_than_light."""
    return ceiling is not None and runtime_ms is not None and runtime_ms < SOL_MARGIN * ceiling


def sol_share(ceiling: float | None, runtime_ms: float | None) -> float | None:
    """The share of the speed of light a time reaches, at most 1: a time within the margin of the ceiling reaches
    it. None where the ceiling or the time is unknown, or the time beats the ceiling (flagged, not a share)."""
    if ceiling is None or not runtime_ms or beats_light(ceiling, runtime_ms):
        return None
    return min(ceiling / runtime_ms, 1.0)
