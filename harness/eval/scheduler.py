"""Schedules a batch of jobs: each distinct candidate built once, its jobs evaluated as builds finish.

The policy (Batch) is shared by both backends: this machine (run_jobs: builds on a pool of CPU workers, on a GPU
the precompiled headers they ask for made beside the evaluations, evaluations in children started ahead of need) and
a Ray cluster (ray.py). On this machine a GPU is handed up to settings.gpu_slots evaluations at once, as their memory
allows (device_slots.py), whose checks share it while each one's poisoned calls and timing have it alone
(device_lock.py); on the CPU target one evaluation at a time, after every build (the cores are the device).
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from harness.eval import gpu_load
from harness.eval.build_cost import expected_build_cost
from harness.eval.device_slots import DeviceSlots, MemoryPlan, needs_alone
from harness.eval.evaluation import (
    Job,
    ReadyChild,
    build_or_fault,
    evaluate_built,
    harness_fault,
)
from harness.eval.job import BatchContext
from harness.eval.phases import PCH_S, Events, Phase, timed
from harness.fastbuild.maker import MadeLater
from harness.figures import StageSeconds
from harness.process import kill_all
from harness.protocol import uses_triton
from harness.types import (
    BuildResult,
    Candidate,
    DeviceInfo,
    EvalResult,
)

# Evaluation children kept starting ahead of need, per GPU: at least SPARES, and as many as one start (its runner's,
# the longer: torch, the context, the profiler) outlasts evaluations, up to MAX_SPARES (each holds two CUDA contexts).
# On an H200, runners read ready 8-14 s after their start while evaluations took 3.3 s: with 3 spares, evaluations
# handed a child 10 s old waited up to 4.7 s for it.
SPARES, MAX_SPARES = 3, 6
OnBuilt = Callable[[Candidate, BuildResult], None]
OnEvaluated = Callable[[int, EvalResult], None]


class Batch:
    """The policy, without threads or processes: which builds to start, which jobs are ready to evaluate
    after each build (on a GPU at once; on the cpu target once every build is done), and the results in the
    order of the jobs, each with its build and queue times."""

    def __init__(self, jobs: list[Job], target: str):
        self.jobs, self.overlap = jobs, target == "cuda"
        # children started ahead make Triton's driver while they start (a GPU's only: the interpreter has none)
        self.triton = self.overlap and any(uses_triton(job.candidate.source) for job in jobs)
        self.by_candidate: dict[str, list[int]] = {}
        for i, job in enumerate(jobs):
            self.by_candidate.setdefault(job.candidate.sha256, []).append(i)
        self.builds: dict[str, BuildResult] = {}
        self.results: dict[int, EvalResult] = {}

    def to_build(self, devices: int = 1) -> list[tuple[str, Candidate]]:
        """The distinct candidates in the order their builds start: on a GPU, the cheapest expected build for each
        device first (the first to land starts the device), then the rest longest first (none of them starts last
        and holds the batch's end); on the cpu target, where nothing is evaluated before every build is done,
        longest first."""
        distinct = [(sha, self.jobs[indices[0]].candidate) for sha, indices in self.by_candidate.items()]
        cost = {sha: expected_build_cost(candidate.source) for sha, candidate in distinct}  # parses each source once
        ranked = sorted(distinct, key=lambda item: cost[item[0]])  # stable: ties keep their order
        first = ranked[:devices] if self.overlap else []
        return first + sorted(ranked[len(first):], key=lambda item: -cost[item[0]])

    def leads(self, devices: int = 1) -> int:
        """How many of to_build's first builds take the cores before the others: on a GPU one per device, which
        waits idle for it (the others yield to it as they yield to evaluations); none on the cpu target."""
        return devices if self.overlap else 0

    def built(self, sha: str, build: BuildResult) -> list[int]:
        """Record a build; the jobs that may be evaluated now."""
        self.builds[sha] = build
        if self.overlap:
            return self.by_candidate[sha]
        return list(range(len(self.jobs))) if len(self.builds) == len(self.by_candidate) else []

    def evaluated(self, i: int, result: EvalResult, waited_s: float | None) -> EvalResult:
        """Record a result, with its build time and how long it waited for a device (None: not known)."""
        stages = StageSeconds(build_s=0.0 if result.build is None or result.build.cached else result.build.duration_s,
                              queue_s=waited_s)
        self.results[i] = result.model_copy(update={"figures": result.figures.add(stages=stages)})
        return self.results[i]

    @property
    def done(self) -> bool:
        return len(self.results) == len(self.jobs)

    def ordered(self) -> list[EvalResult]:
        return [self.results[i] for i in range(len(self.jobs))]


class ChildPool:
    """One GPU's evaluation children started ahead of need, shared by its evaluation workers: at least SPARES
    starting, more while their starts outlast the evaluations that take them."""

    def __init__(self, device: DeviceInfo, settings, triton: bool):
        self.device, self.settings, self.triton = device, settings, triton
        self.lock = threading.Lock()
        self.wanted = SPARES
        self.spares = deque(ReadyChild(device, settings, triton) for _ in range(SPARES))

    def take(self) -> ReadyChild:
        """The oldest child, with `wanted` more starting for the next evaluations."""
        with self.lock:
            while len(self.spares) <= self.wanted:
                self.spares.append(ReadyChild(self.device, self.settings, self.triton))
            return self.spares.popleft()

    def learn(self, result: EvalResult, side_by_side: int) -> None:
        with self.lock:
            self.wanted = spares_wanted(result, self.wanted, side_by_side)

    def discard(self) -> None:
        with self.lock:
            while self.spares:
                self.spares.popleft().discard()


def run_jobs(jobs: list[Job], context: BatchContext, devices: list[DeviceInfo] | None = None, *,
             on_built: OnBuilt | None = None, on_evaluated: OnEvaluated | None = None,
             events: Events | None = None) -> list[EvalResult]:
    """The batch on this machine (on `devices`, like the context's; default: its device alone): builds on a pool of
    CPU workers, one evaluation worker per device, each evaluation in a child started ahead of need (on the cpu
    target on demand, so the cores being timed are not shared). Callbacks run in the calling thread:
    `on_built(candidate, build)` per distinct candidate, `on_evaluated(i, result)` as `jobs[i]` is done. Results in
    the order of `jobs`. `events` hears of the phases (the precompiled headers made after the batch)."""
    context.settings.cache_dir.mkdir(parents=True, exist_ok=True)
    devices = devices or [context.device]
    return LocalRun(Batch(jobs, devices[0].target), devices, context, events or Events()).go(on_built, on_evaluated)


class LocalRun:
    def __init__(self, batch: Batch, devices: list[DeviceInfo], context: BatchContext, events: Events):
        self.batch, self.devices, self.context, self.settings = batch, devices, context, context.settings
        self.phases = events
        self.ready: queue.Queue[int | None] = queue.Queue()  # jobs to evaluate, for the evaluation workers
        self.events: queue.Queue[tuple] = queue.Queue()      # everything that happened, for the calling thread
        self.queued_at: dict[int, float] = {}
        self.memory = MemoryPlan()  # what an evaluation of each problem takes on a GPU, as the batch learns it

    def built(self, sha: str, future: Future) -> None:
        """A build's end, from its thread: to the calling thread's events."""
        self.events.put(("built", sha, future))

    def go(self, on_built: OnBuilt | None, on_evaluated: OnEvaluated | None) -> list[EvalResult]:
        batch = self.batch
        workers: list[threading.Thread] = []
        pools: list[ChildPool] = []
        for d in self.devices:  # on a GPU, gpu_slots workers, as many evaluations as DeviceSlots lets in at once
            children = ChildPool(d, self.settings, batch.triton) if batch.overlap else None
            slots = DeviceSlots(partial(gpu_load.sharing_budget, d), self.settings.gpu_slots if batch.overlap else 1)
            pools += [children] if children else []
            workers += [threading.Thread(target=self.evaluation_worker, args=(d, children, slots), daemon=True,
                                         name=f"eval-{d.index}-{n}") for n in range(slots.slots)]
        for worker in workers:
            worker.start()
        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.build_workers), thread_name_prefix="build")
        # On the cpu target made after the evaluations, which nothing may run beside; without acceleration no build
        # asks for one
        made_later = MadeLater(defer=not batch.overlap) if self.settings.build_acceleration else None
        try:
            self.submit_builds(pool, made_later)
            self.until_done(on_built, on_evaluated)
            if made_later:  # within the try: a Ctrl-C while it waits stops the makers too
                self.finish_headers(made_later)
        except BaseException:  # Ctrl-C or a failure: stop builders and children instead of waiting for them
            pool.shutdown(wait=False, cancel_futures=True)
            if made_later:
                made_later.abandon()
            kill_all()
            raise
        finally:
            for _ in workers:
                self.ready.put(None)
            for started in pools:  # the children no evaluation took (each worker's own are discarded after use)
                started.discard()
        pool.shutdown()
        for worker in workers:
            worker.join()
        return batch.ordered()

    def finish_headers(self, made_later: MadeLater) -> None:
        wanted = made_later.wanted() if made_later.defer else 0
        if not wanted:
            made_later.finish()
            return
        phase = Phase(f"making the C++ precompiled header{'s' * (wanted > 1)} the builds asked for (torch/extension.h)",
                      PCH_S * wanted, "once per compiler-flag set and torch version; later builds read it")
        with timed(self.phases, phase):
            made_later.finish()

    def submit_builds(self, pool: ThreadPoolExecutor, made_later: MadeLater | None) -> None:
        """Every build the batch needs, in its order; the first (the leads) do not yield the cores."""
        leads = self.batch.leads(len(self.devices))
        for n, (sha, candidate) in enumerate(self.batch.to_build(len(self.devices))):
            future = pool.submit(build_or_fault, candidate, self.devices[0], self.settings, n >= leads, made_later)
            future.add_done_callback(partial(self.built, sha))

    def until_done(self, on_built: OnBuilt | None, on_evaluated: OnEvaluated | None) -> None:
        """Builds and evaluations as they end, until the batch is done; a worker's failure is raised here."""
        batch = self.batch
        while not batch.done:
            kind, *rest = self.events.get()
            if kind == "failed":
                raise rest[0]
            if kind == "built":
                sha, future = rest
                ready = batch.built(sha, future.result())
                if on_built:
                    on_built(batch.jobs[batch.by_candidate[sha][0]].candidate, batch.builds[sha])
                self.enqueue(ready)
            else:
                result = batch.evaluated(*rest)
                if on_evaluated:
                    on_evaluated(rest[0], result)

    def enqueue(self, indices: list[int]) -> None:
        for i in indices:
            self.queued_at[i] = time.monotonic()
            self.ready.put(i)

    def evaluation_worker(self, device: DeviceInfo, pool: ChildPool | None, slots: DeviceSlots) -> None:
        """Evaluate ready jobs on `device`, each once `slots` lets it in beside the others there (its problem's
        memory known from an earlier evaluation, and fitting), in a child from `pool` (None: a new one, on the cpu
        target)."""
        try:
            while (i := self.ready.get()) is not None:
                job = self.batch.jobs[i]
                result, started, side_by_side = self.seated(job, device, pool, slots,
                                                            self.memory.need(job.problem.sha256))
                self.memory.learn(job.problem.sha256, result)
                if pool:
                    pool.learn(result, side_by_side)
                self.events.put(("evaluated", i, result, started - self.queued_at[i]))
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
            self.events.put(("failed", exc))

    def seated(self, job: Job, device: DeviceInfo, pool: ChildPool | None, slots: DeviceSlots,
               need: int | None) -> tuple[EvalResult, float, int]:
        """The job evaluated once let in (with when it was first let in, and how many ran beside it at its end);
        evaluated again alone where a neighbour may have decided its verdict (device_slots.needs_alone)."""
        seat = slots.enter(need)
        started = time.monotonic()
        try:
            build = self.batch.builds[job.candidate.sha256]
            try:
                result = evaluate_built(self.context.on(device).job(job, build), pool.take() if pool else None)
            except Exception as exc:  # noqa: BLE001 - a fault of ours (disk, child start): not a verdict
                result = harness_fault(job, device, self.settings, "evaluating", exc, build)
            side_by_side = len(slots.inside)
        finally:
            slots.leave(seat)
        if needs_alone(seat, result):
            result, side_by_side = self.seated(job, device, pool, slots, None)[0], 1  # need None: alone
        return result, started, side_by_side


def spares_wanted(result: EvalResult, current: int, side_by_side: int = 1) -> int:
    """How many children to keep starting ahead after `result`: one more than the evaluations its runner's start
    (from its process's start to its device ready) outlasted, `side_by_side` of them running at a time, within
    SPARES..MAX_SPARES; `current` where the result does not say (a build that failed, a harness fault)."""
    ready_s, eval_s = result.figures.runner_start.ready_s, result.figures.stages.eval_s
    if not ready_s or not eval_s:
        return current
    return min(MAX_SPARES, max(SPARES, math.ceil(ready_s * side_by_side / eval_s) + 1))
