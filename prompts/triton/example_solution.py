import torch
import torch.nn as nn
import triton
import triton.language as tl


# One program per BLOCK elements: the block size is a compile-time constant (tl.constexpr), the mask
# covers the tail, and each element is read once and written once.
@triton.jit
def scaled_silu_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    out = scale * x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offsets, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        block = 4096  # 16 KB a program: enough bytes in flight per SM to keep memory busy
        scaled_silu_kernel[(triton.cdiv(n, block),)](x, out, n, self.scale, BLOCK=block, num_warps=8)
        return out
