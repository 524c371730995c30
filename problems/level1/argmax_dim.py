"""Argmax over the last dim of a (196608, 8192) fp32 tensor (int64 indices)."""
import torch
import torch.nn as nn

ROWS = 196608
COLS = 8192
DIM = -1

TAGS = ["reduction", "memory-bound"]
WORKLOADS = [
    {"name": "few_rows", "set": {"ROWS": 64}, "public": True, "about": "only a few rows"},
    {"name": "unaligned", "set": {"ROWS": 1000, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "long_rows", "set": {"ROWS": 16, "COLS": 100003}, "about": "a few very long rows"},
    {"name": "drawn", "set": {"ROWS": (33, 1500), "COLS": (100, 6000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i] = the j maximising x[i, j] (int64)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [DIM]
