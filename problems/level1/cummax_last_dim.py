"""Cumulative max along the last dim of a (49152, 8192) fp32 tensor, returning (values, int64 indices)."""
import torch
import torch.nn as nn

ROWS = 49152
COLS = 8192
DIM = 1

TAGS = ["scan", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a tensor of one row"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 4, "COLS": 100003}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"ROWS": (2, 1000), "COLS": (200, 6000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """values[i, j] = max over k <= j of x[i, k]; indices[i, j] = where it is attained (on ties, the later k)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.cummax(x, dim=self.dim)
        return values, indices


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
