"""`--sanitize` with NVIDIA's compute-sanitizer on a GPU: an answer that writes past its workspace and still matches
every output passes without it and is a runtime_error with it, quoting the tool; an honest answer keeps its verdict
with zero errors; the agents' `sanitize` tool answers the same. What the tool costs per call is in the records'
`sanitizer.seconds`. Needs a GPU and compute-sanitizer: `pytest -m gpu`."""
import pytest

from harness.agent.budget import Budget
from harness.agent.toolbox import Serving, Toolbox
from harness.config import load_settings
from harness.device import visible_gpus
from harness.eval.sanitize import executable
from tests.conftest import SOLUTIONS, json_lines, run_cli

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU"),
              pytest.mark.skipif(executable() is None, reason="needs compute-sanitizer")]

PROBLEMS = SOLUTIONS / "problems"
PAST_END = SOLUTIONS / "sanitize" / "cuda_relu_writes_past_end.py"
HONEST = SOLUTIONS / "correct" / "cuda_relu.py"
FLAGS = ["--problem", str(PROBLEMS / "relu.py"), "--json", "--timing-budget", "1", "--trials", "2"]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    plain = run_cli("eval", *FLAGS, "--results-dir", results, PAST_END, timeout=1200)
    sanitized = run_cli("eval", *FLAGS, "--sanitize", "--results-dir", results, PAST_END, HONEST, timeout=1800)
    assert plain.returncode in (0, 1), plain.stderr[-3000:]
    assert sanitized.returncode in (0, 1), sanitized.stderr[-3000:]
    rows = {r["candidate"].rsplit("/", 1)[-1]: r for r in json_lines(sanitized.stdout)}
    return json_lines(plain.stdout)[0], rows, results


def test_the_write_past_the_end_passes_every_check_without_the_sanitizer(records):
    plain, _, _ = records
    assert plain["status"] == "correct" and plain["sanitizer"] is None, plain["error"]


def test_memcheck_makes_it_a_runtime_error_quoting_the_write(records):
    _, rows, _ = records
    row = rows[PAST_END.name]
    assert row["status"] == "runtime_error", row["error"]
    assert "compute-sanitizer memcheck found" in row["error"] and "its outputs matched" in row["error"]
    assert "Invalid __global__ write of size 4 bytes" in row["error"], row["error"]
    assert row["sanitizer"]["errors"] >= 1 and row["sanitizer"]["seconds"] > 0


def test_an_honest_answer_keeps_its_verdict_with_zero_errors(records):
    _, rows, _ = records
    row = rows[HONEST.name]
    assert row["status"] == "correct", row["error"]
    assert (row["sanitizer"]["tool"], row["sanitizer"]["errors"], row["sanitizer"]["exit_status"]) == ("memcheck", 0, 0)


def test_the_agents_tool_answers_as_eval_does(records):
    _, rows, results = records
    toolbox = Toolbox(Serving(target="cuda", problems_dir=PROBLEMS),
                      load_settings(results_dir=results, trials=2, timing={"budget_s": 1.0}), Budget())
    answer = toolbox.sanitize("relu", PAST_END.read_text())
    assert answer["verdict"]["status"] == "runtime_error"
    assert answer["verdict"]["sanitizer"]["errors"] == rows[PAST_END.name]["sanitizer"]["errors"]
    raced = toolbox.sanitize("relu", HONEST.read_text(), tool="racecheck")
    assert raced["verdict"]["status"] == "correct", raced["verdict"]["error"]
    assert raced["verdict"]["sanitizer"]["tool"] == "racecheck"
