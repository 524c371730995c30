"""ReLU of a 16384 x 49152 fp32 matrix.

out = max(x, 0)
"""
import torch
import torch.nn as nn

ROWS = 16384
COLS = 49152

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise relu: out = max(x, 0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
