"""What the cpu prompt teaches must itself be right: its worked examples (forward, and a training problem's forward
and backward) build and are correct."""
import pytest

from tests.conftest import REPO, json_lines, run_cli


@pytest.mark.parametrize("example", ["example", "training"])
def test_worked_cpu_example_is_correct(tmp_path, example):
    proc = run_cli("eval", "--target", "cpu", "--json", "--results-dir", tmp_path, "--timing-budget", "1",
                   "--problem", REPO / "prompts" / "cpu" / f"{example}_problem.py",
                   REPO / "prompts" / "cpu" / f"{example}_solution.py")
    assert proc.returncode == 0, proc.stderr
    (result,) = json_lines(proc.stdout)
    assert result["status"] == "correct", result["error"]
    assert "low_backward_coverage" not in result["flags"]
