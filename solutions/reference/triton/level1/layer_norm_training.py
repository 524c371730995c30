"""LayerNorm over the last dim with affine, trained, Triton: a torch.autograd.Function whose forward keeps each
row's mean and 1/std and whose backward reads x and the upstream gradient once, writing the input's gradient and
per-program partial sums of the weight's and bias's gradients, which a second small kernel adds up.

Forward: one program per row holds the whole row in registers (for 8192 columns 16 warps, 16 floats a thread):
mean, then the variance of x - mean (two reductions, no E[x^2] - mean^2 cancellation), out = (x - mean) * rstd *
weight + bias, and the row's mean and rstd stored (8 bytes a row). Backward: 4 programs per SM each take a run of
consecutive rows and, per row, xhat = (x - mean) * rstd, g = weight * dy, dx = (g - xhat * mean(g * xhat) - mean(g))
* rstd, while dy * xhat and dy accumulate in registers; each program then writes its two partial rows, and a column
kernel sums the partials (fp32, a fixed order: reproducible). So the backward moves x, dy and dx once (3 passes, as
eager's dx kernel alone does; eager reads x and dy a second time for the weight and bias), plus the partials (4 x
132 rows of 2 x 8192 floats, about 2% of the traffic). The time goes on those three passes and the forward's two.
Short runs (about 47 rows a program at the default size) and a tree over the partials keep the rounding of the
weight's and bias's sums over 24576 rows below eager's. Rows longer than 8192 floats take looped kernels: three
passes over the row forward (mean, variance, output; the rereads mostly from L2), two passes backward for dx, and a
tiled kernel for the weight's and bias's partials.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_FUSED = 8192  # longest row held in registers (backward: x, dy, weight, two accumulators: 16 floats a thread each)
CHUNK = 4096  # chunk of the looped kernels for longer rows
PROGRAMS_PER_SM = 4  # backward programs per SM: each sums about rows / (4 x SMs) rows of the partials
TILE_ROWS = 32  # rows a program of the long-row partial kernel sums
BLOCK_P = 32  # partial rows a step of the column-sum kernel
BLOCK_N = 128  # columns a program of the column-sum kernel


@triton.jit
def ln_fwd_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, eps,
                      BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x_row = x_ptr + row * n_cols
    if EVEN:
        x = tl.load(x_row + offs).to(tl.float32)
        w = tl.load(w_ptr + offs, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + offs, eviction_policy="evict_last").to(tl.float32)
    else:
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = x - mean
    if not EVEN:
        d = tl.where(mask, d, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    y = d * rstd * w + b
    if EVEN:
        tl.store(y_ptr + row * n_cols + offs, y)
    else:
        tl.store(y_ptr + row * n_cols + offs, y, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def ln_fwd_looped_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        acc += d * d
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def ln_bwd_fused_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, pw_ptr, pb_ptr, n_rows, n_cols,
                        rows_per_program, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    if EVEN:
        w = tl.load(w_ptr + offs).to(tl.float32)
    else:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc_w = tl.zeros([BLOCK], tl.float32)
    acc_b = tl.zeros([BLOCK], tl.float32)
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
        mean = tl.load(mean_ptr + first + i)
        rstd = tl.load(rstd_ptr + first + i)
        xhat = (x - mean) * rstd  # padding lanes: dy = w = 0 there, so they add nothing below
        g = w * dy
        c1 = tl.sum(xhat * g, axis=0) / n_cols
        c2 = tl.sum(g, axis=0) / n_cols
        dx = (g - (xhat * c1 + c2)) * rstd
        if EVEN:
            tl.store(dx_ptr + base + offs, dx)
        else:
            tl.store(dx_ptr + base + offs, dx, mask=mask)
        acc_w += dy * xhat
        acc_b += dy
        base += n_cols
    part = pid.to(tl.int64) * n_cols
    if EVEN:
        tl.store(pw_ptr + part + offs, acc_w)
        tl.store(pb_ptr + part + offs, acc_b)
    else:
        tl.store(pw_ptr + part + offs, acc_w, mask=mask)
        tl.store(pb_ptr + part + offs, acc_b, mask=mask)


@triton.jit
def ln_bwd_dx_looped_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    base = row * n_cols
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    acc1 = tl.zeros([BLOCK], tl.float32)
    acc2 = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        g = w * dy
        acc1 += (x - mean) * rstd * g
        acc2 += g
    c1 = tl.sum(acc1, axis=0) / n_cols
    c2 = tl.sum(acc2, axis=0) / n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        xhat = (x - mean) * rstd
        tl.store(dx_ptr + base + cols, (w * dy - (xhat * c1 + c2)) * rstd, mask=mask)


@triton.jit
def ln_bwd_partial_tiled_kernel(dy_ptr, x_ptr, mean_ptr, rstd_ptr, pw_ptr, pb_ptr, n_rows, n_cols,
                                TILE_ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # program (column block, group of TILE_ROWS rows): the group's sums of dy * xhat and dy over its columns
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    group = tl.program_id(1)
    rows = group * TILE_ROWS + tl.arange(0, TILE_ROWS)
    rmask = rows < n_rows
    m = rmask[:, None] & (cols < n_cols)[None, :]
    offs = rows.to(tl.int64)[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + rows, mask=rmask, other=0.0)
    rstd = tl.load(rstd_ptr + rows, mask=rmask, other=0.0)
    xhat = (x - mean[:, None]) * rstd[:, None]
    part = group.to(tl.int64) * n_cols + cols
    tl.store(pw_ptr + part, tl.sum(dy * xhat, axis=0), mask=cols < n_cols)
    tl.store(pb_ptr + part, tl.sum(dy, axis=0), mask=cols < n_cols)


@triton.jit
def column_sum_kernel(pw_ptr, pb_ptr, dw_ptr, db_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    acc_w = tl.zeros([BLOCK_P, BLOCK_N], tl.float32)
    acc_b = tl.zeros([BLOCK_P, BLOCK_N], tl.float32)
    for start in range(0, n_parts, BLOCK_P):
        parts = start + tl.arange(0, BLOCK_P)
        m = (parts < n_parts)[:, None] & cmask[None, :]
        offs = parts.to(tl.int64)[:, None] * n_cols + cols[None, :]
        acc_w += tl.load(pw_ptr + offs, mask=m, other=0.0)
        acc_b += tl.load(pb_ptr + offs, mask=m, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc_w, axis=0), mask=cmask)
    tl.store(db_ptr + cols, tl.sum(acc_b, axis=0), mask=cmask)


def _num_warps(block: int) -> int:
    # 16 warps for rows of 8192+ floats (16 floats a thread per row-long array), 8 from 2048, 4 below
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 2  # Triton's interpreter (cpu tensors): a few programs, so the partial sums are still exercised


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        shape = x.shape
        n_cols = shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        w = weight.contiguous()
        b = bias.contiguous()
        n_rows = x2.shape[0]
        y = torch.empty_like(x2)
        mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        if n_rows > 0 and n_cols > 0:
            if n_cols <= MAX_FUSED:
                block = triton.next_power_of_2(n_cols)
                ln_fwd_row_kernel[(n_rows,)](x2, w, b, y, mean, rstd, n_cols, eps, BLOCK=block,
                                             EVEN=block == n_cols, num_warps=_num_warps(block))
            else:
                ln_fwd_looped_kernel[(n_rows,)](x2, w, b, y, mean, rstd, n_cols, eps, BLOCK=CHUNK, num_warps=8)
        ctx.save_for_backward(x2, w, mean, rstd)
        ctx.shape = shape
        return y.view(shape)

    @staticmethod
    def backward(ctx, dy):
        x2, w, mean, rstd = ctx.saved_tensors
        n_rows, n_cols = x2.shape
        dy2 = dy.contiguous().view(n_rows, n_cols)
        dx = torch.empty_like(x2)
        dw = torch.empty(n_cols, dtype=w.dtype, device=w.device)
        db = torch.empty(n_cols, dtype=w.dtype, device=w.device)
        if n_rows == 0 or n_cols == 0:
            return dx.view(ctx.shape), dw.zero_(), db.zero_(), None
        if n_cols <= MAX_FUSED:
            block = triton.next_power_of_2(n_cols)
            programs = min(n_rows, PROGRAMS_PER_SM * _sm_count(x2.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            pb = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            ln_bwd_fused_kernel[(n_parts,)](dy2, x2, w, mean, rstd, dx, pw, pb, n_rows, n_cols, rows_per_program,
                                            BLOCK=block, EVEN=block == n_cols, num_warps=_num_warps(block))
        else:
            ln_bwd_dx_looped_kernel[(n_rows,)](dy2, x2, w, mean, rstd, dx, n_cols, BLOCK=CHUNK, num_warps=8)
            n_parts = triton.cdiv(n_rows, TILE_ROWS)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            pb = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            ln_bwd_partial_tiled_kernel[(triton.cdiv(n_cols, BLOCK_N), n_parts)](
                dy2, x2, mean, rstd, pw, pb, n_rows, n_cols, TILE_ROWS=TILE_ROWS, BLOCK_N=BLOCK_N, num_warps=4)
        column_sum_kernel[(triton.cdiv(n_cols, BLOCK_N),)](pw, pb, dw, db, n_parts, n_cols, BLOCK_P=BLOCK_P,
                                                           BLOCK_N=BLOCK_N, num_warps=4)
        return dx.view(ctx.shape), dw, db, None


class ModelNew(nn.Module):
    """nn.LayerNorm(hidden) with random affine parameters; forward and backward by Triton kernels."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return LayerNormFunction.apply(x, self.ln.weight, self.ln.bias, self.ln.eps)
