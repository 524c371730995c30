"""Training problems on the cuda target (issue 59): the GPU twin of tests/integration/test_training_cpu.py. A trained
LayerNorm (problems/level1/layer_norm_training.py, ln.weight and ln.bias of 8192), its forward and backward judged
output by output and gradient by gradient against the float64 truth, through the same evaluation the CLI runs. The
fixtures (tests/fixtures/training/triton/) start from the Triton reference's kernels: an honest forward and backward,
and the ways a training kernel is gamed or wrong. Real children. Needs a GPU: `pytest -m gpu`."""
from pathlib import Path

import pytest

from harness.device import visible_gpus
from harness.flags import EXCLUDING, LOW_BACKWARD_COVERAGE
from tests.corpus import evaluate_files

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "training" / "triton"
PROBLEM = "level1/layer_norm_training"
# fixture -> (status, flag that must be raised or words the error must hold)
EXPECTED = {
    "honest": ("correct", None),
    "straight_through": ("correct", LOW_BACKWARD_COVERAGE),    # the kernel's value, autograd's eager gradient
    "grad_on_reference": ("correct", LOW_BACKWARD_COVERAGE),   # a backward that differentiates the reference
    "zero_param_grads": ("incorrect", "the gradient of ln.weight is 0 everywhere"),
    "cached_grads": ("incorrect", "the gradient of x mismatch"),
    # right for the public rows (8192 as written, one row of 4099), wrong for the held-out row counts and lengths
    "public_only": ("incorrect", "held-out workload"),
    "detached": ("incorrect", "does not require grad"),
    "renamed_params": ("incorrect", "Model has ln.weight (8192,), ln.bias (8192,); ModelNew has weight"),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    paths = [FIXTURES / f"{name}.py" for name in EXPECTED]
    found = evaluate_files({PROBLEM: paths}, "cuda", tmp_path_factory.mktemp("training"), static_rules=False)
    return {path.stem: result for path, result in found.items()}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_a_trained_triton_layernorm_is_judged_by_its_outputs_gradients_and_backward_coverage(results, name):
    status, said = EXPECTED[name]
    result = results[name]
    assert result.status == status, result.error
    if status == "correct":
        for side in (result.runtime, result.ref_runtime):  # each timed call's forward and backward, apart
            assert side is not None and side.forward_median_ms is not None and side.backward_median_ms is not None
            assert 0 < side.forward_median_ms and 0 < side.backward_median_ms
            assert side.forward_median_ms + side.backward_median_ms == pytest.approx(side.median_ms, rel=0.5)
        coverage = result.coverage
        assert coverage is not None and coverage.backward is not None, "the backward's coverage is measured apart"
        if said is None:
            assert not {f for f in result.flags if f in EXCLUDING} - {"contended"}, result.flags
            assert coverage.backward.share is not None and coverage.backward.share >= 0.5
        else:
            assert said in result.flags
            assert coverage.backward.share is not None and coverage.backward.share < 0.5
    else:
        assert said in (result.error or "")
