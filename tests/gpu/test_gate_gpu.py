"""The full quality gate on a GPU: the seed problems pass, with their time and memory measured; a
degenerate problem is caught on the device too. Needs a GPU: `pytest -m gpu`."""
import pytest

from harness.device import visible_gpus
from tests.conftest import FIXTURES, json_lines

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]


def test_seed_problems_pass_the_full_gate_on_the_gpu(cli, tmp_path):
    proc = cli("problems", "validate", "level1/reverse_cumsum", "level1/masked_cumsum", "level1/sum_dim1",
               "--results-dir", tmp_path, "--json")
    results = json_lines(proc.stdout)  # a verdict a problem
    assert proc.returncode == 0 and len(results) == 3, results
    for r in results:
        assert r["mode"] == "full" and r["target"] == "cuda" and r["passed"], r
        assert r["eager_ms"] >= 1.0 and 0 < r["peak_memory_gb"] <= 40
    by_id = {r["problem"]: r for r in results}
    assert by_id["level1/reverse_cumsum"]["bytes_moved"] == 2 * 32768 * 32768 * 4


def test_a_degenerate_problem_fails_on_the_gpu(cli, tmp_path):
    proc = cli("problems", "validate", FIXTURES / "gate" / "cpu" / "mostly_zeros.py", "--target", "cuda",
               "--results-dir", tmp_path, "--json")
    (result,) = json_lines(proc.stdout)
    assert proc.returncode == 1 and result["target"] == "cuda"
    assert any("mostly zeros" in r for r in result["reasons"])
