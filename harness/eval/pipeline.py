"""Orchestration: candidates for problems -> (precheck | static rules | store hit | build + evaluate) -> store.

The only module that knows the whole chain.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from harness.config import Settings
from harness.data import reference_solutions
from harness.device import devices_like
from harness.eval import confine
from harness.eval.baseline import device_peaks, measure_baselines
from harness.eval.build import BUILD_PROTOCOL
from harness.eval.cache import prune
from harness.eval.candidate import load_candidate, precheck
from harness.eval.evaluation import Job, result_for
from harness.eval.job import BatchContext
from harness.eval.rules import check as check_rules
from harness.eval.scheduler import OnBuilt, OnEvaluated, run_jobs
from harness.flags import merge_flags
from harness.store import Store
from harness.types import (
    COMPILE_KINDS,
    BuildResult,
    Candidate,
    DeviceInfo,
    EvalResult,
    Problem,
)

SOLUTIONS_DIR = reference_solutions()


def default_run_name(prefix: str) -> str:
    return f"{prefix}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def display_path(path: Path) -> str:
    """Relative to the working directory when inside it: shorter in tables, stable in the store."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


class Events:
    """Progress callbacks; the CLI draws bars and lines from them, tests ignore them."""

    def planned(self, builds: int, evaluations: int) -> None: ...
    def built(self, candidate: Candidate, build: BuildResult) -> None: ...
    def evaluated(self, result: EvalResult) -> None: ...


@dataclass(frozen=True)
class RunLabel:
    """The stored run a batch's results go into: its name, its kind (eval, run, api, bench) and the model whose
    candidates they are (an LLM run's)."""

    name: str
    kind: str
    model: str | None = None


def evaluate(jobs: list[Job], *, device: DeviceInfo, settings: Settings, store: Store, run: RunLabel,
             events: Events | None = None) -> list[tuple[int, EvalResult]]:
    """Evaluate every job, reusing stored results unless settings.force; every result is stored.

    Returns (evaluation row id, result) per job, in order.
    """
    events = events or Events()
    confine.require(settings)
    if settings.executor == "ray":  # fail on a missing Ray or an unreachable cluster before doing anything
        from harness.eval.ray import connect

        connect(settings.ray_address, device.target)
    jobs = list(jobs)  # rule flags are added to our copy
    store.ensure_run(run.name, kind=run.kind, target=device.target, device_name=device.name, model=run.model)
    results: dict[int, tuple[int, EvalResult]] = {}
    problem_sources = {path: Path(path).read_text() for path in {job.problem.path for job in jobs}}

    def record(index: int, result: EvalResult, reused_from: int | None = None) -> None:
        job = jobs[index]
        row_id = store.add(run.name, result, candidate_source=job.candidate.source,
                           problem_source=problem_sources[job.problem.path], reused_from=reused_from, turn=job.turn)
        results[index] = (row_id, result)
        events.evaluated(result)

    pending: list[int] = []
    for index, job in enumerate(jobs):
        jobs[index], settled, reused_from = settle(job, device, settings, store)
        if settled:
            record(index, settled, reused_from)
        else:
            pending.append(index)
    events.planned(len({jobs[i].candidate.sha256 for i in pending}), len(pending))
    if pending:
        run_pending([jobs[i] for i in pending], device, settings, store, on_built=events.built,
                    on_evaluated=lambda position, result: record(pending[position], result))
        # the caches' cap: what this batch built was just used, so only older entries can go
        prune(settings.cache_dir, int(settings.cache_max_gb * 1e9))
    return [results[i] for i in range(len(jobs))]


def settle(job: Job, device: DeviceInfo, settings: Settings, store: Store
           ) -> tuple[Job, EvalResult | None, int | None]:
    """What can be decided without building: (the job with its rule flags, its result or None, the stored row
    a result is reused from). A precheck failure or a rejecting rule is a verdict; a stored one is served."""
    verdict = precheck(job.candidate.source)
    if verdict:
        return job, result_for(job, device, settings, status=verdict[0], error=verdict[1]), None
    if settings.static_rules:
        rules = check_rules(job.candidate.source)
        if rules.rejections:
            return job, result_for(job, device, settings, status="rejected", error=rules.message()), None
        job = replace(job, flags=rules.flags)
    hit = None if settings.force else store.find(job.candidate.sha256, job.problem.sha256, device.name,
                                                  device.target, BUILD_PROTOCOL, sandboxed=settings.sandbox == "on",
                                                  dtype=settings.dtype, check=settings.check_spec)
    other = hit and hit[1].check and hit[1].check.other
    if not hit or job.also and hit[1].check and (other.name if other else None) != job.also.name:
        return job, None, None  # never evaluated under this check, or not beside the other check asked for
    row_id, stored = hit
    served = stored.model_copy(update={"cached": True, "candidate_path": job.candidate.path,
                                       "problem_id": job.problem.id, "flags": merge_flags(job.flags, stored.flags)})
    return job, served, row_id


def run_pending(jobs: list[Job], device: DeviceInfo, settings: Settings, store: Store, *,
                on_built: OnBuilt, on_evaluated: OnEvaluated) -> None:
    """Build and evaluate, on this machine or a Ray cluster, against clean baselines and the device's peaks."""
    seed = secrets.randbits(63)  # secret per invocation: candidates cannot predict their inputs
    peaks = device_peaks(device, settings, store)
    kinds = ("eager", *COMPILE_KINDS) if settings.compile_baselines else ("eager",)
    measured = measure_baselines([job.problem for job in jobs], device, settings, store, kinds)
    baselines = {sha: b["eager"] for sha, b in measured.items() if "eager" in b}
    context = BatchContext(device, settings, seed, peaks, baselines)
    if settings.executor == "ray":
        from harness.eval.ray import run_jobs_ray

        run_jobs_ray(jobs, context, address=settings.ray_address, on_built=on_built, on_evaluated=on_evaluated)
    else:
        run_jobs(jobs, context, devices_like(device, settings.gpus), on_built=on_built, on_evaluated=on_evaluated)


def candidate_jobs(problem: Problem, paths: list[str]) -> list[Job]:
    return [Job(problem, load_candidate(p)) for p in paths]
