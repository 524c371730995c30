"""Exclusive cumulative sum along the last dim of a (131072, 4096) fp32 tensor (leading 0, last element dropped).

out[i, 0] = 0 and out[i, j] = sum over k < j of x[i, k]; the output has the input's shape.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 131072
COLS = 4096
DIM = 1

TAGS = ["scan", "memory-bound"]
# zero-mean prefix sums over 4096 values carry fp32 rounding up to 3.4e-4 (max abs, measured against float64 on an H100)
ATOL = 2e-3
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a tensor of one row"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 4, "COLS": 20011}, "about": "a few much longer rows"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Prefix sums shifted right by one along the last dim, with a 0 in front."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inclusive = torch.cumsum(x.narrow(self.dim, 0, x.shape[self.dim] - 1), dim=self.dim)
        return F.pad(inclusive, (1, 0))


def get_inputs():
    return [torch.randn(ROWS, COLS)]  # zero-mean: prefix sums stay ~sqrt(j), so the relative tolerance stays tight


def get_init_inputs():
    return [DIM]
