"""What one evaluation measured beside its verdict and its timing: how much of the work the candidate's own code
did (one profiled forward: child/coverage.py), what compute-sanitizer found (eval/sanitize.py), and NVIDIA Nsight
Compute's counters per kernel (eval/counters.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.records import Frozen


class KernelTime(Frozen):
    """Time one kernel or operator took in the profiled forward (child/coverage.py)."""

    name: str = Field(description="The candidate's kernel (cuda) or extension function (cpu), or PyTorch's operator")
    owner: Literal["candidate", "pytorch", "other"] = Field(description="Whose work it is (other: a kernel launched "
                                                                  "by neither, such as torch.compile's)")
    ms: float = Field(description="Device time (cuda) or wall time (cpu), milliseconds")


class Coverage(Frozen):
    """How much of one profiled forward's work the candidate's own code did (child/coverage.py)."""

    share: float | None = Field(description="candidate / (candidate + PyTorch + other) time, 0-1; None when none "
                                            "did measurable work")
    candidate_ms: float = Field(description="Time in the candidate's own kernels or extension functions")
    pytorch_ms: float = Field(description="Time in PyTorch's operators, wherever they were called from")
    other_ms: float = Field(default=0.0, description="Time in work neither PyTorch's operators nor the "
                            "candidate's own code did: torch.compile's generated kernels (on the CPU, the code it "
                            "generated), a CUDA graph replayed through PyTorch")
    calls: int = Field(description="Calls into the candidate's extension functions (and Triton launches)")
    triton_launches: int = Field(default=0, description="Of those, launches of Triton kernels")
    top: tuple[KernelTime, ...] = Field(default=(), description="The kernels and operators that took longest")
    backward: Coverage | None = Field(default=None, description="A training problem's backward, measured apart "
                                      "(the fields above cover forward and backward together)")

    @property
    def percent(self) -> str:
        return "-" if self.share is None else f"{100 * self.share:.0f}%"

    def feedback(self) -> str:
        """For the model: how much its own kernels did, and what did the rest."""
        if not self.calls:
            return "none of your extension's functions ran in forward: PyTorch did all the work"
        rest = [k for k in self.top if k.owner != "candidate"]
        text = f"your kernels did {self.percent} of the measured work"
        if rest and self.pytorch_ms + self.other_ms > 0:
            total = self.candidate_ms + self.pytorch_ms + self.other_ms
            who = "PyTorch and the kernels torch.compile generated" if self.other_ms > 0 else "PyTorch"
            text += f"; {who} did the rest: " + ", ".join(
                f"{k.name} {100 * k.ms / total:.0f}%" for k in rest[:3])
        return text


class Sanitized(Frozen):
    """What NVIDIA's compute-sanitizer found over one checked call of the candidate (`--sanitize`: eval/sanitize.py)."""

    tool: str = Field(description="memcheck or racecheck")
    errors: int | None = Field(default=None, description="Errors in the tool's summary; None: it gave none (it did "
                                                         "not finish)")
    exit_status: int | None = Field(default=None, description="The candidate's process's exit status under the tool "
                                                              "(its error status where it found errors)")
    lines: tuple[str, ...] = Field(default=(), description="The first lines of its reports (what, where, which "
                                                           "thread), paths renamed")
    seconds: float = Field(default=0.0, description="The sanitized run's wall time, its children's start included")


class KernelCounters(Frozen):
    """Nsight Compute's counters for one kernel launch in the profiled call (eval/counters.py)."""

    name: str = Field(description="The kernel's name, demangled")
    block: str = Field(default="", description="Its block size, as ncu gives it: (x, y, z)")
    grid: str = Field(default="", description="Its grid size: (x, y, z)")
    duration_us: float | None = Field(default=None, description="Its time on the device under the profiler, "
                                      "microseconds (replayed, caches flushed: longer than in a timed run)")
    dram_read_bytes: int | None = Field(default=None, description="Bytes it read from device memory")
    dram_write_bytes: int | None = Field(default=None, description="Bytes it wrote to device memory")
    compute_pct: float | None = Field(default=None, description="SM throughput, % of its peak (compute speed of "
                                      "light)")
    memory_pct: float | None = Field(default=None, description="Memory throughput, % of its peak (memory speed of "
                                     "light)")
    occupancy_pct: float | None = Field(default=None, description="Achieved occupancy: active warps, % of the "
                                        "most an SM holds")
    registers: int | None = Field(default=None, description="Registers per thread")


class Counters(Frozen):
    """Nsight Compute (ncu) over one checked call of the candidate: a short metric set per kernel it launched."""

    kernels: tuple[KernelCounters, ...] = Field(default=(), description="Each kernel launch of the call, in order "
                                                "(at most counters.KERNELS)")
    launches: int = Field(default=0, description="Kernel launches profiled in the call, all of them")
    error: str | None = Field(default=None, description="Why there are none: the run under ncu failed, or ncu could "
                              "not read the counters")
    seconds: float = Field(default=0.0, description="The profiled run's wall time, its children's start included")
