"""Sum over a dim (keepdim), Triton: x is viewed as (outer, reduced, inner). For this problem's 4095-float rows
a row is not 16-byte aligned, but 4 rows are: 4 x 4095 floats = 65520 bytes. So one program per (outer index,
quarter of the reduced rows) loads its rows 4 at a time as one flat, aligned run of 16380 floats (16-byte
vector loads, 64 KB in flight per program) and adds it into a 16384-float accumulator: position p of every group
of 4 rows lands in acc[p]. A second small kernel folds each accumulator (column k is acc[k] + acc[4095 + k] +
acc[2 * 4095 + k] + acc[3 * 4095 + k]) and the quarters, in a fixed order, so the result is reproducible. Rows
wider than 4096 floats take a tiled kernel instead (32 x 128 tiles, the reduced rows split when the grid is small).
Measured on an H100 80GB HBM3 (torch 2.11, Triton 3.6, `harness run --backend triton`): 2.940 ms against eager
3.050 ms (1.04x); 97% of the speed of light (2.852 ms). The tiled kernel alone took 3.069 ms against 3.017 ms
(0.98x) in the tuning run, its loads 4 bytes wide.
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
MAX_FLAT = 16384  # floats in a group's flat run: 32 warps hold its accumulator, 16 floats a thread
SPLITS = 4  # programs per outer index: 128 x 4 = 512 on 132 SMs, about 4 waves
GROUP_WARPS = 32  # the fastest of 12 (splits, warps) pairs on an H100


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


@triton.jit
def sum_groups(x_ptr, part_ptr, reduced, inner, outer, rows_per_split,
               G: tl.constexpr, FLAT: tl.constexpr):
    """Rows G at a time as one flat, 16-byte-aligned run of G * inner floats: acc[p] adds position p of every
    group, so column k's sum is acc[k] + acc[inner + k] + ... (add_groups)."""
    b = tl.program_id(0)
    split = tl.program_id(1)
    r_begin = split * rows_per_split
    n_rows = tl.minimum(rows_per_split, reduced - r_begin)
    p = tl.arange(0, FLAT)
    in_group = p < G * inner
    row0 = b.to(tl.int64) * reduced + r_begin
    acc = tl.zeros([FLAT], dtype=tl.float32)
    n_full = n_rows // G
    for i in range(n_full):
        acc += tl.load(x_ptr + (row0 + i * G) * inner + p, mask=in_group, other=0.0).to(tl.float32)
    rest = n_rows - n_full * G
    if rest > 0:
        acc += tl.load(x_ptr + (row0 + n_full * G) * inner + p, mask=p < rest * inner, other=0.0).to(tl.float32)
    tl.store(part_ptr + (split.to(tl.int64) * outer + b) * FLAT + p, acc)


@triton.jit
def add_groups(part_ptr, out_ptr, inner, outer, n_splits, G: tl.constexpr, FLAT: tl.constexpr,
               BLOCK: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = cols < inner
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(n_splits):  # fixed order: reproducible
        base = part_ptr + (s * outer + b).to(tl.int64) * FLAT
        for q in tl.static_range(G):
            acc += tl.load(base + q * inner + cols, mask=inside, other=0.0)
    tl.store(out_ptr + b.to(tl.int64) * inner + cols, acc, mask=inside)


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
        group = 4 // math.gcd(inner, 4)  # rows whose floats start 16 bytes apart
        flat = triton.next_power_of_2(group * inner)
        if flat <= MAX_FLAT and reduced >= group:
            splits = max(1, min(SPLITS, reduced // group))
            rows_per_split = triton.cdiv(triton.cdiv(reduced, splits), group) * group
            splits = triton.cdiv(reduced, rows_per_split)
            part = torch.empty(splits * outer * flat, dtype=torch.float32, device=xc.device)
            sum_groups[(outer, splits)](xc, part, reduced, inner, outer, rows_per_split, G=group, FLAT=flat,
                                        num_warps=GROUP_WARPS)
            add_groups[(outer, triton.cdiv(inner, 1024))](part, out, inner, outer, splits, G=group, FLAT=flat,
                                                          BLOCK=1024, num_warps=4)
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
