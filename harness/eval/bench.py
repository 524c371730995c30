"""The throughput benchmark: how many distinct candidates per minute the harness builds, checks and times.

A batch of distinct candidates (bench_candidates.py) is evaluated end to end through the pipelined executor, then a
slice of an equally fresh batch one at a time (build, then evaluate in a new process, candidate after candidate, as
KernelBench does), and the rates are compared.
"""

from __future__ import annotations

import resource
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.config import Settings
from harness.device import devices_like
from harness.eval.baseline import device_peaks, measure_baselines, trusted
from harness.eval.bench_candidates import batch
from harness.eval.build import BuildOptions, build
from harness.eval.candidate import candidate_from_source
from harness.eval.confine import confinement
from harness.eval.evaluation import Job, evaluate_built
from harness.eval.job import BatchContext
from harness.eval.phases import Events
from harness.eval.pipeline import RunLabel, evaluate
from harness.figures import FLAT_NAMES, Figures, StageSeconds
from harness.problems.index import resolve
from harness.store import Store
from harness.types import BuildResult, Candidate, DeviceInfo, EvalResult

# Mean seconds per candidate, as summaries give them: build, queue, the evaluation and its parts (compile and
# autotune: Triton's, in the evaluation child; check_poisoned: the part of check that trial 0's two calls on poisoned
# memory took, the poisoning included).
STAGES = ("build", "queue", "eval", "device_wait", "setup", "compile", "autotune", "check", "check_poisoned",
          "coverage", "time")
# Where the set-up and the check went (figures.SetupParts, CheckParts; check_poisoned is among the STAGES)
PARTS = tuple(name for name, (group, field) in FLAT_NAMES.items()
              if group in ("setup_parts", "check_parts") and field != "poisoned_s")
# Each candidate's figures in --json, for finding where one pass's time went (the child's age: how long its processes
# had to start before it was handed the candidate; the runner's wait: how much of that start-up was still to come;
# each process's own start: from its start to its device ready, of which its imports and its CUDA context, the rest
# of the runner's its profiler's start, Dynamo and (Triton) its driver, and the attempts the context took), what its
# flags were decided from (the judge's figures: README, The judge), how long its processes took to end, and PARTS.
PER_CANDIDATE = ("build", "queue", "eval", "setup", "check", "check_poisoned", "time", "child_age_s", "runner_wait_ms",
                 "runner_ready_s", "runner_imports_s", "runner_device_s", "runner_device_attempts", "runner_triton_s",
                 "judge_ready_s", "judge_imports_s", "judge_device_s", "judge_device_attempts", "flagged_eval",
                 "unreported_ms", "round_trip_ms", "deferred_ms", "copy_ms", "judge_exit_s", "runner_exit_s",
                 "device_wait", "judge_memory_mib", "runner_memory_mib", *PARTS)
PROBLEMS = {"cuda": "level1/relu", "cpu": "cpu/relu"}
CONFIRMING_MEASUREMENTS = 3  # of the clean baseline before the passes, at most (a busy machine may never agree)


@dataclass
class Measurement:
    """One pass over a batch: its wall time and each candidate's stages."""

    mode: str
    shape: str
    devices: int
    wall_s: float
    results: list[EvalResult] = field(default_factory=list)
    first_eval_s: float | None = None  # from the pass's start to its first evaluation's start: the first wave
    cpu_s: float | None = None  # CPU seconds of every child process the pass waited for: builds and evaluations

    @property
    def per_min(self) -> float:
        return 60.0 * len(self.results) / self.wall_s if self.wall_s > 0 else 0.0

    def stage(self, name: str) -> float | None:
        """The mean of a figure (by its flat name) over the results that have it."""
        values = [value for r in self.results if (value := r.figures.flat().get(name)) is not None]
        return statistics.fmean(values) if values else None

    def means(self, names: tuple[str, ...]) -> dict[str, float | None]:
        return {name: None if (mean := self.stage(name)) is None else round(mean, 3) for name in names}

    @property
    def busy(self) -> float:
        """Share of the wall time each device spent checking, profiling and timing (the work it exists for)."""
        work = sum(device_work_s(r.figures) for r in self.results)
        return work / (self.wall_s * self.devices) if self.wall_s > 0 else 0.0

    @property
    def idle_s(self) -> float:
        """Seconds each device had no evaluation running: waiting for the first build, and for builds later."""
        evaluating = sum(r.figures.stages.eval_s or 0.0 for r in self.results)
        return max(0.0, self.wall_s - evaluating / self.devices) if self.devices else 0.0

    @property
    def overhead(self) -> float | None:
        """Per candidate, beyond its build (Triton's compiling and autotuning in the evaluation included) and its
        checking, profiling and timing: waiting for a child, importing the problem and the candidate, constructing
        both models, reporting."""
        values = [s.eval_s - (s.compile_s or 0.0) - (s.autotune_s or 0.0) - device_work_s(r.figures)
                  for r in self.results if (s := r.figures.stages).eval_s is not None]
        return statistics.fmean(values) if values else None

    def summary(self) -> dict:
        statuses = dict(Counter(r.status for r in self.results))
        flags = dict(Counter(f for r in self.results for f in r.flags))  # a flagged correct result is not counted
        return {"mode": self.mode, "shape": self.shape, "devices": self.devices, "candidates": len(self.results),
                "wall_s": round(self.wall_s, 2), "per_min": round(self.per_min, 2), "statuses": statuses,
                "flags": flags,
                "stages_s": self.means(STAGES), "parts_s": self.means(PARTS),
                "device_busy": round(self.busy, 3), "device_idle_s": round(self.idle_s, 2),
                "first_eval_s": None if self.first_eval_s is None else round(self.first_eval_s, 2),
                "cpu_s_per_candidate": round(self.cpu_s / len(self.results), 1) if self.cpu_s and self.results
                else None,
                "overhead_s": None if self.overhead is None else round(self.overhead, 3),
                "per_candidate": [_per_candidate(r) for r in self.results]}


class Bench:
    """Runs the passes on one problem, in a results directory of its own."""

    def __init__(self, device: DeviceInfo, settings: Settings, problem: str | None = None, problems_dir=None):
        self.device = device
        self.settings = settings
        self.problem = resolve(problem or PROBLEMS[device.target], problems_dir)
        self.salt = secrets.token_hex(4)
        self.store = Store(settings.db)
        self.baseline_stands = False  # prepare() confirmed the clean baseline: no pass measures it again

    def prepare(self, shapes: list[str]) -> float:
        """Outside every clock, what a machine does once: measure the device's peaks and the problem's clean
        baseline, and build one candidate per shape (which makes the precompiled header of its flags)."""
        start = time.monotonic()
        device_peaks(self.device, self.settings, self.store)
        for _ in range(CONFIRMING_MEASUREMENTS):  # a first baseline stands once another agrees (baseline.trusted):
            # confirmed here, or the first pass measures it again before it starts a build (13-15 s on an H200)
            eager = measure_baselines([self.problem], self.device, self.settings, self.store).get(
                self.problem.sha256, {}).get("eager")
            self.baseline_stands = eager is None or trusted("eager", eager)  # None: the reference cannot run
            if self.baseline_stands:
                break
        for shape in shapes:
            for job in self.jobs(shape, 1, "warm-up"):
                self.built(job.candidate)
        return time.monotonic() - start

    def built(self, candidate: Candidate) -> BuildResult:
        """`candidate` built as the run's settings say, never forced (a warm-up's, or the simple way's)."""
        options = BuildOptions(self.settings.build_timeout_s, self.settings.max_jobs,
                               confinement=confinement(self.settings), accelerate=self.settings.build_acceleration)
        return build(candidate, self.device, self.settings.cache_dir, options)

    def jobs(self, shape: str, n: int, part: str) -> list[Job]:
        return [Job(self.problem, candidate_from_source(s)) for s in batch(shape, n, f"{self.salt}-{part}")]

    def pipelined(self, jobs: list[Job], gpus: int = 0, mode: str = "pipelined") -> Measurement:
        """The harness as `harness eval` runs it: static rules, builds overlapped with evaluations, the store."""
        settings = self.settings.model_copy(update={"gpus": gpus})
        devices = devices_like(self.device, gpus)
        start, cpu = time.monotonic(), _children_cpu_s()
        clock = _FirstEvaluation(start)
        recorded = evaluate(jobs, device=self.device, settings=settings, store=self.store,
                            run=RunLabel(f"bench-{self.salt}-{mode}", "bench"), events=clock)
        return Measurement(mode, shape_of(jobs), len(devices), time.monotonic() - start, [r for _, r in recorded],
                           first_eval_s=clock.first_start_s, cpu_s=_children_cpu_s() - cpu)

    def one_at_a_time(self, jobs: list[Job], on_done: Callable[[EvalResult], None] | None = None) -> Measurement:
        """The simple way: build, then evaluate in a fresh process, candidate after candidate, one device."""
        start = time.monotonic()
        results = []
        for job in jobs:
            built = self.built(job.candidate)
            result = evaluate_built(BatchContext(self.device, self.settings, secrets.randbits(63)).job(job, built))
            result = result.model_copy(update={"figures": result.figures.add(
                stages=StageSeconds(build_s=built.duration_s))})
            results.append(result)
            if on_done:
                on_done(result)
        return Measurement("one-at-a-time", shape_of(jobs), 1, time.monotonic() - start, results)

    def close(self) -> None:
        self.store.close()


def device_work_s(figures: Figures) -> float:
    """Checking, profiling and timing: the work a device exists for."""
    stages = figures.stages
    return sum(seconds or 0.0 for seconds in (stages.check_s, stages.coverage_s, stages.time_s))


def _per_candidate(r: EvalResult) -> dict:
    """A candidate's PER_CANDIDATE figures by their flat names, each side's wall time beyond its events, its flags."""
    flat = r.figures.flat()
    return {**{name: round(flat[name], 3) for name in PER_CANDIDATE if name in flat}, **_beyond_events(r),
            **({"flags": list(r.flags)} if r.flags else {})}


def _beyond_events(r: EvalResult) -> dict:
    """Each side's median wall time beyond its median event time (ms): what hidden_work compares on a GPU."""
    return {name: round(t.wall_median_ms - t.median_ms, 4) for name, t in
            (("wall_over_events_ms", r.runtime), ("ref_wall_over_events_ms", r.ref_runtime))
            if t is not None and t.wall_median_ms is not None}


def _children_cpu_s() -> float:
    """User and system seconds of the child processes waited for so far (theirs and their descendants')."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _FirstEvaluation(Events):
    """When the pass's first evaluation started: the first result's arrival less its evaluation's own time."""

    def __init__(self, start: float):
        self.start = start
        self.first_start_s: float | None = None

    def evaluated(self, result: EvalResult) -> None:
        if self.first_start_s is None and result.figures.stages.eval_s is not None:
            self.first_start_s = max(0.0, time.monotonic() - self.start - result.figures.stages.eval_s)


def shape_of(jobs: list[Job]) -> str:
    source = jobs[0].candidate.source if jobs else ""
    if "@triton.jit" in source:
        return "triton"
    return "lean" if "no_implicit_headers=True" in source else "cpp" if "cuda_sources" not in source else "torch"
