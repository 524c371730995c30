"""The main job: `harness run` with no model evaluates solutions/reference/ over the cpu problem set."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness.problems import index as problems
from tests.conftest import REPO, json_lines, run_cli, share_builds


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return share_builds(tmp_path_factory.mktemp("results"), tmp_path_factory)


# CI's share of the reference solutions: one of each kind of kernel (elementwise, row reduction, scan, GEMM with an
# epilogue, convolution, attention, norm), four of them also timed under load (test_run_cpu_loaded), so built once.
# All 25 take ~25 minutes of the 2-core CI machine: `pytest -m slow` runs them (test_every_cpu_reference_solution_...).
PROBLEMS = ("cpu/relu", "cpu/softmax", "cpu/masked_cumsum", "cpu/conv2d_small", "cpu/linear_bias_relu", "cpu/rms_norm",
            "cpu/attention_small")


def reference_run(results_dir, problems: tuple[str, ...] = ()) -> dict:
    selected = ("--problems", ",".join(problems)) if problems else ()
    proc = run_cli("run", "--target", "cpu", "--json", "--results-dir", results_dir, "--run", "refs",
                   "--timing-budget", "1", *selected)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def board(results_dir):
    return reference_run(results_dir, PROBLEMS)


def check_reference_board(board: dict, problem_ids: set[str]) -> dict[str, dict]:
    """Every reference solution correct and timed, each result clean, informative (noisy_timing) or contended
    (other processes used the cores while it was timed: not counted), never flagged as impossible (a loaded
    machine must not make an honest kernel look faster than light). Returns the flagged results by problem."""
    rows = {row["problem"]: row for row in board["problems"]}
    assert set(rows) == problem_ids  # the problems without a reference solution are skipped
    flagged = {f["problem"]: f for f in board["flagged"]}
    for problem_id, row in rows.items():
        assert row["statuses"] == {"correct": 1}, (problem_id, row)
        assert row["eager_ms"] > 0, row
        if problem_id in flagged:
            result = flagged[problem_id]
            assert "contended" in result["flags"] and set(result["flags"]) <= {"contended", "noisy_timing"}, result
            assert result["speedup"] > 0 and result["runtime_ms"] > 0, result
            continue
        assert set(row["flags"]) <= {"noisy_timing"}, row
        assert row["best_speedup"] and row["best_speedup"] > 0 and row["ref_runtime_ms"] > 0, (problem_id, row)
        # its share of the speed of light, against the ceiling faster_than_light uses: at most 1, and none where
        # that is unknown (a memory-bound problem while every copy was measured on loaded cores)
        assert row["sol_ms"] is None or row["sol_ms"] > 0, row
        assert (row["sol_fraction"] is None) == (row["sol_ms"] is None), row
        assert row["sol_fraction"] is None or 0 < row["sol_fraction"] <= 1, row
    summary = board["summary"]
    counted = len(rows) - len(flagged)
    assert summary["correct_rate"] == 1.0 and summary["compile_rate"] == 1.0
    assert summary["fast_p"]["0"] == counted / len(rows) and summary["funnel"]["correct"] == len(rows)
    if counted:
        assert summary["geomean_speedup"] > 0 and summary["median_sol"] > 0
    return flagged


def test_the_reference_solutions_are_correct(board):
    check_reference_board(board, set(PROBLEMS))


@pytest.mark.slow
def test_every_cpu_reference_solution_is_correct(tmp_path, tmp_path_factory):
    cpu_ids = {p.id for p in problems.index(REPO / "problems")[0] if p.id.startswith("cpu/")
               and (REPO / "solutions" / "reference" / f"{p.id}.py").is_file()}
    assert len(cpu_ids) >= 5 and set(PROBLEMS) <= cpu_ids
    check_reference_board(reference_run(share_builds(tmp_path, tmp_path_factory)), cpu_ids)


def test_report_and_runs_read_the_same_store(board, results_dir):
    proc = run_cli("report", "--json", "--run", "refs", "--results-dir", results_dir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == board
    (summary,) = json_lines(run_cli("report", "--json", "--results-dir", results_dir).stdout)  # a line a run
    assert summary == board["summary"]
    proc = run_cli("runs", "--json", "--results-dir", results_dir)
    (run,) = json_lines(proc.stdout)
    assert run["run"] == "refs" and run["kind"] == "run" and run["target"] == "cpu" and not run["hidden"]
    assert run["evaluations"] == len(board["problems"])
    # piped (no terminal, no $COLUMNS), the tables get room for every column instead of rich's 80
    text = run_cli("report", "--run", "refs", "--results-dir", results_dir, env={"COLUMNS": ""}).stdout
    assert "cpu/relu" in text and "fast_1=" in text and "geomean speedup" in text and "best speedup" in text
    text = run_cli("report", "--results-dir", results_dir, env={"COLUMNS": ""}).stdout
    assert "refs" in text and "fast_1.5" in text and "% SOL" in text and "offline:solutions/reference" in text
    assert "…" not in text, text


def test_unknown_run_suggests_names(board, results_dir):
    proc = run_cli("report", "--run", "ref", "--results-dir", results_dir)
    assert proc.returncode == 2 and "did you mean refs" in proc.stderr


def test_a_second_run_is_served_from_the_store(board, results_dir):
    # a result timed while other processes used the cores (contended) is evaluated again; the others are stored
    three = ["cpu/relu", "cpu/softmax", "cpu/masked_cumsum"]
    retried = {f["problem"] for f in board["flagged"] if "contended" in f["flags"]}
    proc = run_cli("run", "--target", "cpu", "--json", "--results-dir", results_dir, "--run", "again",
                   *(arg for p in three for arg in ("--problem", p)), timeout=300 + 60 * len(retried))
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert [r["problem"] for r in again["problems"]] == three
    served = [(r["problem"], r["best_speedup"]) for r in board["problems"] if r["problem"] in three
              and r["problem"] not in retried]
    assert [(r["problem"], r["best_speedup"]) for r in again["problems"] if r["problem"] not in retried] == served
    assert "(cached)" in proc.stderr or not served


def test_ctrl_c_stops_the_run_at_once(tmp_path):
    """Ctrl-C during the builds stops `harness run` as it stops `harness eval`: exit 130, no build finished or
    evaluation started after it, no child left (a terminal sends SIGINT to the whole foreground process group)."""
    log = tmp_path / "stderr.txt"
    two = [arg for p in ("cpu/relu", "cpu/softmax") for arg in ("--problem", p)]
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--target", "cpu", "--results-dir",
                                 str(tmp_path / "r"), "--run", "stopped", *two, "--build-workers", "2"],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)},
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        builds = tmp_path / "r" / "cache" / "builds"
        while not (builds.is_dir() and any(builds.iterdir())) and proc.poll() is None:  # the builds have begun
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    # without the stop, both are built and evaluated (the asyncio default only cancelled at the next await)
    assert proc.returncode == 130 and "interrupted" in text, text
    assert "build ok" not in text and "correct" not in text, text
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert not left, f"still running after the run ended: {left}"
