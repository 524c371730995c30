"""The training corpus (issue 59): a trained LayerNorm, its forward and backward judged output by output and gradient
by gradient against the float64 truth, through the same evaluation the CLI runs. One honest candidate and the ways a
training kernel is gamed or wrong, as C++ on the cpu target (tests/fixtures/training/, cpu/layernorm_training) and
as Triton kernels on cuda (the Triton reference with each case's edits: tests/training_triton.py,
level1/layer_norm_training). A test module takes one target's fixture and test into its globals
(`training_tests`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.flags import EXCLUDING, LOW_BACKWARD_COVERAGE
from tests import training_triton
from tests.corpus import evaluate_files

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "training"
# target -> (problem, ln.weight's and ln.bias's size in the problem as written)
CASES = {"cpu": ("cpu/layernorm_training", 1024), "cuda": ("level1/layer_norm_training", 8192)}


def candidates(target: str, names: list[str], scratch: Path) -> list[Path]:
    """The cases' files: the cpu fixtures as they are, the Triton ones written from the reference into `scratch`."""
    if target == "cpu":
        return [FIXTURES / f"{name}.py" for name in names]
    return training_triton.write(scratch, names)


def expected(hidden: int) -> dict[str, tuple[str, str | None]]:
    """fixture -> (status, flag that must be raised or words the error must hold)."""
    return {
        "honest": ("correct", None),
        "straight_through": ("correct", LOW_BACKWARD_COVERAGE),    # the kernel's value, autograd's eager gradient
        "grad_on_reference": ("correct", LOW_BACKWARD_COVERAGE),   # a backward that differentiates the reference
        "zero_param_grads": ("incorrect", "the gradient of ln.weight is 0 everywhere"),
        "cached_grads": ("incorrect", "the gradient of x mismatch"),
        "public_only": ("incorrect", "held-out workload"),  # right for the public row lengths only
        "detached": ("incorrect", "does not require grad"),
        "renamed_params": ("incorrect", f"Model has ln.weight ({hidden},), ln.bias ({hidden},); ModelNew has weight"),
    }


def training_tests(target: str) -> dict:
    problem, hidden = CASES[target]
    table = expected(hidden)

    @pytest.fixture(scope="module")
    def results(tmp_path_factory):
        paths = candidates(target, list(table), tmp_path_factory.mktemp("candidates"))
        found = evaluate_files({problem: paths}, target, tmp_path_factory.mktemp("training"), static_rules=False)
        return {path.stem: result for path, result in found.items()}

    @pytest.mark.parametrize("name", list(table))
    def test_a_trained_layernorm_is_judged_by_its_outputs_gradients_and_backward_coverage(results, name):
        status, said = table[name]
        result = results[name]
        assert result.status == status, result.error
        if status != "correct":
            assert said in (result.error or "")
            return
        for side in (result.runtime, result.ref_runtime):  # each timed call's forward and backward, apart
            assert side is not None and side.forward_median_ms is not None and side.backward_median_ms is not None
            # each call's forward and backward are parts of its whole time, so their medians are no greater than
            # the whole's (order statistics keep an elementwise order; a ratio would be a timing assertion)
            assert 0 < side.forward_median_ms <= side.median_ms and 0 < side.backward_median_ms <= side.median_ms
        coverage = result.coverage
        assert coverage is not None and coverage.backward is not None, "the backward's coverage is measured apart"
        assert coverage.backward.share is not None
        if said is None:
            assert not {f for f in result.flags if f in EXCLUDING} - {"contended"}, result.flags
            assert coverage.backward.share >= 0.5
        else:
            assert said in result.flags
            assert coverage.backward.share < 0.5

    return {"results": results,
            "test_a_trained_layernorm_is_judged_by_its_outputs_gradients_and_backward_coverage":
                test_a_trained_layernorm_is_judged_by_its_outputs_gradients_and_backward_coverage}
