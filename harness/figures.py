"""What an evaluation measured beside its verdict and its timings: where its seconds went, how its processes started
and ended, the load beside it, and the figures its flags were decided from. Typed records, units in the names (`_s`,
`_ms`, `_share`; counts are ints); a field is None where it was not measured. Each field and group carries the label
a person reads (its title), so a report shows `Figures.labelled()`, never a field's name.

Their JSON (EvalResult's `stages`, the report, `harness eval --json`, the store) is one flat object under the names
these figures have always had ("setup", "check_inputs", "runner_ready_s", "cpu_foreign"...: each field's
serialization alias, or its name; a process's start figures take its prefix), so stored results and the scripts that
read them are unchanged; in code they are read by field.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, model_serializer, model_validator

from harness.records import Frozen

Unit = Literal["s", "ms", "share", "count"]
UNITS: dict[str, Unit] = {"_s": "s", "_ms": "ms", "_share": "share"}  # by the field name's ending


def figure(label: str, alias: str | None = None, about: str | None = None) -> Any:
    """A measured figure's field, None until measured: `label` is what a person reads, `alias` its flat JSON name
    where that is not the field's. Its unit follows from its name (UNITS: `_s`, `_ms`, `_share`) or, for a count,
    its type (int)."""
    return Field(default=None, title=label, serialization_alias=alias, description=about)


class StageSeconds(Frozen):
    """Seconds per stage: the parent's (build, queue, eval) and, within eval, the judge's, each from its own start to
    its end less Triton's compiling and autotuning in the runner meanwhile (their own entries: build time)."""

    build_s: float | None = figure("build", "build", "Building the candidate (0: its build was cached)")
    queue_s: float | None = figure("waiting for a device", "queue", "Built, waiting for a device")
    eval_s: float | None = figure("evaluation", "eval", "From the hand-off to the child until it exited")
    flagged_eval_s: float | None = figure("flagged evaluation, redone", "flagged_eval", "A first evaluation flagged "
                                          "on its own clocks alone, redone (plausibility.CONFIRMED)")
    setup_s: float | None = figure("set-up", "setup", "Both models built, the candidate imported")
    compile_s: float | None = figure("Triton's compiling", "compile", "Triton's compiling in the runner")
    autotune_s: float | None = figure("Triton's autotuning", "autotune", "Triton's autotuning in the runner")
    check_s: float | None = figure("correctness check", "check", "Trials on fresh inputs, on every workload")
    coverage_s: float | None = figure("coverage profile", "coverage", "The profiled call")
    time_s: float | None = figure("timing", "time", "Interleaved timing, timed outputs checked again")
    device_wait_s: float | None = figure("waiting for the device", "device_wait", "Within the judge's stages but "
                                         "none of them: waiting to share the GPU (the check) or to have it alone "
                                         "(the timing) while other evaluations used it (device_lock.py)")


class SetupParts(Frozen):
    """Where the set-up went: constructing the reference, then waiting for the runner's candidate constructed."""

    reference_s: float | None = figure("the reference", "setup_reference", "Constructing the reference")
    runner_s: float | None = figure("the candidate, in the runner", "setup_runner", "Waiting for the runner's "
                                    "candidate constructed")


class CheckParts(Frozen):
    """Where the check went, over the trials: making inputs, running the reference, the runner's calls (forward, its
    copies and checks, the output's hand-over), comparing, asking whether the output settled."""

    poisoned_s: float | None = figure("calls on poisoned memory", "check_poisoned", "Trial 0's two calls on poisoned "
                                      "memory, the runner's poisoning included")
    inputs_s: float | None = figure("making inputs", "check_inputs")
    reference_s: float | None = figure("reference calls", "check_reference")
    call_s: float | None = figure("candidate calls", "check_call", "The runner's calls: forward, its copies and "
                                  "checks, the output's hand-over")
    compare_s: float | None = figure("comparing", "check_compare")
    settled_s: float | None = figure("asking if outputs settled", "check_settled")


class ProcessStart(Frozen):
    """How one of an evaluation's processes started: what an evaluation handed to children not yet started waits
    for (flat names: runner_ready_s, judge_imports_s...)."""

    ready_s: float | None = figure("ready", about="From the process's start to its device ready")
    imports_s: float | None = figure("imports", about="Of which its imports")
    device_s: float | None = figure("device context", about="Of which its device (the CUDA context)")
    device_attempts: int | None = figure("context attempts", about="The attempts the context took")
    triton_s: float | None = figure("Triton's driver", about="The runner's making of Triton's driver")

    @classmethod
    def reported(cls, figures: dict[str, float]) -> ProcessStart:
        """From a process's own figures (the runner's are checked numbers, counts among them maybe not whole)."""
        counts = {name for name, field in cls.model_fields.items() if int in get_args(field.annotation)}
        return cls.model_validate({name: round(value) if name in counts else value for name, value in figures.items()
                                   if name in cls.model_fields})


class ProcessFigures(Frozen):
    """An evaluation's two processes around it: how long they had to start, and how long they took to end once the
    judge had written its report (part of eval, of no stage)."""

    child_age_s: float | None = figure("children's age at the hand-off", about="From the children's start to the "
                                       "hand-off")
    runner_wait_ms: float | None = figure("runner's first reply", about="The runner's first reply: its start-up not "
                                          "yet done, if it was not")
    judge_exit_s: float | None = figure("judge's exit", about="The judge's exit (its CUDA context torn down)")
    runner_exit_s: float | None = figure("runner's exit", about="Then the runner's")
    judge_memory_mib: int | None = figure("judge's GPU memory (MiB)", about="The most GPU memory the judge's "
                                          "allocator held (what evaluations side by side plan by)")
    runner_memory_mib: int | None = figure("runner's GPU memory (MiB)", about="The same for the runner, as it says "
                                           "(its candidate may change what it says: only the planning trusts it)")


class Contention(Frozen):
    """Other processes beside the evaluation: on the cpu target the cores' load while it was timed (child/observe.py),
    on a GPU the contention check's own time and its wait (eval/gpu_load.py)."""

    cpu_jitter_share: float | None = figure("idle jitter", "cpu_jitter", "The relative standard deviation of a fixed "
                                            "1 ms spin timed just before timing")
    cpu_foreign_share: float | None = figure("cores used by others", "cpu_foreign", "Of the cores' time, other "
                                             "processes' (flag contended)")
    cpu_steal_share: float | None = figure("cores stolen by the hypervisor", "cpu_steal")
    gpu_check_s: float | None = figure("GPU contention check", "contention_check")
    gpu_wait_s: float | None = figure("waiting for the GPU to be free", "contention_wait")


class FlagEvidence(Frozen):
    """The judge's figures the parent decides its timing flags from (plausibility.py)."""

    runner_stopped: int | None = figure("reference calls, runner stopped", about="Reference calls timed with the "
                                        "runner stopped")
    runner_running: int | None = figure("of which a runner thread ran", about="Of those, with a thread of the "
                                        "runner's still running (reference_slowed)")
    round_trip_ms: float | None = figure("runner's round trip", about="What an empty reply of the runner costs")
    unreported_ms: float | None = figure("time beyond the runner's report", about="Time the judge's clock saw around "
                                         "the candidate's timed calls beyond the wall time its runner reported, less "
                                         "the same for the reference's calls and their spread; lower quartiles "
                                         "(timing_disputed)")
    deferred_ms: float | None = figure("hand-over beyond a copy", about="The least time, over the timed calls whose "
                                       "outputs were checked, that handing the output over took beyond a plain copy "
                                       "of it (hidden_work)")
    copy_ms: float | None = figure("a plain copy of the output", about="That plain copy: the judge's own copy of a "
                                   "checked output into host memory (median)")


class Figure(Frozen):
    """One measured figure, as a report shows it."""

    group: str = Field(description="Its group's label")
    label: str = Field(description="Its own")
    unit: Unit = Field(description="s, ms, share (shown as %) or count")
    value: float
    about: str | None = Field(default=None, description="What it measures, at more length")


def unit_of(name: str, annotation: Any) -> Unit:
    """A figure's unit: a count where it is an int, else its name's ending's (UNITS)."""
    if int in get_args(annotation):
        return "count"
    found = [unit for ending, unit in UNITS.items() if name.endswith(ending)]
    if not found:
        raise ValueError(f"the figure {name!r} has no unit: end its name in {', '.join(UNITS)}, or make it an int")
    return found[0]


PREFIXES = {"runner_start": "runner_", "judge_start": "judge_"}
RENAMED = {"slowed_eval": "flagged_eval"}  # stored by earlier versions


class Figures(Frozen):
    """Every figure of one evaluation, by meaning."""

    stages: StageSeconds = Field(default=StageSeconds(), title="stages")
    setup_parts: SetupParts = Field(default=SetupParts(), title="set-up, in parts")
    check_parts: CheckParts = Field(default=CheckParts(), title="correctness check, in parts")
    process: ProcessFigures = Field(default=ProcessFigures(), title="the processes")
    runner_start: ProcessStart = Field(default=ProcessStart(), title="the runner's start")
    judge_start: ProcessStart = Field(default=ProcessStart(), title="the judge's start")
    contention: Contention = Field(default=Contention(), title="other processes")
    evidence: FlagEvidence = Field(default=FlagEvidence(), title="what the flags were decided from")

    def labelled(self) -> list[Figure]:
        """The measured figures as a person reads them, group by group in the order of the fields."""
        return [Figure(group=str(info.title), label=str(spec.title), unit=unit_of(name, spec.annotation),
                       value=value, about=spec.description)
                for group, info in type(self).model_fields.items()
                for name, spec in type(getattr(self, group)).model_fields.items()
                if (value := getattr(getattr(self, group), name)) is not None]

    def add(self, **groups: Frozen) -> Figures:
        """These figures with the given groups' measured fields laid over theirs."""
        return self.model_copy(update={name: getattr(self, name).model_copy(
            update=group.model_dump(exclude_none=True, round_trip=True)) for name, group in groups.items()})

    @model_serializer
    def flat(self) -> dict[str, float]:
        """The measured figures under their flat names, as numbers (counts too, as they always were)."""
        return {PREFIXES.get(name, "") + key: float(value) for name in type(self).model_fields
                for key, value in getattr(self, name).model_dump(by_alias=True, exclude_none=True).items()}

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """A flat object (JSON) is shared out among the groups; a name no group has (an older figure) is dropped."""
        if not isinstance(data, dict) or set(data) & set(cls.model_fields):
            return data
        groups: dict[str, dict] = {}
        for key, value in data.items():
            if (found := FLAT_NAMES.get(RENAMED[key] if key in RENAMED else key)) is not None:
                groups.setdefault(found[0], {})[found[1]] = value
        return groups


def _flat_names() -> dict[str, tuple[str, str]]:
    """Flat name -> (group, field)."""
    names = {}
    for group, info in Figures.model_fields.items():
        assert isinstance(info.annotation, type) and issubclass(info.annotation, Frozen)  # every group is a record
        for field, spec in info.annotation.model_fields.items():
            names[PREFIXES.get(group, "") + (spec.serialization_alias or field)] = (group, field)
    return names


FLAT_NAMES = _flat_names()
