"""Sum reduction over the leading dimension of a (1024, 4096) tensor (CPU-sized)."""
import torch
import torch.nn as nn

ROWS = 1024
COLS = 4096
REDUCE_DIM = 0

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"ROWS": 1001, "COLS": 257},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "tall", "set": {"ROWS": 20001, "COLS": 17}, "about": "many very short rows"},
    {"name": "wide", "set": {"ROWS": 2, "COLS": 100003}, "about": "two very long rows"},
    {"name": "drawn", "set": {"ROWS": (1, 500), "COLS": (10, 1000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Sum over dim 0: out[j] = sum_i x[i, j] (a strided, column-wise reduction)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return [REDUCE_DIM]
