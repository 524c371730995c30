"""The Ray executor (`--executor ray`): every build is a Ray task on CPUs, every evaluation a Ray task holding
one GPU, anywhere in the cluster; results flow back to this process, the only one that writes SQLite.

Isolation is the local executor's: an evaluation task starts a fresh child process for the candidate
(without secrets in its environment), on the GPU Ray gave the task. A built extension travels with its
BuildResult as a tar archive, unpacked where the evaluation runs when that node has not got it; the
problem file travels as text likewise. Needs `pip install 'kernel-harness[ray]'` on every node.
"""

from __future__ import annotations

import io
import os
import socket
import tarfile
from pathlib import Path

from harness.config import Settings
from harness.errors import InputError
from harness.eval.evaluation import Job
from harness.eval.job import BatchContext
from harness.eval.scheduler import Batch, OnBuilt, OnEvaluated
from harness.types import (
    BuildResult,
    Candidate,
    DeviceInfo,
    EvalResult,
)

EVAL_CPUS = 0.25  # an evaluation task mostly waits on its child; builds must not starve the GPUs of tasks


class RayUnavailable(InputError, RuntimeError):
    """--executor ray without Ray installed, or no cluster at --ray-address."""


def connect(address: str | None, target: str):
    """Join the cluster at `address` (or $RAY_ADDRESS), else start a local one. On the cpu target a local
    cluster gets one logical GPU: evaluations ask for a GPU each, so the cores are timed one at a time."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs Ray: pip install 'kernel-harness[ray]'") from None
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS")
        local = not address
        if address and address != "auto":
            reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False,
                     num_gpus=1 if local and target == "cpu" else None)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"cannot start or join a Ray cluster at {address or 'local'}: {exc}") from None
    return ray


def reachable(address: str) -> None:
    """Fail in seconds, not after Ray's minutes of retries, when nothing listens at HOST:PORT."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=10).close()
    except (OSError, ValueError) as exc:
        raise RayUnavailable(f"cannot reach a Ray cluster at {address} ({exc}); start one with `ray start --head` "
                             "or give --ray-address HOST:PORT") from None


def pack(directory: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(directory, arcname=".")
    return buffer.getvalue()


def build_task(candidate: Candidate, device: DeviceInfo, settings: Settings) -> tuple[BuildResult, bytes | None]:
    from harness.eval.evaluation import build_or_fault

    result = build_or_fault(candidate, device, settings)
    return result, pack(result.directory) if result.status == "ok" else None


def eval_task(job: Job, built: BuildResult, archive: bytes | None,
              context: BatchContext) -> EvalResult:
    import ray

    from harness.eval.evaluation import evaluate_built, harness_fault

    settings = context.settings
    if context.device.target == "cuda":  # the GPU Ray gave this task (it has set CUDA_VISIBLE_DEVICES accordingly)
        context = context.on(context.device.model_copy(update={"index": int(ray.get_gpu_ids()[0])}))
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    if archive and not Path(built.directory).is_dir():  # built on another node: the manifest's paths are absolute
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(built.directory, filter="data")
    try:
        return evaluate_built(context.job(job, built))
    except Exception as exc:  # noqa: BLE001 - a fault of ours on this node: the job's harness_error
        return harness_fault(job, context.device, settings, "evaluating", exc, built)


def run_jobs_ray(jobs: list[Job], context: BatchContext, *, address: str | None = None,
                 on_built: OnBuilt | None = None, on_evaluated: OnEvaluated | None = None) -> list[EvalResult]:
    """The batch on a Ray cluster, with the local backend's policy (scheduler.Batch): builds as CPU tasks
    (MAX_JOBS CPUs each), evaluations as tasks with one GPU each, submitted as the policy releases them.
    Results in the order of `jobs`."""
    device, settings = context.device, context.settings
    ray = connect(address, device.target)
    builder = ray.remote(build_task).options(num_cpus=settings.max_jobs, max_retries=0)
    evaluator = ray.remote(eval_task).options(num_cpus=EVAL_CPUS, num_gpus=1, max_retries=0)
    batch = Batch(jobs, device.target)
    builds = {builder.remote(candidate, device, settings): sha for sha, candidate in batch.to_build()}
    archives: dict[str, bytes | None] = {}
    evaluations: dict = {}  # task -> job index

    def submit(indices: list[int]) -> None:
        for i in indices:
            job = jobs[i]
            task = evaluator.remote(job, batch.builds[job.candidate.sha256],
                                    archives[job.candidate.sha256], context)
            evaluations[task] = i

    try:
        while not batch.done:
            done, _ = ray.wait([*builds, *evaluations], num_returns=1)
            ref = done[0]
            if ref in builds:
                sha = builds.pop(ref)
                build, archives[sha] = ray.get(ref)
                ready = batch.built(sha, build)
                if on_built:
                    on_built(jobs[batch.by_candidate[sha][0]].candidate, build)
                submit(ready)
            else:
                i = evaluations.pop(ref)
                result = batch.evaluated(i, ray.get(ref), None)  # when the task started is the cluster's
                if on_evaluated:
                    on_evaluated(i, result)
    except BaseException:
        for ref in [*builds, *evaluations]:
            ray.cancel(ref, force=True)
        raise
    return batch.ordered()
