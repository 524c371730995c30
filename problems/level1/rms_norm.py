"""RMSNorm over the last dim (8192) of a 65536 x 8192 fp32 matrix, with a learned scale, written out in torch ops.

out = x / sqrt(mean(x^2 over the row) + eps) * weight   (eager runs pow, mean, rsqrt and two multiplies).
"""
import torch
import torch.nn as nn

ROWS = 65536
HIDDEN = 8192
EPS = 1e-6

TAGS = ["normalization", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "HIDDEN": 100003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "HIDDEN": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 600), "HIDDEN": (100, 8000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Root-mean-square normalization of each row, then an elementwise scale."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, EPS]
