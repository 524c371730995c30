"""Add a (4096,) fp32 row vector to every row of a (196608, 4096) fp32 matrix (broadcast add)."""
import torch
import torch.nn as nn

ROWS = 196608
COLS = 4096

TAGS = ["broadcast", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a matrix of one row"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "narrow", "set": {"ROWS": 65537, "COLS": 7}, "about": "many very short rows"},
    {"name": "drawn", "set": {"ROWS": (1, 2000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[i, j] = a[i, j] + b[j]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(COLS)]


def get_init_inputs():
    return []
