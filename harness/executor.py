"""Schedules work: builds in parallel on the CPUs, then one evaluation child at a time per device.

Evaluations never overlap builds or each other, so neither the GPU nor (for the cpu target) the
cores are shared while something is being timed.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .build import build_many, extension_env, torch_version
from .config import Settings
from .integrity import plausibility_flags
from .isolation import child_env, run_child, tail
from .types import (Baseline, BuildResult, Candidate, DeviceInfo, EvalResult, Peaks, Problem, WorkerReport,
                    WorkerSpec, merge_flags)


@dataclass(frozen=True)
class Job:
    problem: Problem
    candidate: Candidate
    flags: tuple[str, ...] = ()  # from the static rules, carried into the result


def eval_env(device: DeviceInfo, settings: Settings) -> dict[str, str]:
    return child_env({**extension_env(device, settings.cache_dir),
                      "CUDA_VISIBLE_DEVICES": "" if device.index is None else str(device.index)})


def result_for(job: Job, device: DeviceInfo, dtype: str, **fields) -> EvalResult:
    """An EvalResult for this job on this device, with the given verdict fields."""
    return EvalResult(problem_id=job.problem.id, problem_sha256=job.problem.sha256,
                      candidate_path=job.candidate.path, candidate_sha256=job.candidate.sha256,
                      target=device.target, device_name=device.name, torch_version=torch_version(), dtype=dtype,
                      **fields)


Rebaseline = Callable[[Problem], Baseline | None]


def evaluate_built(job: Job, build: BuildResult, device: DeviceInfo, settings: Settings, seed: int,
                   baseline: Baseline | None = None, peaks: Peaks | None = None,
                   rebaseline: Rebaseline | None = None) -> EvalResult:
    """Check and time one built candidate in a fresh child process; `baseline` is the reference measured clean,
    `peaks` the device's measured peaks, `rebaseline` measures the reference clean again (integrity.py)."""
    if build.status != "ok":
        status = "timeout" if build.status == "timeout" else "compile_error"
        return result_for(job, device, settings.dtype, status=status, error=build.error, build=build, flags=job.flags)
    work = Path(tempfile.mkdtemp(prefix="eval-", dir=settings.cache_dir))
    try:
        spec = WorkerSpec(problem_path=job.problem.path, build_dir=build.directory, target=device.target,
                          dtype=settings.dtype, seed=seed, trials=settings.trials, atol=job.problem.atol,
                          rtol=job.problem.rtol, timing=settings.timing, result_path=str(work / "report.json"))
        (work / "spec.json").write_text(spec.model_dump_json())
        outcome = run_child(["eval", str(work / "spec.json")], env=eval_env(device, settings),
                            timeout_s=settings.eval_timeout_s, log_path=work / "eval.log", cwd=work)
        log = (work / "eval.log").read_text(errors="replace")
        report_path = work / "report.json"
        if outcome.timed_out:
            return result_for(job, device, settings.dtype, status="timeout", build=build,
                              error=f"evaluation {outcome.describe()} (--eval-timeout)\n{tail(log, 10)}".strip())
        if not report_path.is_file():
            return result_for(job, device, settings.dtype, status="runtime_error", build=build,
                              error=f"{outcome.describe()} before reporting a result\n{tail(log, 15)}".strip())
        report = WorkerReport.model_validate_json(report_path.read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    speedup = None
    if report.status == "correct" and report.runtime and report.ref_runtime and report.runtime.median_ms > 0:
        speedup = report.ref_runtime.median_ms / report.runtime.median_ms
    flags = plausibility_flags(report, device, dtype=settings.dtype, max_speedup=settings.max_speedup,
                               baseline=baseline, peaks=peaks,
                               rebaseline=rebaseline and (lambda: rebaseline(job.problem)))
    return result_for(job, device, settings.dtype, status=report.status, speedup=speedup, runtime=report.runtime,
                      ref_runtime=report.ref_runtime, check=report.check, error=report.error,
                      flags=merge_flags(job.flags, report.flags, flags), build=build)


def run_jobs(jobs: list[Job], device: DeviceInfo, settings: Settings, seed: int, *,
             baselines: dict[str, Baseline] | None = None, peaks: Peaks | None = None,
             rebaseline: Rebaseline | None = None, on_built: Callable[[Candidate, BuildResult], None] | None = None,
             on_evaluated: Callable[[int, EvalResult], None] | None = None) -> list[EvalResult]:
    """Build all distinct candidates, then evaluate each job; results in the order of `jobs`.

    `on_evaluated(i, result)` is called as soon as `jobs[i]` has its result.
    """
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    builds = build_many([j.candidate for j in jobs], device, settings.cache_dir,
                        timeout_s=settings.build_timeout_s, workers=settings.build_workers,
                        max_jobs=settings.max_jobs, on_done=on_built)
    results = []
    for i, job in enumerate(jobs):
        result = evaluate_built(job, builds[job.candidate.sha256], device, settings, seed,
                                (baselines or {}).get(job.problem.sha256), peaks, rebaseline)
        if on_evaluated:
            on_evaluated(i, result)
        results.append(result)
    return results

