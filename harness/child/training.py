"""Training problems (a problem file's `TRAINING = True`): a call is a forward and a backward.

The floating inputs are leaves that require grad; the backward starts from an upstream gradient per floating output,
drawn from the call's seed (a new one every call, the same in the judge and the runner, shown in no prompt) before
the call, so that drawing it is never timed. What a call gives, and what is judged, is one flat tuple (Step.flat): the
outputs, then the gradient of every floating input, then the gradient of every parameter in `named_parameters()`
order (`names` says which is which). A gradient that autograd leaves as None (nothing flowed to it) counts as zeros.

Runs in both children: the runner on ModelNew, the judge on the reference and on its float64 copy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch

from harness.child.check import tensors
from harness.child.common import EvalFailure

UPSTREAM = 0x5F75705F  # mixed into a call's seed for its upstream gradients: not the inputs' stream


def leaves(inputs: list) -> list:
    """The call's inputs, each floating tensor a fresh leaf that requires grad (the caller's copy untouched)."""
    return [x.detach().clone().requires_grad_() if _floating(x) else x for x in inputs]


def upstream(shapes: list[tuple[torch.Size, torch.dtype]], device, seed: int) -> list[torch.Tensor]:
    """One upstream gradient per floating output, of its shape and dtype, from the call's seed (the same values in
    every process on the same device type)."""
    generator = torch.Generator(device=device)
    generator.manual_seed((seed ^ UPSTREAM) & ((1 << 63) - 1))
    return [torch.randn(shape, generator=generator, device=device, dtype=torch.float32).to(dtype)
            for shape, dtype in shapes]


def floating_outputs(out: object) -> list[torch.Tensor]:
    return [t for t in tensors(out) if t.is_floating_point()]


def shapes_of(out: object) -> list[tuple[torch.Size, torch.dtype]]:
    return [(t.shape, t.dtype) for t in floating_outputs(out)]


@dataclass(frozen=True)
class Step:
    """What one forward and backward gave: the outputs (detached) and the gradients (inputs', then parameters')."""

    outputs: tuple
    grads: tuple

    def flat(self) -> tuple:
        """What is handed over and judged: the outputs, then the gradients."""
        return (*self.outputs, *self.grads)

    def upstream_shapes(self) -> list[tuple[torch.Size, torch.dtype]]:
        return shapes_of(self.outputs)


Around = Callable[[str, Callable[[], object]], object]  # runs one half ("forward", "backward"), returns its value


def plainly(_half: str, run: Callable[[], object]) -> object:
    return run()


def forward_backward(model, args: list, grads_in: list[torch.Tensor] | None = None, *, seed: int | None = None,
                     what: str = "the call", around: Around = plainly) -> Step:
    """Forward, then backward from `grads_in` (or, where None, from the upstream `seed` draws for the outputs'
    shapes). `args` are leaves (`leaves`); the parameters' gradients are cleared first. `around` runs each half
    (the profiler measures them apart)."""
    for p in model.parameters():
        p.grad = None
    with torch.enable_grad():
        out = around("forward", lambda: model(*args))
        outs = floating_outputs(out)
        for i, t in enumerate(outs):
            if not t.requires_grad:
                where = f"output[{i}]" if len(outs) > 1 else "the output"
                raise EvalFailure("incorrect", f"{what}: {where} does not require grad (detached from the inputs "
                                               "and parameters): a training problem's ModelNew must return outputs "
                                               "autograd can differentiate, through a torch.autograd.Function of "
                                               "its own or operations autograd knows")
        if grads_in is None:
            assert seed is not None
            grads_in = upstream(shapes_of(out), outs[0].device if outs else "cpu", seed)
        if outs:
            around("backward", lambda: torch.autograd.backward(outs, grads_in))
    grads = [_grad(x) for x in args if _floating(x)] + [_grad(p) for p in model.parameters()]
    return Step(tuple(t.detach() for t in tensors(out)), tuple(grads))


def timed_step(model, what: str, around: Around = plainly) -> Callable[..., Step]:
    """A training call as a timer takes it: a function of (the upstream gradients, *the inputs as leaves), both made
    before the clock runs (timed_args); `around` runs its halves (a timer's split)."""
    def call(grads_in, *args):
        return forward_backward(model, list(args), grads_in, what=what, around=around)
    return call


def timed_args(grads_in: list[torch.Tensor], inputs: list) -> list:
    """timed_step's arguments: the upstream gradients, then the inputs as fresh leaves."""
    return [grads_in, *leaves(inputs)]


def names(model, inputs: list, outputs: int) -> list[str]:
    """What each element of forward_backward's tuple is, for messages: `output`, `the gradient of x` (the forward's
    own argument names where it has them), `the gradient of linear.weight`."""
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        arg_names = [p.name for p in params]
    except (TypeError, ValueError):
        arg_names = []
    out = ["output"] if outputs == 1 else [f"output[{i}]" for i in range(outputs)]
    grads = [f"the gradient of {arg_names[i] if i < len(arg_names) else f'input {i}'}"
             for i, x in enumerate(inputs) if _floating(x)]
    return out + grads + [f"the gradient of {name}" for name, _ in model.named_parameters()]


def parameter_shapes(model) -> list[tuple[str, list[int]]]:
    """The parameters a training problem's gradients are judged on, by name and shape."""
    return [(name, list(p.shape)) for name, p in model.named_parameters()]


def _floating(x: object) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _grad(x: torch.Tensor) -> torch.Tensor:
    return x.grad.detach() if x.grad is not None else torch.zeros_like(x, memory_format=torch.contiguous_format)
