"""Timing: one cache flush and one measured call at a time, reference and candidate interleaved,
repeated until the relative standard error is small or the budget is spent.

Timers are created before the candidate is imported and keep their own references to the clock
functions, so a candidate that later patches `time` or `torch.cuda.Event` does not change them.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Callable

import torch

from .types import Timing, TimingSettings

FLUSH_MIN_BYTES = 256 << 20


class CudaTimer:
    """CUDA events around one call, an L2 flush before it, and a device-wide sync after it."""

    def __init__(self, device: torch.device):
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        self._flush = torch.empty(max(FLUSH_MIN_BYTES, 4 * l2) // 4, dtype=torch.int32, device=device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self._record_start, self._record_end = self._start.record, self._end.record
        self._elapsed = self._start.elapsed_time
        self._sync = torch.cuda.synchronize

    def __call__(self, fn: Callable[[], object]) -> float:
        self._flush.zero_()
        self._sync()
        self._record_start()
        fn()
        self._record_end()
        self._sync()  # device-wide: also waits for work on other streams before the next call
        return self._elapsed(self._end)


class CpuTimer:
    """perf_counter_ns around one call, with the last-level cache flushed by a write before it."""

    def __init__(self, flush_bytes: int | None = None):
        self._flush = torch.empty(flush_bytes or _cpu_flush_bytes(), dtype=torch.uint8)
        self._clock = time.perf_counter_ns

    def __call__(self, fn: Callable[[], object]) -> float:
        self._flush.fill_(1)
        start = self._clock()
        fn()
        return (self._clock() - start) / 1e6


def _cpu_flush_bytes() -> int:
    """Twice the largest CPU cache, at least 32 MiB."""
    largest = 0
    try:
        from pathlib import Path
        for size_file in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
            text = size_file.read_text().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            largest = max(largest, int(text.rstrip("KMG")) * scale)
    except (OSError, ValueError):
        pass
    return max(32 << 20, 2 * largest)


def summarize(samples_ms: list[float]) -> Timing:
    n = len(samples_ms)
    mean = statistics.fmean(samples_ms)
    std = statistics.stdev(samples_ms) if n > 1 else 0.0
    return Timing(median_ms=statistics.median(samples_ms), mean_ms=mean, std_ms=std, min_ms=min(samples_ms),
                  n=n, rse=(std / math.sqrt(n) / mean) if mean > 0 else 0.0)


def time_interleaved(fns: dict[str, Callable[[], object]], timer: Callable[[Callable[[], object]], float],
                     settings: TimingSettings) -> tuple[dict[str, Timing], bool]:
    """Time every function in `fns` in alternating order; returns timings and whether all converged."""
    names = list(fns)
    for _ in range(settings.warmup_runs):
        for name in names:
            timer(fns[name])
    samples: dict[str, list[float]] = {name: [] for name in names}
    started = time.monotonic()
    rounds = 0
    while True:
        for name in (names if rounds % 2 == 0 else names[::-1]):  # neither side always goes first
            samples[name].append(timer(fns[name]))
        rounds += 1
        converged = rounds >= 2 and all(summarize(s).rse <= settings.target_rse for s in samples.values())
        over_budget = time.monotonic() - started >= settings.budget_s
        if rounds >= settings.max_runs or (rounds >= settings.min_runs and converged) \
                or (rounds >= min(3, settings.min_runs) and over_budget):
            break
    return {name: summarize(s) for name, s in samples.items()}, converged
