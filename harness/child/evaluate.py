"""The evaluation child (`python -m harness.child serve TARGET`): started ahead of need, it imports torch
and readies the device, then reads one WorkerSpec (a JSON line) from stdin, checks the built candidate
against the reference and times both.

Whatever the candidate does (segfault, os._exit, exceptions, endless loops), the parent sees it
from the outside; this process only reports what it could observe, as WorkerReport JSON. It prints
CANDIDATE_STARTS to its log just before the candidate's code first runs: a failure before it is the
harness's (or the machine's), never the candidate's (HARNESS_ERROR).
"""

from __future__ import annotations

import os
import random
import sys
import time
import traceback
from pathlib import Path

import torch

from harness.child import coverage
from harness.child import observe as cpu_load
from harness.child.check import (
    compare,
    compare_tensor,
    one_value,
    output_stats,
    same_values,
    seed_sample,
    tensors,
    tolerances,
    varies,
)
from harness.child.common import (
    EvalFailure,
    candidate_starts,
    construct,
    describe,
    failing_as,
    import_problem,
    seeded_inputs,
    target_device,
    timed_side,
    trial_seed,
)
from harness.child.defenses import (
    Guard,
    identical,
    output_problem,
    poison,
    poison_free_memory,
    snapshot,
)
from harness.child.loader import import_candidate, install_extension_loader, loaded_modules
from harness.child.timing import time_interleaved
from harness.child.triton_jit import JitClock, uses_triton
from harness.process import CANDIDATE_FILE, write_atomic
from harness.protocol import WorkerReport, WorkerSpec
from harness.types import HARNESS_ERROR, CheckResult

_clock = time.perf_counter  # bound before any candidate code runs: stage times cannot be patched
RECHECK_SHARE = 0.1  # share of timed candidate calls whose output is checked again (besides the first two)

STAGES = ("setup", "check", "coverage", "time")


def eval_main(spec: WorkerSpec) -> WorkerReport:
    """Setup, check, time; the first verdict reached inside (incorrect, rejected, runtime_error...) ends it."""
    evaluation = Evaluation(spec)
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
    """One built candidate against the problem's reference, in this process, in three stages whose times
    are recorded: setup (both modules built, the candidate imported), check (trials on fresh inputs), time
    (interleaved, with timed outputs checked again)."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec
        self.started = _clock()
        self.device, device_name, self.timer, self.sync = target_device(torch, spec.target)
        self.dtype = getattr(torch, spec.dtype)
        self.atol, self.rtol = tolerances(self.dtype, spec.atol, spec.rtol)
        self.stages: dict[str, float] = {}  # seconds spent setting up, checking, timing (filled in as they end)
        self.fields = dict(device_name=device_name, torch_version=torch.__version__, stages=self.stages)
        self.trials_run = self.rechecked = 0
        self.worst_abs = self.worst_rel = 0.0
        self.reference_stats: tuple = ()  # the reference's outputs on trial 0, and how they move with the seed
        self.seed_samples: list[torch.Tensor] = []
        self.seed_mismatch: tuple[float, ...] | None = None
        self.coverage = None
        self.jit: JitClock | None = None  # Triton's compile and autotune seconds, for a candidate that uses Triton
        # Until the candidate's code runs, a failure is the problem file's or the harness's (HARNESS_ERROR).
        with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
            self.problem = import_problem(spec.problem_path)
            self.init_inputs = self.problem.get_init_inputs()
        if not isinstance(self.init_inputs, (list, tuple)):
            raise EvalFailure(HARNESS_ERROR, "problem error: get_init_inputs() returned "
                                             f"{type(self.init_inputs).__name__}, not a list")

    def stage_ends(self, name: str) -> None:
        """The stage's seconds, less Triton's compiling and autotuning in it (their own entries, build time)."""
        if self.jit:
            self.stages.update(self.jit.seconds)
        self.stages[name] = _clock() - self.started - sum(self.stages.values())

    def inputs(self, label: str) -> list:
        return seeded_inputs(self.problem, self.device, self.dtype, self.spec.seed, label)

    # ---- the stages ----

    def setup(self) -> None:
        init_seed = trial_seed(self.spec.seed, "init")
        with failing_as("problem error: constructing Model failed", HARNESS_ERROR):
            self.reference = construct(self.problem.Model, self.init_inputs, self.device, self.dtype, init_seed)
        if uses_triton((Path(self.spec.build_dir) / CANDIDATE_FILE).read_text()):
            self.jit = JitClock(interpreted=self.spec.target == "cpu")
        # before the candidate's code runs at all; this module and its class are watched too
        self.guard = Guard(also={__name__: sys.modules[__name__], f"{__name__}.Evaluation": Evaluation})
        install_extension_loader(Path(self.spec.build_dir), "load", scratch=Path(self.spec.result_path).parent)
        self.known_ops = coverage.op_namespaces()  # any namespace of operators added from here on is the candidate's
        candidate_starts()
        with failing_as("constructing ModelNew failed"):
            module = import_candidate(Path(self.spec.build_dir))
            self.guard.verify("at import")
            # same seed: same initial parameters as the reference
            self.candidate = construct(module.ModelNew, self.init_inputs, self.device, self.dtype, init_seed)
        self.guard.verify("in ModelNew.__init__")
        self.stage_ends("setup")

    def check(self) -> None:
        for trial in range(self.spec.trials):
            self.trials_run = trial + 1
            inputs = self.inputs(f"trial{trial}")
            mine = clone(inputs)
            # Poison (~0.2 s on an 80 GB GPU) only before trial 0's two runs: later trials' inputs are fresh, and
            # nothing has computed on them before the candidate runs (the reference runs after it, its output
            # poisoned before it is freed), so freed memory cannot hold their answers; an output left partly
            # unwritten already fails trial 0 on poisoned memory.
            out, copy = self.run_candidate(mine, f"trial {trial}", fresh_poison=trial == 0)
            changed = [i for i, (a, b) in enumerate(zip(mine, inputs, strict=True))
                       if isinstance(a, torch.Tensor) and not same_values(a, b)]
            if changed:
                raise EvalFailure("incorrect", f"trial {trial}: ModelNew.forward modified its input(s) {changed}")
            if trial == 0:  # the same input twice: uninitialised memory or races show as disagreement
                again, _ = self.run_candidate(clone(inputs), "trial 0, second run on the same input",
                                              fresh_poison=True)
                result = compare(again, copy, self.atol, self.rtol)
                if not result.ok:
                    raise EvalFailure("incorrect", "two runs on the same input disagree (uninitialised memory "
                                                   "or a race): " + result.message, result)
                del again
            result = self.against_reference(out, copy, inputs, f"trial {trial}",
                                            observe=self.observe_reference if trial < 2 else None)
            self.worst_abs = max(self.worst_abs, result.max_abs_err or 0.0)
            self.worst_rel = max(self.worst_rel, result.max_rel_err or 0.0)
            del out, copy, mine, inputs
        self.stage_ends("check")

    def profile(self) -> None:
        """One more call, profiled, on fresh inputs: how much of the work the candidate's own code did
        (coverage.py). Its output is not checked again: a candidate that computes differently under the profiler
        changes only its own coverage."""
        inputs = self.inputs("coverage")
        with failing_as("ModelNew.forward failed (the profiled call)"):
            self.coverage, _ = coverage.measure(lambda: self.candidate(*inputs), frozenset(loaded_modules),
                                                cuda=self.spec.target == "cuda",
                                                namespaces=coverage.op_namespaces() - self.known_ops)
        self.guard.verify("in forward, the profiled call")
        self.stage_ends("coverage")

    def time(self) -> None:
        """Fresh inputs for every call; some candidate outputs are checked again, chosen by a secret draw,
        against the reference on a pristine copy of the same inputs."""
        self.draw = random.Random(trial_seed(self.spec.seed, "recheck"))
        watch = cpu_load.Watch(self.spec.target)  # cpu: idle jitter now, other processes' CPU use across the timing
        sides = {name: timed_side(self.problem, self.device, self.dtype, self.spec.seed, name, fn)
                 for name, fn in (("reference", self.reference), ("candidate", self.candidate))}
        with failing_as("failed while timing"):
            self.timings, self.converged = time_interleaved(sides, self.timer, self.spec.timing, inspect=self.recheck)
        load = watch.stop()
        self.guard.verify("while being timed")
        self.stage_ends("time")
        self.stages.update(load)  # cpu_jitter, cpu_foreign, cpu_steal: shares, after the stage times are summed

    # ---- the checks ----

    def run_candidate(self, args: list, what: str, fresh_poison: bool):
        """One checked call (after fresh poison if asked), the output copied the moment forward returns."""
        if fresh_poison:
            poison_free_memory(self.device)
        with failing_as(f"ModelNew.forward failed ({what})"):
            out = self.candidate(*args)
            self.sync()
        self.guard.verify(f"in forward, {what}")
        problem_text = output_problem(out)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        return out, snapshot(out)

    def against_reference(self, out, copy, inputs: list, what: str, observe=None):
        """The copy taken on return must match the reference on `inputs`, and the output must not have
        changed since; the reference's output is poisoned before it is freed. One value everywhere where the
        reference varies is wrong, however close the absolute tolerance lets it come."""
        with failing_as("reference Model failed (problem error)"):
            expected = self.reference(*inputs)
            self.sync()
        if observe:
            observe(expected)
        result = compare(copy, expected, self.atol, self.rtol)
        if not result.ok:
            raise EvalFailure("incorrect", f"{what}: {result.message}", result)
        for i, (mine, stats) in enumerate(zip(tensors(copy), self.reference_stats)):
            if varies(stats) and one_value(mine):
                where = f"output[{i}]" if len(self.reference_stats) > 1 else "output"
                raise EvalFailure("incorrect", f"{what}: {where} is {float(mine.reshape(-1)[0]):g} everywhere, "
                                               f"where the reference varies (std {stats.std:.3g}, mean |x| "
                                               f"{stats.mean_abs:.3g}): within atol={self.atol:g} of it only "
                                               "because its values are that small", result)
        if not identical(out, copy):
            raise EvalFailure("incorrect", f"{what}: the output changed after forward returned "
                                           "(work still running in the background)")
        poison(expected)
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
        if side != "candidate" or (round_ >= 2 and self.draw.random() >= RECHECK_SHARE):
            return
        what = f"timed call {round_}"
        problem_text = output_problem(out)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        copy = snapshot(out)
        self.guard.verify(f"in forward, {what}")
        self.against_reference(out, copy, self.inputs(label), f"{what}, on fresh inputs (a cached or stale result?)")
        self.rechecked += 1

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
                            ref_runtime=self.timings["reference"], converged=self.converged, **self.observed(),
                            **self.fields)

    def observed(self) -> dict:
        return dict(reference_stats=self.reference_stats, seed_mismatch=self.seed_mismatch, coverage=self.coverage)


def clone(inputs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def warm_up(target: str) -> None:
    """What every evaluation pays before it can start: importing torch and the harness's own modules, (cuda)
    creating the context, starting the profiler; a warm child pays it while the previous candidate is evaluated."""
    cuda = target == "cuda" and torch.cuda.is_available()
    if cuda:
        for attempt in range(5):
            try:
                torch.empty(1, device="cuda")
                break
            except RuntimeError:  # the evaluation beside us may hold all free memory for a moment (poison)
                time.sleep(0.5 * (attempt + 1))
    coverage.warm_up(cuda)
    # torch.compile patches nn.Module.__init__ and __setstate__ at its first use (Dynamo's generation tagging):
    # done now, before the defenses' snapshot, a candidate that calls torch.compile is not one that patches torch.
    from torch._dynamo.mutation_guard import install_generation_tagging_init
    install_generation_tagging_init()


def main(argv: list[str]) -> int:
    """`serve TARGET`: ready the device, then evaluate the one spec that comes through stdin."""
    warm_up(argv[1])
    line = sys.stdin.readline().strip()  # the spec comes through the pipe: its seed is in no file
    if not line:  # the parent discarded this spare
        os._exit(0)
    spec = WorkerSpec.model_validate_json(line)
    try:
        report = eval_main(spec)
    except EvalFailure as failure:
        report = WorkerReport(status=failure.status, error=str(failure), device_name="", torch_version="")
    except BaseException as exc:  # raised by harness code, outside every call into the candidate's
        traceback.print_exc()
        report = WorkerReport(status=HARNESS_ERROR, error=f"harness error: {describe(exc)}", device_name="",
                              torch_version="")
    write_atomic(Path(spec.result_path), report.model_dump_json())
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's destructors or threads must not change the verdict now.
    os._exit(0)
