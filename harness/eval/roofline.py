"""Speed of light: the least time a problem can take on a device, from its minimal bytes and FLOPs and
the device's peaks. Never imports torch.

Two sets of peaks, for two questions:
  measured  (a large copy, a large GEMM per dtype: baseline.device_peaks) -> "% of the
            speed of light": how much of what this machine demonstrably does a result reaches
  ceiling   the physical limit a result cannot beat -> the `faster_than_light` flag. On a GPU, the
            datasheet where known (a kernel may beat torch's copy, never the memory bus); on a CPU,
            the cores' theoretical FLOP/s and the fastest uncontended copy with headroom (cpu_ceiling.py),
            never a peak measured while other processes used the cores.
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


def sol_ms(baseline: Baseline | None, peaks: Peaks | None, dtype: str) -> float | None:
    """The problem's lower-bound time at this device's measured peaks."""
    if baseline is None or peaks is None:
        return None
    return bound_ms(baseline.bytes_moved, baseline.flops, peaks.bandwidth_gbs, peaks.tflops, dtype)


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
