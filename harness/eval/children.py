"""Driving an evaluation's children: a judge and a runner started ahead of need (ReadyChild), handed one built
candidate, and what they report read back (Observed), with the parent's own figures around it. A failure before the
candidate's code ran is the harness's (harness_error)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import device_lock
from harness.config import Settings
from harness.eval import gpu_load, triton_cache
from harness.eval.build import extension_env
from harness.eval.confine import confinement
from harness.eval.job import JobContext
from harness.eval.said import Said, said
from harness.figures import Figures, ProcessFigures, StageSeconds
from harness.markers import CANDIDATE_STARTS, WARM_TRITON_ENV
from harness.process import ChildOutcome, EvalChild, child_env, read_log, tail
from harness.protocol import WorkerReport, WorkerSpec
from harness.types import HARNESS_ERROR, DeviceInfo, EvalResult
from harness.workloads import mask_numbers


def eval_env(device: DeviceInfo, scratch: Path) -> dict[str, str]:
    return child_env({**extension_env(device, scratch),
                      "CUDA_VISIBLE_DEVICES": "" if device.index is None else str(device.index)})


@dataclass(frozen=True)
class Observed:
    """What one evaluation's judge reported, with the parent's figures added (its time, its children's age and
    exits, the GPU's contention), what the candidate said, and the contention check's flags."""

    report: WorkerReport
    figures: Figures
    said: Said
    contention_flags: tuple[str, ...]
    runner_code: int | None = None  # the runner's exit status (None: it had not ended when the judge was done)
    runner_log: str = ""            # what it printed (a tool it ran under too)
    renames: dict[str, str] = field(default_factory=dict)  # its directories' paths -> the names quoted for them


def observe(ctx: JobContext, child: ReadyChild | None, instrumented: bool = False) -> Observed | EvalResult:
    """Evaluate a built candidate in `child` (started ahead of need) or a new one, discarded after: what it
    observed, or the result of an evaluation that ended without a report to judge (a timeout, the judge's failure).
    `instrumented`: its runner runs under a tool (sanitize.py), for one checked call of the problem as written."""
    job, build, device, settings = ctx.job, ctx.build, ctx.batch.device, ctx.batch.settings
    child = child or ReadyChild(device, settings)
    child_age_s = time.monotonic() - child.started_at  # how long its processes had to start up
    # other processes on the GPU: what an instrumented run, which times nothing, need not wait for
    contention = gpu_load.check_for(device, 0.0 if instrumented else settings.contention_wait_s)
    try:
        spec = WorkerSpec(problem_path=job.problem.path, problem_source=job.problem.source,
                          build_dir=build.directory, target=device.target,
                          dtype=settings.dtype, seed=ctx.batch.seed, trials=1 if instrumented else settings.trials,
                          atol=job.problem.atol, rtol=job.problem.rtol,
                          workloads=job.problem.workloads[:1] if instrumented else job.problem.workloads,
                          memory_gb=job.problem.memory_gb, training=job.problem.training,
                          check=settings.check_spec, also=job.also, timing=settings.timing.on(device.target),
                          instrumented=instrumented, result_path=str(child.report),
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
            masked = mask_numbers if any(w.held_out for w in job.problem.workloads) else str
            return ctx.result(status="timeout" if started else HARNESS_ERROR,
                              error=f"evaluation {outcome.describe()} (--eval-timeout)\n"
                                    f"{masked(tail(log, 10))}".strip())
        report = read_report(child.report)
        renames = {build.directory or "": "<build>", str(child.runner_work): "<scratch>",
                   str(settings.cache_dir): "<cache>"}
        words = said(build.log or "", log, renames)
        exits = child.exits()
        if report is None:  # the judge runs no candidate code: its own failure
            judge_log = read_log(child.work / "eval.log")
            return ctx.result(status=HARNESS_ERROR,
                              error=f"harness error: the evaluation's judge {outcome.describe()} before reporting a "
                                    f"result\n{tail(judge_log, 15)}".strip())
        if report.status in ("runtime_error", HARNESS_ERROR) and child.runner_outcome():
            held_out = any(w.status == report.status and not w.public for w in report.workloads)
            shown = (mask_numbers if held_out else str)(tail(log, 15))
            report = report.model_copy(update={"error": f"{report.error}\n{child.runner_outcome()}\n{shown}".strip()})
    finally:
        contention.close()
        child.discard()
    figures = report.figures.add(stages=StageSeconds(eval_s=outcome.duration_s),
                                 process=exits.model_copy(update={"child_age_s": round(child_age_s, 3)}),
                                 contention=contention.figures)
    return Observed(report, figures, words, contention.flags, child.runner_code, log, renames)


def observe_under(ctx: JobContext, tool: RunnerTool) -> tuple[Observed | EvalResult, float]:
    """One more run of a built candidate in new children, its runner under `tool` (sanitize.py, counters.py), for
    its set-up and trial 0 on the problem as written; and the run's wall seconds, the children's start included."""
    started = time.monotonic()
    observed = observe(ctx, ReadyChild(ctx.batch.device, ctx.batch.settings, tool=tool), instrumented=True)
    return observed, time.monotonic() - started


REPORT_LIMIT = 1 << 20  # a report is a few kilobytes


def read_report(path: Path) -> WorkerReport | None:
    """The evaluation child's report, or None where it is too big or not one."""
    try:
        if path.stat().st_size > REPORT_LIMIT:
            return None
        return WorkerReport.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None



@dataclass(frozen=True)
class RunnerTool:
    """A tool the runner runs under, inside its sandbox (sanitize.py, counters.py): its command line, before the
    runner's own, and what it needs in the runner's environment."""

    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


class ReadyChild:
    """An evaluation's judge and runner started ahead of need (process.EvalChild), each with a work directory of
    its own: the runner's inside the judge's, which the runner cannot write."""

    def __init__(self, device: DeviceInfo, settings: Settings, warm_triton: bool = False,
                 tool: RunnerTool | None = None):
        """`warm_triton`: the runner makes Triton's driver while it starts (a batch with Triton candidates);
        `tool`: what the runner runs under (sanitize.py, counters.py)."""
        self.started_at = time.monotonic()
        self.work = Path(tempfile.mkdtemp(prefix="eval-", dir=settings.cache_dir))
        self.runner_work = self.work / "runner"
        self.runner_work.mkdir()
        self.report = self.work / "report.json"  # where the judge writes its report
        sandbox = confinement(settings)
        gpu = device.target == "cuda"
        tool = tool or RunnerTool(())
        runner_env = eval_env(device, self.runner_work) | ({WARM_TRITON_ENV: "1"} if warm_triton else {}) | tool.env
        judge_env = eval_env(device, self.work)
        # the GPU's lock, the judge's alone: its check shares the device, its timing has it alone (device_lock.py)
        lock = device_lock.open_fds(device.index) if gpu and device.index is not None else ()
        if lock:
            judge_env[device_lock.ENV] = ",".join(map(str, lock))
        judge_policy = sandbox.policy(self.work, gpu=gpu) if sandbox else None
        runner_policy = sandbox.policy(self.runner_work, gpu=gpu) if sandbox else None
        try:
            self.child = EvalChild(device.target, judge=(judge_env, self.work, judge_policy),
                                   runner=(runner_env, self.runner_work, runner_policy), judge_fds=lock,
                                   runner_prefix=tool.argv)
        finally:
            for fd in lock:  # the judge's copies are its own descriptions now
                os.close(fd)

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

    @property
    def runner_code(self) -> int | None:
        """The runner's exit status (None: it had not ended when the judge was done)."""
        return self.child.runner_code

    def runner_outcome(self) -> str:
        """How the runner ended, where it did not end by itself (a signal, a status other than 0), or ''."""
        code = self.runner_code
        if code is None or code == 0:
            return ""
        return "the candidate's process: " + ChildOutcome(code, False, 0.0).describe().removeprefix("child process ")

    def discard(self) -> None:
        self.child.discard()
        self.remove()

    def remove(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
