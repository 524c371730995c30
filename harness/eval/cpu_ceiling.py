"""The CPU's ceiling for `faster_than_light`: figures no correct kernel can beat, so that the flag only ever
rests on a true upper bound. Never imports torch.

The impossibility flag, and `% SOL` with it, cannot rest on the measured peaks: a peak measured while other
processes used the cores is too low, and an honest kernel timed at a quieter moment would look impossible (or reach
174 % of the speed of light). So on the cpu target (roofline.ceiling_ms):

Compute, the cores' theoretical peak (theoretical_tflops):
    fp32 FLOP/s = cores x clock x fp32 lanes x 2 (an FMA is two FLOPs) x FMA units per core
    cores       the CPUs this process may run on (os.sched_getaffinity; hyperthreads count as cores, which
                only raises the figure)
    clock       the highest cpufreq cpuinfo_max_freq (what lscpu shows as "CPU max MHz"), times
                TURBO_HEADROOM where the global `boost` switch (acpi-cpufreq) says cores run above it;
                without cpufreq (virtual machines): the larger of the "model name" GHz and "cpu MHz"
                times TURBO_HEADROOM (server and desktop parts turbo to at most ~1.9x their base clock);
                nothing known: MAX_CLOCK_GHZ
    lanes       of the widest vector ISA in the flags: avx512f 16, avx/avx2 8, sse 4; arm: sve (the
                vector length from /proc/sys/abi/sve_default_vector_length, else 512-bit: 16), asimd 4
    FMA units   2 per x86 core (no x86 core issues more than two vector FMAs a cycle), 4 per arm core
                (Neoverse V1/V2 and Apple cores have four 128-bit FMA pipes)
    bf16, fp16  the fp32 figure times LOW_PRECISION's factor for the flags present (AMX 32, AVX-512 BF16 or
                FP16 2, arm bf16 4, arm fp16 2), else 1 (the values are converted and computed in fp32)
The ceiling per dtype is max(theoretical, CPU_HEADROOM x measured): the measured term only matters where
the flags hide a unit (a hypervisor that masks AMX), and never lowers the bound.

Memory (bandwidth_gbs): no file states the memory's peak, so it is measured, and the ceiling is the
fastest single copy (best of PEAK_RUNS in one measurement, and the running maximum over every measurement
of this machine in the store, merge_peaks) times CPU_HEADROOM (2: after the cache flush a kernel's outputs
can stay in cache, and the copy counts its bytes read + written while a write-allocating copy moves a
third more). Load only ever slows a copy, so the maximum is the best estimate of the truth; but a
measurement during which other processes used more than CONTENDED_SHARE of the cores is no
bound at all: while no uncontended measurement is stored, there is no memory ceiling (the flag then
rests on compute alone), and the next run measures the copy again (needs_measuring, a few seconds).

Where /proc is missing (macOS), neither the theoretical peak nor contention is known: the ceiling stays
the measured peaks x CPU_HEADROOM.
"""

from __future__ import annotations

import functools
import os
import platform
import re
from collections.abc import Sequence
from pathlib import Path

from harness.types import Peaks

CPU_HEADROOM = 2.0
TURBO_HEADROOM = 2.0
MAX_CLOCK_GHZ = 6.5     # no core sold runs faster
X86_FMA_UNITS = 2
ARM_FMA_UNITS = 4
# dtype -> (flag, factor over the fp32 FLOP/s); the largest factor whose flag is present applies
LOW_PRECISION: dict[str, tuple[tuple[str, float], ...]] = {
    "bf16": (("amx_bf16", 32.0), ("sme", 32.0), ("bf16", 4.0), ("avx512_bf16", 2.0)),
    "fp16": (("amx_fp16", 32.0), ("sme", 32.0), ("avx512_fp16", 2.0), ("asimdhp", 2.0), ("fphp", 2.0)),
}


CONTENDED_SHARE = 0.10  # other processes used more than this share of the cores' time: contended

def cpuinfo_flags(text: str) -> set[str]:
    """The feature flags of /proc/cpuinfo (x86 `flags`, arm `Features`), of every processor."""
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return flags


def stated_ghz(text: str) -> float | None:
    """The highest clock /proc/cpuinfo states: a "model name" like "... @ 2.30GHz", or "cpu MHz" lines."""
    found = [float(m) for m in re.findall(r"@\s*([\d.]+)\s*GHz", text)]
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "cpu MHz":
            try:
                found.append(float(value) / 1000)
            except ValueError:
                pass
    return max(found, default=None)


def vector_units(flags: set[str], sve_bytes: int | None = None) -> tuple[int, int, str] | None:
    """(fp32 lanes, FMA units per core, which ISA) of the widest vector ISA in `flags`."""
    if "avx512f" in flags:
        return 16, X86_FMA_UNITS, "avx512f"
    if "avx2" in flags or "avx" in flags:
        return 8, X86_FMA_UNITS, "avx2" if "avx2" in flags else "avx"
    if "sve" in flags:
        return max(4, (sve_bytes or 64) // 4), ARM_FMA_UNITS, "sve"
    if "asimd" in flags or "neon" in flags:
        return 4, ARM_FMA_UNITS, "asimd"
    if "sse" in flags or "sse2" in flags:
        return 4, X86_FMA_UNITS, "sse"
    return None


def clock_ghz(text: str, max_freq_khz: list[int], boost: bool) -> tuple[float, str]:
    """An upper bound of the cores' clock, and where it came from."""
    if max_freq_khz:
        ghz = max(max_freq_khz) / 1e6
        if boost:
            return ghz * TURBO_HEADROOM, f"{TURBO_HEADROOM:g} x cpuinfo_max_freq {ghz:.2f} GHz (boost on)"
        return ghz, f"cpuinfo_max_freq {ghz:.2f} GHz"
    stated = stated_ghz(text)
    if stated:
        return stated * TURBO_HEADROOM, f"{TURBO_HEADROOM:g} x {stated:.2f} GHz from /proc/cpuinfo (no cpufreq)"
    return MAX_CLOCK_GHZ, f"{MAX_CLOCK_GHZ:g} GHz (no clock known)"


def theoretical_tflops(text: str, cores: int, max_freq_khz: Sequence[int] = (), boost: bool = False,
                       sve_bytes: int | None = None) -> tuple[dict[str, float], str]:
    """The theoretical peak TFLOP/s per dtype (fp32, bf16, fp16) from a /proc/cpuinfo text and what /sys says,
    with how it was computed; ({}, why) when the vector ISA is unknown."""
    flags = cpuinfo_flags(text)
    units = vector_units(flags, sve_bytes)
    if units is None or cores < 1:
        return {}, "no known vector ISA in /proc/cpuinfo"
    lanes, fma_units, isa = units
    ghz, clock_from = clock_ghz(text, list(max_freq_khz), boost)
    fp32 = cores * ghz * 1e9 * lanes * 2 * fma_units / 1e12
    tflops = {"fp32": fp32}
    for dtype, table in LOW_PRECISION.items():
        tflops[dtype] = fp32 * max((factor for flag, factor in table if flag in flags), default=1.0)
    how = (f"{cores} cores x {ghz:.2f} GHz ({clock_from}) x {lanes} fp32 lanes ({isa}) x 2 (FMA) x "
           f"{fma_units} FMA units = {fp32:.3f} TFLOP/s fp32; bf16 {tflops['bf16']:.3f}, fp16 {tflops['fp16']:.3f}")
    return tflops, how


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def machine_tflops() -> tuple[dict[str, float], str]:
    """This machine's theoretical peak (theoretical_tflops of /proc/cpuinfo and /sys); ({}, why) off Linux."""
    text = _read("/proc/cpuinfo")
    if text is None:
        return {}, f"no /proc/cpuinfo ({platform.system()})"
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    freqs = []
    for cpu in cpus:
        khz = _read(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq")
        if khz and khz.strip().isdigit():
            freqs.append(int(khz))
    boost = (_read("/sys/devices/system/cpu/cpufreq/boost") or "").strip() == "1"
    sve = (_read("/proc/sys/abi/sve_default_vector_length") or "").strip()
    return theoretical_tflops(text, len(cpus), freqs, boost, int(sve) if sve.isdigit() else None)


def contended(peaks: Peaks) -> bool:
    return peaks.foreign_cpu is not None and peaks.foreign_cpu > CONTENDED_SHARE


def ceiling_tflops(peaks: Peaks | None, theoretical: dict[str, float]) -> dict[str, float]:
    """Per dtype: max(theoretical, CPU_HEADROOM x measured); measured x CPU_HEADROOM alone where the
    theoretical peak is unknown (no /proc/cpuinfo)."""
    measured = peaks.tflops if peaks else {}
    if not theoretical:
        return {k: v * CPU_HEADROOM for k, v in measured.items()}
    return {k: max(theoretical.get(k, 0.0), CPU_HEADROOM * measured.get(k, 0.0)) for k in {*theoretical, *measured}}


def ceiling_bandwidth_gbs(peaks: Peaks | None) -> float | None:
    """CPU_HEADROOM x the fastest copy measured on this machine; None while every measurement was contended."""
    if peaks is None or contended(peaks):
        return None
    best = max(filter(None, (peaks.best_bandwidth_gbs, peaks.bandwidth_gbs)), default=None)
    return best * CPU_HEADROOM if best else None


def merge_peaks(new: Peaks, earlier: Peaks | None) -> Peaks:
    """A new measurement, keeping the running maximum of the fastest copy and the least contention of every
    earlier one. The measured medians are the new measurement's (the GEMMs the earlier one's where the new one
    measured only the copy)."""
    if earlier is None:
        return new
    best = max(filter(None, (new.best_bandwidth_gbs, new.bandwidth_gbs, earlier.best_bandwidth_gbs,
                             earlier.bandwidth_gbs)), default=None)
    foreign = min((f for f in (new.foreign_cpu, earlier.foreign_cpu) if f is not None), default=None)
    return new.model_copy(update={"best_bandwidth_gbs": best, "foreign_cpu": foreign,
                                  "tflops": new.tflops or earlier.tflops,
                                  "details": {**earlier.details, **new.details}})


def needs_measuring(stored: Peaks) -> bool:
    """A stored cpu measurement's copy is measured again (and merged) while it predates the fastest-copy
    figure or every measurement so far was contended."""
    return stored.best_bandwidth_gbs is None or contended(stored)
