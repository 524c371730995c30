"""Poisoning (harness/child/defenses.Poison) on a real GPU: what a candidate's next allocation is handed holds NaN,
whether the bytes come from the driver or from torch's cache; bytes still in use are left alone, and a cache the
cheap filling cannot vouch for gets the full one."""
import pytest
import torch

from harness.child.defenses import POISON_BYTE, Poison
from harness.device import visible_gpus

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not visible_gpus(), reason="needs an NVIDIA GPU")]

SIZES = (100, 300_000, 50_000_000)  # floats: torch's small pool, a large block, a segment of its own


# Measured on an H200 (driver of CUDA 13, torch 2.11), 2026-12-05: after the full filling has gone back to the driver,
# a fresh segment torch asks for holds zeros, or a small segment's old values, not the poison; claiming down to
# 2 MiB, or through torch's small pool, did not change it. The fix is to keep poisoned memory in torch's cache for the
# runner's next allocations (bounded: the judge shares the device). Strict: each turns into a failure once it holds.
DRIVER_GAP = pytest.mark.xfail(strict=True, reason="known gap: memory the driver hands out after the full filling "
                               "is not the poison on an H200")


def all_poison(tensor: torch.Tensor) -> bool:
    return bool((tensor.view(torch.uint8) == POISON_BYTE).all())


def results_left_behind() -> None:
    """What a candidate's run leaves in the cache: its temporaries, freed, holding real values."""
    held = [torch.full((n,), 1.5, device="cuda") for n in SIZES]
    torch.cuda.synchronize()
    del held


@pytest.fixture()
def poison():
    torch.cuda.empty_cache()
    return Poison(torch.device("cuda", 0))


@DRIVER_GAP
def test_the_first_poisoning_fills_what_the_driver_hands_out(poison):
    results_left_behind()
    assert poison() == "all"
    for n in SIZES:
        assert all_poison(torch.empty(n, device="cuda")), n


def test_later_poisonings_fill_torch_s_cache(poison):
    poison()
    results_left_behind()
    kept = torch.full((1000,), 2.0, device="cuda")  # in use: not the poison's to touch
    assert poison() == "cached"
    for n in SIZES:
        assert all_poison(torch.empty(n, device="cuda")), n
    assert bool((kept == 2.0).all())


@DRIVER_GAP
def test_a_segment_given_back_to_the_driver_means_filling_everything_again(poison):
    poison()
    results_left_behind()
    torch.cuda.empty_cache()
    assert poison() == "all"
    for n in SIZES:
        assert all_poison(torch.empty(n, device="cuda")), n


@DRIVER_GAP
def test_a_block_another_stream_freed_means_filling_everything_again(poison):
    poison()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        results_left_behind()  # cached for that stream: a claim on this one would not be handed them
    assert poison() == "all"
    with torch.cuda.stream(side):
        for n in SIZES:
            assert all_poison(torch.empty(n, device="cuda")), n
