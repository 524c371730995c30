"""Baselines and peaks on a GPU: the eager reference and both torch.compile modes of a memory-bound
problem, the GPU's measured bandwidth and GEMM FLOP/s, and the report over an evaluation of it.
Needs a GPU: `pytest -m gpu`."""
import json

import pytest

from harness.device import visible_gpus
from harness.facts import datasheet
from tests.conftest import SOLUTIONS, json_lines, run_cli

# measured_here: measuring is what this module tests, so no machine store serves it what another directory measured
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU"),
              pytest.mark.usefixtures("measured_here")]

RELU = SOLUTIONS / "problems" / "relu.py"


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("baseline-gpu")


@pytest.fixture(scope="module")
def measured(results_dir):
    proc = run_cli("baseline", "--target", "cuda", "--problem", RELU, "--json", "--timing-budget", "2",
                   "--results-dir", results_dir, timeout=1500)
    assert proc.returncode == 0, proc.stderr
    (relu,) = json_lines(proc.stdout)  # a line a problem, each with the device and its peaks
    return relu


def test_the_gpu_peaks_are_near_its_datasheet(measured):
    peaks = measured["peaks"]
    bandwidth, tflops = datasheet(measured["device"])
    print(json.dumps(peaks, indent=1))
    if bandwidth:  # a copy reaches well over half the bus and never beats it
        assert 0.5 * bandwidth < peaks["bandwidth_gbs"] < 1.05 * bandwidth
        assert 0.3 * tflops["bf16"] < peaks["tflops"]["bf16"] < 1.05 * tflops["bf16"]
        assert 0.3 * tflops["fp32"] < peaks["tflops"]["fp32"] < 1.05 * tflops["fp32"]
    assert peaks["tflops"]["bf16"] > 4 * peaks["tflops"]["fp32"]  # tensor cores, and fp32 really is fp32


def test_relu_baselines_run_near_the_speed_of_light(measured):
    relu = measured
    print(json.dumps(relu, indent=1))
    assert relu["bytes_moved"] == 2 * 4 * 8192 * 8192
    for kind in ("eager", "compile", "compile-max-autotune"):
        b = relu["baselines"][kind]
        assert b["error"] is None, (kind, b)
        assert b["sol_fraction"] < 1.2, (kind, b)  # never faster than the measured copy
    # relu is a copy with a max: eager runs near the measured bandwidth. A compiled module also pays its
    # guards and wrapper on the host, ~0.15 ms a call (0.37 ms against eager's 0.22 ms on an H100 with
    # torch 2.11), a large share of this 0.18 ms problem, though not of the library's >= 1 ms ones.
    assert relu["baselines"]["eager"]["sol_fraction"] > 0.5, relu
    assert min(relu["baselines"][k]["sol_fraction"] for k in ("compile", "compile-max-autotune")) > 0.25, relu


def test_the_report_of_a_reference_evaluation_shows_compile_and_sol(measured, results_dir, tmp_path):
    proc = run_cli("eval", "--problem", RELU, "--json", "--run", "relu", "--results-dir", results_dir,
                   SOLUTIONS / "correct" / "cuda_relu.py", timeout=900)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "correct" and result["counted"], result
    assert result["speedup_vs_compile"] > 0 and 0.3 < result["sol_fraction"] < 1.2, result
    html = tmp_path / "report.html"
    proc = run_cli("report", "--run", "relu", "--html", html, "--json", "--results-dir", results_dir)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["problems"]
    assert row["compile_ms"] > 0 and row["sol_fraction"] == pytest.approx(result["sol_fraction"])
    assert 'data-plot="fastp"' in html.read_text()
