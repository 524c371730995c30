"""Timing: one cache flush and one measured call at a time, reference and candidate interleaved,
repeated until the relative standard error is small or the budget is spent.

Every timed call gets freshly generated inputs (new values, prepared outside the timed region), so
an output cached on the input's identity, pointer or shape is stale; a caller can re-check any timed
output. Timers are created before the candidate is imported and keep their own references to the
clock functions (and this module to its statistics functions), so patching `time`,
`torch.cuda.Event` or `statistics` later changes nothing here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from math import sqrt
from statistics import fmean, median, quantiles, stdev
from typing import NamedTuple

import torch

from harness.types import Timing, TimingSettings

FLUSH_MIN_BYTES = 256 << 20
# The device is held this long before each timed call, so the call's first kernel is already queued when the
# start event fires: the time is the device's, as inside a running model where the previous layer's kernels
# cover the host's launch. Without it, 25-110 us of host launch gap, different in every process, moved an H100's
# speedups by up to 2.7 % between fresh evaluations of the same file.
LAUNCH_COVER_US = 200


class Sample(NamedTuple):
    event_ms: float  # what the device timer measured (cpu: the wall clock)
    wall_ms: float   # host wall clock around the call and a device-wide sync
    output: object
    forward_ms: float | None = None  # a training call's: from its start to its backward's (the timer's split)


class CudaTimer:
    """CUDA events around one call, an L2 flush before it, and a device-wide sync after it.

    Before the start event the stream is held for LAUNCH_COVER_US while the host enqueues the call. The host
    wall clock runs around the same span, sync included: work the candidate hid on another stream or thread is
    invisible to the events but not to the wall clock (the hold is in both sides' wall time alike).
    """

    def __init__(self, device: torch.device):
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        self._flush = torch.empty(max(FLUSH_MIN_BYTES, 4 * l2) // 4, dtype=torch.int32, device=device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self._mid = torch.cuda.Event(enable_timing=True)
        self._record_start, self._record_end, self._record_mid = self._start.record, self._end.record, self._mid.record
        self._split = False
        self._elapsed = self._start.elapsed_time
        self._sync = torch.cuda.synchronize
        self._zero = self._flush.zero_
        self._clock = time.perf_counter_ns
        self._hold = torch.cuda._sleep
        self._cover_cycles = int(LAUNCH_COVER_US * self._cycles_per_us())

    def _cycles_per_us(self) -> float:
        """The rate of the clock torch.cuda._sleep counts, measured (it follows the SM clock)."""
        self._hold(1000)
        self._record_start()
        self._hold(1_000_000)
        self._record_end()
        self._sync()
        return 1_000_000 / max(self._elapsed(self._end) * 1000, 1.0)

    def split(self, half: str, run: Callable[[], object]) -> object:
        """training.forward_backward's `around` inside a timed call: marks where its backward starts."""
        if half == "backward":
            self._record_mid()
            self._split = True
        return run()

    def __call__(self, fn: Callable[..., object], args: list) -> Sample:
        self._zero()
        self._sync()
        self._hold(self._cover_cycles)
        self._split = False
        wall_start = self._clock()
        self._record_start()
        out = fn(*args)
        self._record_end()
        self._sync()  # device-wide: waits for work on every stream
        wall_ms = (self._clock() - wall_start) / 1e6
        return Sample(self._elapsed(self._end), wall_ms, out, self._elapsed(self._mid) if self._split else None)


class CpuTimer:
    """perf_counter_ns around one call, with the last-level cache flushed by a write before it."""

    def __init__(self, flush_bytes: int | None = None):
        self._flush = torch.empty(flush_bytes or _cpu_flush_bytes(), dtype=torch.uint8)
        self._fill = self._flush.fill_
        self._clock = time.perf_counter_ns
        self._mid: int | None = None
        # Its pages faulted in now, not in the first flush: that one took 0.2 s on the 2-core CI machine, and its
        # wait, counted in the warm-up call's gap, widened the reference's spread past a hidden 26 ms
        # (timing_disputed, tests/fixtures/solutions/judge/cpu_shrink_timer.py, with one warm-up call and 5 timed)
        self._fill(1)

    def split(self, half: str, run: Callable[[], object]) -> object:
        """training.forward_backward's `around` inside a timed call: marks where its backward starts."""
        if half == "backward":
            self._mid = self._clock()
        return run()

    def __call__(self, fn: Callable[..., object], args: list) -> Sample:
        self._fill(1)
        self._mid = None
        start = self._clock()
        out = fn(*args)
        ms = (self._clock() - start) / 1e6
        return Sample(ms, ms, out, (self._mid - start) / 1e6 if self._mid is not None else None)


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


def rse(samples_ms: list[float]) -> float:
    """The relative standard error of the mean: what adaptive stopping watches after every round."""
    n, mean = len(samples_ms), fmean(samples_ms)
    return (stdev(samples_ms) / sqrt(n) / mean) if n > 1 and mean > 0 else 0.0


def summarize(samples_ms: list[float], wall_ms: list[float] | None = None,
              forward_ms: list[float] | None = None) -> Timing:
    """`forward_ms`: a training problem's calls' forward halves (each call's backward is the rest of it)."""
    n = len(samples_ms)
    mean = fmean(samples_ms)
    std = stdev(samples_ms) if n > 1 else 0.0
    spread = (min(samples_ms), *quantiles(samples_ms, n=20, method="inclusive"), max(samples_ms)) if n > 1 else ()
    forward = forward_ms if forward_ms and len(forward_ms) == n else None
    return Timing(median_ms=median(samples_ms), mean_ms=mean, std_ms=std, min_ms=min(samples_ms),
                  n=n, rse=rse(samples_ms),
                  wall_median_ms=median(wall_ms) if wall_ms else None, quantiles_ms=spread,
                  forward_median_ms=median(forward) if forward else None,
                  backward_median_ms=median([s - f for s, f in zip(samples_ms, forward)]) if forward else None)


class Side(NamedTuple):
    """One timed function: `prepare()` makes (label, fresh args) outside the timed region; `timer` times it
    where it is not time_interleaved's own (the candidate's, in its runner process)."""

    prepare: Callable[[], tuple[str, list]]
    call: Callable[..., object]
    timer: Callable[[Callable[..., object], list], Sample] | None = None


Inspect = Callable[[str, int, str, list, object], None]  # (side, round, label, args, output)


def time_interleaved(sides: dict[str, Side], timer: Callable[[Callable[..., object], list], Sample],
                     settings: TimingSettings, inspect: Inspect | None = None) -> tuple[dict[str, Timing], bool]:
    """Time every side in alternating order, fresh inputs per call; returns timings and whether all
    converged. `inspect` sees every timed call's inputs and output (after the timer, before the next)."""
    names = list(sides)
    for _ in range(settings.warmups()):
        for name in names:
            _, args = sides[name].prepare()
            (sides[name].timer or timer)(sides[name].call, args)
    events: dict[str, list[float]] = {name: [] for name in names}
    walls: dict[str, list[float]] = {name: [] for name in names}
    forwards: dict[str, list[float]] = {name: [] for name in names}
    started = time.monotonic()
    rounds = 0
    while True:
        for name in (names if rounds % 2 == 0 else names[::-1]):  # neither side always goes first
            label, args = sides[name].prepare()
            sample = (sides[name].timer or timer)(sides[name].call, args)
            events[name].append(sample.event_ms)
            walls[name].append(sample.wall_ms)
            if sample.forward_ms is not None:
                forwards[name].append(sample.forward_ms)
            if inspect:
                inspect(name, rounds, label, args, sample.output)
            del sample, args
        rounds += 1
        converged = rounds >= 2 and all(rse(s) <= settings.target_rse for s in events.values())
        over_budget = time.monotonic() - started >= settings.budget()
        if rounds >= settings.max_runs or (rounds >= settings.min_runs and converged) \
                or (rounds >= min(3, settings.min_runs) and over_budget):
            break
    return {name: summarize(events[name], walls[name], forwards[name]) for name in names}, converged
