"""What the cpu prompt teaches must itself be right: its worked example builds and is correct."""
from tests.conftest import REPO, json_lines, run_cli


def test_worked_cpu_example_is_correct(tmp_path):
    proc = run_cli("eval", "--target", "cpu", "--json", "--results-dir", tmp_path, "--timing-budget", "1",
                   "--problem", REPO / "prompts" / "cpu" / "example_problem.py",
                   REPO / "prompts" / "cpu" / "example_solution.py")
    assert proc.returncode == 0, proc.stderr
    (result,) = json_lines(proc.stdout)
    assert result["status"] == "correct", result["error"]
