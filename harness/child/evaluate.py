"""The judge (`python -m harness.child serve TARGET FD`): started ahead of need beside its runner (runner.py), it
imports torch and readies the device, then reads one WorkerSpec (a JSON line) from stdin, has the runner run the
built candidate (remote.py, over descriptor FD) and checks what comes back against the reference, which it runs
itself, and times both.

No candidate code runs in this process: the run's seed, the inputs' secrets, the reference, the choice of the timed
calls checked again, the comparisons and the report are out of the candidate's reach. What the runner reports of
itself is believed only where it can only hurt the candidate (a failure, its coverage), or checked (its timed
calls, against this process's clock).

It reports what it observed as WorkerReport JSON; a crash of the runner shows here as the channel closing (the
parent adds the runner's exit status and log). Failures before the runner says it is about to run the candidate's
code are the harness's (or the machine's), never the candidate's (HARNESS_ERROR).
"""

from __future__ import annotations

import importlib
import os
import random
import sys
import time
import traceback
from pathlib import Path
from statistics import median, quantiles
from typing import Literal

import torch

from harness.checks import CheckResult, OtherCheck
from harness.child import observe as cpu_load
from harness.child.checking import Checking
from harness.child.common import (
    EvalFailure,
    describe,
    failing_as,
    held_mib,
    start_figures,
    started_device,
    target_device,
)
from harness.child.judge_workload import JudgeWorkload, Record, fits
from harness.child.remote import Remote
from harness.child.stage_clock import DeviceTurns, StageClock
from harness.child.timing import Side, time_interleaved
from harness.child.training import parameter_shapes
from harness.child.workload import Instance
from harness.device_lock import DeviceLock
from harness.evidence import Coverage
from harness.figures import (
    CheckParts,
    Contention,
    Figures,
    FlagEvidence,
    ProcessFigures,
    ProcessStart,
    SetupParts,
)
from harness.freeze import Freezer
from harness.process import write_atomic
from harness.protocol import WorkerReport, WorkerSpec
from harness.types import HARNESS_ERROR
from harness.workloads import DEFAULT

_clock_ns = time.perf_counter_ns
ROUND_TRIPS = 20     # empty round trips to the runner before setup: what a reply costs

STAGES = ("setup", "check", "coverage", "time")  # StageSeconds' fields, with `_s`


def eval_main(spec: WorkerSpec, remote: Remote, freezer: Freezer, judge_start: dict | None = None) -> WorkerReport:
    """Setup, check, time; the first verdict reached inside (incorrect, rejected, runtime_error...) ends it. Where
    the parent passed the GPU's lock, the check shares the device with other evaluations' checks, and the poisoned
    calls and the timing have it alone (device_lock.py)."""
    evaluation = Evaluation(spec, remote, freezer, ProcessStart.reported(judge_start or {}))
    try:
        with torch.no_grad():
            with evaluation.turns.on_device(alone=False):
                evaluation.setup()
                evaluation.check()
                if spec.instrumented:  # a tool's run: its checked calls are all it is for
                    return evaluation.checked()
                evaluation.profile()
            with evaluation.turns.on_device(alone=True):
                evaluation.time()
    except EvalFailure as failure:
        return evaluation.failed(failure)
    return evaluation.passed()


class Evaluation(Checking):
    """One built candidate, run by its runner, against the problem's reference, run here, in stages whose times
    are recorded: setup (both modules built, the candidate imported), check (trials on fresh inputs, on every
    workload: checking.py), coverage, time (interleaved, on each timed workload, with timed outputs checked
    again)."""

    def __init__(self, spec: WorkerSpec, remote: Remote, freezer: Freezer, judge_start: ProcessStart):
        self.spec = spec
        self.judge_start = judge_start  # how this process's own start went (start_figures)
        self.remote = remote
        self.freezer = freezer
        self.stages = StageClock(remote)  # from here: the setup stage includes importing the problem
        self.turns = DeviceTurns(DeviceLock.from_env(), self.stages)
        self.device, device_name, self.timer, self.sync = target_device(torch, spec.target)
        remote.device = self.device
        self.dtype = getattr(torch, spec.dtype)
        self.atol, self.rtol = spec.check.tolerances(spec.dtype, spec.atol, spec.rtol)
        self.other = (spec.also, *spec.also.tolerances(spec.dtype, spec.atol, spec.rtol)) if spec.also else None
        self.other_compared, self.other_failure = 0, None
        self.wants_truth = "truth" in (spec.check.mode, spec.also and spec.also.mode)
        self.truth_fell_back = False  # some output was judged against the reference: float64 could not run it
        self.fields = dict(device_name=device_name, torch_version=torch.__version__)
        self.trials_run = self.rechecked = 0
        self.poisoned_s = 0.0  # trial 0's two calls on poisoned memory, the runner's poisoning included (part of check)
        # Where the set-up's and the check's seconds went (SetupParts, CheckParts: reported once timing is done)
        self.setup_parts = dict.fromkeys(SetupParts.model_fields, 0.0)
        self.check_parts = dict.fromkeys(CheckParts.model_fields.keys() - {"poisoned_s"}, 0.0)
        self.load = Contention()  # on the cpu target, the cores' load while it was timed
        self.timed = False  # the timing done: the report carries all figures
        self.round_trip_ms: float | None = None  # set by setup
        self.runner_wait_ms: float | None = None
        self.worst = [0.0, 0.0, 0.0]  # largest abs, rel and norm errors over the judged outputs
        self.reference_stats = ()  # the reference's outputs on trial 0, and how they move with the seed
        self.seed_samples = []
        self.seed_mismatch = None
        self.coverage: Coverage | None = None
        self.unreported_ms: float | None = None
        self.deferred = []  # per checked timed call: its output's handover beyond a plain copy (ms)
        self.copies = []    # and that plain copy (ms)
        self.copy_buffer = None
        self.records = {w.name: Record(w) for w in spec.workloads}
        self.current = None  # the workload the runner makes its inputs for
        self.current_key = None
        # Until the candidate's code runs, a failure is the problem file's or the harness's (HARNESS_ERROR).
        with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
            self.problem = Instance(spec.problem_path, spec.problem_source)

    def stage_ends(self, name: str) -> None:
        self.stages.ends(name)

    # ---- the stages ----

    def setup(self) -> None:
        trips = self.remote.round_trips(ROUND_TRIPS)
        self.round_trip_ms = quartiles(trips)[0]
        self.runner_wait_ms = trips[0]  # the first reply: the runner's start-up not yet done, if it was not
        self.remote.setup(dict(problem_path=self.spec.problem_path, problem_source=self.spec.problem_source,
                               build_dir=self.spec.build_dir,
                               target=self.spec.target, dtype=self.spec.dtype, init_seed=self.seed("init"),
                               scratch=self.spec.runner_scratch, training=self.spec.training),
                          device_outbox=not self.spec.instrumented)  # a tool's run: fewer driver features
        # The problem as written always runs; whether its float64 truth fits beside it is estimated only for a
        # problem that declares its memory (MEMORY_GB: above 24 GB), as the estimate costs the judge torch's meta
        # kernels (0.9 s of CPU the first time); elsewhere a truth that fails is a note.
        # (while the runner imports)
        with self.part(self.setup_parts, "reference_s"), self.reference_runs("constructing Model"):
            truth_fits = True
            if self.spec.memory_gb is not None:
                _, truth_fits, note = fits(self.problem, self.device, self.dtype, self.spec.training)
                self.records[DEFAULT.name].note(note)
            self.default = JudgeWorkload(self.spec.workloads[0], self.problem, self.device, self.dtype,
                                         self.seed("init"), truth=self.wants_truth and truth_fits,
                                         training=self.spec.training)
        self.current, self.current_key = self.default, (DEFAULT.name, ())
        # what is left of the runner's loading the candidate and constructing it
        with self.part(self.setup_parts, "runner_s"):
            parameters = self.remote.constructed()
        if self.spec.training:
            same_parameters(parameters, parameter_shapes(self.default.reference))
        self.stage_ends("setup")

    def profile(self) -> None:
        """One more call, profiled in the runner, on fresh inputs of the problem as written: how much of the work
        the candidate's own code did (coverage.py). Its output is not checked: a candidate that computes
        differently under the profiler, or reports its coverage falsely, changes only its own coverage."""
        self.enter(self.spec.workloads[0], {}, "the profiled call")
        self.coverage = self.remote.profile(self.seed("coverage"), self.default.upstream_wire())
        self.stage_ends("coverage")

    def time(self) -> None:
        """Each timed workload in turn, its budget a share of the whole: fresh inputs for every call; some
        candidate outputs are checked again, chosen by a secret draw, against the reference on the same inputs."""
        self.draw = random.Random(self.seed("recheck"))
        watch = cpu_load.Watch(self.spec.target)  # cpu: idle jitter now, other processes' CPU use across the timing
        runner_ticks = self.remote.ticks()
        timed = [w for w in self.spec.workloads if w.timed]
        settings = self.spec.timing.model_copy(update={"budget_s": self.spec.timing.budget() / len(timed)})
        reference_gaps: list[float] = []
        self.converged = True
        with self.reference_runs("timing the reference"):
            for workload in timed:
                record = self.records[workload.name]
                with self.on(record):
                    judged = self.enter(workload, {}, self.call_name(workload, "timing"))
                    if judged is None:
                        record.status = "skipped"
                        continue
                    timings, converged = self.time_workload(judged, settings, reference_gaps)
                record.ref_ms, record.candidate_ms = timings["reference"].median_ms, timings["candidate"].median_ms
                self.converged &= converged
                if judged is self.default:
                    self.timings = timings
        runner_ticks = self.remote.ticks() - runner_ticks
        self.remote.end()
        self.load = watch.stop(peer_ticks=runner_ticks)
        # Lower quartiles: a call the machine interrupted only adds time, an altered figure adds it to every call.
        # Less the spread of the reference's own gaps (what a loaded machine adds by chance) and, where the runner
        # was stopped while they were measured, the round trip a reply costs (which its interference hid).
        low, high = quartiles(reference_gaps)
        assert self.round_trip_ms is not None  # setup measured it
        round_trip = self.round_trip_ms if self.freezer.stopped_calls else 0.0
        self.unreported_ms = quartiles(self.remote.gaps_ms)[0] - low - (high - low) - round_trip
        self.stage_ends("time")
        self.timed = True

    def time_workload(self, judged: JudgeWorkload, settings, gaps: list[float]):
        """Reference and candidate interleaved on the current workload (the default's labels are the problem's)."""
        prefix = "" if judged is self.default else f"{judged.workload.name}-"
        counters = {name: iter(range(1 << 62)) for name in ("reference", "candidate")}

        def reference_inputs():
            label = f"timing-{prefix}reference-{next(counters['reference'])}"
            return label, judged.timed_args(self.inputs(label), self.seed(label))

        shapes = judged.upstream_wire()

        def candidate_seed():
            label = f"timing-{prefix}candidate-{next(counters['candidate'])}"
            return label, [self.seed(label), shapes]
        sides = {"reference": self.outside_clock(Side(reference_inputs, judged.timed_call(self.timer.split)), gaps),
                 # no function for the candidate's side: its timer has the runner call the candidate
                 "candidate": Side(candidate_seed, None, self.remote.timer)}  # type: ignore[arg-type]
        return time_interleaved(sides, self.timer, settings, inspect=self.recheck)

    def outside_clock(self, side: Side, gaps: list[float]) -> Side:
        """The reference's side, with the clock the runner's calls get around them (remote.Remote.timer): the
        timer's whole call, less the timer's own wall time."""
        def timed(fn, args):
            with self.freezer.stopped():  # the candidate's processes run nothing while the reference is timed
                start = _clock_ns()
                sample = self.timer(fn, args)
                gaps.append((_clock_ns() - start) / 1e6 - sample.wall_ms)
            return sample
        return Side(side.prepare, side.call, timed)

    # ---- the report ----

    def failed(self, failure: EvalFailure) -> WorkerReport:
        failed_in = next((n for n in STAGES if n not in self.stages.seconds), None)
        if failed_in:
            self.stage_ends(failed_in)
        if failure.status != "incorrect":
            return WorkerReport(status=failure.status, error=str(failure), workloads=self.workload_results(),
                                figures=self.figures(), **self.fields)
        found = failure.comparison
        check = self.check_result("incorrect", str(failure), found)
        return WorkerReport(status="incorrect", check=check, error=str(failure), figures=self.figures(),
                            **self.observed(), **self.fields)

    def passed(self) -> WorkerReport:
        check = self.check_result("correct", f"{self.trials_run} trials and {self.rechecked} timed calls checked")
        return WorkerReport(status="correct", check=check, runtime=self.timings["candidate"],
                            ref_runtime=self.timings["reference"], converged=self.converged, figures=self.figures(),
                            **self.observed(), **self.fields)

    def checked(self) -> WorkerReport:
        """An instrumented run's report: its checked calls passed; nothing was timed."""
        check = self.check_result("correct", f"{self.trials_run} trial{'s' * (self.trials_run != 1)} checked")
        return WorkerReport(status="correct", check=check, figures=self.figures(), **self.observed(), **self.fields)

    def figures(self) -> Figures:
        """The stages' seconds; once the timing is done, all else that was measured: the parts, the starts of both
        processes, the load beside the timing, and the figures the parent's timing flags come from."""
        stages = self.stages.figures()
        if not self.timed:
            return Figures(stages=stages)
        stopped = self.freezer.stopped_calls  # reference calls timed with the runner stopped (and with a thread not)
        evidence = FlagEvidence(runner_stopped=stopped or None, runner_running=self.freezer.running_calls if stopped
                                else None, round_trip_ms=self.round_trip_ms, unreported_ms=self.unreported_ms,
                                deferred_ms=min(self.deferred, default=None),
                                copy_ms=median(self.copies) if self.copies else None)
        return Figures(stages=stages, setup_parts=SetupParts(**self.setup_parts),
                       check_parts=CheckParts(poisoned_s=self.poisoned_s, **self.check_parts),
                       process=ProcessFigures(runner_wait_ms=self.runner_wait_ms,
                                              judge_memory_mib=held_mib(torch, self.device),
                                              runner_memory_mib=self.remote.runner_memory_mib),
                       runner_start=ProcessStart.reported(self.remote.runner_start), judge_start=self.judge_start,
                       contention=self.load, evidence=evidence)

    def check_result(self, status: Literal["correct", "incorrect"], message: str, found=None) -> CheckResult:
        """The verdict over every judged output: the failing comparison's errors, or the worst of all."""
        max_abs, max_rel, norm = (found.max_abs_err, found.max_rel_err, found.norm_err) if found else self.worst
        other = None
        if self.other is not None:
            spec, atol, rtol = self.other
            other = OtherCheck(name=spec.name, atol=atol, rtol=rtol, compared=self.other_compared,
                               ok=None if not self.other_compared else self.other_failure is None,
                               message=self.other_failure)
        truth: Literal["float64", "reference"] | None = None
        if self.spec.check.mode == "truth":
            truth = "reference" if self.truth_fell_back else "float64"
        return CheckResult(status=status, trials=self.trials_run, atol=self.atol, rtol=self.rtol, message=message,
                           max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm,
                           ref_norm_err=found.ref_norm_err if found else None,
                           mismatch_fraction=(found.mismatch_fraction if found else 0.0),
                           check=self.spec.check.name, truth=truth, other=other)

    def workload_results(self) -> tuple:
        return tuple(record.result() for record in self.records.values())

    def observed(self) -> dict:
        return dict(reference_stats=self.reference_stats, seed_mismatch=self.seed_mismatch, coverage=self.coverage,
                    workloads=self.workload_results())


def same_parameters(candidate: list, reference: list) -> None:
    """A training problem's gradients are judged parameter by parameter: ModelNew must have Model's parameters, by
    name and shape, in the same order."""
    try:
        theirs = [(str(name), [int(n) for n in shape]) for name, shape in candidate]
    except (TypeError, ValueError):
        raise EvalFailure("runtime_error", "the candidate's process sent malformed parameters") from None
    mine = [(name, list(shape)) for name, shape in reference]
    if theirs != mine:
        def show(params: list) -> str:
            return ", ".join(f"{name} {tuple(shape)}" for name, shape in params) or "none"
        raise EvalFailure("incorrect", "ModelNew's parameters differ from Model's, so their gradients cannot be "
                                       f"judged: Model has {show(mine)}; ModelNew has {show(theirs)}. A training "
                                       "problem's ModelNew keeps Model's parameters (names and shapes)")


def quartiles(values: list[float]) -> tuple[float, float]:
    """The lower and upper quartiles."""
    if len(values) < 2:
        return values[0], values[0]
    q = quantiles(values, n=4)
    return q[0], q[2]


def main(argv: list[str]) -> int:
    """`serve TARGET FD STOP`: ready the device, then evaluate the one spec that comes through stdin, with the runner
    on descriptor FD and its sandbox's init on STOP ("-": none)."""
    started = started_device(torch, argv[1])
    # torch's meta-device and Dynamo-guarded functions import Dynamo at their first call, which the check makes (a
    # workload's size estimate): 0.86 s on the 2-core machine, paid here while the runner starts (it imports Dynamo too)
    importlib.import_module("torch._dynamo")
    judge_start = start_figures(started)
    remote = Remote(int(argv[2]), torch.device("cpu"))
    freezer = Freezer(None if argv[3] == "-" else int(argv[3]))
    line = sys.stdin.readline().strip()  # the spec comes through the pipe: its seed is in no file
    if not line:  # the parent discarded this spare
        os._exit(0)
    spec = WorkerSpec.model_validate_json(line)
    try:
        report = eval_main(spec, remote, freezer, judge_start)
    except EvalFailure as failure:
        report = WorkerReport(status=failure.status, error=str(failure), device_name="", torch_version="")
    except BaseException as exc:  # raised by harness code: no candidate code runs in this process
        traceback.print_exc()
        report = WorkerReport(status=HARNESS_ERROR, error=f"harness error: {describe(exc)}", device_name="",
                              torch_version="")
    write_atomic(Path(spec.result_path), report.model_dump_json())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
