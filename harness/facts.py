"""What the prompt says about the hardware: queried where possible, datasheet peaks where known."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.device import cpu_name, cpuinfo
from harness.errors import InputError
from harness.process import child_env
from harness.types import DeviceInfo, TargetFacts

# Datasheet peaks (dense, no sparsity): memory bandwidth in GB/s and TFLOP/s per dtype. Matched by
# substring of the name torch reports, most specific first. Unknown GPUs simply get no peaks.
DATASHEET: list[tuple[str, float, dict[str, float]]] = [
    ("H200", 4800, {"fp32": 67, "tf32": 495, "bf16": 989, "fp16": 989, "fp8": 1979}),
    ("H100 PCIe", 2000, {"fp32": 51, "tf32": 378, "bf16": 756, "fp16": 756, "fp8": 1513}),
    ("H100", 3350, {"fp32": 67, "tf32": 495, "bf16": 989, "fp16": 989, "fp8": 1979}),
    ("A100-SXM4-80GB", 2039, {"fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312}),
    ("A100", 1555, {"fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312}),
    ("L40S", 864, {"fp32": 91.6, "tf32": 183, "bf16": 362, "fp16": 362, "fp8": 733}),
    ("RTX 4090", 1008, {"fp32": 82.6, "bf16": 165, "fp16": 165, "fp8": 330}),
]

CUDA_QUERY = """
import json, torch
p = torch.cuda.get_device_properties(0)
print(json.dumps({"name": p.name, "cc": f"{p.major}.{p.minor}", "sms": p.multi_processor_count,
                  "memory": p.total_memory, "l2": getattr(p, "L2_cache_size", 0)}))
"""


class FactsError(InputError, RuntimeError):
    """The GPU could not be queried."""


def datasheet(name: str) -> tuple[float | None, dict[str, float]]:
    for pattern, bandwidth, tflops in DATASHEET:
        if pattern in name:
            return bandwidth, tflops
    return None, {}


def cuda_facts(device: DeviceInfo) -> TargetFacts:
    env = child_env({"CUDA_VISIBLE_DEVICES": str(device.index)})
    proc = subprocess.run([sys.executable, "-c", CUDA_QUERY], capture_output=True, text=True, env=env,
                          timeout=300)
    if proc.returncode != 0:
        raise FactsError(f"querying {device.name} through torch failed:\n{proc.stderr.strip()[-2000:]}")
    q = json.loads(proc.stdout.strip().splitlines()[-1])
    bandwidth, tflops = datasheet(q["name"])
    return TargetFacts(target="cuda", name=q["name"], compute_capability=q["cc"], sm_count=q["sms"],
                       memory_gb=round(q["memory"] / 1e9, 1), l2_cache_mb=round(q["l2"] / 2**20, 1) or None,
                       bandwidth_gbs=bandwidth, peak_tflops=tflops)


def vector_isa(flags: set[str]) -> str | None:
    if "avx512f" in flags:
        return "AVX-512 (512-bit)"
    if "avx2" in flags:
        return "AVX2 + FMA (256-bit)" if "fma" in flags else "AVX2 (256-bit)"
    if "sve" in flags:
        return "SVE"
    if "asimd" in flags:
        return "NEON (128-bit)"
    if "sse4_2" in flags:
        return "SSE4.2 (128-bit)"
    return None


def usable_cores() -> int:
    """The CPUs this process may run on (hyperthreads count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def meminfo_bytes(field: str) -> int | None:
    """A /proc/meminfo figure (MemTotal, MemAvailable) in bytes; None where it cannot be read."""
    try:
        return next(int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                    if line.startswith(f"{field}:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def cpu_facts() -> TargetFacts:
    total = meminfo_bytes("MemTotal")
    memory_gb = None if total is None else round(total / 1e9, 1)
    return TargetFacts(target="cpu", name=cpu_name(), cores=usable_cores(), memory_gb=memory_gb,
                       vector_isa=vector_isa(set((cpuinfo("flags", "Features") or "").split())))


def gather(device: DeviceInfo) -> TargetFacts:
    return cuda_facts(device) if device.target == "cuda" else cpu_facts()
