"""Tanh of a 49152 x 16384 fp32 matrix.

out = tanh(x)
"""
import torch
import torch.nn as nn

ROWS = 49152
COLS = 16384

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
    {"name": "large_magnitude", "set": {"ROWS": 513, "COLS": 2049}, "scale": 40.0,
     "about": "inputs of large magnitude, far into the saturated range"},
]


class Model(nn.Module):
    """Elementwise tanh: out = tanh(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
