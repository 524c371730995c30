"""`harness baseline` on the CPU target: eager and torch.compile timed in a clean child, the CPU's peaks,
everything cached; a torch.compile that fails is recorded, not fatal."""
import json

import pytest

from harness.eval.cpu_ceiling import CONTENDED_SHARE
from tests.conftest import REPO, run_cli

KINDS = ("eager", "compile", "compile-max-autotune")


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("baseline")


@pytest.fixture(scope="module")
def measured(results_dir):
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--json", "--timing-budget", "1",
                   "--results-dir", results_dir, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_eager_and_both_compile_modes_are_timed_with_their_share_of_the_speed_of_light(measured):
    peaks = measured["peaks"]
    assert peaks["bandwidth_gbs"] > 0.5 and set(peaks["tflops"]) == {"fp32", "bf16", "fp16"}
    (relu,) = measured["problems"]
    assert relu["problem"] == "cpu/relu" and relu["error"] is None
    assert relu["bytes_moved"] == 2 * 4 * 4096 * 1024  # input and output, fp32 (cpu/relu is 4096 x 1024)
    assert relu["sol_ms"] == pytest.approx(relu["bytes_moved"] / (peaks["bandwidth_gbs"] * 1e6))
    assert set(relu["baselines"]) == set(KINDS)
    for kind, b in relu["baselines"].items():
        assert b["error"] is None and b["median_ms"] > 0, (kind, b)
        assert b["sol_fraction"] == pytest.approx(relu["sol_ms"] / b["median_ms"])
        assert (b["speedup_vs_eager"] is None) == (kind == "eager")


def test_a_second_call_is_served_from_the_store(measured, results_dir):
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--json", "--results-dir", results_dir,
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    kept = [b["trusted"] for p in measured["problems"] for b in p["baselines"].values()]
    if (measured["peaks"]["foreign_cpu"] or 0) <= CONTENDED_SHARE and all(kept):
        assert again == measured
        return
    # an eager baseline timed while other processes used the cores is measured again, the others are served
    first, second = measured["problems"][0]["baselines"], again["problems"][0]["baselines"]
    served = {k for k in second if second[k]["median_ms"] == first[k]["median_ms"]}
    assert {k for k, b in first.items() if b["trusted"]} <= served
    if not all(kept):
        return
    # peaks measured while other processes used the cores are measured again, keeping the fastest copy
    assert again["peaks"]["best_bandwidth_gbs"] >= measured["peaks"]["best_bandwidth_gbs"]
    assert [{k: b["median_ms"] for k, b in p["baselines"].items()} for p in again["problems"]] == \
        [{k: b["median_ms"] for k, b in p["baselines"].items()} for p in measured["problems"]]


def test_results_show_their_speedup_over_compile_once_baselines_exist(measured, results_dir):
    proc = run_cli("eval", "--target", "cpu", "--problem", "cpu/relu", "--json", "--timing-budget", "1",
                   "--results-dir", results_dir, REPO / "solutions" / "reference" / "cpu" / "relu.py", timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "correct"
    best = min((b for k, b in measured["problems"][0]["baselines"].items() if k != "eager"),
               key=lambda b: 1 / b["speedup_vs_eager"])
    assert result["speedup_vs_compile"] == pytest.approx(result["speedup"] / best["speedup_vs_eager"])
    assert result["sol_fraction"] > 0


def test_a_failing_torch_compile_is_recorded_and_eager_still_measured(tmp_path):
    # Inductor's C++ code generation needs a compiler: without one, torch.compile fails
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "compile", "--json",
                   "--timing-budget", "1", "--results-dir", tmp_path, env={"CXX": "/nonexistent/c++"}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (relu,) = json.loads(proc.stdout)["problems"]
    assert relu["baselines"]["eager"]["median_ms"] > 0
    failed = relu["baselines"]["compile"]
    assert failed["median_ms"] is None and "torch.compile (mode=default) failed" in failed["error"]
    text = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "compile",
                   "--results-dir", tmp_path, env={"COLUMNS": "250"}, timeout=120).stdout
    assert "compile: torch.compile (mode=default) failed" in text  # stored: shown again, not retried


def test_an_eager_baseline_timed_beside_other_work_is_not_stored(tmp_path):
    """It serves its run and the next one measures it again; trusted, it would stand for every later one (a
    cpu/relu eager of 12 ms, 0.9 ms idle, was shown in every report and blinded the slowed-reference check)."""
    import os
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
    eager = json.loads(proc.stdout)["problems"][0]["baselines"]["eager"]
    assert eager["median_ms"] > 0 and eager["foreign_cpu"] > CONTENDED_SHARE and not eager["trusted"], eager
    proc = run_cli("baseline", "--target", "cpu", "--problem", "cpu/relu", "--kinds", "eager", "--json",
                   "--timing-budget", "1", "--results-dir", tmp_path, timeout=600)
    again = json.loads(proc.stdout)["problems"][0]["baselines"]["eager"]
    assert again["median_ms"] != eager["median_ms"] and again["n"] is not None  # measured again, not served


def test_bad_kinds_exit_2(tmp_path):
    proc = run_cli("baseline", "--target", "cpu", "--kinds", "eager,turbo", "--results-dir", tmp_path)
    assert proc.returncode == 2 and "unknown baseline kind turbo" in proc.stderr
