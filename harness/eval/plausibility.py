"""The flags on a correct result, all decided here in the parent from what the evaluation child measured
(the child reports figures, never verdicts on them). Never imports torch.

  implausible_speedup  faster than the ceiling over eager (Settings.max_speedup, default 10x; not raised on a
                       contended result: other processes slow the reference beside the candidate too)
  faster_than_light    faster than the problem's bytes and FLOPs allow on this device (roofline.ceiling_ms: a
                       true upper bound, on a CPU never a peak measured under load: cpu_ceiling.py)
  reference_slowed     the reference ran slower beside the candidate than in a clean process, or while a thread of
                       the candidate's, which the judge stops while it times the reference (freeze.py), was still
                       running (not raised on a result flagged `contended`: other processes explain it as well)
  contended            other processes used the device while it was timed: the cores (the child's cpu_foreign
                       share above cpu_ceiling.CONTENDED_SHARE; child/observe.py) or the GPU (gpu_load.py)
  hidden_work          work the timer did not see: (cuda) the wall clock saw work the CUDA events did not; (both)
                       a timed call's output took longer to hand over than copying it costs (its work was left
                       until it was read; not judged on a contended result)
  timing_disputed      the judge's clock around the candidate's timed calls saw more than its runner reported, by
                       more than the same clock saw around the reference's (the runner's figures were altered;
                       not judged on a contended result)

These flags exclude a result from fast_p, the geometric mean and "best" (flags.EXCLUDING);
noisy_timing (the timing stopped at its budget before it converged) only informs. Those that blame the candidate on
one evaluation's clocks (CONFIRMED) stand only if a second evaluation, in new children, raises them too
(evaluation.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.eval.cpu_ceiling import CONTENDED_SHARE
from harness.eval.roofline import beats_light, ceiling_ms
from harness.flags import (
    CONTENDED,
    FASTER_THAN_LIGHT,
    HIDDEN_WORK,
    IMPLAUSIBLE_SPEEDUP,
    NOISY_TIMING,
    REFERENCE_SLOWED,
    TIMING_DISPUTED,
)
from harness.protocol import WorkerReport
from harness.types import Baseline, DeviceInfo, Peaks, Timing

# A neighbour the counters cannot see (another VM on the same cores), or a process whose context or channel came out
# slow (one honest Triton candidate of 64 on an H100 handed its outputs over 1.29 ms slower than a copy, on every
# checked call, where the other 63 took at most 0.85 ms), shows in one evaluation; a candidate that causes the flag
# causes it again.
CONFIRMED = frozenset({REFERENCE_SLOWED, HIDDEN_WORK, TIMING_DISPUTED})
SLOW_FACTOR = 1.5      # reference beside the candidate vs in a clean process
SLOW_MIN_MS = 0.05


@dataclass(frozen=True)
class Yardsticks:
    """What a result's speed is held against: the problem's clean eager baseline (with its bytes and FLOPs), the
    device's peaks, and the reference measured clean again (`fresh`, which the caller measures where
    wants_fresh_baseline says so; None: none was)."""

    baseline: Baseline | None
    peaks: Peaks | None
    fresh: Baseline | None = None


def plausibility_flags(report: WorkerReport, device: DeviceInfo, against: Yardsticks, *, dtype: str,
                       max_speedup: float, speedup: float | None = None, gpu_contended: bool = False) -> list[str]:
    """`speedup` is the result's (over its timed workloads; None: its medians'); `gpu_contended`: another process
    used the GPU during the evaluation (gpu_load.py).

    A reference that looks slowed is confirmed against the fresh clean measurement: when the machine is busy for
    other reasons, the clean reference is slow too; one the candidate slowed is not.
    On a contended result (already excluded) the flags that accuse the candidate of a speed it cannot have
    are only raised where contention cannot explain them: other processes slow the reference beside it as
    much as they like, but never make anything faster than light."""
    if report.status != "correct" or not report.runtime or not report.ref_runtime:
        return []
    baseline, fresh = against.baseline, against.fresh
    flags = measurement_flags(report, device, gpu_contended)
    contended = gpu_contended or cores_contended(report)
    if speedup is None:
        speedup = report.ref_runtime.median_ms / report.runtime.median_ms if report.runtime.median_ms > 0 else 0.0
    if speedup > max_speedup and not contended:
        flags.append(IMPLAUSIBLE_SPEEDUP)
    if beats_light(ceiling_ms(baseline, against.peaks, device, dtype), report.runtime.median_ms):
        flags.append(FASTER_THAN_LIGHT)
    beside = reference_slowed(report, baseline, contended)
    if beside or (beside is None and slowed(report.ref_runtime, fresh or baseline)):
        flags.append(REFERENCE_SLOWED)
    return flags


def reference_slowed(report: WorkerReport, baseline: Baseline | None, contended: bool) -> bool | None:
    """The one rule for reference_slowed: True when a thread of the candidate's ran beside the timed reference;
    False when the reference was not slower than the clean baseline, or other processes explain it (`contended`);
    None when it was slower with nothing else to explain it, so only the reference measured clean again can tell
    (wants_fresh_baseline)."""
    if contended or report.ref_runtime is None:
        return False
    if ran_beside(report):
        return True
    return None if slowed(report.ref_runtime, baseline) else False


def wants_fresh_baseline(report: WorkerReport, baseline: Baseline | None, gpu_contended: bool) -> bool:
    """Whether reference_slowed rests on the clean baseline alone; then the caller measures the reference clean
    again and passes it as plausibility_flags' `fresh`."""
    return (report.status == "correct" and report.runtime is not None
            and reference_slowed(report, baseline, gpu_contended or cores_contended(report)) is None)


def ran_beside(report: WorkerReport) -> bool:
    """A thread of the candidate's ran while the reference was timed."""
    return (report.figures.evidence.runner_running or 0) > 0


def measurement_flags(report: WorkerReport, device: DeviceInfo, gpu_contended: bool = False) -> list[str]:
    """What the judge's figures say about the timing: hidden_work, timing_disputed, noisy_timing, contended (cores).
    Other processes delay the judge's clock around a hand-over or a timed call as much as they like, so a contended
    result (not counted anyway) is not accused on those clocks."""
    flags = hidden_work(report.runtime, report.ref_runtime) if device.target == "cuda" else []
    if not (cores_contended(report) or gpu_contended):
        flags += [] if flags else deferred_work(report, device.target)
        flags += timing_disputed(report, device.target)
    if not report.converged:
        flags.append(NOISY_TIMING)
    if cores_contended(report):
        flags.append(CONTENDED)
    return flags


def cores_contended(report: WorkerReport) -> bool:
    return (report.figures.contention.cpu_foreign_share or 0.0) > CONTENDED_SHARE


def slowed(reference: Timing, baseline: Baseline | None) -> bool:
    """The reference, timed beside the candidate, ran slower than `baseline` (clean) by more than noise."""
    return bool(baseline and baseline.timing and
                reference.median_ms > SLOW_FACTOR * baseline.timing.median_ms + SLOW_MIN_MS)


HIDDEN_MIN_MS = 0.05
HIDDEN_SHARE = 0.2


def hidden_work(candidate, reference) -> list[str]:
    """Flag work the CUDA events did not see: the candidate's wall clock (sync included) exceeds its
    event time by more than the reference's does, by at least 50 us and 20% of its event time."""
    if candidate.wall_median_ms is None or reference.wall_median_ms is None:
        return []  # a timer without a wall clock beside it (the cpu's)
    extra = (candidate.wall_median_ms - candidate.median_ms) - (reference.wall_median_ms - reference.median_ms)
    return [HIDDEN_WORK] if extra > max(HIDDEN_MIN_MS, HIDDEN_SHARE * candidate.median_ms) else []


# An honest handover's extra over the judge's copy: the round trip, and on the cpu two processes' copies that share
# the cores with the other's idle threads (honest cpu relus: -3.4 to +2.6 ms); on the GPU, where outputs cross device
# to device, the runner's copy and sync in a context of its own (99 honest results on an H200, outputs of 256 MB and
# 3.2 GB: 0.47 to 0.84 ms, whatever the size).
DEFER_MIN_MS = {"cpu": 4.0, "cuda": 1.0}
DEFER_SHARE = 0.25
DEFER_COPY_SHARE = 0.5


def deferred_work(report: WorkerReport, target: str) -> list[str]:
    """Flag outputs that were still being made when the judge read them: on every checked timed call, handing the
    output over took longer than a plain copy of it by at least DEFER_MIN_MS, a quarter of the candidate's
    reported time and half the copy's own time (the least of those calls: an interruption only adds to one)."""
    evidence = report.figures.evidence
    if evidence.deferred_ms is None or report.runtime is None:
        return []
    wall = report.runtime.wall_median_ms or report.runtime.median_ms
    margin = max(DEFER_MIN_MS[target], DEFER_SHARE * wall, DEFER_COPY_SHARE * (evidence.copy_ms or 0.0))
    return [HIDDEN_WORK] if evidence.deferred_ms > margin else []


# Honest results on an H200 (20 problems, builds beside some): -0.17 to +0.23 ms, those above 0.02 ms at reported
# walls over 3 ms; input making on loaded cores is noisier than on a GPU.
DISPUTE_MIN_MS = {"cpu": 0.5, "cuda": 0.1}
DISPUTE_SHARE = 0.15


def timing_disputed(report: WorkerReport, target: str) -> list[str]:
    """Flag a runner whose reported wall time per call is short of what the judge's clock saw around the call, beyond
    what input making and the round trip explain (the same clock around the reference's calls): by at least
    DISPUTE_MIN_MS and 15% of the candidate's reported wall time. (A runner that shortens only its event times is
    hidden_work on the GPU; on the CPU the judge refuses event times that differ from the wall times.)"""
    unreported_ms = report.figures.evidence.unreported_ms
    if unreported_ms is None or report.runtime is None:
        return []
    wall = report.runtime.wall_median_ms or report.runtime.median_ms
    return [TIMING_DISPUTED] if unreported_ms > max(DISPUTE_MIN_MS[target], DISPUTE_SHARE * wall) else []
