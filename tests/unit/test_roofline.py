"""Speed of light: lower-bound times from bytes and FLOPs at the device's ceiling; the share of it a time reaches."""
import pytest

from harness.eval.roofline import beats_light, bound_ms, ceiling_ms, sol_share
from harness.types import Baseline, DeviceInfo, Peaks

H100 = DeviceInfo(target="cuda", name="NVIDIA H100 80GB HBM3", index=0)
UNKNOWN_GPU = DeviceInfo(target="cuda", name="Some Future GPU", index=0)
CPU = DeviceInfo(target="cpu", name="AMD EPYC")
MEASURED = Peaks(bandwidth_gbs=3000.0, tflops={"fp32": 50.0, "bf16": 700.0})


def test_the_bound_is_the_larger_of_memory_and_compute_time():
    assert bound_ms(3 * 10**9, None, 3000.0, {}, "float32") == pytest.approx(1.0)
    assert bound_ms(3 * 10**9, 10**11, 3000.0, {"fp32": 50.0}, "float32") == pytest.approx(2.0)
    assert bound_ms(3 * 10**9, 10**11, 3000.0, {"fp32": 50.0}, "bfloat16") == pytest.approx(1.0)  # no bf16 peak
    assert bound_ms(None, None, 3000.0, {"fp32": 50.0}, "float32") is None


def test_the_share_of_the_speed_of_light_is_at_most_one_and_none_for_a_time_that_beats_it():
    assert sol_share(1.0, 2.0) == pytest.approx(0.5)
    assert not beats_light(1.0, 0.97) and sol_share(1.0, 0.97) == 1.0  # within the flag's margin: at the ceiling
    assert beats_light(1.0, 0.9) and sol_share(1.0, 0.9) is None  # flagged faster_than_light: no share of it
    assert sol_share(None, 1.0) is None and sol_share(1.0, None) is None and sol_share(1.0, 0.0) is None
    assert not beats_light(None, 0.1) and not beats_light(1.0, None)


def test_the_ceiling_on_a_gpu_is_the_datasheet_or_what_was_measured_if_higher():
    moved = Baseline(bytes_moved=3_350_000_000)
    assert ceiling_ms(moved, None, H100, "float32") == pytest.approx(1.0)  # 3350 GB/s datasheet
    assert ceiling_ms(moved, MEASURED, H100, "float32") == pytest.approx(1.0)
    assert ceiling_ms(moved, Peaks(bandwidth_gbs=6700.0), H100, "float32") == pytest.approx(0.5)
    assert ceiling_ms(moved, None, UNKNOWN_GPU, "float32") is None
    assert ceiling_ms(moved, MEASURED, UNKNOWN_GPU, "float32") == pytest.approx(3350 / 3000)


def test_the_ceiling_on_a_cpu_is_the_measured_peak_with_headroom():
    moved = Baseline(bytes_moved=10**7)
    assert ceiling_ms(moved, Peaks(bandwidth_gbs=10.0), CPU, "float32") == pytest.approx(0.5)
    assert ceiling_ms(moved, None, CPU, "float32") is None
