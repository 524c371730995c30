"""Sum over a dim (keepdim), Triton: x is viewed as (outer, reduced, inner) and one program per (outer index,
128-column block) walks the reduced rows 32 at a time, loading a 32 x 128 tile (coalesced 4-byte loads: a 4095-float
row is not 16-byte aligned) into a 32 x 128 fp32 accumulator that is folded to one row at the end, so one kernel
reads the input once and writes the output once. Only when that grid is too small to fill the GPU are the reduced
rows also split, into fixed-order partials that a second small kernel adds.
Measured on an H100 80GB HBM3 (torch 2.11, Triton 3.6, median of 15 calls, the harness's hold before each): 3.044 ms
against eager 3.020 ms (0.99x); 94% of the speed of light (2.852 ms). Eager's reduction is already at 94%, and the
unaligned rows keep Triton's loads at 4 bytes: of the ten configurations tried, none beat it.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_R = 32  # rows a step: 32 x 128 floats = 16 KB of loads in flight per program
BLOCK_N = 128  # columns a program: 4095 columns make 32 blocks, 128 batches x 32 = 4096 programs
NUM_WARPS = 8  # 16 loads a thread a step; the fastest of ten configurations measured on an H100
MIN_PROGRAMS = 264  # two programs per H100 SM: below this the reduced rows are split too


@triton.jit
def sum_rows(x_ptr, part_ptr, reduced, inner, n_cb, rows_per_split, part_stride,
             BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    b = pid // n_cb
    cols = (pid % n_cb) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_in = cols < inner
    r_begin = split * rows_per_split
    n_rows = tl.minimum(rows_per_split, reduced - r_begin)
    rows = tl.arange(0, BLOCK_R)
    offs = rows[:, None] * inner + cols[None, :]
    base = x_ptr + (b.to(tl.int64) * reduced + r_begin) * inner
    acc = tl.zeros([BLOCK_R, BLOCK_N], dtype=tl.float32)
    n_full = n_rows // BLOCK_R
    for _ in range(n_full):
        acc += tl.load(base + offs, mask=col_in[None, :], other=0.0).to(tl.float32)
        base += BLOCK_R * inner
    rest = n_rows - n_full * BLOCK_R
    if rest > 0:
        tail_in = (rows[:, None] < rest) & col_in[None, :]
        acc += tl.load(base + offs, mask=tail_in, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    dst = part_ptr + split.to(tl.int64) * part_stride + b.to(tl.int64) * inner + cols
    tl.store(dst, total, mask=col_in)


@triton.jit
def add_partials(part_ptr, out_ptr, n, n_splits, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(n_splits):  # fixed order: reproducible
        acc += tl.load(part_ptr + s * n + idx, mask=inside, other=0.0)
    tl.store(out_ptr + idx, acc, mask=inside)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        shape = list(xc.shape) or [1]
        dim = self.dim % len(shape)
        outer, reduced, inner = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])
        shape[dim] = 1
        out = torch.empty(shape if xc.dim() else [], dtype=xc.dtype, device=xc.device)
        if outer * inner == 0:
            return out
        n_cb = triton.cdiv(inner, BLOCK_N)
        programs = outer * n_cb
        splits = 1
        if programs < MIN_PROGRAMS and reduced > 8 * BLOCK_R:
            splits = min(triton.cdiv(2 * MIN_PROGRAMS, programs), triton.cdiv(reduced, 8 * BLOCK_R))
        rows_per_split = triton.cdiv(triton.cdiv(reduced, splits), BLOCK_R) * BLOCK_R
        splits = triton.cdiv(reduced, rows_per_split) if reduced else 1
        n = outer * inner
        part = out if splits == 1 else torch.empty(splits * n, dtype=torch.float32, device=xc.device)
        sum_rows[(programs, splits)](xc, part, reduced, inner, n_cb, rows_per_split, n,
                                     BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS)
        if splits > 1:
            add_partials[(triton.cdiv(n, 1024),)](part, out, n, splits, BLOCK=1024, num_warps=4)
        return out
