"""The main job: `harness run` with no model evaluates solutions/reference/ over the cpu problem set."""
import json

import pytest

from harness import problems
from tests.conftest import REPO, run_cli


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def board(results_dir):
    proc = run_cli("run", "--target", "cpu", "--json", "--results-dir", results_dir, "--run", "refs",
                   "--timing-budget", "2")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_cpu_reference_solution_is_correct(board):
    cpu_ids = {p.id for p in problems.index(REPO / "problems")[0] if p.id.startswith("cpu/")
               and (REPO / "solutions" / "reference" / f"{p.id}.py").is_file()}
    assert len(cpu_ids) >= 5
    rows = {row["problem"]: row for row in board["problems"]}
    assert set(rows) == cpu_ids  # the problems without a reference solution are skipped
    for problem_id, row in rows.items():
        assert row["statuses"] == {"correct": 1}, (problem_id, row)
        assert row["best_speedup"] and row["best_speedup"] > 0 and row["ref_runtime_ms"] > 0, (problem_id, row)
        # the CPU's measured peaks and the problem's bytes give every result its share of the speed of light
        assert row["sol_ms"] > 0 and row["eager_ms"] > 0 and 0 < row["sol_fraction"] < 2 * len(rows), row
    summary = board["summary"]
    assert summary["correct_rate"] == 1.0 and summary["compile_rate"] == 1.0 and summary["fast_p"]["0"] == 1.0
    assert summary["geomean_speedup"] > 0 and summary["median_sol"] > 0
    assert summary["funnel"]["correct"] == len(rows)


def test_report_and_runs_read_the_same_store(board, results_dir):
    proc = run_cli("report", "--json", "--run", "refs", "--results-dir", results_dir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == board
    (summary,) = json.loads(run_cli("report", "--json", "--results-dir", results_dir).stdout)["runs"]
    assert summary == board["summary"]
    proc = run_cli("runs", "--json", "--results-dir", results_dir)
    (run,) = json.loads(proc.stdout)
    assert run["name"] == "refs" and run["kind"] == "run" and run["target"] == "cpu"
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
    proc = run_cli("run", "--target", "cpu", "--json", "--results-dir", results_dir, "--run", "again", timeout=300)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert [r["best_speedup"] for r in again["problems"]] == [r["best_speedup"] for r in board["problems"]]
    assert "(stored)" in proc.stderr
