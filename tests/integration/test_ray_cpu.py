"""`--executor ray` on a real local Ray cluster with logical GPUs (how Ray is tested without GPUs), cpu target.

Skipped when Ray is not installed, except in CI (CI set), where the test extra installs it.
"""
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import load_settings
from harness.device import discover
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.job import BatchContext
from harness.eval.ray import build_task, eval_task
from harness.problems.index import resolve
from tests.conftest import FIXTURES, LEAN_RELU, SOLUTIONS, json_lines, run_cli, share_builds

PROBLEM = FIXTURES / "problems" / "relu.py"
CORRECT = SOLUTIONS / "correct" / "cpu_relu.py"
WRONG = SOLUTIONS / "wrong" / "cpu_relu_leaky.py"

try:
    import ray  # noqa: F401
    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False
    if os.environ.get("CI"):
        raise
pytestmark = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install 'kernel-harness[ray]')")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head node with 2 CPUs and 2 logical GPUs, as a multi-node setup's head would be started."""
    ray_cli = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    port = free_port()
    temp = tmp_path_factory.mktemp("ray")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--num-gpus=2",
                    "--include-dashboard=false", f"--temp-dir={temp}", "--disable-usage-stats"],
                   check=True, capture_output=True, env=env, timeout=180)
    yield f"127.0.0.1:{port}"
    subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)


def test_eval_through_ray_tasks(cluster, tmp_path, tmp_path_factory):
    share_builds(tmp_path, tmp_path_factory)
    proc = run_cli("eval", "--executor", "ray", "--ray-address", cluster, "--json", "--target", "cpu",
                   "--problem", PROBLEM, "--results-dir", tmp_path, "--timing-budget", "0.5", "--trials", "2",
                   CORRECT, WRONG, CORRECT)
    assert proc.returncode == 0, proc.stderr
    rows = json_lines(proc.stdout)
    assert [r["status"] for r in rows] == ["correct", "incorrect", "correct"], rows
    assert rows[0]["speedup"] > 0 and rows[1]["max_abs_err"] > 0
    # the results came back to this process, which stored them: the same command again is served from SQLite
    again = run_cli("eval", "--executor", "ray", "--ray-address", cluster, "--json", "--target", "cpu",
                    "--problem", PROBLEM, "--results-dir", tmp_path, CORRECT)
    assert again.returncode == 0, again.stderr
    (row,) = json_lines(again.stdout)
    # a result timed while other processes used the cores (contended) is evaluated again, not served
    clean = [r["speedup"] for r in (rows[0], rows[2]) if "contended" not in r["flags"]]
    assert row["cached"] == bool(clean) and (row["speedup"] in clean or not clean), (rows, row)


def test_an_evaluation_on_another_node_unpacks_the_build_and_the_problem(tmp_path):
    """What a task on a node without the build directory or the problem file does (run here without Ray)."""
    settings = load_settings(results_dir=tmp_path / "head", timing={"budget_s": 0.5}, trials=2)
    device = discover("cpu")
    problem = resolve(str(PROBLEM))
    job = Job(problem, candidate_from_source(LEAN_RELU))
    built, archive = build_task(job.candidate, device, settings)
    assert built.status == "ok" and archive
    shutil.rmtree(built.directory)  # gone, as on another node
    moved = Job(problem.model_copy(update={"path": str(tmp_path / "elsewhere" / "relu.py")}), job.candidate)
    result = eval_task(moved, built, archive, BatchContext(device, settings, 7))
    assert result.status == "correct", result.error  # the problem's text travels with the job, not its file


def test_bad_ray_address_is_a_clear_error(tmp_path):
    proc = run_cli("eval", "--executor", "ray", "--ray-address", f"127.0.0.1:{free_port()}", "--target", "cpu",
                   "--problem", PROBLEM, "--results-dir", tmp_path, CORRECT, timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Ray cluster" in proc.stderr and "Traceback" not in proc.stderr
