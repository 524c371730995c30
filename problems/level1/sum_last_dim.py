"""Sum over the last dim of a (192, 4096, 2047) fp32 tensor (contiguous rows of odd length)."""
import torch
import torch.nn as nn

BATCH = 192
ROWS = 4096
COLS = 2047
DIM = -1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "long_rows", "set": {"BATCH": 1, "ROWS": 7, "COLS": 300007}, "public": True,
     "about": "a few very long rows whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"BATCH": 3, "ROWS": 999, "COLS": 1001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "ROWS": (50, 500), "COLS": (16, 4000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[b, j] = sum over k of x[b, j, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DIM]
