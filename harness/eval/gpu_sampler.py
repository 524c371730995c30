"""How the GPU contention check (gpu_load.py) samples a GPU: NVML through pynvml (from nvidia-ml-py), else
nvidia-smi, else nothing. Each answers: the compute processes on a GPU, each one's SM utilization since a time
(None where unsupported), the device's utilization, and the GPU's minor number (to tell who holds it open)."""

from __future__ import annotations

import logging
import shutil
import subprocess
from typing import Protocol

from harness.errors import HarnessError

log = logging.getLogger(__name__)


class SamplerError(HarnessError, RuntimeError):
    """The GPU could not be queried this time."""


class Sampler(Protocol):
    """What is asked of the GPU, by its NVML / nvidia-smi index (DeviceInfo.index)."""

    name: str

    def compute_pids(self, index: int) -> list[int]: ...

    def process_util(self, index: int, since_s: float) -> dict[int, float] | None:
        """Per PID, the highest SM utilization (%) of its samples after `since_s` (epoch seconds);
        None where the device cannot say."""

    def device_util(self, index: int) -> float | None: ...

    def minor(self, index: int) -> int | None:
        """The device file's number (/dev/nvidiaN), if known."""

    def total_memory(self, index: int) -> int | None:
        """The device's memory in bytes, if known."""


class Nvml:
    """The sampler over pynvml (or a module that looks like it, in tests)."""

    name = "NVML"

    def __init__(self, nvml) -> None:
        self.nvml = nvml
        self._handles: dict[int, object] = {}
        self._no_process_util: set[int] = set()

    def _handle(self, index: int):
        if index not in self._handles:
            self._handles[index] = self._call(self.nvml.nvmlDeviceGetHandleByIndex, index)
        return self._handles[index]

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except self.nvml.NVMLError as exc:
            raise SamplerError(f"{fn.__name__}: {exc}") from None

    def compute_pids(self, index: int) -> list[int]:
        return [p.pid for p in self._call(self.nvml.nvmlDeviceGetComputeRunningProcesses, self._handle(index))]

    def process_util(self, index: int, since_s: float) -> dict[int, float] | None:
        if index in self._no_process_util:
            return None
        since_us = int(since_s * 1e6)
        try:
            samples = self.nvml.nvmlDeviceGetProcessUtilization(self._handle(index), since_us)
        except self.nvml.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code in (getattr(self.nvml, "NVML_ERROR_NOT_FOUND", 6), getattr(self.nvml, "NVML_SUCCESS", 0)):
                return {}  # no sample since then
            if code == getattr(self.nvml, "NVML_ERROR_NOT_SUPPORTED", 3):
                self._no_process_util.add(index)
            return None
        util: dict[int, float] = {}
        for s in samples:
            if s.timeStamp > since_us and 0 <= s.smUtil <= 100:  # out of range: "not available"
                util[s.pid] = max(util.get(s.pid, 0.0), float(s.smUtil))
        return util

    def device_util(self, index: int) -> float | None:
        try:
            return float(self.nvml.nvmlDeviceGetUtilizationRates(self._handle(index)).gpu)
        except (self.nvml.NVMLError, SamplerError):
            return None

    def minor(self, index: int) -> int | None:
        try:
            return int(self.nvml.nvmlDeviceGetMinorNumber(self._handle(index)))
        except (self.nvml.NVMLError, SamplerError, AttributeError):
            return None

    def total_memory(self, index: int) -> int | None:
        try:
            return int(self.nvml.nvmlDeviceGetMemoryInfo(self._handle(index)).total)
        except (self.nvml.NVMLError, SamplerError, AttributeError):
            return None


class NvidiaSmi:
    """The sampler over nvidia-smi: no per-process utilization, ~50 ms a call."""

    name = "nvidia-smi"

    def _query(self, index: int, what: str) -> list[str]:
        try:
            out = subprocess.run(["nvidia-smi", what, "--format=csv,noheader,nounits", "-i", str(index)],
                                 capture_output=True, text=True, timeout=15, check=True).stdout
        except (subprocess.SubprocessError, OSError) as exc:
            raise SamplerError(f"nvidia-smi {what}: {exc}") from None
        return [line.split(",")[0].strip() for line in out.splitlines()]

    def compute_pids(self, index: int) -> list[int]:
        return [int(v) for v in self._query(index, "--query-compute-apps=pid") if v.isdigit()]

    def process_util(self, index: int, since_s: float) -> dict[int, float] | None:
        return None

    def device_util(self, index: int) -> float | None:
        try:
            values = [float(v) for v in self._query(index, "--query-gpu=utilization.gpu") if v.isdigit()]
        except SamplerError:
            return None
        return values[0] if values else None

    def minor(self, index: int) -> int | None:
        return None

    def total_memory(self, index: int) -> int | None:
        return None


def open_sampler() -> Sampler | None:
    """NVML if pynvml imports and initializes, else nvidia-smi if it answers, else None."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return Nvml(pynvml)
    except Exception as exc:  # noqa: BLE001 - ImportError, NVMLError (no driver, no library), anything else
        log.debug("no NVML: %s", exc)
    if shutil.which("nvidia-smi"):
        sampler = NvidiaSmi()
        try:
            sampler.compute_pids(0)
            return sampler
        except SamplerError:
            pass
    return None
