"""One job through its evaluation: a child process (started ahead of need, or now) checks and times the
built candidate and reports what it measured (WorkerReport); the verdict and its flags are decided here, in
the parent (plausibility.py). A failure before the candidate's code ran is the harness's (harness_error).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.checks import CheckSpec
from harness.config import Settings
from harness.eval import gpu_load, kernel_use, triton_cache
from harness.eval.build import (
    BUILD_PROTOCOL,
    build,
    build_sha256,
    extension_env,
    harness_version,
    torch_version,
)
from harness.eval.confine import UNSANDBOXED, confinement
from harness.eval.kernel_use import LOW_COVERAGE
from harness.eval.pch_maker import MadeLater
from harness.eval.plausibility import CONFIRMED, plausibility_flags
from harness.eval.said import Said, said
from harness.figures import Figures, ProcessFigures, StageSeconds
from harness.problems.gate import degenerate_reasons
from harness.process import (
    CANDIDATE_STARTS,
    WARM_TRITON_ENV,
    ChildOutcome,
    EvalChild,
    child_env,
    read_log,
    tail,
)
from harness.protocol import WorkerReport, WorkerSpec
from harness.types import (
    HARNESS_ERROR,
    UNINFORMATIVE,
    Baseline,
    BuildResult,
    Candidate,
    DeviceInfo,
    EvalResult,
    Peaks,
    Problem,
    merge_flags,
)
from harness.workloads import mask_numbers, weighted_speedup


@dataclass(frozen=True)
class Job:
    problem: Problem
    candidate: Candidate
    flags: tuple[str, ...] = ()  # from the static rules, carried into the result
    also: CheckSpec | None = None  # a second check whose verdict is recorded beside (audit: the claim's own)


def eval_env(device: DeviceInfo, scratch: Path) -> dict[str, str]:
    return child_env({**extension_env(device, scratch),
                      "CUDA_VISIBLE_DEVICES": "" if device.index is None else str(device.index)})


def result_for(job: Job, device: DeviceInfo, settings: Settings, **fields) -> EvalResult:
    """An EvalResult for this job on this device under these settings, with the given verdict fields."""
    return EvalResult(problem_id=job.problem.id, problem_sha256=job.problem.sha256,
                      candidate_path=job.candidate.path, candidate_sha256=job.candidate.sha256,
                      target=device.target, device_name=device.name, torch_version=torch_version(),
                      dtype=settings.dtype, check_spec=settings.check_spec, build_protocol=BUILD_PROTOCOL,
                      harness_version=harness_version(), **fields)


Rebaseline = Callable[[Problem, DeviceInfo], Baseline | None]


def evaluate_built(job: Job, build: BuildResult, device: DeviceInfo, settings: Settings, seed: int,
                   baseline: Baseline | None = None, peaks: Peaks | None = None,
                   rebaseline: Rebaseline | None = None, child: ReadyChild | None = None) -> EvalResult:
    """Check and time one built candidate in a child process used for nothing else (`child`, started ahead
    of need, or a new one); `baseline` is the reference measured clean, `peaks` the device's measured peaks,
    `rebaseline` measures the reference clean again (plausibility.py).

    A result flagged on one evaluation's clocks alone (a slowed reference, hidden work, a disputed timing:
    plausibility.CONFIRMED) is evaluated once more, in new children, before the candidate is blamed: a neighbour the
    counters cannot see, or a process that came out slow, marks one evaluation, while a candidate that causes the flag
    causes it again. The second verdict stands."""
    result = evaluate_once(job, build, device, settings, seed, baseline, peaks, rebaseline, child=child)
    if CONFIRMED & set(result.flags):
        again = evaluate_once(job, build, device, settings, seed, baseline, peaks, rebaseline, child=None)
        flagged = StageSeconds(flagged_eval_s=result.figures.stages.eval_s)
        result = again.model_copy(update={"figures": again.figures.add(stages=flagged)})
    if settings.sandbox == "off":  # the user's explicit choice, carried by the result
        result = result.model_copy(update={"flags": merge_flags(result.flags, (UNSANDBOXED,))})
    return result


def evaluate_once(job: Job, build: BuildResult, device: DeviceInfo, settings: Settings, seed: int,
                  baseline: Baseline | None, peaks: Peaks | None, rebaseline: Rebaseline | None,
                  child: ReadyChild | None = None) -> EvalResult:
    if build.status != "ok":
        if child:
            child.discard()
        status = "compile_error" if build.status == "compile_error" else build.status
        return result_for(job, device, settings, status=status, error=build.error, build=build, flags=job.flags)
    child = child or ReadyChild(device, settings)
    child_age_s = time.monotonic() - child.started_at  # how long its processes had to start up
    contention = gpu_load.check_for(device, settings.contention_wait_s)  # other processes on the GPU
    try:
        spec = WorkerSpec(problem_path=job.problem.path, build_dir=build.directory, target=device.target,
                          dtype=settings.dtype, seed=seed, trials=settings.trials, atol=job.problem.atol,
                          rtol=job.problem.rtol, workloads=job.problem.workloads, memory_gb=job.problem.memory_gb,
                          check=settings.check_spec,
                          also=job.also, timing=settings.timing, result_path=str(child.report),
                          runner_scratch=str(child.runner_work))
        triton_cache.stage_in(settings.cache_dir, build.build_sha256, child.runner_work)  # kernels compiled before
        contention.before()  # waits (bounded) while another process computes on the GPU
        outcome = child.run(spec.model_dump_json(), settings.eval_timeout_s)
        contention.after()
        if not outcome.timed_out:
            triton_cache.keep(settings.cache_dir, build.build_sha256, child.runner_work)
        log = read_log(child.runner_work / "eval.log")
        started = CANDIDATE_STARTS in log  # before the candidate's code ran, nothing is the candidate's doing
        if outcome.timed_out:  # on which workload is not known: the log may hold a held-out one's sizes
            shown = mask_numbers if any(w.held_out for w in job.problem.workloads) else str
            return result_for(job, device, settings, status="timeout" if started else HARNESS_ERROR,
                              build=build,
                              error=f"evaluation {outcome.describe()} (--eval-timeout)\n{shown(tail(log, 10))}".strip())
        report = read_report(child.report)
        words = said(build.log or "", log, {build.directory or "": "<build>", str(child.runner_work): "<scratch>",
                                            str(settings.cache_dir): "<cache>"})
        exits = child.exits()
        if report is None:  # the judge runs no candidate code: its own failure
            judge_log = read_log(child.work / "eval.log")
            return result_for(job, device, settings, status=HARNESS_ERROR, build=build,
                              error=f"harness error: the evaluation's judge {outcome.describe()} before reporting a "
                                    f"result\n{tail(judge_log, 15)}".strip())
        if report.status in ("runtime_error", HARNESS_ERROR) and child.runner_outcome():
            held_out = any(w.status == report.status and not w.public for w in report.workloads)
            shown = (mask_numbers if held_out else str)(tail(log, 15))
            report = report.model_copy(update={"error": f"{report.error}\n{child.runner_outcome()}\n{shown}".strip()})
    finally:
        child.discard()
    return verdict(job, build, device, settings, report, baseline, peaks, rebaseline, words,
                   figures=report.figures.add(stages=StageSeconds(eval_s=outcome.duration_s),
                                              process=exits.model_copy(update={"child_age_s": round(child_age_s, 3)}),
                                              contention=contention.figures),
                   contention_flags=contention.flags)


def verdict(job: Job, build: BuildResult, device: DeviceInfo, settings: Settings, report: WorkerReport,
            baseline: Baseline | None, peaks: Peaks | None, rebaseline: Rebaseline | None, words: Said, *,
            figures: Figures, contention_flags: tuple[str, ...]) -> EvalResult:
    """The result of what the child reported: its speed's plausibility, the problem's informativeness and whether
    the candidate's own kernels did the work (kernel_use.py) are decided here; a verdict that is not `correct`
    quotes what the candidate's code caught of its own failures (said.py)."""
    use = kernel_use.judge(report.coverage if report.status == "correct" else None, device.target,
                           settings.min_coverage if job.problem.min_coverage is None else job.problem.min_coverage)
    error = use.rejection or report.error
    if words.caught and (error or LOW_COVERAGE in use.flags) and words.quote() not in (error or ""):
        error = f"{error}\n{words.quote()}" if error else words.quote()  # low coverage: why PyTorch did the work
    speedup = None
    if report.status == "correct" and report.runtime and report.ref_runtime and report.runtime.median_ms > 0:
        speedup = weighted_speedup(report.workloads) or report.ref_runtime.median_ms / report.runtime.median_ms
    flags = plausibility_flags(report, device, dtype=settings.dtype, speedup=speedup,
                               max_speedup=job.problem.max_speedup or settings.max_speedup, baseline=baseline,
                               peaks=peaks, rebaseline=rebaseline and (lambda: rebaseline(job.problem, device)),
                               gpu_contended=bool(contention_flags))
    degenerate = degenerate_reasons(report.reference_stats, report.seed_mismatch)
    return result_for(job, device, settings, status="rejected" if use.rejection else report.status,
                      speedup=None if use.rejection else speedup, runtime=report.runtime,
                      ref_runtime=report.ref_runtime, check=report.check, error=error, output=words.printed or None,
                      uninformative="; ".join(degenerate) or None, coverage=report.coverage,
                      workloads=report.workloads,
                      flags=merge_flags(job.flags, flags, contention_flags, [UNINFORMATIVE] if degenerate else [],
                                        use.flags),
                      build=build, figures=figures)


REPORT_LIMIT = 1 << 20  # a report is a few kilobytes


def read_report(path: Path) -> WorkerReport | None:
    """The evaluation child's report, or None where it is too big or not one."""
    try:
        if path.stat().st_size > REPORT_LIMIT:
            return None
        return WorkerReport.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None


def harness_fault(
    job: Job,
    device: DeviceInfo,
    settings: Settings,
    doing: str,
    exc: BaseException,
    build_result: BuildResult | None = None,
) -> EvalResult:
    """The result of a job the harness itself failed (retried next run, counted nowhere)."""
    return result_for(
        job,
        device,
        settings,
        status=HARNESS_ERROR,
        build=build_result,
        flags=job.flags,
        error=f"harness error while {doing}: {type(exc).__name__}: {exc}",
    )


def build_or_fault(candidate: Candidate, device: DeviceInfo, settings: Settings,
                   yield_cores: bool = True, made_later: MadeLater | None = None) -> BuildResult:
    """build(), with a failure of the harness's own (a full disk, a child that cannot start) as a
    harness_error build instead of an exception that would end the whole run."""
    try:
        return build(
            candidate,
            device,
            settings.cache_dir,
            settings.build_timeout_s,
            settings.max_jobs,
            force=settings.force if settings.rebuild is None else settings.rebuild,
            confinement=confinement(settings),
            yield_cores=yield_cores,
            made_later=made_later,
        )
    except Exception as exc:  # noqa: BLE001 - reported as the job's harness_error
        return BuildResult(
            status=HARNESS_ERROR,
            build_sha256=build_sha256(candidate, device, sandboxed=settings.sandbox == "on"),
            directory="",
            duration_s=0.0,
            log="",
            error=f"harness error while building: {type(exc).__name__}: {exc}",
        )


class ReadyChild:
    """An evaluation's judge and runner started ahead of need (process.EvalChild), each with a work directory of
    its own: the runner's inside the judge's, which the runner cannot write."""

    def __init__(self, device: DeviceInfo, settings: Settings, warm_triton: bool = False):
        """`warm_triton`: the runner makes Triton's driver while it starts (a batch with Triton candidates)."""
        self.started_at = time.monotonic()
        self.work = Path(tempfile.mkdtemp(prefix="eval-", dir=settings.cache_dir))
        self.runner_work = self.work / "runner"
        self.runner_work.mkdir()
        self.report = self.work / "report.json"  # where the judge writes its report
        sandbox = confinement(settings)
        gpu = device.target == "cuda"
        runner_env = eval_env(device, self.runner_work) | ({WARM_TRITON_ENV: "1"} if warm_triton else {})
        self.child = EvalChild(device.target,
                               judge=(eval_env(device, self.work), self.work,
                                      sandbox and sandbox.policy(self.work, gpu=gpu)),
                               runner=(runner_env, self.runner_work,
                                       sandbox and sandbox.policy(self.runner_work, gpu=gpu)))

    def run(self, spec_json: str, timeout_s: float) -> ChildOutcome:
        return self.child.run(spec_json, timeout_s)

    def exits(self) -> ProcessFigures:
        """How long each process took to end once the judge had written its report: the judge's exit (its
        CUDA context torn down) and then the runner's, which starts as the judge's end of their socket closes. Both
        are part of `eval` and of no stage."""
        ended = self.child.ended
        try:
            written = self.report.stat().st_mtime
        except OSError:
            return ProcessFigures()
        if "judge" not in ended or ended["judge"] < written:
            return ProcessFigures()
        return ProcessFigures(judge_exit_s=round(ended["judge"] - written, 4),
                              runner_exit_s=round(ended["runner"] - ended["judge"], 4) if "runner" in ended else None)

    def runner_outcome(self) -> str:
        """How the runner ended, where it did not end by itself (a signal, a status other than 0), or ''."""
        code = self.child.runner_code
        if code is None or code == 0:
            return ""
        return "the candidate's process: " + ChildOutcome(code, False, 0.0).describe().removeprefix("child process ")

    def discard(self) -> None:
        self.child.discard()
        self.remove()

    def remove(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
