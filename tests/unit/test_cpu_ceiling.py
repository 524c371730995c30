"""The CPU's ceiling for faster_than_light: the cores' theoretical peak, and the fastest uncontended copy."""
import pytest

from harness.eval import roofline
from harness.eval.cpu_ceiling import (
    CPU_HEADROOM,
    MAX_CLOCK_GHZ,
    ceiling_bandwidth_gbs,
    merge_peaks,
    needs_measuring,
    theoretical_tflops,
)
from harness.eval.plausibility import Yardsticks, plausibility_flags
from harness.figures import Contention, Figures
from harness.protocol import WorkerReport
from harness.types import Baseline, DeviceInfo, Peaks, Timing

# /proc/cpuinfo as these machines print it (one processor shown; flags trimmed to what matters)
KVM_XEON = """processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Processor
cpu MHz		: 2300.000
flags		: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c hypervisor avx2 avx512f avx512dq avx512bw avx512vl
bogomips	: 4600.00
"""
EPYC = """processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC 9654 96-Core Processor
cpu MHz		: 1500.000
flags		: fpu sse sse2 fma avx avx2 avx512f avx512_bf16 avx512vl
"""
DESKTOP = """processor	: 0
model name	: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz
cpu MHz		: 800.000
flags		: fpu sse sse2 fma avx avx2
"""
SAPPHIRE = """processor	: 0
model name	: Intel(R) Xeon(R) Platinum 8480+
flags		: sse sse2 fma avx avx2 avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8
"""
NEOVERSE = """processor	: 0
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm sve bf16
CPU implementer	: 0x41
"""
GRAVITON2 = """processor	: 0
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm
"""


def test_a_vm_without_cpufreq_takes_twice_the_stated_clock():
    tflops, how = theoretical_tflops(KVM_XEON, cores=2)
    assert tflops["fp32"] == pytest.approx(2 * 4.6e9 * 16 * 2 * 2 / 1e12)  # 0.589: cores x GHz x lanes x FMA x units
    assert tflops["bf16"] == tflops["fp32"] == tflops["fp16"]  # no bf16/fp16 unit: computed in fp32
    assert "avx512f" in how and "2 x 2.30 GHz" in how


def test_cpufreq_max_is_the_clock_and_boost_gets_headroom():
    tflops, _ = theoretical_tflops(EPYC, cores=4, max_freq_khz=[3_700_000, 3_550_000])
    assert tflops["fp32"] == pytest.approx(4 * 3.7e9 * 64 / 1e12)
    assert tflops["bf16"] == pytest.approx(2 * tflops["fp32"]) and tflops["fp16"] == tflops["fp32"]
    boosted, how = theoretical_tflops(EPYC, cores=4, max_freq_khz=[2_400_000], boost=True)
    assert boosted["fp32"] == pytest.approx(4 * 4.8e9 * 64 / 1e12) and "boost on" in how


def test_the_model_names_base_clock_wins_over_a_low_current_clock():
    tflops, _ = theoretical_tflops(DESKTOP, cores=12)
    assert tflops["fp32"] == pytest.approx(12 * 6.4e9 * 8 * 2 * 2 / 1e12)  # avx2: 8 lanes; 2 x 3.20 GHz


def test_amx_and_avx512_fp16_raise_the_low_precision_peaks():
    tflops, how = theoretical_tflops(SAPPHIRE, cores=1)  # no clock stated at all
    assert f"{MAX_CLOCK_GHZ:g} GHz" in how
    assert tflops["fp32"] == pytest.approx(MAX_CLOCK_GHZ * 64 / 1e3)
    assert tflops["bf16"] == pytest.approx(32 * tflops["fp32"])
    assert tflops["fp16"] == pytest.approx(2 * tflops["fp32"])


def test_arm_neon_and_sve():
    neon, _ = theoretical_tflops(GRAVITON2, cores=8, max_freq_khz=[2_500_000])
    assert neon["fp32"] == pytest.approx(8 * 2.5e9 * 4 * 2 * 4 / 1e12)  # 4 lanes x 4 FMA pipes
    assert neon["fp16"] == pytest.approx(2 * neon["fp32"]) and neon["bf16"] == neon["fp32"]
    sve, how = theoretical_tflops(NEOVERSE, cores=1, max_freq_khz=[3_000_000], sve_bytes=32)
    assert sve["fp32"] == pytest.approx(3e9 * 8 * 2 * 4 / 1e12) and "sve" in how  # 256-bit: 8 lanes
    assert sve["bf16"] == pytest.approx(4 * sve["fp32"])
    unknown_length, _ = theoretical_tflops(NEOVERSE, cores=1, max_freq_khz=[3_000_000])
    assert unknown_length["fp32"] == pytest.approx(2 * sve["fp32"])  # 512-bit assumed


def test_no_known_vector_isa_gives_no_theoretical_peak():
    assert theoretical_tflops("processor\t: 0\nflags\t\t: fpu\n", cores=2)[0] == {}


def test_the_bandwidth_ceiling_is_the_fastest_uncontended_copy_with_headroom():
    assert ceiling_bandwidth_gbs(Peaks(bandwidth_gbs=20.0, best_bandwidth_gbs=25.0, foreign_cpu=0.01)) == \
        pytest.approx(25.0 * CPU_HEADROOM)
    assert ceiling_bandwidth_gbs(Peaks(bandwidth_gbs=5.0, best_bandwidth_gbs=6.0, foreign_cpu=0.7)) is None
    assert ceiling_bandwidth_gbs(Peaks(bandwidth_gbs=10.0)) == pytest.approx(20.0)  # no /proc: as measured
    assert ceiling_bandwidth_gbs(None) is None


def test_merging_keeps_the_fastest_copy_and_the_least_contention():
    clean = Peaks(bandwidth_gbs=27.0, best_bandwidth_gbs=28.0, tflops={"fp32": 0.39}, foreign_cpu=0.02)
    loaded = Peaks(bandwidth_gbs=5.4, best_bandwidth_gbs=5.8, tflops={"fp32": 0.1}, foreign_cpu=0.72)
    merged = merge_peaks(loaded, clean)
    assert merged.best_bandwidth_gbs == 28.0 and merged.foreign_cpu == 0.02
    assert merged.bandwidth_gbs == 5.4 and merged.tflops == {"fp32": 0.1}  # % SOL: the latest measurement
    assert merge_peaks(clean, loaded).best_bandwidth_gbs == 28.0
    assert merge_peaks(loaded, None) == loaded
    copy_only = merge_peaks(Peaks(bandwidth_gbs=6.0, best_bandwidth_gbs=6.5, foreign_cpu=0.5, details={"b": "2"}),
                            loaded.model_copy(update={"details": {"a": "1", "b": "1"}}))
    assert copy_only.tflops == {"fp32": 0.1} and copy_only.details == {"a": "1", "b": "2"}  # GEMMs kept
    assert copy_only.best_bandwidth_gbs == 6.5 and copy_only.foreign_cpu == 0.5
    old = Peaks(bandwidth_gbs=30.0, tflops={"fp32": 0.4})  # stored before the fastest copy was kept
    assert merge_peaks(loaded, old).best_bandwidth_gbs == 30.0 and merge_peaks(loaded, old).foreign_cpu == 0.72


def test_a_contended_or_old_measurement_is_measured_again():
    assert needs_measuring(Peaks(bandwidth_gbs=5.4, best_bandwidth_gbs=5.8, foreign_cpu=0.72))
    assert needs_measuring(Peaks(bandwidth_gbs=27.0))
    assert not needs_measuring(Peaks(bandwidth_gbs=27.0, best_bandwidth_gbs=28.0, foreign_cpu=0.02))
    assert not needs_measuring(Peaks(bandwidth_gbs=27.0, best_bandwidth_gbs=28.0))  # contention unknown (macOS)


CPU = DeviceInfo(target="cpu", name="Intel(R) Xeon(R) Processor")
THEORETICAL = ({"fp32": 0.5888, "bf16": 0.5888, "fp16": 0.5888}, "sample")
UNDER_LOAD = Peaks(bandwidth_gbs=5.4, best_bandwidth_gbs=5.8, tflops={"fp32": 0.097}, foreign_cpu=0.72)
IDLE = Peaks(bandwidth_gbs=27.8, best_bandwidth_gbs=29.0, tflops={"fp32": 0.39}, foreign_cpu=0.02)


def timing(ms):
    return Timing(median_ms=ms, mean_ms=ms, std_ms=0.0, min_ms=ms, n=10, rse=0.0)


def correct(cand_ms, ref_ms, cpu_foreign=0.0):
    return WorkerReport(status="correct", runtime=timing(cand_ms), ref_runtime=timing(ref_ms), device_name="cpu",
                        torch_version="t",
                        figures=Figures(contention=Contention(cpu_foreign_share=cpu_foreign)))


def ftl(rep, baseline, peaks):
    return plausibility_flags(rep, CPU, Yardsticks(baseline, peaks), dtype="float32", max_speedup=10.0)


def test_peaks_measured_under_load_never_make_an_honest_kernel_impossible(monkeypatch):
    monkeypatch.setattr(roofline, "machine_tflops", lambda: THEORETICAL)
    gemm = Baseline(timing=timing(2.1), bytes_moved=6 * 10**6, flops=5 * 10**8)  # 0.5 GFLOP
    # 0.31 TFLOP/s (79 % of the idle measured peak): three times the peak measured under load, x2 headroom
    # included, which used to flag it; the cores' theoretical 0.589 TFLOP/s does not
    assert roofline.ceiling_ms(gemm, UNDER_LOAD, CPU, "float32") == pytest.approx(5e8 / 0.5888e9)
    assert ftl(correct(1.6, 2.1), gemm, UNDER_LOAD) == []
    assert ftl(correct(0.5, 2.1), gemm, UNDER_LOAD) == ["faster_than_light"]  # 1 TFLOP/s on 2 cores
    # idle, the measured peak x headroom (0.78) is above the theoretical one: the larger bound applies
    assert roofline.ceiling_ms(gemm, IDLE, CPU, "float32") == pytest.approx(5e8 / 0.78e9)
    # memory-bound: the copy measured under load is no bound at all; an uncontended one is
    relu = Baseline(timing=timing(1.4), bytes_moved=64 * 10**6)
    assert roofline.ceiling_ms(relu, UNDER_LOAD, CPU, "float32") is None
    assert ftl(correct(0.9, 1.4), relu, UNDER_LOAD) == []
    assert roofline.ceiling_ms(relu, IDLE, CPU, "float32") == pytest.approx(64e6 / 58e9 * 1e3)
    assert ftl(correct(0.5, 1.4), relu, IDLE) == ["faster_than_light"]
    # % SOL is held to the same ceiling: none while the copy was measured under load, never above 100 %
    assert roofline.sol_share(roofline.ceiling_ms(relu, UNDER_LOAD, CPU, "float32"), 0.9) is None
    idle = roofline.ceiling_ms(relu, IDLE, CPU, "float32")
    assert roofline.sol_share(idle, 2.2) == pytest.approx(64e6 / 58e9 / 2.2e-3)


def test_without_proc_the_ceiling_stays_the_measured_peaks_with_headroom(monkeypatch):
    monkeypatch.setattr(roofline, "machine_tflops", lambda: ({}, "no /proc/cpuinfo (Darwin)"))
    gemm = Baseline(bytes_moved=None, flops=10**9)
    assert roofline.ceiling_ms(gemm, Peaks(tflops={"fp32": 0.5}), CPU, "float32") == pytest.approx(1.0)
    assert roofline.ceiling_ms(gemm, None, CPU, "float32") is None


def test_a_contended_result_is_not_accused_of_slowing_the_reference():
    clean = Baseline(timing=timing(1.5))
    assert ftl(correct(1.0, 3.0), clean, None) == ["reference_slowed"]
    assert ftl(correct(1.0, 3.0, cpu_foreign=0.3), clean, None) == ["contended"]


def test_a_contended_result_is_not_called_implausible_but_can_still_be_faster_than_light(monkeypatch):
    monkeypatch.setattr(roofline, "machine_tflops", lambda: THEORETICAL)
    clean = Baseline(timing=timing(12.0))
    assert ftl(correct(1.0, 12.0), clean, None) == ["implausible_speedup"]
    # other processes slowed the reference beside it: 12x says nothing about the candidate
    assert ftl(correct(1.0, 12.0, cpu_foreign=0.5), clean, None) == ["contended"]
    # but nothing makes a kernel faster than the cores' theoretical peak: that stands under load too
    gemm = Baseline(timing=timing(2.1), bytes_moved=6 * 10**6, flops=5 * 10**8)
    assert ftl(correct(0.5, 2.1, cpu_foreign=0.5), gemm, UNDER_LOAD) == ["contended", "faster_than_light"]
