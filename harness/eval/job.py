"""What an evaluation is given: a job (a candidate on a problem), the batch it is part of (device, settings, the
run's secret seed, the device's peaks, the problems' clean baselines), and the job within its batch, built."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from harness.checks import CheckSpec
from harness.config import Settings
from harness.eval.build import BUILD_PROTOCOL, harness_version, torch_version
from harness.store_records import TurnKey
from harness.types import Baseline, BuildResult, Candidate, DeviceInfo, EvalResult, Peaks, Problem


@dataclass(frozen=True)
class Job:
    problem: Problem
    candidate: Candidate
    flags: tuple[str, ...] = ()  # from the static rules, carried into the result
    also: CheckSpec | None = None  # a second check whose verdict is recorded beside (audit: the claim's own)
    turn: TurnKey | None = None  # the turn of a run's conversation whose answer it is, stored with its result


@dataclass(frozen=True)
class BatchContext:
    """What every job of a batch is evaluated with. `baselines`: each problem's clean eager baseline, by its
    sha256 (each in a child no candidate touched, before any candidate of its problem ran); `peaks`: the device's
    measured peaks."""

    device: DeviceInfo
    settings: Settings
    seed: int
    peaks: Peaks | None = None
    baselines: Mapping[str, Baseline] = field(default_factory=dict)

    def on(self, device: DeviceInfo) -> BatchContext:
        """The same batch on another device (one of several GPUs, the one a Ray task was given)."""
        return replace(self, device=device)

    def job(self, job: Job, build: BuildResult) -> JobContext:
        return JobContext(self, job, build)


@dataclass(frozen=True)
class JobContext:
    """One job of a batch, built."""

    batch: BatchContext
    job: Job
    build: BuildResult

    @property
    def baseline(self) -> Baseline | None:
        return self.batch.baselines.get(self.job.problem.sha256)

    def result(self, **fields) -> EvalResult:
        """Its result, with its build and the given verdict fields."""
        return result_for(self.job, self.batch.device, self.batch.settings, build=self.build, **fields)


def result_for(job: Job, device: DeviceInfo, settings: Settings, **fields) -> EvalResult:
    """An EvalResult for this job on this device under these settings, with the given verdict fields."""
    return EvalResult(problem_id=job.problem.id, problem_sha256=job.problem.sha256,
                      candidate_path=job.candidate.path, candidate_sha256=job.candidate.sha256,
                      target=device.target, device_name=device.name, torch_version=torch_version(),
                      dtype=settings.dtype, check_spec=settings.check_spec, build_protocol=BUILD_PROTOCOL,
                      harness_version=harness_version(), **fields)
