"""Speed of light: lower-bound times from bytes and FLOPs at measured or datasheet peaks."""
import pytest

from harness.eval.roofline import bound_ms, ceiling_ms, sol_ms
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


def test_sol_uses_the_measured_peaks_of_the_device():
    eager = Baseline(bytes_moved=3 * 10**9, flops=7 * 10**11)
    assert sol_ms(eager, MEASURED, "float32") == pytest.approx(14.0)  # 700 GFLOP at 50 TFLOP/s
    assert sol_ms(eager, MEASURED, "bfloat16") == pytest.approx(1.0)
    assert sol_ms(eager, None, "float32") is None and sol_ms(None, MEASURED, "float32") is None


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
