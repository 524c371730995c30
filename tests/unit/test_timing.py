import itertools
import statistics

import pytest

from harness.child.timing import Sample, Side, summarize, time_interleaved
from harness.types import TimingSettings


class FakeTimer:
    """Returns scripted durations per function; records the call order."""

    def __init__(self, durations: dict):
        self.durations = {name: itertools.cycle(values) for name, values in durations.items()}
        self.calls: list[str] = []

    def __call__(self, fn, args):
        name = fn(*args)
        self.calls.append(name)
        ms = next(self.durations[name])
        return Sample(ms, ms + 0.5, name)


def fns(*names):
    return {name: Side(lambda n=name: (f"{n}-inputs", [n]), lambda n: n) for name in names}


def test_summary_statistics():
    t = summarize([1.0, 2.0, 3.0, 10.0])
    assert (t.median_ms, t.mean_ms, t.min_ms, t.n) == (2.5, 4.0, 1.0, 4)
    assert t.std_ms == pytest.approx(statistics.stdev([1, 2, 3, 10]))
    assert t.rse == pytest.approx(t.std_ms / 2 / 4.0)


def test_a_training_call_is_timed_whole_and_split_where_its_backward_starts():
    """CpuTimer.split marks the backward's start inside the timed call; the summary gives each half's median, the
    backward's taken per call as the rest of it."""
    import time

    import torch

    from harness.child.timing import CpuTimer
    from harness.child.training import forward_backward, leaves

    timer = CpuTimer(flush_bytes=1 << 20)

    class Slow(torch.nn.Module):
        def forward(self, x):
            time.sleep(0.02)  # a forward of 20 ms; its backward (a multiply) takes microseconds
            return x * 2

    x = leaves([torch.ones(4)])
    sample = timer(lambda *a: forward_backward(Slow(), list(a), [torch.ones(4)], around=timer.split), x)
    assert sample.forward_ms is not None and 20 <= sample.forward_ms <= sample.event_ms
    assert timer(lambda: None, []).forward_ms is None  # a call with no backward is not split
    halves = summarize([10.0, 12.0, 30.0], forward_ms=[4.0, 5.0, 6.0])
    assert (halves.forward_median_ms, halves.backward_median_ms) == (5.0, 7.0)
    assert summarize([10.0, 12.0]).forward_median_ms is None


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


def test_every_timed_call_is_inspected_with_its_own_fresh_inputs():
    timer = FakeTimer({"ref": [2.0], "cand": [1.0]})
    prepared = itertools.count()
    sides = {"ref": Side(lambda: ("ref", ["ref"]), lambda n: n),
             "cand": Side(lambda: (f"cand{next(prepared)}", ["cand"]), lambda n: n)}
    seen = []
    timings, _ = time_interleaved(sides, timer, TimingSettings(warmup_runs=1, min_runs=3, budget_s=60),
                                  inspect=lambda side, round_, label, _, out: seen.append((side, round_, label, out)))
    assert [s for s in seen if s[0] == "cand"] == [("cand", 0, "cand1", "cand"), ("cand", 1, "cand2", "cand"),
                                                   ("cand", 2, "cand3", "cand")]  # cand0 went to the warm-up
    assert timings["cand"].wall_median_ms == 1.5 and timings["cand"].median_ms == 1.0
