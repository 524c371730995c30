"""SELU of a 12288 x 65536 fp32 matrix.

out = scale * (x if x > 0 else alpha * (exp(x) - 1)), alpha ~ 1.6733, scale ~ 1.0507
"""
import torch
import torch.nn as nn

ROWS = 12288
COLS = 65536

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise selu: out = scale * (x if x > 0 else alpha * (exp(x) - 1)), alpha ~ 1.6733, scale ~ 1.0507."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
