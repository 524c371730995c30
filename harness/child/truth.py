"""Judging an output against the truth: the reference run again in float64 on the same inputs and parameters, and
the bound harness/checks.py states (elementwise within the tolerance plus a multiple of the reference's own largest
error, normwise within a multiple of the reference's own error plus rtol of the truth's norm). Runs in the judge.

Large outputs are compared in chunks, in two passes: the reference's own error first (the elementwise bound needs
its largest), then the candidate's; totals stay on the device until each pass ends.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch

from harness.checks import ELEMENT_FACTOR, NORM_FACTOR, CheckSpec
from harness.child.check import Comparison, block, comparable, compare, compare_tensor, item_name, tensors
from harness.child.common import describe
from harness.child.mismatch import locate


@dataclass
class Expected:
    """What one call's output is judged against: the reference's output in the working dtype, and the same in
    float64 (None where the check needs none, or float64 could not run the reference)."""

    reference: object
    truth: object | None = None


class Truth:
    """The reference model in float64 (a copy of the working-dtype one: the same parameters, upcast), or why there
    is none; a failure of it is a note, never a verdict."""

    def __init__(self, reference_model):
        self.failure: str | None = None
        try:
            self.model = copy.deepcopy(reference_model).to(torch.float64)
        except Exception as exc:  # noqa: BLE001 - a module that cannot be copied or cast: no float64 truth
            self.model, self.failure = None, f"float64 could not hold the reference ({describe(exc)})"

    def __call__(self, inputs: list, reference_out: object) -> object | None:
        """The float64 outputs for these inputs, or None (and the reason in `failure`)."""
        if self.model is None:
            return None
        try:
            out = self.model(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                               for x in inputs])
        except Exception as exc:  # noqa: BLE001 - an operator without a float64 kernel, or no memory for it
            self.model, self.failure = None, f"float64 could not run the reference ({describe(exc)})"
            return None
        if [t.shape for t in tensors(out)] != [t.shape for t in tensors(reference_out)]:
            self.model, self.failure = None, "the reference's float64 outputs differ in shape from its own"
            return None
        return out

    def trained(self, inputs: list, reference_out: object, grads_in: list) -> object | None:
        """A training problem's float64 outputs and gradients (training.py's flat tuple) for these inputs and upstream
        gradients, or None (and the reason in `failure`)."""
        from harness.child.training import forward_backward, leaves

        if self.model is None:
            return None
        try:
            out = forward_backward(self.model, leaves([x.double() if isinstance(x, torch.Tensor) and
                                                       x.is_floating_point() else x for x in inputs]),
                                   grads_in).flat()
        except Exception as exc:  # noqa: BLE001 - an operator without a float64 kernel or backward, or no memory
            self.model, self.failure = None, f"float64 could not run the reference's backward ({describe(exc)})"
            return None
        if [t.shape for t in tensors(out)] != [t.shape for t in tensors(reference_out)]:
            self.model, self.failure = None, "the reference's float64 outputs differ in shape from its own"
            return None
        return out


def judge(out: object, expected: Expected, spec: CheckSpec, atol: float, rtol: float,
          names: list[str] | None = None) -> Comparison:
    """`out` under the check `spec`: the truth bound, or allclose against the reference. `names`: what each item of
    a tuple output is (a training problem's outputs and gradients), for messages."""
    if spec.mode == "allclose":
        return compare(out, expected.reference, atol, rtol, names)
    return compare_truth(out, expected.reference, expected.truth, atol, rtol, names=names)


def compare_truth(out: object, ref: object, truth: object | None, atol: float, rtol: float,
                  where: str = "output", names: list[str] | None = None) -> Comparison:
    """Outputs of the same structure as the reference's (a tensor, or a tuple/list of tensors and numbers)."""
    if isinstance(ref, torch.Tensor):
        exact = truth if isinstance(truth, torch.Tensor) and truth.shape == ref.shape else None
        return compare_tensor_truth(out, ref, exact, atol, rtol, where)
    if isinstance(ref, (tuple, list)) and isinstance(out, (tuple, list)) and len(out) == len(ref):
        truths = truth if isinstance(truth, (tuple, list)) and len(truth) == len(ref) else [None] * len(ref)
        worst = Comparison(True, None, 0.0, 0.0, 0.0)
        for i, (o, r, t) in enumerate(zip(out, ref, truths)):
            found = compare_truth(o, r, t, atol, rtol, item_name(i, names))
            if not found.ok:
                return found
            worst = _worse(worst, found)
        return worst
    return compare(out, ref, atol, rtol, names)  # a number, or a structure that differs (compare says how)


def _worse(a: Comparison, b: Comparison) -> Comparison:
    pick = b if (b.norm_err or 0.0) > (a.norm_err or 0.0) else a
    return Comparison(True, None, max(a.max_abs_err or 0.0, b.max_abs_err or 0.0),
                      max(a.max_rel_err or 0.0, b.max_rel_err or 0.0), 0.0, pick.norm_err, pick.ref_norm_err)


def compare_tensor_truth(out: object, ref: torch.Tensor, truth: torch.Tensor | None, atol: float, rtol: float,
                         where: str = "output") -> Comparison:
    out = comparable(out, ref, where)
    if isinstance(out, Comparison):
        return out
    if not ref.is_floating_point() or ref.numel() == 0:
        return compare_tensor(out, ref, atol, rtol, where)  # integers and bools: exact
    against = "the float64 truth" if truth is not None else "the reference"
    flats = (out.reshape(-1), ref.reshape(-1), (truth if truth is not None else ref).reshape(-1))
    n, size = ref.numel(), block(ref)

    def chunk(start: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # candidate, reference, truth
        c, r, t = (x[start:start + size].double() for x in flats)
        return c, r, t

    # One pass holds every figure; the elements outside the bound are counted in a second only where some may be
    # (the elementwise bound needs the reference's largest error, known at the end of the first).
    sums = torch.zeros(7, dtype=torch.float64, device=ref.device)
    for start in range(0, n, size):
        sums = _figures(*chunk(start), atol, rtol, sums)
    own_max, own_sq, truth_sq, max_abs, max_rel, diff_sq, excess = sums[:7].tolist()
    nonfinite = bad = 0
    if excess > ELEMENT_FACTOR * own_max:
        counts = torch.zeros(2, dtype=torch.int64, device=ref.device)
        for start in range(0, n, size):
            counts += _outside(*chunk(start), atol, rtol, own_max)
        bad, nonfinite = counts.tolist()
    if nonfinite:  # NaN or Inf where the truth is finite: infinitely wrong
        max_abs = max_rel = diff_sq = math.inf
    norm_t = math.sqrt(truth_sq)
    norm_err = math.sqrt(diff_sq) / norm_t if norm_t > 0 else (0.0 if diff_sq == 0 else math.inf)
    own_norm = math.sqrt(own_sq) / norm_t if norm_t > 0 else 0.0
    figures = dict(max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm_err, ref_norm_err=own_norm)
    if bad:
        nan_note = f", {nonfinite} of them NaN or Inf where the truth is finite" if nonfinite else ""
        location = locate(out, truth if truth is not None else ref,
                          lambda c, t, r: _outside_masks(c.double(), r.double(), t.double(), atol, rtol, own_max)[0],
                          others=(ref,), chunk=size)
        return Comparison(False, f"{where} mismatch: {bad} of {n} elements ({bad / n:.2%}) farther from {against} "
                          f"than atol={atol:g} + rtol={rtol:g} x |truth| + {ELEMENT_FACTOR:g} x the reference's own "
                          f"largest error ({own_max:.3g}){nan_note}; max abs err {max_abs:.4g}, max rel err "
                          f"{max_rel:.4g}" + (f"\n{location}" if location else ""), mismatch_fraction=bad / n,
                          location=location, **figures)
    allowed = NORM_FACTOR * own_norm + rtol
    if norm_err > allowed:
        return Comparison(False, f"{where} is off {against} by {norm_err:.3g} of its norm, over the {allowed:.3g} "
                          f"allowed (rtol {rtol:g} + {NORM_FACTOR:g} x the reference's own {own_norm:.3g}): each "
                          "element is within its tolerance, but together they are less precise than the dtype "
                          "allows", mismatch_fraction=0.0, **figures)
    return Comparison(True, None, mismatch_fraction=0.0, **figures)


def _figures(c: torch.Tensor, r: torch.Tensor, t: torch.Tensor, atol: float, rtol: float,
             sums: torch.Tensor) -> torch.Tensor:
    """One chunk's part of: the reference's largest error and its sum of squares, the truth's sum of squares, the
    candidate's largest absolute and relative errors and their sum of squares, and its largest excess over atol +
    rtol |truth| (where both are finite; a non-finite candidate beside a finite truth counts as infinite excess)."""
    if bool(c.isfinite().all() & r.isfinite().all() & t.isfinite().all()):  # the usual case, in fewer passes
        own, diff, size = (r - t).abs_(), (c - t).abs_(), t.abs()
        excess = (diff - atol).sub_(size, alpha=rtol)
        rel = diff / size.clamp_min_(max(atol, 1e-30))
        return torch.stack((torch.maximum(sums[0], own.max()), sums[1] + own.square_().sum(),
                            sums[2] + t.square().sum(), torch.maximum(sums[3], diff.max()),
                            torch.maximum(sums[4], rel.max()), sums[5] + diff.square().sum(),
                            torch.maximum(sums[6], excess.max())))
    t_fin = t.isfinite()
    both = r.isfinite() & t_fin
    own = torch.where(both, (r - t).abs(), 0.0)
    kept = torch.where(t_fin, t, 0.0)
    compared = t_fin & c.isfinite()
    diff = torch.where(compared, (c - t).abs(), 0.0)
    excess = torch.where(t_fin & ~compared, math.inf, diff - atol - rtol * kept.abs())
    rel = diff / kept.abs().clamp_min(max(atol, 1e-30))
    return torch.stack((torch.maximum(sums[0], own.max()), sums[1] + (own * own).sum(), sums[2] + (kept * kept).sum(),
                        torch.maximum(sums[3], diff.max()), torch.maximum(sums[4], rel.max()),
                        sums[5] + (diff * diff).sum(), torch.maximum(sums[6], excess.max())))


def _outside(c: torch.Tensor, r: torch.Tensor, t: torch.Tensor, atol: float, rtol: float,
             own_max: float) -> torch.Tensor:
    """How many of one chunk's elements are outside the bound, and of those the non-finite ones."""
    outside, nonfinite = _outside_masks(c, r, t, atol, rtol, own_max)
    return torch.stack((outside.sum(), nonfinite.sum()))


def _outside_masks(c: torch.Tensor, r: torch.Tensor, t: torch.Tensor, atol: float, rtol: float,
                   own_max: float) -> tuple[torch.Tensor, torch.Tensor]:
    """One chunk's elements outside the bound, and of those the non-finite ones where the truth is finite (a
    candidate may repeat the working dtype's own overflow where the reference has it). NaN and Inf where the truth
    has them must be matched. The same masks count and locate (harness/child/mismatch.py) the wrong elements."""
    t_fin, c_fin = t.isfinite(), c.isfinite()
    like_truth = (c.isnan() & t.isnan()) | (c == t)
    like_reference = (c.isnan() & r.isnan()) | (~r.isfinite() & (c == r))
    nonfinite = (~t_fin & ~like_truth) | (t_fin & ~c_fin & ~like_reference)
    both = t_fin & c_fin
    far = both & ((c - t).abs() > atol + rtol * t.abs() + ELEMENT_FACTOR * own_max)
    return nonfinite | far, nonfinite
