"""Correctness: compare a candidate's output with the reference's, element by element.

Runs inside the evaluation child (imports torch). Large tensors are compared in chunks so the
comparison never needs more than a few chunk-sized temporaries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from harness.child.mismatch import locate
from harness.protocol import OutputStats

CHUNK = 1 << 24  # elements per block on a GPU, where each operation on a block is a kernel launch
# On a CPU, a block's float64 temporaries stay in the caches: a truth check of 16M elements took 0.74 s in blocks of
# 1 << 24 and 0.19 s in blocks of 1 << 18 (2-core CI machine)
CPU_CHUNK = 1 << 18


@contextlib.contextmanager
def one_thread(device: torch.device) -> Iterator[None]:
    """Comparisons on the cores run on one thread: they are short and memory-bound, and the judge shares the cores
    with its runner and whatever else the machine runs, so a parallel region waits for whichever of its threads was
    descheduled (4M float32 elements judged against their truth on the loaded 2-core CI machine: 1.4-4.2 s on two
    threads, 0.23-0.35 s on one). The reference's own calls keep torch's threads."""
    if device.type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def block(t: torch.Tensor) -> int:
    """Elements per block for comparing and summarizing `t` on its device."""
    return CPU_CHUNK if t.device.type == "cpu" else CHUNK
SEED_SAMPLE = 1 << 16  # elements of each reference output compared between two seeds
# A reference output "varies" when its std is at least this share of its mean |x| (problems/gate.py's MIN_REL_STD):
# a candidate output that is one value everywhere is then wrong, whatever the absolute tolerance lets through.
VARIES_REL_STD = 1e-3


@dataclass
class Comparison:
    ok: bool
    message: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    norm_err: float | None = None       # the truth check's ||out - truth|| / ||truth||
    ref_norm_err: float | None = None   # and the reference's own
    location: str | None = None         # where the wrong elements are (harness/child/mismatch.py), on a failure


def _shape(t: torch.Tensor) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def comparable(out: object, ref: torch.Tensor, where: str = "output") -> torch.Tensor | Comparison:
    """`out`, a tensor that compares with `ref` value by value, or why it does not (its type, shape, dtype or
    device)."""
    if type(out) is not torch.Tensor:  # subclasses can defer work or fake values
        kind = f"{type(out).__module__}.{type(out).__qualname__}"
        return Comparison(False, f"{where} must be a plain torch.Tensor, got {kind}")
    if out.shape != ref.shape:
        return Comparison(False, f"{where} has shape {_shape(out)}, expected {_shape(ref)}")
    if out.dtype != ref.dtype:
        return Comparison(False, f"{where} has dtype {out.dtype}, expected {ref.dtype}")
    if out.device != ref.device:
        return Comparison(False, f"{where} is on {out.device}, expected {ref.device}")
    return out


def compare_tensor(out: object, ref: torch.Tensor, atol: float, rtol: float, where: str = "output",
                   locating: bool = True) -> Comparison:
    """`out` against `ref` within atol + rtol |ref|; on a failure, where the wrong elements are unless not
    `locating` (two seeds' outputs, which are meant to differ: only how much is wanted)."""
    out = comparable(out, ref, where)
    if isinstance(out, Comparison):
        return out
    n = ref.numel()
    if n == 0:
        return Comparison(True, max_abs_err=0.0, max_rel_err=0.0, mismatch_fraction=0.0)
    o_flat, r_flat = out.reshape(-1), ref.reshape(-1)
    exact = not (ref.is_floating_point() or ref.is_complex())
    # Totals stay on the device until the end: one synchronization per comparison, not three per chunk.
    bad_total = torch.zeros((), dtype=torch.int64, device=ref.device)
    abs_total = rel_total = torch.zeros((), dtype=torch.float64, device=ref.device)
    size = block(ref)
    for start in range(0, n, size):
        o, r = o_flat[start:start + size], r_flat[start:start + size]
        if exact:
            bad_total += (o != r).sum()
            continue
        bad_mask, diff, r = _outside(o, r, atol, rtol)
        bad_total += bad_mask.sum()
        abs_total = torch.fmax(abs_total, diff.max().double())
        # fmax passes over a NaN chunk maximum (a NaN in the reference), as Python's max(total, nan) did
        rel_total = torch.fmax(rel_total, (diff / r.abs().clamp_min(max(atol, 1e-30))).max().double())
    bad, max_abs, max_rel = int(bad_total), float(abs_total), float(rel_total)
    if exact:
        max_abs = max_rel = float("nan") if bad else 0.0
    fraction = bad / n
    if bad == 0:
        return Comparison(True, None, max_abs, max_rel, 0.0)
    wrong = (lambda o, r: o != r) if exact else (lambda o, r: _outside(o, r, atol, rtol)[0])
    location = locate(out, ref, wrong, chunk=size) if locating else None
    return Comparison(False, f"{where} mismatch: {bad} of {n} elements ({fraction:.2%}) outside "
                      f"atol={atol:g} rtol={rtol:g}; max abs err {max_abs:.4g}, max rel err {max_rel:.4g}"
                      + (f"\n{location}" if location else ""), max_abs, max_rel, fraction, location=location)


def _outside(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> tuple[torch.Tensor, ...]:
    """Where a chunk of floating output is outside atol + rtol |ref| (or its NaN or Inf differ from the reference's),
    |out - ref| (0 where the reference is not finite, inf for a NaN beside a finite one), and the reference in the
    dtype compared (half precision in float32)."""
    if o.dtype in (torch.float16, torch.bfloat16):
        o, r = o.float(), r.float()
    r_nan, o_nan = r.isnan(), o.isnan()
    r_inf = r.isinf()
    finite = ~(r_nan | r_inf)
    diff = torch.where(finite, (o - r).abs(), torch.zeros((), dtype=o.dtype, device=o.device))
    diff = torch.nan_to_num(diff, nan=float("inf"))  # NaN where the reference is finite: infinitely wrong
    return (finite & (diff > atol + rtol * r.abs())) | (r_nan != o_nan) | (r_inf & (o != r)), diff, r


def compare(out: object, ref: object, atol: float, rtol: float, names: list[str] | None = None) -> Comparison:
    """Compare outputs of the same structure (a tensor, or a tuple/list of tensors and numbers); `names`: what each
    item of a tuple is called in messages (else output[i])."""
    if isinstance(ref, torch.Tensor):
        return compare_tensor(out, ref, atol, rtol)
    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            got = f"{type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list)) else type(out).__name__
            return Comparison(False, f"output must be a {type(ref).__name__} of {len(ref)} items, got {got}")
        worst = Comparison(True, None, 0.0, 0.0, 0.0)
        for i, (o, r) in enumerate(zip(out, ref)):
            c = compare_tensor(o, r, atol, rtol, item_name(i, names)) if isinstance(r, torch.Tensor) \
                else compare(o, r, atol, rtol)
            if not c.ok:
                return c
            worst = Comparison(True, None, max(worst.max_abs_err or 0.0, c.max_abs_err or 0.0),
                               max(worst.max_rel_err or 0.0, c.max_rel_err or 0.0), 0.0)
        return worst
    if isinstance(ref, (int, float, bool)):
        ok = type(out) is type(ref) and abs(out - ref) <= atol + rtol * abs(ref)
        return Comparison(ok, None if ok else f"output {out!r} != expected {ref!r}")
    return Comparison(False, f"unsupported reference output type {type(ref).__name__}")


def item_name(i: int, names: list[str] | None) -> str:
    return names[i] if names and i < len(names) else f"output[{i}]"


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Exact equality, NaNs equal to NaNs (for checking that inputs were not modified)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool(torch.equal(a, b))


# ---- is the reference informative? (what the parent's problems/gate.py decides from) ----

def tensors(obj) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in tensors(item)]
    return []


def output_stats(t: torch.Tensor, atol: float, rtol: float) -> OutputStats:
    """What the degeneracy checks need, computed in chunks so no full-size temporary is made."""
    n = t.numel()
    if n == 0:
        return OutputStats(numel=0)
    if not t.is_floating_point():
        return OutputStats(numel=n, floating=False, constant=bool((t == t.reshape(-1)[0]).all()))
    flat = t.reshape(-1)
    # Totals accumulate on the device, chunk after chunk in order (as the floats did): one synchronization a pass.
    counts = torch.zeros(2, dtype=torch.int64, device=t.device)    # non-finite, near zero
    sums = torch.zeros(3, dtype=torch.float64, device=t.device)    # x, |x|, x*x over the finite values
    bounds = torch.tensor([float("inf"), float("-inf")], dtype=torch.float64, device=t.device)
    size = block(t)
    for start in range(0, n, size):
        c = flat[start:start + size].double()
        finite = c.isfinite()
        kept = torch.where(finite, c, 0.0)
        counts += torch.stack(((~finite).sum(), (finite & (c.abs() <= atol)).sum()))
        sums += torch.stack((kept.sum(), kept.abs().sum(), (kept * kept).sum()))
        bounds = torch.stack((torch.minimum(bounds[0], torch.where(finite, c, float("inf")).min()),
                              torch.maximum(bounds[1], torch.where(finite, c, float("-inf")).max())))
    (nonfinite, near_zero), (total, total_abs, total_sq), (lo, hi) = counts.tolist(), sums.tolist(), bounds.tolist()
    m = max(n - nonfinite, 1)
    mean = total / m
    std = max(total_sq / m - mean * mean, 0.0) ** 0.5
    # Would a tensor filled with one value (the mean) pass the correctness check?
    mismatches = torch.zeros((), dtype=torch.int64, device=t.device)
    for start in range(0, n, size):
        c = flat[start:start + size].double()
        mismatches += ((c - mean).abs() > atol + rtol * c.abs()).sum()
    constant_mismatch = int(mismatches)
    return OutputStats(numel=n, floating=True, nonfinite=nonfinite, near_zero_fraction=near_zero / n,
                       mean=mean, mean_abs=total_abs / m, std=std, min=lo, max=hi,
                       constant=lo == hi, constant_passes=constant_mismatch == 0)


def seed_sample(t: torch.Tensor) -> torch.Tensor:
    """Up to SEED_SAMPLE elements of a flattened output (a copy), at the same scattered positions for any output of
    that size. Evenly spaced ones would fall in one column of a row-major output whose row length divides the
    stride (an exclusive cumsum's first column: zero for every seed)."""
    flat = t.reshape(-1)
    if flat.numel() <= SEED_SAMPLE:
        return flat.clone()
    positions = torch.randint(flat.numel(), (SEED_SAMPLE,), generator=torch.Generator().manual_seed(SEED_SAMPLE))
    return flat[positions.to(flat.device)]


def varies(stats: OutputStats) -> bool:
    return bool(stats.floating and stats.numel > 1 and not stats.constant
                and (stats.std or 0.0) >= VARIES_REL_STD * (stats.mean_abs or 0.0))


def one_value(t: object) -> bool:
    """A tensor of more than one element, all equal (an output made of a constant, zeros among them)."""
    return type(t) is torch.Tensor and t.numel() > 1 and bool((t == t.reshape(-1)[0]).all())
