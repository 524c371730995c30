"""What crosses the process boundary: the specs the parent hands its children and what they report back
(JSON, validated on both sides). The evaluation child: WorkerSpec in, WorkerReport out; the baseline child:
BaselineSpec; the gate child: GateSpec in, a GateObservation per problem out."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from harness.checks import CheckSpec
from harness.evidence import Coverage
from harness.figures import Figures
from harness.types import CheckResult, Frozen, Status, Target, Timing, TimingSettings
from harness.workloads import DEFAULT, Workload, WorkloadResult


def uses_triton(source: str) -> bool:
    """Whether a candidate's source may run Triton: its runner then clocks Triton's JIT, and on a GPU the children
    started ahead for a batch with such candidates make Triton's driver while they start."""
    return "triton" in source


class OutputStats(Frozen):
    """One reference output's values, for the degeneracy checks: numel alone for an empty output; numel,
    floating and constant for an integer or bool one; everything for a floating one (over finite values)."""

    model_config = ConfigDict(ser_json_inf_nan="constants")  # min and max are +-inf when no value is finite

    numel: int = Field(description="Elements")
    floating: bool | None = Field(default=None, description="A floating-point output; None when empty")
    constant: bool | None = Field(default=None, description="Every element has the same value")
    nonfinite: int | None = Field(default=None, description="NaN and Inf elements")
    near_zero_fraction: float | None = Field(default=None, description="Share of elements within atol of 0")
    mean: float | None = Field(default=None, description="Mean")
    mean_abs: float | None = Field(default=None, description="Mean of |x|")
    std: float | None = Field(default=None, description="Standard deviation")
    min: float | None = Field(default=None, description="Smallest value")
    max: float | None = Field(default=None, description="Largest value")
    constant_passes: bool | None = Field(default=None, description="A tensor filled with the mean would pass "
                                                                   "the correctness check")

    @model_validator(mode="after")
    def _complete(self) -> OutputStats:
        needed = FLOATING_STATS if self.floating else ("constant",) if self.floating is False else ()
        missing = [name for name in needed if getattr(self, name) is None]
        if missing:
            raise ValueError(f"{'a floating' if self.floating else 'an integer'} output's stats lack "
                             f"{', '.join(missing)}")
        return self


class WorkerReport(Frozen):
    """What the evaluation child process reports to its parent (as JSON)."""

    status: Status = Field(description="correct, incorrect or runtime_error (timeouts are the parent's call)")
    check: CheckResult | None = Field(default=None, description="Correctness details, if checking ran")
    runtime: Timing | None = Field(default=None, description="Candidate timing, if correct")
    ref_runtime: Timing | None = Field(default=None, description="Reference timing, measured interleaved")
    error: str | None = Field(default=None, description="Error message, or None")
    converged: bool = Field(default=True, description="The timing reached its target precision before its budget "
                                                       "ran out (False: the parent flags noisy_timing)")
    device_name: str = Field(description="Device name as torch reports it")
    torch_version: str = Field(description="torch.__version__ in the child")
    figures: Figures = Field(default_factory=Figures, description="The judge's stages; once it timed, all else it "
                             "measured: the parts, both processes' starts, the load, the figures the timing flags "
                             "come from (the parent adds its own)")
    reference_stats: tuple[OutputStats, ...] = Field(default=(), description="The reference's outputs on the "
                                                      "first trial, for the parent's informativeness check")
    seed_mismatch: tuple[float, ...] | None = Field(default=None, description="Per output: the share of a sample "
                                                    "of elements a second seed changed beyond the tolerance (None: "
                                                    "one trial only)")
    coverage: Coverage | None = Field(default=None, description="The candidate's share of one profiled forward, "
                                      "after the checks (None: not measured)")
    workloads: tuple[WorkloadResult, ...] = Field(default=(), description="Per workload: its verdict, errors and "
                                                  "timed medians")


class WorkerSpec(Frozen):
    """What the parent asks one evaluation child to do (written as JSON, path passed on argv)."""

    problem_path: str = Field(description="Problem file, its name in tracebacks")
    problem_source: str = Field(description="The problem's text as the parent indexed it: what is imported")
    build_dir: str = Field(description="Build directory holding candidate.py and manifest.json")
    target: Target = Field(description="cuda or cpu")
    dtype: str = Field(default="float32", description="Floating inputs and parameters are cast to this")
    seed: int = Field(description="Secret per-run seed; trial seeds derive from it")
    trials: int = Field(default=5, description="Correctness trials, each with fresh inputs")
    atol: float | None = Field(default=None, description="Problem's absolute tolerance override")
    rtol: float | None = Field(default=None, description="Problem's relative tolerance override")
    workloads: tuple[Workload, ...] = Field(default=(DEFAULT,), description="The problem's workloads, default first")
    memory_gb: float | None = Field(default=None, description="The problem's declared MEMORY_GB, if any")
    training: bool = Field(default=False, description="TRAINING: each call a forward and a backward, the "
                                                      "gradients judged beside the outputs")
    check: CheckSpec = Field(default_factory=CheckSpec, description="The check that decides correctness")
    also: CheckSpec | None = Field(default=None, description="A second check whose verdict is recorded beside")
    timing: TimingSettings = Field(default_factory=TimingSettings, description="Timing settings")
    instrumented: bool = Field(default=False, description="The runner runs under a tool (compute-sanitizer): set-up "
                               "and the trials asked for, no poisoning, outputs through host memory, no profiled "
                               "call, no timing")
    result_path: str = Field(description="Where the judge writes its WorkerReport JSON")
    runner_scratch: str = Field(description="The runner's own scratch directory (its only writable one)")


class ProblemRef(Frozen):
    """A problem as the parent hands it to a child (gate, baseline): the file to import and its tolerances."""

    id: str = Field(description="Problem id, echoed in the child's result lines")
    path: str = Field(description="Problem file, its name in tracebacks")
    source: str = Field(description="The problem's text as the parent indexed it: what is imported")
    atol: float | None = Field(default=None, description="Problem's absolute tolerance override")
    rtol: float | None = Field(default=None, description="Problem's relative tolerance override")
    workloads: tuple[Workload, ...] = Field(default=(DEFAULT,), description="Its workloads (the gate observes each; "
                                            "the baselines take the default)")
    training: bool = Field(default=False, description="TRAINING: each call a forward and a backward, as the "
                                                      "evaluation makes it")


class BaselineItem(ProblemRef):
    """A problem whose baselines the baseline child measures, and which kinds of them."""

    kinds: tuple[str, ...] = Field(description="Kinds from BASELINE_KINDS to measure (eager is always timed)")


class BaselineSpec(Frozen):
    """What the parent asks a clean child to measure: the reference alone (and compiled), per problem."""

    mode: Literal["baselines", "peaks", "copy"] = Field(default="baselines", description="Time the problems' "
                                                        "references, measure the device's peaks, or only its copy")
    problems: tuple[BaselineItem, ...] = Field(default=(), description="The problems, measured in turn")
    target: Target = Field(description="cuda or cpu")
    dtype: str = Field(default="float32", description="Floating inputs and parameters are cast to this")
    seed: int = Field(description="Secret seed for the inputs")
    timing: TimingSettings = Field(default_factory=TimingSettings, description="Timing settings")
    results_path: str = Field(description="JSON lines: {start: id} before each problem, then {id, baselines}")


class GateSpec(Frozen):
    """What the parent asks a gate child to observe (written as JSON, path passed on argv)."""

    mode: Literal["static", "full"] = Field(description="static: on the meta device; full: on the target too")
    target: Target = Field(description="Device of the full gate: cuda or cpu")
    problems: tuple[ProblemRef, ...] = Field(description="The problems, observed in turn")
    results_path: str = Field(description="JSON lines: {start: id} before each problem, then {id, observation} "
                                          "(a GateObservation) or {id, error}")


class TensorShape(Frozen):
    """Shape and dtype of one tensor."""

    shape: tuple[int, ...] = Field(description="Sizes")
    dtype: str = Field(description="torch dtype without the 'torch.' prefix, e.g. float32")


class ShapeFacts(Frozen):
    """The tensors of one forward of a problem (float32): what is known without timing anything."""

    outputs: tuple[TensorShape, ...] = Field(description="Each output tensor")
    inputs: tuple[TensorShape, ...] = Field(description="Each tensor among the forward inputs")
    input_bytes: int = Field(description="Bytes of the forward inputs")
    param_bytes: int = Field(description="Bytes of the Model's parameters and buffers")
    output_bytes: int = Field(description="Bytes of the outputs")
    output_is_plain: bool = Field(description="forward returned no tensor subclass")


class TensorComparison(Frozen):
    """One output compared with another within a tolerance (check.compare_tensor's verdict)."""

    model_config = ConfigDict(ser_json_inf_nan="constants")  # errors can be inf or nan

    ok: bool = Field(description="Every element within tolerance")
    mismatch_fraction: float = Field(description="Share of elements outside tolerance (0 when shapes differ)")
    message: str | None = Field(default=None, description="What differs, or None")
    max_abs_err: float | None = Field(default=None, description="Largest |a - b|")
    max_rel_err: float | None = Field(default=None, description="Largest |a - b| / max(|b|, atol)")


FLOATING_STATS = ("constant", "nonfinite", "near_zero_fraction", "mean", "mean_abs", "std", "min", "max",
                  "constant_passes")


class FullObservation(Frozen):
    """What the full gate measures of a reference on the target device, with the problem's tolerances."""

    atol: float = Field(description="Absolute tolerance the comparisons used")
    rtol: float = Field(description="Relative tolerance the comparisons used")
    eager_ms: float = Field(description="Median time of the eager reference (a size check, not a benchmark)")
    peak_memory_bytes: int = Field(description="Peak device memory of an evaluation (measured on cuda, "
                                               "estimated from tensor sizes on cpu)")
    deterministic: tuple[TensorComparison, ...] = Field(description="Per output: a second run with the same "
                                                                    "seed against the first")
    seed_variation: tuple[TensorComparison, ...] = Field(description="Per output: a run with another seed "
                                                                     "against the first")
    stats: tuple[OutputStats, ...] = Field(description="Per output: its values")
    names: tuple[str, ...] = Field(default=(), description="A training problem's: what each output is (the outputs, "
                                   "then each gradient: training.names); empty for a forward problem")
    precision: tuple[TensorComparison, ...] = Field(default=(), description="Per floating output: the fp32 "
                                                    "reference against float64, within half the tolerance")
    precision_error: str | None = Field(default=None, description="Why the float64 run failed (no precision)")


class GateObservation(Frozen):
    """What the gate child observed of one problem (one that failed is an {id, error} line instead)."""

    init_inputs: int = Field(description="Values get_init_inputs() returns")
    shapes: ShapeFacts | None = Field(default=None, description="From a forward on the meta device, else (full "
                                                                "gate) on the target; None if neither ran")
    flops: int | None = Field(default=None, description="FLOPs of one forward, as torch's FLOP counter counts")
    meta_error: str | None = Field(default=None, description="Why the meta-device forward failed")
    flop_count_error: str | None = Field(default=None, description="Why the FLOP counter failed on the target "
                                                                   "(full gate, after a meta_error)")
    full: FullObservation | None = Field(default=None, description="The full gate's measurements; None in "
                                                                   "the static gate")
    workloads: tuple[WorkloadObservation, ...] = Field(default=(), description="The same of every other workload "
                                                       "(a drawn one at both ends of its ranges)")


class WorkloadObservation(Frozen):
    """What the gate child observed of one workload but the default, with one set of values."""

    workload: str = Field(description="The workload's name")
    values: dict[str, bool | int | float | str] = Field(description="The constants it was observed with")
    observation: GateObservation | None = Field(default=None, description="What it observed")
    error: str | None = Field(default=None, description="Why the problem failed with these values")


GateObservation.model_rebuild()
