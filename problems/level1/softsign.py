"""Softsign of a 16384 x 32768 fp32 matrix.

out = x / (1 + |x|)  (eager runs this as three kernels: abs, add, div)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 32768

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1, "COLS": 1000003}, "public": True,
     "about": "a single long row whose length is not a multiple of 32"},
    {"name": "unaligned", "set": {"ROWS": 999, "COLS": 4099},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1000), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise softsign: out = x / (1 + |x|)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softsign(x)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 2]


def get_init_inputs():
    return []
