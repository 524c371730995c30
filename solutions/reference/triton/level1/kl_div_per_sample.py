"""Per-sample KL(q || p) between row softmaxes, Triton: one program per row reads both logit rows once and never
forms log_softmax: with q = softmax(y) and sum_j q_j = 1, KL = sum_j e^(y_j - my) (y_j - x_j) / S_y + lse(x) - lse(y),
the last two as (mx - my) + log(S_x / S_y) (no cancellation of two ~ln(classes) logs).

For 4096 classes both rows are held in registers: 8 warps, 16 floats a thread of each input (four 16-byte loads each,
no masks for power-of-two rows), two maxes, then S_x, S_y and the weighted sum (two exps a column). Rows longer
than 8192 loop over 2048-column tiles with a per-lane online max and rescaled sums (still two exps a column), the
lanes merged at the end. Eager writes and rereads three (rows, classes) intermediates (log_p, log_q, the terms).
Measured on an H100 80GB HBM3 (torch 2.11, Triton 3.6, `harness run --backend triton`): 1.114 ms against eager 7.344 ms (6.59x); 96% of the speed of light (1.070 ms).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_FUSED = 8192  # longest row held in registers by one program (16 floats a thread of each input at 16 warps)
CHUNK = 2048  # tile of the looped kernel for longer rows


@triton.jit
def kl_row_kernel(x_ptr, y_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    if EVEN:
        x = tl.load(x_ptr + row * n_cols + offs).to(tl.float32)
        y = tl.load(y_ptr + row * n_cols + offs).to(tl.float32)
    else:
        x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.load(y_ptr + row * n_cols + offs, mask=mask, other=float("-inf")).to(tl.float32)
    mx = tl.max(x, axis=0)
    my = tl.max(y, axis=0)
    sx = tl.sum(tl.exp(x - mx), axis=0)  # padding lanes: exp(-inf) = 0
    ey = tl.exp(y - my)
    sy = tl.sum(ey, axis=0)
    diff = y - x
    if not EVEN:
        diff = tl.where(mask, diff, 0.0)  # padding: -inf - -inf
    w = tl.sum(ey * diff, axis=0)
    tl.store(out_ptr + row, w / sy + (mx - my) + tl.log(sx / sy))


@triton.jit
def kl_looped_kernel(x_ptr, y_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    offs = tl.arange(0, BLOCK)
    mx_vec = tl.full([BLOCK], float("-inf"), tl.float32)
    sx_vec = tl.zeros([BLOCK], tl.float32)
    my_vec = tl.full([BLOCK], float("-inf"), tl.float32)
    sy_vec = tl.zeros([BLOCK], tl.float32)
    w_vec = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        if EVEN:
            x = tl.load(x_row + cols).to(tl.float32)
            y = tl.load(y_row + cols).to(tl.float32)
        else:
            x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
            y = tl.load(y_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        # one exp per input and column: exp(-|v - m|) is the new term (v <= m) or the factor rescaling the lane's
        # sums (v > m, the new term being 1); v = m = -inf (padding, or -inf logits) adds 0, not NaN
        dx = x - mx_vec
        ex = tl.where(x == float("-inf"), 0.0, tl.exp(-tl.abs(dx)))
        sx_vec = tl.where(dx > 0, sx_vec * ex + 1.0, sx_vec + ex)
        mx_vec = tl.maximum(mx_vec, x)
        dy = y - my_vec
        ey = tl.where(y == float("-inf"), 0.0, tl.exp(-tl.abs(dy)))
        diff = y - x
        if not EVEN:
            diff = tl.where(mask, diff, 0.0)
        up = dy > 0
        sy_vec = tl.where(up, sy_vec * ey + 1.0, sy_vec + ey)
        w_vec = tl.where(up, w_vec * ey + diff, w_vec + ey * diff)
        my_vec = tl.maximum(my_vec, y)
    mx = tl.max(mx_vec, axis=0)
    sx = tl.sum(sx_vec * tl.exp(mx_vec - mx), axis=0)
    my = tl.max(my_vec, axis=0)
    scale_y = tl.exp(my_vec - my)
    sy = tl.sum(sy_vec * scale_y, axis=0)
    w = tl.sum(w_vec * scale_y, axis=0)
    tl.store(out_ptr + row, w / sy + (mx - my) + tl.log(sx / sy))


def _num_warps(block: int) -> int:
    # 16 floats a thread of each input from 2048 columns up (8 warps at 4096): few registers, several programs per
    # SM so other rows' loads overlap one row's reductions; 4 warps below that.
    return max(4, min(16, block // 512))


def kl_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """KL(softmax(y) || softmax(x)) of each row of two contiguous (rows, classes) tensors."""
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    if n_rows == 0:
        return out
    if n_cols <= MAX_FUSED:
        block = triton.next_power_of_2(n_cols)
        kl_row_kernel[(n_rows,)](x, y, out, n_cols, BLOCK=block, EVEN=block == n_cols, num_warps=_num_warps(block))
    else:
        # 8 floats a thread of each input at 8 warps: five per-lane state vectors stay in registers
        kl_looped_kernel[(n_rows,)](x, y, out, n_cols, BLOCK=CHUNK, EVEN=n_cols % CHUNK == 0, num_warps=8)
    return out


class ModelNew(nn.Module):
    """F.kl_div(log_softmax(input), log_softmax(target), log_target=True) summed over the last dim, in Triton."""

    def __init__(self):
        super().__init__()

    def forward(self, input_logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
        classes = input_logits.shape[-1]
        x = input_logits.reshape(-1, classes).contiguous()
        y = target_logits.reshape(-1, classes).contiguous()
        return kl_rows(x, y).reshape(input_logits.shape[:-1])
