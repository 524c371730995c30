"""Find the device to evaluate on without importing torch: nvidia-smi for GPUs, /proc for the CPU."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

from harness.errors import InputError
from harness.types import DeviceInfo, Target


class DeviceError(InputError, RuntimeError):
    """The requested target cannot run here."""


def visible_gpus() -> list[DeviceInfo]:
    """NVIDIA GPUs nvidia-smi reports, filtered by CUDA_VISIBLE_DEVICES like CUDA itself does."""
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,uuid,name,compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    rows = [[field.strip() for field in line.split(",")] for line in out.strip().splitlines() if line.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        rows = [r for w in wanted for r in rows if w == r[0] or r[1].startswith(w)]
    gpus = []
    for index, _uuid, name, cap in rows:
        major, _, minor = cap.partition(".")
        # sm_XYa code runs only on the exact GPU present, which is the one we build for.
        arch = f"{major}.{minor}" + ("a" if major.isdigit() and int(major) >= 9 else "")
        gpus.append(DeviceInfo(target="cuda", name=name, index=int(index), arch=arch))
    return gpus


def cpuinfo(*fields: str) -> str | None:
    """The value of the first /proc/cpuinfo line starting with one of `fields` (Linux only)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(fields):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_name() -> str:
    return cpuinfo("model name") or platform.processor() or platform.machine()


def discover(target: Target | None = None) -> DeviceInfo:
    """The device for `target` (the first visible GPU for cuda); `None` picks cuda if a GPU is visible."""
    gpus = visible_gpus()
    target = target or ("cuda" if gpus else "cpu")
    if target == "cpu":
        return DeviceInfo(target="cpu", name=cpu_name())
    if not gpus:
        raise DeviceError("--target cuda needs an NVIDIA GPU, and nvidia-smi shows none here "
                          "(check the driver and CUDA_VISIBLE_DEVICES, or use --target cpu)")
    return gpus[0]


def devices_like(device: DeviceInfo, limit: int = 0) -> list[DeviceInfo]:
    """The devices to evaluate on in parallel: every visible GPU of `device`'s model (at most `limit`, 0 for
    all), since results and baselines are per device model; the CPU is one device."""
    if device.target == "cpu":
        return [device]
    same = [d for d in visible_gpus() if d.name == device.name] or [device]
    return same[:limit] if limit > 0 else same
