"""Plausibility flags, decided in the parent from what the worker measured."""
import pytest

from harness.integrity import plausibility_flags, speed_of_light_ms
from harness.types import Baseline, DeviceInfo, Problem, Timing, WorkerReport
from harness.worker import hidden_work

H100 = DeviceInfo(target="cuda", name="NVIDIA H100 80GB HBM3", index=0)
CPU = DeviceInfo(target="cpu", name="AMD EPYC")


def timing(ms, wall=None):
    return Timing(median_ms=ms, mean_ms=ms, std_ms=0.0, min_ms=ms, n=10, rse=0.0, wall_median_ms=wall)


def problem(**fields):
    return Problem(id="p", path="/p.py", level=1, sha256="s", description="", **fields)


def report(cand_ms, ref_ms):
    return WorkerReport(status="correct", runtime=timing(cand_ms), ref_runtime=timing(ref_ms), device_name="d",
                        torch_version="t")


def clean(bytes_moved=None, flops=None, ref_ms=1.0):
    """The reference measured in a clean process, with the problem's bytes and FLOPs."""
    return Baseline(timing=timing(ref_ms), bytes_moved=bytes_moved, flops=flops)


def flags(rep, device=H100, baseline=None, prob=None):
    return plausibility_flags(prob or problem(), rep, device, dtype="float32", max_speedup=10.0, baseline=baseline)


def test_speed_of_light_from_bytes_and_flops_at_datasheet_peaks():
    # 3.35 GB at 3350 GB/s is 1 ms; 67 GFLOP at 67 TFLOP/s (fp32) is 1 ms: the bound is the larger
    assert speed_of_light_ms(problem(), clean(bytes_moved=3_350_000_000), H100, "float32") == pytest.approx(1.0)
    assert speed_of_light_ms(problem(), clean(bytes_moved=3_350_000_000, flops=134 * 10**9), H100,
                             "float32") == pytest.approx(2.0)
    assert speed_of_light_ms(problem(bytes=6_700_000_000), clean(bytes_moved=1), H100,
                             "float32") == pytest.approx(2.0)  # BYTES wins over the measured sum
    assert speed_of_light_ms(problem(), clean(bytes_moved=10**9), CPU, "float32") is None
    assert speed_of_light_ms(problem(), None, H100, "float32") is None


def test_clean_result_has_no_flags():
    assert flags(report(1.0, 3.0), baseline=clean(bytes_moved=10**9, ref_ms=2.9)) == []


def test_each_plausibility_flag():
    assert flags(report(0.1, 3.0)) == ["implausible_speedup"]
    assert flags(report(0.5, 1.0), baseline=clean(bytes_moved=3_350_000_000, ref_ms=1.0)) == ["faster_than_light"]
    assert flags(report(1.0, 3.0), baseline=clean(ref_ms=1.5)) == ["reference_slowed"]


def test_hidden_work_compares_wall_and_event_gaps_of_both_sides():
    ref = timing(2.0, wall=2.02)
    assert hidden_work(timing(1.0, wall=1.02), ref) == []
    assert hidden_work(timing(0.01, wall=2.0), ref) == ["hidden_work"]
