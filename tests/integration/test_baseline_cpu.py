"""`harness baseline` on the CPU target: eager and torch.compile timed in a clean child, the CPU's peaks,
everything cached; a torch.compile that fails is recorded, not fatal; an eager time stands once a second
measurement agrees with it."""
import json
import os
import sqlite3

import pytest

from harness.eval.baseline import AGREEMENT, NOISY_BASELINE_RSE
from harness.eval.cpu_ceiling import CONTENDED_SHARE
from harness.eval.roofline import ceiling_ms, sol_share
from harness.types import Baseline, DeviceInfo, Peaks
from tests.conftest import REPO, run_cli, share_builds

# Measuring is what this module tests: no machine store serves it what another results directory measured.
pytestmark = pytest.mark.usefixtures("measured_here")


KINDS = ("eager", "compile", "compile-max-autotune")
LATER_CALLS = 2  # eager measured again until one agrees: one call on a quiet machine


def output(stdout: str) -> dict:
    """`harness baseline --json` as {peaks, problems}: one object, or JSON Lines of a problem each (with the peaks)."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    if len(lines) == 1 and "problems" in lines[0]:
        return lines[0]
    return {"peaks": lines[0]["peaks"] if lines else None, "problems": lines}


def eager(call: dict) -> dict:
    return call["problems"][0]["baselines"]["eager"]


def clean(b: dict) -> bool:
    return b["rse"] <= NOISY_BASELINE_RSE and (b["foreign_cpu"] or 0.0) <= CONTENDED_SHARE


def same(a: float | None, b: float | None) -> bool:
    return a is None and b is None or a is not None and b is not None and a == pytest.approx(b)


def timings(call: dict) -> dict:
    """Each kind's timing and standing, without what follows the peaks (sol_fraction)."""
    fields = ("median_ms", "n", "rse", "error", "foreign_cpu", "trusted")
    return {k: {f: b[f] for f in fields} for k, b in call["problems"][0]["baselines"].items()}


def baseline_call(results_dir, budget: str = "1", timeout: float = 900) -> dict:
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--json", "--timing-budget", budget,
                   "--results-dir", results_dir, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return output(proc.stdout)


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return share_builds(tmp_path_factory.mktemp("baseline"), tmp_path_factory)


@pytest.fixture(scope="module")
def measured(results_dir):
    return baseline_call(results_dir)


@pytest.fixture(scope="module")
def later(measured, results_dir):
    """The calls after the first, until its eager time is confirmed (each measures it again in a new child, at
    the default budget: a converged timing is within the rse bound)."""
    calls = []
    while len(calls) < LATER_CALLS and not (calls and eager(calls[-1])["trusted"]):
        calls.append(baseline_call(results_dir, budget="5", timeout=300))
    return calls


def test_eager_and_both_compile_modes_are_timed_with_their_share_of_the_speed_of_light(measured):
    peaks = measured["peaks"]
    assert peaks["bandwidth_gbs"] > 0.5 and set(peaks["tflops"]) == {"fp32", "bf16", "fp16"}
    (relu,) = measured["problems"]
    assert relu["problem"] == "cpu/relu" and relu["error"] is None
    assert relu["bytes_moved"] == 2 * 4 * 4096 * 1024  # input and output, fp32 (cpu/relu is 4096 x 1024)
    # the speed of light is the ceiling faster_than_light uses (none while every copy was measured under load)
    ceiling = ceiling_ms(Baseline(bytes_moved=relu["bytes_moved"], flops=relu["flops"]), Peaks.model_validate(peaks),
                         DeviceInfo(target="cpu", name=relu["device"]), "float32")
    assert same(relu["sol_ms"], ceiling), (relu, peaks)
    assert set(relu["baselines"]) == set(KINDS)
    for kind, b in relu["baselines"].items():
        assert b["error"] is None and b["median_ms"] > 0, (kind, b)
        assert same(b["sol_fraction"], sol_share(relu["sol_ms"], b["median_ms"])), (kind, b)
        assert b["sol_fraction"] is None or 0 < b["sol_fraction"] <= 1, (kind, b)
        assert (b["speedup_vs_eager"] is None) == (kind == "eager")


def test_one_eager_measurement_is_provisional_and_a_second_that_agrees_confirms_the_faster(measured, later,
                                                                                           results_dir):
    assert not eager(measured)["trusted"]  # one sample never stands, however steady
    kept = [eager(measured), *(eager(call) for call in later)]
    for before, after in zip(kept, kept[1:]):
        assert after["median_ms"] <= before["median_ms"] or not clean(before), kept  # the faster clean one stays
    final = kept[-1]
    db = sqlite3.connect(results_dir / "harness.db")
    (row,) = db.execute("SELECT baseline_json FROM baselines WHERE kind = 'eager'").fetchall()
    stored = json.loads(row[0])  # what the JSON shows is what stands in the store
    assert stored["timing"]["median_ms"] == final["median_ms"]
    assert stored["confirmations"] == (1 if final["trusted"] else 0)
    if final["trusted"]:  # the faster of two clean measurements that agree
        assert kept[-2]["median_ms"] <= (1 + AGREEMENT) * final["median_ms"] and clean(final), kept
        return
    # Not confirmed: each later measurement was disturbed or slower by more than AGREEMENT. The cores' counters
    # cannot tell a quiet machine here: a neighbour outside this machine's view (another VM on the host, its
    # memory traffic against a memory-bound relu) slows a whole measurement evenly, which is why one never stands.
    assert not final["trusted"] and stored["confirmations"] == 0, kept


def test_later_calls_serve_the_compile_kinds_and_a_confirmed_eager(measured, later, results_dir):
    compiled = {k: t for k, t in timings(measured).items() if k != "eager"}
    for call in later:  # eager measured again; the torch.compile kinds, stored, served as they were
        assert {k: t for k, t in timings(call).items() if k != "eager"} == compiled
    last = later[-1]
    if not eager(last)["trusted"]:
        return  # still provisional: the next call measures it again (above)
    served = baseline_call(results_dir, timeout=120)
    assert timings(served) == timings(last)  # nothing measured again
    if (last["peaks"]["foreign_cpu"] or 0) <= CONTENDED_SHARE:
        assert served == last
    else:  # peaks measured while other processes used the cores are measured again, keeping the fastest copy
        assert served["peaks"]["best_bandwidth_gbs"] >= last["peaks"]["best_bandwidth_gbs"]


def test_results_show_their_speedup_over_compile_once_baselines_exist(measured, results_dir):
    proc = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", "--json", "--timing-budget", "1",
                   "--results-dir", results_dir, REPO / "solutions" / "reference" / "cpu" / "relu.py", timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "correct"
    best = min((b for k, b in measured["problems"][0]["baselines"].items() if k != "eager"),
               key=lambda b: 1 / b["speedup_vs_eager"])
    assert result["speedup_vs_compile"] == pytest.approx(result["speedup"] / best["speedup_vs_eager"])
    assert same(result["sol_fraction"], sol_share(measured["problems"][0]["sol_ms"], result["runtime_ms"])), result


def test_a_failing_torch_compile_is_recorded_and_eager_still_measured(tmp_path):
    # Inductor's C++ code generation needs a compiler: without one, torch.compile fails
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "compile", "--json",
                   "--timing-budget", "1", "--results-dir", tmp_path, env={"CXX": "/nonexistent/c++"}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (relu,) = output(proc.stdout)["problems"]
    assert relu["baselines"]["eager"]["median_ms"] > 0
    failed = relu["baselines"]["compile"]
    assert failed["median_ms"] is None and "torch.compile (mode=default) failed" in failed["error"]
    text = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "compile",
                   "--results-dir", tmp_path, env={"COLUMNS": "250"}, timeout=120).stdout
    assert "compile: torch.compile (mode=default) failed" in text  # stored: shown again, not retried


def test_an_eager_baseline_timed_beside_other_work_gives_way_to_a_clean_one(tmp_path):
    """It serves its run and the next one measures it again, keeping the clean one; trusted, it would stand for
    every later one (a cpu/relu eager of 12 ms, 0.9 ms idle, was shown in every report and blinded the
    slowed-reference check)."""
    import subprocess
    import sys

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(2, cores))]
    try:
        proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "eager", "--json",
                       "--timing-budget", "1", "--results-dir", tmp_path, timeout=600)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert proc.returncode == 0, proc.stderr
    eager = output(proc.stdout)["problems"][0]["baselines"]["eager"]
    assert eager["median_ms"] > 0 and eager["foreign_cpu"] > CONTENDED_SHARE and not eager["trusted"], eager
    logs = {log: log.stat().st_mtime_ns for log in tmp_path.rglob("baselines-*.log")}
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "eager", "--json",
                   "--timing-budget", "1", "--results-dir", tmp_path, timeout=600)
    again = output(proc.stdout)["problems"][0]["baselines"]["eager"]
    # Measured again, not served: a measuring child ran (its log is new). What stands is the clean one, or, where
    # the machine was busy this time too (the suite's other worker), the faster of the two.
    assert logs and {log: log.stat().st_mtime_ns for log in tmp_path.rglob("baselines-*.log")} != logs
    assert again["median_ms"] <= eager["median_ms"] or again["foreign_cpu"] <= CONTENDED_SHARE, (eager, again)


def test_the_bench_confirms_the_baseline_before_its_passes(tmp_path, monkeypatch):
    """A first eager measurement never stands alone (above): `harness bench` measures again, off the clock, until
    one agrees, where its first pass used to measure the baseline before starting a build (13-15 s of an H200
    pass's first wave, on a machine new to the problem)."""
    import harness.eval.bench as bench_module
    from harness.config import load_settings
    from harness.device import discover
    from harness.eval.baseline import trusted

    calls = []
    real = bench_module.measure_baselines
    monkeypatch.setattr(bench_module, "measure_baselines", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    bench = bench_module.Bench(discover("cpu"), load_settings(results_dir=tmp_path, timing={"budget_s": 1.0}))
    try:
        bench.prepare([])
    finally:
        bench.close()
    standing = [trusted("eager", measured[bench.problem.sha256]["eager"]) for measured in calls]
    assert not standing[0]  # this results directory's first measurement
    assert not any(standing[:-1])  # measured again only while none stood
    assert standing[-1] or len(calls) == bench_module.CONFIRMING_MEASUREMENTS  # a busy machine may never agree
    assert bench.baseline_stands == standing[-1]  # what `harness bench` says when it did not settle


def test_bad_kinds_exit_2(tmp_path):
    proc = run_cli("baseline", "--target", "cpu", "--kinds", "eager,turbo", "--results-dir", tmp_path)
    assert proc.returncode == 2 and "unknown baseline kind turbo" in proc.stderr
