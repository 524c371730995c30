import itertools
import statistics

import pytest

from harness.timing import summarize, time_interleaved
from harness.types import TimingSettings


class FakeTimer:
    """Returns scripted durations per function; records the call order."""

    def __init__(self, durations: dict):
        self.durations = {name: itertools.cycle(values) for name, values in durations.items()}
        self.calls: list[str] = []

    def __call__(self, fn):
        name = fn()
        self.calls.append(name)
        return next(self.durations[name])


def fns(*names):
    return {name: (lambda n=name: n) for name in names}


def test_summary_statistics():
    t = summarize([1.0, 2.0, 3.0, 10.0])
    assert (t.median_ms, t.mean_ms, t.min_ms, t.n) == (2.5, 4.0, 1.0, 4)
    assert t.std_ms == pytest.approx(statistics.stdev([1, 2, 3, 10]))
    assert t.rse == pytest.approx(t.std_ms / 2 / 4.0)


def test_stable_timings_stop_at_min_runs():
    timer = FakeTimer({"ref": [2.0], "cand": [1.0]})
    settings = TimingSettings(warmup_runs=2, min_runs=10, max_runs=1000, budget_s=60)
    timings, converged = time_interleaved(fns("ref", "cand"), timer, settings)
    assert converged and timings["ref"].n == 10 and timings["cand"].n == 10
    assert timings["ref"].median_ms == 2.0 and timings["cand"].median_ms == 1.0
    assert len(timer.calls) == 2 * 2 + 2 * 10


def test_order_alternates_so_neither_always_goes_first():
    timer = FakeTimer({"ref": [2.0], "cand": [1.0]})
    time_interleaved(fns("ref", "cand"), timer, TimingSettings(warmup_runs=0, min_runs=4, budget_s=60))
    assert timer.calls[:8] == ["ref", "cand", "cand", "ref", "ref", "cand", "cand", "ref"]


def test_noisy_timings_run_to_the_cap_and_report_not_converged():
    timer = FakeTimer({"ref": [1.0, 5.0, 1.0, 9.0, 2.0], "cand": [1.0]})
    settings = TimingSettings(warmup_runs=0, min_runs=5, max_runs=40, target_rse=1e-6, budget_s=60)
    timings, converged = time_interleaved(fns("ref", "cand"), timer, settings)
    assert not converged and timings["ref"].n == 40


def test_budget_stops_unconverged_timing_after_a_few_runs():
    timer = FakeTimer({"ref": [1.0, 5.0], "cand": [1.0]})
    settings = TimingSettings(warmup_runs=0, min_runs=10, max_runs=10**9, target_rse=1e-9, budget_s=0.0)
    timings, converged = time_interleaved(fns("ref", "cand"), timer, settings)
    assert not converged and timings["ref"].n == 3
