"""Boundary models: what crosses a module or process boundary, as frozen pydantic models.

Data flows one way: Problem -> CompletionRequest -> Completion -> Candidate -> BuildResult -> WorkerReport
-> EvalResult -> store -> report, and an EvalResult becomes the next turn's feedback.
Units are in the names (`_ms`, `_s`), hashes are `*_sha256`, statuses are Literals.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import ConfigDict, Field

from harness.checks import CheckResult, CheckSpec
from harness.evidence import Counters, Coverage, Sanitized
from harness.figures import Figures
from harness.flags import counts
from harness.records import Frozen
from harness.workloads import DEFAULT, Workload, WorkloadResult

Target = Literal["cuda", "cpu"]
# What the prompt asks the model to write: cuda, C++/CUDA through load_inline (C++ on the cpu target), or triton.
Backend = Literal["cuda", "triton"]
BACKENDS: tuple[Backend, ...] = ("cuda", "triton")
TARGETS: tuple[Target, ...] = ("cuda", "cpu")

Status = Literal["correct", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "no_code",
                 "harness_error"]
STATUSES: tuple[Status, ...] = (
    "correct", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "no_code", "harness_error",
)
# Not a verdict on the candidate: the harness or the machine failed (its own files, a child that could not
# start, an exception in harness code). Never stored as reusable, counted in no rate, retried next run.
HARNESS_ERROR: Final = "harness_error"  # Final: its literal type, a Status and a BuildStatus alike
VERDICTS: tuple[Status, ...] = tuple(s for s in STATUSES if s != HARNESS_ERROR)
# The verdicts of a candidate whose code ran to a judged output: what a run under a tool (compute-sanitizer, ncu)
# has something to look at in.
RAN: tuple[Status, ...] = ("correct", "incorrect")

BuildStatus = Literal["ok", "compile_error", "timeout", "harness_error"]

# Bump when the correctness or timing protocol changes: stored results of another version are not reused.
PROTOCOL_VERSION = 20  # 2: fp32 evaluations with TF32 off in cuDNN too; 3: integrity rules and defenses; 4:
# harness_error, contention checks, the cpu speed of light as a true upper bound; 5: every evaluation checks that the
# reference output is informative, and one value everywhere where the reference varies is incorrect; 6: one more call,
# profiled, for the candidate's coverage; 7: coverage decides (no_kernel_ran, low_coverage), and the seed check samples
# scattered positions; 8: on the GPU the stream is held before each timed call, so the host's launch gap is not timed;
# 9: coverage counts kernels launched by neither PyTorch's operators nor the candidate (torch.compile's) as not the
# candidate's; 10: the candidate runs in a process of its own (the runner), judged by one no candidate code runs in; 11:
# cpu coverage: median of 5 calls; 12: an output slower to hand over than a copy of it is hidden_work; 13: the reference
# timed with the candidate stopped, timing_disputed less a round trip; 14: on the GPU, outputs cross to the judge device
# to device, and a hand-over is set against a copy on the device; 15: the device outbox is exported once; 16: builds
# beside GPU evaluations yield the cores; 17: trial 0's second run poisons only the cached blocks; 18: stops wait out D
# state; 19: a flag that blames the candidate on one evaluation's clocks stands only if a second one raises it; 20:
# workloads, and outputs judged against the float64 truth.


class Problem(Frozen):
    """A reference problem file, indexed without importing it."""

    id: str = Field(description="Path under problems/ without .py (level1/reverse_cumsum), or the file's path")
    path: str = Field(description="Absolute path of the problem file")
    level: int | None = Field(description="Difficulty level from a levelN/ folder or a LEVEL constant")
    sha256: str = Field(description="SHA-256 of the file's bytes")
    source: str = Field(exclude=True, repr=False,
                        description="The file's text as indexed: every child imports this text, never the file "
                                    "again, so a file changed during a run (a candidate's write where no sandbox "
                                    "stops it) changes no reference of that run")
    description: str = Field(description="First line of the module docstring, or ''")
    atol: float | None = Field(default=None, description="Absolute tolerance override (TOLERANCE / ATOL)")
    rtol: float | None = Field(default=None, description="Relative tolerance override (TOLERANCE / RTOL)")
    tags: tuple[str, ...] = Field(default=(), description="TAGS: the op family and memory-bound or compute-bound")
    target: Target = Field(default="cuda", description="Where it is meant to run: cpu for files in a cpu/ folder "
                                                       "or with TARGET = 'cpu', else cuda")
    memory_gb: float | None = Field(default=None, description="MEMORY_GB: declared peak device memory, "
                                                              "required above 24 GB")
    flops: int | None = Field(default=None, description="FLOPS: minimal FLOPs, where the FLOP counter cannot "
                                                        "count the op")
    bytes: int | None = Field(default=None, description="BYTES: minimal bytes moved, where inputs + parameters "
                                                        "+ outputs is not it")
    max_speedup: float | None = Field(default=None, description="MAX_SPEEDUP: the plausible ceiling over eager "
                                                                "for this problem, where eager is far from the "
                                                                "speed of light (replaces --max-speedup)")
    min_coverage: float | None = Field(default=None, description="MIN_COVERAGE: the share of the work the "
                                                                 "candidate's own code must do, where the default "
                                                                 "does not fit the problem (replaces --min-coverage)")
    workloads: tuple[Workload, ...] = Field(default=(DEFAULT,), description="Its input sets: the file as written "
                                            "(default) first, then WORKLOADS")
    training: bool = Field(default=False, description="TRAINING: evaluated in training mode, each call a forward "
                                                      "and a backward, outputs and gradients judged")


class Candidate(Frozen):
    """A candidate solution: Python source defining ModelNew."""

    path: str | None = Field(description="The path the user gave, or None for generated code")
    source: str = Field(description="Full Python source")
    sha256: str = Field(description="SHA-256 of the source text (UTF-8)")


class DeviceInfo(Frozen):
    """The device a candidate is evaluated on, discovered without importing torch."""

    target: Target = Field(description="cuda or cpu")
    name: str = Field(description="Device name, e.g. 'NVIDIA H100 80GB HBM3' or the CPU model")
    index: int | None = Field(default=None, description="GPU index as the parent sees it; None on cpu")
    arch: str | None = Field(default=None, description="TORCH_CUDA_ARCH_LIST value pinned for builds (e.g. '9.0a')")


class BuildResult(Frozen):
    """Outcome of building (importing) a candidate in its own hash-keyed directory."""

    status: BuildStatus = Field(description="ok, compile_error or timeout")
    build_sha256: str = Field(description="Key of the build: source, target, arch, torch and Python versions")
    directory: str = Field(description="Build directory holding candidate.py, the extensions and build.log")
    duration_s: float = Field(description="Wall time of the build that produced this result")
    log: str = Field(description="Full compiler and import output")
    error: str | None = Field(default=None, description="One-paragraph summary of the failure, or None")
    cached: bool = Field(default=False, description="Served from an earlier build of the same key")


class Timing(Frozen):
    """Summary of repeated timed calls of one function."""

    median_ms: float = Field(description="Median time per call")
    mean_ms: float = Field(description="Mean time per call")
    std_ms: float = Field(description="Sample standard deviation")
    min_ms: float = Field(description="Fastest call")
    n: int = Field(description="Timed calls")
    rse: float = Field(description="Relative standard error of the mean: std / sqrt(n) / mean")
    wall_median_ms: float | None = Field(default=None, description="Median host wall time of the same calls, "
                                                                   "device-wide sync included")
    quantiles_ms: tuple[float, ...] = Field(default=(), description="The calls' 0th, 5th, ..., 100th percentiles "
                                            "(21 values; empty for fewer than two calls, or results stored before)")
    forward_median_ms: float | None = Field(default=None, description="A training problem's: median time of each "
                                            "call's forward, from its start to where its backward starts")
    backward_median_ms: float | None = Field(default=None, description="A training problem's: median time of each "
                                             "call's backward (the rest of the call)")


class EvalResult(Frozen):
    """One candidate evaluated on one problem: the unit that is stored and reported."""

    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)  # figures: `stages` in JSON

    problem_id: str = Field(description="Problem id")
    problem_sha256: str = Field(description="SHA-256 of the problem file")
    candidate_path: str | None = Field(description="Path of the candidate as given, if any")
    candidate_sha256: str = Field(description="SHA-256 of the candidate source")
    target: Target = Field(description="cuda or cpu")
    device_name: str = Field(description="Device the evaluation ran on")
    torch_version: str = Field(description="torch version used")
    protocol_version: int = Field(default=PROTOCOL_VERSION, description="Evaluation protocol version")
    build_protocol: int | None = Field(default=None, description="Build recipe version (build.BUILD_PROTOCOL); a "
                                                                 "stored result of another recipe is not reused")
    harness_version: str | None = Field(default=None, description="kernel-harness version that produced it")
    dtype: str = Field(default="float32", description="Evaluation dtype of floating inputs and parameters")
    status: Status = Field(description="Verdict")
    speedup: float | None = Field(default=None, description="ref median / candidate median; None unless correct")
    runtime: Timing | None = Field(default=None, description="Candidate timing")
    ref_runtime: Timing | None = Field(default=None, description="Reference timing")
    check: CheckResult | None = Field(default=None, description="Correctness details")
    error: str | None = Field(default=None, description="Error message, or None")
    output: str | None = Field(default=None, description="The end of what the candidate printed in its build, set-up "
                               "and first checked call (its stdout and stderr, the harness's own lines and paths left "
                               "out; eval/said.py), or None")
    flags: tuple[str, ...] = Field(default=(), description="Measurement warnings, empty when clean")
    uninformative: str | None = Field(default=None, description="Why the problem's reference output cannot tell a "
                                  "right answer from a wrong one (flag uninformative_problem), or None")
    build: BuildResult | None = Field(default=None, description="Build outcome (log included)")
    coverage: Coverage | None = Field(default=None, description="Share of the work the candidate's own code did, "
                                      "from one profiled forward after the checks; None if not measured")
    workloads: tuple[WorkloadResult, ...] = Field(default=(), description="Per workload: its verdict, errors and "
                                                  "timed speedup (empty for results that never ran)")
    sanitizer: Sanitized | None = Field(default=None, description="compute-sanitizer's findings (--sanitize), or None")
    counters: Counters | None = Field(default=None, description="Nsight Compute's counters per kernel of one checked "
                                      "call (the agents' profile tool, on a GPU with ncu), or None")
    check_spec: CheckSpec = Field(default_factory=CheckSpec, description="The check that judged it")
    figures: Figures = Field(default_factory=Figures, alias="stages", description="Where its seconds went, its "
                             "processes, the load beside it, what its flags were decided from (JSON: `stages`, flat)")
    cached: bool = Field(default=False, description="Served from the store instead of re-evaluated")

    @property
    def counted(self) -> bool:
        """Correct, with a speedup, and no flag that makes its speed untrustworthy (flags.counts)."""
        return counts(self.status, self.speedup, self.flags)

    @property
    def candidate_label(self) -> str:
        """The candidate's path, or a hash prefix for generated code."""
        return self.candidate_path or self.candidate_sha256[:12]

    @property
    def runtime_ms(self) -> float | None:
        return self.runtime.median_ms if self.runtime else None

    @property
    def ref_runtime_ms(self) -> float | None:
        return self.ref_runtime.median_ms if self.ref_runtime else None

    def summary(self) -> dict:
        """The flat record `harness eval --json` prints, one per line."""
        return {
            "problem": self.problem_id,
            "candidate": self.candidate_path,
            "status": self.status,
            "speedup": self.speedup,
            "runtime_ms": self.runtime_ms,
            "ref_runtime_ms": self.ref_runtime_ms,
            # a training problem's halves of each (null elsewhere)
            "forward_ms": self.runtime.forward_median_ms if self.runtime else None,
            "backward_ms": self.runtime.backward_median_ms if self.runtime else None,
            "ref_forward_ms": self.ref_runtime.forward_median_ms if self.ref_runtime else None,
            "ref_backward_ms": self.ref_runtime.backward_median_ms if self.ref_runtime else None,
            "error": self.error,
            "output": self.output,
            "flags": list(self.flags),
            "uninformative": self.uninformative,
            "counted": self.counted,
            "coverage": self.coverage.share if self.coverage else None,
            "max_abs_err": self.check.max_abs_err if self.check else None,
            "max_rel_err": self.check.max_rel_err if self.check else None,
            "mismatch_fraction": self.check.mismatch_fraction if self.check else None,
            "device": self.device_name, "target": self.target, "dtype": self.dtype,
            "candidate_sha256": self.candidate_sha256,
            "cached": self.cached,
            "stages": {name: round(value, 3) for name, value in self.figures.flat().items()},
            "check": self.check_spec.name,
            "workloads": [w.record() for w in self.workloads],
            "sanitizer": self.sanitizer.model_dump() if self.sanitizer else None,
            "counters": self.counters.model_dump() if self.counters else None,
        }


class TimingSettings(Frozen):
    """How long and how precisely to time (adaptive stopping)."""

    warmup_runs: int | None = Field(default=None, ge=0, description="Untimed calls of each function first; unset: "
                                    "1 on the cpu target, 3 on a GPU")
    min_runs: int = Field(default=10, description="Timed calls of each function before stopping is considered")
    max_runs: int = Field(default=1000, description="Hard cap on timed calls of each function")
    target_rse: float = Field(default=0.01, description="Stop once every relative standard error is at most this")
    budget_s: float | None = Field(default=None, description="Stop after this much timing, converged or not (>= 3 "
                                   "runs); unset: 2 s on the cpu target, 5 s on a GPU")

    def on(self, target: str) -> TimingSettings:
        """These settings with the target's budget and warm-up where none was set. A cpu timed call costs ~100 ms of
        cache flush and fresh inputs around a millisecond of work, so its timing ends at the budget whatever it is (2 s
        keeps a first run short; docs/timing.md says what 5 s buys there), and one untimed call after the check's
        trials leaves nothing to warm; a GPU's usually converges well within its 5 s."""
        cpu = target == "cpu"
        return self.model_copy(update={"budget_s": self.budget_s if self.budget_s is not None else 2.0 if cpu else 5.0,
                                       "warmup_runs": self.warmup_runs if self.warmup_runs is not None
                                       else 1 if cpu else 3})

    def budget(self) -> float:
        """The budget of settings made for a target (`on`)."""
        if self.budget_s is None:
            raise ValueError("timing settings used before a target was chosen (TimingSettings.on)")
        return self.budget_s

    def warmups(self) -> int:
        """The untimed calls of each function, in settings made for a target (`on`)."""
        if self.warmup_runs is None:
            raise ValueError("timing settings used before a target was chosen (TimingSettings.on)")
        return self.warmup_runs


BASELINE_KINDS: dict[str, str | None] = {
    # kind -> torch.compile mode (None: the eager reference itself)
    "eager": None,
    "compile": "default",
    "compile-max-autotune": "max-autotune-no-cudagraphs",
}
COMPILE_KINDS = tuple(k for k, mode in BASELINE_KINDS.items() if mode)


class Baseline(Frozen):
    """One way of running a problem's reference on a device, measured before any candidate: stored per kind."""

    timing: Timing | None = Field(default=None, description="Timed in a process no candidate touched; None if "
                                                            "it failed")
    error: str | None = Field(default=None, description="Why it could not be measured (torch.compile failed, "
                                                        "or its output is wrong)")
    eager_ms: float | None = Field(default=None, description="For a torch.compile kind: the eager reference's "
                                                             "median, timed interleaved with it")
    bytes_moved: int | None = Field(default=None, description="Minimal bytes moved: BYTES, else inputs + "
                                                              "parameters + outputs (eval dtype)")
    flops: int | None = Field(default=None, description="Minimal FLOPs: FLOPS, else torch's FLOP counter")
    foreign_cpu: float | None = Field(default=None, description="cpu: the share of the cores' time other processes "
                                                                "used while it was timed")
    confirmations: int = Field(default=0, description="Eager: how many later measurements, each in its own child, "
                               "agreed with it (0: provisional, measured again; baseline.settle)")
    peak_memory_bytes: int | None = Field(default=None, description="Read from baselines stored by the version of "
                                          "2026-12-07, which measured an eager baseline's peak device memory; no "
                                          "longer measured (evaluations side by side plan by their own)")


class Peaks(Frozen):
    """A device's measured peaks: what the speed of light is computed from."""

    bandwidth_gbs: float | None = Field(default=None, description="Memory bandwidth of a large copy, GB/s "
                                                                  "(bytes read + written)")
    tflops: dict[str, float] = Field(default_factory=dict, description="Dense GEMM TFLOP/s per dtype "
                                                                       "(fp32 with TF32 off, bf16, fp16)")
    details: dict[str, str] = Field(default_factory=dict, description="How each figure was measured")
    best_bandwidth_gbs: float | None = Field(default=None, description="The fastest single copy, GB/s, of this and "
                                             "every earlier measurement of the device in the store (cpu_ceiling.py)")
    foreign_cpu: float | None = Field(default=None, description="cpu: the least share of the cores other processes "
                                      "used during a copy measurement (child/observe.py); None where not measured")


# ---- the LLM side ----

class TargetFacts(Frozen):
    """What the prompt tells the model about the hardware; fields that are unknown stay None."""

    target: Target = Field(description="cuda or cpu")
    name: str = Field(description="GPU or CPU model name")
    compute_capability: str | None = Field(default=None, description="e.g. '9.0' (cuda)")
    sm_count: int | None = Field(default=None, description="Streaming multiprocessors (cuda)")
    memory_gb: float | None = Field(default=None, description="Device (or host) memory, GB")
    l2_cache_mb: float | None = Field(default=None, description="L2 cache size, MB (cuda)")
    bandwidth_gbs: float | None = Field(default=None, description="Peak memory bandwidth, GB/s (datasheet)")
    peak_tflops: dict[str, float] = Field(default_factory=dict, description="Dense peak TFLOP/s per dtype (datasheet)")
    cores: int | None = Field(default=None, description="CPU cores available to the process (cpu)")
    vector_isa: str | None = Field(default=None, description="Widest SIMD instruction set, e.g. 'AVX2 (256-bit)' (cpu)")


class GateResult(Frozen):
    """The quality gate's verdict on one problem (`harness problems validate`)."""

    problem_id: str = Field(description="Problem id")
    path: str = Field(description="Problem file")
    target: Target = Field(description="Where the full gate ran (or would run, for a static check)")
    mode: Literal["static", "full"] = Field(description="static: no device (meta tensors); full: on the target")
    passed: bool = Field(description="No reasons to reject")
    reasons: tuple[str, ...] = Field(default=(), description="Why the problem fails the gate, one line each")
    warnings: tuple[str, ...] = Field(default=(), description="Worth knowing, not failing")
    outputs: tuple[str, ...] = Field(default=(), description="dtype[shape] of each output tensor")
    input_bytes: int | None = Field(default=None, description="Bytes of the forward inputs (float32)")
    param_bytes: int | None = Field(default=None, description="Bytes of the Model's parameters and buffers")
    output_bytes: int | None = Field(default=None, description="Bytes of the outputs")
    bytes_moved: int | None = Field(default=None, description="Minimal bytes moved: BYTES, else inputs + "
                                                              "parameters + outputs")
    flops: int | None = Field(default=None, description="Minimal FLOPs: FLOPS, else torch's FLOP counter")
    flops_source: Literal["declared", "counted"] | None = Field(default=None, description="Where flops comes from")
    eager_ms: float | None = Field(default=None, description="Median time of the eager reference (full gate)")
    peak_memory_gb: float | None = Field(default=None, description="Peak device memory of an evaluation (measured "
                                                                   "on cuda, estimated from tensor sizes on cpu)")
    duration_s: float = Field(default=0.0, description="Time the gate spent on this problem")
