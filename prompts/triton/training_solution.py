import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_R, BLOCK_C = 16, 256  # a tile of 16 rows x 256 columns (16 KB); columns are contiguous, so loads coalesce
ROWS_PER_PROGRAM = 256  # rows each backward program sums into its partial of dw and db


# Forward: one program per tile; weight and bias are loaded once per tile. t = tanh(x) is stored for the
# backward, which needs 1 - t^2 (saved, not recomputed).
@triton.jit
def forward_kernel(x_ptr, w_ptr, b_ptr, t_ptr, out_ptr, rows, cols,
                   BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offsets = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=c < cols, other=0.0)
    b = tl.load(b_ptr + c, mask=c < cols, other=0.0)
    t = 2.0 * tl.sigmoid(2.0 * x) - 1.0  # tanh(x): triton.language itself has no tanh
    tl.store(t_ptr + offsets, t, mask=mask)
    tl.store(out_ptr + offsets, t * w[None, :] + b[None, :], mask=mask)


# Backward: each program walks ROWS_PER_PROGRAM rows of a strip of columns, writing dx and summing g * t (for dw)
# and g (for db) down the rows in registers; its sums go to its own row of `partial`, so no two programs write
# one element and no atomics are needed (the result does not depend on the order programs run in).
@triton.jit
def backward_kernel(g_ptr, t_ptr, w_ptr, dx_ptr, partial_ptr, rows, cols,
                    ROWS_PER_PROGRAM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    w = tl.load(w_ptr + c, mask=c < cols, other=0.0)
    acc_w = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for i in range(0, ROWS_PER_PROGRAM, BLOCK_R):
        r = pid * ROWS_PER_PROGRAM + i + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        offsets = r[:, None] * cols + c[None, :]
        g = tl.load(g_ptr + offsets, mask=mask, other=0.0)  # masked rows load 0 and add nothing
        t = tl.load(t_ptr + offsets, mask=mask, other=0.0)
        tl.store(dx_ptr + offsets, g * w[None, :] * (1.0 - t * t), mask=mask)
        acc_w += g * t
        acc_b += g
    row = partial_ptr + pid * 2 * cols  # partial is [row programs, 2, cols]: dw's sums, then db's
    tl.store(row + c, tl.sum(acc_w, axis=0), mask=c < cols)
    tl.store(row + cols + c, tl.sum(acc_b, axis=0), mask=c < cols)


# A second small kernel adds the partials up per column, BLOCK_P of them a step, always in the same order.
@triton.jit
def column_sum_kernel(partial_ptr, dw_ptr, db_ptr, programs, cols, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    sw = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    sb = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for p0 in range(0, programs, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        mask = (p[:, None] < programs) & (c[None, :] < cols)
        offsets = p[:, None].to(tl.int64) * 2 * cols + c[None, :]
        sw += tl.load(partial_ptr + offsets, mask=mask, other=0.0)
        sb += tl.load(partial_ptr + offsets + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + c, tl.sum(sw, axis=0), mask=c < cols)
    tl.store(db_ptr + c, tl.sum(sb, axis=0), mask=c < cols)


class ScaledTanh(torch.autograd.Function):
    """The forward and the backward both ours: autograd calls backward with the gradient of out."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        x = x.contiguous()
        rows, cols = x.shape
        t, out = torch.empty_like(x), torch.empty_like(x)
        grid = (triton.cdiv(rows, BLOCK_R), triton.cdiv(cols, BLOCK_C))
        forward_kernel[grid](x, weight, bias, t, out, rows, cols, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=8)
        ctx.save_for_backward(t, weight)
        return out

    @staticmethod
    def backward(ctx, grad):
        t, weight = ctx.saved_tensors
        grad = grad.contiguous()
        rows, cols = grad.shape
        dx, dw, db = torch.empty_like(grad), torch.empty_like(weight), torch.empty_like(weight)
        programs = triton.cdiv(rows, ROWS_PER_PROGRAM)  # 64 x 16 = 1024 programs at 16384 x 4096
        partial = torch.empty(programs, 2, cols, device=grad.device)
        backward_kernel[(programs, triton.cdiv(cols, BLOCK_C))](
            grad, t, weight, dx, partial, rows, cols,
            ROWS_PER_PROGRAM=ROWS_PER_PROGRAM, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=8)
        column_sum_kernel[(triton.cdiv(cols, 128),)](partial, dw, db, programs, cols, BLOCK_P=16, BLOCK_C=128)
        return dx, dw, db  # one gradient per forward input, in order


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(cols) + 0.5)  # the same names and shapes as Model's
        self.bias = nn.Parameter(torch.rand(cols) - 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ScaledTanh.apply(x, self.weight, self.bias)
