"""NVIDIA Nsight Compute's counters for the agents' `profile` tool: a candidate whose outputs were judged is run once
more in new children, its runner under `ncu` inside its own sandbox (as compute-sanitizer's is: sanitize.py), set-up
and trial 0 on the problem as written. The runner makes its first checked call once unprofiled (compiles, autotuning
and caches) and then again between cudaProfilerStart and Stop (child/runner.py), and ncu (--profile-from-start off)
measures a short metric set per kernel launched in between. It prints them as CSV when the runner ends, in the
runner's log, where the parent reads them.

Advice, not evidence: what the run under ncu shows never changes a verdict, and a candidate could print lines in
ncu's shape. ncu's own clock control is off (--clock-control none), so a profile beside other evaluations on the same
GPU leaves its clocks as they are; caches are flushed before each kernel (ncu's default), so its durations are those
of a cold kernel and longer than a timed run's."""

from __future__ import annotations

import csv
import re

from harness.eval import cuda_tools
from harness.eval.children import RunnerTool, observe_under
from harness.eval.job import JobContext
from harness.evidence import Counters, KernelCounters
from harness.markers import PROFILED_CALL_ENV
from harness.types import HARNESS_ERROR, RAN, EvalResult

PATH_ENV = "HARNESS_NCU"  # the ncu to run (a command line; default: PATH's, else CUDA_HOME's)
# metric -> the KernelCounters field it fills; few enough for ncu to gather in a pass or two per kernel
METRICS = {
    "gpu__time_duration.sum": "duration_us",
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "compute_pct",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy_pct",
    "launch__registers_per_thread": "registers",
}
KERNELS = 16  # launches kept per call (all are counted)
LAUNCH_LIMIT = 200  # launches ncu profiles at most (-c): a call that launches thousands would take minutes
_US_PER = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}  # a duration's unit
_REQUIRED = ("ID", "Kernel Name", "Metric Name", "Metric Value")  # the report's columns parsed() cannot do without
_CONNECTED = re.compile(r"^==PROF==|^==ERROR==|^==WARNING==")


def executable() -> list[str] | None:
    """The ncu to run: $HARNESS_NCU (a command line), else PATH's, else the CUDA toolkit's."""
    return cuda_tools.command("ncu", PATH_ENV)


def available(target: str) -> bool:
    """Whether counters can be read: a GPU, and ncu."""
    return target == "cuda" and executable() is not None


def runner_tool() -> RunnerTool:
    exe = executable()
    assert exe is not None  # available() was asked first
    return RunnerTool((*exe, "--profile-from-start", "off", "--clock-control", "none", "--launch-count",
                       str(LAUNCH_LIMIT), "--metrics", ",".join(METRICS), "--csv", "--print-units", "base"),
                      {PROFILED_CALL_ENV: "1"})


def counted(ctx: JobContext, result: EvalResult) -> EvalResult:
    """`result` (correct or incorrect: its candidate ran) with ncu's counters from a run of its own; its verdict as
    it was, whatever that run shows."""
    observed, seconds = observe_under(ctx, runner_tool())
    seconds = round(seconds, 3)
    if isinstance(observed, EvalResult):  # it timed out, or the judge failed
        if observed.status == HARNESS_ERROR:
            return observed
        return result.model_copy(update={"counters": Counters(error=f"the run under ncu: {observed.error}",
                                                              seconds=seconds)})
    kernels, error = parsed(observed.runner_log)
    if error is None and observed.report.status not in RAN:
        error = f"the run under ncu ended {observed.report.status}: {observed.report.error}"
    if error is None and not kernels:
        error = "no kernel ran in the profiled call (its work happened before it, or on the CPU)"
    counters = Counters(kernels=tuple(kernels[:KERNELS]), launches=len(kernels), error=error, seconds=seconds)
    return result.model_copy(update={"counters": counters})


def parsed(log: str) -> tuple[list[KernelCounters], str | None]:
    """The kernels of ncu's CSV report (one row per kernel and metric, after its header), in launch order; or why
    there is none: ncu's own error lines. Columns are found by name; only ID, Kernel Name, Metric Name and Metric
    Value must be there."""
    lines = log.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith('"ID"') and all(
        f'"{name}"' in line for name in _REQUIRED)), None)
    if header is None:
        said = [line for line in lines if _CONNECTED.match(line) and "==PROF== Profiling" not in line]
        return [], "ncu printed no metrics" + (": " + " / ".join(said[-4:]) if said else "")
    rows = csv.reader(line for line in lines[header:] if line.startswith('"'))
    columns = {name: i for i, name in enumerate(next(rows))}

    def cell(row: list[str], name: str) -> str:
        return row[columns[name]] if name in columns else ""

    kernels: dict[str, dict] = {}
    for row in rows:
        if len(row) != len(columns) or not cell(row, "ID").isdigit():
            continue
        kernel = kernels.setdefault(cell(row, "ID"), {
            "name": cell(row, "Kernel Name"), "block": cell(row, "Block Size"), "grid": cell(row, "Grid Size")})
        field = METRICS.get(cell(row, "Metric Name"))
        value = _number(cell(row, "Metric Value"))
        if field == "duration_us" and value is not None:
            scale = _US_PER.get(cell(row, "Metric Unit") or "ns")  # ncu's base unit for a duration
            value = None if scale is None else value * scale
        if field is not None and value is not None:
            kernel[field] = value
    return [KernelCounters(**kernel) for _, kernel in sorted(kernels.items(), key=lambda item: int(item[0]))], None


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None  # n/a
