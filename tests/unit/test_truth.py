"""The truth check (harness/checks.py's bound, child/truth.py): honest arithmetic in another order passes where
allclose against the fp32 reference fails, and lower precision, a wrong tail, NaN and errors spread thin over every
element do not."""
import pytest
import torch

from harness.checks import ELEMENT_FACTOR, check_spec
from harness.child.check import compare_tensor
from harness.child.truth import Expected, Truth, compare_tensor_truth, compare_truth, judge

ATOL = RTOL = 1e-4


def sequential_matmul(a, b):
    """fp32, one k at a time: the order a naive kernel sums in."""
    out = torch.zeros(a.shape[0], b.shape[1])
    for k in range(a.shape[1]):
        out.addcmul_(a[:, k:k + 1], b[k:k + 1, :])
    return out


@pytest.fixture(scope="module")
def long_dots():
    """8192-long dot products of zero-mean values: the outputs near zero, where the tolerance is all atol, differ
    by more than atol between two honest orders of summation (19 of 16384 here), as in KernelBench's level 1
    problem 15 on an H100 (84 of 16.7 M)."""
    torch.manual_seed(0)
    a, b = torch.randn(128, 8192), torch.randn(8192, 128)
    return a, b, a @ b, a.double() @ b.double()


def test_an_honest_other_order_is_correct_where_allclose_says_it_is_not(long_dots):
    a, b, reference, truth = long_dots
    mine = sequential_matmul(a, b)
    assert not compare_tensor(mine, reference, ATOL, RTOL).ok  # what the old check said
    found = compare_tensor_truth(mine, reference, truth, ATOL, RTOL)
    assert found.ok and found.norm_err > found.ref_norm_err > 0


def test_lower_precision_fails_on_both_counts(long_dots):
    a, b, reference, truth = long_dots
    halved = a.bfloat16().float() @ b.bfloat16().float()
    found = compare_tensor_truth(halved, reference, truth, ATOL, RTOL)
    assert not found.ok and "farther from the float64 truth" in found.message and found.mismatch_fraction > 0.1


def relu_case():
    torch.manual_seed(1)
    x = torch.randn(500, 300) + 0.5
    return x.relu(), x.double().relu()


def test_a_wrong_tail_and_a_nan_are_found_element_by_element():
    reference, truth = relu_case()
    tail = reference.clone()
    tail[:, -37:] += 1e-3
    found = compare_tensor_truth(tail, reference, truth, ATOL, RTOL)
    assert not found.ok and found.mismatch_fraction == pytest.approx(37 / 300)
    nan = reference.clone()
    nan[3, 4] = float("nan")
    found = compare_tensor_truth(nan, reference, truth, ATOL, RTOL)
    assert not found.ok and "NaN or Inf where the truth is finite" in found.message
    assert found.max_abs_err == float("inf")


def test_an_error_spread_over_every_element_fails_the_norm_though_each_element_passes():
    reference, truth = relu_case()
    # every element 3 x rtol off: an atol of 1 lets each through, but together they are 3 x rtol off the truth's
    # norm, where the reference (relu is exact) is not off at all
    off = reference * (1 + 3 * RTOL * torch.sign(torch.randn_like(reference)))
    found = compare_tensor_truth(off, reference, truth, 1.0, RTOL)
    assert found.mismatch_fraction == 0 and not found.ok and "of its norm" in found.message
    assert found.norm_err == pytest.approx(3 * RTOL, rel=0.01) and found.ref_norm_err == 0


def test_the_reference_own_error_widens_the_bound_by_its_factor():
    torch.manual_seed(2)
    truth = torch.rand(1000, dtype=torch.float64)
    reference = (truth + 1e-3 * torch.randn(1000, dtype=torch.float64)).float()  # a reference well off the truth
    own = (reference.double() - truth).abs().max().item()
    near = (truth + 0.5 * ELEMENT_FACTOR * own * torch.sign(torch.randn(1000, dtype=torch.float64))).float()
    found = compare_tensor_truth(near, reference, truth, ATOL, RTOL)
    assert found.mismatch_fraction == 0
    far = (truth + 2 * ELEMENT_FACTOR * own).float()
    assert not compare_tensor_truth(far, reference, truth, ATOL, RTOL).ok


def test_the_working_dtypes_overflow_may_be_repeated_and_a_truths_nan_must_be():
    truth = torch.tensor([1.0, 1e39, float("nan")], dtype=torch.float64)
    reference = truth.float()  # 1e39 overflows fp32: inf
    assert compare_tensor_truth(reference.clone(), reference, truth, ATOL, RTOL).ok
    finite_there = torch.tensor([1.0, 3e38, float("nan")])
    assert not compare_tensor_truth(finite_there, reference, truth, ATOL, RTOL).ok  # 3e38 is not 1e39
    assert not compare_tensor_truth(torch.tensor([1.0, float("inf"), 0.0]), reference, truth, ATOL, RTOL).ok


def test_without_a_truth_the_reference_is_it_and_integers_are_exact():
    reference, _ = relu_case()
    assert compare_tensor_truth(reference.clone(), reference, None, ATOL, RTOL).ok
    off = reference.clone()
    off[0, 0] += 1
    assert "farther from the reference" in compare_tensor_truth(off, reference, None, ATOL, RTOL).message
    labels = torch.arange(10)
    assert compare_tensor_truth(labels.clone(), labels, None, ATOL, RTOL).ok
    assert not compare_tensor_truth(labels.flip(0), labels, None, ATOL, RTOL).ok


class TwoOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 32)

    def forward(self, x):
        y = self.linear(x)
        return y, 2 * y


def test_structures_and_the_truth_of_a_model():
    model = TwoOutputs()
    x = torch.randn(16, 64)
    with torch.no_grad():
        reference = model(x)
        truth = Truth(model)((x,), reference)
        assert truth[0].dtype == torch.float64 and model.linear.weight.dtype == torch.float32  # a copy was cast
        assert compare_truth((reference[0].clone(), reference[1].clone()), reference, truth, ATOL, RTOL).ok
        wrong = compare_truth((reference[0], reference[1] + 1), reference, truth, ATOL, RTOL)
        assert not wrong.ok and wrong.message.startswith("output[1]")
        assert "must be a tuple of 2 items" in compare_truth(reference[0], reference, truth, ATOL, RTOL).message


def test_judge_takes_the_check_asked_for(long_dots):
    a, b, reference, truth = long_dots
    mine = sequential_matmul(a, b)
    expected = Expected(reference, truth)
    assert judge(mine, expected, check_spec("truth"), ATOL, RTOL).ok
    assert not judge(mine, expected, check_spec("kernelbench"), ATOL, RTOL).ok
    assert judge(mine, expected, check_spec("kernelbench-v0"), 1e-2, 1e-2).ok
    assert check_spec("kernelbench-v0").atol == 1e-2 and check_spec("kernelbench", "float16").rtol == 1e-2
    with pytest.raises(ValueError, match="unknown check"):
        check_spec("loose")
