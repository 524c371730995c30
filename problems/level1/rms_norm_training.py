"""RMSNorm over the last dim (4096) of a 16384 x 4096 fp32 matrix, with a learned scale, written out in torch ops,
trained: forward and backward.

out = x * rsqrt(mean(x^2 over the row) + eps) * weight (eps = 1e-6), weight of shape (4096,). Judged: the output,
the gradient of x and the gradient of the weight (a sum over the rows), for an upstream gradient drawn anew for
every call. Eager runs pow, mean, rsqrt and two multiplies forward, and autograd about twice as many kernels
backward.
"""
import torch
import torch.nn as nn

ROWS = 16384
HIDDEN = 4096
EPS = 1e-6

TAGS = ["normalization", "memory-bound", "training"]
TRAINING = True

# the weight's gradient sums up to 30001 rows: where it is near 0, eager fp32 was 9.2e-5 off float64 (H100,
# torch 2.11), nearly the default atol itself; out and x's gradient average about 0.8
ATOL = 1e-3
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "HIDDEN": 100003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "HIDDEN": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "narrow", "set": {"ROWS": 30001, "HIDDEN": 100},
     "about": "many short rows, so the weight gradient sums over many rows"},
    {"name": "drawn", "set": {"ROWS": (1, 3000), "HIDDEN": (100, 8000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Root-mean-square normalization of each row, then an elementwise scale (random, so that its gradient
    matters)."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, EPS]
