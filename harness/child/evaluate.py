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
import sys
import time
import traceback
from pathlib import Path

from harness.child import observe as cpu_load
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
from harness.child.loader import import_candidate, install_extension_loader
from harness.process import write_atomic
from harness.types import HARNESS_ERROR, CheckResult, WorkerReport, WorkerSpec

_clock = time.perf_counter  # bound before any candidate code runs: stage times cannot be patched
RECHECK_SHARE = 0.1  # share of timed candidate calls whose output is checked again (besides the first two)

STAGES = ("setup", "check", "time")


def stage_ends(stages: dict[str, float], name: str, started: float) -> None:
    stages[name] = _clock() - started - sum(stages.values())


def eval_main(spec: WorkerSpec) -> WorkerReport:
    import random

    import torch

    from harness.child.check import compare, same_values, tolerances
    from harness.child.defenses import (
        Guard,
        identical,
        output_problem,
        poison,
        poison_free_memory,
        snapshot,
    )
    from harness.child.timing import time_interleaved

    started = _clock()
    device, device_name, timer, sync = target_device(torch, spec.target)
    dtype = getattr(torch, spec.dtype)
    atol, rtol = tolerances(dtype, spec.atol, spec.rtol)
    stages: dict[str, float] = {}  # seconds spent setting up, checking, timing (filled in as they end)
    report = dict(device_name=device_name, torch_version=torch.__version__, stages=stages)

    # Until the candidate's code runs, a failure is the problem file's or the harness's (HARNESS_ERROR).
    with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
        problem = import_problem(spec.problem_path)
        init_inputs = problem.get_init_inputs()
    if not isinstance(init_inputs, (list, tuple)):
        raise EvalFailure(HARNESS_ERROR,
                          f"problem error: get_init_inputs() returned {type(init_inputs).__name__}, not a list")

    def make_inputs(label: str) -> list:
        return seeded_inputs(problem, device, dtype, spec.seed, label)

    def clone(inputs: list) -> list:
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

    def run_candidate(args: list, what: str, fresh_poison: bool):
        """One checked call (after fresh poison if asked), the output copied the moment forward returns."""
        if fresh_poison:
            poison_free_memory(device)
        with failing_as(f"ModelNew.forward failed ({what})"):
            out = candidate(*args)
            sync()
        guard.verify(f"in forward, {what}")
        problem_text = output_problem(out)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        return out, snapshot(out)

    def against_reference(out, copy, inputs: list, what: str):
        """The copy taken on return must match the reference on `inputs`, and the output must not have
        changed since; the reference's output is poisoned before it is freed."""
        with failing_as("reference Model failed (problem error)"):
            expected = reference(*inputs)
            sync()
        result = compare(copy, expected, atol, rtol)
        if not result.ok:
            raise EvalFailure("incorrect", f"{what}: {result.message}", result)
        if not identical(out, copy):
            raise EvalFailure("incorrect", f"{what}: the output changed after forward returned "
                                           "(work still running in the background)")
        poison(expected)
        return result

    init_seed = trial_seed(spec.seed, "init")
    trials_run = 0
    try:
        with torch.no_grad():
            with failing_as("problem error: constructing Model failed", HARNESS_ERROR):
                reference = construct(problem.Model, init_inputs, device, dtype, init_seed)

            guard = Guard()  # before the candidate's code runs at all
            install_extension_loader(Path(spec.build_dir), "load")
            candidate_starts()
            with failing_as("constructing ModelNew failed"):
                module = import_candidate(Path(spec.build_dir))
                guard.verify("at import")
                # same seed: same initial parameters as the reference
                candidate = construct(module.ModelNew, init_inputs, device, dtype, init_seed)
            guard.verify("in ModelNew.__init__")
            stage_ends(stages, "setup", started)

            worst_abs = worst_rel = 0.0
            for trial in range(spec.trials):
                trials_run = trial + 1
                inputs = make_inputs(f"trial{trial}")
                mine = clone(inputs)
                # Poison (~0.2 s on an 80 GB GPU) only before trial 0's two runs: later trials' inputs are
                # fresh, and nothing has computed on them before the candidate runs (the reference runs
                # after it, its output poisoned before it is freed), so freed memory cannot hold their
                # answers; an output left partly unwritten already fails trial 0 on poisoned memory.
                out, copy = run_candidate(mine, f"trial {trial}", fresh_poison=trial == 0)
                changed = [i for i, (a, b) in enumerate(zip(mine, inputs, strict=True))
                           if isinstance(a, torch.Tensor) and not same_values(a, b)]
                if changed:
                    raise EvalFailure("incorrect", f"trial {trial}: ModelNew.forward modified its input(s) {changed}")
                if trial == 0:  # the same input twice: uninitialised memory or races show as disagreement
                    again, _ = run_candidate(clone(inputs), "trial 0, second run on the same input",
                                              fresh_poison=True)
                    result = compare(again, copy, atol, rtol)
                    if not result.ok:
                        raise EvalFailure("incorrect", "two runs on the same input disagree (uninitialised memory "
                                                       "or a race): " + result.message, result)
                    del again
                result = against_reference(out, copy, inputs, f"trial {trial}")
                worst_abs = max(worst_abs, result.max_abs_err or 0.0)
                worst_rel = max(worst_rel, result.max_rel_err or 0.0)
                del out, copy, mine, inputs
            stage_ends(stages, "check", started)

            # Timing: fresh inputs for every call; some candidate outputs are checked again, chosen by a
            # secret draw, against the reference on a pristine copy of the same inputs.
            draw = random.Random(trial_seed(spec.seed, "recheck"))
            rechecked = 0

            def recheck(side: str, round_: int, label: str, args: list, out) -> None:
                nonlocal rechecked
                if side != "candidate" or (round_ >= 2 and draw.random() >= RECHECK_SHARE):
                    return
                what = f"timed call {round_}"
                problem_text = output_problem(out)
                if problem_text:
                    raise EvalFailure("incorrect", f"{what}: {problem_text}")
                copy = snapshot(out)
                guard.verify(f"in forward, {what}")
                against_reference(out, copy, make_inputs(label),
                                  f"{what}, on fresh inputs (a cached or stale result?)")
                rechecked += 1

            watch = cpu_load.Watch(spec.target)  # cpu: idle jitter now, other processes' CPU use across the timing
            with failing_as("failed while timing"):
                timings, converged = time_interleaved(
                    {name: timed_side(problem, device, dtype, spec.seed, name, fn)
                     for name, fn in (("reference", reference), ("candidate", candidate))},
                    timer, spec.timing, inspect=recheck)
            load = watch.stop()
            guard.verify("while being timed")
            stage_ends(stages, "time", started)
            stages.update(load)  # cpu_jitter, cpu_foreign, cpu_steal: shares, after the stage times are summed
    except EvalFailure as failure:  # verdicts reached inside: incorrect, rejected (Tampered), runtime_error
        failed_in = next((n for n in STAGES if n not in stages), None)
        if failed_in:
            stage_ends(stages, failed_in, started)
        if failure.status != "incorrect":
            return WorkerReport(status=failure.status, error=str(failure), **report)
        found = failure.comparison
        check = CheckResult(status="incorrect", trials=trials_run, atol=atol, rtol=rtol, message=str(failure),
                            max_abs_err=found.max_abs_err if found else None,
                            max_rel_err=found.max_rel_err if found else None,
                            mismatch_fraction=found.mismatch_fraction if found else None)
        return WorkerReport(status="incorrect", check=check, error=str(failure), **report)
    check = CheckResult(status="correct", trials=spec.trials, max_abs_err=worst_abs, max_rel_err=worst_rel,
                        mismatch_fraction=0.0, atol=atol, rtol=rtol,
                        message=f"{spec.trials} trials and {rechecked} timed calls checked")
    return WorkerReport(status="correct", check=check, runtime=timings["candidate"],
                        ref_runtime=timings["reference"], converged=converged, **report)


def warm_up(target: str) -> None:
    """What every evaluation pays before it can start: importing torch and the harness's own modules, and
    (cuda) creating the context; a warm child pays it while the previous candidate is evaluated."""
    import torch

    from harness.child import check, defenses, timing  # noqa: F401

    if target == "cuda" and torch.cuda.is_available():
        for attempt in range(5):
            try:
                torch.empty(1, device="cuda")
                return
            except RuntimeError:  # the evaluation beside us may hold all free memory for a moment (poison)
                time.sleep(0.5 * (attempt + 1))


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
