"""A workload as the judge holds it: the problem with the workload's values, the reference built from it, its
float64 truth where memory allows, and what the workload has come to so far (its WorkloadResult's fields)."""

from __future__ import annotations

import torch

from harness.child.check import tensors
from harness.child.common import construct, forward_inputs
from harness.child.training import Around, forward_backward, leaves, names, timed_args, timed_step, upstream
from harness.child.truth import Truth
from harness.child.workload import Instance
from harness.workloads import Workload, WorkloadResult, WorkloadStatus

MEMORY_SHARE = 0.9  # of the device's memory (the host's available memory on the cpu) an evaluation may plan to use


class JudgeWorkload:
    """One workload with one set of values (a drawn workload has one per trial)."""

    def __init__(self, workload: Workload, instance: Instance, device, dtype, init_seed: int, truth: bool,
                 training: bool = False):
        self.workload = workload
        self.instance = instance
        self.values = instance.values
        self.device, self.training = device, training
        self.reference = construct(instance.module.Model, instance.init_inputs, device, dtype, init_seed)
        self.truth = Truth(self.reference) if truth else None
        self.upstream_shapes: list = []  # a training problem's, from its last call: the timed calls' upstream
        self.names: list[str] | None = None  # a training problem's: what each item of a call's tuple is

    def run(self, inputs: list, seed: int) -> object:
        """The reference's call on these inputs: its forward, or on a training problem its forward and backward
        from the upstream gradients of the call's `seed` (the outputs and gradients, flat: training.py)."""
        if not self.training:
            return self.reference(*inputs)
        step = forward_backward(self.reference, leaves(inputs), seed=seed, what="the reference")
        self.upstream_shapes = step.upstream_shapes()
        if self.names is None:  # the same for every call of this workload
            self.names = names(self.reference, inputs, len(step.outputs))
        return step.flat()

    def truth_of(self, inputs: list, reference_out: object, seed: int) -> object | None:
        if self.truth is None:
            return None
        if not self.training:
            return self.truth(inputs, reference_out)
        grads_in = [g.double() for g in upstream(self.upstream_shapes, self.device, seed)]
        return self.truth.trained(inputs, reference_out, grads_in)

    def upstream_wire(self) -> list:
        """The upstream gradients' [shape, dtype] as the runner is told them (empty unless a training problem)."""
        return [[list(shape), str(dtype).removeprefix("torch.")] for shape, dtype in self.upstream_shapes]

    def timed_call(self, around: Around):
        """The reference's side of timing: a function of (the upstream gradients, *the inputs as leaves) on a training
        problem (both made before the clock runs: timed_args), its halves run by `around` (the timer's split), else
        the reference itself."""
        return timed_step(self.reference, "the reference", around) if self.training else self.reference

    def timed_args(self, inputs: list, seed: int) -> list:
        if not self.training:
            return inputs
        return timed_args(upstream(self.upstream_shapes, self.device, seed), inputs)


def planned_bytes(instance: Instance, dtype, training: bool = False) -> tuple[int, int] | None:
    """What an evaluation of this workload holds at once, without and with its float64 truth (bytes), from a forward
    on the meta device: the judge's reference, its inputs and output, the candidate's output as the judge receives it,
    and in the runner the candidate's parameters, its inputs twice (a clone) and its output. A training problem's call
    holds as much again in each process and in the truth: a gradient per input and parameter, an upstream gradient
    per output (what autograd saves between the two halves is not counted). None where the meta device cannot run the
    reference (data-dependent operators): then nothing is skipped."""
    meta = torch.device("meta")
    try:
        with torch.device(meta):
            model = instance.module.Model(*instance.init_inputs).to(dtype=dtype)
        inputs = forward_inputs(instance.module, meta, dtype)
        with torch.no_grad():
            out = model(*inputs)
    except Exception:  # noqa: BLE001 - no meta kernel: the workload runs, as the problem as written does
        return None
    size = torch.empty((), dtype=dtype).element_size()

    def nbytes(items) -> int:
        return sum(t.numel() * t.element_size() for t in items if isinstance(t, torch.Tensor))
    params, ins, outs = nbytes([*model.parameters(), *model.buffers()]), nbytes(inputs), nbytes(tensors(out))
    plain = 2 * params + 3 * ins + 3 * outs
    truth = (8 // size) * (params + ins + outs)
    if training:
        plain, truth = plain + 2 * (params + ins + outs), 2 * truth
    return plain, plain + truth


def capacity_bytes(device) -> int | None:
    """What an evaluation may plan to hold on this device: a share of a GPU's memory, or of the host's available."""
    if device.type == "cuda":
        return int(MEMORY_SHARE * torch.cuda.get_device_properties(device).total_memory)
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(MEMORY_SHARE * int(fields["MemAvailable"].split()[0]) * 1024)
    except (OSError, KeyError, ValueError):
        return None


def fits(instance: Instance, device, dtype, training: bool = False) -> tuple[bool, bool, str | None]:
    """Whether the workload fits the device (else it is skipped), whether its float64 truth fits too (else it is
    judged against the reference), and a note saying what did not fit."""
    planned, capacity = planned_bytes(instance, dtype, training), capacity_bytes(device)
    if planned is None or capacity is None:
        return True, True, None
    plain, with_truth = planned
    if plain > capacity:
        return False, False, (f"skipped: it needs about {plain / 1e9:.1f} GB and the device can give "
                              f"{capacity / 1e9:.1f} GB")
    if with_truth > capacity:
        return True, False, (f"judged against the reference: its float64 truth needs about {with_truth / 1e9:.1f} GB "
                             f"of the {capacity / 1e9:.1f} GB the device can give")
    return True, True, None


class Record:
    """What one workload has come to over an evaluation, made into its WorkloadResult at the end."""

    def __init__(self, workload: Workload):
        self.workload = workload
        self.status: WorkloadStatus = "not_run"
        self.trials = 0
        self.values: dict = {}
        self.max_abs: float | None = None
        self.max_rel: float | None = None
        self.norm: float | None = None
        self.message: str | None = None
        self.notes: list[str] = []
        self.ref_ms: float | None = None
        self.candidate_ms: float | None = None

    def saw(self, comparison) -> None:
        """A comparison that passed: the worst errors so far."""
        for name, value in (("max_abs", comparison.max_abs_err), ("max_rel", comparison.max_rel_err),
                            ("norm", comparison.norm_err)):
            if value is not None:
                setattr(self, name, max(getattr(self, name) or 0.0, value))

    def note(self, text: str | None) -> None:
        if text and text not in self.notes:
            self.notes.append(text)

    def result(self) -> WorkloadResult:
        w = self.workload
        return WorkloadResult(name=w.name, about=w.about, public=w.public, timed=w.timed, weight=w.weight,
                              status=self.status, trials=self.trials, values=self.values, max_abs_err=self.max_abs,
                              max_rel_err=self.max_rel, norm_err=self.norm, message=self.message,
                              note="; ".join(self.notes) or None, ref_ms=self.ref_ms, candidate_ms=self.candidate_ms)
