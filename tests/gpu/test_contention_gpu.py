"""Another process computing on the GPU while a candidate is timed (issue 18): with a second process running
fp32 GEMMs, reverse_cumsum measured 4.43x (idle: 3.82-3.86x) and softmax 1.27x (idle: 1.54x), unflagged.
Such results must end flagged `contended` (not counted) or delayed until the GPU is free, never clean.
Needs a GPU: `pytest -m gpu tests/gpu/test_contention_gpu.py -s` (prints speedups and the check's cost)."""
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from harness.device import visible_gpus
from tests.conftest import REPO, json_lines, run_cli

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

PROBLEMS = ("level1/reverse_cumsum", "level1/softmax")

# fp32 GEMMs (TF32 off) back to back, 8192^3: ~25 ms each on an H100, the GPU busy all the time, until killed.
HOG = """
import sys, time, torch
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")
c = a @ b
torch.cuda.synchronize()
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(4):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
"""


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("contention-gpu")


def start_hog(seconds: float = 900) -> subprocess.Popen:
    """The second process, on the GPU the harness evaluates on (its first visible one)."""
    gpu = visible_gpus()[0]
    env = {**os.environ, "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": str(gpu.index)}
    hog = subprocess.Popen([sys.executable, "-c", HOG, str(seconds)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert hog.stdout.readline().strip() == "ready", "the GEMM process did not start"
        time.sleep(2)
    except BaseException:
        stop(hog)
        raise
    return hog


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def evaluate(problem: str, results_dir, *extra: str) -> dict:
    proc = run_cli("eval", "--force", "--json", "--target", "cuda", "--results-dir", results_dir, *extra,
                   "--problem", problem, REPO / "solutions" / "reference" / f"{problem}.py", timeout=1200)
    assert proc.returncode == 0, proc.stderr
    (result,) = json_lines(proc.stdout)
    result["stages"] = stages_of_latest(results_dir)
    print(problem, json.dumps({k: result[k] for k in ("status", "speedup", "runtime_ms", "ref_runtime_ms", "flags",
                                                      "stages")}), proc.stderr[-2000:] if result["flags"] else "")
    return result


def stages_of_latest(results_dir) -> dict:
    with sqlite3.connect(results_dir / "harness.db") as db:
        (text,) = db.execute("SELECT result_json FROM evaluations ORDER BY id DESC LIMIT 1").fetchone()
    return json.loads(text)["stages"]


def test_an_idle_gpu_gives_clean_results(results_dir):
    """First, so the builds, baselines and peaks in results_dir are measured on an idle GPU."""
    for problem in PROBLEMS:
        result = evaluate(problem, results_dir)
        assert result["status"] == "correct", result
        assert "contended" not in result["flags"], result
        assert "contention_check" in result["stages"], result  # the check ran (NVML or nvidia-smi answered)
        assert "contention_wait" not in result["stages"], result


def test_gemms_beside_the_evaluation_flag_it_contended(results_dir):
    hog = start_hog()
    try:
        for problem in PROBLEMS:
            result = evaluate(problem, results_dir, "--contention-wait", "5")
            assert hog.poll() is None, "the GEMM process ended before the evaluation"
            assert result["status"] == "correct", result
            assert "contended" in result["flags"] and not result["counted"], result
            assert result["stages"]["contention_wait"] >= 4, result  # it waited for the GPU, then gave up
    finally:
        stop(hog)


def test_gemms_that_end_while_the_evaluation_waits_delay_it_and_it_is_clean(results_dir):
    problem = PROBLEMS[0]
    hog = start_hog()
    harness = None
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        harness = subprocess.Popen(
            [sys.executable, "-m", "harness", "eval", "--force", "--json", "--target", "cuda", "--results-dir",
             str(results_dir), "--contention-wait", "300", "--problem", problem,
             str(REPO / "solutions" / "reference" / f"{problem}.py")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        seen = []
        for line in harness.stderr:  # the build, then the check finds the GEMMs and waits
            seen.append(line)
            if "waiting up to" in line:
                break
        else:
            pytest.fail("the evaluation never waited for the GPU:\n" + "".join(seen[-30:]))
        time.sleep(3)
        stop(hog)
        stdout, stderr = harness.communicate(timeout=900)
        assert harness.returncode == 0, stderr
        (result,) = json_lines(stdout)
        stages = stages_of_latest(results_dir)
        print(problem, result["speedup"], result["flags"], stages)
        assert result["status"] == "correct", result
        assert "contended" not in result["flags"], (result, stderr)
        assert stages["contention_wait"] >= 3, stages
    finally:
        stop(hog)
        if harness and harness.poll() is None:
            stop(harness)
