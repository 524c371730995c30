"""Baselines and peaks: what every candidate is compared against, measured in a clean child process (one no
candidate has touched) and cached in the store per (problem, device, torch version, dtype, protocol, kind).

Kinds (types.BASELINE_KINDS): `eager`, the reference as written, which every evaluation needs (a
candidate that slows the reference down beside it shows up as `reference_slowed`); and the torch.compile
modes, measured on request (`harness baseline`, or `--compile-baselines`), each timed interleaved with
eager so its ratio to eager is exact. A torch.compile that fails is stored with its error, not retried. An
eager time taken while other processes used the cores, or too noisy to trust, serves its run and is measured
again by the next one.

Peaks: the device's memory bandwidth and GEMM FLOP/s, measured once per device and torch version (on a
CPU, again on later runs while every measurement was contended: cpu_ceiling.py), from which roofline.py
computes each problem's speed of light.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from harness.config import Settings
from harness.eval.build import torch_version
from harness.eval.cpu_ceiling import CONTENDED_SHARE, machine_tflops, merge_peaks, needs_measuring
from harness.eval.evaluation import eval_env
from harness.process import run_each
from harness.protocol import BaselineItem, BaselineSpec
from harness.store import BaselineKey, Store
from harness.types import BASELINE_KINDS, PROTOCOL_VERSION, Baseline, DeviceInfo, Peaks, Problem

CHILD_SLACK_S = 120.0     # start-up and input generation, per problem
COMPILE_ALLOWANCE_S = 900.0  # per torch.compile mode and problem (max-autotune benchmarks many kernels)
PEAKS_TIMEOUT_S = 600.0
NOISY_BASELINE_RSE = 0.05  # a stored baseline's relative standard error is at most this (timing aims at 0.01)

Measured = dict[str, dict[str, Baseline]]  # problem sha256 -> kind -> baseline


def baseline_key(problem: Problem, device: DeviceInfo, settings: Settings, kind: str = "eager") -> BaselineKey:
    return (problem.sha256, device.name, device.target, torch_version(), settings.dtype, PROTOCOL_VERSION, kind)


def trusted(kind: str, baseline: Baseline) -> bool:
    """Whether a stored measurement may stand for later runs. An eager time is compared with every later
    evaluation's reference (reference_slowed) and shown as the problem's: not one taken while other processes
    used the cores, nor one whose own spread says it was disturbed (it serves its run, and the next run measures
    it again). A torch.compile kind counts by its ratio to eager, timed interleaved with it."""
    if baseline.timing is None or kind != "eager":
        return True
    return baseline.timing.rse <= NOISY_BASELINE_RSE and (baseline.foreign_cpu or 0.0) <= CONTENDED_SHARE


def measure_baselines(problems: list[Problem], device: DeviceInfo, settings: Settings, store: Store | None,
                      kinds: tuple[str, ...] = ("eager",), *, force: bool = False,
                      on_problem: Callable[[Problem, dict[str, Baseline], str | None], None] | None = None) -> Measured:
    """Every requested kind of baseline for each problem: from the store, or measured now (all missing ones
    in one child, restarted past a problem that crashes or hangs it). With no store, everything is measured.

    A problem whose reference cannot run is left out (its evaluations say why); `on_problem(problem,
    baselines, error)` is told about every problem as it is done.
    """
    unique = list({p.sha256: p for p in problems}.values())
    found: Measured = {}
    missing: dict[str, tuple[Problem, list[str]]] = {}
    for p in unique:
        stored = store.baselines(p.sha256, device.name, device.target, torch_version(), settings.dtype) if store else {}
        need = [k for k in kinds if force or k not in stored or not trusted(k, stored[k])]
        found[p.sha256] = {k: b for k, b in stored.items() if k in kinds and k not in need}
        if need:
            missing[p.id] = (p, need)
        elif on_problem:
            on_problem(p, found[p.sha256], None)
    if not missing:
        return found
    seed = secrets.randbits(63)

    def write_spec(remaining: list[str], spec, results) -> None:
        items = tuple(BaselineItem(id=i, path=missing[i][0].path, atol=missing[i][0].atol, rtol=missing[i][0].rtol,
                                   kinds=tuple(missing[i][1])) for i in remaining)
        spec.write_text(BaselineSpec(problems=items, target=device.target, dtype=settings.dtype, seed=seed,
                                     timing=settings.timing, results_path=str(results)).model_dump_json())

    def on_result(problem_id: str, record: dict, _seconds: float) -> None:
        problem, need = missing[problem_id]
        measured = {k: Baseline.model_validate(b) for k, b in record.get("baselines", {}).items()}
        for kind, b in measured.items():
            # what the problem declares wins over what the meta-device forward counted
            b = b.model_copy(update={"bytes_moved": problem.bytes or b.bytes_moved, "flops": problem.flops or b.flops})
            if store and kind in need and (b.timing or kind != "eager"):  # a failed eager is the problem's
                store.add_baseline(baseline_key(problem, device, settings, kind), b)
            found[problem.sha256][kind] = b
        if on_problem:
            on_problem(problem, found[problem.sha256], record.get("error"))

    compile_kinds = sum(1 for k in kinds if BASELINE_KINDS[k])
    run_each(list(missing), job="baseline", write_spec=write_spec,
             env={**eval_env(device, settings.cache_dir),
                  "TORCHINDUCTOR_CACHE_DIR": str(settings.cache_dir / "inductor")},
             log_dir=settings.cache_dir / "baselines", log_name="baselines",
             timeout_s=CHILD_SLACK_S + settings.timing.budget_s * len(kinds) + COMPILE_ALLOWANCE_S * compile_kinds,
             timeout_hint="measuring this problem's baselines", on_result=on_result)
    return found


def device_peaks(device: DeviceInfo, settings: Settings, store: Store, *, force: bool = False) -> Peaks | None:
    """The device's measured peaks: from the store, or measured now in a clean child (a few seconds).
    When the measurement fails (the log is in results/cache/baselines/): the stored ones, or None."""
    stored = store.peaks(device.name, device.target, torch_version())
    again = bool(stored) and not force and device.target == "cpu" and needs_measuring(stored)
    if stored and not force and not again:
        return stored
    found: dict = {}

    def write_spec(_remaining: list[str], spec, results) -> None:  # again: only the copy, merged below
        spec.write_text(BaselineSpec(mode="copy" if again else "peaks", target=device.target, seed=0,
                                     results_path=str(results)).model_dump_json())

    run_each(["peaks"], job="baseline", write_spec=write_spec, env=eval_env(device, settings.cache_dir),
             log_dir=settings.cache_dir / "baselines", log_name="peaks", timeout_s=PEAKS_TIMEOUT_S,
             timeout_hint="measuring the device's peaks", on_result=lambda _id, record, _s: found.update(record))
    if "peaks" not in found:
        return stored
    peaks = Peaks.model_validate(found["peaks"])
    if device.target == "cpu":
        ceiling = "theoretical: " + machine_tflops()[1]
        peaks = peaks.model_copy(update={"details": {**peaks.details, "ceiling": ceiling}})
    peaks = merge_peaks(peaks, stored)  # the fastest copy of all is kept
    store.add_peaks(device.name, device.target, torch_version(), peaks)
    return peaks
