"""Reverse cumulative sum along dim 1 of a 32768 x 32768 fp32 matrix."""
import torch
import torch.nn as nn

ROWS = 32768
COLS = 32768
DIM = 1

TAGS = ["scan", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 100003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 600), "COLS": (100, 8000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = sum over k >= j of x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
