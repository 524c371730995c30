"""Cumulative product along the last dim (length 512) of a (1572864, 512) fp32 tensor with values near 1."""
import torch
import torch.nn as nn

ROWS = 1572864
COLS = 512
DIM = 1

TAGS = ["scan", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 100}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 777},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 8, "COLS": 20011}, "about": "a few much longer rows"},
    {"name": "drawn", "set": {"ROWS": (1, 3000), "COLS": (100, 2000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = prod over k <= j of x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    # 1 + 0.01 * N(0, 1), in place: products of up to 512 factors stay within ~exp(+-0.7) of 1
    return [torch.randn(ROWS, COLS).mul_(0.01).add_(1)]


def get_init_inputs():
    return [DIM]
