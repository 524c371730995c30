"""Deciding an evaluation's result from what its children observed: whether the candidate's own kernels did the work
(kernel_use.py), its speedup, the plausibility of that speed (plausibility.py), the problem's informativeness, and
what the candidate's code caught of its own failures (said.py). Starts no process."""

from __future__ import annotations

from harness.eval import kernel_use
from harness.eval.children import Observed
from harness.eval.job import JobContext
from harness.eval.plausibility import Yardsticks, plausibility_flags
from harness.flags import LOW_COVERAGE, UNINFORMATIVE, merge_flags
from harness.problems.gate import degenerate_reasons
from harness.types import Baseline, EvalResult
from harness.workloads import weighted_speedup


def verdict(ctx: JobContext, observed: Observed, fresh: Baseline | None = None) -> EvalResult:
    """The result of what the child reported; `fresh`: the reference measured clean again, where the clean baseline
    it ran slower than asked for it (plausibility.wants_fresh_baseline)."""
    job, device, settings = ctx.job, ctx.batch.device, ctx.batch.settings
    report, words = observed.report, observed.said
    use = kernel_use.judge(report.coverage if report.status == "correct" else None, device.target,
                           settings.min_coverage if job.problem.min_coverage is None else job.problem.min_coverage)
    error = use.rejection or report.error
    if words.caught and (error or LOW_COVERAGE in use.flags) and words.quote() not in (error or ""):
        error = f"{error}\n{words.quote()}" if error else words.quote()  # low coverage: why PyTorch did the work
    speedup = None
    if report.status == "correct" and report.runtime and report.ref_runtime and report.runtime.median_ms > 0:
        speedup = weighted_speedup(report.workloads) or report.ref_runtime.median_ms / report.runtime.median_ms
    flags = plausibility_flags(report, device, Yardsticks(ctx.baseline, ctx.batch.peaks, fresh),
                               dtype=settings.dtype, speedup=speedup,
                               max_speedup=job.problem.max_speedup or settings.max_speedup,
                               gpu_contended=bool(observed.contention_flags))
    degenerate = degenerate_reasons(report.reference_stats, report.seed_mismatch)
    return ctx.result(status="rejected" if use.rejection else report.status,
                      speedup=None if use.rejection else speedup, runtime=report.runtime,
                      ref_runtime=report.ref_runtime, check=report.check, error=error, output=words.printed or None,
                      uninformative="; ".join(degenerate) or None, coverage=report.coverage, workloads=report.workloads,
                      flags=merge_flags(job.flags, flags, observed.contention_flags,
                                        [UNINFORMATIVE] if degenerate else [], use.flags),
                      figures=observed.figures)
