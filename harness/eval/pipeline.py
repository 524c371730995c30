"""Orchestration: candidates for problems -> (precheck | static rules | store hit | build + evaluate) -> store.

The only module that knows the whole chain.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path

from harness.config import Settings
from harness.data import reference_solutions
from harness.device import devices_like
from harness.eval import confine, sanitize
from harness.eval.baseline import Listeners, device_peaks, measure_baselines
from harness.eval.build import BUILD_PROTOCOL
from harness.eval.build_cost import expected_build_cost
from harness.eval.cache import prune
from harness.eval.candidate import load_candidate, precheck
from harness.eval.evaluation import Job, result_for
from harness.eval.job import BatchContext
from harness.eval.phases import BUILD_S, EVAL_SETUP_S, Events, Phase, timed
from harness.eval.rules import check as check_rules
from harness.eval.scheduler import OnBuilt, OnEvaluated, run_jobs
from harness.flags import merge_flags
from harness.store import Store
from harness.types import (
    COMPILE_KINDS,
    RAN,
    Baseline,
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
    sanitize.require(settings.sanitize, device.target)
    if settings.executor == "ray":  # fail on a missing Ray or an unreachable cluster before doing anything
        from harness.eval.ray import connect

        connect(settings.ray_address, device.target)
    jobs = list(jobs)  # rule flags are added to our copy
    store.ensure_run(run.name, kind=run.kind, target=device.target, device_name=device.name, model=run.model)
    results: dict[int, tuple[int, EvalResult]] = {}

    def record(index: int, result: EvalResult, reused_from: int | None = None) -> None:
        job = jobs[index]
        row_id = store.add(run.name, result, candidate_source=job.candidate.source,
                           problem_source=job.problem.source, reused_from=reused_from, turn=job.turn)
        results[index] = (row_id, result)
        events.evaluated(result)

    pending: list[int] = []
    for index, job in enumerate(jobs):
        jobs[index], settled, reused_from = settle(job, device, settings, store)
        if settled:
            record(index, settled, reused_from)
        else:
            pending.append(index)
    builds = len({jobs[i].candidate.sha256 for i in pending})
    events.planned(builds, len(pending))
    if pending:
        with timed(events, batch_phase(builds, len(pending), device, settings)):
            run_pending([jobs[i] for i in pending], device, settings, store, on_built=events.built,
                        on_evaluated=lambda position, result: record(pending[position], result), events=events)
        # the caches' cap: what this batch built was just used, so only older entries can go
        prune(settings.cache_dir, int(settings.cache_max_gb * 1e9))
    return [results[i] for i in range(len(jobs))]


def batch_phase(builds: int, evaluations: int, device: DeviceInfo, settings: Settings) -> Phase:
    """The batch as a whole: its builds side by side, its evaluations one at a time per device (typical figures:
    a build not served from the cache, an evaluation within its timing budget)."""
    waves = -(-builds // max(1, settings.build_workers))
    per_eval = EVAL_SETUP_S + settings.timing.on(device.target).budget()
    estimate = waves * BUILD_S + evaluations * per_eval / max(1, len(devices_like(device, settings.gpus)))
    return Phase(f"building {builds} candidate{'s' * (builds != 1)} ({settings.build_workers} at a time) and checking "
                 f"and timing {evaluations}", estimate, "fewer where builds are cached; results print as they come")


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
    if not servable(hit[1], settings):
        return job, None, None  # the sanitizer or ncu asked for, and never run on it
    row_id, stored = hit
    served = stored.model_copy(update={"cached": True, "candidate_path": job.candidate.path,
                                       "problem_id": job.problem.id, "flags": merge_flags(job.flags, stored.flags)})
    return job, served, row_id


def servable(stored: EvalResult, settings: Settings) -> bool:
    """Whether a stored result answers as a new evaluation under `settings` would: with the sanitizer's findings and
    ncu's counters where they are asked for and its candidate ran."""
    if settings.sanitize and not sanitized_with(stored, settings.sanitize):
        return False
    return not (settings.counters and stored.status in RAN and stored.counters is None)


def sanitized_with(stored: EvalResult, tool: str) -> bool:
    """Whether a stored result holds `tool`'s findings, where it would have had them (its candidate ran)."""
    ran = stored.status in RAN or stored.sanitizer is not None
    return not ran or (stored.sanitizer is not None and stored.sanitizer.tool == tool)


def run_pending(jobs: list[Job], device: DeviceInfo, settings: Settings, store: Store, *,
                on_built: OnBuilt, on_evaluated: OnEvaluated, events: Events | None = None) -> None:
    """Build and evaluate, on this machine or a Ray cluster, against clean baselines and the device's peaks, round by
    round (rounds()): a problem's baselines are measured in the round of its first job, so the first results come
    before every problem's baseline is measured, and still no candidate of a problem has run before its baseline."""
    events = events or Events()
    seed = secrets.randbits(63)  # secret per invocation: candidates cannot predict their inputs
    peaks = device_peaks(device, settings, store, events=events)
    kinds = ("eager", *COMPILE_KINDS) if settings.compile_baselines else ("eager",)
    baselines: dict[str, Baseline] = {}
    asked: set[str] = set()  # the problems whose baselines this invocation has asked for
    for positions in rounds(jobs, device, settings):
        part = [jobs[i] for i in positions]
        new = [job.problem for job in part if job.problem.sha256 not in asked]
        asked.update(problem.sha256 for problem in new)
        measured = measure_baselines(new, device, settings, store, kinds, listeners=Listeners(events=events))
        baselines |= {sha: b["eager"] for sha, b in measured.items() if "eager" in b}
        context = BatchContext(device, settings, seed, peaks, dict(baselines))
        in_round: OnEvaluated = partial(_in_round, positions, on_evaluated)
        if settings.executor == "ray":
            from harness.eval.ray import run_jobs_ray

            run_jobs_ray(part, context, address=settings.ray_address, on_built=on_built, on_evaluated=in_round)
        else:
            run_jobs(part, context, devices_like(device, settings.gpus), on_built=on_built, on_evaluated=in_round,
                     events=events)


def _in_round(positions: list[int], on_evaluated: OnEvaluated, position: int, result: EvalResult) -> None:
    on_evaluated(positions[position], result)


def rounds(jobs: list[Job], device: DeviceInfo, settings: Settings) -> list[list[int]]:
    """The positions of the jobs scheduled together, round after round. On the cpu target, where a round evaluates
    nothing until its every build is done (the cores are the device, and timing shares them with nothing), the jobs
    of the cheapest candidates, one per build worker, go first: the first results come a build's time after the start
    instead of after every build. Elsewhere (a GPU evaluates as builds land; a Ray cluster) one round."""
    if device.target != "cpu" or settings.executor == "ray":
        return [list(range(len(jobs)))]
    distinct = list(dict.fromkeys(job.candidate.sha256 for job in jobs))
    costs = {job.candidate.sha256: expected_build_cost(job.candidate.source) for job in jobs}
    lead = set(sorted(distinct, key=costs.__getitem__)[:max(1, settings.build_workers)])  # stable: ties keep order
    first = [i for i, job in enumerate(jobs) if job.candidate.sha256 in lead]
    rest = [i for i, job in enumerate(jobs) if job.candidate.sha256 not in lead]
    return [first, rest] if rest else [first]


def candidate_jobs(problem: Problem, paths: list[str]) -> list[Job]:
    return [Job(problem, load_candidate(p)) for p in paths]
