"""The quality gate's child process: imports problems one at a time and reports what it observes.

  python -m harness.child.gate SPEC.json

It only measures; the parent (`harness.problems.gate`) applies the thresholds. The spec is a GateSpec. For each
problem it appends a `{"start": id}` line and then `{"id": id, "observation": GateObservation}` (or
`{"id": id, "error": why}`) to the spec's results file, so a problem that crashes or hangs the process is
known, and the parent restarts the child after it.

static mode: no device. Model and inputs are created on the `meta` device (shapes and dtypes only,
no memory), which is enough for the signatures, output shapes, bytes and FLOPs of any problem size.
full mode: on the target device, everything the gate needs about the reference's outputs and cost.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from harness.batch_child import append_line
from harness.checks import tolerances
from harness.child.check import compare_tensor, output_stats, tensors
from harness.child.common import (
    construct,
    describe,
    exact_fp32,
    forward_inputs,
    trial_seed,
)
from harness.child.timing import CpuTimer, CudaTimer, Side, time_interleaved
from harness.child.training import forward_backward, leaves, names, timed_args, timed_step, upstream
from harness.child.workload import Instance
from harness.protocol import (
    FullObservation,
    GateObservation,
    GateSpec,
    ProblemRef,
    ShapeFacts,
    TensorComparison,
    TensorShape,
    WorkloadObservation,
)
from harness.types import TimingSettings
from harness.workloads import Workload

# a size check, not a benchmark
EAGER_TIMING = TimingSettings(warmup_runs=1, min_runs=3, max_runs=20, target_rse=0.05, budget_s=0.5)
# a workload that is not timed is held to no eager time: one call says how long it takes
ONE_CALL = TimingSettings(warmup_runs=0, min_runs=1, max_runs=1, target_rse=1.0, budget_s=0.0)
SEED_A, SEED_B = "gate-a", "gate-b"


class Stage(Exception):
    """A failure at a named stage (import, construct, inputs, forward); the message says which."""


def _at(stage: str, fn, *args):
    try:
        return fn(*args)
    except BaseException as exc:  # noqa: BLE001 - a problem file may raise anything, SystemExit too
        raise Stage(f"{stage}: {describe(exc)}") from exc


def _same_inputs(inputs: list) -> Callable[[], tuple[str, list]]:
    """A Side's prepare that gives these inputs at every call (bound now: the caller deletes its own name)."""
    return lambda: ("gate", inputs)


def make_inputs(module, device, dtype, seed_label: str | None) -> list:
    if seed_label is not None:
        torch.manual_seed(trial_seed(0, seed_label))
    return _at("get_inputs() failed", forward_inputs, module, device, dtype)


def build_model(module, init_inputs, device, dtype):
    """Model as evaluations build it; on the meta device, created there directly (no memory at any size)."""
    if device.type != "meta":
        return _at("constructing Model failed", construct, module.Model, init_inputs, device, dtype,
                   trial_seed(0, "init"))
    with torch.device(device):
        return _at("constructing Model failed", lambda: module.Model(*init_inputs).to(dtype=dtype))


def check_signatures(module, init_inputs: list, n_inputs: int) -> None:
    for what, fn, args in (("Model.__init__", module.Model.__init__, [None, *init_inputs]),
                           ("Model.forward", module.Model.forward, [None] * (n_inputs + 1))):
        try:
            inspect.signature(fn).bind(*args)
        except TypeError as exc:
            raise Stage(f"{what} does not accept the {len(args) - 1} values "
                        f"{'get_init_inputs' if what.endswith('__init__') else 'get_inputs'}() returns: {exc}"
                        ) from None


def nbytes(items) -> int:
    return sum(t.numel() * t.element_size() for t in items if isinstance(t, torch.Tensor))


def tensor_shape(t: torch.Tensor) -> TensorShape:
    return TensorShape(shape=tuple(t.shape), dtype=str(t.dtype).removeprefix("torch."))


def shape_facts(model, inputs, output) -> ShapeFacts:
    outs = tensors(output)
    return ShapeFacts(
        outputs=tuple(map(tensor_shape, outs)),
        inputs=tuple(tensor_shape(t) for t in inputs if isinstance(t, torch.Tensor)),
        input_bytes=nbytes(inputs),
        param_bytes=nbytes([*model.parameters(), *model.buffers()]),
        output_bytes=nbytes(outs),
        output_is_plain=not isinstance(output, torch.Tensor) or type(output) is torch.Tensor,
    )


def counted_forward(model, inputs):
    """One forward under the FLOP counter: (output, FLOPs)."""
    counter = FlopCounterMode(display=False)
    with counter:
        output = model(*inputs)
    return output, counter.get_total_flops()


def static_observation(module, dtype: torch.dtype = torch.float32) -> GateObservation:
    """Everything knowable without memory or a device, from a forward on the meta device."""
    init_inputs = _at("get_init_inputs() failed", module.get_init_inputs)
    if not isinstance(init_inputs, (list, tuple)):
        raise Stage(f"get_init_inputs() returned {type(init_inputs).__name__}, not a list")
    meta = torch.device("meta")
    inputs = make_inputs(module, meta, dtype, None)
    check_signatures(module, list(init_inputs), len(inputs))
    try:
        # Gradients stay on: meta tensors cost nothing, and the FLOP counter's module tracker fails under
        # no_grad on views of parameters (learned query tokens expanded over the batch).
        model = build_model(module, init_inputs, meta, dtype)
        output, flops = counted_forward(model, inputs)
        shapes = shape_facts(model, inputs, output)
    except Exception as exc:  # noqa: BLE001 - data-dependent ops have no meta kernels; the full gate runs them
        return GateObservation(init_inputs=len(init_inputs), meta_error=describe(exc))
    return GateObservation(init_inputs=len(init_inputs), shapes=shapes, flops=flops)


def _compare_one(x, y, atol, rtol, locating: bool = True) -> TensorComparison:
    c = compare_tensor(x, y, atol, rtol, locating=locating)
    return TensorComparison(ok=c.ok, mismatch_fraction=c.mismatch_fraction or 0.0, message=c.message,
                            max_abs_err=c.max_abs_err, max_rel_err=c.max_rel_err)


def _compare_all(a, b, atol, rtol, locating: bool = True) -> tuple[TensorComparison, ...]:
    return tuple(_compare_one(x, y, atol, rtol, locating) for x, y in zip(tensors(a), tensors(b), strict=True))


def upstream_seed(inputs_label: str) -> int:
    """A training problem's upstream gradients go with the inputs' seed, as in an evaluation (where both are drawn
    anew for every call): a gradient that depends on the upstream alone (a bias's) varies with the seed too."""
    return trial_seed(0, f"{inputs_label}-upstream")


def called(model, inputs: list, training: bool, inputs_label: str, what: str = "") -> object:
    """The reference's call as an evaluation makes it: its forward, or a training problem's forward and backward from
    upstream gradients of the inputs' seed (the outputs, then the gradients: training.Step.flat)."""
    if not training:
        return _at(f"Model.forward failed{what}", model, *inputs)
    seed = upstream_seed(inputs_label)
    return _at(f"Model.forward or its backward failed{what}",
               lambda: forward_backward(model, leaves(inputs), seed=seed, what="the reference").flat())


def timing_side(model, inputs: list, first: object, training: bool, device) -> Side:
    """The eager reference timed on the same inputs every call; a training problem's from fresh leaves, its upstream
    gradients made once (outside the timer)."""
    if not training:
        return Side(_same_inputs(inputs), model)
    outputs = output_count(model, inputs, first)
    shapes = [(t.shape, t.dtype) for t in tensors(first)[:outputs] if t.is_floating_point()]
    grads_in = upstream(shapes, device, upstream_seed(SEED_A))
    return Side(lambda: ("gate", timed_args(grads_in, inputs)), timed_step(model, "the reference"))


def output_count(model, inputs: list, flat: object) -> int:
    """How many of a training call's flat tensors are outputs (the rest: the floating inputs' and the parameters'
    gradients)."""
    floating = sum(isinstance(x, torch.Tensor) and x.is_floating_point() for x in inputs)
    return len(tensors(flat)) - floating - len(list(model.parameters()))


def full_observation(module, target: str, atol_override, rtol_override, timed: bool = True,
                     training: bool = False) -> GateObservation:
    static = static_observation(module)
    shapes, flops, flop_count_error = static.shapes, static.flops, None
    device = torch.device("cuda", 0) if target == "cuda" else torch.device("cpu")
    dtype = torch.float32
    atol, rtol = tolerances("float32", atol_override, rtol_override)
    cuda = device.type == "cuda"
    if cuda:
        exact_fp32(torch)  # as in evaluations
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    timer = CudaTimer(device) if cuda else CpuTimer()
    init_inputs = module.get_init_inputs()
    with torch.no_grad():
        if cuda:
            torch.cuda.empty_cache()
            sync()
            base = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
        model = build_model(module, init_inputs, device, dtype)
        inputs = make_inputs(module, device, dtype, SEED_A)
        clones = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        first = called(model, clones, training, SEED_A)
        sync()
        del clones
        again_inputs = make_inputs(module, device, dtype, SEED_A)  # fresh tensors, same seed
        torch.manual_seed(trial_seed(0, "gate-rerun"))  # but not the same RNG state: randomness in forward shows
        again = called(model, again_inputs, training, SEED_A, " (second run)")
        sync()
        if cuda:
            peak_memory_bytes = torch.cuda.max_memory_allocated(device) - base
        else:  # estimate: inputs and their clones, two outputs, parameters
            peak_memory_bytes = (2 * nbytes(inputs) + 2 * nbytes(tensors(first))
                                 + nbytes([*model.parameters(), *model.buffers()]))
        if static.meta_error is not None:  # shapes and bytes from the real output; FLOPs if the counter manages
            shapes = shape_facts(model, inputs, first)
            try:
                flops = counted_forward(model, inputs)[1]
            except Exception as exc:  # noqa: BLE001
                flop_count_error = describe(exc)
        deterministic = _compare_all(again, first, atol, rtol)
        del again, again_inputs
        other_inputs = make_inputs(module, device, dtype, SEED_B)
        other = called(model, other_inputs, training, SEED_B, " (other seed)")
        sync()
        seed_variation = _compare_all(other, first, atol, rtol, locating=False)  # meant to differ: how much
        del other, other_inputs
        stats = tuple(output_stats(t, atol, rtol) for t in tensors(first))
        labels = tuple(names(model, inputs, output_count(model, inputs, first))) if training else ()
        side = timing_side(model, inputs, first, training, device)
        timings, _ = time_interleaved({"reference": side}, timer, EAGER_TIMING if timed else ONE_CALL)
        del inputs, side
        precision, precision_error = precision_check(module, model, first, device, atol, rtol, training)
    full = FullObservation(atol=atol, rtol=rtol, eager_ms=timings["reference"].median_ms,
                           peak_memory_bytes=peak_memory_bytes, deterministic=deterministic,
                           seed_variation=seed_variation, stats=stats, names=labels, precision=precision,
                           precision_error=precision_error)
    return GateObservation(init_inputs=static.init_inputs, shapes=shapes, flops=flops, meta_error=static.meta_error,
                           flop_count_error=flop_count_error, full=full)


def precision_check(module, model, first, device, atol: float, rtol: float,
                    training: bool = False) -> tuple[tuple[TensorComparison, ...], str | None]:
    """Is the tolerance achievable? The fp32 reference must be within half of it from the same computation
    in float64, leaving the other half for a correct kernel's own rounding. The comparisons, per floating output;
    or none, and why the float64 run failed."""
    try:
        exact_model = model.to(torch.float64)  # the last use of the model: converted in place
        exact_inputs = make_inputs(module, device, torch.float64, SEED_A)
        exact = (forward_backward(exact_model, leaves(exact_inputs), seed=upstream_seed(SEED_A)).flat() if training
                 else exact_model(*exact_inputs))
    except Exception as exc:  # noqa: BLE001 - some ops have no float64 kernel on some devices
        return (), describe(exc)
    return tuple(
        _compare_one(mine, ref.to(mine.dtype), atol / 2, rtol / 2)
        for mine, ref in zip(tensors(first), tensors(exact), strict=True) if mine.is_floating_point()), None


def observe(item: ProblemRef, mode: str, target: str) -> GateObservation | str:
    """What the gate sees of one problem and each of its other workloads, or why it could not look at the problem
    as written (its failure); a workload that fails is told in its own observation."""
    observed = observe_one(item.path, item.source, {}, (1.0, 0.0), mode, target, item.atol, item.rtol, timed=True,
                           training=item.training)
    if isinstance(observed, str):
        return observed
    others = []
    for workload in item.workloads[1:]:
        for values in ends(workload):
            found = observe_one(item.path, item.source, values, workload.distribution, mode, target, item.atol,
                                item.rtol, workload.timed, item.training)
            others.append(WorkloadObservation(workload=workload.name, values=values,
                                              **({"error": found} if isinstance(found, str) else
                                                 {"observation": found})))
    return observed.model_copy(update={"workloads": tuple(others)})


def ends(workload: Workload) -> list[dict]:
    """The values the gate observes a workload with: its own, or a drawn one's lows and highs."""
    if not workload.drawn:
        return [dict(workload.set)]
    return [{c: v[i] if isinstance(v, tuple) else v for c, v in workload.set.items()} for i in (0, 1)]


def observe_one(path: str, source: str, values: dict, distribution, mode: str, target: str, atol, rtol,
                timed: bool, training: bool = False) -> GateObservation | str:
    """What the gate sees of the problem with these values, or why it could not look (the problem's failure)."""
    try:
        instance = _at("importing the problem failed", Instance, path, source, values, distribution)
        module = instance.as_module()
        if mode == "static":
            return static_observation(module)
        return full_observation(module, target, atol, rtol, timed, training)
    except Stage as exc:
        traceback.print_exc()
        return str(exc)
    except torch.cuda.OutOfMemoryError as exc:
        return f"out of GPU memory: {describe(exc)}"
    except Exception as exc:  # noqa: BLE001 - anything else the reference does wrong is its failure too
        traceback.print_exc()
        return f"the reference failed: {describe(exc)}"
    finally:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()


def main(argv: list[str]) -> int:
    spec = GateSpec.model_validate_json(Path(argv[0]).read_text())
    results = Path(spec.results_path)
    for item in spec.problems:
        append_line(results, {"start": item.id})
        obs = observe(item, spec.mode, spec.target)
        if isinstance(obs, str):
            append_line(results, {"id": item.id, "error": obs})
        else:  # mode="json" keeps inf and nan as numbers: json.dumps writes them as Infinity and NaN
            append_line(results, {"id": item.id, "observation": obs.model_dump(mode="json")})
    return 0

