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

import contextlib
import os
import random
import sys
import time
import traceback
from pathlib import Path
from statistics import median, quantiles

import torch

from harness.child import observe as cpu_load
from harness.child.channel import Shared
from harness.child.check import (
    compare,
    compare_tensor,
    one_value,
    output_stats,
    seed_sample,
    tensors,
    varies,
)
from harness.child.common import (
    EvalFailure,
    construct,
    describe,
    failing_as,
    import_problem,
    seeded_inputs,
    start_figures,
    started_device,
    target_device,
    timed_side,
    trial_seed,
)
from harness.child.remote import KEPT, Remote
from harness.child.timing import Side, time_interleaved
from harness.freeze import Freezer
from harness.process import write_atomic
from harness.protocol import PARTS, WorkerReport, WorkerSpec, tolerances
from harness.types import HARNESS_ERROR, CheckResult

_clock_ns = time.perf_counter_ns
_clock = time.perf_counter  # bound before any candidate code runs: stage times cannot be patched
RECHECK_SHARE = 0.1  # share of timed candidate calls whose output is checked again (besides the first two)
ROUND_TRIPS = 20     # empty round trips to the runner before setup: what a reply costs

STAGES = ("setup", "check", "coverage", "time")


def eval_main(spec: WorkerSpec, remote: Remote, freezer: Freezer, judge_start: dict | None = None) -> WorkerReport:
    """Setup, check, time; the first verdict reached inside (incorrect, rejected, runtime_error...) ends it."""
    evaluation = Evaluation(spec, remote, freezer, judge_start or {})
    try:
        with torch.no_grad():
            evaluation.setup()
            evaluation.check()
            evaluation.profile()
            evaluation.time()
    except EvalFailure as failure:
        return evaluation.failed(failure)
    return evaluation.passed()


class Evaluation:
    """One built candidate, run by its runner, against the problem's reference, run here, in stages whose times
    are recorded: setup (both modules built, the candidate imported), check (trials on fresh inputs), coverage,
    time (interleaved, with timed outputs checked again)."""

    def __init__(self, spec: WorkerSpec, remote: Remote, freezer: Freezer, judge_start: dict):
        self.spec = spec
        self.judge_start = judge_start  # how this process's own start went (start_figures)
        self.remote = remote
        self.freezer = freezer
        self.started = _clock()
        self.device, device_name, self.timer, self.sync = target_device(torch, spec.target)
        remote.device = self.device
        self.dtype = getattr(torch, spec.dtype)
        self.atol, self.rtol = tolerances(spec.dtype, spec.atol, spec.rtol)
        self.stages: dict[str, float] = {}  # seconds spent setting up, checking, timing (filled in as they end)
        self.fields = dict(device_name=device_name, torch_version=torch.__version__, stages=self.stages)
        self.trials_run = self.rechecked = 0
        self.poisoned_s = 0.0  # trial 0's two calls on poisoned memory, the runner's poisoning included (part of check)
        # Where the set-up's and the check's seconds went (PARTS; in the stages at the end, like check_poisoned):
        # check_call is the runner's calls (forward, its copies and checks, the output's hand-over)
        self.parts = dict.fromkeys(PARTS, 0.0)
        self.worst_abs = self.worst_rel = 0.0
        self.reference_stats: tuple = ()  # the reference's outputs on trial 0, and how they move with the seed
        self.seed_samples: list[torch.Tensor] = []
        self.seed_mismatch: tuple[float, ...] | None = None
        self.coverage = None
        self.unreported_ms: float | None = None
        self.deferred: list[float] = []  # per checked timed call: its output's handover beyond a plain copy (ms)
        self.copies: list[float] = []    # and that plain copy (ms)
        self.copy_buffer: Shared | None = None
        # Until the candidate's code runs, a failure is the problem file's or the harness's (HARNESS_ERROR).
        with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
            self.problem = import_problem(spec.problem_path)
            self.init_inputs = self.problem.get_init_inputs()
        if not isinstance(self.init_inputs, (list, tuple)):
            raise EvalFailure(HARNESS_ERROR, "problem error: get_init_inputs() returned "
                                             f"{type(self.init_inputs).__name__}, not a list")

    def stage_ends(self, name: str) -> None:
        """The stage's seconds, less Triton's compiling and autotuning in the runner (their own entries, build
        time)."""
        self.stages.update(self.remote.jit())
        self.stages[name] = _clock() - self.started - sum(self.stages.values())

    def inputs(self, label: str) -> list:
        return seeded_inputs(self.problem, self.device, self.dtype, self.spec.seed, label)

    def seed(self, label: str) -> int:
        return trial_seed(self.spec.seed, label)

    # ---- the stages ----

    def setup(self) -> None:
        trips = self.remote.round_trips(ROUND_TRIPS)
        self.round_trip_ms = quartiles(trips)[0]
        self.runner_wait_ms = trips[0]  # the first reply: the runner's start-up not yet done, if it was not
        init_seed = self.seed("init")
        self.remote.setup(dict(problem_path=self.spec.problem_path, build_dir=self.spec.build_dir,
                               target=self.spec.target, dtype=self.spec.dtype, init_seed=init_seed,
                               scratch=self.spec.runner_scratch))
        with self.part("setup_reference"), self.reference_runs("constructing Model"):  # while the runner imports
            self.reference = construct(self.problem.Model, self.init_inputs, self.device, self.dtype, init_seed)
        with self.part("setup_runner"):  # what is left of the runner's loading the candidate and constructing it
            self.remote.constructed()
        self.stage_ends("setup")

    @contextlib.contextmanager
    def part(self, name: str):
        started = _clock()
        try:
            yield
        finally:
            self.parts[name] += _clock() - started

    def check(self) -> None:
        for trial in range(self.spec.trials):
            self.trials_run = trial + 1
            label, what = f"trial{trial}", f"trial {trial}"
            with self.part("check_inputs"):
                inputs = self.inputs(label)
            with self.part("check_reference"):
                expected = self.expected(inputs, observe=self.observe_reference if trial < 2 else None)
            del inputs
            # Poison only before trial 0's two runs (defenses.Poison): later trials' inputs are fresh, and
            # nothing has computed on them in the runner before the candidate runs, so its freed memory cannot hold
            # their answers; an output left partly unwritten already fails trial 0 on poisoned memory.
            started = _clock()
            with self.part("check_call"):
                out = self.remote.call(self.seed(label), trial == 0, what, expected)
                if trial == 0:  # the same input twice: uninitialised memory or races show as disagreement
                    again_what = "trial 0, second run on the same input"
                    again = self.remote.call(self.seed(label), True, again_what, expected)
                    self.poisoned_s = _clock() - started
            with self.part("check_compare"):
                if trial == 0:
                    result = compare(again, out, self.atol, self.rtol)
                    if not result.ok:
                        raise EvalFailure("incorrect", "two runs on the same input disagree (uninitialised memory "
                                                       "or a race): " + result.message, result)
                    del again
                result = self.against_reference(out, expected, what)
            with self.part("check_settled"):
                settled = self.remote.settled(what)
            if not settled:
                raise EvalFailure("incorrect", f"{what}: the output changed after forward returned "
                                               "(work still running in the background)")
            self.worst_abs = max(self.worst_abs, result.max_abs_err or 0.0)
            self.worst_rel = max(self.worst_rel, result.max_rel_err or 0.0)
            del out, expected
        self.stage_ends("check")

    def profile(self) -> None:
        """One more call, profiled in the runner, on fresh inputs: how much of the work the candidate's own code
        did (coverage.py). Its output is not checked: a candidate that computes differently under the profiler, or
        reports its coverage falsely, changes only its own coverage."""
        self.coverage = self.remote.profile(self.seed("coverage"))
        self.stage_ends("coverage")

    def time(self) -> None:
        """Fresh inputs for every call; some candidate outputs are checked again, chosen by a secret draw,
        against the reference on the same inputs."""
        self.draw = random.Random(self.seed("recheck"))
        watch = cpu_load.Watch(self.spec.target)  # cpu: idle jitter now, other processes' CPU use across the timing
        runner_ticks = self.remote.ticks()
        reference = timed_side(self.problem, self.device, self.dtype, self.spec.seed, "reference", self.reference)
        reference_gaps: list[float] = []
        sides = {"reference": self.outside_clock(reference, reference_gaps),
                 "candidate": Side(self.candidate_prepare(), None, self.remote.timer)}
        with self.reference_runs("timing the reference"):
            self.timings, self.converged = time_interleaved(sides, self.timer, self.spec.timing,
                                                            inspect=self.recheck)
        runner_ticks = self.remote.ticks() - runner_ticks
        self.remote.end()
        load = watch.stop(peer_ticks=runner_ticks)
        # Lower quartiles: a call the machine interrupted only adds time, an altered figure adds it to every call.
        # Less the spread of the reference's own gaps (what a loaded machine adds by chance) and, where the runner
        # was stopped while they were measured, the round trip a reply costs (which its interference hid).
        low, high = quartiles(reference_gaps)
        round_trip = self.round_trip_ms if self.freezer.stopped_calls else 0.0
        self.unreported_ms = quartiles(self.remote.gaps_ms)[0] - low - (high - low) - round_trip
        self.stage_ends("time")
        self.stages.update(load)  # cpu_jitter, cpu_foreign, cpu_steal: shares, after the stage times are summed
        self.stages["check_poisoned"] = self.poisoned_s
        self.stages.update(self.parts)
        self.stages["round_trip_ms"] = self.round_trip_ms
        self.stages["runner_wait_ms"] = self.runner_wait_ms
        # How the two processes' own starts went (seconds from each one's start to its device being ready, its imports
        # and its CUDA context apart, and the attempts the context took): what an evaluation handed to children not
        # yet started waits for.
        self.stages.update({f"runner_{key}": value for key, value in self.remote.runner_start.items()})
        self.stages.update({f"judge_{key}": value for key, value in self.judge_start.items()})
        if self.freezer.stopped_calls:  # reference calls timed with the runner stopped, and with a thread of it not
            self.stages.update(runner_stopped=self.freezer.stopped_calls, runner_running=self.freezer.running_calls)

    def candidate_prepare(self):
        counter = iter(range(1 << 62))

        def prepare():
            label = f"timing-candidate-{next(counter)}"
            return label, [self.seed(label)]
        return prepare

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

    # ---- the checks ----

    @contextlib.contextmanager
    def reference_runs(self, what: str):
        """A failure of the reference is the problem's (the harness's), but for running out of device memory while
        the candidate's process holds it."""
        try:
            with failing_as(f"problem error: {what} failed", HARNESS_ERROR):
                yield
        except EvalFailure as failure:
            if failure.status == HARNESS_ERROR and "OutOfMemoryError" in str(failure):
                raise EvalFailure("runtime_error", f"{failure} (with the candidate's process holding the device's "
                                                   "memory beside it)") from None
            raise

    def expected(self, inputs: list, observe=None):
        with self.reference_runs("running the reference"):
            expected = self.reference(*inputs)
            self.sync()
        if observe:
            observe(expected)
        return expected

    def against_reference(self, out, expected, what: str):
        """The candidate's output (as the runner copied it when forward returned) must match the reference. One
        value everywhere where the reference varies is wrong, however close the absolute tolerance lets it come."""
        result = compare(out, expected, self.atol, self.rtol)
        if not result.ok:
            raise EvalFailure("incorrect", f"{what}: {result.message}", result)
        for i, (mine, stats) in enumerate(zip(tensors(out), self.reference_stats)):
            if varies(stats) and one_value(mine):
                where = f"output[{i}]" if len(self.reference_stats) > 1 else "output"
                raise EvalFailure("incorrect", f"{what}: {where} is {float(mine.reshape(-1)[0]):g} everywhere, "
                                               f"where the reference varies (std {stats.std:.3g}, mean |x| "
                                               f"{stats.mean_abs:.3g}): within atol={self.atol:g} of it only "
                                               "because its values are that small", result)
        return result

    def observe_reference(self, expected) -> None:
        """Trial 0: the reference outputs' statistics and a sample of each; trial 1: how much of that sample
        a new seed changed (the parent decides from these whether the problem can tell right from wrong)."""
        outputs = tensors(expected)
        if not self.reference_stats:
            self.reference_stats = tuple(output_stats(t, self.atol, self.rtol) for t in outputs)
            self.seed_samples = [seed_sample(t) for t in outputs]
        elif self.seed_mismatch is None:
            self.seed_mismatch = tuple(compare_tensor(seed_sample(t), s, self.atol, self.rtol).mismatch_fraction
                                       or 0.0 for t, s in zip(outputs, self.seed_samples, strict=True))
            self.seed_samples = []

    def recheck(self, side: str, round_: int, label: str, args: list, out) -> None:
        """Called by the timer after each timed call: the first two candidate outputs, then a secret share."""
        if side != "candidate" or out is not KEPT or (round_ >= 2 and self.draw.random() >= RECHECK_SHARE):
            return
        what = f"timed call {round_}"
        expected = self.expected(self.inputs(label))
        found, handover_ms = self.remote.output(what, expected)
        self.copies.append(self.copy_ms(expected, on_device=self.remote.channel.last_box == "device"))
        self.deferred.append(handover_ms - self.copies[-1])
        self.against_reference(found, expected, f"{what}, on fresh inputs (a cached or stale result?)")
        self.rechecked += 1

    def copy_ms(self, expected, on_device: bool) -> float:
        """What handing an output like `expected` over costs when its work is done: one copy of its bytes into
        memory of the kind the runner's outbox is (a shared file in host memory, or device memory), timed here."""
        parts = [t.detach().contiguous().reshape(-1).view(torch.uint8) for t in tensors(expected) if t.numel()]
        size = sum(p.numel() for p in parts)
        if on_device:
            buffer = torch.empty(size, dtype=torch.uint8, device=self.device)
        else:
            if self.copy_buffer is None or self.copy_buffer.size < size:
                self.copy_buffer = Shared.create(size)
                self.copy_buffer.bytes.fill_(1)  # its pages in place, as the runner's are after its first output
            buffer = self.copy_buffer.bytes
        self.sync()
        start, offset = _clock_ns(), 0
        for part in parts:
            buffer[offset:offset + part.numel()].copy_(part)
            offset += part.numel()
        self.sync()
        return (_clock_ns() - start) / 1e6

    # ---- the report ----

    def failed(self, failure: EvalFailure) -> WorkerReport:
        failed_in = next((n for n in STAGES if n not in self.stages), None)
        if failed_in:
            self.stage_ends(failed_in)
        if failure.status != "incorrect":
            return WorkerReport(status=failure.status, error=str(failure), **self.fields)
        found = failure.comparison
        check = CheckResult(status="incorrect", trials=self.trials_run, atol=self.atol, rtol=self.rtol,
                            message=str(failure), max_abs_err=found.max_abs_err if found else None,
                            max_rel_err=found.max_rel_err if found else None,
                            mismatch_fraction=found.mismatch_fraction if found else None)
        return WorkerReport(status="incorrect", check=check, error=str(failure), **self.observed(), **self.fields)

    def passed(self) -> WorkerReport:
        check = CheckResult(status="correct", trials=self.spec.trials, max_abs_err=self.worst_abs,
                            max_rel_err=self.worst_rel, mismatch_fraction=0.0, atol=self.atol, rtol=self.rtol,
                            message=f"{self.spec.trials} trials and {self.rechecked} timed calls checked")
        return WorkerReport(status="correct", check=check, runtime=self.timings["candidate"],
                            ref_runtime=self.timings["reference"], converged=self.converged,
                            unreported_ms=self.unreported_ms, deferred_ms=min(self.deferred, default=None),
                            copy_ms=median(self.copies) if self.copies else None,
                            **self.observed(), **self.fields)

    def observed(self) -> dict:
        return dict(reference_stats=self.reference_stats, seed_mismatch=self.seed_mismatch, coverage=self.coverage)


def quartiles(values: list[float]) -> tuple[float, float]:
    """The lower and upper quartiles."""
    if len(values) < 2:
        return values[0], values[0]
    q = quantiles(values, n=4)
    return q[0], q[2]


def main(argv: list[str]) -> int:
    """`serve TARGET FD STOP`: ready the device, then evaluate the one spec that comes through stdin, with the runner
    on descriptor FD and its sandbox's init on STOP ("-": none)."""
    judge_start = start_figures(started_device(torch, argv[1]))
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
