"""Where a failed comparison's wrong elements are, in one or two short lines a kernel engineer reads at a glance: a
tail the kernel does not cover, a head, a range, a stride, a block, NaN from some row on, a constant offset or scale.

Runs in the judge, only after a comparison failed (the passing path never gets here), as one more pass over the
output: block by block along the leading dimensions (each block about `chunk` elements, so no full-size temporary),
with the caller's own test of which elements are wrong, so the allclose and the truth checks describe the same
elements they counted. Totals stay on the device (per dimension, the wrong elements at each index; NaN and Inf where
the expected value is finite; the first of each; sums for an offset or scale) until one synchronization at the end,
and one more where evenly spaced indices must be confirmed as a stride. No list of the wrong elements is ever made.
Numbers in the words may be masked for held-out workloads (every number becomes N): the words must read without them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

import torch

from harness.child.mismatch_words import Found, Spread, Values, describe

CHUNK = 1 << 24  # elements per block unless the caller says (check.py passes its own CHUNK)

# wrong(out_block, expected_block, *other_blocks) -> a bool tensor of the block's shape: True where wrong
WrongMask = Callable[..., torch.Tensor]


def locate(out: torch.Tensor, expected: torch.Tensor, wrong: WrongMask, others: tuple[torch.Tensor, ...] = (),
           chunk: int = CHUNK) -> str | None:
    """Where `wrong` finds `out` wrong against `expected` (same shape and device; `others`, of the same shape, are
    sliced alongside for `wrong`), in at most two lines; None where nothing is wrong."""
    if out.dim() == 0:
        out, expected, others = out.reshape(1), expected.reshape(1), tuple(x.reshape(1) for x in others)
    if out.numel() == 0:
        return None
    tally = _Tally(out)
    for index, start in _blocks(tuple(out.shape), chunk):
        o, e = out[index], expected[index]
        tally.add(index, start, o, e, wrong(o, e, *(x[index] for x in others)))
    found = tally.finish()
    return describe(found) if found.wrong else None


def _blocks(shape: tuple[int, ...], chunk: int) -> Iterator[tuple[tuple, int]]:
    """Index tuples of blocks of at most about `chunk` elements, each contiguous in row-major order (fixed indices
    of the leading dimensions, then a range of the first dimension whose inner part fits), with its flat start."""
    split = next(d for d in range(len(shape)) if math.prod(shape[d + 1:]) <= chunk)
    inner = math.prod(shape[split + 1:])
    step = max(1, chunk // max(inner, 1))
    for outer in itertools.product(*(range(s) for s in shape[:split])):
        base = 0
        for i, s in zip(outer, shape[:split]):
            base = base * s + i
        for a in range(0, shape[split], step):
            yield outer + (slice(a, min(a + step, shape[split])),), (base * shape[split] + a) * inner


def _counts(size: int, most: int, device: torch.device) -> torch.Tensor:
    """Per-index counts, in int32 where they fit (a dimension can be long: half the memory)."""
    return torch.zeros(size, dtype=torch.int32 if most < 2 ** 31 else torch.int64, device=device)


def _add_counts(counts: list[torch.Tensor], index: tuple, mask: torch.Tensor) -> None:
    """Add a block's wrong elements to each dimension's per-index counts (the block is fixed at index[:-1])."""
    split = len(index) - 1
    if split:
        total = mask.count_nonzero()
        for d, i in enumerate(index[:-1]):
            counts[d][i] += total
    for j in range(mask.dim()):
        rest = [k for k in range(mask.dim()) if k != j]
        part = mask.count_nonzero(dim=rest) if rest else mask
        if j == 0:
            counts[split][index[-1]] += part
        else:
            counts[split + j] += part


def _first(mask: torch.Tensor, start: int, none: int) -> torch.Tensor:
    """The flat position of a block's first True (argmax returns the first maximum), or `none`."""
    return torch.where(mask.any(), start + mask.reshape(-1).view(torch.uint8).argmax(), none)


def _last(mask: torch.Tensor, start: int) -> torch.Tensor:
    """The flat position of a block's last True, or -1."""
    flat = mask.reshape(-1)
    return torch.where(flat.any(), start + flat.numel() - 1 - flat.flip(0).view(torch.uint8).argmax(), -1)


def _finite(x: torch.Tensor) -> torch.Tensor:
    """isfinite in two passes instead of three: x - x is 0 for a finite x, NaN for NaN and Inf."""
    return (x - x) == 0


class _Tally:
    """One pass's totals, on the output's device."""

    def __init__(self, out: torch.Tensor):
        n, device = out.numel(), out.device
        self.shape, self.n, self.dtype = tuple(out.shape), n, out.dtype
        self.counts = [_counts(s, n // s, device) for s in self.shape]
        floating = out.is_floating_point() or out.is_complex()
        self.nonfinite = [_counts(s, n // s, device) for s in self.shape] if floating else None
        self.numeric = out.dtype != torch.bool and not out.is_complex()
        self.firsts = [torch.tensor(n, device=device), torch.tensor(n, device=device)]  # wrong, non-finite
        self.last = torch.tensor(-1, device=device)                                     # the last wrong
        self.kinds = torch.zeros(2, dtype=torch.int64, device=device)                  # NaN, Inf
        self.sums = torch.zeros(7, dtype=torch.float64, device=device)                 # Values' fields, in order

    def add(self, index: tuple, start: int, o: torch.Tensor, e: torch.Tensor, mask: torch.Tensor) -> None:
        _add_counts(self.counts, index, mask)
        self.firsts[0] = torch.minimum(self.firsts[0], _first(mask, start, self.n))
        self.last = torch.maximum(self.last, _last(mask, start))
        kept = mask
        if self.nonfinite is not None:
            o_finite, e_finite = _finite(o), _finite(e)
            bad = mask & e_finite & ~o_finite
            nan = (bad & o.isnan()).count_nonzero()
            self.kinds += torch.stack((nan, bad.count_nonzero() - nan))
            _add_counts(self.nonfinite, index, bad)
            self.firsts[1] = torch.minimum(self.firsts[1], _first(bad, start, self.n))
            kept = mask & o_finite & e_finite
        if self.numeric:
            od = torch.where(kept, o, 0).double().reshape(-1)
            ed = torch.where(kept, e, 0).double().reshape(-1)
            d = od - ed
            self.sums += torch.stack((kept.count_nonzero().double(), d.sum(), d.dot(d), od.sum(), od.dot(od),
                                      ed.dot(ed), od.dot(ed)))

    def finish(self) -> Found:
        """Everything on the host: one synchronization (two where a stride must be confirmed)."""
        lists = self.counts + (self.nonfinite or [])
        head = torch.cat([torch.stack(self.firsts), self.kinds, self.counts[0].sum().reshape(1)]
                         + [_summary(c) for c in lists] + [self.last.reshape(1)])
        numbers = torch.cat((head.double(), self.sums)).tolist()
        last = int(numbers.pop(-8))
        firsts, kinds, wrong = numbers[:2], numbers[2:4], int(numbers[4])
        rank = len(self.shape)
        spreads = _steps(lists, [Spread(s, *map(int, numbers[5 + 3 * i:8 + 3 * i]))
                                 for i, s in enumerate(self.shape * (len(lists) // rank))])
        values = Values(int(numbers[-7]), *numbers[-6:]) if self.numeric else None
        bad = self.nonfinite is not None and int(sum(kinds)) > 0
        return Found(self.shape, wrong, spreads[:rank], _unravel(int(firsts[0]), self.shape), int(kinds[0]),
                     int(kinds[1]), spreads[rank:] if bad else None,
                     _unravel(int(firsts[1]), self.shape) if bad else None, values, _tolerance(self.dtype),
                     _unravel(last, self.shape))


def _summary(counts: torch.Tensor) -> torch.Tensor:
    """How many indices hold wrong elements, the first and the last."""
    hit = (counts > 0).to(torch.uint8)
    return torch.stack((hit.sum(dtype=torch.int64), hit.argmax(), counts.numel() - 1 - hit.flip(0).argmax()))


def _steps(counts: list[torch.Tensor], spreads: list[Spread]) -> list[Spread]:
    """Confirm the evenly spaced candidates: k indices from first to last, (last - first) / (k - 1) apart, are an
    arithmetic progression exactly when every index at that step holds wrong elements."""
    candidates = [i for i, s in enumerate(spreads) if s.hit >= 3 and s.last - s.first + 1 > s.hit
                  and (s.last - s.first) % (s.hit - 1) == 0]
    if not candidates:
        return spreads
    steps = {i: (spreads[i].last - spreads[i].first) // (spreads[i].hit - 1) for i in candidates}
    checks = torch.stack([(counts[i][spreads[i].first:spreads[i].last + 1:steps[i]] > 0).all()
                          for i in candidates]).tolist()
    return [Spread(s.size, s.hit, s.first, s.last, steps[i]) if i in steps and checks[candidates.index(i)] else s
            for i, s in enumerate(spreads)]


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for s in reversed(shape):
        flat, i = divmod(flat, s)
        index.append(i)
    return tuple(reversed(index))


def _tolerance(dtype: torch.dtype) -> float:
    """Half precision rounds each value by up to its eps: an offset or scale is constant only that closely."""
    return max(1e-3, 2 * torch.finfo(dtype).eps) if dtype.is_floating_point else 1e-3
