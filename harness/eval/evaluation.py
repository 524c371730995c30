"""One job through its evaluation: its children observe the built candidate (children.py), the parent decides the
verdict from what they reported (verdict.py), here in between: measuring the reference clean again where the verdict
asks for it, and evaluating again where a flag rests on one evaluation's clocks alone. A failure before the
candidate's code ran is the harness's (harness_error).
"""

from __future__ import annotations

from harness.config import Settings
from harness.eval.baseline import measured_again
from harness.eval.build import BuildOptions, build, build_sha256
from harness.eval.children import ReadyChild, observe
from harness.eval.confine import confinement
from harness.eval.counters import counted
from harness.eval.job import Job, JobContext, result_for
from harness.eval.plausibility import CONFIRMED, wants_fresh_baseline
from harness.eval.sanitize import sanitized
from harness.eval.verdict import verdict
from harness.fastbuild.maker import MadeLater
from harness.figures import StageSeconds
from harness.flags import UNSANDBOXED, merge_flags
from harness.types import HARNESS_ERROR, RAN, BuildResult, Candidate, DeviceInfo, EvalResult


def evaluate_built(ctx: JobContext, child: ReadyChild | None = None) -> EvalResult:
    """Check and time one built candidate in a child process used for nothing else (`child`, started ahead
    of need, or a new one).

    A result flagged on one evaluation's clocks alone (a slowed reference, hidden work, a disputed timing:
    plausibility.CONFIRMED) is evaluated once more, in new children, before the candidate is blamed: a neighbour the
    counters cannot see, or a process that came out slow, marks one evaluation, while a candidate that causes the flag
    causes it again. The second verdict stands. With --sanitize, compute-sanitizer's run comes after (sanitize.py),
    and where counters are asked for, ncu's (counters.py)."""
    result = evaluate_once(ctx, child)
    if CONFIRMED & set(result.flags):
        again = evaluate_once(ctx, None)
        flagged = StageSeconds(flagged_eval_s=result.figures.stages.eval_s)
        result = again.model_copy(update={"figures": again.figures.add(stages=flagged)})
    if ctx.batch.settings.sanitize and result.status in RAN:  # its candidate ran: the tool's turn
        result = sanitized(ctx, result)
    if ctx.batch.settings.counters and result.status in RAN:
        result = counted(ctx, result)
    if ctx.batch.settings.sandbox == "off":  # the user's explicit choice, carried by the result
        result = result.model_copy(update={"flags": merge_flags(result.flags, (UNSANDBOXED,))})
    return result


def evaluate_once(ctx: JobContext, child: ReadyChild | None) -> EvalResult:
    """One evaluation, decided; a reference that ran slower than its clean baseline is measured clean again, once
    the children are gone, for the verdict to tell a busy machine from a candidate that slowed it."""
    if ctx.build.status != "ok":
        if child:
            child.discard()
        status = "compile_error" if ctx.build.status == "compile_error" else ctx.build.status
        return ctx.result(status=status, error=ctx.build.error, flags=ctx.job.flags)
    observed = observe(ctx, child)
    if isinstance(observed, EvalResult):
        return observed
    fresh = None
    if wants_fresh_baseline(observed.report, ctx.baseline, gpu_contended=bool(observed.contention_flags)):
        fresh = measured_again(ctx.job.problem, ctx.batch.device, ctx.batch.settings)
    return verdict(ctx, observed, fresh)


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
        options = BuildOptions(settings.build_timeout_s, settings.max_jobs,
                               force=settings.force if settings.rebuild is None else settings.rebuild,
                               confinement=confinement(settings), accelerate=settings.build_acceleration)
        return build(candidate, device, settings.cache_dir, options, yield_cores=yield_cores, made_later=made_later)
    except Exception as exc:  # noqa: BLE001 - reported as the job's harness_error
        return BuildResult(
            status=HARNESS_ERROR,
            build_sha256=build_sha256(candidate, device, sandboxed=settings.sandbox == "on",
                                      accelerated=settings.build_acceleration),
            directory="",
            duration_s=0.0,
            log="",
            error=f"harness error while building: {type(exc).__name__}: {exc}",
        )
