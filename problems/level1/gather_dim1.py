"""torch.gather along dim 1: pick 8192 random columns per row from a (32768, 16384) fp32 matrix."""
import torch
import torch.nn as nn

ROWS = 32768
COLS = 16384
PICKS = 8192
DIM = 1

TAGS = ["indexing", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099, "PICKS": 999},
     "about": "a row count, a row length and a pick count that are not multiples of 32"},
    {"name": "many_picks", "set": {"ROWS": 100, "COLS": 300, "PICKS": 5000},
     "about": "more picks per row than columns (many repeats)"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (10, 6000), "PICKS": (50, 4000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, k] = x[i, index[i, k]] with int64 index of shape (ROWS, PICKS), entries in [0, COLS)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, self.dim, index)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, COLS, (ROWS, PICKS))]


def get_init_inputs():
    return [DIM]
