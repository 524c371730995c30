"""The baseline child: measures what candidates are compared against, in a process no candidate touched.

  python -m harness.child.baseline SPEC.json

Two jobs (SPEC's "mode"):
  baselines  for each problem, the eager reference and its torch.compile modes, timed interleaved with
             the evaluation protocol (fresh inputs per call, caches flushed), plus the problem's bytes
             and FLOPs from a meta-device forward
  peaks      the device's peaks: memory bandwidth from a large copy, FLOP/s from a large GEMM per dtype
  copy       only the copy (a cpu measurement taken again while the earlier ones were contended)

Results are JSON lines for process.run_each: {"start": id}, then {"id": id, "baselines": {kind: Baseline}}
(or {"id": "peaks", "peaks": Peaks}), or {"id": id, "error": why}.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import torch

from harness.batch_child import append_line
from harness.checks import tolerances
from harness.child import observe as cpu_load
from harness.child.check import compare, one_thread
from harness.child.common import (
    construct,
    describe,
    forward_inputs,
    seeded_inputs,
    target_device,
    timed_side,
    trial_seed,
)
from harness.child.gate import Stage, static_observation
from harness.child.timing import Side, summarize, time_interleaved
from harness.child.training import (
    Around,
    floating_outputs,
    forward_backward,
    leaves,
    timed_args,
    timed_step,
    upstream,
)
from harness.child.workload import import_problem
from harness.protocol import BaselineItem, BaselineSpec
from harness.types import BASELINE_KINDS, Baseline, Peaks

PEAK_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
COPY_BYTES = {"cuda": 1 << 30, "cpu": 256 << 20}   # far beyond any cache
# Grow the GEMM until one call takes this long (cpu: a 2048-cube fp32 GEMM on 2 cores, ~50 ms, is at its peak; the
# 4096 one a 100 ms floor chose cost 10 s of a first run in its 12 calls, fp16's as much)
GEMM_MIN_MS = {"cuda": 20.0, "cpu": 40.0}
GEMM_MAX_N = {"cuda": 16384, "cpu": 4096}
PEAK_RUNS = 10


def problem_costs(problem, dtype, training: bool = False) -> dict:
    """Bytes of inputs, parameters and outputs and FLOPs of one forward, on the meta device (no memory). A training
    call's: its forward reads the inputs and parameters and writes the outputs; its backward reads the upstream
    gradients (the outputs' size), the inputs and parameters again, and writes a gradient of each; its FLOPs are the
    FLOP counter's over a meta forward and backward."""
    try:
        obs = static_observation(problem, dtype)
    except Stage:
        return {}
    if obs.shapes is None:  # the meta-device forward failed
        return {}
    held, outputs = obs.shapes.input_bytes + obs.shapes.param_bytes, obs.shapes.output_bytes
    if not training:
        return {"bytes_moved": held + outputs, "flops": obs.flops or None}
    return {"bytes_moved": 3 * held + 2 * outputs, "flops": trained_flops(problem, dtype)}


def trained_flops(problem, dtype) -> int | None:
    """The FLOPs of a meta-device forward and backward (None where the meta device cannot run it or nothing counts)."""
    from torch.utils.flop_counter import FlopCounterMode

    meta = torch.device("meta")
    try:
        with torch.device(meta):
            model = problem.Model(*problem.get_init_inputs()).to(dtype=dtype)
            inputs = leaves(forward_inputs(problem, meta, dtype))
        counter = FlopCounterMode(display=False)
        with counter, torch.enable_grad():
            outputs = floating_outputs(model(*inputs))
            torch.autograd.backward(outputs, [torch.ones_like(t) for t in outputs])
        return counter.get_total_flops() or None
    except Exception:  # noqa: BLE001 - no meta kernel for an operator or its backward: no FLOP count
        return None


def measure_problem(item: BaselineItem, spec: BaselineSpec, device, timer, sync) -> dict[str, Baseline]:
    """Every requested kind of this problem's reference, timed interleaved; a kind that fails says why."""
    dtype = getattr(torch, spec.dtype)
    problem = import_problem(item.path, item.source)
    costs = problem_costs(problem, dtype, item.training)  # on the meta device: no memory, any size
    init = problem.get_init_inputs()
    init_seed = trial_seed(spec.seed, "init")
    atol, rtol = tolerances(spec.dtype, item.atol, item.rtol)
    failed: dict[str, str] = {}
    with torch.no_grad():
        models = {"eager": construct(problem.Model, init, device, dtype, init_seed)}
        compile_kinds = [k for k in item.kinds if BASELINE_KINDS[k]]
        if item.training:  # compiled forward and backward: not measured yet
            failed.update({k: "torch.compile baselines are not measured for training problems yet"
                           for k in compile_kinds})
            compile_kinds = []
        if compile_kinds:
            check_inputs = seeded_inputs(problem, device, dtype, spec.seed, "compile-check")
            expected = models["eager"](*check_inputs)
        for kind in compile_kinds:
            mode = BASELINE_KINDS[kind]
            try:
                compiled = torch.compile(construct(problem.Model, init, device, dtype, init_seed), mode=mode)
                out = compiled(*check_inputs)  # the first call compiles, outside any timing
                sync()
            except Exception as exc:  # noqa: BLE001 - a baseline that fails is recorded, not fatal
                traceback.print_exc()
                failed[kind] = f"torch.compile (mode={mode}) failed: {describe(exc)}"
                continue
            with one_thread(device):
                result = compare(out, expected, atol, rtol)
            if result.ok:
                models[kind] = compiled
            else:
                failed[kind] = f"torch.compile (mode={mode}) disagrees with eager: {result.message}"
            del out
        if compile_kinds:
            del check_inputs, expected
        sides: dict[str, Side] = {kind: timed_side(problem, device, dtype, spec.seed, kind, model)
                                  for kind, model in models.items()}
        if item.training:  # a forward and a backward, as the evaluation times the reference
            sides = {"eager": trained_side(problem, device, dtype, spec.seed, models["eager"], timer.split)}
        # each side the share of the budget an evaluation gives each of its two (the reference's, the candidate's)
        timing = spec.timing.model_copy(update={"budget_s": spec.timing.budget() * len(sides) / 2})
        cpus = cpu_load.usable_cpus() if device.type == "cpu" else set()
        before = cpu_load.sample(cpus) if cpus else None
        timings, _ = time_interleaved(sides, timer, timing)
        after = cpu_load.sample(cpus) if before else None
    load = cpu_load.load_between(before, after, len(cpus)) if before and after else None
    eager_ms = timings["eager"].median_ms
    found = {kind: Baseline(timing=t, eager_ms=None if kind == "eager" else eager_ms,
                            foreign_cpu=load.foreign if load else None, **costs)
             for kind, t in timings.items()}
    found.update({kind: Baseline(error=why, **costs) for kind, why in failed.items()})
    return found


def measure_peaks(target: str, device, timer, gemms: bool = True) -> Peaks:
    """Memory bandwidth of a large copy (read + written bytes) and dense GEMM FLOP/s per dtype (unless not
    `gemms`: a cpu copy measured again because the earlier ones were contended, cpu_ceiling.py)."""
    def runs_ms(fn, args) -> list[float]:
        for _ in range(2):
            timer(fn, args)
        return [timer(fn, args).event_ms for _ in range(PEAK_RUNS)]

    def one_ms(fn, args) -> float:  # the size search's probe: one call after one untimed (each pays a flush)
        timer(fn, args)
        return timer(fn, args).event_ms

    details = {}
    n = COPY_BYTES[target] // 4
    src, dst = torch.rand(n, device=device), torch.empty(n, device=device)
    cpus = cpu_load.usable_cpus() if target == "cpu" else set()
    before = cpu_load.sample(cpus) if cpus else None
    copies = runs_ms(dst.copy_, [src])  # other processes' share of the cores is measured across the copies
    after = cpu_load.sample(cpus) if before else None
    load = cpu_load.load_between(before, after, len(cpus)) if before and after else None
    ms, best_ms = summarize(copies).median_ms, min(copies)
    bandwidth, best = (2 * n * 4 / (t * 1e-3) / 1e9 for t in (ms, best_ms))
    details["bandwidth"] = f"copy of {n * 4 >> 20} MiB, median of {PEAK_RUNS}: {ms:.3f} ms (fastest {best_ms:.3f} ms)"
    if load:
        details["contention"] = f"other processes used {load.foreign:.1%} of the cores during the copies"
    del src, dst
    tflops = {}
    for name, dtype in PEAK_DTYPES.items() if gemms else ():
        size = 256
        while True:
            a = torch.randn(size, size, device=device).to(dtype)
            b = torch.randn(size, size, device=device).to(dtype)
            if size >= GEMM_MAX_N[target] or one_ms(torch.mm, [a, b]) >= GEMM_MIN_MS[target]:
                break
            size *= 2
        ms = summarize(runs_ms(torch.mm, [a, b])).median_ms
        tflops[name] = 2 * size**3 / (ms * 1e-3) / 1e12
        details[name] = f"{size}x{size} GEMM, median of {PEAK_RUNS}: {ms:.3f} ms"
        del a, b
    return Peaks(bandwidth_gbs=bandwidth, tflops=tflops, details=details, best_bandwidth_gbs=best,
                 foreign_cpu=load.foreign if load else None)


def trained_side(problem, device, dtype, seed: int, model, around: Around) -> Side:
    """A training problem's eager side: each call a forward and a backward from upstream gradients of its own, made
    with its leaves outside the timer (their shapes from one forward and backward first); `around` runs its halves
    (the timer's split)."""
    first = forward_backward(model, leaves(seeded_inputs(problem, device, dtype, seed, "timing-shapes")), seed=seed)
    shapes = first.upstream_shapes()
    del first
    counter = iter(range(1 << 62))

    def prepare():
        label = f"timing-eager-{next(counter)}"
        inputs = seeded_inputs(problem, device, dtype, seed, label)
        return label, timed_args(upstream(shapes, device, trial_seed(seed, label)), inputs)
    return Side(prepare, timed_step(model, "the call", around))


def main(argv: list[str]) -> int:
    spec = BaselineSpec.model_validate_json(Path(argv[0]).read_text())
    results = Path(spec.results_path)
    device, _, timer, sync = target_device(torch, spec.target)
    if spec.mode in ("peaks", "copy"):
        append_line(results, {"start": "peaks"})
        try:
            peaks = measure_peaks(spec.target, device, timer, gemms=spec.mode == "peaks")
            append_line(results, {"id": "peaks", "peaks": peaks.model_dump(mode="json")})
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            traceback.print_exc()
            append_line(results, {"id": "peaks", "error": describe(exc)})
        return 0
    for item in spec.problems:
        append_line(results, {"start": item.id})
        try:
            found = measure_problem(item, spec, device, timer, sync)
            append_line(results, {"id": item.id, "baselines": {k: b.model_dump(mode="json") for k, b in found.items()}})
        except Exception as exc:  # noqa: BLE001 - a broken reference is reported, the next problem goes on
            traceback.print_exc()
            append_line(results, {"id": item.id, "error": f"the reference failed: {describe(exc)}"})
        finally:
            torch._dynamo.reset()  # drop compiled graphs: the next problem starts clean
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return 0

