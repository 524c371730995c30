"""Plausibility flags, decided in the parent from what the worker measured."""
import types

import pytest

from harness.eval.plausibility import Yardsticks, hidden_work, plausibility_flags, wants_fresh_baseline
from harness.figures import Contention, Figures, FlagEvidence, StageSeconds
from harness.protocol import WorkerReport
from harness.types import Baseline, DeviceInfo, Peaks, Timing

H100 = DeviceInfo(target="cuda", name="NVIDIA H100 80GB HBM3", index=0)
CPU = DeviceInfo(target="cpu", name="AMD EPYC")


def timing(ms, wall=None):
    return Timing(median_ms=ms, mean_ms=ms, std_ms=0.0, min_ms=ms, n=10, rse=0.0, wall_median_ms=wall)


def report(cand_ms, ref_ms):
    return WorkerReport(status="correct", runtime=timing(cand_ms), ref_runtime=timing(ref_ms), device_name="d",
                        torch_version="t")


def clean(bytes_moved=None, flops=None, ref_ms=1.0):
    """The reference measured in a clean process, with the problem's bytes and FLOPs."""
    return Baseline(timing=timing(ref_ms), bytes_moved=bytes_moved, flops=flops)


def flags(rep, device=H100, baseline=None, peaks=None):
    return plausibility_flags(rep, device, Yardsticks(baseline, peaks), dtype="float32", max_speedup=10.0)


def test_clean_result_has_no_flags():
    assert flags(report(1.0, 3.0), baseline=clean(bytes_moved=10**9, ref_ms=2.9)) == []


def test_each_plausibility_flag():
    assert flags(report(0.1, 3.0)) == ["implausible_speedup"]
    # 3.35 GB in 0.5 ms is twice the H100's datasheet bandwidth
    assert flags(report(0.5, 1.0), baseline=clean(bytes_moved=3_350_000_000, ref_ms=1.0)) == ["faster_than_light"]
    assert flags(report(1.0, 3.0), baseline=clean(ref_ms=1.5)) == ["reference_slowed"]


def test_a_slowed_reference_is_confirmed_by_a_fresh_clean_measurement():
    slowed = report(1.0, 3.0)  # the reference ran at 3 ms beside the candidate, 1.5 ms clean
    first = clean(ref_ms=1.5)

    def decided(fresh):
        return plausibility_flags(slowed, H100, Yardsticks(first, None, fresh), dtype="float32", max_speedup=10.0)
    assert wants_fresh_baseline(slowed, first, gpu_contended=False)
    assert decided(clean(ref_ms=2.9)) == []  # the machine was busy for everyone: clean again, it is slow too
    assert decided(clean(ref_ms=1.4)) == ["reference_slowed"]  # the candidate slowed it: clean again, still fast
    assert decided(None) == ["reference_slowed"]  # none measured again (or it failed): the first stands
    # a reference that was not slowed, or ran beside other processes, is never measured again
    assert not wants_fresh_baseline(report(1.0, 1.6), first, gpu_contended=False)
    assert not wants_fresh_baseline(slowed, first, gpu_contended=True)



def test_a_thread_of_the_candidate_running_beside_the_timed_reference_is_reference_slowed():
    def frozen(running: int) -> WorkerReport:
        evidence = FlagEvidence(runner_stopped=40, runner_running=running)
        return report(1.0, 1.5).model_copy(update={"figures": Figures(evidence=evidence)})
    beside = frozen(running=1)
    assert flags(beside, baseline=clean(ref_ms=1.5)) == ["reference_slowed"]
    assert flags(frozen(running=0), baseline=clean(ref_ms=1.5)) == []
    busy = Contention(cpu_foreign_share=0.5)  # other processes: contended
    loaded = beside.model_copy(update={"figures": beside.figures.add(contention=busy)})
    assert flags(loaded, device=CPU, baseline=clean(ref_ms=1.5)) == ["contended"]


def test_a_failed_clean_baseline_slows_nothing():
    assert flags(report(1.0, 3.0), baseline=Baseline(error="the reference failed")) == []


def test_faster_than_light_on_a_cpu_needs_measured_peaks_and_allows_cache_headroom():
    peaks = Peaks(bandwidth_gbs=10.0, tflops={"fp32": 0.1})
    moved = clean(bytes_moved=10**7)  # 1 ms at 10 GB/s
    assert flags(report(0.8, 1.0), device=CPU, baseline=moved) == []  # no peaks, no bound
    assert flags(report(0.8, 1.0), device=CPU, baseline=moved, peaks=peaks) == []  # outputs may sit in cache
    assert flags(report(0.4, 1.0), device=CPU, baseline=moved, peaks=peaks) == ["faster_than_light"]


def test_hidden_work_compares_wall_and_event_gaps_of_both_sides():
    ref = timing(2.0, wall=2.02)
    assert hidden_work(timing(1.0, wall=1.02), ref) == []
    assert hidden_work(timing(0.01, wall=2.0), ref) == ["hidden_work"]


@pytest.mark.parametrize("flag", ["reference_slowed", "hidden_work", "timing_disputed"])
def test_a_result_flagged_on_its_clocks_is_evaluated_again_and_the_second_verdict_stands(monkeypatch, flag):
    """The policy only: one evaluation's clocks thrown by a neighbour the counters cannot see, or by a process that
    came out slow, are not the candidate's doing, so the executor evaluates again before a flag that blames the
    candidate on them stands."""
    from harness.config import Settings
    from harness.eval import evaluation as executor
    from harness.eval.job import BatchContext, JobContext
    from harness.types import EvalResult

    ctx = JobContext(BatchContext(None, Settings(), 1), None, None)

    def result(flags, eval_s):
        return EvalResult(problem_id="p", problem_sha256="s", candidate_path="c", candidate_sha256="c",
                          target="cpu", device_name="d", torch_version="t", status="correct", speedup=2.0,
                          flags=flags, stages={"eval": eval_s})

    def evaluate_with(*outcomes):
        calls = []

        def evaluate_once(context, child):
            calls.append(child)
            return outcomes[len(calls) - 1]
        monkeypatch.setattr(executor, "evaluate_once", evaluate_once)
        return calls

    calls = evaluate_with(result(("noisy_timing",), 3.0))
    spare = object()
    assert executor.evaluate_built(ctx, child=spare).flags == ("noisy_timing",)
    assert calls == [spare]

    calls = evaluate_with(result((flag,), 3.0), result((), 2.5))
    again = executor.evaluate_built(ctx, child=spare)
    assert again.flags == () and again.figures.stages == StageSeconds(eval_s=2.5, flagged_eval_s=3.0)
    assert calls == [spare, None]  # the first child is spent: the second evaluation starts a new one

    calls = evaluate_with(result((flag, "noisy_timing"), 3.0), result((flag,), 2.9))
    assert executor.evaluate_built(ctx).flags == (flag,) and len(calls) == 2

    calls = evaluate_with(result(("implausible_speedup",), 3.0))  # a bound on the speed, not one process's clocks
    assert executor.evaluate_built(ctx).flags == ("implausible_speedup",) and len(calls) == 1


def test_the_reference_measured_again_after_a_candidate_is_never_stored(monkeypatch, tmp_path):
    """The stored clean baseline is the one measured before any candidate ran: what is measured after one (to
    judge reference_slowed) could carry what that candidate left behind, so it judges that result alone."""
    from harness.config import load_settings
    from harness.device import discover
    from harness.eval import baseline, pipeline
    from harness.store import Store

    calls = []

    def measure(problems, device, settings, store, kinds=("eager",), force=False, listeners=None):
        return calls.append((store, force)) or {}
    monkeypatch.setattr(pipeline, "device_peaks", lambda *args, **kwargs: None)
    monkeypatch.setattr(pipeline, "measure_baselines", measure)
    monkeypatch.setattr(pipeline, "run_jobs", lambda *args, **kwargs: None)
    monkeypatch.setattr(baseline, "measure_baselines", measure)
    device, settings = discover("cpu"), load_settings(results_dir=tmp_path)
    with Store(tmp_path / "h.db") as store:
        pipeline.run_pending([], device, settings, store, on_built=None, on_evaluated=None)
        assert calls == [(store, False)]  # the run's own baselines: from the store, or measured and stored
    assert baseline.measured_again(types.SimpleNamespace(sha256="p"), device, settings) is None
    assert calls[-1] == (None, True)


def test_the_reference_is_measured_again_where_the_verdict_asks_for_it_and_the_verdict_gets_it(monkeypatch):
    from harness.config import Settings
    from harness.eval import evaluation
    from harness.eval.children import Observed
    from harness.eval.job import BatchContext, JobContext

    problem = types.SimpleNamespace(sha256="p")
    ctx = JobContext(BatchContext(H100, Settings(), 1, baselines={"p": clean(ref_ms=1.5)}),
                     types.SimpleNamespace(problem=problem), types.SimpleNamespace(status="ok"))
    measured = []
    monkeypatch.setattr(evaluation, "measured_again", lambda *args: measured.append(args) or clean(ref_ms=2.9))
    monkeypatch.setattr(evaluation, "verdict", lambda context, observed, fresh: fresh)
    for ref_ms, asked in ((3.0, True), (1.6, False)):
        observed = Observed(report(1.0, ref_ms), Figures(), None, ())
        monkeypatch.setattr(evaluation, "observe", lambda context, child, observed=observed: observed)
        fresh = evaluation.evaluate_once(ctx, None)
        assert (fresh == clean(ref_ms=2.9)) is asked and len(measured) == 1
    assert measured == [(problem, H100, ctx.batch.settings)]
