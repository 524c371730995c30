"""Where a failed comparison's wrong elements are (harness/child/mismatch.py), through the checks that call it: the
allclose check (compare, compare_tensor) and the truth check (compare_tensor_truth), on shapes real kernels have."""
import re

import pytest
import torch

from harness.child import mismatch
from harness.child.check import compare, compare_tensor
from harness.child.truth import compare_tensor_truth
from harness.workloads import mask_numbers

ATOL = RTOL = 1e-4


def located(c) -> str:
    """The location of a failed comparison, checked to be at the end of its message and to read without numbers."""
    assert not c.ok and c.location and c.message.endswith("\n" + c.location)
    lines = c.location.split("\n")
    assert 1 <= len(lines) <= 2 and all(len(line) < 160 for line in lines)
    masked = mask_numbers(c.message)
    assert not re.search(r"(?<![A-Za-z\d])\d", masked), masked  # no size, index or value left for a held-out workload
    return c.location


def masked(c) -> str:
    return mask_numbers(c.location)


@pytest.fixture(scope="module")
def rows():
    torch.manual_seed(0)
    return torch.randn(4131, 1000)


def test_a_tail_of_rows_the_kernel_does_not_cover(rows):
    out = rows.clone()
    out[4096:] = 0  # the last partial tile of 64 rows never written
    c = compare(out, rows, ATOL, RTOL)
    where = located(c)
    assert "the last 35 rows (rows 4096-4130) are wrong; rows before them are right" in where and "tail" in where
    assert "every wrong element is zero (left unwritten?)" in where
    assert masked(c).startswith("the last N rows (rows N-N) are wrong; rows before them are right: a tail the kernel "
                                "does not cover")


def test_a_tail_of_columns_with_a_constant_offset():
    torch.manual_seed(1)
    ref = torch.randn(256, 4099)
    out = ref.clone()
    out[:, -3:] += 1
    c = compare_tensor(out, ref, ATOL, RTOL)
    where = located(c)
    assert "the last 3 columns (columns 4096-4098) are wrong" in where and "tail" in where
    assert "off by +1: a constant offset" in where and "tail" in masked(c) and "constant offset" in masked(c)


def test_every_32nd_column_is_a_stride():
    torch.manual_seed(2)
    ref = torch.randn(256, 4099)
    out = ref.clone()
    out[:, 31::32] *= -1
    where = located(compare(out, ref, ATOL, RTOL))
    assert "one column in every 32 is wrong (columns 31, 63, ..., 4095)" in where and "stride" in where
    assert "wrong sign" in where


def test_a_block_in_two_dimensions_at_once():
    torch.manual_seed(3)
    ref = torch.randn(512, 2048)
    out = ref.clone()
    out[64:128, 1024:1088] *= 3
    c = compare(out, ref, ATOL, RTOL)
    where = located(c)
    assert "a block is wrong: rows 64-127, columns 1024-1087 (64 x 64); everything outside it is right" in where
    assert "scaled by 3" in where and "a block is wrong: rows N-N, columns N-N" in masked(c)


def test_a_head_a_middle_range_and_one_row():
    torch.manual_seed(4)
    ref = torch.randn(100, 50)
    head, middle, one = ref.clone(), ref.clone(), ref.clone()
    head[:5] += 1
    middle[40:60] += 1
    one[40] += 1
    assert "the first 5 rows (rows 0-4) are wrong; rows after them are right" in located(compare(head, ref, ATOL, RTOL))
    assert "rows 40-59 (20 of 100) are wrong; rows before and after them are right" in \
        located(compare(middle, ref, ATOL, RTOL))
    assert "only row 40 is wrong" in located(compare(one, ref, ATOL, RTOL))


def test_nan_from_row_12_on(rows):
    out = rows.clone()
    out[12:] = float("nan")
    c = compare(out, rows, ATOL, RTOL)
    where = located(c)
    assert where.startswith(f"{(4131 - 12) * 1000} NaN where the expected value is finite, the first at (12, 0): "
                            "NaN from row 12 on")
    assert "the last 4119 rows (rows 12-4130) are NaN" in where and "NaN from row N on" in masked(c)


def test_one_inf_and_one_wrong_element():
    torch.manual_seed(5)
    ref = torch.randn(300, 200)
    out = ref.clone()
    out[3, 4] = float("inf")
    assert located(compare(out, ref, ATOL, RTOL)) == "1 Inf where the expected value is finite, at (3, 4)"
    out = ref.clone()
    out[3, 4] = 2.5
    where = located(compare(out, ref, ATOL, RTOL))
    assert "only one element is wrong, at (3, 4)" in where and "it holds 2.5 where" in where


def test_nan_in_a_pattern_beside_other_wrong_elements():
    torch.manual_seed(6)
    ref = torch.randn(100, 50)
    out = ref.clone()
    out[96:, 3::8] = float("nan")
    out[0, 0] += 1
    where = located(compare(out, ref, ATOL, RTOL))
    assert where.startswith("24 NaN where the expected value is finite, the first at (96, 3): NaN in rows 96-99, "
                            "one column in every 8")
    assert "first at (0, 0)" in where.split("\n")[1]


def test_a_constant_offset_and_a_scale_everywhere():
    torch.manual_seed(7)
    ref = torch.randn(1024, 1024)
    offset = located(compare(ref + 0.5, ref, ATOL, RTOL))
    assert offset == "every element is wrong\nevery wrong element is off by +0.5: a constant offset"
    scaled = located(compare(ref * 2, ref, ATOL, RTOL))
    assert "every wrong element is scaled by 2: a wrong scale factor" in scaled
    half = ref.bfloat16()
    assert "scaled by 2" in located(compare(half * 2, half, 1e-2, 1e-2))  # rounding in bf16 is still one scale


def test_scattered_wrong_elements_name_the_first():
    torch.manual_seed(8)
    ref = torch.randn(512, 2048)
    out = ref.clone()
    out.view(-1)[torch.randperm(ref.numel())[:37]] += torch.rand(37) + 1
    where = located(compare(out, ref, ATOL, RTOL))
    wrong = (out != ref).nonzero()
    first = tuple(wrong[0].tolist())
    assert where.startswith(f"scattered: wrong elements in {len(set(wrong[:, 0].tolist()))} of 512 rows and ")
    assert f"no pattern; the first at ({first[0]}, {first[1]})" in where


def test_a_one_dimensional_tail_and_a_three_dimensional_tail_along_dim_2():
    torch.manual_seed(9)
    ref = torch.randn(1000)
    out = ref.clone()
    out[990:] = 7
    where = located(compare(out, ref, ATOL, RTOL))
    assert "the last 10 elements (elements 990-999) are wrong" in where and "the same value 7" in where
    ref = torch.randn(4, 8, 1027)
    out = ref.clone()
    out[..., 1024:] = 0
    c = compare(out, ref, ATOL, RTOL)
    assert "along dim 2 (size 1027), the last 3 indices (indices 1024-1026) are wrong" in located(c)
    assert "along dim N (size N), the last N indices (indices N-N) are wrong" in masked(c) and "tail" in masked(c)


def test_an_integer_output_with_a_wrong_tail_is_located_exactly():
    ref = torch.arange(5000).reshape(50, 100)
    out = ref.clone()
    out[48:] = -1
    where = located(compare(out, ref, 1.0, 1.0))
    assert "the last 2 rows (rows 48-49) are wrong" in where and "the same value -1" in where
    flags = torch.ones(300, dtype=torch.bool)
    wrong = flags.clone()
    wrong[256:] = False
    assert "the last 44 elements (elements 256-299)" in located(compare(wrong, flags, ATOL, RTOL))


def test_a_tuple_output_names_the_wrong_item():
    torch.manual_seed(10)
    ref = (torch.randn(64, 32), torch.randn(64, 32))
    out = ref[1].clone()
    out[:, 30:] = 0
    c = compare((ref[0].clone(), out), ref, ATOL, RTOL)
    assert c.message.startswith("output[1] mismatch") and "the last 2 columns (columns 30-31)" in located(c)


def test_a_non_contiguous_output_is_located_in_its_logical_order():
    torch.manual_seed(11)
    ref = torch.randn(300, 200)
    out = ref.t().contiguous().t()  # column-major storage
    out[250:, 150:] = 0
    assert not out.is_contiguous()
    assert "a block is wrong: rows 250-299, columns 150-199 (50 x 50)" in located(compare(out, ref, ATOL, RTOL))


def test_the_truth_check_locates_the_same_patterns():
    torch.manual_seed(12)
    ref = torch.randn(500, 300).relu()
    truth = ref.double()
    tail = ref.clone()
    tail[-37:] += 1e-2
    where = located(compare_tensor_truth(tail, ref, truth, ATOL, RTOL))
    assert "the last 37 rows (rows 463-499) are wrong" in where and "off by +0.01: a constant offset" in where
    nan = ref.clone()
    nan[:, 7::4] = float("nan")
    where = located(compare_tensor_truth(nan, ref, truth, ATOL, RTOL))
    assert where.startswith("37000 NaN where the expected value is finite, the first at (0, 7): NaN in one column")
    assert "one column in every 4 is NaN (columns 7, 11, ..., 299)" in where
    block = ref.clone()
    block[100:164, 0:64] = 5.0
    assert "a block is wrong: rows 100-163, columns 0-63" in located(compare_tensor_truth(block, ref, None, ATOL, RTOL))
    labels = torch.arange(1000)
    wrong = labels.clone()
    wrong[990:] = 0
    assert "the last 10 elements (elements 990-999)" in located(compare_tensor_truth(wrong, labels, None, ATOL, RTOL))


def test_a_passing_comparison_has_no_location():
    torch.manual_seed(13)
    ref = torch.randn(64, 64)
    for c in (compare(ref.clone(), ref, ATOL, RTOL), compare_tensor(ref.clone(), ref, ATOL, RTOL),
              compare_tensor_truth(ref.clone(), ref, ref.double(), ATOL, RTOL)):
        assert c.ok and c.message is None and c.location is None
    # each element within its bound, the norm over it: not a mismatch of elements, so nothing to locate
    off = ref * (1 + 3 * RTOL * torch.sign(torch.randn_like(ref)))
    norm = compare_tensor_truth(off, ref, ref.double(), 1.0, RTOL)
    assert not norm.ok and "of its norm" in norm.message and norm.location is None


def test_small_blocks_split_inner_dimensions_and_say_the_same(monkeypatch):
    import harness.child.check as check
    torch.manual_seed(14)
    ref = torch.randn(3, 5, 11)
    cases = [ref.clone() for _ in range(3)]
    cases[0][:, :, 9:] += 1      # a tail along dim 2
    cases[1][1:, 2:4, :] = 0     # a block in dims 1 and 2... and dim 0
    cases[2][2, 4, 10] = float("nan")
    whole = [compare(out, ref, ATOL, RTOL).location for out in cases]
    monkeypatch.setattr(check, "CHUNK", 7)  # blocks of a few elements of one row of dim 2
    assert [compare(out, ref, ATOL, RTOL).location for out in cases] == whole
    assert "along dim 2 (size 11), the last 2 indices (indices 9-10) are wrong" in whole[0]
    assert "a block is wrong: dim 0 indices 1-2, dim 1 indices 2-3 (2 x 2)" in whole[1]
    assert whole[2] == "1 NaN where the expected value is finite, at (2, 4, 10)"
    assert list(mismatch._blocks((3, 5, 11), 7))[:2] == [((0, 0, slice(0, 7)), 0), ((0, 0, slice(7, 11)), 7)]


def test_a_large_output_is_located_block_by_block():
    # more than three chunks of 1 << 24 elements, as rows of 1000: blocks of 16777 rows
    n_rows = (3 * (1 << 24) + 12345) // 1000 + 1
    ref = torch.ones(n_rows, 1000)
    out = ref.clone()
    out[n_rows - 13:] = 0
    c = compare(out, ref, ATOL, RTOL)
    assert f"the last 13 rows (rows {n_rows - 13}-{n_rows - 1}) are wrong" in located(c)
    del ref, out, c
    # one row longer than a chunk: each row is split into chunk-long pieces
    ref = torch.ones(2, 17_000_000)
    out = ref.clone()
    out[1, 16_999_000:] = float("nan")
    out[0, 5] = 0
    where = located(compare(out, ref, ATOL, RTOL))
    assert where.startswith("1000 NaN where the expected value is finite, the first at (1, 16999000): NaN in row 1, "
                            "columns 16999000-16999999")
    assert "the first at (0, 5)" in where


def test_a_1d_grids_forgotten_last_tile_is_a_tail_in_memory_order():
    ref = torch.randn(4096, 1024).relu() + 0.1
    out = ref.clone().reshape(-1)
    out[4194000:] = 0  # tiles of 1000, the last partial one never launched
    message = compare(out.reshape(4096, 1024), ref, 1e-4, 1e-4).message
    assert ("the last 304 elements in memory order (from (4095, 720) on) are wrong; every element before them is "
            "right: a tail the kernel does not cover") in message, message


def test_a_forgotten_tile_whose_zeros_are_right_by_chance_is_still_a_tail():
    torch.manual_seed(0)
    ref = (torch.randn(4096, 1024) + 0.5).relu()  # about 31 % zeros, which an unwritten zero output matches
    out = ref.clone().reshape(-1)
    out[4194000:] = 0
    comparison = compare(out.reshape(4096, 1024), ref, 1e-4, 1e-4)
    wrong = round(comparison.mismatch_fraction * ref.numel())
    assert 150 < wrong < 304
    assert (f"the last 304 elements in memory order (from (4095, 720) on) are wrong ({wrong} of them; the others "
            "match by chance); every element before them is right: a tail the kernel does not cover") \
        in comparison.message, comparison.message


def test_two_seeds_outputs_are_compared_for_how_much_they_differ_not_where():
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    assert compare_tensor(a, b, 1e-4, 1e-4).location is not None
    unlocated = compare_tensor(a, b, 1e-4, 1e-4, locating=False)
    assert not unlocated.ok and unlocated.location is None and "\n" not in unlocated.message
