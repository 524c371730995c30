"""RMSNorm over the last dim with a learned scale, trained, Triton: a torch.autograd.Function whose forward keeps each
row's 1/rms and whose backward reads x and the upstream gradient once, writing the input's gradient and
per-program partial sums of the weight's gradient, which a second small kernel adds up.

Forward: one program per row holds the whole row in registers (for 4096 columns 8 warps, 16 floats a thread),
out = x * rstd * weight with rstd = rsqrt(sum(x^2) / n + eps), and stores rstd (4 bytes a row). Backward: 4
programs per SM each take a run of consecutive rows and, per row, xhat = x * rstd, g = weight * dy,
dx = (g - xhat * mean(g * xhat)) * rstd, while dy * xhat accumulates in registers; each program then writes its
partial row, and a column kernel sums the partials (fp32, a fixed order: reproducible). Where eager runs about
fifteen kernels (pow, mean, rsqrt and two multiplies forward; their gradients, two broadcast reductions and the sum
of x's two gradient paths backward), this moves 5 passes over the matrix: x read and out written forward; x and dy
read and dx written backward, plus the partials (4 x 132 rows of 4096 floats, under 2% of the traffic). The time
goes on those passes. Rows longer than 8192 floats take looped kernels: two passes over the row forward
(sum of squares, output; the reread mostly from L2), two passes backward for dx, and a tiled kernel for the
weight's partials.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_FUSED = 8192  # longest row held in registers (backward: x, dy, weight and an accumulator, 16 floats a thread each)
CHUNK = 4096  # chunk of the looped kernels for longer rows
PROGRAMS_PER_SM = 4  # backward programs per SM: each sums about rows / (4 x SMs) rows of the partials
TILE_ROWS = 32  # rows a program of the long-row partial kernel sums
BLOCK_P = 32  # partial rows a step of the column-sum kernel
BLOCK_N = 128  # columns a program of the column-sum kernel


@triton.jit
def rms_fwd_row_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x_row = x_ptr + row * n_cols
    if EVEN:
        x = tl.load(x_row + offs).to(tl.float32)
        w = tl.load(w_ptr + offs, eviction_policy="evict_last").to(tl.float32)
    else:
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    y = x * rstd * w
    if EVEN:
        tl.store(y_ptr + row * n_cols + offs, y)
    else:
        tl.store(y_ptr + row * n_cols + offs, y, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_fwd_looped_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_bwd_fused_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, pw_ptr, n_rows, n_cols, rows_per_program,
                         BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    if EVEN:
        w = tl.load(w_ptr + offs).to(tl.float32)
    else:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc_w = tl.zeros([BLOCK], tl.float32)
    first = pid.to(tl.int64) * rows_per_program
    n_here = tl.minimum(rows_per_program, n_rows - first)
    base = first * n_cols
    for i in range(0, n_here):
        if EVEN:
            x = tl.load(x_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(dy_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
        else:
            x = tl.load(x_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(dy_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        rstd = tl.load(rstd_ptr + first + i)
        xhat = x * rstd
        g = w * dy
        c1 = tl.sum(xhat * g, axis=0) / n_cols
        dx = (g - xhat * c1) * rstd
        if EVEN:
            tl.store(dx_ptr + base + offs, dx)
        else:
            tl.store(dx_ptr + base + offs, dx, mask=mask)
        acc_w += dy * xhat
        base += n_cols
    part = pid.to(tl.int64) * n_cols
    if EVEN:
        tl.store(pw_ptr + part + offs, acc_w)
    else:
        tl.store(pw_ptr + part + offs, acc_w, mask=mask)


@triton.jit
def rms_bwd_dx_looped_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    base = row * n_cols
    rstd = tl.load(rstd_ptr + row)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        acc += x * rstd * (w * dy)
    c1 = tl.sum(acc, axis=0) / n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + base + cols, (w * dy - x * rstd * c1) * rstd, mask=mask)


@triton.jit
def rms_bwd_partial_tiled_kernel(dy_ptr, x_ptr, rstd_ptr, pw_ptr, n_rows, n_cols,
                                 TILE_ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # program (column block, group of TILE_ROWS rows): the group's sums of dy * xhat over its columns
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    group = tl.program_id(1)
    rows = group * TILE_ROWS + tl.arange(0, TILE_ROWS)
    rmask = rows < n_rows
    m = rmask[:, None] & (cols < n_cols)[None, :]
    offs = rows.to(tl.int64)[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=m, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + rows, mask=rmask, other=0.0)
    part = group.to(tl.int64) * n_cols + cols
    tl.store(pw_ptr + part, tl.sum(dy * x * rstd[:, None], axis=0), mask=cols < n_cols)


@triton.jit
def column_sum_kernel(p_ptr, out_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    acc = tl.zeros([BLOCK_P, BLOCK_N], tl.float32)
    for start in range(0, n_parts, BLOCK_P):
        parts = start + tl.arange(0, BLOCK_P)
        m = (parts < n_parts)[:, None] & cmask[None, :]
        acc += tl.load(p_ptr + parts.to(tl.int64)[:, None] * n_cols + cols[None, :], mask=m, other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cmask)


def _num_warps(block: int) -> int:
    # 16 warps for rows of 8192+ floats (16 floats a thread per row-long array), 8 from 2048, 4 below
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 2  # Triton's interpreter (cpu tensors): a few programs, so the partial sums are still exercised


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        shape = x.shape
        n_cols = shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        w = weight.contiguous()
        n_rows = x2.shape[0]
        y = torch.empty(x2.shape, dtype=torch.result_type(x, w), device=x.device)
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        if n_rows > 0 and n_cols > 0:
            if n_cols <= MAX_FUSED:
                block = triton.next_power_of_2(n_cols)
                rms_fwd_row_kernel[(n_rows,)](x2, w, y, rstd, n_cols, eps, BLOCK=block, EVEN=block == n_cols,
                                              num_warps=_num_warps(block))
            else:
                rms_fwd_looped_kernel[(n_rows,)](x2, w, y, rstd, n_cols, eps, BLOCK=CHUNK, num_warps=8)
        ctx.save_for_backward(x2, w, rstd)
        ctx.shape = shape
        return y.view(shape)

    @staticmethod
    def backward(ctx, dy):
        x2, w, rstd = ctx.saved_tensors
        n_rows, n_cols = x2.shape
        dy2 = dy.contiguous().view(n_rows, n_cols)
        dx = torch.empty_like(x2)
        dw = torch.empty(n_cols, dtype=w.dtype, device=w.device)
        if n_rows == 0 or n_cols == 0:
            return dx.view(ctx.shape), dw.zero_(), None
        if n_cols <= MAX_FUSED:
            block = triton.next_power_of_2(n_cols)
            programs = min(n_rows, PROGRAMS_PER_SM * _sm_count(x2.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            rms_bwd_fused_kernel[(n_parts,)](dy2, x2, w, rstd, dx, pw, n_rows, n_cols, rows_per_program,
                                             BLOCK=block, EVEN=block == n_cols, num_warps=_num_warps(block))
        else:
            rms_bwd_dx_looped_kernel[(n_rows,)](dy2, x2, w, rstd, dx, n_cols, BLOCK=CHUNK, num_warps=8)
            n_parts = triton.cdiv(n_rows, TILE_ROWS)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            rms_bwd_partial_tiled_kernel[(triton.cdiv(n_cols, BLOCK_N), n_parts)](
                dy2, x2, rstd, pw, n_rows, n_cols, TILE_ROWS=TILE_ROWS, BLOCK_N=BLOCK_N, num_warps=4)
        column_sum_kernel[(triton.cdiv(n_cols, BLOCK_N),)](pw, dw, n_parts, n_cols, BLOCK_P=BLOCK_P,
                                                           BLOCK_N=BLOCK_N, num_warps=4)
        return dx.view(ctx.shape), dw, None


class ModelNew(nn.Module):
    """Root-mean-square normalization of each row, then an elementwise scale; forward and backward by Triton
    kernels."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return RMSNormFunction.apply(x, self.weight, self.eps)
