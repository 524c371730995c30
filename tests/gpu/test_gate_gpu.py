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


def test_training_problems_are_gated_forward_and_backward_on_the_gpu(cli, tmp_path):
    """A shipped training problem passes, its eager time that of forward plus backward; one whose parameter never
    reaches the output fails by that parameter's gradient."""
    proc = cli("problems", "validate", "level1/layer_norm_training", FIXTURES / "gate" / "cpu" /
               "unused_parameter_training.py", "--target", "cuda", "--results-dir", tmp_path, "--json")
    by_name = {r["problem"].rsplit("/", 1)[-1].removesuffix(".py"): r for r in json_lines(proc.stdout)}
    assert proc.returncode == 1 and len(by_name) == 2, by_name
    shipped = by_name["layer_norm_training"]
    assert shipped["passed"] and shipped["mode"] == "full" and shipped["eager_ms"] >= 1.0, shipped
    unused = by_name["unused_parameter_training"]
    assert not unused["passed"] and any("the gradient of shift: mostly zeros" in r for r in unused["reasons"]), unused
