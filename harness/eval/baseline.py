"""Baselines and peaks: what every candidate is compared against, measured in a clean child process (one no
candidate has touched) and cached in the store per (problem, device, torch version, dtype, protocol, kind).

Kinds (types.BASELINE_KINDS): `eager`, the reference as written, which every evaluation needs (a
candidate that slows the reference down beside it shows up as `reference_slowed`); and the torch.compile
modes, measured on request (`harness baseline`, or `--compile-baselines`), each timed interleaved with
eager so its ratio to eager is exact. A torch.compile that fails is stored with its error, not retried. An
eager time is trusted only once two clean measurements (own spread low, cores not contended), each in its own
child and in practice from two runs, agree within AGREEMENT (15 %), and then the faster is kept. Until then it is
provisional: the faster clean one so far is stored and serves the run, and the next run measures again.

Peaks: the device's memory bandwidth and GEMM FLOP/s, measured once per device and torch version (on a
CPU, again on later runs while every measurement was contended: cpu_ceiling.py), from which roofline.py
computes each problem's speed of light.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.batch_child import run_each
from harness.config import Settings
from harness.device_lock import alone_on
from harness.eval.build import torch_version
from harness.eval.children import eval_env
from harness.eval.cpu_ceiling import CONTENDED_SHARE, machine_tflops, merge_peaks, needs_measuring
from harness.eval.machine import machine_store
from harness.eval.phases import BASELINE_SETUP_S, CHILD_START_S, PEAKS_S, Events, Phase, timed
from harness.protocol import BaselineItem, BaselineSpec
from harness.store import BaselineKey, Store
from harness.types import BASELINE_KINDS, PROTOCOL_VERSION, Baseline, DeviceInfo, Peaks, Problem

CHILD_SLACK_S = 120.0     # start-up and input generation, per problem
COMPILE_ALLOWANCE_S = 900.0  # per torch.compile mode and problem (max-autotune benchmarks many kernels)
PEAKS_TIMEOUT_S = 600.0
NOISY_BASELINE_RSE = 0.05  # a stored baseline's relative standard error is at most this (timing aims at 0.01)
# Two clean eager medians agree when the slower is at most this much above the faster: each may have an rse up to
# 5 % (their difference: ~7 % one sigma), clean children of cpu/relu differ by ~3 %, a neighbour's burst (12 ms
# for 0.9) is far outside. The faster is kept: an honest reference as slow as the slower one is still 1.5 / 1.15
# = 1.3x short of reference_slowed (plausibility.SLOW_FACTOR, 1.5x the baseline).
AGREEMENT = 0.15

Measured = dict[str, dict[str, Baseline]]  # problem sha256 -> kind -> baseline


@dataclass(frozen=True)
class Listeners:
    """Who hears of a baseline measurement: `on_problem(problem, baselines, error)` as each problem is done, and
    `events` of the measurement's phase, where there is one."""

    on_problem: Callable[[Problem, dict[str, Baseline], str | None], None] | None = None
    events: Events = field(default_factory=Events)


def baseline_key(problem: Problem, device: DeviceInfo, settings: Settings, kind: str = "eager") -> BaselineKey:
    return (problem.sha256, device.name, device.target, torch_version(), settings.dtype, PROTOCOL_VERSION, kind)


def trusted(kind: str, baseline: Baseline) -> bool:
    """Whether a stored measurement may stand for later runs. An eager time is compared with every later
    evaluation's reference (reference_slowed) and shown as the problem's: only a clean one that a later clean
    measurement agreed with (settle), since a neighbour the counters cannot see (another VM) slows a whole
    measurement evenly. A torch.compile kind counts by its ratio to eager, timed interleaved with it."""
    if baseline.timing is None or kind != "eager":
        return True
    return clean(baseline) and baseline.confirmations >= 1


def clean(baseline: Baseline) -> bool:
    """An eager time that neither its own spread nor the cores' counters say was disturbed."""
    return (baseline.timing is not None and baseline.timing.rse <= NOISY_BASELINE_RSE
            and (baseline.foreign_cpu or 0.0) <= CONTENDED_SHARE)


def settle(stored: Baseline | None, new: Baseline) -> Baseline:
    """The eager baseline that stands after a new measurement beside the stored one. Two clean ones that agree
    confirm the faster (noise on a shared machine only slows a measurement, so the faster is nearer the idle
    machine); otherwise the faster of the clean ones (of both, if neither is clean) stays provisional."""
    if stored is None or stored.timing is None or new.timing is None:
        return new
    timed = [(stored.timing.median_ms, stored), (new.timing.median_ms, new)]
    (fast_ms, fast), (slow_ms, slow) = sorted(timed, key=lambda ms_baseline: ms_baseline[0])
    if clean(fast) and clean(slow) and slow_ms <= (1 + AGREEMENT) * fast_ms:
        return fast.model_copy(update={"confirmations": stored.confirmations + 1})
    _, kept = min(timed, key=lambda ms_baseline: (not clean(ms_baseline[1]), ms_baseline[0]))
    return kept.model_copy(update={"confirmations": 0})


def keep(stores: list[Store], key: BaselineKey, new: Baseline, stored: Baseline | None) -> Baseline:
    """Store what stands after a new measurement (`stored`: what was there before it) and return it: a
    torch.compile kind as measured, an eager time settled with the stored one."""
    kept = settle(stored, new) if key[-1] == "eager" else new
    if kept != stored:
        for store in stores:
            store.add_baseline(key, kept)
    return kept


def _known(p: Problem, device: DeviceInfo, settings: Settings, stores: list[Store]) -> dict[str, Baseline]:
    """What the results store and the machine's (machine.py) hold for a problem, kind by kind: a trusted row
    before an untrusted one, the results store's first. A trusted row only the machine's holds is copied into the
    results store, whose reports read it."""
    rows = [store.baselines(*baseline_key(p, device, settings)[:5]) for store in stores]
    known: dict[str, Baseline] = {}
    for kind in dict.fromkeys(k for found in rows for k in found):
        held = [found[kind] for found in rows if kind in found]
        known[kind] = next((b for b in held if trusted(kind, b)), held[0])
        if len(stores) > 1 and kind not in rows[0] and trusted(kind, known[kind]):
            stores[0].add_baseline(baseline_key(p, device, settings, kind), known[kind])
    return known


def measure_baselines(problems: list[Problem], device: DeviceInfo, settings: Settings, store: Store | None,
                      kinds: tuple[str, ...] = ("eager",), *, force: bool = False,
                      listeners: Listeners | None = None) -> Measured:
    """Every requested kind of baseline for each problem: from the store, or measured now (all missing ones
    in one child, restarted past a problem that crashes or hangs it). With no store, everything is measured.

    A problem whose reference cannot run is left out (its evaluations say why); `listeners` hear of each problem
    as it is done and of the measurement, where there is one.
    """
    with machine_store() as machine:
        stores = [store, *filter(None, [machine])] if store else []
        return _measure(list({p.sha256: p for p in problems}.values()), device, settings, stores, kinds, force,
                        listeners or Listeners())


def gpu_index(device: DeviceInfo) -> int | None:
    """The GPU a measurement needs alone (device_lock.py), or None: the cpu target, whose cores nothing shares."""
    return device.index if device.target == "cuda" else None


def measured_again(problem: Problem, device: DeviceInfo, settings: Settings) -> Baseline | None:
    """The problem's eager baseline measured clean again, to judge one evaluation (plausibility.wants_fresh_baseline),
    and not stored: the stored baseline of a problem is the one measured before any candidate ran, never replaced by
    what is measured after one. None: it could not be measured."""
    return measure_baselines([problem], device, settings, None, force=True).get(problem.sha256, {}).get("eager")


def _measure(unique: list[Problem], device: DeviceInfo, settings: Settings, stores: list[Store],
             kinds: tuple[str, ...], force: bool, listeners: Listeners) -> Measured:
    found: Measured = {}
    before: Measured = {}  # what was stored, to settle a new eager time with (--force starts afresh)
    missing: dict[str, tuple[Problem, list[str]]] = {}
    for p in unique:
        stored = _known(p, device, settings, stores) if stores else {}
        need = [k for k in kinds if force or k not in stored or not trusted(k, stored[k])]
        found[p.sha256] = {k: b for k, b in stored.items() if k in kinds and k not in need}
        before[p.sha256] = {} if force else stored
        if need:
            missing[p.id] = (p, need)
        elif listeners.on_problem:
            listeners.on_problem(p, found[p.sha256], None)
    if not missing:
        return found
    seed = secrets.randbits(63)
    timing = settings.timing.on(device.target)

    def write_spec(remaining: list[str], spec, results) -> None:
        items = tuple(BaselineItem(id=i, path=p.path, source=p.source, atol=p.atol, rtol=p.rtol, kinds=tuple(kinds),
                                   training=p.training) for i in remaining for p, kinds in [missing[i]])
        spec.write_text(BaselineSpec(problems=items, target=device.target, dtype=settings.dtype, seed=seed,
                                     timing=timing, results_path=str(results)).model_dump_json())

    def on_result(problem_id: str, record: dict, _seconds: float) -> None:
        problem, need = missing[problem_id]
        measured = {k: Baseline.model_validate(b) for k, b in record.get("baselines", {}).items()}
        for kind, b in measured.items():
            # what the problem declares wins over what the meta-device forward counted
            b = b.model_copy(update={"bytes_moved": problem.bytes or b.bytes_moved, "flops": problem.flops or b.flops})
            if stores and kind in need and (b.timing or kind != "eager"):  # a failed eager is the problem's
                b = keep(stores, baseline_key(problem, device, settings, kind), b, before[problem.sha256].get(kind))
            found[problem.sha256][kind] = b
        if listeners.on_problem:
            listeners.on_problem(problem, found[problem.sha256], record.get("error"))

    compile_kinds = sum(1 for k in kinds if BASELINE_KINDS[k])
    with timed(listeners.events, baselines_phase(missing.values(), timing.budget())), alone_on(gpu_index(device)):
        run_each(list(missing), job="baseline", write_spec=write_spec,
                 env={**eval_env(device, settings.cache_dir),
                      "TORCHINDUCTOR_CACHE_DIR": str(settings.cache_dir / "inductor")},
                 log_dir=settings.cache_dir / "baselines", log_name="baselines",
                 timeout_s=CHILD_SLACK_S + timing.budget() * len(kinds) + COMPILE_ALLOWANCE_S * compile_kinds,
                 timeout_hint="measuring this problem's baselines", on_result=on_result)
    return found


def baselines_phase(missing: Iterable[tuple[Problem, list[str]]], budget_s: float) -> Phase:
    """What measuring these baselines takes: a child's start, then per problem half the timing budget for each side
    timed (eager, and each torch.compile kind interleaved with it; its compile not counted)."""
    missing = list(missing)
    timings = sum(1 + sum(1 for k in need if BASELINE_KINDS[k]) for _, need in missing)
    estimate = CHILD_START_S + len(missing) * BASELINE_SETUP_S + timings * budget_s / 2
    names = ", ".join(p.id for p, _ in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return Phase(f"measuring the reference's baseline of {len(missing)} problem{'s' * (len(missing) != 1)} "
                 f"({names})", estimate, "each kept for this machine and torch version")


def device_peaks(device: DeviceInfo, settings: Settings, store: Store, *, force: bool = False,
                 events: Events | None = None) -> Peaks | None:
    """The device's measured peaks: from the store, else the machine's (machine.py, copied into the store), or
    measured now in a clean child (a few seconds; then kept in both). When the measurement fails (the log is in
    results/cache/baselines/): the stored ones, or None."""
    with machine_store() as machine:
        stores = [store, *filter(None, [machine])]
        held = [s.peaks(device.name, device.target, torch_version()) for s in stores]
        stored = next((p for p in held if p is not None and not _remeasure(device, p)), None)
        if stored and not force:
            if held[0] != stored:
                store.add_peaks(device.name, device.target, torch_version(), stored)
            return stored
        phase = Phase("measuring the machine's peaks: memory bandwidth, GEMM FLOP/s", PEAKS_S.get(device.target),
                      "once per machine and torch version")
        with timed(events or Events(), phase):
            peaks = _measure_peaks(device, settings, next((p for p in held if p is not None), None), force)
        if peaks is not None and peaks not in held:
            for s in stores:
                s.add_peaks(device.name, device.target, torch_version(), peaks)
        return peaks


def _remeasure(device: DeviceInfo, peaks: Peaks) -> bool:
    """cpu peaks measured only while other processes used the cores serve, and are measured again (cpu_ceiling)."""
    return device.target == "cpu" and needs_measuring(peaks)


def _measure_peaks(device: DeviceInfo, settings: Settings, stored: Peaks | None, force: bool) -> Peaks | None:
    again = stored is not None and not force and _remeasure(device, stored)
    found: dict = {}

    def write_spec(_remaining: list[str], spec, results) -> None:  # again: only the copy, merged below
        spec.write_text(BaselineSpec(mode="copy" if again else "peaks", target=device.target, seed=0,
                                     results_path=str(results)).model_dump_json())

    with alone_on(gpu_index(device)):
        run_each(["peaks"], job="baseline", write_spec=write_spec, env=eval_env(device, settings.cache_dir),
                 log_dir=settings.cache_dir / "baselines", log_name="peaks", timeout_s=PEAKS_TIMEOUT_S,
                 timeout_hint="measuring the device's peaks", on_result=lambda _id, record, _s: found.update(record))
    if "peaks" not in found:
        return stored
    peaks = Peaks.model_validate(found["peaks"])
    if device.target == "cpu":
        ceiling = "theoretical: " + machine_tflops()[1]
        peaks = peaks.model_copy(update={"details": {**peaks.details, "ceiling": ceiling}})
    return merge_peaks(peaks, stored)  # the fastest copy of all is kept
