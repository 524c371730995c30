"""Sum over dim 0 of a (96, 4096, 4096) fp32 tensor (the reduced dim is the outermost, stride 16M)."""
import torch
import torch.nn as nn

BATCH = 96
ROWS = 4096
COLS = 4096
DIM = 0

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "deep", "set": {"BATCH": 1000, "ROWS": 33, "COLS": 129}, "public": True,
     "about": "a long reduced dim over small planes"},
    {"name": "unaligned", "set": {"BATCH": 7, "ROWS": 999, "COLS": 1001},
     "about": "a short reduced dim and plane sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (2, 150), "ROWS": (8, 300), "COLS": (8, 300)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[j, k] = sum over b of x[b, j, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [DIM]
