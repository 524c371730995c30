"""Hardtanh (clamp to [-1, 1]) of a 32768 x 24576 fp32 matrix.

out = min(max(x, min_val), max_val)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 32768
COLS = 24576
MIN_VAL = -1.0
MAX_VAL = 1.0

TAGS = ["activation", "memory-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"ROWS": 1}, "public": True, "about": "a matrix of one row"},
    {"name": "unaligned", "set": {"ROWS": 1001, "COLS": 3001},
     "about": "a row count and a row length that are not multiples of 32"},
    {"name": "drawn", "set": {"ROWS": (1, 1500), "COLS": (100, 5000)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Elementwise hardtanh: out = min(max(x, min_val), max_val)."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 1.5]


def get_init_inputs():
    return [MIN_VAL, MAX_VAL]
