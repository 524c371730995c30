"""Residual add then RMSNorm over the last dim with a learned scale, trained, Triton: a torch.autograd.Function whose
forward writes both outputs, out and h = x + residual, from one read of x and residual and keeps each row's 1/rms,
and whose backward reads h and the two upstream gradients once, writing the gradients of x and residual and
per-program partial sums of the weight's gradient, which a second small kernel adds up.

Forward: one program per row holds h in registers (for 16384 columns 16 warps, 32 floats a thread), stores it (the
second output), rstd = rsqrt(sum(h^2) / n + eps), out = h * rstd * weight, and stores rstd (4 bytes a row): x and
residual read, h and out written, 16 bytes a column. Backward, per row: hhat = h * rstd, g = weight * dout,
dh = dh_up + (g - hhat * mean(g * hhat)) * rstd, the first output's gradient through the norm plus the second's own
upstream, written as two tensors (the gradients of x and residual: one tensor returned for both leaves would have
autograd copy it for one of them, a read and a write more than the second store), while dout * hhat accumulates into
the program's partial row of the weight's gradient; a column kernel then sums the partials (fp32, a fixed order:
reproducible). h, dout and dh_up read, two gradients written: 20 bytes a column. So 9 passes over the matrix in all,
36 bytes a column (576 KB a row at 16384 columns), plus the partials (about 2 x 132 rows, under 1% of the traffic).
The time goes on those passes. Eager runs the add, the norm (one fused kernel or half a dozen, by PyTorch version),
and backward the norm's gradients (h and dout read again for the weight's), the sum of h's two gradient paths and
the copy for the second leaf: 15 passes or more. Rows up to 8192 floats keep h, dout, weight and the accumulator in
registers in the backward (16 floats a thread each at 16 warps; 4 programs per SM, each a run of consecutive rows).
Longer rows (16384 among them) take a looped backward: 2 programs per SM, each row read in 4096-float chunks twice,
once for mean(g * hhat), then in reverse order (the chunks just read first, mostly from L1/L2) to write the
gradients, the program's partial row read and rewritten in L2; rows longer than 16384 floats also take a looped
forward: h written on the first pass with the sum of squares, read back (from L2) on the second to write out.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_FUSED = 16384  # longest row the forward holds in registers (h: 32 floats a thread at 16 warps)
MAX_FUSED_BWD = 8192  # longest row the backward holds in registers (h, dout, weight, accumulator: 16 floats a thread)
CHUNK = 4096  # chunk of the looped kernels for longer rows
PROGRAMS_PER_SM = 4  # register backward programs per SM: each sums about rows / (4 x SMs) rows of the partials
LOOPED_PROGRAMS_PER_SM = 2  # looped backward: fewer, so each program's row stays in cache between its two passes
BLOCK_P = 32  # partial rows a step of the column-sum kernel
BLOCK_N = 128  # columns a program of the column-sum kernel


@triton.jit
def rmsres_fwd_row_kernel(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, rstd_ptr, n_cols, eps,
                          BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    base = row * n_cols
    if EVEN:
        h = (tl.load(x_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
             + tl.load(r_ptr + base + offs, eviction_policy="evict_first").to(tl.float32))
        tl.store(h_ptr + base + offs, h)
    else:
        h = (tl.load(x_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
             + tl.load(r_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32))
        tl.store(h_ptr + base + offs, h, mask=mask)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    if EVEN:
        w = tl.load(w_ptr + offs, eviction_policy="evict_last").to(tl.float32)
        tl.store(y_ptr + base + offs, h * rstd * w)
    else:
        w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(y_ptr + base + offs, h * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rmsres_fwd_looped_kernel(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        h = (tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
             + tl.load(r_ptr + base + cols, mask=mask, other=0.0).to(tl.float32))
        tl.store(h_ptr + base + cols, h, mask=mask)
        acc += h * h
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)  # the reduction's barrier orders h's stores before the reads
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        h = tl.load(h_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, h * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rmsres_bwd_fused_kernel(dy_ptr, dhu_ptr, h_ptr, w_ptr, rstd_ptr, dx_ptr, dr_ptr, pw_ptr, n_rows, n_cols,
                            rows_per_program, BLOCK: tl.constexpr, EVEN: tl.constexpr):
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
            h = tl.load(h_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(dy_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
        else:
            h = tl.load(h_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(dy_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        rstd = tl.load(rstd_ptr + first + i)
        hhat = h * rstd
        g = w * dy
        c1 = tl.sum(hhat * g, axis=0) / n_cols
        if EVEN:
            dh = tl.load(dhu_ptr + base + offs, eviction_policy="evict_first").to(tl.float32)
        else:
            dh = tl.load(dhu_ptr + base + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        dh += (g - hhat * c1) * rstd
        if EVEN:
            tl.store(dx_ptr + base + offs, dh)
            tl.store(dr_ptr + base + offs, dh)
        else:
            tl.store(dx_ptr + base + offs, dh, mask=mask)
            tl.store(dr_ptr + base + offs, dh, mask=mask)
        acc_w += dy * hhat
        base += n_cols
    part = pid.to(tl.int64) * n_cols
    if EVEN:
        tl.store(pw_ptr + part + offs, acc_w)
    else:
        tl.store(pw_ptr + part + offs, acc_w, mask=mask)


@triton.jit
def rmsres_bwd_looped_kernel(dy_ptr, dhu_ptr, h_ptr, w_ptr, rstd_ptr, dx_ptr, dr_ptr, pw_ptr, n_rows, n_cols,
                             rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    n_chunks = tl.cdiv(n_cols, BLOCK)
    first = pid.to(tl.int64) * rows_per_program
    n_here = tl.minimum(rows_per_program, n_rows - first)
    part = pid.to(tl.int64) * n_cols
    base = first * n_cols
    for i in range(0, n_here):
        rstd = tl.load(rstd_ptr + first + i)
        # pass 1: sum(g * h) over the row, chunk by chunk
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + offs
            mask = cols < n_cols
            h = tl.load(h_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            acc += h * (w * dy)
        c1 = tl.sum(acc, axis=0) * rstd / n_cols
        # pass 2, last chunk first: the gradients, and the program's partial row of dout * hhat read and rewritten
        # (not read for its first row; the reduction's barrier above orders the last row's stores before the reads)
        for k in range(0, n_chunks):
            cols = (n_chunks - 1 - k) * BLOCK + offs
            mask = cols < n_cols
            h = tl.load(h_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            dh = tl.load(dhu_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            hhat = h * rstd
            dh += (w * dy - hhat * c1) * rstd
            tl.store(dx_ptr + base + cols, dh, mask=mask)
            tl.store(dr_ptr + base + cols, dh, mask=mask)
            prev = tl.load(pw_ptr + part + cols, mask=mask & (i > 0), other=0.0, eviction_policy="evict_last")
            tl.store(pw_ptr + part + cols, prev + dy * hhat, mask=mask)
        base += n_cols


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
    # 16 warps for rows of 8192+ floats (16 floats a thread per 8192-long array), 8 from 2048, 4 below
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 2  # Triton's interpreter (cpu tensors): a few programs, so the partial sums are still exercised


class RMSNormResidualFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, eps):
        shape = x.shape
        n_cols = shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        r2 = residual.contiguous().view(-1, n_cols)
        w = weight.contiguous()
        n_rows = x2.shape[0]
        h = torch.empty(x2.shape, dtype=torch.result_type(x, residual), device=x.device)
        y = torch.empty(x2.shape, dtype=torch.result_type(h, w), device=x.device)
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        if n_rows > 0 and n_cols > 0:
            if n_cols <= MAX_FUSED:
                block = triton.next_power_of_2(n_cols)
                rmsres_fwd_row_kernel[(n_rows,)](x2, r2, w, y, h, rstd, n_cols, eps, BLOCK=block,
                                                 EVEN=block == n_cols, num_warps=_num_warps(block))
            else:
                rmsres_fwd_looped_kernel[(n_rows,)](x2, r2, w, y, h, rstd, n_cols, eps, BLOCK=CHUNK, num_warps=8)
        ctx.save_for_backward(h, w, rstd)
        ctx.shape = shape
        return y.view(shape), h.view(shape)

    @staticmethod
    def backward(ctx, dy, dh_up):
        h, w, rstd = ctx.saved_tensors
        n_rows, n_cols = h.shape
        dy2 = dy.contiguous().view(n_rows, n_cols)
        dhu2 = dh_up.contiguous().view(n_rows, n_cols)
        dx = torch.empty_like(h)
        dr = torch.empty_like(h)
        dw = torch.empty(n_cols, dtype=w.dtype, device=w.device)
        if n_rows == 0 or n_cols == 0:
            return dx.view(ctx.shape), dr.view(ctx.shape), dw.zero_(), None
        if n_cols <= MAX_FUSED_BWD:
            block = triton.next_power_of_2(n_cols)
            programs = min(n_rows, PROGRAMS_PER_SM * _sm_count(h.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=h.device)
            rmsres_bwd_fused_kernel[(n_parts,)](dy2, dhu2, h, w, rstd, dx, dr, pw, n_rows, n_cols, rows_per_program,
                                                BLOCK=block, EVEN=block == n_cols, num_warps=_num_warps(block))
        else:
            programs = min(n_rows, LOOPED_PROGRAMS_PER_SM * _sm_count(h.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=h.device)
            rmsres_bwd_looped_kernel[(n_parts,)](dy2, dhu2, h, w, rstd, dx, dr, pw, n_rows, n_cols,
                                                 rows_per_program, BLOCK=CHUNK, num_warps=8)
        column_sum_kernel[(triton.cdiv(n_cols, BLOCK_N),)](pw, dw, n_parts, n_cols, BLOCK_P=BLOCK_P,
                                                           BLOCK_N=BLOCK_N, num_warps=4)
        return dx.view(ctx.shape), dr.view(ctx.shape), dw, None


class ModelNew(nn.Module):
    """(rms_norm(x + residual) * weight, x + residual), forward and backward by Triton kernels."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return RMSNormResidualFunction.apply(x, residual, self.weight, self.eps)
