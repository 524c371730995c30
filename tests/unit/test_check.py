import pytest
import torch

from harness.checks import tolerances
from harness.child.check import compare, one_thread, same_values


def test_identical_outputs_pass():
    x = torch.randn(100, 7)
    c = compare(x.clone(), x, 1e-4, 1e-4)
    assert c.ok and c.max_abs_err == 0 and c.mismatch_fraction == 0


def test_tolerance_is_atol_plus_rtol_times_reference():
    ref = torch.full((10,), 100.0)
    assert compare(ref + 0.0095, ref, 1e-4, 1e-4).ok  # limit: 1e-4 + 1e-4 * 100
    bad = compare(ref + 0.02, ref, 1e-4, 1e-4)
    assert not bad.ok and bad.mismatch_fraction == 1.0 and bad.max_abs_err == pytest.approx(0.02, rel=1e-3)
    assert "10 of 10 elements" in bad.message


def test_mismatch_fraction_and_errors_are_measured():
    ref = torch.zeros(1000)
    out = ref.clone()
    out[:25] = 1.0
    c = compare(out, ref, 1e-4, 1e-4)
    assert not c.ok and c.mismatch_fraction == pytest.approx(0.025)
    assert c.max_abs_err == 1.0 and c.max_rel_err == pytest.approx(1e4)


def test_nan_and_inf_positions_must_match():
    ref = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert compare(ref.clone(), ref, 1e-4, 1e-4).ok
    assert not compare(torch.tensor([1.0, 0.0, float("inf"), -float("inf")]), ref, 1e-4, 1e-4).ok
    assert not compare(torch.tensor([1.0, float("nan"), -float("inf"), -float("inf")]), ref, 1e-4, 1e-4).ok
    nan_out = compare(torch.tensor([float("nan"), float("nan"), float("inf"), -float("inf")]), ref, 1e-4, 1e-4)
    assert not nan_out.ok and nan_out.max_abs_err == float("inf")


@pytest.mark.parametrize("out, message", [
    (torch.zeros(3, 4), "shape (3, 4), expected (4, 3)"),
    (torch.zeros(4, 3, dtype=torch.float64), "dtype torch.float64"),
    ([torch.zeros(4, 3)], "plain torch.Tensor, got builtins.list"),
])
def test_structure_problems_are_named(out, message):
    c = compare(out, torch.zeros(4, 3), 1e-4, 1e-4)
    assert not c.ok and message in c.message


def test_tensor_subclasses_are_refused():
    class Lazy(torch.Tensor):
        pass
    ref = torch.zeros(3)
    c = compare(ref.clone().as_subclass(Lazy), ref, 1e-4, 1e-4)
    assert not c.ok and "plain torch.Tensor" in c.message


def test_integer_and_bool_outputs_compare_exactly():
    ref = torch.tensor([1, 2, 3])
    assert compare(ref.clone(), ref, 1.0, 1.0).ok
    assert not compare(torch.tensor([1, 2, 4]), ref, 1.0, 1.0).ok  # tolerances do not apply to integers
    assert not compare(torch.tensor([True, False]), torch.tensor([True, True]), 1e-4, 1e-4).ok


def test_tuple_outputs():
    ref = (torch.ones(2), torch.zeros(3))
    assert compare((torch.ones(2), torch.zeros(3)), ref, 1e-4, 1e-4).ok
    c = compare((torch.ones(2), torch.ones(3)), ref, 1e-4, 1e-4)
    assert not c.ok and "output[1]" in c.message
    assert "tuple of 2 items" in compare(torch.ones(2), ref, 1e-4, 1e-4).message


def test_half_precision_defaults_are_looser():
    assert tolerances("float32", None, None) == (1e-4, 1e-4)
    assert tolerances("float16", None, None) == (1e-2, 1e-2)
    assert tolerances("bfloat16", None, None) == (1e-2, 1e-2)
    assert tolerances("float32", 1e-3, None) == (1e-3, 1e-4)
    assert tolerances("float32", 1e-5, 1e-5) == (1e-5, 1e-5)  # a problem's own, for fp32
    assert tolerances("float16", 1e-5, 3e-2) == (1e-2, 3e-2)  # in half precision, never tighter than the dtype's


def test_large_tensors_are_compared_in_chunks(monkeypatch):
    import harness.child.check as check
    monkeypatch.setattr(check, "CHUNK", 7)
    ref = torch.arange(100, dtype=torch.float32)
    out = ref.clone()
    out[99] += 1
    c = compare(out, ref, 1e-4, 1e-4)
    assert not c.ok and c.mismatch_fraction == pytest.approx(0.01) and c.max_abs_err == 1.0


def test_same_values_treats_nans_as_equal_but_nothing_else():
    a = torch.tensor([1.0, float("nan")])
    assert same_values(a, a.clone())
    assert not same_values(a, torch.tensor([1.0, 2.0]))
    assert not same_values(torch.zeros(2), torch.zeros(3))


def test_the_seed_sample_sees_more_than_one_column_of_an_output():
    # 65536 rows of 64: evenly spaced samples (every 64th element) would all be column 0, an exclusive cumsum's
    # zero, the same for every seed (a false uninformative_problem for level1/exclusive_cumsum on an H100)
    from harness.child.check import seed_sample

    outputs = [torch.nn.functional.pad(torch.randn(1 << 16, 63, generator=torch.Generator().manual_seed(seed))
                                       .cumsum(1), (1, 0)) for seed in (1, 2)]
    first, second = (seed_sample(out) for out in outputs)
    assert first.numel() == 1 << 16 and (first == 0).float().mean() < 0.05  # column 0 is 1 in 64
    assert (first - second).abs().gt(1e-3).float().mean() > 0.9
    small = torch.arange(10.0)
    assert torch.equal(seed_sample(small), small) and seed_sample(small).data_ptr() != small.data_ptr()


def test_comparisons_on_the_cores_take_one_thread_and_give_torch_its_threads_back():
    before = torch.get_num_threads()
    with one_thread(torch.device("cpu")):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), one_thread(torch.device("cpu")):
        raise RuntimeError("a comparison that fails")
    assert torch.get_num_threads() == before
