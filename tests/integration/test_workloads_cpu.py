"""A problem with several workloads, evaluated by `harness eval` on the cpu target: every workload is checked (a
drawn one with new values each trial), a workload larger than the machine is skipped with a note instead of running
out of memory, the timed ones make the speedup by their weights, and every figure is stored."""
import math

import pytest

from tests.conftest import FIXTURES, SOLUTIONS, json_lines, run_cli

PROBLEM = FIXTURES / "problems" / "relu_workloads.py"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results,
                   "--timing-budget", "1", SOLUTIONS / "correct" / "cpu_relu.py")
    assert proc.returncode == 0, proc.stderr
    (row,) = json_lines(proc.stdout)
    return row, {w["workload"]: w for w in row["workloads"]}, results


def test_every_workload_is_checked_and_the_one_too_large_is_skipped_with_a_note(evaluated):
    row, workloads, _ = evaluated
    assert row["status"] == "correct", row["error"]
    assert list(workloads) == ["default", "huge", "wide", "unaligned", "drawn"]  # a skip right after the default
    assert [workloads[n]["status"] for n in ("default", "wide", "unaligned", "drawn")] == ["correct"] * 4
    assert workloads["default"]["trials"] == 5 and workloads["unaligned"]["trials"] == 2  # --trials' default is 5
    assert workloads["unaligned"]["values"] == {"ROWS": 99, "COLS": 1001}
    drawn = workloads["drawn"]["values"]
    assert 1 <= drawn["ROWS"] <= 300 and 100 <= drawn["COLS"] <= 700 and drawn["ROWS"] % 32 and drawn["COLS"] % 32
    huge = workloads["huge"]
    assert huge["status"] == "skipped" and huge["trials"] == 0 and "skipped: it needs about" in huge["note"]
    assert row["check"] == "truth" and row["max_abs_err"] == 0.0


def test_the_speedup_is_the_weighted_geometric_mean_of_the_timed_workloads(evaluated):
    row, workloads, _ = evaluated
    default, wide = workloads["default"], workloads["wide"]
    assert default["timed"] and wide["timed"] and not workloads["unaligned"]["timed"]
    assert default["speedup"] > 0 and wide["speedup"] > 0 and workloads["unaligned"]["speedup"] is None
    expected = math.exp((math.log(default["speedup"]) + 0.5 * math.log(wide["speedup"])) / 1.5)
    assert row["speedup"] == pytest.approx(expected)
    assert row["runtime_ms"] == pytest.approx(default["candidate_ms"])  # the problem as written, as baselines are


def test_the_same_evaluation_is_served_from_the_store_with_its_workloads(evaluated):
    row, _, results = evaluated
    proc = run_cli("eval", "--json", "--target", "cpu", "--problem", PROBLEM, "--results-dir", results,
                   "--timing-budget", "1", SOLUTIONS / "correct" / "cpu_relu.py")
    (again,) = json_lines(proc.stdout)
    if "contended" in row["flags"]:  # timed while other processes ran: evaluated again, never served
        assert not again["cached"]
    else:
        assert again["cached"] and again["workloads"] == row["workloads"]
