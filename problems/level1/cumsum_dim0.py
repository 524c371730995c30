"""Inclusive cumulative sum along dim 0 (a column scan) of a (24576, 32768) fp32 matrix."""
import torch
import torch.nn as nn

ROWS = 24576
COLS = 32768
DIM = 0

TAGS = ["scan", "memory-bound"]
# zero-mean prefix sums over 24576 rows carry fp32 rounding up to 4.0e-3 (max abs, measured against float64 on an H100)
ATOL = 2e-2
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 64}, "public": True, "about": "only a few rows (short columns)"},
    {"name": "unaligned", "set": {"ROWS": 3001, "COLS": 999},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "narrow", "set": {"ROWS": 50001, "COLS": 40}, "about": "a few long columns"},
    {"name": "drawn", "set": {"ROWS": (5, 2000), "COLS": (50, 3000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = sum over k <= i of x[k, j]: every column is scanned independently (stride COLS)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS)]  # zero-mean: prefix sums stay ~sqrt(i), so the relative tolerance stays tight


def get_init_inputs():
    return [DIM]
